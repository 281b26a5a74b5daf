/*
 * board.h -- the task board (SPEC 4), canonical for who does what.
 *
 * Statuses: pending, claimed, in_progress, verifying, completed, failed,
 * cancelled (verifying: a task with a gate or critic whose owner completed
 * it, waiting for the verdict; verify.h).
 *  (1) A task is blocked while any task it depends on is not completed;
 *      blocked_by is computed from the dependency table on every read,
 *      never stored.
 *  (2) A task is ready when it is pending, has no owner and is not blocked.
 *  (3) Claims are atomic across processes: of N concurrent claimers of one
 *      task exactly one wins; every loser is told exactly why.
 *  (4) Dependencies stay acyclic: a link that would close a cycle (a
 *      self-link included) is refused and changes nothing.
 *  (5) After a write commits it is reflected into the team's room (and a
 *      completion or failure by a member into the leader's mailbox); a
 *      failed reflection is logged and never fails the write. A refused
 *      operation writes, posts and emits nothing.
 *
 * An actor is an agent id or the literal "user" (a person at a surface);
 * NULL means "user". Only the owner, the team leader or a user may start,
 * complete, fail, release, cancel or retry an owned task; an unowned
 * (pending) task may be cancelled by any member of its team.
 */
#ifndef HUDDLE_BOARD_H
#define HUDDLE_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "activity.h"
#include "agent.h"
#include "err.h"
#include "store.h"

/* Task counts by status for one team (the team-state block). */
typedef struct hd_task_counts {
	int64_t pending;
	int64_t claimed;
	int64_t in_progress;
	int64_t completed;
	int64_t failed;
	int64_t cancelled;
	int64_t verifying;
} hd_task_counts;

/* Count a team's tasks by status. */
int hd_board_counts(
    hd_task_counts *out, hd_store *st, const char *team, hd_err *err);

#define HD_TASK_SUBJECT_MAX 200       /* characters */
#define HD_TASK_DESCRIPTION_MAX 10000 /* characters */
#define HD_TASK_ACTIVE_FORM_MAX 200   /* characters */
#define HD_TASK_RESULT_MAX 100000     /* characters */
#define HD_TASK_REASON_MAX 2000       /* characters */
#define HD_TASK_COMMENT_MAX 10000     /* characters */
#define HD_TASK_METADATA_MAX 10000    /* bytes of compact JSON */
#define HD_TASK_DEPS_MAX 100          /* depends_on ids at create */

/* The literal actor naming a person rather than an agent. */
#define HD_BOARD_USER "user"

typedef struct hd_task_comment {
	int64_t id;
	char *author; /* agent id or "user" */
	char *body;
	int64_t created_at;
} hd_task_comment;

/* A task's verification (verify.h): its spec and its latest run. */
typedef struct hd_task_verify {
	char *gate;    /* or NULL */
	char *workdir; /* or NULL */
	int64_t gate_timeout_s;
	char *critic; /* or NULL */
	char *critic_runtime; /* or NULL: a throwaway critic's runtime */
	char *critic_config;  /* its runtime_config (JSON text), or NULL */
	int64_t critic_timeout_s;
	char *run_critic; /* the throwaway member the run made, until it is
			     removed, or NULL */
	char *state; /* idle | queued | running | failed */
	int64_t attempts;
	char *runner; /* the run's runner while running, or NULL */
	int64_t started_at;
	int has_gate_exit;
	int64_t gate_exit;   /* -1: it did not exit */
	char *gate_output;   /* or NULL */
	char *error;         /* the failed run's error, or NULL */
	char *verdict;       /* approve | reject, or NULL */
	char *verdict_by;    /* or NULL */
	char *reasons;       /* or NULL */
	int64_t updated_at;
} hd_task_verify;

