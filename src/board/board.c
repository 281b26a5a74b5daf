/*
 * board.c -- the task board (SPEC 4). Owns tables tasks, task_deps and
 * task_comments; nothing else writes them.
 *
 * Task states. Each transition is one conditional UPDATE (its WHERE names
 * the status it leaves) in the function on the right, run inside
 * BEGIN IMMEDIATE; nothing else writes tasks.status.
 *   pending -> claimed                        board_claim_txn (claim, assign,
 *                                             assign_auto), auto_claim
 *   claimed -> in_progress                    board_move_txn (start)
 *   claimed|in_progress -> completed|failed   board_move_txn (complete, fail)
 *   claimed|in_progress -> pending            board_move_txn (release:
 *                                             owner cleared)
 *   pending|claimed|in_progress -> cancelled  board_move_txn (cancel)
 *   failed -> pending                         board_move_txn (retry: owner
 *                                             and result cleared)
 * One write changes an owner without a transition: reassign_one moves a
 * claimed or in_progress task to another owner, status kept
 * (hd_board_reassign_open, for a member replaced by another).
 *  (1) ready == pending, no owner, not blocked; pending implies no owner.
 *  (2) blocked_by is computed from task_deps on read; never stored.
 *  (3) task_deps stays acyclic and within one team: board_link_txn refuses
 *      an edge that closes a cycle (found by a recursive CTE), and create
 *      only links to existing tasks of the same team, which cannot close
 *      one.
 *  (4) A claim is decided by one conditional UPDATE ... RETURNING; only a
 *      loser reads the task again, to name the reason. Auto-claim picks
 *      and claims in that same single statement. Auto-assign picks the
 *      member (pick_member: agents through the team module, open tasks
 *      from this table) and claims for it in one transaction, so the
 *      counts it picked on are the ones its claim commits on.
 *  (5) Validation happens before the write; events are appended inside the
 *      transaction (they commit with the change). The room line and the
 *      leader's message (reflect.c) follow the change in the same
 *      transaction, each in its own savepoint: they commit exactly when
 *      the change does, so a refused or rolled-back operation posts and
 *      emits nothing, a crash can never keep the change and lose its line,
 *      and a reflection that fails rolls back alone, never the change.
 *      (One commit instead of two also halves a claim's write cost.)
 *  (6) A completion finds the tasks it made ready (board_unblocked) in
 *      its own transaction, right after its UPDATE: what the room line,
 *      the leader's message, the event and the answer name is exactly
 *      what became ready with the commit.
 *  (7) Subtasks: parent_id names a task of the same team, set at create
 *      and never changed, so the parent links form a forest. A create
 *      checks the team's caps (team.h) in its own transaction: open
 *      (not completed or cancelled) children per parent, nesting depth
 *      (a root at 0), and root tasks per agent per window. A task with
 *      a pending, claimed or in_progress child cannot complete
 *      (open_children, in board_move_txn).
 *  (8) Delegation (hd_board_delegate) is create, claim and the
 *      assignee's message in one transaction; a refusal of any step
 *      rolls back the others. It is only ever asked for by a surface,
 *      never inferred from what an agent wrote.
 * Callers: the CLI (cmd-task.c, cmd-demo.c), MCP tools (tool-board.c), HTTP
 * routes (route-board.c), the engines' reads; hd_team_replace
 * (src/mailbox/spawn.c) for hd_board_reassign_open.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>
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

enum {
	ST_PENDING,
	ST_CLAIMED,
	ST_IN_PROGRESS,
	ST_COMPLETED,
	ST_FAILED,
	ST_CANCELLED,
	NSTATUS
};

static const char *const status_names[NSTATUS] = {
    "pending", "claimed", "in_progress", "completed", "failed", "cancelled"};

/*
 * The transition table: board_transitions[from][to] is 1 exactly for the
 * arrows of the diagram above. An operation must pass both its own
 * from-set (board_ops: release and retry both reach pending, from
 * different states) and this table, so neither can drift into allowing
 * an arrow the diagram lacks.
 */
static const unsigned char board_transitions[NSTATUS][NSTATUS] = {
    /* to:      pend clm  inpr comp fail canc */
    [ST_PENDING] = {0, 1, 0, 0, 0, 1},
    [ST_CLAIMED] = {1, 0, 1, 1, 1, 1},
    [ST_IN_PROGRESS] = {1, 0, 0, 1, 1, 1},
    [ST_COMPLETED] = {0, 0, 0, 0, 0, 0},
    [ST_FAILED] = {1, 0, 0, 0, 0, 0},
    [ST_CANCELLED] = {0, 0, 0, 0, 0, 0},
};

/* The owner-checked operations: their target and the states they leave. */
typedef enum {
	OP_START,
	OP_COMPLETE,
	OP_FAIL,
	OP_RELEASE,
	OP_CANCEL,
	OP_RETRY,
} board_op;

static const struct {
	const char *name;
	int to;
	unsigned from; /* bit set of statuses */
	hd_board__kind kind;
	const char *sql; /* the conditional UPDATE; ?1 id, ?2 from, ?3 now,
			    ?4 text */
} board_ops[] = {
    [OP_START] = {"start", ST_IN_PROGRESS, 1u << ST_CLAIMED, HD_BOARD__STARTED,
	"UPDATE tasks SET status = 'in_progress', started_at = ?3,"
	" updated_at = ?3 WHERE id = ?1 AND status = ?2"},
    [OP_COMPLETE] = {"complete", ST_COMPLETED,
	1u << ST_CLAIMED | 1u << ST_IN_PROGRESS, HD_BOARD__COMPLETED,
	"UPDATE tasks SET status = 'completed', result = ?4,"
	" completed_at = ?3, updated_at = ?3 WHERE id = ?1 AND status = ?2"},
    [OP_FAIL] = {"fail", ST_FAILED, 1u << ST_CLAIMED | 1u << ST_IN_PROGRESS,
	HD_BOARD__FAILED,
	"UPDATE tasks SET status = 'failed', result = ?4,"
	" completed_at = ?3, updated_at = ?3 WHERE id = ?1 AND status = ?2"},
    [OP_RELEASE] = {"release", ST_PENDING,
	1u << ST_CLAIMED | 1u << ST_IN_PROGRESS, HD_BOARD__RELEASED,
	"UPDATE tasks SET status = 'pending', owner = NULL,"
	" claimed_at = NULL, started_at = NULL, updated_at = ?3"
	" WHERE id = ?1 AND status = ?2"},
    [OP_CANCEL] = {"cancel", ST_CANCELLED,
	1u << ST_PENDING | 1u << ST_CLAIMED | 1u << ST_IN_PROGRESS,
	HD_BOARD__CANCELLED,
	"UPDATE tasks SET status = 'cancelled', completed_at = ?3,"
	" updated_at = ?3 WHERE id = ?1 AND status = ?2"},
    [OP_RETRY] = {"retry", ST_PENDING, 1u << ST_FAILED, HD_BOARD__RETRIED,
	"UPDATE tasks SET status = 'pending', owner = NULL, result = NULL,"
	" claimed_at = NULL, started_at = NULL, completed_at = NULL,"
	" updated_at = ?3 WHERE id = ?1 AND status = ?2"},
};

static int
status_index(const char *s)
{
	int i;

	for (i = 0; i < NSTATUS; i++)
		if (s != NULL && strcmp(s, status_names[i]) == 0)
			return i;
	return -1;
}

int
hd_task_status_ok(const char *s)
{
	return status_index(s) >= 0;
}

static int
is_user(const char *actor)
{
	return actor == NULL || strcmp(actor, HD_BOARD_USER) == 0;
}

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* Check an actor's syntax before any transaction: "user" or a slug. */
static int
actor_check(const char *actor, hd_err *err)
{
	return is_user(actor) ? 0 : hd_slug_check("agent", actor, err);
}

/* ---- rows ---------------------------------------------------------------- */

static void
task_dispose(hd_task *t)
{
	size_t i;

	free(t->team_id);
	free(t->subject);
	free(t->description);
	free(t->active_form);
	free(t->status);
	free(t->owner);
	json_decref(t->metadata);
	free(t->result);
	free(t->created_by);
	free(t->depends_on);
	free(t->blocked_by);
	free(t->unblocked);
	free(t->children);
	for (i = 0; i < t->ncomments; i++) {
		free(t->comments[i].author);
		free(t->comments[i].body);
	}
	free(t->comments);
	free(t->dependents);
	memset(t, 0, sizeof(*t));
}

void
hd_task_free(hd_task *t)
{
	if (t == NULL)
		return;
	task_dispose(t);
	free(t);
}

