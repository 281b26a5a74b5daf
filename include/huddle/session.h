/*
 * session.h -- session lineage (SPEC 2 `sessions`, SPEC 8.1 step 5): which
 * native sessions an agent's runtime went through, each pointing at the
 * one it continued from.
 *
 * A row is recorded when a turn ends with a native session id that is new
 * for the agent (a first session, or a rotation); resuming the same
 * session adds nothing. parent_session_id is the native session the turn
 * resumed, or NULL for a fresh start.
 */
#ifndef HUDDLE_SESSION_H
#define HUDDLE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

typedef struct hd_session {
	char *id; /* random UUID */
	char *agent_id;
	char *team_id; /* or NULL */
	char *runtime;
	char *native_session_id; /* never NULL once recorded */
	char *parent_session_id; /* or NULL */
	int64_t created_at;
} hd_session;

typedef struct hd_sessions {
	hd_session *items; /* oldest first */
	size_t n;
} hd_sessions;

/*
 * Record that agent's runtime is now in native session native (from
 * parent, or NULL). Nothing is written when native is NULL or equals
 * parent (the same session continued). Works inside a caller's
 * transaction.
 */
int hd_session_record(hd_store *st, const char *agent, const char *team,
    const char *runtime, const char *native, const char *parent, hd_err *err);

/* An agent's lineage, oldest first. Dispose with hd_sessions_dispose(). */
int hd_session_list(
    hd_sessions *out, hd_store *st, const char *agent, hd_err *err);

json_t *hd_session_to_json(const hd_session *s);
void hd_sessions_dispose(hd_sessions *l);

#endif
