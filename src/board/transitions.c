/*
 * transitions.c -- the board's state tables (board.c's diagram) and the
 * owner-checked moves: start, complete, fail, release, cancel, retry (a
 * complete of a task with a gate or critic goes to verifying: verify.c).
 *  (1) Each move is one conditional UPDATE whose WHERE names the status
 *      it leaves (board_ops), allowed only when both the operation's
 *      from-set and board_transitions allow the arrow; it runs inside the
 *      write's BEGIN IMMEDIATE transaction with its event and reflection
 *      (board.c (5)).
 *  (2) The owner, the team's leader or a user moves a task (any member
 *      an unowned one); a refusal names why (`task 5 is owned by coder,
 *      not tester`, `task 5 cannot go from completed to in_progress`).
 *  (3) A completion finds what it made ready in its own transaction,
 *      right after its UPDATE (board.c (6)), and a task with an open
 *      subtask cannot complete (board.c (7)).
 * Callers: hd_board_start .. hd_board_retry from the CLI, MCP, HTTP and
 * the engines; hd_task_status_ok from the surfaces' filters.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>

#include "tasks_int.h"

enum {
	ST_PENDING,
	ST_CLAIMED,
	ST_IN_PROGRESS,
	ST_COMPLETED,
	ST_FAILED,
	ST_CANCELLED,
	ST_VERIFYING,
	NSTATUS
};

static const char *const status_names[NSTATUS] = {
    "pending", "claimed", "in_progress", "completed", "failed", "cancelled",
    "verifying"};

/*
 * The transition table: board_transitions[from][to] is 1 exactly for the
 * arrows of the diagram above. An operation must pass both its own
 * from-set (board_ops: release and retry both reach pending, from
 * different states) and this table, so neither can drift into allowing
 * an arrow the diagram lacks.
 */
static const unsigned char board_transitions[NSTATUS][NSTATUS] = {
    /* to:      pend clm  inpr comp fail canc vrfy */
    [ST_PENDING] = {0, 1, 0, 0, 0, 1, 0},
    [ST_CLAIMED] = {1, 0, 1, 1, 1, 1, 1},
    [ST_IN_PROGRESS] = {1, 0, 0, 1, 1, 1, 1},
    [ST_COMPLETED] = {0, 0, 0, 0, 0, 0, 0},
    [ST_FAILED] = {1, 0, 0, 0, 0, 0, 0},
    [ST_CANCELLED] = {0, 0, 0, 0, 0, 0, 0},
    [ST_VERIFYING] = {0, 0, 1, 1, 0, 1, 0},
};

/* The owner-checked operations: their target and the states they leave. */
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
	1u << ST_PENDING | 1u << ST_CLAIMED | 1u << ST_IN_PROGRESS |
	    1u << ST_VERIFYING,
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

/* ---- the owner-checked transitions ------------------------------------------
 */

/*
 * The tasks completing task b->id made ready, into b->ready (ids
 * ascending) and b->ready_subjects (the first HD_BOARD__READY_NAMED):
 * its dependents that are pending, unowned and no longer blocked. Each
 * was blocked by b->id until now, so each became ready with this write.
 * Runs after the completing UPDATE, in its transaction (6); also after
 * an approving verdict (verify.c).
 */
int
hd_board__unblocked(hd_store *st, board_txn *b, hd_err *err)
{
	hd_stmt *s;
	size_t cap = 0;
	int rc, src;

	hd_board__ready_dispose(b);
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT t.id, t.subject FROM task_deps d"
		 " JOIN tasks t ON t.id = d.task_id"
		 " WHERE d.depends_on = ?1 AND t.status = 'pending'"
		 " AND t.owner IS NULL AND NOT " UNFINISHED_DEP("t")
		 " ORDER BY t.id",
		 HD_INT(b->id))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if (hd_board__ids_push(&b->ready, &b->nready, &cap,
			hd_stmt_int(s, 0)) < 0 ||
		    (b->nready <= HD_BOARD__READY_NAMED &&
			(b->ready_subjects[b->nready - 1] =
			     hd_store_col_dup(s, 1)) == NULL)) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
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
	hd_stmt *s;
	size_t n = 0;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id FROM tasks WHERE parent_id = ?1"
		 " AND status IN ('pending', 'claimed', 'in_progress',"
		 " 'verifying') ORDER BY id",
		 HD_INT(id))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW)
		hd_buf_printf(&ids, "%s#%" PRId64, n++ ? ", " : "",
		    (int64_t)hd_stmt_int(s, 0));
	if (src != HD_DONE)
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
	json_t *data;
	int from, to = board_ops[b->op].to, rc;

	if ((rc = hd_board__task_load(&t, st, b->id, 0, err)) < 0)
		goto done;
	if (t == NULL) {
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", b->id);
		goto done;
	}
	if ((rc = hd_board__actor_member(st, t->team_id, b->actor, err)) < 0)
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
	if ((rc = hd_board__team_leader(&b->leader, st, t->team_id, err)) < 0)
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
	if (b->op == OP_COMPLETE) {
		/* a task with a gate or critic goes to verifying (verify.c) */
		if ((rc = hd_board__verify_submit(st, b, t, err)) < 0)
			goto done;
		if (b->verifying)
			goto done;
	}
	free(b->prev_owner); /* a retried transaction starts over */
	b->prev_owner = NULL;
	if (t->owner != NULL && (b->prev_owner = strdup(t->owner)) == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = hd_store_run(st, err, board_ops[b->op].sql, HD_INT(b->id),
		 HD_TEXT(t->status), HD_INT(hd_now_ms()), HD_TEXT(b->text))) < 0)
		goto done;
	/* BEGIN IMMEDIATE held since the read: the row cannot have moved */
	assert(hd_store_changes(st) == 1);
	if (b->op == OP_COMPLETE && (rc = hd_board__unblocked(st, b, err)) < 0)
		goto done;
	data = json_pack("{s:s, s:s, s:s}", "from", t->status, "to",
	    status_names[to], "by",
	    is_user(b->actor) ? HD_BOARD_USER : b->actor);
	if (data != NULL && b->op == OP_COMPLETE)
		json_object_set_new(
		    data, "unblocked", hd_board__json_ids(b->ready, b->nready));
	hd_events_append(st, "status_changed", t->team_id, b->id,
	    event_agent(b->actor), data);
	hd_task_free(b->task);
	if ((rc = hd_board__task_load(&b->task, st, b->id, 0, err)) < 0)
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
	return hd_board__write_task(
	    out, st, board_move_txn, &b, board_ops[op].kind, err);
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
