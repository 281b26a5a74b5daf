/*
 * reflect.c -- tell the team what a board write did (SPEC 4): a system line
 * in the room and, for a member's completion or failure, a task_update
 * message to the leader. The only file of the board that calls the room
 * and mailbox modules: it also sends a delegated task's message to its
 * assignee (hd_board__delegate_note), which is part of the delegation's
 * write rather than a reflection of it, so (2) does not apply to it.
 *  (1) Runs inside the board write's transaction, after the change itself
 *      (board.c (5)): the line commits exactly when the change does, and
 *      never for a change that was refused or rolled back. SPEC 4 says
 *      "after the canonical write commits"; what it guards (no narration
 *      of what did not happen, a failed reflection never fails the write)
 *      holds, and the window in which a crash kept the change but lost its
 *      line is gone.
 *  (2) Never fails the write it reflects: each piece runs in its own
 *      savepoint; a piece that fails is rolled back alone, logged
 *      (hd_log_warn) and dropped.
 *  (3) The last piece settles the status of the task's owner (and of its
 *      owner before, when it moved): the status rule of src/presence/,
 *      below the board, handed the board's own reader of a member's work
 *      (hd_board_work, defined here). The rule calls nothing of the
 *      board's by name, so the domain stays a tree (docs/layers.md); its
 *      idle notice, and the shutdown it may approve, commit with the
 *      write.
 * Callers: the board's writes (board.c (5)); hd_board_work is also
 * handed to src/presence/ by the public functions bound in
 * src/lifecycle/presence.c and src/lifecycle/send.c.
 */
#include <string.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/mailbox.h>
#include <huddle/room.h>

#include <mailbox/mailbox_int.h>
#include <presence/presence_int.h>

#include "board_int.h"

#define HD_LOG_COMPONENT "board"
#include <huddle/log.h>

const hd_work hd_board_work = {hd_board_has_started, hd_board_last_finished};

/* Open a savepoint for one piece; 0 or an error code. */
static int
reflect_begin(hd_store *st, hd_err *err)
{
	return hd_store_savepoint(st, err);
}

/* Close the piece's savepoint: kept when rc >= 0, rolled back otherwise. */
static void
reflect_end(hd_store *st, int rc)
{
	/* a piece whose own event failed is refused with it (events.c (1)),
	 * even if the call that wrote it did not say so */
	if (rc >= 0 && hd_store_txn_failure(st, NULL) != 0)
		rc = -1;
	hd_store_savepoint_end(st, rc >= 0, NULL);
}

static int
reflect_line(hd_store *st, const hd_board__change *c, hd_err *err)
{
	hd_buf line = HD_BUF_INIT(HD_ROOM_BODY_MAX);
	int rc;

	hd_board__room_line(&line, c);
	if (hd_buf_failed(&line))
		rc = hd_buf_error(&line, "room line", err);
	else if ((rc = reflect_begin(st, err)) == 0) {
		rc = hd_room_post(NULL, st, c->task->team_id, "system", NULL,
		    hd_buf_cstr(&line), err);
		reflect_end(st, rc);
	}
	hd_buf_dispose(&line);
	return rc;
}

static int
reflect_note(hd_store *st, const hd_board__change *c, hd_err *err)
{
	hd_buf note = HD_BUF_INIT(HD_MESSAGE_MAX);
	hd_message_spec m = {0};
	int rc = 0;

	if (!hd_board__announce(&note, c))
		goto done;
	m.team = c->task->team_id;
	/* an approval is the owner's completion, told as from the owner */
	m.from = c->kind == HD_BOARD__APPROVED ? c->task->owner : c->actor;
	m.to = c->leader;
	m.type = "task_update";
	m.content = hd_buf_cstr(&note);
	m.approve = -1;
	if (hd_buf_failed(&note))
		rc = hd_buf_error(&note, "task update", err);
	else if ((rc = reflect_begin(st, err)) == 0) {
		rc = hd_mailbox__send(NULL, st, &m, 0, err);
		reflect_end(st, rc);
	}
done:
	hd_buf_dispose(&note);
	return rc;
}

