/*
 * wake.h -- the supervisor's queue (supervisor.h): one row in wakes per
 * stimulus that should wake an agent (a message, a task it owns, a ready
 * task offered to it, a wake by hand). Kept by the autorun module
 * (src/autorun/wakes.c); the supervisor derives the wakes and runs the
 * turns that answer them (autorun_turn.h).
 *
 * A wake's states, each move one conditional write here:
 *   queued -> running    hd_wake_run, with the turn that answers it
 *   queued -> dropped    hd_wake_drop, hd_wake_drop_all: stale (the mail
 *                        was read, the task moved on), or the agent or
 *                        its team is gone or shut down
 *   running -> done      hd_wake_finish
 *   running -> queued    hd_wake_requeue (the turn was cut short); it
 *                        keeps the aborted turn's id, which marks it
 *                        resumed
 *  (1) Keys make a stimulus wake once: "mail:<newest id>", "task:<id>:
 *      <status>:<claimed_at>", "ready:<id>:<updated_at>", "manual:<hex>",
 *      unique per agent, so a wake queued twice (two scans, two servers)
 *      is one row: hd_wake_add adds nothing the second time.
 *  (2) A wake is taken in the transaction that starts its turn and done
 *      in the one that records it: never lost, never twice.
 *  (3) What a turn's prompt delivered is kept on the turn (one read takes
 *      an agent's oldest unread first, so it is one id range, "lo-hi")
 *      and, when the turn is aborted, carried to the agent's standing
 *      (autorun.h), to be shown again by its next turn's prompt.
 *
 * Every call runs inside its caller's transaction: the writes inside
 * hd_store_write (with the turn's other records), the reads inside
 * hd_store_read or a write (or alone, as one read). Errors are the
 * store's.
 */
#ifndef HUDDLE_WAKE_H
#define HUDDLE_WAKE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

/* A queued wake. */
typedef struct hd_wake {
	int64_t id;
	char reason[16]; /* message, task, ready, manual */
	int64_t ref;     /* the message or task, or 0 */
	char *note;      /* a manual wake's note, or NULL */
	int resumed;     /* it was running in a turn that was aborted */
} hd_wake;

void hd_wake_dispose(hd_wake *w);

/* An agent with queued wakes. */
typedef struct hd_wake_agent {
	char agent[64];
} hd_wake_agent;

/*
 * Queue one wake unless agent has its key already (1); *added is 1 when
 * it is new: then *id (when non-NULL) is its id, and wake_queued {agent,
 * reason, ref} is emitted. ref 0: none.
 */
int hd_wake_add(int *added, hd_store *st, const char *team, const char *agent,
    const char *reason, int64_t ref, const char *key, const char *note,
    int64_t *id, hd_err *err);

/* *seen: agent has a wake with key, in any state (it was woken for it). */
int hd_wake_seen(
    int *seen, hd_store *st, const char *agent, const char *key, hd_err *err);

/* *n: how many wakes agent has queued or running. */
int hd_wake_open_count(
    int64_t *n, hd_store *st, const char *agent, hd_err *err);

/* *open: a wake with key is queued or running for anyone in team. */
int hd_wake_offered(
    int *open, hd_store *st, const char *team, const char *key, hd_err *err);

/* The agents with queued wakes, by id. Free *out. */
int hd_wake_agents(
    hd_wake_agent **out, size_t *n, hd_store *st, hd_err *err);

/* agent's queued wakes, oldest first, at most max into v (*n of them).
 * hd_wake_dispose each. */
int hd_wake_queued(hd_wake *v, size_t max, size_t *n, hd_store *st,
    const char *agent, hd_err *err);

/* Drop queued wake id; drop every queued wake of agent. */
int hd_wake_drop(hd_store *st, int64_t id, hd_err *err);
int hd_wake_drop_all(hd_store *st, const char *agent, hd_err *err);

/* Queued wake id runs in turn_id. */
int hd_wake_run(hd_store *st, int64_t id, int64_t turn_id, hd_err *err);

/* turn_id's running wakes are done; back in the queue (aborted). */
int hd_wake_finish(hd_store *st, int64_t turn_id, hd_err *err);
int hd_wake_requeue(hd_store *st, int64_t turn_id, hd_err *err);

/* agent's queued wakes as [{"id","reason","ref","note","created_at",
 * "resumed"}], oldest first. */
int hd_wake_queue_json(
    json_t **out, hd_store *st, const char *agent, hd_err *err);

#endif
