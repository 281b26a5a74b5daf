/*
 * test-reassign.c -- hd_board_reassign_open: a member's claimed and
 * in_progress tasks move to another member with their status kept, each
 * with a comment, a room line and an event; everything else stays; the
 * refusals write nothing; inside a caller's transaction the move commits
 * or rolls back with it.
 */
#include <stdio.h>

#include <huddle/events.h>
#include <huddle/room.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "dev: manager coder coder-2; ops: sre");
}

/* The owner of task id ("" when none), into buf. */
static const char *
owner_of(hd_fixture *fx, int64_t id, char *buf, size_t len)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	snprintf(buf, len, "%s", t->owner != NULL ? t->owner : "");
	hd_task_free(t);
	return buf;
}

/* The newest room line of team dev, into buf. */
static const char *
last_line(hd_fixture *fx, char *buf, size_t len)
{
	hd_posts p;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_true(p.n > 0);
	snprintf(buf, len, "%s", p.items[p.n - 1].body);
	hd_posts_dispose(&p);
	return buf;
}

static void
test_board_reassign__open_tasks_move_with_status_and_comment(void **state)
{
	hd_fixture *fx = *state;
	hd_tasks moved;
	hd_task *t = NULL;
	hd_event_list ev;
	hd_event_filter f = {0};
	hd_err err = HD_ERR_INIT;
	char buf[256];
	int64_t claimed = bt_task(fx, "dev", "Fix the claim path", NULL, 0);
	int64_t started = bt_task(fx, "dev", "Write the test", NULL, 0);
	int64_t done = bt_task(fx, "dev", "Old work", NULL, 0);
	int64_t failed = bt_task(fx, "dev", "Broken work", NULL, 0);
	int64_t pending = bt_task(fx, "dev", "Nobody's", NULL, 0);
	int64_t other = bt_task(fx, "dev", "Manager's", NULL, 0);

	assert_hd_ok(
	    hd_board_claim(NULL, fx->st, claimed, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_claim(NULL, fx->st, started, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_start(NULL, fx->st, started, "coder", &err), &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, done, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, done, "coder", NULL, &err), &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, failed, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, failed, "coder", NULL, &err), &err);
	assert_hd_ok(
	    hd_board_claim(NULL, fx->st, other, "manager", &err), &err);

	assert_hd_ok(hd_board_reassign_open(&moved, fx->st, "dev", "coder",
			 "coder-2", "manager", "coder is in error", &err),
	    &err);
	assert_int_equal(moved.n, 2);
	assert_int_equal(moved.items[0].id, claimed);
	assert_string_equal(moved.items[0].status, "claimed");
	assert_string_equal(moved.items[0].owner, "coder-2");
	assert_int_equal(moved.items[1].id, started);
	assert_string_equal(moved.items[1].status, "in_progress");
	assert_string_equal(moved.items[1].owner, "coder-2");
	hd_tasks_dispose(&moved);

	/* the rest stays where it was */
	assert_string_equal(owner_of(fx, done, buf, sizeof(buf)), "coder");
	assert_status(fx, done, "completed");
	assert_string_equal(owner_of(fx, failed, buf, sizeof(buf)), "coder");
	assert_string_equal(owner_of(fx, pending, buf, sizeof(buf)), "");
	assert_string_equal(owner_of(fx, other, buf, sizeof(buf)), "manager");

	/* each moved task says why, by whom */
	assert_hd_ok(hd_board_get(&t, fx->st, started, &err), &err);
	assert_int_equal(t->ncomments, 1);
	assert_string_equal(t->comments[0].author, "manager");
	assert_string_equal(t->comments[0].body,
	    "moved from coder to coder-2: coder is in error");
	hd_task_free(t);
	assert_string_equal(last_line(fx, buf, sizeof(buf)),
	    "Task #2 \"Write the test\" moved from coder to coder-2 by "
	    "manager.");
	f.team = "dev";
	f.kind = "task_reassigned";
	assert_hd_ok(hd_events_list(&ev, fx->st, &f, &err), &err);
	assert_int_equal(ev.n, 2);
	assert_int_equal(ev.items[1].task_id, started);
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[1].data, "to")),
	    "coder-2");
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[1].data, "status")),
	    "in_progress");
	hd_event_list_dispose(&ev);

	/* the new owner carries on as owners do */
	assert_hd_ok(
	    hd_board_start(NULL, fx->st, claimed, "coder-2", &err), &err);
	assert_hd_err(
	    hd_board_complete(NULL, fx->st, claimed, "coder", NULL, &err),
	    HD_EREFUSED, "task 1 is owned by coder-2, not coder", &err);

	/* nothing left to move is no error; a user may move, without a note */
	assert_hd_ok(hd_board_reassign_open(&moved, fx->st, "dev", "coder",
			 "coder-2", NULL, NULL, &err),
	    &err);
	assert_int_equal(moved.n, 0);
	hd_tasks_dispose(&moved);
	assert_hd_ok(hd_board_reassign_open(NULL, fx->st, "dev", "coder-2",
			 "coder", "user", NULL, &err),
	    &err);
	assert_hd_ok(hd_board_get(&t, fx->st, claimed, &err), &err);
	assert_string_equal(t->owner, "coder");
	assert_string_equal(t->comments[1].author, "user");
	assert_string_equal(t->comments[1].body, "moved from coder-2 to coder");
	hd_task_free(t);
}

