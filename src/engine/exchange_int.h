/*
 * exchange_int.h -- shared by exchange.c and turn.c only: one turn of an
 * exchange (SPEC 8.1), in the three parts the loop drives. begin and save
 * run inside a write transaction the loop opened (they may run again when
 * the store retries it, so each starts over), execute outside any.
 */
#ifndef HD_EXCHANGE_INT_H
#define HD_EXCHANGE_INT_H

#include <stdint.h>

#include <huddle/exchange.h>
#include <huddle/room_lock.h>

/* One turn: what the loop hands in and what comes back. */
typedef struct hd_exchange__turn {
	/* in */
	hd_store *st;
	const hd_exchange_spec *spec;
	const char *team;
	const char *room_id;
	const hd_agent *agent;
	const hd_turn_state *state; /* the speaker's, as last saved */
	int is_leader;
	int first;        /* the speaker's first turn of this exchange */
	int64_t skip_seq; /* the stimulus post: never enveloped (0: none) */
	int turn_no;      /* 1-based */
	hd_speaker_policy policy;
	const char *const *pending; /* ids owing a turn, for speaker_selected */
	size_t npending;
	hd_room_lock *lock; /* renewed as the turn is announced */
	int64_t lease_ms;
	int team_read; /* this transaction already found the team's cap
			* untripped: begin checks the speaker's only */
	/* begin's out */
	int paused;      /* a cap budget is tripped: the turn never ran */
	int set_working; /* begin made the agent working: save makes it idle */
	char *prompt;
	size_t context_len; /* bytes of standing context in prompt */
	int64_t seen; /* the highest seq the prompt included */
	char *url;    /* the MCP attach URL, or NULL */
	/* execute's out */
	hd_runtime_result res;
	const char *resumed; /* the session resumed (in state), or NULL */
	const char *native;  /* the session to remember, or NULL */
	const char *done_name;
	char *body;    /* what is posted */
	char *summary; /* its first HD_EXCHANGE_SUMMARY_CHARS characters */
	int failed;
	int aborted;   /* failed by being cut short: not the agent's failure */
	char *failure; /* failed: why (the reason the member's error shows) */
	hd_runtime_cost cost;
	int64_t duration_ms;
	/* save's out */
	const char *paused_after; /* "team"/"agent": tripped by this turn */
	int64_t seq;
	int64_t event_mark; /* the event head once the turn was saved */
	int crossed;        /* HD_BUDGET_CROSSED_* bits of its spend */
	char *state_text;   /* the state as saved (for the memo at adopt) */
} hd_exchange__turn;

/*
 * Before the runtime, in the caller's write transaction: check the
 * speaker's cap budget (and the team's unless team_read; tripped:
 * t->paused, nothing written), renew the lease when a third of it has
 * passed (lost: HD_ECONFLICT, nothing written), emit speaker_selected and
 * turn_started, move the agent idle -> working (only from idle: never
 * over a shutdown or another engine's turn) and assemble the prompt from
 * t->state (which takes the mailbox).
 */
int hd_exchange__turn_begin(hd_exchange__turn *t, hd_err *err);

/*
 * Run the runtime (spec->runner when set) and shape the reply; touches no
 * store. A runtime failure is a reply (`[error: ...]`), not a failure of
 * this call: a negative return means memory ran out.
 */
int hd_exchange__turn_execute(hd_exchange__turn *t, hd_err *err);

/*
 * After the runtime, in the caller's write transaction: post the reply,
 * charge the spend, record the lineage, emit cost and turn_completed, move
 * the agent working -> idle when begin made it working, write the state
 * and read whether a cap budget is now tripped.
 */
int hd_exchange__turn_save(hd_exchange__turn *t, hd_err *err);

/* Once save committed: make *out the state it wrote (moves the summary
 * out of t). */
int hd_exchange__turn_adopt(hd_turn_state *out, hd_exchange__turn *t);

void hd_exchange__turn_dispose(hd_exchange__turn *t);

/* The kv key of an agent's turn state: "turn:<room>:<agent>". */
/* A reply as a room body, malloc'd (NULL: out of memory): invalid UTF-8
 * and NUL bytes become U+FFFD, surrounding whitespace is trimmed, empty
 * is HD_EXCHANGE_NO_RESPONSE, and past HD_ROOM_BODY_MAX it is cut on a
 * character boundary with a note. Exchange turns and the supervisor's. */
char *hd_exchange__reply_body(const char *text, size_t len);

void hd_exchange__state_key(
    char *out, size_t outlen, const char *room_id, const char *agent);

/* ---- progress (progress.c): what a resumed exchange starts from ---- */

typedef struct hd_exchange__progress {
	char stimulus[65]; /* SHA-256 of the stimulus, hex */
	int64_t stim_seq;
	int max_turns;
	int taken;
	int last;              /* index, -1: none */
	const char *running;   /* the speaker of the turn begun, or NULL */
	unsigned char *pending; /* n each, the caller's */
	unsigned char *spoke;
	int *turns;
} hd_exchange__progress;

void hd_exchange__stimulus_hash(char out[65], const char *stimulus);

/* The progress as text (malloc'd; NULL: out of memory), speakers and
 * then also (or NULL) as the turns' speakers. */
char *hd_exchange__progress_dump(const hd_exchange__progress *p,
    const char *const *ids, size_t n, char *const *speakers, size_t nspeakers,
    const char *also);

/* Read text into p (its arrays are n long, for ids); *speakers is the
 * speakers array (a new reference). 1 when it was progress, 0 when not
 * (p's arrays are then untouched or zeroed, *speakers NULL). */
int hd_exchange__progress_load(hd_exchange__progress *p, json_t **speakers,
    const char *text, const char *const *ids, size_t n);

#endif
