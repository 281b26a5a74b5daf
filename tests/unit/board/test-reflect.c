/*
 * test-reflect.c -- after a board write commits it is told to the team
 * (SPEC 4): exact system lines in the room, in order; the leader's
 * task_update message for a member's completion or failure; nothing for a
 * refusal; and a failed reflection never fails the write. A completion
 * names the tasks it made ready, in the room, to the leader, in its event
 * and in its answer.
 */
#include <stdio.h>

#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/mailbox.h>
#include <huddle/room.h>

#include "board-test.h"
#include "store/store.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder tester");
}

/* Every room line of team dev, oldest first, joined with "\n". */
static char *
room_lines(hd_fixture *fx)
{
	hd_posts p;
	hd_err err = HD_ERR_INIT;
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	for (i = 0; i < p.n; i++) {
		assert_string_equal(p.items[i].author, "huddle");
		assert_string_equal(p.items[i].kind, "system");
		hd_buf_printf(&b, "%s%s", i ? "\n" : "", p.items[i].body);
	}
	hd_posts_dispose(&p);
	hd_buf_puts(&b, "");
	return hd_buf_detach(&b);
}

#define assert_room(fx, want)                                                  \
	do {                                                                   \
		char *r_ = room_lines(fx);                                     \
		assert_string_equal(r_, (want));                               \
		free(r_);                                                      \
	} while (0)

static int64_t
room_head(hd_fixture *fx)
{
	hd_err err = HD_ERR_INIT;
	int64_t h = 0;

	assert_hd_ok(hd_room_head(&h, fx->st, "dev", &err), &err);
	return h;
}

static void
test_board_reflect__lifecycle_lines_in_order(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_ok(hd_board_start(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, id, "coder", "All done", &err),
	    &err);
	assert_room(fx, "Task #1 \"Write docs\" created.\n"
			"Task #1 \"Write docs\" claimed by coder.\n"
			"Task #1 \"Write docs\" \xe2\x86\x92 in_progress.\n"
			"Task #1 \"Write docs\" completed by coder.");
}

static void
test_board_reflect__other_lines(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t a = bt_task(fx, "dev", "Write docs", NULL, 0);
	int64_t b = bt_task(fx, "dev", "Ship", NULL, 0);

	assert_hd_ok(hd_board_link(NULL, fx->st, b, a, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_assign(NULL, fx->st, a, "coder", "manager", &err), &err);
	assert_hd_ok(hd_board_release(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_assign(NULL, fx->st, a, "tester", NULL, &err), &err);
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, a, "tester", "disk full", &err), &err);
	assert_hd_ok(hd_board_retry(NULL, fx->st, a, "manager", &err), &err);
	assert_hd_ok(
	    hd_board_auto_claim(NULL, fx->st, "dev", "coder", &err), &err);
	assert_hd_ok(hd_board_fail(NULL, fx->st, a, "coder", NULL, &err), &err);
	assert_hd_ok(hd_board_cancel(NULL, fx->st, b, NULL, &err), &err);
	assert_room(fx, "Task #1 \"Write docs\" created.\n"
			"Task #2 \"Ship\" created.\n"
			"Task #2 \"Ship\" now depends on #1 \"Write docs\".\n"
			"Task #1 \"Write docs\" assigned to coder by manager.\n"
			"Task #1 \"Write docs\" released by coder.\n"
			"Task #1 \"Write docs\" assigned to tester by user.\n"
			"Task #1 \"Write docs\" failed: disk full.\n"
			"Task #1 \"Write docs\" reopened by manager.\n"
			"Task #1 \"Write docs\" claimed by coder.\n"
			"Task #1 \"Write docs\" failed.\n"
			"Task #2 \"Ship\" cancelled by user.");
}

