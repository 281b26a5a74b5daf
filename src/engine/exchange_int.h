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
	int first;	  /* the speaker's first turn of this exchange */
	int64_t skip_seq; /* the stimulus post: never enveloped (0: none) */
	int turn_no;	  /* 1-based */
	/* out (owned: hd_exchange__turn_dispose) */
	char *reply; /* what was posted */
	int64_t seq;
	int failed;
	hd_runtime_cost cost;
	int64_t duration_ms;
	int64_t event_mark; /* the event head once the turn was saved */
	int crossed;	    /* HD_BUDGET_CROSSED_* bits of its spend */
} hd_exchange__turn;

/*
 * Run the turn of SPEC 8.1 for t->agent: restore its state, assemble the
 * prompt (documented in exchange.h), run it, post the reply, and save
 * the state, the session lineage and the spend with the post in one
 * transaction. The agent is working while it runs and idle after. A
 * runtime failure is a reply (`[error: ...]`), not a failure of this
 * call; a negative return means the store failed.
 */
int hd_exchange__turn_run(hd_exchange__turn *t, hd_err *err);
void hd_exchange__turn_dispose(hd_exchange__turn *t);

/* The kv key of an agent's turn state: "turn:<room>:<agent>". */
void hd_exchange__state_key(char *out, size_t outlen, const char *room_id,
    const char *agent);

#endif