void
hd_tasks_dispose(hd_tasks *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		task_dispose(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

void
hd_task_comment_free(hd_task_comment *c)
{
	if (c == NULL)
		return;
	free(c->author);
	free(c->body);
	free(c);
}

static int64_t
col_ms(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL
		   ? 0
		   : sqlite3_column_int64(s, col);
}

/* Fill t from a row of TASK_COLS; -1 on allocation failure. */
static int
task_row(hd_task *t, sqlite3_stmt *s)
{
	const char *meta;

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(s, 0);
	t->team_id = hd_store_col_dup(s, 1);
	t->subject = hd_store_col_dup(s, 2);
	t->description = hd_store_col_dup(s, 3);
	t->active_form = hd_store_col_dup(s, 4);
	t->status = hd_store_col_dup(s, 5);
	t->owner = hd_store_col_dup(s, 6);
	t->priority = sqlite3_column_int64(s, 7);
	meta = (const char *)sqlite3_column_text(s, 8);
	t->metadata = json_loads(meta != NULL ? meta : "{}", 0, NULL);
	if (t->metadata != NULL && !json_is_object(t->metadata)) {
		json_decref(t->metadata);
		t->metadata = NULL;
	}
	if (t->metadata == NULL)
		t->metadata = json_object();
	t->result = hd_store_col_dup(s, 9);
	t->created_by = hd_store_col_dup(s, 10);
	t->created_at = col_ms(s, 11);
	t->claimed_at = col_ms(s, 12);
	t->started_at = col_ms(s, 13);
	t->completed_at = col_ms(s, 14);
	t->updated_at = col_ms(s, 15);
	t->parent_id = col_ms(s, 16);
	if (t->team_id == NULL || t->subject == NULL ||
	    t->description == NULL || t->status == NULL || t->metadata == NULL)
		return -1;
	return 0;
}

static int
ids_push(int64_t **v, size_t *n, size_t *cap, int64_t id)
{
	int64_t *nv;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 4;
		if ((nv = realloc(*v, *cap * sizeof(*nv))) == NULL)
			return -1;
		*v = nv;
	}
	(*v)[(*n)++] = id;
	return 0;
}

static json_t *
json_ids(const int64_t *ids, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(ids[i]));
	return a;
}

/* Record that t depends on dep (whose status is dep_status). */
static int
task_add_dep(
    hd_task *t, int64_t dep, const char *dep_status, size_t *capd, size_t *capb)
{
	if (ids_push(&t->depends_on, &t->ndepends_on, capd, dep) < 0)
		return -1;
	if (dep_status == NULL || strcmp(dep_status, "completed") != 0)
		if (ids_push(&t->blocked_by, &t->nblocked_by, capb, dep) < 0)
			return -1;
	return 0;
}

/* t->children: the ids of its subtasks, ascending. */
static int
task_load_children(hd_store *st, hd_task *t, hd_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc, src;

	free(t->children);
	t->children = NULL;
	t->nchildren = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id FROM tasks WHERE parent_id = ? ORDER BY id", err)) <
	    0)
		return rc;
	sqlite3_bind_int64(s, 1, t->id);
	while ((src = sqlite3_step(s)) == SQLITE_ROW)
		if (ids_push(&t->children, &t->nchildren, &cap,
			sqlite3_column_int64(s, 0)) < 0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* t's dependencies (depends_on, blocked_by) and subtasks (children). */
static int
task_load_deps(hd_store *st, hd_task *t, hd_err *err)
{
	sqlite3_stmt *s;
	size_t capd = 0, capb = 0;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT d.depends_on, p.status FROM task_deps d"
		 " JOIN tasks p ON p.id = d.depends_on WHERE d.task_id = ?"
		 " ORDER BY d.depends_on",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, t->id);
	while ((src = sqlite3_step(s)) == SQLITE_ROW)
		if (task_add_dep(t, sqlite3_column_int64(s, 0),
			(const char *)sqlite3_column_text(s, 1), &capd,
			&capb) < 0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc < 0 ? rc : task_load_children(st, t, err);
}

static int
task_load_comments(hd_store *st, hd_task *t, hd_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, author, body, created_at FROM task_comments"
		 " WHERE task_id = ? ORDER BY id",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, t->id);
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		hd_task_comment *c;

		if (t->ncomments == cap) {
			cap = cap ? cap * 2 : 4;
			c = realloc(t->comments, cap * sizeof(*c));
			if (c == NULL) {
				rc = oom(err);
				break;
			}
			t->comments = c;
		}
		c = &t->comments[t->ncomments++];
		c->id = sqlite3_column_int64(s, 0);
		c->author = hd_store_col_dup(s, 1);
		c->body = hd_store_col_dup(s, 2);
		c->created_at = sqlite3_column_int64(s, 3);
		if (c->author == NULL || c->body == NULL) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	t->has_comments = rc == 0;
	return rc;
}

/* t->dependents: the tasks that depend on t (task_deps_rev), ascending;
 * loaded with the comments, for the one-task read. */
static int
task_load_dependents(hd_store *st, hd_task *t, hd_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT task_id FROM task_deps WHERE depends_on = ?"
		 " ORDER BY task_id",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, t->id);
	while ((src = sqlite3_step(s)) == SQLITE_ROW)
		if (ids_push(&t->dependents, &t->ndependents, &cap,
			sqlite3_column_int64(s, 0)) < 0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Step a statement returning TASK_COLS once: *out is the task, or NULL
 * when there was no row. The statement is reset either way. */
static int
task_step(hd_task **out, hd_store *st, sqlite3_stmt *s, hd_err *err)
{
	hd_task *t;
	int rc = 0, src;

	*out = NULL;
	src = sqlite3_step(s);
	if (src == SQLITE_ROW) {
		if ((t = calloc(1, sizeof(*t))) == NULL)
			rc = oom(err);
		else if (task_row(t, s) < 0) {
			hd_task_free(t);
			rc = oom(err);
		} else
			*out = t;
		/* finish an UPDATE ... RETURNING so the change is complete */
		if (rc == 0 && (src = sqlite3_step(s)) != SQLITE_DONE) {
			hd_task_free(*out);
			*out = NULL;
			rc = hd_store_sqlerr(st, src, err);
		}
	} else if (src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Load a task with its dependencies; *out NULL (0 returned) when absent. */
static int
task_load(
    hd_task **out, hd_store *st, int64_t id, int with_comments, hd_err *err)
{
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT " TASK_COLS " FROM tasks WHERE id = ?", err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = task_step(out, st, s, err)) < 0 || *out == NULL)
		return rc;
	if ((rc = task_load_deps(st, *out, err)) < 0 ||
	    (with_comments &&
		((rc = task_load_comments(st, *out, err)) < 0 ||
		    (rc = task_load_dependents(st, *out, err)) < 0))) {
		hd_task_free(*out);
		*out = NULL;
	}
	return rc;
}

/* The team of task id into *team (malloc'd), or `task 5 not found`. */
static int
task_team(char **team, hd_store *st, int64_t id, hd_err *err)
{
	sqlite3_stmt *s;
	int rc, src;

	*team = NULL;
	if ((rc = hd_store_prepare(
		 st, &s, "SELECT team_id FROM tasks WHERE id = ?", err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	src = sqlite3_step(s);
	if (src == SQLITE_ROW) {
		if ((*team = hd_store_col_dup(s, 0)) == NULL)
			rc = oom(err);
	} else if (src == SQLITE_DONE)
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", id);
	else
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Check that actor may act in team: "user", or a member. */
static int
actor_member(hd_store *st, const char *team, const char *actor, hd_err *err)
{
	return is_user(actor) ? 0 : hd_team_member_check(st, team, actor, err);
}

/* The leader of team (malloc'd) or NULL. */
static int
team_leader(char **out, hd_store *st, const char *team, hd_err *err)
{
	hd_team *t = NULL;
	int rc;

	*out = NULL;
	if ((rc = hd_team_get(&t, st, team, err)) < 0)
		return rc;
	if (t->leader_agent_id != NULL &&
	    (*out = strdup(t->leader_agent_id)) == NULL)
		rc = oom(err);
	hd_team_free(t);
	return rc;
}

/* ---- the write payload and its reflection -------------------------------- */

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
} board_txn;

/* Forget the tasks a completion made ready (also before a retry). */
static void
ready_dispose(board_txn *b)
{
	size_t i;

	free(b->ready);
	b->ready = NULL;
	b->nready = 0;
	for (i = 0; i < HD_BOARD__READY_NAMED; i++) {
		free(b->ready_subjects[i]);
		b->ready_subjects[i] = NULL;
	}
}

static void
board_txn_dispose(board_txn *b)
{
	hd_task_free(b->task);
	free(b->prev_owner);
	free(b->leader);
	free(b->dep_subject);
	hd_task_comment_free(b->comment);
	ready_dispose(b);
}

/* A board write and its reflection, one transaction. */
typedef struct board_job {
	hd_store_txn_fn fn;
	board_txn *b;
	hd_board__kind kind;
} board_job;

static int
board_job_txn(hd_store *st, void *payload, hd_err *err)
{
	board_job *j = payload;
	board_txn *b = j->b;
	hd_board__change c;
	int rc;

	if ((rc = j->fn(st, b, err)) < 0 || !b->changed)
		return rc;
	/* (5) */
	memset(&c, 0, sizeof(c));
	c.kind = j->kind;
	c.task = b->task;
	c.actor = is_user(b->actor) ? HD_BOARD_USER : b->actor;
	c.leader = b->leader;
	c.text = b->text;
	c.dep_id = b->dep;
	c.dep_subject = b->dep_subject;
	c.prev_owner = b->prev_owner;
	c.ready = b->task->unblocked;
	c.nready = b->task->nunblocked;
	c.ready_subjects = (const char *const *)b->ready_subjects;
	hd_board__reflect(st, &c);
	return 0;
}

/* Run fn as one write transaction that also reflects what it changed. */
static int
board_write(hd_store *st, hd_store_txn_fn fn, board_txn *b,
    hd_board__kind kind, hd_err *err)
{
	board_job j;

	j.fn = fn;
	j.b = b;
	j.kind = kind;
	return hd_store_write(st, board_job_txn, &j, err);
}

/* After a successful write: hand the task to the caller. */
static int
board_finish(hd_task **out, board_txn *b)
{
	if (out != NULL) {
		*out = b->task;
		b->task = NULL;
	}
	board_txn_dispose(b);
	return 0;
}

static const char *
event_agent(const char *actor)
{
	return is_user(actor) ? NULL : actor;
}

/* ---- create ----------------------------------------------------------------
 */

/* One integer from a statement with ?1 bound to a; the statement is
 * reset either way. */
static int
count_one(int64_t *out, hd_store *st, sqlite3_stmt *s, hd_err *err)
{
	int src, rc = 0;

	*out = 0;
	if ((src = sqlite3_step(s)) == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	else
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/*
 * The parent rules and caps of a subtask of spec->parent_id (7): a task
 * of the same team, not completed or cancelled, with fewer open or
 * failed children than max_children, and shallow enough that the new
 * task's depth stays within max_task_depth.
 */
static int
create_parent_check(
    hd_store *st, const hd_task_spec *spec, const hd_team *team, hd_err *err)
{
	hd_task *p = NULL;
	sqlite3_stmt *s;
	int64_t n, depth;
	int rc;

	if ((rc = task_load(&p, st, spec->parent_id, 0, err)) < 0)
		return rc;
	if (p == NULL || strcmp(p->team_id, spec->team) != 0) {
		rc = hd_err_set(err, HD_ENOTFOUND,
		    "unknown parent: task %" PRId64, spec->parent_id);
		goto done;
	}
	if (strcmp(p->status, "completed") == 0 ||
	    strcmp(p->status, "cancelled") == 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "cannot add a subtask to task %" PRId64 ": it is %s", p->id,
		    p->status);
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT COUNT(*) FROM tasks WHERE parent_id = ?1"
		 " AND status NOT IN ('completed', 'cancelled')",
		 err)) < 0)
		goto done;
	sqlite3_bind_int64(s, 1, p->id);
	if ((rc = count_one(&n, st, s, err)) < 0)
		goto done;
	if (n >= team->max_children) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " already has %" PRId64 " subtask%s (the "
		    "team's max_children); finish or cancel some, or raise it "
		    "with huddle team update %s --max-children N",
		    p->id, n, n == 1 ? "" : "s", team->id);
		goto done;
	}
	/* the parent's depth: how many ancestors it has */
	if ((rc = hd_store_prepare(st, &s,
		 "WITH RECURSIVE up(id, d) AS (SELECT parent_id, 1 FROM tasks"
		 "   WHERE id = ?1 AND parent_id IS NOT NULL"
		 " UNION ALL SELECT t.parent_id, up.d + 1 FROM tasks t"
		 "   JOIN up ON t.id = up.id WHERE t.parent_id IS NOT NULL"
		 "   AND up.d <= 100)"
		 " SELECT COALESCE(MAX(d), 0) FROM up",
		 err)) < 0)
		goto done;
	sqlite3_bind_int64(s, 1, p->id);
	if ((rc = count_one(&depth, st, s, err)) < 0)
		goto done;
	if (depth + 1 > team->max_task_depth)
		rc = hd_err_set(err, HD_EREFUSED,
		    "a subtask of task %" PRId64 " would be at depth %" PRId64
		    ", deeper than the team's max_task_depth %d (a root task "
		    "is at depth 0); add it under a shallower task, or raise "
		    "it with huddle team update %s --max-task-depth N",
		    p->id, depth + 1, team->max_task_depth, team->id);
done:
	hd_task_free(p);
	return rc;
}

/* The cap on root tasks an agent creates per window (7); a user is not
 * capped. */
static int
create_roots_check(
    hd_store *st, const hd_task_spec *spec, const hd_team *team, hd_err *err)
{
	sqlite3_stmt *s;
	int64_t n;
	int rc;

	if (spec->parent_id > 0 || is_user(spec->created_by))
		return 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT COUNT(*) FROM tasks WHERE team_id = ?1"
		 " AND created_by = ?2 AND parent_id IS NULL"
		 " AND created_at > ?3",
		 err)) < 0)
		return rc;
	sqlite3_bind_text(s, 1, spec->team, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, spec->created_by, -1, SQLITE_STATIC);
	sqlite3_bind_int64(
	    s, 3, hd_now_ms() - (int64_t)team->new_roots_window_s * 1000);
	if ((rc = count_one(&n, st, s, err)) < 0)
		return rc;
	if (n >= team->max_new_roots)
		return hd_err_set(err, HD_EREFUSED,
		    "%s already created %" PRId64 " root task%s in the last %d "
		    "s (the team's max_new_roots); make this a subtask of one "
		    "of them, wait, or raise it with huddle team update %s "
		    "--max-new-roots N",
		    spec->created_by, n, n == 1 ? "" : "s",
		    team->new_roots_window_s, team->id);
	return 0;
}

