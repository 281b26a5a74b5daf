/*
 * board.c -- the task board (SPEC 4). Owns tables tasks, task_deps and
 * task_comments; nothing else writes them. This file holds the write
 * payload every board write runs through and its reflection (5), the
 * moving of a member's open tasks, and comments. The board's other files,
 * each with its own header (the numbers below are this header's
 * invariants, which they cite):
 *   rows.c         loading tasks (with dependencies, subtasks, comments)
 *                  and their JSON
 *   create.c       create: validation, the subtask caps (7), dependencies
 *                  at birth (3)
 *   read.c         get and list, with filters (2)
 *   claim.c        claim, assign, auto-assign, delegate, auto-claim (4),
 *                  (8)
 *   transitions.c  the state tables below and the owner-checked moves (6)
 *   deps.c         a dependency added later (3)
 *   verify.c       verification: gate and critic, the verifying state,
 *   verify_run.c   and its runs
 *                  (verify.h; owns task_verify)
 *   counts.c       the read-only counts the team's state and activity use
 *   lines.c, reflect.c  the reflection's texts and its posting (5)
 *   tasks_int.h    what they share (board_txn, the row loaders)
 *
 * Task states. Each transition is one conditional UPDATE (its WHERE names
 * the status it leaves) in the function on the right, run inside
 * BEGIN IMMEDIATE; nothing else writes tasks.status.
 *   pending -> claimed                        board_claim_txn (claim, assign,
 *                                             assign_auto), auto_claim
 *                                             (claim.c)
 *   claimed -> in_progress                    board_move_txn (start)
 *   claimed|in_progress -> completed|failed   board_move_txn (complete, fail)
 *   claimed|in_progress -> verifying          board_move_txn (complete of a
 *                                             task with a gate or critic:
 *                                             hd_board__verify_submit)
 *   verifying -> completed|in_progress        verdict_txn_fn (verify.c:
 *                                             approve, reject)
 *   claimed|in_progress -> pending            board_move_txn (release:
 *                                             owner cleared)
 *   pending|claimed|in_progress|verifying -> cancelled
 *                                             board_move_txn (cancel)
 *   failed -> pending                         board_move_txn (retry: owner
 *                                             and result cleared)
 *                                             (board_move_txn: transitions.c)
 * One write changes an owner without a transition: reassign_one (here)
 * moves a claimed or in_progress task to another owner, status kept
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
 * Callers: the operation table's board entries (src/ops/ops-board.c: MCP,
 * REST and the CLI), cmd-task.c, cmd-demo.c, the engines' reads;
 * hd_team_replace (src/lifecycle/spawn.c) for hd_board_reassign_open; the
 * board's other files
 * (tasks_int.h) for the write payload.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "tasks_int.h"
/* ---- the write payload and its reflection -------------------------------- */


/* Forget the tasks a completion made ready (also before a retry). */
void
hd_board__ready_dispose(board_txn *b)
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

void
hd_board__txn_dispose(board_txn *b)
{
	hd_task_free(b->task);
	free(b->prev_owner);
	free(b->leader);
	free(b->dep_subject);
	free(b->critic);
	free(b->gate);
	hd_task_comment_free(b->comment);
	hd_board__ready_dispose(b);
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
	c.kind = b->kind_set ? b->kind : j->kind;
	c.task = b->task;
	c.actor = is_user(b->actor) ? HD_BOARD_USER : b->actor;
	c.leader = b->leader;
	c.text = c.kind == HD_BOARD__VERIFY_NOTE ? b->note : b->text;
	c.critic = b->critic;
	c.gate = b->gate;
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
int
hd_board__write(hd_store *st, hd_store_txn_fn fn, board_txn *b,
    hd_board__kind kind, hd_err *err)
{
	board_job j;

	j.fn = fn;
	j.b = b;
	j.kind = kind;
	return hd_store_write(st, board_job_txn, &j, err);
}

/* A write whose answer is the task: run it (hd_board__write), hand
 * b->task to *out (when out is not NULL) and dispose of b either way. */
int
hd_board__write_task(hd_task **out, hd_store *st, hd_store_txn_fn fn,
    board_txn *b, hd_board__kind kind, hd_err *err)
{
	int rc = hd_board__write(st, fn, b, kind, err);

	if (rc >= 0 && out != NULL) {
		*out = b->task;
		b->task = NULL;
	}
	hd_board__txn_dispose(b);
	return rc < 0 ? rc : 0;
}

/* ---- moving a member's open tasks ------------------------------------------
 */

/* Insert a comment on task id (inside the caller's transaction); *out
 * (when non-NULL) gets it. author is an agent id or "user". */
int
hd_board__comment_insert(hd_task_comment **out, hd_store *st, int64_t id,
    const char *author, const char *body, hd_err *err)
{
	hd_task_comment *c = NULL;
	int64_t now = hd_now_ms();
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO task_comments(task_id, author, body, created_at)"
		 " VALUES (?, ?, ?, ?)",
		 HD_INT(id), HD_TEXT(author), HD_TEXT(body), HD_INT(now))) < 0)
		return rc;
	if (out == NULL)
		return 0;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->author = strdup(author)) == NULL ||
	    (c->body = strdup(body)) == NULL) {
		hd_task_comment_free(c);
		return oom(err);
	}
	c->id = hd_store_last_id(st);
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
	return hd_board__ids_query(ids, n, st, err,
	    "SELECT id FROM tasks WHERE owner = ?1"
	    " AND status IN ('claimed', 'in_progress') AND team_id = ?2"
	    " ORDER BY id",
	    HD_TEXT(owner), HD_TEXT(team));
}

