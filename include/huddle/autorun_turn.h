/*
 * autorun_turn.h -- the turns the supervisor runs (supervisor.h): one row
 * in autorun_turns per turn, kept by the autorun module
 * (src/autorun/turns.c). The supervisor starts, records and aborts them
 * (src/engine/sv_turn.c); what they answer is in wake.h.
 *
 * A turn's states: running -> done | failed (hd_autorun_turn_end, by the
 * engine that owns it) | aborted (hd_autorun_turn_abort, its engine
 * stopped or died).
 *  (1) At most one running turn per agent, across processes: a unique
 *      index on the running turns' agent makes a second one impossible
 *      (hd_autorun_turn_start fails HD_EEXISTS); callers check first
 *      (hd_autorun_turn_running), so the index is the backstop.
 *  (2) A running turn names its owner (the engine's token, pid and start
 *      time, to tell a dead engine) and, once its command started, where
 *      that runs (host, boot, process group): the record stays once the
 *      turn ended, and only a running turn's is read.
 *  (3) A turn keeps what its prompt delivered ("lo-hi", wake.h (3)), its
 *      reasons (a JSON array), the event log's head when it started, and
 *      when recorded its progress and the room post it made.
 *
 * Every call runs inside its caller's transaction: the writes inside
 * hd_store_write (with the turn's other records), the reads inside
 * hd_store_read or a write (or alone, as one read). Errors are the
 * store's.
 */
#ifndef HUDDLE_AUTORUN_TURN_H
#define HUDDLE_AUTORUN_TURN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

/* A running turn and its owner (2). */
typedef struct hd_autorun_running {
	int64_t turn_id;
	char agent[64];
	char owner[80]; /* "" when it has none */
	int64_t pid;
	int64_t start;
} hd_autorun_running;

/*
 * Start a running turn of agent in team for owner (token, pid, start),
 * answering reasons (a JSON array) from the event log's head start_seq;
 * *id is its id. HD_EEXISTS when agent runs one already (1).
 */
int hd_autorun_turn_start(int64_t *id, hd_store *st, const char *team,
    const char *agent, const char *owner, int64_t owner_pid,
    int64_t owner_start, const char *reasons, int64_t start_seq,
    hd_err *err);

/* agent's running turn into *out; *found 0 when it runs none. */
int hd_autorun_turn_running(int *found, hd_autorun_running *out,
    hd_store *st, const char *agent, hd_err *err);

/* Every running turn, across processes. Free *out. */
int hd_autorun_turns_running(
    hd_autorun_running **out, size_t *n, hd_store *st, hd_err *err);

/* How many turns agent started after since (ms), and the oldest one's
 * start (0 when none). */
int hd_autorun_turns_since(int64_t *count, int64_t *oldest, hd_store *st,
    const char *agent, int64_t since, hd_err *err);

/* Keep what turn id's prompt delivered, "lo-hi" (3). */
int hd_autorun_turn_delivered(
    hd_store *st, int64_t id, const char *range, hd_err *err);

/* Where turn id's command runs (2), while it is running. */
int hd_autorun_turn_process_set(hd_store *st, int64_t id, const char *host,
    const char *boot, int64_t pid, int64_t start, hd_err *err);

/* Where running turn id's command runs, as recorded. */
typedef struct hd_autorun_process {
	char host[256]; /* "" when not recorded */
	char boot[64];
	int64_t pid;
	int64_t start;
} hd_autorun_process;

/* *found 0 when id is not running or has no process recorded. */
int hd_autorun_turn_process(int *found, hd_autorun_process *out,
    hd_store *st, int64_t id, hd_err *err);

/*
 * End running turn id of owner: failed with error (non-NULL), else done.
 * *ended 0 when it is not running or not owner's (another engine
 * aborted it): then nothing changed.
 */
int hd_autorun_turn_end(int *ended, hd_store *st, int64_t id,
    const char *owner, const char *error, hd_err *err);

/* What turn id moved, and its room post (0: none) (3). */
int hd_autorun_turn_progress(hd_store *st, int64_t id, int64_t progress,
    int64_t post_seq, hd_err *err);

/*
 * Running turn id if owner (exactly; NULL: none) owns it: its team,
 * agent and delivered (NULL when nothing), malloc'd; *found 0 (and
 * nothing allocated) when it is not.
 */
int hd_autorun_turn_owned(int *found, char **team, char **agent,
    char **delivered, hd_store *st, int64_t id, const char *owner,
    hd_err *err);

/* Abort turn id (its owner's check is the caller's). */
int hd_autorun_turn_abort(hd_store *st, int64_t id, hd_err *err);

/*
 * agent's running turn and its last ended one, each {"id","status",
 * "reasons","started_at","finished_at","progress","post_seq","error"}
 * or null.
 */
int hd_autorun_turns_json(json_t **running, json_t **last, hd_store *st,
    const char *agent, hd_err *err);

#endif