static int
board_create_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	const hd_task_spec *spec = b->spec;
	sqlite3_stmt *s;
	hd_team *team = NULL;
	json_t *deps = NULL;
	char *meta = NULL, *dteam = NULL;
	int64_t id, now = hd_now_ms();
	size_t i;
	int rc, src;

	if ((rc = hd_team_get(&team, st, spec->team, err)) < 0 ||
	    (rc = actor_member(st, spec->team, spec->created_by, err)) < 0)
		goto done;
	for (i = 0; i < spec->ndepends_on; i++) {
		rc = task_team(&dteam, st, spec->depends_on[i], err);
		if (rc == HD_ENOTFOUND ||
		    (rc == 0 && strcmp(dteam, spec->team) != 0))
			rc = hd_err_set(err, HD_ENOTFOUND,
			    "unknown dependency: task %" PRId64,
			    spec->depends_on[i]);
		free(dteam);
		dteam = NULL;
		if (rc < 0)
			goto done;
	}
	if ((spec->parent_id > 0 &&
		(rc = create_parent_check(st, spec, team, err)) < 0) ||
	    (rc = create_roots_check(st, spec, team, err)) < 0)
		goto done;
	meta = spec->metadata != NULL ? json_dumps(spec->metadata,
					    JSON_COMPACT | JSON_PRESERVE_ORDER)
				      : strdup("{}");
	if (meta == NULL) {
		rc = oom(err);
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO tasks(team_id, subject, description, active_form,"
		 " priority, metadata, created_by, created_at, updated_at,"
		 " parent_id)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 err)) < 0)
		goto done;
	sqlite3_bind_text(s, 1, spec->team, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, spec->subject, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, spec->description ? spec->description : "", -1,
	    SQLITE_STATIC);
	hd_store_bind_text(s, 4, spec->active_form);
	sqlite3_bind_int64(s, 5, spec->priority);
	sqlite3_bind_text(s, 6, meta, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 7,
	    is_user(spec->created_by) ? HD_BOARD_USER : spec->created_by, -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, now);
	sqlite3_bind_int64(s, 9, now);
	if (spec->parent_id > 0)
		sqlite3_bind_int64(s, 10, spec->parent_id);
	else
		sqlite3_bind_null(s, 10);
	src = sqlite3_step(s);
	hd_store_reset(s);
	if (src != SQLITE_DONE) {
		rc = hd_store_sqlerr(st, src, err);
		goto done;
	}
	id = sqlite3_last_insert_rowid(hd_store_db(st));
	deps = json_array();
	for (i = 0; i < spec->ndepends_on; i++) {
		if ((rc = hd_store_prepare(st, &s,
			 "INSERT OR IGNORE INTO task_deps(task_id, depends_on)"
			 " VALUES (?, ?)",
			 err)) < 0)
			goto done;
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, spec->depends_on[i]);
		src = sqlite3_step(s);
		hd_store_reset(s);
		if (src != SQLITE_DONE) {
			rc = hd_store_sqlerr(st, src, err);
			goto done;
		}
	}
	if ((rc = task_load(&b->task, st, id, 0, err)) < 0)
		goto done;
	for (i = 0; i < b->task->ndepends_on; i++)
		json_array_append_new(
		    deps, json_integer(b->task->depends_on[i]));
	hd_events_append(st, "task_created", spec->team, id,
	    event_agent(spec->created_by),
	    json_pack("{s:s, s:I, s:O, s:s, s:o}", "subject", spec->subject,
		"priority", (json_int_t)spec->priority, "depends_on", deps,
		"by",
		is_user(spec->created_by) ? HD_BOARD_USER : spec->created_by,
		"parent_id",
		spec->parent_id > 0 ? json_integer(spec->parent_id)
				    : json_null()));
	b->changed = 1;
done:
	json_decref(deps);
	free(meta);
	hd_team_free(team);
	return rc;
}

/* Everything about a new task that can be checked without the
 * database (5). */