typedef struct hd_task {
	int64_t id;
	char *team_id;
	char *subject;
	char *description; /* "" when none */
	char *active_form; /* or NULL */
	char *status;      /* pending | claimed | in_progress | verifying |
			      completed | failed | cancelled */
	char *owner;       /* or NULL; always NULL while pending */
	int64_t priority;  /* higher first */
	json_t *metadata;  /* an object; owned */
	char *result;      /* completed: the result; failed: the reason;
			      else NULL */
	char *created_by;  /* agent id, "user", or NULL */
	int64_t created_at;
	int64_t claimed_at; /* 0 when never (likewise below) */
	int64_t started_at;
	int64_t completed_at; /* completed, failed or cancelled */
	int64_t updated_at;
	int64_t *depends_on; /* ascending */
	size_t ndepends_on;
	int64_t *blocked_by; /* the unfinished subset of depends_on */
	size_t nblocked_by;
	hd_task_comment *comments; /* oldest first; hd_board_get only */
	size_t ncomments;
	int has_comments; /* 1 when comments were loaded */
	int64_t *dependents; /* hd_board_get only: the tasks that depend on
				this one, ascending */
	size_t ndependents;
	int64_t *unblocked; /* hd_board_complete only: the tasks this
			       completion made ready, ascending */
	size_t nunblocked;
	int has_unblocked; /* 1 in hd_board_complete's answer */
	int64_t parent_id; /* the task this one is a subtask of; 0: a root */
	int64_t *children; /* its subtasks' ids, ascending */
	size_t nchildren;
	hd_task_verify *verify; /* or NULL: no gate, no critic; hd_board_get
				   and the verification's own answers only */
} hd_task;

typedef struct hd_tasks {
	hd_task *items; /* newest first (hd_board_list) */
	size_t n;
} hd_tasks;

/* What hd_board_create needs; NULL means "not given". */
typedef struct hd_task_spec {
	const char *team;
	const char *subject;       /* 1..200 characters */
	const char *description;   /* 0..10000 characters */
	const char *active_form;   /* e.g. "Writing docs" */
	int64_t priority;          /* default 0; higher is claimed first */
	const json_t *metadata;    /* must be an object (borrowed) */
	const int64_t *depends_on; /* task ids of the same team */
	size_t ndepends_on;
	const char *created_by; /* an agent of the team, or NULL/"user" */
	int64_t parent_id;      /* a task of the same team; 0: a root task */
	/* verification (verify.h); NULL/0: none, the defaults */
	const char *gate;    /* a shell command, 1..HD_VERIFY_GATE_MAX bytes */
	const char *workdir; /* where the gate runs: an absolute path */
	int64_t gate_timeout_s;
	const char *critic; /* an agent of the team */
	/* or, instead of critic: a runtime that runs a throwaway critic for
	 * each run, with its runtime_config (borrowed; NULL: {}), checked by
	 * critic_check (NULL: the shape only) as hd_agent_add checks one */
	const char *critic_runtime;
	const json_t *critic_config;
	hd_agent_runtime_check critic_check;
	int64_t critic_timeout_s;
} hd_task_spec;

/* hd_board_list filters; zeroed means "everything, newest first". */
typedef struct hd_task_filter {
	const char *status;      /* NULL: any */
	const char *owner;       /* NULL: any */
	int ready;               /* only ready tasks */
	int blocked;             /* only blocked tasks */
	const char *const *meta; /* "KEY=VALUE" or "metadata.KEY=VALUE":
				    metadata.KEY equals VALUE */
	size_t nmeta;
	int limit; /* 0: all */
} hd_task_filter;

/* 1 when s names a task status. */
int hd_task_status_ok(const char *s);

/*
 * Create a task in spec->team (emits task_created; reflected as
 * `Task #5 "Write docs" created.`). Refusals: `team "x" not found`,
 * `task subject must not be empty` (also when blank), `task subject is
 * 201 characters; the limit is 200`, `task description is 10001 characters; the limit is
 * 10000`, `task metadata must be a JSON object`, `unknown dependency: task
 * 9`, `no member "x" in team dev` (created_by). *out (when non-NULL) is the
 * new task: hd_task_free() it.
 *
 * A subtask (spec->parent_id) needs a parent of the same team that is
 * not completed or cancelled: `unknown parent: task 9`, `cannot add a
 * subtask to task 3: it is completed`. The team's runaway caps (team.h)
 * refuse, naming the cap and what to do instead (HD_EREFUSED):
 *   `task 3 already has 24 subtasks (the team's max_children); finish or
 *   cancel some, or raise it with huddle team update dev --max-children N`
 *   (completed and cancelled subtasks do not count);
 *   `a subtask of task 4 would be at depth 3, deeper than the team's
 *   max_task_depth 2 (a root task is at depth 0); add it under a
 *   shallower task, or raise it with huddle team update dev
 *   --max-task-depth N`;
 *   `coder already created 30 root tasks in the last 300 s (the team's
 *   max_new_roots); make this a subtask of one of them, wait, or raise it
 *   with huddle team update dev --max-new-roots N` (root tasks created by
 *   that agent; a user is not capped).
 */