static void
test_board_reassign__refusals_write_nothing(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char buf[256], *note;
	int64_t id = bt_task(fx, "dev", "Fix it", NULL, 0);
	int64_t events, now;

	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_ok(hd_events_head(&events, fx->st, &err), &err);
	assert_hd_err(hd_board_reassign_open(NULL, fx->st, "dev", "coder",
			  "coder", NULL, NULL, &err),
	    HD_EINVAL, "cannot move tasks from coder to itself", &err);
	assert_hd_err(hd_board_reassign_open(NULL, fx->st, "dev", "coder",
			  "sre", NULL, NULL, &err),
	    HD_EREFUSED, "no member \"sre\" in team dev", &err);
	assert_hd_err(hd_board_reassign_open(NULL, fx->st, "dev", "ghost",
			  "coder-2", NULL, NULL, &err),
	    HD_EREFUSED, "no member \"ghost\" in team dev", &err);
	assert_hd_err(hd_board_reassign_open(NULL, fx->st, "dev", "coder",
			  "coder-2", "sre", NULL, &err),
	    HD_EREFUSED, "no member \"sre\" in team dev", &err);
	assert_hd_err(hd_board_reassign_open(NULL, fx->st, "Dev", "coder",
			  "coder-2", NULL, NULL, &err),
	    HD_EINVAL,
	    "invalid team name \"Dev\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	note = malloc(HD_TASK_COMMENT_MAX + 1);
	memset(note, 'x', HD_TASK_COMMENT_MAX);
	note[HD_TASK_COMMENT_MAX] = '\0';
	assert_hd_err(hd_board_reassign_open(NULL, fx->st, "dev", "coder",
			  "coder-2", NULL, note, &err),
	    HD_EINVAL, "task comment is 10029 characters; the limit is 10000",
	    &err);
	free(note);
	assert_string_equal(owner_of(fx, id, buf, sizeof(buf)), "coder");
	assert_hd_ok(hd_events_head(&now, fx->st, &err), &err);
	assert_int_equal(now, events);
}

struct in_txn {
	int fail; /* 1: refuse after the move */
	size_t moved;
};

static int
move_then(hd_store *st, void *payload, hd_err *err)
{
	struct in_txn *t = payload;
	hd_tasks moved;
	int rc;

	if ((rc = hd_board_reassign_open(&moved, st, "dev", "coder", "coder-2",
		 "manager", NULL, err)) < 0)
		return rc;
	t->moved = moved.n;
	hd_tasks_dispose(&moved);
	return t->fail ? hd_err_set(err, HD_EREFUSED, "changed my mind") : 0;
}

static void
test_board_reassign__commits_or_rolls_back_with_the_caller(void **state)
{
	hd_fixture *fx = *state;
	struct in_txn t = {1, 0};
	hd_task *task = NULL;
	hd_err err = HD_ERR_INIT;
	char buf[256];
	int64_t id = bt_task(fx, "dev", "Fix it", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_err(hd_store_atomic(fx->st, move_then, &t, &err), HD_EREFUSED,
	    "changed my mind", &err);
	assert_int_equal(t.moved, 1); /* it moved, then was rolled back */
	assert_string_equal(owner_of(fx, id, buf, sizeof(buf)), "coder");
	assert_hd_ok(hd_board_get(&task, fx->st, id, &err), &err);
	assert_int_equal(task->ncomments, 0);
	hd_task_free(task);
	assert_string_equal(last_line(fx, buf, sizeof(buf)),
	    "Task #1 \"Fix it\" claimed by coder.");

	t.fail = 0;
	assert_hd_ok(hd_store_atomic(fx->st, move_then, &t, &err), &err);
	assert_string_equal(owner_of(fx, id, buf, sizeof(buf)), "coder-2");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_reassign__open_tasks_move_with_status_and_comment,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reassign__refusals_write_nothing, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reassign__commits_or_rolls_back_with_the_caller,
		setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