static int
create_check(const hd_task_spec *spec, hd_err *err)
{
	char *meta;
	size_t i, metalen;
	int rc;

	if ((rc = hd_slug_check("team", spec->team, err)) < 0)
		return rc;
	if (spec->subject == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "task subject must not be empty");
	if ((rc = hd_text_check("task subject", spec->subject, 1,
		 HD_TASK_SUBJECT_MAX, err)) < 0)
		return rc;
	if (spec->description != NULL &&
	    (rc = hd_text_check("task description", spec->description, 0,
		 HD_TASK_DESCRIPTION_MAX, err)) < 0)
		return rc;
	if (spec->active_form != NULL &&
	    (rc = hd_text_check("task active form", spec->active_form, 0,
		 HD_TASK_ACTIVE_FORM_MAX, err)) < 0)
		return rc;
	if (spec->metadata != NULL) {
		if (!json_is_object(spec->metadata))
			return hd_err_set(err, HD_EINVAL,
			    "task metadata must be a JSON object");
		meta = json_dumps(spec->metadata, JSON_COMPACT);
		if (meta == NULL)
			return oom(err);
		metalen = strlen(meta);
		free(meta);
		if (metalen > HD_TASK_METADATA_MAX)
			return hd_err_set(err, HD_EINVAL,
			    "task metadata is %zu bytes; the limit is %d",
			    metalen, HD_TASK_METADATA_MAX);
	}
	if (spec->ndepends_on > HD_TASK_DEPS_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "a task may depend on at most %d tasks, not %zu",
		    HD_TASK_DEPS_MAX, spec->ndepends_on);
	for (i = 0; i < spec->ndepends_on; i++)
		if (spec->depends_on[i] <= 0)
			return hd_err_set(err, HD_ENOTFOUND,
			    "unknown dependency: task %" PRId64,
			    spec->depends_on[i]);
	if (spec->parent_id < 0)
		return hd_err_set(err, HD_ENOTFOUND,
		    "unknown parent: task %" PRId64, spec->parent_id);
	return actor_check(spec->created_by, err);
}

int
hd_board_create(
    hd_task **out, hd_store *st, const hd_task_spec *spec, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = create_check(spec, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.spec = spec;
	b.actor = spec->created_by;
	if ((rc = board_write(
		 st, board_create_txn, &b, HD_BOARD__CREATED, err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

/* ---- read ------------------------------------------------------------------
 */

static int
board_get_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	int rc;

	if ((rc = task_load(&b->task, st, b->id, 1, err)) < 0)
		return rc;
	if (b->task == NULL)
		return hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", b->id);
	return 0;
}

int
hd_board_get(hd_task **out, hd_store *st, int64_t id, hd_err *err)
{
	board_txn b;
	int rc;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	b.id = id;
	if ((rc = hd_store_read(st, board_get_txn, &b, err)) == 0) {
		*out = b.task;
		b.task = NULL;
	}
	board_txn_dispose(&b);
	return rc;
}

/* A parsed metadata filter. */
typedef struct meta_filter {
	char *key;
	const char *value;
} meta_filter;

/* Does metadata value v match the filter text? Strings compare equal;
 * numbers, booleans and null compare by their JSON text. */
static int
meta_value_matches(const json_t *v, const char *want)
{
	char *text;
	int match;

	if (v == NULL)
		return 0;
	if (json_is_string(v))
		return strcmp(json_string_value(v), want) == 0;
	if (json_is_object(v) || json_is_array(v))
		return 0;
	if ((text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return 0;
	match = strcmp(text, want) == 0;
	free(text);
	return match;
}

struct board_list {
	const char *team;
	const hd_task_filter *f;
	meta_filter *meta;
	size_t nmeta;
	hd_tasks out;
};

static int
task_matches_meta(const hd_task *t, const struct board_list *l)
{
	size_t i;

	for (i = 0; i < l->nmeta; i++)
		if (!meta_value_matches(
			json_object_get(t->metadata, l->meta[i].key),
			l->meta[i].value))
			return 0;
	return 1;
}

static int
task_cmp_desc(const void *a, const void *b)
{
	int64_t x = ((const hd_task *)a)->id, y = ((const hd_task *)b)->id;

	return x > y ? -1 : x < y;
}

/* Attach every dependency of the team's listed tasks in one query. */
static int
list_load_deps(hd_store *st, const char *team, hd_tasks *l, hd_err *err)
{
	sqlite3_stmt *s;
	size_t *capd = NULL, *capb = NULL;
	int rc, src;

	if (l->n == 0)
		return 0;
	if ((capd = calloc(l->n, sizeof(*capd))) == NULL ||
	    (capb = calloc(l->n, sizeof(*capb))) == NULL) {
		rc = oom(err);
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT d.task_id, d.depends_on, p.status FROM task_deps d"
		 " JOIN tasks t ON t.id = d.task_id"
		 " JOIN tasks p ON p.id = d.depends_on"
		 " WHERE t.team_id = ? ORDER BY d.task_id, d.depends_on",
		 err)) < 0)
		goto done;
	sqlite3_bind_text(s, 1, team, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		hd_task key, *t;

		key.id = sqlite3_column_int64(s, 0);
		t = bsearch(&key, l->items, l->n, sizeof(*t), task_cmp_desc);
		if (t == NULL)
			continue;
		if (task_add_dep(t, sqlite3_column_int64(s, 1),
			(const char *)sqlite3_column_text(s, 2),
			&capd[t - l->items], &capb[t - l->items]) < 0) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
done:
	free(capd);
	free(capb);
	return rc;
}

/* Attach every listed task's subtasks in one query. */
static int
list_load_children(hd_store *st, const char *team, hd_tasks *l, hd_err *err)
{
	sqlite3_stmt *s;
	size_t *cap = NULL;
	int rc, src;

	if (l->n == 0)
		return 0;
	if ((cap = calloc(l->n, sizeof(*cap))) == NULL)
		return oom(err);
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT parent_id, id FROM tasks WHERE team_id = ?"
		 " AND parent_id IS NOT NULL ORDER BY parent_id, id",
		 err)) < 0)
		goto done;
	sqlite3_bind_text(s, 1, team, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		hd_task key, *t;

		key.id = sqlite3_column_int64(s, 0);
		t = bsearch(&key, l->items, l->n, sizeof(*t), task_cmp_desc);
		if (t == NULL)
			continue;
		if (ids_push(&t->children, &t->nchildren, &cap[t - l->items],
			sqlite3_column_int64(s, 1)) < 0) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
done:
	free(cap);
	return rc;
}

static int
board_list_txn(hd_store *st, void *payload, hd_err *err)
{
	struct board_list *l = payload;
	const hd_task_filter *f = l->f;
	sqlite3_stmt *s;
	hd_team *team = NULL;
	size_t cap = 0;
	int rc, src, limit;

	if ((rc = hd_team_get(&team, st, l->team, err)) < 0)
		return rc;
	hd_team_free(team);
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT " TASK_COLS " FROM tasks t WHERE t.team_id = ?1"
		 " AND (?2 IS NULL OR t.status = ?2)"
		 " AND (?3 IS NULL OR t.owner = ?3)"
		 " AND (?4 = 0 OR (t.status = 'pending' AND t.owner IS NULL"
		 "   AND NOT " UNFINISHED_DEP(
		     "t") "))"
			  " AND (?5 = 0 OR " UNFINISHED_DEP(
			      "t") ")"
				   " ORDER BY t.id DESC LIMIT ?6",
		 err)) < 0)
		return rc;
	limit = f != NULL && f->limit > 0 ? f->limit : -1;
	sqlite3_bind_text(s, 1, l->team, -1, SQLITE_STATIC);
	hd_store_bind_text(s, 2, f ? f->status : NULL);
	hd_store_bind_text(s, 3, f ? f->owner : NULL);
	sqlite3_bind_int(s, 4, f ? f->ready != 0 : 0);
	sqlite3_bind_int(s, 5, f ? f->blocked != 0 : 0);
	/* metadata filters run in C, so the limit is applied there too */
	sqlite3_bind_int(s, 6, l->nmeta > 0 ? -1 : limit);
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		hd_task *t;

		if (limit > 0 && l->out.n == (size_t)limit)
			break;
		if (l->out.n == cap) {
			cap = cap ? cap * 2 : 16;
			t = realloc(l->out.items, cap * sizeof(*t));
			if (t == NULL) {
				rc = oom(err);
				break;
			}
			l->out.items = t;
		}
		t = &l->out.items[l->out.n];
		if (task_row(t, s) < 0) {
			task_dispose(t);
			rc = oom(err);
			break;
		}
		if (!task_matches_meta(t, l)) {
			task_dispose(t);
			continue;
		}
		l->out.n++;
	}
	if (rc == 0 && src != SQLITE_DONE && src != SQLITE_ROW)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	if (rc == 0)
		rc = list_load_deps(st, l->team, &l->out, err);
	if (rc == 0)
		rc = list_load_children(st, l->team, &l->out, err);
	if (rc < 0)
		hd_tasks_dispose(&l->out);
	return rc;
}