int hd_board_create(
    hd_task **out, hd_store *st, const hd_task_spec *spec, hd_err *err);

/* One task with depends_on, blocked_by, comments and dependents (the
 * tasks that depend on it). `task 5 not found` (HD_ENOTFOUND). */
int hd_board_get(hd_task **out, hd_store *st, int64_t id, hd_err *err);

/*
 * A team's tasks matching f (NULL: all), newest first, each with
 * depends_on and blocked_by. `team "x" not found`, `unknown task status
 * "x"`, `metadata filter must be KEY=VALUE, not "x"`. A metadata value
 * matches a string equal to VALUE, or a number, boolean or null whose JSON
 * text is VALUE. Dispose with hd_tasks_dispose().
 */
int hd_board_list(hd_tasks *out, hd_store *st, const char *team,
    const hd_task_filter *f, hd_err *err);

/*
 * Claim task id for agent, a member of the task's team: one conditional
 * UPDATE, atomic across processes (emits task_claimed; reflected as
 * `Task #5 "Write docs" claimed by coder.`). A loser is told why:
 * `task 5 not found` (HD_ENOTFOUND), `task 5 is already claimed by fast`
 * (HD_ECONFLICT), `task 5 is blocked by 3, 4`, `task 5 is completed`
 * (HD_EREFUSED), `no member "x" in team dev` (HD_EREFUSED).
 */
int hd_board_claim(
    hd_task **out, hd_store *st, int64_t id, const char *agent, hd_err *err);

/* Claim the ready task of team with the highest priority, then the lowest
 * id, in one statement. `no ready task in team dev` (HD_ENOTFOUND). */
int hd_board_auto_claim(hd_task **out, hd_store *st, const char *team,
    const char *agent, hd_err *err);

/*
 * The team leader or a user (actor) claims task id on behalf of agent.
 * Same refusals as hd_board_claim, plus `only the team leader or a user
 * may assign task 5, not coder`. Reflected as
 * `Task #5 "Write docs" assigned to coder by manager.`.
 */
int hd_board_assign(hd_task **out, hd_store *st, int64_t id, const char *agent,
    const char *actor, hd_err *err);

/* Whom hd_board_assign_auto picked, and why. */
typedef struct hd_board_pick {
	char agent[64];     /* the member the task went to */
	int64_t open_tasks; /* its claimed and in_progress tasks before */
	char reason[128];   /* e.g. "idle, 0 open tasks" */
} hd_board_pick;

/*
 * hd_board_assign with the member picked by the board, in the same
 * transaction: the idle member (status idle) with the fewest open tasks
 * (claimed or in_progress), ties going to the lowest id. The leader is a
 * candidate only when it is the team's only member; a member that is
 * working, in error, shutdown_requested or shutdown is never picked.
 * Refusals: those of hd_board_assign for the task and the actor, then
 * `no idle member in team dev to assign task 5 to (coder: working,
 * tester: error)` or `no member in team dev to assign task 5 to`
 * (HD_EREFUSED), and nothing is written. *pick (when non-NULL) says whom
 * and why; its reason is `idle, 0 open tasks`, followed by
 * `, lowest id of 2 tied` on a tie, or by `, the team's only member` for
 * a leader alone. Reflected and emitted like hd_board_assign (the
 * task_claimed event says "auto": true).
 */
int hd_board_assign_auto(hd_task **out, hd_board_pick *pick, hd_store *st,
    int64_t id, const char *actor, hd_err *err);