/* A refused operation adds no room line, no event, no message. */
static void
test_board_reflect__refusal_posts_and_emits_nothing(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_messages m;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);
	int64_t dep = bt_task(fx, "dev", "Ship", &id, 1);
	int64_t posts, events;

	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	posts = room_head(fx);
	assert_hd_ok(hd_events_head(&events, fx->st, &err), &err);
	assert_int_equal(
	    hd_board_claim(NULL, fx->st, id, "tester", &err), HD_ECONFLICT);
	assert_int_equal(
	    hd_board_claim(NULL, fx->st, dep, "tester", &err), HD_EREFUSED);
	assert_int_equal(
	    hd_board_complete(NULL, fx->st, id, "tester", "x", &err),
	    HD_EREFUSED);
	assert_int_equal(
	    hd_board_start(NULL, fx->st, dep, NULL, &err), HD_EREFUSED);
	assert_int_equal(
	    hd_board_link(NULL, fx->st, id, dep, NULL, &err), HD_EREFUSED);
	assert_int_equal(
	    hd_board_auto_claim(NULL, fx->st, "dev", "tester", &err),
	    HD_ENOTFOUND);
	assert_int_equal(room_head(fx), posts);
	{
		int64_t now;

		assert_hd_ok(hd_events_head(&now, fx->st, &err), &err);
		assert_int_equal(now, events);
	}
	assert_hd_ok(hd_mailbox_peek(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 0);
	hd_messages_dispose(&m);
}

static void
test_board_reflect__leader_hears_of_completion_and_failure(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_messages m;
	int64_t a = bt_task(fx, "dev", "Write docs", NULL, 0);
	int64_t b = bt_task(fx, "dev", "Ship", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(hd_board_complete(
			 NULL, fx->st, a, "coder", "Wrote the guide", &err),
	    &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, b, "tester", &err), &err);
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, b, "tester", "no access", &err), &err);
	assert_hd_ok(hd_mailbox_read(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.items[0].type, "task_update");
	assert_string_equal(m.items[0].from_agent, "coder");
	assert_string_equal(m.items[0].to_agent, "manager");
	assert_string_equal(m.items[0].content,
	    "Task #1 \"Write docs\" completed by coder: Wrote the guide");
	assert_string_equal(m.items[1].type, "task_update");
	assert_string_equal(m.items[1].from_agent, "tester");
	assert_string_equal(
	    m.items[1].content, "Task #2 \"Ship\" failed by tester: no access");
	hd_messages_dispose(&m);
	/* nobody else was written to */
	assert_hd_ok(hd_mailbox_peek(&m, fx->st, "coder", 0, &err), &err);
	assert_int_equal(m.n, 0);
	hd_messages_dispose(&m);
}

/* The result is cut to its first 200 characters (not bytes); no text
 * ends the line with a period. */
static void
test_board_reflect__announcement_cut_to_200_chars(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_messages m;
	hd_buf want = HD_BUF_INIT(0);
	hd_buf result = HD_BUF_INIT(0);
	int64_t a = bt_task(fx, "dev", "Write docs", NULL, 0);
	int64_t b = bt_task(fx, "dev", "Ship", NULL, 0);
	int i;

	for (i = 0; i < 250; i++)
		hd_buf_puts(&result, i % 2 ? "\xc3\xa9" : "x"); /* é and x */
	hd_buf_puts(&want, "Task #1 \"Write docs\" completed by coder: ");
	for (i = 0; i < 200; i++)
		hd_buf_puts(&want, i % 2 ? "\xc3\xa9" : "x");
	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(hd_board_complete(
			 NULL, fx->st, a, "coder", hd_buf_cstr(&result), &err),
	    &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, b, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, b, "coder", NULL, &err), &err);
	assert_hd_ok(hd_mailbox_read(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.items[0].content, hd_buf_cstr(&want));
	assert_string_equal(
	    m.items[1].content, "Task #2 \"Ship\" completed by coder.");
	hd_messages_dispose(&m);
	hd_buf_dispose(&want);
	hd_buf_dispose(&result);
}

/* The leader finishing (its own or anyone's) task, or a user, sends no
 * announcement; the room still hears of it. */
