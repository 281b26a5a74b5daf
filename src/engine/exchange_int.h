/*
 * exchange_int.h -- shared by exchange.c and turn.c only: one turn of an
 * exchange (SPEC 8.1).
 */
#ifndef HD_EXCHANGE_INT_H
#define HD_EXCHANGE_INT_H

#include <stdint.h>

#include <huddle/exchange.h>

/* One turn: what the loop hands in and what comes back. */
typedef struct hd_exchange__turn {
	/* in */
	hd_store *st;
	const hd_exchange_spec *spec;
	const char *team;
	const char *room_id;
	const hd_agent *agent;
	int is_leader;
	int first;        /* the speaker's first turn of this exchange */
	int64_t skip_seq; /* the stimulus post: never enveloped (0: none) */
	int turn_no;      /* 1-based */
	hd_speaker_policy policy;
	json_t *pending; /* ids owing a turn, for speaker_selected (borrowed) */
	hd_room_lock *lock; /* renewed as the turn is announced */
	int64_t lease_ms;
	hd_exchange_step *step; /* shown to on_selected / on_turn */
	/* out (owned: hd_exchange__turn_dispose) */
	int paused; /* a cap budget was tripped: the turn never ran */
	const char *paused_after; /* "team"/"agent": tripped by this turn */
	char *reply;              /* what was posted */
	int64_t seq;
	int failed;
	hd_runtime_cost cost;
	int64_t duration_ms;
	int64_t event_mark; /* the event head once the turn was saved */
	int crossed;        /* HD_BUDGET_CROSSED_* bits of its spend */
} hd_exchange__turn;

/*
 * Run the turn of SPEC 8.1 for t->agent in two transactions around the
 * runtime: before it (one commit) the speaker's cap budget and the
 * team's are checked (tripped: t->paused, nothing written), the lease is
 * renewed, speaker_selected and turn_started are emitted, the agent goes
 * idle -> working (only from idle: never over a shutdown or another
 * engine's turn), its state is restored and its prompt assembled (which
 * takes its mailbox); then spec->on_selected is told and the runtime
 * runs; after it (one commit) the reply is posted and the state, the
 * session lineage, the spend and turn_completed are saved, the agent goes
 * working -> idle if this turn made it working, and whether a cap budget
 * is now tripped is read. A runtime
 * failure is a reply (`[error: ...]`), not a failure of this call; a
 * negative return means the store failed, or HD_ECONFLICT when the lease
 * was lost to a takeover (nothing was written).
 */
int hd_exchange__turn_run(hd_exchange__turn *t, hd_err *err);
void hd_exchange__turn_dispose(hd_exchange__turn *t);

/* The kv key of an agent's turn state: "turn:<room>:<agent>". */
void hd_exchange__state_key(
    char *out, size_t outlen, const char *room_id, const char *agent);

#endif