int
hd_board_list(hd_tasks *out, hd_store *st, const char *team,
    const hd_task_filter *f, hd_err *err)
{
	struct board_list l;
	const char *eq;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&l, 0, sizeof(l));
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (f != NULL && f->status != NULL && !hd_task_status_ok(f->status))
		return hd_err_set(err, HD_EINVAL,
		    "unknown task status \"%.64s\": use pending, claimed, "
		    "in_progress, completed, failed or cancelled",
		    f->status);
	if (f != NULL && f->limit < 0)
		return hd_err_set(err, HD_EINVAL, "limit must not be negative");
	l.team = team;
	l.f = f;
	if (f != NULL && f->nmeta > 0) {
		if ((l.meta = calloc(f->nmeta, sizeof(*l.meta))) == NULL)
			return oom(err);
		for (i = 0; i < f->nmeta; i++) {
			const char *k = f->meta[i];

			/* SPEC 4 spells it metadata.KEY=VALUE; KEY=VALUE too */
			if (strncmp(k, "metadata.", 9) == 0)
				k += 9;
			eq = strchr(k, '=');
			if (eq == NULL || eq == k) {
				rc = hd_err_set(err, HD_EINVAL,
				    "metadata filter must be KEY=VALUE, not "
				    "\"%.64s\"",
				    f->meta[i]);
				goto done;
			}
			l.meta[i].key = strndup(k, (size_t)(eq - k));
			l.meta[i].value = eq + 1;
			l.nmeta++;
			if (l.meta[i].key == NULL) {
				rc = oom(err);
				goto done;
			}
		}
	}
	if ((rc = hd_store_read(st, board_list_txn, &l, err)) == 0) {
		*out = l.out;
		memset(&l.out, 0, sizeof(l.out));
	}
done:
	hd_tasks_dispose(&l.out);
	for (i = 0; i < l.nmeta; i++)
		free(l.meta[i].key);
	free(l.meta);
	return rc;
}

/* ---- claim ------------------------------------------------------------------
 */

/* Why task id could not be claimed: called only for a loser, inside the
 * same transaction, so what it reads is what the UPDATE saw. */
static int
claim_refusal(hd_store *st, int64_t id, hd_err *err)
{
	hd_task *t = NULL;
	hd_buf ids = HD_BUF_INIT(0);
	size_t i;
	int rc;

	if ((rc = task_load(&t, st, id, 0, err)) < 0)
		return rc;
	if (t == NULL)
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", id);
	else if (t->owner != NULL &&
		 (strcmp(t->status, "claimed") == 0 ||
		     strcmp(t->status, "in_progress") == 0 ||
		     strcmp(t->status, "pending") == 0))
		rc = hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 " is already claimed by %s", id, t->owner);
	else if (strcmp(t->status, "pending") == 0 && t->nblocked_by > 0) {
		for (i = 0; i < t->nblocked_by; i++)
			hd_buf_printf(&ids, "%s%" PRId64, i ? ", " : "",
			    t->blocked_by[i]);
		if (hd_buf_failed(&ids))
			rc = oom(err);
		else
			rc = hd_err_set(err, HD_EREFUSED,
			    "task %" PRId64 " is blocked by %s", id,
			    hd_buf_cstr(&ids));
	} else
		rc = hd_err_set(
		    err, HD_EREFUSED, "task %" PRId64 " is %s", id, t->status);
	hd_buf_dispose(&ids);
	hd_task_free(t);
	return rc;
}

/* The one conditional UPDATE that decides a claim. */
static int
claim_update(
    hd_task **out, hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE tasks SET status = 'claimed', owner = ?2,"
		 " claimed_at = ?3, updated_at = ?3"
		 " WHERE id = ?1 AND status = 'pending' AND owner IS NULL"
		 " AND NOT " UNFINISHED_DEP("tasks") " RETURNING " TASK_COLS,
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, hd_now_ms());
	return task_step(out, st, s, err);
}

/* task_claimed {owner, by, auto}: auto is true when the board chose,
 * the task (auto-claim) or the member (auto-assign); a delegation adds
 * "delegated": true. */
static void
claim_event(hd_store *st, const hd_task *t, const char *by, int automatic,
    int delegated)
{
	char data[224];

	/* owner and by passed the slug rule (or are "user"): printed
	 * directly, without a json_t to build and dump on the claim path */
	snprintf(data, sizeof(data),
	    "{\"owner\":\"%s\",\"by\":\"%s\",\"auto\":%s%s}", t->owner,
	    is_user(by) ? HD_BOARD_USER : by, automatic ? "true" : "false",
	    delegated ? ",\"delegated\":true" : "");
	hd_events_append_raw(
	    st, "task_claimed", t->team_id, t->id, event_agent(by), data);
}

/* Refuse unless b->actor may assign in team: the leader or a user. */
static int
assign_allowed(hd_store *st, board_txn *b, const char *team, hd_err *err)
{
	int rc;

	free(b->leader);
	if ((rc = actor_member(st, team, b->actor, err)) < 0 ||
	    (rc = team_leader(&b->leader, st, team, err)) < 0)
		return rc;
	if (!is_user(b->actor) &&
	    (b->leader == NULL || strcmp(b->leader, b->actor) != 0))
		return hd_err_set(err, HD_EREFUSED,
		    "only the team leader or a user may assign task %" PRId64
		    ", not %s",
		    b->id, b->actor);
	return 0;
}

/* Refuse, as a lost claim is told, unless task id is ready: auto-assign
 * names no member for a task nobody could claim. */
static int
claim_ready(hd_store *st, int64_t id, hd_err *err)
{
	hd_task *t = NULL;
	int rc, ready;

	if ((rc = task_load(&t, st, id, 0, err)) < 0)
		return rc;
	ready = t != NULL && strcmp(t->status, "pending") == 0 &&
		t->owner == NULL && t->nblocked_by == 0;
	hd_task_free(t);
	return ready ? 0 : claim_refusal(st, id, err);
}

/* open[i]: the claimed and in_progress tasks of team owned by m's item i,
 * from one GROUP BY. */
static int
open_counts(int64_t *open, const hd_agents *m, hd_store *st,
    const char *team, hd_err *err)
{
	sqlite3_stmt *s;
	const char *owner;
	size_t i;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT owner, COUNT(*) FROM tasks WHERE team_id = ?"
		 " AND status IN ('claimed', 'in_progress') GROUP BY owner",
		 err)) < 0)
		return rc;
	sqlite3_bind_text(s, 1, team, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		owner = (const char *)sqlite3_column_text(s, 0);
		for (i = 0; owner != NULL && i < m->n; i++)
			if (strcmp(m->items[i].id, owner) == 0)
				open[i] = sqlite3_column_int64(s, 1);
	}
	if (src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* How many members a refused auto-assign names with their status. */
#define PICK_LISTED 5

/*
 * Pick the member task b->id goes to (hd_board_assign_auto) into *b->pick
 * and point b->agent at it. The candidates are the members other than
 * the leader, or the leader when it is the only member; of the idle ones
 * the one with the fewest open tasks wins, then the lowest id.
 */
static int
pick_member(hd_store *st, board_txn *b, const char *team, hd_err *err)
{
	hd_board_pick *p = b->pick;
	hd_agents m;
	hd_buf busy = HD_BUF_INIT(0);
	const hd_agent *a;
	int64_t *open = NULL;
	size_t i, best = SIZE_MAX, ntied = 0, ncand = 0, nbusy = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = hd_agent_list(&m, st, team, err)) < 0)
		return rc;
	if (m.n > 0 && (open = calloc(m.n, sizeof(*open))) == NULL) {
		rc = oom(err);
		goto done;
	}
	if ((rc = open_counts(open, &m, st, team, err)) < 0)
		goto done;
	for (i = 0; i < m.n; i++) {
		a = &m.items[i];
		if (a->is_leader && m.n > 1)
			continue;
		ncand++;
		if (strcmp(a->status, "idle") != 0) {
			if (nbusy++ < PICK_LISTED)
				hd_buf_printf(&busy, "%s%s: %s",
				    nbusy > 1 ? ", " : "", a->id, a->status);
		} else if (best == SIZE_MAX || open[i] < open[best]) {
			best = i;
			ntied = 1;
		} else if (open[i] == open[best]) {
			ntied++;
			if (strcmp(a->id, m.items[best].id) < 0)
				best = i;
		}
	}
	if (nbusy > PICK_LISTED)
		hd_buf_printf(&busy, " and %zu more", nbusy - PICK_LISTED);
	if (ncand == 0)
		rc = hd_err_set(err, HD_EREFUSED,
		    "no member in team %s to assign task %" PRId64 " to", team,
		    b->id);
	else if (hd_buf_failed(&busy))
		rc = oom(err);
	else if (best == SIZE_MAX)
		rc = hd_err_set(err, HD_EREFUSED,
		    "no idle member in team %s to assign task %" PRId64
		    " to (%s)",
		    team, b->id, hd_buf_cstr(&busy));
	if (rc < 0)
		goto done;
	a = &m.items[best];
	snprintf(p->agent, sizeof(p->agent), "%s", a->id);
	p->open_tasks = open[best];
	snprintf(p->reason, sizeof(p->reason), "idle, %" PRId64 " open task%s",
	    open[best], open[best] == 1 ? "" : "s");
	if (ntied > 1)
		snprintf(p->reason + strlen(p->reason),
		    sizeof(p->reason) - strlen(p->reason),
		    ", lowest id of %zu tied", ntied);
	else if (a->is_leader)
		snprintf(p->reason + strlen(p->reason),
		    sizeof(p->reason) - strlen(p->reason),
		    ", the team's only member");
	b->agent = p->agent;
done:
	free(open);
	hd_buf_dispose(&busy);
	hd_agents_dispose(&m);
	return rc;
}

