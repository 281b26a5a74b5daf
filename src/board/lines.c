/*
 * lines.c -- the texts a board change is reflected as (SPEC 4): the room's
 * system line and the leader's task_update message. Pure: no database.
 *  (1) Room lines, one per committed change:
 *        created    Task #5 "Write docs" created.
 *        claimed    Task #5 "Write docs" claimed by coder.
 *        assigned   Task #5 "Write docs" assigned to coder by manager.
 *        started    Task #5 "Write docs" → in_progress.
 *        completed  Task #5 "Write docs" completed by coder.
 *                   (with tasks it made ready: Task #5 "Write docs"
 *                   completed by coder; now ready: #7 "Deploy", #9 "Docs".)
 *        failed     Task #5 "Write docs" failed: <reason>.
 *                   (Task #5 "Write docs" failed. without a reason)
 *        released   Task #5 "Write docs" released by coder.
 *        cancelled  Task #5 "Write docs" cancelled by manager.
 *        retried    Task #5 "Write docs" reopened by manager.
 *        linked     Task #6 "Ship" now depends on #5 "Write docs".
 *        reassigned Task #5 "Write docs" moved from coder to coder-2 by
 *                   manager.
 *        delegated  Task #5 "Write docs" delegated to coder by manager.
 *        commented  Comment on task #5 "Write docs" by coder: <the comment,
 *                   first 200 characters>
 *        verifying  Task #5 "Write docs" completed by coder; verifying:
 *                   gate `make test`, critic reviewer.  (either part
 *                   alone when there is one; the gate's first 80
 *                   characters)
 *        approved   Task #5 "Write docs" approved by reviewer: completed
 *                   (with tasks it made ready: `...: completed; now
 *                   ready: #7 "Deploy".`)
 *        rejected   Task #5 "Write docs" rejected by reviewer: <the
 *                   reasons, first 200 characters>; back to coder.
 *        a step     Task #5 "Write docs": <what happened> (verify.c says:
 *                   `gate passed (exit 0).`, `verification failed: ...`)
 *      "by" names the actor: an agent id, or "user".
 *  (2) The leader hears of a completion or failure by a member (not the
 *      leader, not a user), an approved task as its owner's completion
 *      (`Task #5 "W" completed by coder (approved by reviewer): <result>`):
 *      `Task #5 "W" completed by coder: <result>` or
 *      `Task #5 "W" failed by coder: <reason>`, the text cut to its first
 *      200 characters (never inside a UTF-8 sequence); with no text the
 *      line ends `completed by coder.` / `failed by coder.`.
 *  (3) A completion that made tasks ready names them, the same list in
 *      both texts: in the room line after a semicolon (`; now ready: ...`),
 *      in the leader's message on a line of its own (`Now ready: ...`).
 *      The list is `#7 "Deploy", #9 "Docs"`, ids ascending, the first
 *      HD_BOARD__READY_NAMED by subject and the rest counted
 *      (`... #16 "J" and 3 more`). With none, the texts are (1) and (2).
 *  (4) A delegated task's assignee is told `You were delegated task #7
 *      "X" by manager: <description>` (`by manager.` without one).
 */
#include <inttypes.h>
#include <string.h>

#include "board_int.h"

/* The byte length of the first max code points of UTF-8 text s. */
static size_t
utf8_prefix(const char *s, size_t max)
{
	size_t i = 0, n = 0;

	for (; s[i] != '\0'; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (n == max)
				break;
			n++;
		}
	}
	return i;
}

/* The tasks a completion made ready: `#7 "Deploy", #9 "Docs"` (3). */
static void
ready_list(hd_buf *b, const hd_board__change *c)
{
	size_t i, named = c->nready < HD_BOARD__READY_NAMED
			      ? c->nready
			      : HD_BOARD__READY_NAMED;

	for (i = 0; i < named; i++)
		hd_buf_printf(b, "%s#%" PRId64 " \"%s\"", i ? ", " : "",
		    c->ready[i], c->ready_subjects[i]);
	if (c->nready > named)
		hd_buf_printf(b, " and %zu more", c->nready - named);
}

