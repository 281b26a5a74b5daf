/*
 * tasks_int.h -- what the files of the board's tables share (board.c,
 * rows.c, create.c, read.c, claim.c, transitions.c, deps.c): the task
 * columns, the write payload every write fills (board_txn) and the
 * functions that run it, load tasks and check actors. Each function that
 * takes a store runs inside a transaction its caller holds.
 */
#ifndef HD_TASKS_INT_H
#define HD_TASKS_INT_H

#include <string.h>

#include <huddle/util.h>

#include "board_int.h"

#define TASK_COLS                                                              \
	"id, team_id, subject, description, active_form, status, owner,"       \
	" priority, metadata, result, created_by, created_at, claimed_at,"     \
	" started_at, completed_at, updated_at, parent_id"

/* True when the task aliased T has a dependency that is not completed. */
#define UNFINISHED_DEP(T)                                                      \
	"EXISTS (SELECT 1 FROM task_deps d"                                    \
	" JOIN tasks p ON p.id = d.depends_on"                                 \
	" WHERE d.task_id = " T ".id AND p.status <> 'completed')"

typedef enum {
	OP_START,
	OP_COMPLETE,
	OP_FAIL,
	OP_RELEASE,
	OP_CANCEL,
	OP_RETRY,
} board_op;

typedef struct board_txn {
	/* inputs */
	int64_t id;
	int64_t dep;
	const char *team;
	const char *agent; /* claim target */
	const char *actor;
	const char *text;
	board_op op;
	const hd_task_spec *spec;
	/* outputs, filled inside the transaction */
	hd_task *task;
	char *prev_owner; /* the owner before the write (a move), or NULL */
	char *leader;
	char *dep_subject;
	hd_task_comment *comment;
	int64_t *ready; /* complete: the tasks it made ready, until they move
			   to task->unblocked */
	size_t nready;
	char *ready_subjects[HD_BOARD__READY_NAMED]; /* of the first ones */
	int assign;  /* claim on behalf of agent (actor: leader or user) */
	hd_board_pick *pick; /* assign_auto: the board picks agent, here */
	int changed; /* 0: nothing written (an existing link) */
	int verifying; /* complete: the task went to verifying instead */
	int kind_set;  /* the reflection is kind, not the write's own */
	hd_board__kind kind;
	const char *note; /* HD_BOARD__VERIFY_NOTE's text */
	void *ext;        /* verify.c: its write's own payload */
	char *critic;     /* verify.c: the task's critic, for its texts */
	char *gate;
} board_txn;

/* The small checks every write makes. */
static inline int
is_user(const char *actor)
{
	return actor == NULL || strcmp(actor, HD_BOARD_USER) == 0;
}

static inline int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* Check an actor's syntax before any transaction: "user" or a slug. */
static inline int
actor_check(const char *actor, hd_err *err)
{
	return is_user(actor) ? 0 : hd_slug_check("agent", actor, err);
}

/* The agent an event names: NULL for a user. */
static inline const char *
event_agent(const char *actor)
{
	return is_user(actor) ? NULL : actor;
}

/* ---- rows.c: loading tasks ---------------------------------------------- */

void hd_board__task_dispose(hd_task *t);

/* Fill t from a row of TASK_COLS; -1 on allocation failure. */
int hd_board__task_row(hd_task *t, hd_stmt *s);

/* Room for one more item in the array v of n items of size bytes (*cap
 * allocated), the capacity doubling from first: v, v moved, or NULL when
 * out of memory (v and *cap untouched). */
void *hd_board__grow(void *v, size_t n, size_t *cap, size_t size,
    size_t first);

/* Append id to *v (size *n, capacity *cap); -1 on allocation failure. */
int hd_board__ids_push(int64_t **v, size_t *n, size_t *cap, int64_t id);

/* *ids (freed first) gets the first column of every row of sql, bound
 * to the values as hd_store_query binds them (*n of them, in row order):
 * 0, or the error (out of memory, the database's) with the ids read so
 * far left for the caller to free. */
int hd_board__ids_query_(int64_t **ids, size_t *n, hd_store *st,
    hd_err *err, const char *sql, const hd_val *v, size_t nv);
#define hd_board__ids_query(ids, n, st, err, sql, ...)                        \
	hd_board__ids_query_((ids), (n), (st), (err), (sql),                  \
	    HD_VALS(__VA_ARGS__), HD_NVALS(__VA_ARGS__))

/* A JSON array of the ids (a new reference). */
json_t *hd_board__json_ids(const int64_t *ids, size_t n);

/* Record that t depends on dep (whose status is dep_status). */
int hd_board__task_add_dep(hd_task *t, int64_t dep, const char *dep_status,
    size_t *capd, size_t *capb);

/* t's dependencies (depends_on, blocked_by) and subtasks (children). */
int hd_board__task_load_deps(hd_store *st, hd_task *t, hd_err *err);

/* Step a statement returning TASK_COLS once: *out is the task, or NULL
 * when there was no row. The statement is reset either way. */