static int
board_claim_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	char *team = NULL;
	int rc;

	if ((rc = task_team(&team, st, b->id, err)) < 0)
		goto done;
	/* the leader or a user, for someone else */
	if (b->assign && (rc = assign_allowed(st, b, team, err)) < 0)
		goto done;
	if (b->pick != NULL) {
		if ((rc = claim_ready(st, b->id, err)) < 0 ||
		    (rc = pick_member(st, b, team, err)) < 0)
			goto done;
	} else if ((rc = hd_team_member_check(st, team, b->agent, err)) < 0)
		goto done;
	if ((rc = claim_update(&b->task, st, b->id, b->agent, err)) < 0)
		goto done;
	if (b->task == NULL) {
		rc = claim_refusal(st, b->id, err);
		goto done;
	}
	if ((rc = task_load_deps(st, b->task, err)) < 0)
		goto done;
	claim_event(st, b->task, b->actor, b->pick != NULL, 0);
	b->changed = 1;
done:
	free(team);
	return rc;
}

int
hd_board_claim(
    hd_task **out, hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.agent = agent;
	b.actor = agent;
	if ((rc = board_write(
		 st, board_claim_txn, &b, HD_BOARD__CLAIMED, err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

int
hd_board_assign(hd_task **out, hd_store *st, int64_t id, const char *agent,
    const char *actor, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.agent = agent;
	b.actor = is_user(actor) ? HD_BOARD_USER : actor;
	b.assign = 1;
	if ((rc = board_write(
		 st, board_claim_txn, &b, HD_BOARD__ASSIGNED, err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

int
hd_board_assign_auto(hd_task **out, hd_board_pick *pick, hd_store *st,
    int64_t id, const char *actor, hd_err *err)
{
	hd_board_pick mine;
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (pick == NULL)
		pick = &mine;
	memset(pick, 0, sizeof(*pick));
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.actor = is_user(actor) ? HD_BOARD_USER : actor;
	b.assign = 1;
	b.pick = pick;
	if ((rc = board_write(
		 st, board_claim_txn, &b, HD_BOARD__ASSIGNED, err)) < 0) {
		board_txn_dispose(&b);
		memset(pick, 0, sizeof(*pick)); /* nobody was picked */
		return rc;
	}
	return board_finish(out, &b);
}

/* Refuse a delegation to an agent that cannot take work: in error,
 * asked to shut down or shut down, with why when it is known. */
static int
delegate_assignee(hd_store *st, const char *team, const char *agent,
    hd_err *err)
{
	hd_agent *a = NULL;
	int rc;

	if ((rc = hd_team_member_check(st, team, agent, err)) < 0 ||
	    (rc = hd_agent_get(&a, st, agent, err)) < 0)
		return rc;
	if (strcmp(a->status, "error") == 0 ||
	    strcmp(a->status, "shutdown_requested") == 0 ||
	    strcmp(a->status, "shutdown") == 0) {
		if (a->status_reason != NULL && a->status_reason[0] != '\0')
			rc = hd_err_set(err, HD_EREFUSED,
			    "cannot delegate to %s: it is in %s (%.256s)", agent,
			    a->status, a->status_reason);
		else
			rc = hd_err_set(err, HD_EREFUSED,
			    "cannot delegate to %s: it is in %s", agent,
			    a->status);
	}
	hd_agent_free(a);
	return rc;
}

/* Create, claim for b->agent and tell it, in one transaction (8). */
static int
board_delegate_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	const char *team = b->spec->team;
	hd_task *t = NULL;
	int rc;

	hd_task_free(b->task); /* a retried transaction starts over */
	b->task = NULL;
	free(b->leader);
	b->leader = NULL;
	if ((rc = hd_team_exists(st, team, err)) < 0 ||
	    (rc = actor_member(st, team, b->actor, err)) < 0 ||
	    (rc = team_leader(&b->leader, st, team, err)) < 0)
		return rc;
	if (!is_user(b->actor) &&
	    (b->leader == NULL || strcmp(b->leader, b->actor) != 0))
		return hd_err_set(err, HD_EREFUSED,
		    "only the team leader or a user may delegate, not %s",
		    b->actor);
	if ((rc = delegate_assignee(st, team, b->agent, err)) < 0 ||
	    (rc = board_create_txn(st, b, err)) < 0)
		return rc;
	b->id = b->task->id;
	if ((rc = claim_update(&t, st, b->id, b->agent, err)) < 0)
		return rc;
	if (t == NULL) /* a dependency not completed yet */
		return claim_refusal(st, b->id, err);
	hd_task_free(b->task);
	b->task = t;
	if ((rc = task_load_deps(st, b->task, err)) < 0)
		return rc;
	claim_event(st, b->task, b->actor, 0, 1);
	return hd_board__delegate_note(st, b->task, b->actor, err);
}

int
hd_board_delegate(hd_task **out, hd_store *st, const hd_task_spec *spec,
    const char *assignee, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = create_check(spec, err)) < 0 ||
	    (rc = hd_slug_check("agent", assignee, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.spec = spec;
	b.agent = assignee;
	b.actor = is_user(spec->created_by) ? HD_BOARD_USER : spec->created_by;
	if ((rc = board_write(st, board_delegate_txn, &b, HD_BOARD__DELEGATED,
		 err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

static int
board_auto_claim_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	sqlite3_stmt *s;
	int rc;

	if ((rc = hd_team_member_check(st, b->team, b->agent, err)) < 0)
		return rc;
	/*
	 * Pick and claim in one statement. It runs inside BEGIN IMMEDIATE,
	 * so no other writer can take the chosen row between the subselect
	 * and the update: no row means no ready task, and nothing is retried.
	 * The outer WHERE restates readiness anyway, so the statement is
	 * correct on its own.
	 */
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE tasks SET status = 'claimed', owner = ?2,"
		 " claimed_at = ?3, updated_at = ?3"
		 " WHERE id = (SELECT t.id FROM tasks t WHERE t.team_id = ?1"
		 "   AND t.status = 'pending' AND t.owner IS NULL"
		 "   AND NOT " UNFINISHED_DEP(
		     "t") "   ORDER BY t.priority DESC, t.id LIMIT 1)"
			  " AND status = 'pending' AND owner IS NULL"
			  " AND NOT " UNFINISHED_DEP(
			      "tasks") " RETURNING " TASK_COLS,
		 err)) < 0)
		return rc;
	sqlite3_bind_text(s, 1, b->team, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, b->agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, hd_now_ms());
	if ((rc = task_step(&b->task, st, s, err)) < 0)
		return rc;
	if (b->task == NULL)
		return hd_err_set(
		    err, HD_ENOTFOUND, "no ready task in team %s", b->team);
	if ((rc = task_load_deps(st, b->task, err)) < 0)
		return rc;
	claim_event(st, b->task, b->agent, 1, 0);
	b->changed = 1;
	return 0;
}

int
hd_board_auto_claim(hd_task **out, hd_store *st, const char *team,
    const char *agent, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.team = team;
	b.agent = agent;
	b.actor = agent;
	if ((rc = board_write(st, board_auto_claim_txn, &b,
		 HD_BOARD__CLAIMED, err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

/* ---- the owner-checked transitions ------------------------------------------
 */

/*
 * The tasks completing task b->id made ready, into b->ready (ids
 * ascending) and b->ready_subjects (the first HD_BOARD__READY_NAMED):
 * its dependents that are pending, unowned and no longer blocked. Each
 * was blocked by b->id until now, so each became ready with this write.
 * Runs after the completing UPDATE, in its transaction (6).
 */
static int
board_unblocked(hd_store *st, board_txn *b, hd_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc, src;

	ready_dispose(b);
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT t.id, t.subject FROM task_deps d"
		 " JOIN tasks t ON t.id = d.task_id"
		 " WHERE d.depends_on = ?1 AND t.status = 'pending'"
		 " AND t.owner IS NULL AND NOT " UNFINISHED_DEP("t")
		 " ORDER BY t.id",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, b->id);
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		if (ids_push(&b->ready, &b->nready, &cap,
			sqlite3_column_int64(s, 0)) < 0 ||
		    (b->nready <= HD_BOARD__READY_NAMED &&
			(b->ready_subjects[b->nready - 1] =
			     hd_store_col_dup(s, 1)) == NULL)) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Refuse to complete task id while a subtask is pending, claimed or in
 * progress, naming them (7). */
static int
open_children(hd_store *st, int64_t id, hd_err *err)
{
	hd_buf ids = HD_BUF_INIT(0);
	sqlite3_stmt *s;
	size_t n = 0;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id FROM tasks WHERE parent_id = ?1"
		 " AND status IN ('pending', 'claimed', 'in_progress')"
		 " ORDER BY id",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	while ((src = sqlite3_step(s)) == SQLITE_ROW)
		hd_buf_printf(&ids, "%s#%" PRId64, n++ ? ", " : "",
		    (int64_t)sqlite3_column_int64(s, 0));
	if (src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	if (rc == 0 && hd_buf_failed(&ids))
		rc = oom(err);
	else if (rc == 0 && n > 0)
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " cannot complete: its subtask%s %s %s "
		    "still open",
		    id, n > 1 ? "s" : "", hd_buf_cstr(&ids),
		    n > 1 ? "are" : "is");
	hd_buf_dispose(&ids);
	return rc;
}

static int
board_move_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	hd_task *t = NULL;
	sqlite3_stmt *s;
	json_t *data;
	int from, to = board_ops[b->op].to, rc, src;

	if ((rc = task_load(&t, st, b->id, 0, err)) < 0)
		goto done;
	if (t == NULL) {
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", b->id);
		goto done;
	}
	if ((rc = actor_member(st, t->team_id, b->actor, err)) < 0)
		goto done;
	from = status_index(t->status);
	assert(from >= 0);
	/* the operation's own row, and the diagram's table as a backstop */
	if (from < 0 || !(board_ops[b->op].from & (1u << from)) ||
	    !board_transitions[from][to]) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " cannot go from %s to %s", b->id,
		    t->status, status_names[to]);
		goto done;
	}
	if ((rc = team_leader(&b->leader, st, t->team_id, err)) < 0)
		goto done;
	/* owner, leader or user; an unowned task: any member (cancel) */
	if (!is_user(b->actor) && t->owner != NULL &&
	    strcmp(t->owner, b->actor) != 0 &&
	    (b->leader == NULL || strcmp(b->leader, b->actor) != 0)) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " is owned by %s, not %s", b->id, t->owner,
		    b->actor);
		goto done;
	}
	if (b->op == OP_COMPLETE && (rc = open_children(st, b->id, err)) < 0)
		goto done;
	free(b->prev_owner); /* a retried transaction starts over */
	b->prev_owner = NULL;
	if (t->owner != NULL && (b->prev_owner = strdup(t->owner)) == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s, board_ops[b->op].sql, err)) < 0)
		goto done;
	sqlite3_bind_int64(s, 1, b->id);
	sqlite3_bind_text(s, 2, t->status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, hd_now_ms());
	hd_store_bind_text(s, 4, b->text);
	src = sqlite3_step(s);
	hd_store_reset(s);
	if (src != SQLITE_DONE) {
		rc = hd_store_sqlerr(st, src, err);
		goto done;
	}
	/* BEGIN IMMEDIATE held since the read: the row cannot have moved */
	assert(sqlite3_changes(hd_store_db(st)) == 1);
	if (b->op == OP_COMPLETE && (rc = board_unblocked(st, b, err)) < 0)
		goto done;
	data = json_pack("{s:s, s:s, s:s}", "from", t->status, "to",
	    status_names[to], "by",
	    is_user(b->actor) ? HD_BOARD_USER : b->actor);
	if (data != NULL && b->op == OP_COMPLETE)
		json_object_set_new(
		    data, "unblocked", json_ids(b->ready, b->nready));
	hd_events_append(st, "status_changed", t->team_id, b->id,
	    event_agent(b->actor), data);
	hd_task_free(b->task);
	if ((rc = task_load(&b->task, st, b->id, 0, err)) < 0)
		goto done;
	if (b->op == OP_COMPLETE) { /* the answer says what became ready */
		b->task->unblocked = b->ready;
		b->task->nunblocked = b->nready;
		b->task->has_unblocked = 1;
		b->ready = NULL;
		b->nready = 0;
	}
	b->changed = 1;
done:
	hd_task_free(t);
	return rc;
}

static int
board_move(hd_task **out, hd_store *st, int64_t id, const char *actor,
    board_op op, const char *text, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	if (text != NULL && op == OP_COMPLETE &&
	    (rc = hd_text_check(
		 "task result", text, 0, HD_TASK_RESULT_MAX, err)) < 0)
		return rc;
	if (text != NULL && op == OP_FAIL &&
	    (rc = hd_text_check(
		 "failure reason", text, 0, HD_TASK_REASON_MAX, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.actor = actor;
	b.op = op;
	b.text = text != NULL && text[0] != '\0' ? text : NULL;
	if ((rc = board_write(
		 st, board_move_txn, &b, board_ops[op].kind, err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

int
hd_board_start(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err)
{
	return board_move(out, st, id, actor, OP_START, NULL, err);
}

int
hd_board_complete(hd_task **out, hd_store *st, int64_t id, const char *actor,
    const char *result, hd_err *err)
{
	return board_move(out, st, id, actor, OP_COMPLETE, result, err);
}

int
hd_board_fail(hd_task **out, hd_store *st, int64_t id, const char *actor,
    const char *reason, hd_err *err)
{
	return board_move(out, st, id, actor, OP_FAIL, reason, err);
}

int
hd_board_release(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err)
{
	return board_move(out, st, id, actor, OP_RELEASE, NULL, err);
}

int
hd_board_cancel(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err)
{
	return board_move(out, st, id, actor, OP_CANCEL, NULL, err);
}

int
hd_board_retry(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err)
{
	return board_move(out, st, id, actor, OP_RETRY, NULL, err);
}

/* ---- moving a member's open tasks ------------------------------------------
 */

/* Insert a comment on task id (inside the caller's transaction); *out
 * (when non-NULL) gets it. author is an agent id or "user". */
static int
comment_insert(hd_task_comment **out, hd_store *st, int64_t id,
    const char *author, const char *body, hd_err *err)
{
	hd_task_comment *c = NULL;
	sqlite3_stmt *s;
	int64_t now = hd_now_ms();
	int rc, src;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO task_comments(task_id, author, body, created_at)"
		 " VALUES (?, ?, ?, ?)",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, author, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, body, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, now);
	src = sqlite3_step(s);
	hd_store_reset(s);
	if (src != SQLITE_DONE)
		return hd_store_sqlerr(st, src, err);
	if (out == NULL)
		return 0;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->author = strdup(author)) == NULL ||
	    (c->body = strdup(body)) == NULL) {
		hd_task_comment_free(c);
		return oom(err);
	}
	c->id = sqlite3_last_insert_rowid(hd_store_db(st));
	c->created_at = now;
	*out = c;
	return 0;
}

struct board_reassign {
	const char *team;
	const char *from;
	const char *to;
	const char *actor; /* an agent id or "user" */
	const char *comment;
	hd_tasks moved; /* filled inside the transaction */
};

/* The ids of from's open tasks in team, ascending. */
static int
open_ids(int64_t **ids, size_t *n, hd_store *st, const char *team,
    const char *owner, hd_err *err)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc, src;

	*ids = NULL;
	*n = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id FROM tasks WHERE owner = ?1"
		 " AND status IN ('claimed', 'in_progress') AND team_id = ?2"
		 " ORDER BY id",
		 err)) < 0)
		return rc;
	sqlite3_bind_text(s, 1, owner, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, team, -1, SQLITE_STATIC);
	while ((src = sqlite3_step(s)) == SQLITE_ROW)
		if (ids_push(ids, n, &cap, sqlite3_column_int64(s, 0)) < 0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Move one task (open, owned by r->from: read in this transaction) to
 * r->to, comment, record and reflect it. The task goes into r->moved. */
static int
reassign_one(struct board_reassign *r, hd_store *st, int64_t id,
    const char *leader, hd_err *err)
{
	hd_board__change c;
	sqlite3_stmt *s;
	hd_task *t = NULL;
	json_t *data;
	int rc;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE tasks SET owner = ?2, updated_at = ?3"
		 " WHERE id = ?1 AND owner = ?4"
		 " AND status IN ('claimed', 'in_progress')"
		 " RETURNING " TASK_COLS,
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, r->to, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, hd_now_ms());
	sqlite3_bind_text(s, 4, r->from, -1, SQLITE_STATIC);
	if ((rc = task_step(&t, st, s, err)) < 0)
		return rc;
	/* BEGIN IMMEDIATE held since open_ids read it: it cannot have moved */
	assert(t != NULL);
	if (t == NULL)
		return hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 " changed while it was moved", id);
	if ((rc = task_load_deps(st, t, err)) < 0 ||
	    (rc = comment_insert(NULL, st, id, r->actor, r->comment, err)) < 0)
		goto done;
	data = json_pack("{s:s, s:s, s:s, s:s}", "from", r->from, "to", r->to,
	    "by", r->actor, "status", t->status);
	hd_events_append(st, "task_reassigned", t->team_id, t->id,
	    event_agent(r->actor), data);
	memset(&c, 0, sizeof(c)); /* (5) */
	c.kind = HD_BOARD__REASSIGNED;
	c.task = t;
	c.actor = r->actor;
	c.leader = leader;
	c.prev_owner = r->from;
	hd_board__reflect(st, &c);
	r->moved.items[r->moved.n++] = *t; /* the row moves; its shell goes */
	free(t);
	t = NULL;
done:
	hd_task_free(t);
	return rc;
}

static int
board_reassign_txn(hd_store *st, void *payload, hd_err *err)
{
	struct board_reassign *r = payload;
	int64_t *ids = NULL;
	char *leader = NULL;
	size_t n = 0, i;
	int rc;

	hd_tasks_dispose(&r->moved); /* a retried transaction starts over */
	if ((rc = hd_team_member_check(st, r->team, r->from, err)) < 0 ||
	    (rc = hd_team_member_check(st, r->team, r->to, err)) < 0 ||
	    (rc = actor_member(st, r->team, r->actor, err)) < 0 ||
	    (rc = team_leader(&leader, st, r->team, err)) < 0 ||
	    (rc = open_ids(&ids, &n, st, r->team, r->from, err)) < 0)
		goto done;
	if (n > 0 &&
	    (r->moved.items = calloc(n, sizeof(*r->moved.items))) == NULL) {
		rc = oom(err);
		goto done;
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = reassign_one(r, st, ids[i], leader, err);
done:
	free(ids);
	free(leader);
	return rc;
}

int
hd_board_reassign_open(hd_tasks *moved, hd_store *st, const char *team,
    const char *from, const char *to, const char *actor, const char *note,
    hd_err *err)
{
	struct board_reassign r;
	hd_buf comment = HD_BUF_INIT(0);
	int rc;

	if (moved != NULL)
		memset(moved, 0, sizeof(*moved));
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", from, err)) < 0 ||
	    (rc = hd_slug_check("agent", to, err)) < 0 ||
	    (rc = actor_check(actor, err)) < 0)
		return rc;
	if (strcmp(from, to) == 0)
		return hd_err_set(err, HD_EINVAL,
		    "cannot move tasks from %s to itself", from);
	hd_buf_printf(&comment, "moved from %s to %s", from, to);
	if (note != NULL && note[0] != '\0')
		hd_buf_printf(&comment, ": %s", note);
	if (hd_buf_failed(&comment))
		return hd_buf_error(&comment, "task comment", err);
	if ((rc = hd_text_check("task comment", hd_buf_cstr(&comment), 1,
		 HD_TASK_COMMENT_MAX, err)) < 0)
		goto done;
	memset(&r, 0, sizeof(r));
	r.team = team;
	r.from = from;
	r.to = to;
	r.actor = is_user(actor) ? HD_BOARD_USER : actor;
	r.comment = hd_buf_cstr(&comment);
	if ((rc = hd_store_write(st, board_reassign_txn, &r, err)) < 0) {
		hd_tasks_dispose(&r.moved);
		goto done;
	}
	if (moved != NULL)
		*moved = r.moved;
	else
		hd_tasks_dispose(&r.moved);
done:
	hd_buf_dispose(&comment);
	return rc;
}

/* ---- dependencies and comments ----------------------------------------------
 */

static int
board_link_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	hd_task *dep = NULL;
	sqlite3_stmt *s;
	char *team = NULL;
	int rc, src, cycle = 0;

	if ((rc = task_team(&team, st, b->id, err)) < 0)
		goto done;
	if ((rc = task_load(&dep, st, b->dep, 0, err)) < 0)
		goto done;
	if (dep == NULL || strcmp(dep->team_id, team) != 0) {
		rc = hd_err_set(err, HD_ENOTFOUND,
		    "unknown dependency: task %" PRId64, b->dep);
		goto done;
	}
	if ((rc = actor_member(st, team, b->actor, err)) < 0)
		goto done;
	/* Does dep already (transitively) depend on id? dep == id counts. */
	if ((rc = hd_store_prepare(st, &s,
		 "WITH RECURSIVE up(id) AS (SELECT ?1"
		 " UNION SELECT d.depends_on FROM task_deps d"
		 "   JOIN up ON d.task_id = up.id)"
		 " SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2)",
		 err)) < 0)
		goto done;
	sqlite3_bind_int64(s, 1, b->dep);
	sqlite3_bind_int64(s, 2, b->id);
	if ((src = sqlite3_step(s)) == SQLITE_ROW)
		cycle = sqlite3_column_int(s, 0);
	else
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	if (rc < 0)
		goto done;
	if (cycle) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "linking task %" PRId64 " to task %" PRId64
		    " would create a circular dependency",
		    b->id, b->dep);
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT OR IGNORE INTO task_deps(task_id, depends_on)"
		 " VALUES (?, ?)",
		 err)) < 0)
		goto done;
	sqlite3_bind_int64(s, 1, b->id);
	sqlite3_bind_int64(s, 2, b->dep);
	src = sqlite3_step(s);
	hd_store_reset(s);
	if (src != SQLITE_DONE) {
		rc = hd_store_sqlerr(st, src, err);
		goto done;
	}
	b->changed = sqlite3_changes(hd_store_db(st)) > 0;
	if (b->changed) {
		if ((rc = hd_store_prepare(st, &s,
			 "UPDATE tasks SET updated_at = ? WHERE id = ?", err)) <
		    0)
			goto done;
		sqlite3_bind_int64(s, 1, hd_now_ms());
		sqlite3_bind_int64(s, 2, b->id);
		src = sqlite3_step(s);
		hd_store_reset(s);
		if (src != SQLITE_DONE) {
			rc = hd_store_sqlerr(st, src, err);
			goto done;
		}
		hd_events_append(st, "dep_linked", team, b->id,
		    event_agent(b->actor),
		    json_pack("{s:I, s:s}", "depends_on", (json_int_t)b->dep,
			"by", is_user(b->actor) ? HD_BOARD_USER : b->actor));
	}
	if ((b->dep_subject = strdup(dep->subject)) == NULL) {
		rc = oom(err);
		goto done;
	}
	rc = task_load(&b->task, st, b->id, 0, err);
done:
	free(team);
	hd_task_free(dep);
	return rc;
}

