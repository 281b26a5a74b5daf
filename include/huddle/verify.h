/*
 * verify.h -- verification of a task's work (the board's part, SPEC 4.3):
 * a task may carry a gate (a shell command that must exit 0) and a critic
 * (an agent of its team that is never its owner, or a runtime that runs
 * a throwaway critic for each run: a fresh member with a home of its
 * own, removed after). Completing such a task moves it to `verifying`
 * instead of `completed`; the verifier engine (verifier.h) runs the
 * gate, then the critic, who answers with a verdict:
 *
 *   claimed|in_progress --complete--> verifying   (run queued)
 *   verifying --approve--> completed               (dependants unblock)
 *   verifying --reject---> in_progress             (same owner; the reasons
 *                                                   as a task comment and a
 *                                                   message to the owner)
 *   verifying --cancel---> cancelled               (owner, leader, user)
 *
 * A verification run: idle -> queued (the completion, or a retry) ->
 * running (taken by one runner, across processes) -> idle (a verdict) or
 * failed (the runner's error: a critic that timed out or answered no
 * verdict, a gate that could not start). A run whose runner died (its
 * pid no longer names the process that took it) is taken again by the
 * next runner, as a new attempt. A failed run waits for
 * hd_board_verify_retry (`huddle task verify`).
 *
 * Every step is an event (verify_queued, verify_started, verify_gate,
 * verify_failed, verify_verdict) and a system line in the team's room,
 * committed with the change (board.c (5)).
 */
#ifndef HUDDLE_VERIFY_H
#define HUDDLE_VERIFY_H

#include <stdint.h>

#include "agent.h"
#include "board.h"
#include "err.h"
#include "store.h"

#define HD_VERIFY_GATE_MAX 4000          /* bytes of the gate command */
#define HD_VERIFY_GATE_OUTPUT_MAX 16000  /* bytes of its output kept */
#define HD_VERIFY_TIMEOUT_MAX 86400      /* seconds, either timeout */
#define HD_VERIFY_GATE_TIMEOUT_S 600     /* default */
#define HD_VERIFY_CRITIC_TIMEOUT_S 900   /* default */

/* The author of what the gate decides (a comment, a message, an event). */
#define HD_VERIFY_GATE_ACTOR "huddle"

/* A run the verifier took: everything it needs to run it. Owned strings;
 * hd_verify_job_dispose frees them. */
typedef struct hd_verify_job {
	int64_t task_id;
	char *team;
	char *subject;
	char *description;
	char *owner;   /* the builder */
	char *summary; /* the builder's result, or NULL */
	char *gate;    /* or NULL */
	char *workdir; /* or NULL: the verifier's choice */
	int64_t gate_timeout_s;
	char *critic; /* or NULL */
	char *critic_runtime; /* or NULL: a throwaway critic's runtime,
				 hd_board_verify_critic_join */
	int64_t critic_timeout_s;
	int64_t attempt; /* 1 for the first run */
} hd_verify_job;

void hd_verify_job_dispose(hd_verify_job *j);

/* *due 1 when a run waits to be taken: queued, or running under a runner
 * that died (a cheap read, for a verifier deciding whether to take). */
int hd_board_verify_due(int *due, hd_store *st, hd_err *err);

/*
 * Take one run for runner (a token naming the verifier, its pid and
 * start time, hd_proc_start): the oldest queued one, or a running one
 * whose runner is dead; only task_id's when task_id > 0. *found 0 when
 * there is none. The run becomes running, its attempt counted (emits
 * verify_started {attempt, resumed}).
 */
int hd_board_verify_take(int *found, hd_verify_job *job, hd_store *st,
    const char *runner, int64_t pid, int64_t start, int64_t task_id,
    hd_err *err);

/*
 * The gate of runner's run of task id ended: exit_code (-1: it did not
 * exit: timed out or killed, said by how), its output (the end kept).
 * A pass is recorded (verify_gate, `gate passed`); a failure rejects the
 * task back to its owner with the output as the reasons, by
 * HD_VERIFY_GATE_ACTOR. *passed says which. HD_ECONFLICT when the run
 * is no longer runner's (a verdict came, or another runner took it).
 */
int hd_board_verify_gate(int *passed, hd_store *st, int64_t id,
    const char *runner, int exit_code, const char *how, const char *output,
    hd_err *err);

/* Approve runner's run of task id for want of a critic (the gate passed). */
int hd_board_verify_pass(
    hd_store *st, int64_t id, const char *runner, hd_err *err);

/*
 * A critic given as a runtime (verify_critic.c): make runner's run of
 * task id its critic, a throwaway member of the task's team named
 * critic-<id>-<attempt> (into *agent, malloc'd), of the task's critic
 * runtime and config (checked by check, as hd_agent_add checks),
 * working from the start and recorded as the run's run_critic, whose
 * verdict counts as the critic's. A member of that name that is not a
 * throwaway critic is refused (HD_EEXISTS); a throwaway a dead runner
 * left is removed first. HD_ECONFLICT when the run is not runner's.
 */
int hd_board_verify_critic_join(char **agent, hd_store *st, int64_t id,
    const char *runner, int64_t attempt, hd_agent_runtime_check check,
    hd_err *err);

/* Remove agent, task id's throwaway critic, once its run is over
 * (whatever ended it), and the run's record of it. A member that is
 * gone already, or is no throwaway critic of task id's, is left alone. */
int hd_board_verify_critic_leave(
    hd_store *st, int64_t id, const char *agent, hd_err *err);

/* Remove every throwaway critic whose run is not live (running under a
 * live runner with it as critic): what verifiers that died left.
 * *removed (when non-NULL) how many. */
int hd_board_verify_sweep(int *removed, hd_store *st, hd_err *err);

/* runner's run of task id failed with error: the task stays verifying,
 * the run failed (verify_failed, a room line naming the retry). */
int hd_board_verify_fail(hd_store *st, int64_t id, const char *runner,
    const char *error, hd_err *err);

/*
 * The verdict on task id (verifying) by actor: the task's critic, or a
 * user; never its owner (`coder owns task 5 and cannot be its own
 * critic`), nor another agent (`task 5's critic is reviewer, not
 * tester`). approve: completed, naming what became ready as a completion
 * does; reject: in_progress for the same owner, reasons (required,
 * 1..10000 characters) as a comment by actor and a task_update message
 * to the owner. *out (when non-NULL) is the task after.
 */
int hd_board_verdict(hd_task **out, hd_store *st, int64_t id,
    const char *actor, int approve, const char *reasons, hd_err *err);

/*
 * Queue task id's verification again (the owner, the leader or a user):
 * the task must be verifying and its run failed or queued, or running
 * under a runner that died. `task 5 is being verified by <runner>` when
 * a live runner has it (HD_ECONFLICT).
 */
int hd_board_verify_retry(hd_task **out, hd_store *st, int64_t id,
    const char *actor, hd_err *err);

#endif