/*
 * Delegation as one typed act: create the task spec describes (every
 * rule and cap of hd_board_create; spec->created_by is the actor, the
 * team leader or a user), claim it for assignee and send assignee a
 * task_update message, all in one write transaction: either all three
 * happen or nothing is written. The message reads
 * `You were delegated task #7 "X" by manager: <description>` (ending
 * `by manager.` without a description); from the actor, or from
 * "huddle" when a user delegates. Refusals, before anything is written:
 * those of hd_board_create, then `only the team leader or a user may
 * delegate, not coder` (HD_EREFUSED), `no member "x" in team dev`, and
 * for an assignee that cannot take work `cannot delegate to coder: it is
 * in error (exit status 3)` (its status error, shutdown_requested or
 * shutdown, with its status_reason in parentheses when it has one;
 * HD_EREFUSED). Emits task_created and task_claimed {"delegated": true};
 * reflected as one line `Task #7 "X" delegated to coder by manager.`.
 */
int hd_board_delegate(hd_task **out, hd_store *st, const hd_task_spec *spec,
    const char *assignee, hd_err *err);

/*
 * The owner-checked transitions (emit status_changed {from, to, by}).
 * A task with open subtasks (pending, claimed or in_progress) cannot
 * complete: `task 3 cannot complete: its subtasks #5, #6 are still open`
 * (`its subtask #5 is still open` for one; HD_EREFUSED).
 * A status the operation cannot leave: `task 7 cannot go from completed to
 * in_progress` (HD_EREFUSED); an actor who is neither owner, leader nor
 * user: `task 5 is owned by coder, not tester` (HD_EREFUSED).
 *   start:    claimed -> in_progress  `Task #5 "W" → in_progress.`
 *   complete: claimed|in_progress -> completed, with an optional result
 *             `Task #5 "W" completed by coder.`; a task with a gate or
 *             a critic goes to verifying instead (verify.h), the result
 *             kept as the builder's summary: `Task #5 "W" completed by
 *             coder; verifying: gate `make test`, critic reviewer.`
 *   cancel also leaves verifying.
 *   fail:     claimed|in_progress -> failed, with an optional reason
 *             `Task #5 "W" failed: <reason>.` (`failed.` without one)
 *   release:  claimed|in_progress -> pending, owner cleared
 *             `Task #5 "W" released by coder.`
 *   cancel:   pending|claimed|in_progress -> cancelled
 *             `Task #5 "W" cancelled by manager.`
 *   retry:    failed -> pending, owner and result cleared
 *             `Task #5 "W" reopened by manager.`
 * A member (not the leader) completing or failing a task also sends the
 * leader a task_update message:
 * `Task #5 "W" completed by coder: <result, first 200 characters>` or
 * `Task #5 "W" failed by coder: <reason, first 200 characters>` (no colon
 * part when there is no text; then the line ends with a period).
 * A completion names the tasks it made ready (pending, unowned, and no
 * longer blocked now that this one is completed), ids ascending, at most
 * 10 by name and then `and 3 more`: the room line becomes
 * `Task #5 "W" completed by coder; now ready: #7 "Deploy", #9 "Docs".`,
 * the leader's message gains a line `Now ready: #7 "Deploy", #9 "Docs"`,
 * the status_changed event gains "unblocked": [7, 9] (every id), and so
 * does the task hd_board_complete answers (unblocked, nunblocked).
 */
int hd_board_start(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err);
int hd_board_complete(hd_task **out, hd_store *st, int64_t id,
    const char *actor, const char *result, hd_err *err);
int hd_board_fail(hd_task **out, hd_store *st, int64_t id, const char *actor,
    const char *reason, hd_err *err);
int hd_board_release(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err);
int hd_board_cancel(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err);
int hd_board_retry(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err);

/*
 * Make task id depend on task dep (same team; emits dep_linked; reflected
 * as `Task #6 "Ship" now depends on #5 "Write docs".`). A link that would
 * close a cycle, self-links included, is refused and changes nothing:
 * `linking task 3 to task 1 would create a circular dependency`. An
 * existing link is left as it is (no event, no post). `unknown dependency:
 * task 9` for a dep that is missing or in another team.
 */