/* Move one task (open, owned by r->from: read in this transaction) to
 * r->to, comment, record and reflect it. The task goes into r->moved. */
static int
reassign_one(struct board_reassign *r, hd_store *st, int64_t id,
    const char *leader, hd_err *err)
{
	hd_board__change c;
	hd_stmt *s;
	hd_task *t = NULL;
	json_t *data;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "UPDATE tasks SET owner = ?2, updated_at = ?3"
		 " WHERE id = ?1 AND owner = ?4"
		 " AND status IN ('claimed', 'in_progress')"
		 " RETURNING " TASK_COLS,
		 HD_INT(id), HD_TEXT(r->to), HD_INT(hd_now_ms()),
		 HD_TEXT(r->from))) < 0)
		return rc;
	if ((rc = hd_board__task_step(&t, st, s, err)) < 0)
		return rc;
	/* BEGIN IMMEDIATE held since open_ids read it: it cannot have moved */
	assert(t != NULL);
	if (t == NULL)
		return hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 " changed while it was moved", id);
	if ((rc = hd_board__task_load_deps(st, t, err)) < 0 ||
	    (rc = hd_board__comment_insert(NULL, st, id, r->actor, r->comment, err)) < 0)
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
	    (rc = hd_board__actor_member(st, r->team, r->actor, err)) < 0 ||
	    (rc = hd_board__team_leader(&leader, st, r->team, err)) < 0 ||
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


/* ---- comments --------------------------------------------------------------
 */

static int
board_comment_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	char *team = NULL;
	int rc;

	hd_task_comment_free(b->comment); /* a retried transaction */
	b->comment = NULL;
	if ((rc = hd_board__task_team(&team, st, b->id, err)) == 0 &&
	    (rc = hd_board__actor_member(st, team, b->actor, err)) == 0 &&
	    (rc = hd_board__comment_insert(&b->comment, st, b->id,
		 is_user(b->actor) ? HD_BOARD_USER : b->actor, b->text,
		 err)) == 0) {
		hd_task_free(b->task);
		if ((rc = hd_board__task_load(&b->task, st, b->id, 0, err)) == 0)
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
	if ((rc = hd_board__write(st, board_comment_txn, &b, HD_BOARD__COMMENTED,
		 err)) == 0 &&
	    out != NULL) {
		*out = b.comment;
		b.comment = NULL;
	}
	hd_board__txn_dispose(&b);
	return rc;
}

int
hd_board_team_count(int64_t *n, hd_store *st, const char *team, hd_err *err)
{
	int rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM tasks WHERE team_id = ?1", HD_TEXT(team));

	return rc < 0 ? rc : 0;
}

int
hd_board_team_purge(hd_store *st, const char *team, hd_err *err)
{
	int rc;

	if ((rc = hd_store_run(st, err,
		 "DELETE FROM task_comments WHERE task_id IN"
		 " (SELECT id FROM tasks WHERE team_id = ?1)",
		 HD_TEXT(team))) < 0 ||
	    (rc = hd_store_run(st, err,
		 "DELETE FROM task_deps WHERE task_id IN"
		 " (SELECT id FROM tasks WHERE team_id = ?1) OR depends_on IN"
		 " (SELECT id FROM tasks WHERE team_id = ?1)",
		 HD_TEXT(team))) < 0)
		return rc;
	return hd_store_run(
	    st, err, "DELETE FROM tasks WHERE team_id = ?1", HD_TEXT(team));
}
