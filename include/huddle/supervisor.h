/*
 * supervisor.h -- huddle runs its agents between asks (autorun).
 *
 * For a team with autorun on (autorun.h), `huddle serve` wakes an agent
 * whose runtime huddle drives when it has something to do, and runs one
 * turn of it: the prompt of every turn (prompt.h: who it is, its team,
 * the room since it last spoke, its mail) with, last, what woke it. The
 * agent acts through its tools (claim, start, complete, fail, send); what
 * it says is posted to the room as its narration.
 *
 * What wakes an agent -- each a row in wakes, keyed so that one stimulus
 * wakes once however often it is seen:
 *   message  mail waiting in its mailbox (anything but an idle notice:
 *            the spawn's first task, a direct message, a broadcast, a
 *            shutdown_request, a task_update);
 *   task     a task it owns and has not finished (assigned to it, or
 *            claimed by it), once per claim and status;
 *   ready    a ready task nobody owns, offered to one idle member (never
 *            the leader of a team with members) at a time, each member
 *            once per task: a member that passes leaves it to the next;
 *   manual   `huddle agent wake` (runs even with autorun off, and wakes a
 *            parked agent).
 *
 * Invariants:
 *  (1) One turn at a time per agent, across processes: a turn is a row in
 *      autorun_turns, and at most one is running per agent (a unique
 *      index); an agent running a conversation message takes no turn
 *      until it is done. Agents run in parallel.
 *  (2) Never lost, never twice: wakes are taken in the transaction that
 *      starts the turn, and marked done in the one that records it. A
 *      turn whose engine died (kill -9) or stopped is aborted by the next
 *      engine that looks: its wakes go back in the queue and the messages
 *      its prompt had delivered are shown again on the next turn.
 *  (3) Guardrails: a paused team wakes nobody; a tripped cap budget
 *      (SPEC 8.2) holds the agent (the team's, the team); an agent takes
 *      at most turns_per_hour turns in any hour; park_after turns in a
 *      row that changed nothing on the board or in a mailbox park it with
 *      the reason shown, until something new arrives for it directly (a
 *      message not a broadcast, a task assigned) or it is unparked. An
 *      agent that is shut down, or in a team that is, is never woken.
 *  (4) No polling: the supervisor sleeps until the store changes (or a
 *      capped agent's hour frees up); an idle team costs nothing.
 *
 * Events: wake_queued {agent, reason, ref}, autorun_turn_started {turn,
 * agent, reasons, resumed}, autorun_turn_completed {turn, agent, seq,
 * progress, error, duration_ms, usd}, autorun_turn_aborted {turn, agent},
 * agent_parked {agent, reason}, agent_unparked {agent, by}.
 */
#ifndef HUDDLE_SUPERVISOR_H
#define HUDDLE_SUPERVISOR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_WAKE_NOTE_MAX 2000 /* characters of a manual wake's note */

/* ---- by hand: the CLI's verbs ---- */

/* Queue one wake of agent by hand, with an optional note (shown in its
 * prompt). *id (when non-NULL) is the wake's id. `agent "x" not found`,
 * `agent x is in no team`, `agent x is shut down` (HD_EREFUSED). */
int hd_supervisor_wake(int64_t *id, hd_store *st, const char *agent,
    const char *note, hd_err *err);

/* Park agent with a reason (default "parked by hand"); unpark it. Both
 * emit their event when the state changed; *changed says whether it did.
 * `agent "x" not found`, `agent x is in no team`. */
int hd_supervisor_park(int *changed, hd_store *st, const char *agent,
    const char *reason, hd_err *err);
int hd_supervisor_unpark(
    int *changed, hd_store *st, const char *agent, hd_err *err);

/*
 * What the supervisor holds for a team: its autorun settings and, per
 * member, {"agent","status","runtime","parked","parked_at","streak",
 * "turns_last_hour","queue":[{"id","reason","ref","note","created_at",
 * "resumed"}],"running":{turn}|null,"last_turn":{turn}|null}, a turn
 * being {"id","status","reasons","started_at","finished_at","progress",
 * "post_seq","error"}. `team "x" not found`.
 */
int hd_supervisor_state(
    json_t **out, hd_store *st, const char *team, hd_err *err);

/* ---- the engine ---- */

typedef struct hd_supervisor hd_supervisor;

typedef struct hd_supervisor_config {
	const char *home;      /* HUDDLE_HOME */
	const char *mcp_host;  /* with mcp_port > 0: each turn gets the */
	int mcp_port;          /* agent's attach URL (SPEC 10.4) */
	const char *mcp_token; /* or NULL */
	int idle_ms;           /* a worker with nothing to do exits after
				  this (0: 2000) */
} hd_supervisor_config;

/*
 * Start the supervisor: a dispatcher thread that aborts the turns of
 * engines that are gone, then derives wakes and starts agents' turns
 * whenever the store changes, and a worker thread per agent with a turn
 * to run. Free it with hd_supervisor_stop.
 */
int hd_supervisor_start(
    hd_supervisor **out, const hd_supervisor_config *cfg, hd_err *err);

/* Stop: running turns are aborted (their wakes go back in the queue for
 * the next engine), every thread is joined, sv is freed. NULL-safe. */
void hd_supervisor_stop(hd_supervisor *sv);

#endif