void
hd_board__room_line(hd_buf *b, const hd_board__change *c)
{
	const hd_task *t = c->task;

	if (c->kind == HD_BOARD__COMMENTED) {
		hd_buf_printf(b, "Comment on task #%" PRId64 " \"%s\" by %s: ",
		    t->id, t->subject, c->actor);
		hd_buf_put(b, c->text,
		    utf8_prefix(c->text, HD_BOARD__ANNOUNCE_CHARS));
		return;
	}
	if (c->kind == HD_BOARD__VERIFY_NOTE) {
		hd_buf_printf(b, "Task #%" PRId64 " \"%s\": %s", t->id,
		    t->subject, c->text != NULL ? c->text : "");
		return;
	}
	hd_buf_printf(b, "Task #%" PRId64 " \"%s\" ", t->id, t->subject);
	switch (c->kind) {
	case HD_BOARD__CREATED: hd_buf_puts(b, "created."); break;
	case HD_BOARD__CLAIMED:
		hd_buf_printf(b, "claimed by %s.", t->owner);
		break;
	case HD_BOARD__ASSIGNED:
		hd_buf_printf(b, "assigned to %s by %s.", t->owner, c->actor);
		break;
	case HD_BOARD__STARTED:
		hd_buf_puts(b, "\xe2\x86\x92 in_progress."); /* U+2192 */
		break;
	case HD_BOARD__COMPLETED:
		hd_buf_printf(b, "completed by %s", c->actor);
		if (c->nready > 0) {
			hd_buf_puts(b, "; now ready: ");
			ready_list(b, c);
		}
		hd_buf_putc(b, '.');
		break;
	case HD_BOARD__FAILED:
		if (c->text != NULL)
			hd_buf_printf(b, "failed: %s.", c->text);
		else
			hd_buf_puts(b, "failed.");
		break;
	case HD_BOARD__RELEASED:
		hd_buf_printf(b, "released by %s.", c->actor);
		break;
	case HD_BOARD__CANCELLED:
		hd_buf_printf(b, "cancelled by %s.", c->actor);
		break;
	case HD_BOARD__RETRIED:
		hd_buf_printf(b, "reopened by %s.", c->actor);
		break;
	case HD_BOARD__LINKED:
		/* "Task #6 "Ship" now depends on #5 "Write docs"." */
		hd_buf_printf(b, "now depends on #%" PRId64 " \"%s\".",
		    c->dep_id, c->dep_subject);
		break;
	case HD_BOARD__REASSIGNED:
		hd_buf_printf(b, "moved from %s to %s by %s.", c->prev_owner,
		    t->owner, c->actor);
		break;
	case HD_BOARD__DELEGATED:
		hd_buf_printf(b, "delegated to %s by %s.", t->owner, c->actor);
		break;
	case HD_BOARD__VERIFYING:
		hd_buf_printf(b, "completed by %s; verifying:", c->actor);
		if (c->gate != NULL) {
			hd_buf_puts(b, " gate `");
			hd_buf_put(b, c->gate, utf8_prefix(c->gate, 80));
			hd_buf_printf(b, "`%s", c->critic != NULL ? "," : "");
		}
		if (c->critic != NULL)
			hd_buf_printf(b, " critic %s", c->critic);
		hd_buf_putc(b, '.');
		break;
	case HD_BOARD__APPROVED:
		hd_buf_printf(b, "approved by %s: completed", c->actor);
		if (c->nready > 0) {
			hd_buf_puts(b, "; now ready: ");
			ready_list(b, c);
		}
		hd_buf_putc(b, '.');
		break;
	case HD_BOARD__REJECTED:
		hd_buf_printf(b, "rejected by %s: ", c->actor);
		if (c->text != NULL)
			hd_buf_put(b, c->text,
			    utf8_prefix(c->text, HD_BOARD__ANNOUNCE_CHARS));
		hd_buf_printf(b, "; back to %s.", t->owner);
		break;
	case HD_BOARD__COMMENTED: /* above */
	case HD_BOARD__VERIFY_NOTE: break;
	}
}

void
hd_board__delegate_text(hd_buf *b, const hd_task *t, const char *actor)
{
	hd_buf_printf(b, "You were delegated task #%" PRId64 " \"%s\" by %s",
	    t->id, t->subject, actor);
	if (t->description[0] != '\0')
		hd_buf_printf(b, ": %s", t->description);
	else
		hd_buf_putc(b, '.');
}

int
hd_board__announce(hd_buf *b, const hd_board__change *c)
{
	const hd_task *t = c->task;
	const char *verb, *by = c->actor;

	if (c->kind == HD_BOARD__COMPLETED || c->kind == HD_BOARD__APPROVED)
		verb = "completed";
	else if (c->kind == HD_BOARD__FAILED)
		verb = "failed";
	else
		return 0;
	if (c->kind == HD_BOARD__APPROVED) /* the owner's completion */
		by = t->owner;
	if (c->leader == NULL || by == NULL ||
	    strcmp(by, HD_BOARD_USER) == 0 || strcmp(by, c->leader) == 0)
		return 0;
	hd_buf_printf(b, "Task #%" PRId64 " \"%s\" %s by %s", t->id, t->subject,
	    verb, by);
	if (c->kind == HD_BOARD__APPROVED)
		hd_buf_printf(b, " (approved by %s)", c->actor);
	if (c->text != NULL && c->text[0] != '\0') {
		hd_buf_puts(b, ": ");
		hd_buf_put(
		    b, c->text, utf8_prefix(c->text, HD_BOARD__ANNOUNCE_CHARS));
	} else
		hd_buf_putc(b, '.');
	if ((c->kind == HD_BOARD__COMPLETED ||
		c->kind == HD_BOARD__APPROVED) &&
	    c->nready > 0) {
		hd_buf_puts(b, "\nNow ready: ");
		ready_list(b, c);
	}
	return 1;
}
