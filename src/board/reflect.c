/*
 * reflect.c -- after a board write commits, tell the team (SPEC 4): a
 * system line in the room and, for a member's completion or failure, a
 * task_update message to the leader. The only file of the board that
 * calls the room and mailbox modules.
 *  (1) Runs after the board transaction committed, never inside it: the
 *      board is canonical, the room is narration.
 *  (2) Never fails the write it reflects: a failed post or message is
 *      logged (hd_log_warn) and dropped.
 */
#include <huddle/mailbox.h>
#include <huddle/room.h>

#include "board_int.h"

#define HD_LOG_COMPONENT "board"
#include <huddle/log.h>

void
hd_board__reflect(hd_store *st, const hd_board__change *c)
{
	hd_buf line = HD_BUF_INIT(HD_ROOM_BODY_MAX);
	hd_buf note = HD_BUF_INIT(HD_MESSAGE_MAX);
	hd_message_spec m = {0};
	hd_err err = HD_ERR_INIT;
	int rc;

	hd_board__room_line(&line, c);
	rc = hd_buf_failed(&line)
		 ? hd_buf_error(&line, "room line", &err)
		 : hd_room_post(NULL, st, c->task->team_id, "system", NULL,
		       hd_buf_cstr(&line), &err);
	if (rc < 0)
		hd_log_warn("task %lld: room line not posted: %s",
		    (long long)c->task->id, err.msg);
	if (hd_board__announce(&note, c)) {
		m.team = c->task->team_id;
		m.from = c->actor;
		m.to = c->leader;
		m.type = "task_update";
		m.content = hd_buf_cstr(&note);
		m.approve = -1;
		hd_err_clear(&err);
		rc = hd_buf_failed(&note)
			 ? hd_buf_error(&note, "task update", &err)
			 : hd_mailbox_send(NULL, st, &m, &err);
		if (rc < 0)
			hd_log_warn("task %lld: leader %s not told: %s",
			    (long long)c->task->id, c->leader, err.msg);
	}
	hd_buf_dispose(&line);
	hd_buf_dispose(&note);
}
