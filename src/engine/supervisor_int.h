/*
 * supervisor_int.h (private) -- what the supervisor's threads
 * (supervisor.c) and its by-hand verbs (sv_hand.c) use of its turns
 * (sv_turn.c, sv_proc.c) and its scans (wake.c). The durable state is
 * the autorun module's (autorun.h, autorun_turn.h, wake.h): these files
 * call it and write no SQL. Nothing outside src/engine/ includes this.
 */
#ifndef HD_SUPERVISOR_INT_H
#define HD_SUPERVISOR_INT_H

#include <stdint.h>

#include <huddle/agent.h>
#include <huddle/autorun.h>
#include <huddle/autorun_turn.h>
#include <huddle/exchange.h>
#include <huddle/runtime.h>
#include <huddle/supervisor.h>
#include <huddle/wake.h>

#include <huddle/store.h>
#include "owner.h"

/* ---- shared by wake.c and sv_turn.c ---- */

int hd_sv__oom(hd_err *err);

/* ---- deriving wakes ---- */

/*
 * Queue a wake for every stimulus of team not seen before (supervisor.h):
 * a read first, and a write transaction only when there is something to
 * queue, so a store that changed for other reasons costs one read.
 * *queued is how many wakes were queued.
 */
int hd_sv__scan(size_t *queued, hd_store *st, const char *team, hd_err *err);

/* ---- who can run ---- */

enum {
	HD_SV_NONE = 0,    /* nothing to do */
	HD_SV_TAKEN = 1,   /* a turn is ours to run */
	HD_SV_BLOCKED = 2, /* wakes wait, and why is in the block */
};

typedef struct hd_sv_block {
	char why[24];  /* paused, off, busy, conversation, parked, budget,
			  capped */
	int64_t until; /* capped: when the hour frees up (ms), else 0 */
	/* busy: the running turn, and its owner as read */
	int64_t turn_id;
	char owner[80];
	int64_t pid;
	int64_t start;
} hd_sv_block;

/*
 * Whether agent's queued wakes could be taken now, read-only: *result
 * HD_SV_NONE, HD_SV_TAKEN (worth a take) or HD_SV_BLOCKED with *blk.
 */
int hd_sv__check(int *result, hd_sv_block *blk, hd_store *st, const char *agent,
    hd_err *err);

/* ---- a turn ---- */

typedef struct hd_sv_turn {
	int64_t id;
	char team[64];
	char agent[64];
	int64_t start_seq;  /* the event log's head when it started */
	int64_t started_ms; /* monotonic, for its duration */
	hd_agent *a;
	hd_turn_state ts;
	char *prompt;
	size_t context_len;
	int64_t seen;
	int resumed; /* it carries wakes of a turn that was cut short */
} hd_sv_turn;

void hd_sv__turn_dispose(hd_sv_turn *t);

/* sv_proc.c: record the running turn's command (its pid = process group
 * id, and start time) once it started; kill that group (on this host,
 * while the record still names it) inside the abort's transaction. */
int hd_sv__turn_running(hd_store *st, int64_t turn_id, int64_t pgid,
    int64_t start, hd_err *err);
int hd_sv__turn_kill(hd_store *st, int64_t turn_id, hd_err *err);

/*
 * Take agent's queued wakes and start a turn, in one write transaction:
 * the checks of hd_sv__check again, stale wakes dropped (the mail was
 * read, the task moved on), the turn row, the wakes running, the agent
 * working, autorun_turn_started, and the prompt (mail delivered). *result
 * as hd_sv__check; HD_SV_TAKEN fills *out.
 */
int hd_sv__take(int *result, hd_sv_turn *out, hd_sv_block *blk, hd_store *st,
    const char *agent, const hd_owner_id *me, hd_err *err);

/* What a turn ended with. */
typedef struct hd_sv_outcome {
	const char *reply; /* the runtime's text (or NULL) */
	size_t len;
	const char *error; /* why it failed, or NULL */
	const char *runtime;
	const char *native_session_id; /* what it ended in, or NULL */
	const char *resumed;           /* what it resumed, or NULL */
	hd_runtime_cost cost;
	int ran; /* 1: a runtime ran (state, lineage and spend to save) */
} hd_sv_outcome;

/* What hd_sv__finish recorded. */
typedef struct hd_sv_finished {
	int64_t post_seq; /* 0: nothing posted */
	int64_t progress;
	int parked; /* 1: this turn parked the agent */
} hd_sv_finished;

/*
 * Record a turn, in one write transaction: its narration in the room,
 * the agent's turn state, lineage and spend, its progress and the
 * no-progress streak (maybe a park), the wakes done, the agent idle (or
 * error), autorun_turn_completed. HD_ECONFLICT when the turn is no longer
 * me's (another engine aborted it).
 */
int hd_sv__finish(hd_sv_finished *out, hd_store *st, const hd_sv_turn *t,
    const hd_sv_outcome *o, const hd_owner_id *me, hd_err *err);

/*
 * Abort turn_id if owner (exactly) still runs it: its wakes go back in
 * the queue, the messages it delivered are carried to the agent's next
 * turn, the agent goes back to idle, autorun_turn_aborted. *aborted says
 * whether it did.
 */
int hd_sv__abort(int *aborted, hd_store *st, int64_t turn_id, const char *owner,
    hd_err *err);

#endif