static int
reflect_activity(hd_store *st, const hd_board__change *c, hd_err *err)
{
	const char *team = c->task->team_id, *owner = c->task->owner;
	int rc = 0;

	/* one statement: it changes its row or nothing, so it needs no
	 * savepoint of its own (a claim pays for no more than this) */
	if (c->actor != NULL && strcmp(c->actor, HD_BOARD_USER) != 0 &&
	    (rc = hd_agent_touch(st, team, c->actor, err)) < 0)
		return rc;
	/* only a task that leaves or enters in_progress, or changes hands,
	 * can change what its owner is doing: a claim, an assignment, a
	 * delegation, a new task, a link, a retry or a comment cannot */
	if (c->kind == HD_BOARD__CREATED || c->kind == HD_BOARD__CLAIMED ||
	    c->kind == HD_BOARD__ASSIGNED || c->kind == HD_BOARD__DELEGATED ||
	    c->kind == HD_BOARD__LINKED || c->kind == HD_BOARD__RETRIED ||
	    c->kind == HD_BOARD__COMMENTED ||
	    c->kind == HD_BOARD__VERIFY_NOTE)
		return 0;
	if ((rc = reflect_begin(st, err)) < 0)
		return rc;
	/* (3) */
	if (c->prev_owner != NULL)
		rc = hd_activity__settle(
		    st, &hd_board_work, team, c->prev_owner, err);
	if (rc == 0 && owner != NULL &&
	    (c->prev_owner == NULL || strcmp(owner, c->prev_owner) != 0))
		rc = hd_activity__settle(st, &hd_board_work, team, owner, err);
	reflect_end(st, rc);
	return rc;
}

/* A task_update message to t's owner from actor ("huddle" for a user or
 * the gate), the text in note: part of the caller's write. */
static int
owner_note(hd_store *st, const hd_task *t, const char *actor, hd_buf *note,
    const char *what, hd_err *err)
{
	hd_message_spec m = {0};

	if (hd_buf_failed(note))
		return hd_buf_error(note, what, err);
	m.team = t->team_id;
	m.from = actor;
	m.to = t->owner;
	m.type = "task_update";
	m.content = hd_buf_cstr(note);
	m.approve = -1;
	return strcmp(actor, HD_BOARD_USER) == 0 || strcmp(actor, "huddle") == 0
		   ? hd_mailbox_send_system(NULL, st, &m, err)
		   : hd_mailbox__send(NULL, st, &m, 0, err);
}

int
hd_board__delegate_note(
    hd_store *st, const hd_task *t, const char *actor, hd_err *err)
{
	hd_buf note = HD_BUF_INIT(HD_MESSAGE_MAX);
	int rc;

	hd_board__delegate_text(&note, t, actor);
	rc = owner_note(st, t, actor, &note, "delegation message", err);
	hd_buf_dispose(&note);
	return rc;
}

int
hd_board__reject_note(hd_store *st, const hd_task *t, const char *actor,
    const char *reasons, hd_err *err)
{
	hd_buf note = HD_BUF_INIT(HD_MESSAGE_MAX);
	int rc;

	hd_buf_printf(&note, "Task #%lld \"%s\" was rejected by %s: %s",
	    (long long)t->id, t->subject, actor, reasons);
	rc = owner_note(st, t, actor, &note, "rejection message", err);
	hd_buf_dispose(&note);
	return rc;
}

void
hd_board__reflect(hd_store *st, const hd_board__change *c)
{
	hd_err err = HD_ERR_INIT;

	if (reflect_line(st, c, &err) < 0)
		hd_log_warn("task %lld: room line not posted: %s",
		    (long long)c->task->id, err.msg);
	hd_err_clear(&err);
	if (reflect_note(st, c, &err) < 0)
		hd_log_warn("task %lld: leader %s not told: %s",
		    (long long)c->task->id, c->leader, err.msg);
	hd_err_clear(&err);
	if (reflect_activity(st, c, &err) < 0)
		hd_log_warn("task %lld: statuses not settled: %s",
		    (long long)c->task->id, err.msg);
}