int
hd_board_link(hd_task **out, hd_store *st, int64_t id, int64_t dep,
    const char *actor, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.dep = dep;
	b.actor = actor;
	if ((rc = board_write(
		 st, board_link_txn, &b, HD_BOARD__LINKED, err)) < 0) {
		board_txn_dispose(&b);
		return rc;
	}
	return board_finish(out, &b);
}

static int
board_comment_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	char *team = NULL;
	int rc;

	hd_task_comment_free(b->comment); /* a retried transaction */
	b->comment = NULL;
	if ((rc = task_team(&team, st, b->id, err)) == 0 &&
	    (rc = actor_member(st, team, b->actor, err)) == 0 &&
	    (rc = comment_insert(&b->comment, st, b->id,
		 is_user(b->actor) ? HD_BOARD_USER : b->actor, b->text,
		 err)) == 0) {
		hd_task_free(b->task);
		if ((rc = task_load(&b->task, st, b->id, 0, err)) == 0)
			b->changed = 1; /* reflected: `Comment on task #5 ...` */
		/* the task's history names it (the dashboard's drawer) */
		if (rc == 0)
			hd_events_append(st, "task_comment", team, b->id,
			    event_agent(b->actor),
			    json_pack("{s:I, s:s}", "comment_id",
				(json_int_t)b->comment->id, "by",
				b->comment->author));
	}
	free(team);
	return rc;
}