static void
test_board_reflect__leader_or_user_gets_no_announcement(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_messages m;
	int64_t a = bt_task(fx, "dev", "Plan", NULL, 0);
	int64_t b = bt_task(fx, "dev", "Review", NULL, 0);
	int64_t c = bt_task(fx, "dev", "Merge", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "manager", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, a, "manager", "planned", &err),
	    &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, b, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, b, "manager", "dropped", &err), &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, c, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, c, NULL, "merged", &err), &err);
	assert_hd_ok(hd_mailbox_peek(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 0);
	hd_messages_dispose(&m);
	assert_room(fx, "Task #1 \"Plan\" created.\n"
			"Task #2 \"Review\" created.\n"
			"Task #3 \"Merge\" created.\n"
			"Task #1 \"Plan\" claimed by manager.\n"
			"Task #1 \"Plan\" completed by manager.\n"
			"Task #2 \"Review\" claimed by coder.\n"
			"Task #2 \"Review\" failed: dropped.\n"
			"Task #3 \"Merge\" claimed by coder.\n"
			"Task #3 \"Merge\" completed by user.");
}

/* The "unblocked" ids of the newest status_changed event, as JSON text
 * (malloc'd). */
static char *
last_unblocked(hd_fixture *fx)
{
	hd_event_filter ef = {0};
	hd_event_list el;
	hd_err err = HD_ERR_INIT;
	char *s;

	ef.team = "dev";
	ef.kind = "status_changed";
	ef.limit = 1;
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 1);
	s = json_dumps(json_object_get(el.items[0].data, "unblocked"),
	    JSON_COMPACT | JSON_ENCODE_ANY);
	hd_event_list_dispose(&el);
	assert_non_null(s);
	return s;
}

/*
 * Completing task 1 makes ready #2 and #4, which waited on it alone; not
 * #5 (still blocked by #3), #6 (claimed, linked to #1 afterwards) or #7
 * (cancelled). The room line, the leader's message, the event and the
 * answer all name the same two.
 */
static void
test_board_reflect__completion_names_the_tasks_it_made_ready(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_messages m;
	hd_task *t = NULL;
	char *ev;
	int64_t a = bt_task(fx, "dev", "Write docs", NULL, 0);
	int64_t b = bt_task(fx, "dev", "Deploy", &a, 1);
	int64_t c = bt_task(fx, "dev", "Review", NULL, 0);
	int64_t d = bt_task(fx, "dev", "Docs site", &a, 1);
	int64_t ac[2] = {a, c};
	int64_t e = bt_task(fx, "dev", "Announce", ac, 2);
	int64_t f = bt_task(fx, "dev", "Owned", NULL, 0);
	int64_t g = bt_task(fx, "dev", "Dropped", &a, 1);

	assert_int_equal(b, 2);
	assert_int_equal(d, 4);
	assert_int_equal(e, 5);
	assert_hd_ok(hd_board_claim(NULL, fx->st, f, "tester", &err), &err);
	assert_hd_ok(hd_board_link(NULL, fx->st, f, a, "manager", &err), &err);
	assert_hd_ok(hd_board_cancel(NULL, fx->st, g, NULL, &err), &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, a, "coder", "Wrote it", &err), &err);
	assert_true(t->has_unblocked);
	assert_int_equal(t->nunblocked, 2);
	assert_int_equal(t->unblocked[0], b);
	assert_int_equal(t->unblocked[1], d);
	hd_task_free(t);
	assert_room_last(fx, "Task #1 \"Write docs\" completed by coder; now "
			     "ready: #2 \"Deploy\", #4 \"Docs site\".");
	assert_hd_ok(hd_mailbox_read(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.items[0].type, "task_update");
	assert_string_equal(m.items[0].content,
	    "Task #1 \"Write docs\" completed by coder: Wrote it\n"
	    "Now ready: #2 \"Deploy\", #4 \"Docs site\"");
	hd_messages_dispose(&m);
	ev = last_unblocked(fx);
	assert_string_equal(ev, "[2,4]");
	free(ev);

	/* #3 done: #5 is ready now; nothing else waited on #3 */
	assert_hd_ok(hd_board_claim(NULL, fx->st, c, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, c, "coder", NULL, &err), &err);
	assert_int_equal(t->nunblocked, 1);
	hd_task_free(t);
	assert_room_last(fx, "Task #3 \"Review\" completed by coder; now "
			     "ready: #5 \"Announce\".");
	assert_hd_ok(hd_mailbox_read(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.items[0].content,
	    "Task #3 \"Review\" completed by coder.\n"
	    "Now ready: #5 \"Announce\"");
	hd_messages_dispose(&m);

	/* #6 was never blocked-and-free: its completion frees nothing */
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, f, "tester", NULL, &err), &err);
	assert_true(t->has_unblocked);
	assert_int_equal(t->nunblocked, 0);
	hd_task_free(t);
	assert_room_last(fx, "Task #6 \"Owned\" completed by tester.");
	ev = last_unblocked(fx);
	assert_string_equal(ev, "[]");
	free(ev);
}

