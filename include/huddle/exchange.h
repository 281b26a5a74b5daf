/*
 * exchange.h -- bounded exchanges (SPEC 8): a bounded sequence of peer
 * turns in a team's room, started explicitly with a stimulus. Narration
 * only: an exchange never writes the board.
 *
 * The loop, in order, until it ends for one of five reasons:
 *   cancelled (spec cancel, cancel.h)             -> cancelled
 *   caller went away                              -> aborted
 *   select a speaker (hd_exchange_select); none   -> no_pending_obligation
 *   speaker's cap budget already tripped          -> budget_paused
 *   emit speaker_selected; run one turn (8.1); remove the speaker from
 *   pending; add the turn's obligations (never the speaker itself)
 *   a cap budget tripped by that turn             -> budget_paused
 *   nothing pending                               -> no_pending_obligation
 *   max_turns turns taken                         -> max_turns
 * turn_bound_hit {room_id, reason, max_turns, turns_taken} is emitted
 * exactly once, whatever the reason.
 *
 * Obligations come from the board, never from prose: after a turn, each
 * other participant that owns a claimed or in_progress task assigned
 * since it last spoke owes a turn, and the leader owes one when a task
 * completed or failed since the leader last spoke. "Since it last spoke"
 * is measured on the event log: each agent's turn state keeps the event
 * seq at the end of its last turn (an agent that never spoke owes for
 * every open task it owns, and a leader that never spoke for any task
 * ever completed or failed).
 *
 * A turn's prompt (SPEC 8.1 step 2) is made of these sections, each
 * without trailing newlines, joined by one blank line ("\n\n"), empty
 * sections left out:
 *   1. the leader only: the TEAM STATE block (hd_team_state);
 *   2. "Your last turn:\n<last_summary>" when there is a summary;
 *   3. each room post since last_seen_seq by someone else, oldest first,
 *      wrapped in the envelope (hd_envelope_wrap);
 *   4. the speaker's undelivered mailbox messages (hd_mailbox_render),
 *      now marked delivered;
 *   5. the stimulus on the speaker's first turn of this exchange, else
 *      HD_EXCHANGE_CONTINUE.
 * The stimulus is also posted to the room as a `user` post when the
 * exchange starts, so the transcript shows what started it; that post is
 * left out of section 3 (each speaker hears it once, as the stimulus).
 *
 * One exchange per room at a time, across processes: the room lock
 * (room_lock.h), a lease renewed as each turn is announced (once a third
 * of the lease has passed) and by a small thread every third of the lease
 * while the exchange runs; a lock whose holder died is taken over once its
 * lease expired, or at once when the holder ran on this host and its
 * process is gone. The same exchange run again (same team and stimulus)
 * after its process died resumes from its last committed turn: the
 * turns already in the room are not run again, the one cut short is.
 */
#ifndef HUDDLE_EXCHANGE_H
#define HUDDLE_EXCHANGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "agent.h"
#include "err.h"
#include "room.h"
#include "runtime.h"
#include "store.h"

#define HD_EXCHANGE_DEFAULT_TURNS 5
#define HD_EXCHANGE_TURNS_PER_PARTICIPANT 5 /* the clamp's upper bound */
#define HD_EXCHANGE_LEASE_MS 30000          /* default room-lock lease */
#define HD_EXCHANGE_SUMMARY_CHARS 400       /* last_summary keeps this */
#define HD_EXCHANGE_CONTINUE                                                   \
	"Continue the team conversation: respond to the new messages above."
#define HD_EXCHANGE_NO_RESPONSE "(no response)"

/* ---- speaker selection: one pure function (SPEC 8) ---- */

typedef enum hd_speaker_policy {
	HD_POLICY_NONE = 0,
	HD_POLICY_ROUND_ROBIN = 1,
	HD_POLICY_LEADER_NOMINATED = 2,
} hd_speaker_policy;