int hd_board_link(hd_task **out, hd_store *st, int64_t id, int64_t dep,
    const char *actor, hd_err *err);

/* Add a comment (1..10000 characters) by author, a member of the task's
 * team or "user". Reflected as `Comment on task #5 "W" by coder: <the
 * comment, first 200 characters>`; emits task_comment {"comment_id",
 * "by"}, so the task's history has it. *out (when non-NULL):
 * hd_task_comment_free() it. */
int hd_board_comment(hd_task_comment **out, hd_store *st, int64_t id,
    const char *author, const char *body, hd_err *err);

/*
 * Move every task of team that from owns and that is claimed or
 * in_progress to owner to, each keeping its status, with a comment by
 * actor (an agent of the team, or NULL/"user"): `moved from coder to
 * coder-2: <note>` (`moved from coder to coder-2` without a note). Each
 * move emits task_reassigned {from, to, by, status} and is reflected as
 * `Task #3 "X" moved from coder to coder-2 by manager.`. Nothing to move
 * is no error. *moved (when non-NULL) gets the tasks moved, by id
 * ascending: hd_tasks_dispose() it. Refusals, before anything is written:
 * `cannot move tasks from coder to itself` (HD_EINVAL), `task comment is
 * 10001 characters; the limit is 10000`, `no member "x" in team dev`
 * (from, to, actor). Works inside a caller's transaction, which the
 * whole move then commits or rolls back with (hd_team_replace).
 */
int hd_board_reassign_open(hd_tasks *moved, hd_store *st, const char *team,
    const char *from, const char *to, const char *actor, const char *note,
    hd_err *err);

/* {"id","team_id","subject","description","active_form","status","owner",
 * "priority","metadata","result","reason","created_by","created_at",
 * "claimed_at","started_at","completed_at","updated_at","depends_on",
 * "blocked_by","ready","parent_id" (null for a root),"children" (ids)}
 * plus "comments" and "dependents" (the ids of the tasks that depend on
 * this one) when loaded (hd_board_get) and "unblocked" (ids)
 * in hd_board_complete's answer, and "verify" {"gate","workdir",
 * "gate_timeout_s","critic","critic_timeout_s","state","attempts",
 * "runner","started_at","gate_exit","gate_output","error","verdict",
 * "verdict_by","reasons","updated_at"} when the task has one and it was
 * loaded. A new reference. */
json_t *hd_task_to_json(const hd_task *t);
json_t *hd_task_comment_to_json(const hd_task_comment *c);

void hd_task_free(hd_task *t);
void hd_task_comment_free(hd_task_comment *c);
void hd_tasks_dispose(hd_tasks *l);

/*
 * An owner's open tasks (claimed or in_progress) in team, oldest first:
 * fn gets each one's id, subject and status (borrowed, valid during the
 * call); a negative return stops and is returned. For the team context
 * of a member's turn (SPEC 6), which needs no more of them.
 */
typedef int (*hd_board_open_fn)(void *ctx, int64_t id, const char *subject,
    const char *status, hd_err *err);
int hd_board_each_open(hd_store *st, const char *team, const char *owner,
    hd_board_open_fn fn, void *ctx, hd_err *err);

/* 1 in *yes when owner holds a task in_progress in team (what makes a
 * member working, activity.h). */
int hd_board_has_started(
    int *yes, hd_store *st, const char *team, const char *owner, hd_err *err);

/* The task owner finished last in team (completed or failed), handed to
 * fn as hd_board_each_open hands them; fn is not called when there is
 * none. For the idle notice (activity.h). */
int hd_board_last_finished(hd_store *st, const char *team, const char *owner,
    hd_board_open_fn fn, void *ctx, hd_err *err);

/* The two above, as the status rule reads a member's work (activity.h):
 * what the board's reflection and the public functions of activity.h and
 * shutdown.h hand to it. */
extern const hd_work hd_board_work;

/* A team's tasks, their comments and dependencies (team removal, src/lifecycle/remove.c, in its write
 * transaction): how many it keeps; delete them. */
int hd_board_team_count(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
int hd_board_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