int hd_board__task_step(hd_task **out, hd_store *st, hd_stmt *s,
    hd_err *err);

/* Load a task with its dependencies (and, when with_comments, its
 * comments and dependents); *out NULL (0 returned) when absent. */
int hd_board__task_load(hd_task **out, hd_store *st, int64_t id,
    int with_comments, hd_err *err);

/* The team of task id into *team (malloc'd), or `task 5 not found`. */
int hd_board__task_team(char **team, hd_store *st, int64_t id, hd_err *err);

/* Check that actor may act in team: "user", or a member. */
int hd_board__actor_member(
    hd_store *st, const char *team, const char *actor, hd_err *err);

/* The leader of team (malloc'd) or NULL. */
int hd_board__team_leader(
    char **out, hd_store *st, const char *team, hd_err *err);

/* ---- board.c: the write payload and its reflection ---------------------- */

/* Forget the tasks a completion made ready (also before a retry). */
void hd_board__ready_dispose(board_txn *b);

void hd_board__txn_dispose(board_txn *b);

/* Run fn as one write transaction that also reflects what it changed
 * (board.c (5)). */
int hd_board__write(hd_store *st, hd_store_txn_fn fn, board_txn *b,
    hd_board__kind kind, hd_err *err);

/* A write whose answer is the task: hd_board__write, then b->task to
 * *out (when out is not NULL); b is disposed either way. */
int hd_board__write_task(hd_task **out, hd_store *st, hd_store_txn_fn fn,
    board_txn *b, hd_board__kind kind, hd_err *err);

/* Insert a comment on task id (inside the caller's transaction); *out
 * (when non-NULL) gets it. author is an agent id, "user" or "huddle". */
int hd_board__comment_insert(hd_task_comment **out, hd_store *st, int64_t id,
    const char *author, const char *body, hd_err *err);

/* The tasks completing b->id made ready, into b->ready and
 * b->ready_subjects (transitions.c; a completion, an approval). */
int hd_board__unblocked(hd_store *st, board_txn *b, hd_err *err);

/* ---- verify.c: verification (verify.h) -------------------------------- */

/* Complete task t (b->op complete, checks passed): when t has a gate or
 * critic, move it to verifying and queue its run instead (b->verifying
 * 1, b->task the task after); else nothing (b->verifying 0). */
int hd_board__verify_submit(
    hd_store *st, board_txn *b, const hd_task *t, hd_err *err);

/* t->verify from task_verify (none: left NULL). */
int hd_board__verify_load(hd_store *st, hd_task *t, hd_err *err);
json_t *hd_board__verify_json(const hd_task_verify *v);
void hd_board__verify_free(hd_task_verify *v);

/* The spec's verification checks that need no database; the critic's
 * membership, inside the create's transaction before the task's insert;
 * and its row, after it. */
int hd_board__verify_check(const hd_task_spec *spec, hd_err *err);
int hd_board__verify_member(
    hd_store *st, const hd_task_spec *spec, hd_err *err);
int hd_board__verify_insert(
    hd_store *st, int64_t id, const hd_task_spec *spec, hd_err *err);

/* task id's task_verify row into *out (NULL when it has none); its
 * runner's pid and start into pid/start when non-NULL. */
int hd_board__verify_row(hd_task_verify **out, int64_t *pid, int64_t *start,
    hd_store *st, int64_t id, hd_err *err);

/* A runner recorded as (pid, start) is alive: that pid is still the
 * process that started then (verify_run.c). */
int hd_board__verify_runner_alive(int64_t pid, int64_t start);

/* Remove agent, task id's throwaway critic, and the run's record of it,
 * inside the caller's transaction (verify_critic.c (3)); a member gone
 * already, or not task id's throwaway, is left as it is. */
int hd_board__verify_critic_leave(
    hd_store *st, int64_t id, const char *agent, hd_err *err);

/* The run of task id is runner's (verify.c (5)): its row into *v (the
 * caller frees it), the task into b->task; else HD_ECONFLICT. */
int hd_board__verify_owned(hd_task_verify **v, hd_store *st, board_txn *b,
    int64_t id, const char *runner, hd_err *err);

/* A verdict on task id as one board write: by actor, or as runner's own
 * (the gate's: runner not NULL). *out when non-NULL. */
int hd_board__verdict_run(hd_task **out, hd_store *st, int64_t id,
    const char *actor, const char *runner, int approve, const char *reasons,
    hd_err *err);

/* `coder is the critic of task 5 and cannot own it` when agent is task
 * id's critic (HD_EREFUSED), else 0. */
int hd_board__verify_not_critic(
    hd_store *st, int64_t id, const char *agent, hd_err *err);

/* ---- create.c: also the first step of a delegation (claim.c) ------------ */

/* Insert b->spec as a new task (a write's fn: b is the board_txn). */
int hd_board__create_txn(hd_store *st, void *payload, hd_err *err);

/* Everything about a new task that can be checked without the
 * database (board.c (5)). */
int hd_board__create_check(const hd_task_spec *spec, hd_err *err);

#endif