/* Ten are named, the rest counted; the leader completing gets no
 * message, yet the room line still names what became ready. */
static void
test_board_reflect__ready_list_names_ten_then_counts(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_messages m;
	hd_task *t = NULL;
	hd_buf want = HD_BUF_INIT(0);
	char subject[16];
	int64_t root = bt_task(fx, "dev", "Root", NULL, 0), id;
	int i;

	hd_buf_puts(
	    &want, "Task #1 \"Root\" completed by manager; now ready: ");
	for (i = 0; i < 12; i++) {
		snprintf(subject, sizeof(subject), "Leaf %d", i + 1);
		id = bt_task(fx, "dev", subject, &root, 1);
		if (i < 10)
			hd_buf_printf(&want, "%s#%lld \"%s\"", i ? ", " : "",
			    (long long)id, subject);
	}
	hd_buf_puts(&want, " and 2 more.");
	assert_hd_ok(
	    hd_board_claim(NULL, fx->st, root, "manager", &err), &err);
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, root, "manager", "ok", &err), &err);
	assert_int_equal(t->nunblocked, 12);
	assert_int_equal(t->unblocked[11], 13);
	hd_task_free(t);
	assert_room_last(fx, hd_buf_cstr(&want));
	assert_hd_ok(hd_mailbox_peek(&m, fx->st, "manager", 0, &err), &err);
	assert_int_equal(m.n, 0);
	hd_messages_dispose(&m);
	hd_buf_dispose(&want);
}

/* Events go with the write: created, claimed, status_changed, in order;
 * starting makes the owner working (activity.h). */
static void
test_board_reflect__events_in_order(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_event_filter ef = {0};
	hd_event_list el;
	hd_buf kinds = HD_BUF_INIT(0);
	int64_t id, before;
	size_t i;

	assert_hd_ok(hd_events_head(&before, fx->st, &err), &err);
	id = bt_task(fx, "dev", "Write docs", NULL, 0);
	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_ok(hd_board_start(NULL, fx->st, id, "coder", &err), &err);
	ef.after_seq = before;
	ef.team = "dev";
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	for (i = 0; i < el.n; i++)
		hd_buf_printf(&kinds, "%s%s", i ? " " : "", el.items[i].kind);
	assert_string_equal(hd_buf_cstr(&kinds),
	    "task_created team_chat_post task_claimed team_chat_post "
	    "status_changed team_chat_post agent_status");
	hd_event_list_dispose(&el);
	hd_buf_dispose(&kinds);
}

/* A reflection that cannot be posted is logged; the write stands. */
static void
test_board_reflect__failure_never_fails_the_write(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	/* break both reflection targets */
	assert_hd_ok(hd_store_exec(fx->st,
			 "ALTER TABLE team_chat RENAME TO team_chat_gone;"
			 "ALTER TABLE messages RENAME TO messages_gone",
			 &err),
	    &err);
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, id, "coder", "done", &err), &err);
	assert_string_equal(t->status, "completed");
	hd_task_free(t);
	assert_status(fx, id, "completed");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__lifecycle_lines_in_order, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__other_lines, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__refusal_posts_and_emits_nothing, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__leader_hears_of_completion_and_failure,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__announcement_cut_to_200_chars, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__leader_or_user_gets_no_announcement, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__completion_names_the_tasks_it_made_ready,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__ready_list_names_ten_then_counts, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_board_reflect__events_in_order,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_reflect__failure_never_fails_the_write, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