int
hd_board_comment(hd_task_comment **out, hd_store *st, int64_t id,
    const char *author, const char *body, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = actor_check(author, err)) < 0)
		return rc;
	if (body == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "task comment must not be empty");
	if ((rc = hd_text_check(
		 "task comment", body, 1, HD_TASK_COMMENT_MAX, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.actor = author;
	b.text = body;
	if ((rc = board_write(st, board_comment_txn, &b, HD_BOARD__COMMENTED,
		 err)) == 0 &&
	    out != NULL) {
		*out = b.comment;
		b.comment = NULL;
	}
	board_txn_dispose(&b);
	return rc;
}

/* ---- JSON ------------------------------------------------------------------
 */

static json_t *
json_ms(int64_t ms)
{
	return ms > 0 ? json_integer(ms) : json_null();
}

static json_t *
json_str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

json_t *
hd_task_comment_to_json(const hd_task_comment *c)
{
	return json_pack("{s:I, s:s, s:s, s:I}", "id", (json_int_t)c->id,
	    "author", c->author, "body", c->body, "created_at",
	    (json_int_t)c->created_at);
}

json_t *
hd_task_to_json(const hd_task *t)
{
	json_t *o = json_object(), *cs;
	int failed = strcmp(t->status, "failed") == 0;
	size_t i;

	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "team_id", json_string(t->team_id));
	json_object_set_new(o, "subject", json_string(t->subject));
	json_object_set_new(o, "description", json_string(t->description));
	json_object_set_new(o, "active_form", json_str_or_null(t->active_form));
	json_object_set_new(o, "status", json_string(t->status));
	json_object_set_new(o, "owner", json_str_or_null(t->owner));
	json_object_set_new(o, "priority", json_integer(t->priority));
	json_object_set(o, "metadata", t->metadata);
	json_object_set_new(
	    o, "result", json_str_or_null(failed ? NULL : t->result));
	json_object_set_new(
	    o, "reason", json_str_or_null(failed ? t->result : NULL));
	json_object_set_new(o, "created_by", json_str_or_null(t->created_by));
	json_object_set_new(o, "created_at", json_integer(t->created_at));
	json_object_set_new(o, "claimed_at", json_ms(t->claimed_at));
	json_object_set_new(o, "started_at", json_ms(t->started_at));
	json_object_set_new(o, "completed_at", json_ms(t->completed_at));
	json_object_set_new(o, "updated_at", json_integer(t->updated_at));
	json_object_set_new(
	    o, "depends_on", json_ids(t->depends_on, t->ndepends_on));
	json_object_set_new(
	    o, "blocked_by", json_ids(t->blocked_by, t->nblocked_by));
	json_object_set_new(o, "ready",
	    json_boolean(strcmp(t->status, "pending") == 0 &&
			 t->owner == NULL && t->nblocked_by == 0));
	json_object_set_new(o, "parent_id",
	    t->parent_id > 0 ? json_integer(t->parent_id) : json_null());
	json_object_set_new(
	    o, "children", json_ids(t->children, t->nchildren));
	if (t->has_unblocked)
		json_object_set_new(
		    o, "unblocked", json_ids(t->unblocked, t->nunblocked));
	if (t->has_comments) {
		cs = json_array();
		for (i = 0; i < t->ncomments; i++)
			json_array_append_new(
			    cs, hd_task_comment_to_json(&t->comments[i]));
		json_object_set_new(o, "comments", cs);
		json_object_set_new(o, "dependents",
		    json_ids(t->dependents, t->ndependents));
	}
	return o;
}