typedef struct hd_speaker_pick {
	int speaker; /* an index into participants, or -1: nobody */
	hd_speaker_policy policy;
} hd_speaker_pick;

/*
 * Who speaks next. participants are n agent ids; leader and last_speaker
 * are indexes (or -1 for none); pending[i] is non-zero when participant i
 * owes a turn, turns[i] how many turns it took this exchange.
 *  1. anyone pending: round-robin among the pending with the fewest
 *     turns; ties by id (byte order); within that tie group the last
 *     speaker is passed over unless it is the only one;
 *  2. else leader-nominated: the leader, unless it spoke last;
 *  3. else nobody (HD_POLICY_NONE, speaker -1).
 */
hd_speaker_pick hd_exchange_select(const char *const *participants, size_t n,
    int leader, const unsigned char *pending, const int *turns,
    int last_speaker);

/* "round-robin", "leader-nominated", "none". */
const char *hd_speaker_policy_name(hd_speaker_policy p);

/* The turn bound: HD_EXCHANGE_DEFAULT_TURNS when requested is NULL, else
 * *requested clamped to [1, 5 x participants]. */
int hd_exchange_max_turns(const int64_t *requested, size_t participants);

/*
 * Single-leader normalisation (SPEC 3): the index of the first agent
 * flagged is_leader (-1 when none); every later flagged agent becomes a
 * member (its flag is cleared) and `multiple leaders flagged for team
 * <team>; keeping the first (<id>)` is logged.
 */
int hd_exchange_normalise_leader(hd_agents *agents, const char *team);

/* ---- turn state (SPEC 8.1, kv "turn:<room>:<agent>") ---- */

typedef struct hd_turn_state {
	int64_t last_seen_seq;
	char *native_session_id; /* or NULL */
	char *runtime;           /* or NULL */
	char *last_summary;      /* or NULL */
	int64_t turn_index;
	int64_t last_event_seq; /* event seq when its last turn ended */
} hd_turn_state;

/* Load agent's state in team's room; missing or malformed -> zeros. */
int hd_turn_state_get(hd_turn_state *out, hd_store *st, const char *team,
    const char *agent, hd_err *err);
void hd_turn_state_dispose(hd_turn_state *s);

/*
 * Save agent's state in team's room (inside the caller's transaction).
 * The state is the agent's, not one engine's: a conversation's delivery
 * moves the room cursor and the native session as an exchange turn does,
 * so an agent's native session carries across every turn it takes.
 */
int hd_turn_state_put(hd_store *st, const char *team, const char *agent,
    const hd_turn_state *s, hd_err *err);

/* Forget agent's native session (every team's room it has state in is
 * its team's): its next turn starts a fresh one. *had is 1 when there
 * was one. `agent "x" not found`. */
int hd_turn_state_reset_session(
    int *had, hd_store *st, const char *agent, hd_err *err);

/* ---- running an exchange ---- */

typedef enum hd_exchange_end {
	HD_EXCHANGE_ABORTED = 0,
	HD_EXCHANGE_NO_PENDING = 1,
	HD_EXCHANGE_BUDGET_PAUSED = 2,
	HD_EXCHANGE_MAX_TURNS = 3,
	HD_EXCHANGE_CANCELLED = 4,
} hd_exchange_end;

/* "aborted", "no_pending_obligation", "budget_paused", "max_turns",
 * "cancelled". */
const char *hd_exchange_end_name(hd_exchange_end e);

/* What an observer is shown; every pointer is borrowed for the call. */
typedef struct hd_exchange_step {
	const char *room_id;
	int turn;      /* 1-based */
	int max_turns; /* the bound, after the clamp */
	const char *speaker;
	hd_speaker_policy policy;
	const char *runtime;
	int scripted; /* 1: the speaker's runtime gives canned replies */
	int resumed;  /* this exchange resumed one interrupted after this
			 many turns (its earlier turns are not run again);
			 -1: it did not */
	/* set after the turn (on_turn) */
	const char *reply; /* exactly what was posted */
	int64_t seq;       /* the post's seq */
	int failed;        /* 1: the runtime failed; reply is [error: ...] */
	hd_runtime_cost cost;
	int64_t duration_ms;
} hd_exchange_step;

