/*
 * events.h -- the append-only log of what happened (SPEC 13).
 *
 * An event exists exactly when the change it describes does: called inside
 * a write transaction the event commits (or rolls back) with the change,
 * and a failed append fails that whole transaction -- hd_store_write
 * returns the append's error even if no caller in between looked at it.
 */
#ifndef HUDDLE_EVENTS_H
#define HUDDLE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

typedef struct hd_event {
	int64_t seq; /* global order, gapless within one process's view */
	char *id;    /* random UUID */
	int64_t ts;  /* ms since the epoch */
	char *kind;
	char *team_id;   /* or NULL */
	int64_t task_id; /* 0 when none */
	char *agent_id;  /* or NULL */
	json_t *data;    /* always an object */
} hd_event;

typedef struct hd_event_list {
	hd_event *items;
	size_t n;
} hd_event_list;

typedef struct hd_event_filter {
	const char *team;  /* NULL: any */
	const char *kind;  /* NULL: any */
	int64_t after_seq; /* > 0: events after this seq, oldest first */
	int limit;         /* 1..10000; 0 means 100 */
} hd_event_filter;

#define HD_EVENTS_LIMIT_MAX 10000

/* Append an event. data (an object or NULL) is stolen. 0, or an error
 * code (the open transaction is then refused as a whole). */
int hd_events_append(hd_store *st, const char *kind, const char *team,
    int64_t task_id, const char *agent, json_t *data);

/* The same with data already serialized: data_json must be one JSON object
 * (the caller vouches for it; a hot path that only writes integers and
 * validated slugs can skip building and dumping a json_t). Returns the
 * event's seq, or 0 when the append failed (the open transaction is then
 * refused as a whole, with the append's error). */
int64_t hd_events_append_raw(hd_store *st, const char *kind, const char *team,
    int64_t task_id, const char *agent, const char *data_json);

/*
 * List events. Without after_seq: the newest `limit` events, oldest first
 * (like tail). With after_seq: the first `limit` events after it. *out is
 * the caller's: hd_event_list_dispose() it.
 */
int hd_events_list(
    hd_event_list *out, hd_store *st, const hd_event_filter *f, hd_err *err);

#define HD_EVENTS_KINDS_MAX 4

/*
 * Events of any of kinds[0..nkinds-1] (1..HD_EVENTS_KINDS_MAX, none NULL)
 * after after_seq, of team (NULL: any), oldest first, at most limit
 * (1..10000; 0 means 100): what one hd_events_list per kind would return,
 * merged in seq order, read in one pass. *out as hd_events_list.
 */
int hd_events_list_kinds(hd_event_list *out, hd_store *st, const char *team,
    const char *const *kinds, size_t nkinds, int64_t after_seq, int limit,
    hd_err *err);

/*
 * The newest event of agent among kinds (as hd_events_list_kinds): *out
 * holds it, or nothing. It reads the log backwards from its head, so it
 * is quick for an agent that acted lately and a scan for one that never
 * did: for diagnostics (huddle doctor), not for hot paths.
 */
int hd_events_last_of(hd_event_list *out, hd_store *st, const char *agent,
    const char *const *kinds, size_t nkinds, hd_err *err);

/* How many events after after_seq agent caused that changed the board or
 * a mailbox (task_created, task_claimed, status_changed, dep_linked,
 * message_sent): what the supervisor calls a turn's progress. It reads
 * the log forward from after_seq, so it costs what happened since. */
int hd_events_progress(
    int64_t *out, hd_store *st, const char *agent, int64_t after_seq, hd_err *err);

/*
 * A task's history: the newest `limit` events (1..10000; 0 means 100)
 * naming task_id in team, oldest first. `limit must be between 1 and
 * 10000, not 0`-style refusals as hd_events_list. *out as hd_events_list.
 */
int hd_events_list_task(hd_event_list *out, hd_store *st, const char *team,
    int64_t task_id, int limit, hd_err *err);
/*
 * The cost events of team (one per runtime turn that was charged, SPEC
 * 8.2) with since_ms <= ts < until_ms, oldest first: fn(ctx, e) for each,
 * e lent for the call only; a negative answer from fn stops the walk and
 * is returned. A partial index (kind = 'cost', by team and ts) bounds the
 * walk to the window, whatever else the log holds. For the spend read
 * (team/spend.c).
 */
typedef int (*hd_event_fn)(void *ctx, const hd_event *e);
int hd_events_costs(hd_store *st, const char *team, int64_t since_ms,
    int64_t until_ms, hd_event_fn fn, void *ctx, hd_err *err);

/* The highest seq in the log (0 when empty). */
int hd_events_head(int64_t *out, hd_store *st, hd_err *err);

/* A new JSON object for an event (the caller owns it). */
json_t *hd_event_to_json(const hd_event *e);

void hd_event_list_dispose(hd_event_list *l);

#endif