/*
 * Runs one turn in place of hd_runtime_run (tests and benchmarks): the
 * same contract, out filled, 0 or a negative code with err set.
 */
typedef int (*hd_exchange_runner)(
    void *ctx, hd_runtime_result *out, const hd_runtime_turn *in, hd_err *err);

typedef struct hd_exchange_spec {
	const char *team;
	const char *stimulus; /* or NULL/"": no stimulus post; first turns
				 get HD_EXCHANGE_CONTINUE */
	const char *const *first_speakers; /* default: the leader */
	size_t nfirst;
	const int64_t *max_turns;  /* NULL: 5; else clamped */
	atomic_int *abort;         /* or NULL: set to stop between turns */
	atomic_int *abort_turn;    /* or NULL: set to stop a running turn */
	atomic_int *cancel;        /* or NULL: as abort, but the exchange
				      ends `cancelled` (cancel.h); set
				      abort_turn too to stop the turn */
	int64_t lease_ms;          /* 0: $HUDDLE_EXCHANGE_LEASE_MS, else 30 s */
	int64_t turn_timeout_ms;   /* 0: the runtime's own limit */
	const char *mcp_host;      /* with mcp_port > 0: each turn gets the */
	int mcp_port;              /* agent's attach URL (SPEC 10.4) */
	hd_exchange_runner runner; /* NULL: hd_runtime_run */
	void *runner_ctx;
	/* Observers, called on the exchange's thread outside any
	 * transaction (they may use st): on_selected before a turn runs,
	 * on_turn after its post and state are saved and before its
	 * obligations are derived, so board moves made there count as part
	 * of the turn. */
	void (*on_selected)(const hd_exchange_step *s, void *payload);
	void (*on_turn)(const hd_exchange_step *s, void *payload);
	void *payload;
} hd_exchange_spec;

typedef struct hd_exchange_result {
	char room_id[HD_ROOM_ID_MAX];
	hd_exchange_end ended;
	int turns_taken;
	int turns_failed; /* of those, the ones whose runtime failed (each
			     put its speaker in error: activity.h) */
	int max_turns;   /* after the clamp */
	int resumed;     /* turns taken before an interruption this run
			    resumed from (counted in turns_taken); 0: none */
	char **speakers; /* one per turn, in order */
	size_t nspeakers;
} hd_exchange_result;

/*
 * Run one exchange on st (the caller's connection; a lock-renewal thread
 * opens its own). Pre-checks, in order, each refused before any turn:
 *   `stimulus is N bytes; the limit is 100000` (HD_ETOOBIG),
 *   `stimulus must be valid UTF-8` (HD_EINVAL);
 *   `team "x" not found` (HD_ENOTFOUND); `team dev has no agents`;
 *   single-leader normalisation; `team dev has no leader to speak first`
 *   (no leader and no first speakers); `unknown first speaker: ghost`;
 *   `every first speaker is in error: coder (why); reset one with ...`;
 *   `budget_paused:team`, `budget_paused:agent` (a first speaker's)
 *   (all HD_EREFUSED); then HD_ROOM_LOCK_HELD (HD_ECONFLICT).
 * Returns 0 with *out filled whatever the end reason (dispose it even on
 * failure), or a negative code with err set when the store failed.
 */
int hd_exchange_run(hd_exchange_result *out, hd_store *st,
    const hd_exchange_spec *spec, hd_err *err);

/* {"turnsTaken","turnsFailed","endedReason","speakers"}: the REST result
 * shape. */
json_t *hd_exchange_result_to_json(const hd_exchange_result *r);

void hd_exchange_result_dispose(hd_exchange_result *r);

#endif
