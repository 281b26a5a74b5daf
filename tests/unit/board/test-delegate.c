/*
 * test-delegate.c -- delegation as one typed act (issue 22 item 2): the
 * task, its owner and the assignee's message in one transaction; every
 * refusal (outside the team, in error, shutting down, not the leader)
 * names why and writes nothing at all.
 */
#include <stdio.h>

#include <huddle/agent.h>
#include <huddle/events.h>
#include <huddle/mailbox.h>
#include <huddle/room.h>
#include <huddle/team.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager tester coder");
}

/* How many tasks, room posts and messages for agent the team has. */
static void
counts(hd_fixture *fx, const char *agent, size_t *tasks, size_t *posts,
    size_t *msgs)
{
	hd_tasks l;
	hd_posts p;
	hd_messages m;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_hd_ok(hd_mailbox_peek(&m, fx->st, agent, 0, &err), &err);
	*tasks = l.n;
	*posts = p.n;
	*msgs = m.n;
	hd_tasks_dispose(&l);
	hd_posts_dispose(&p);
	hd_messages_dispose(&m);
}

/* Delegate subject to assignee as actor; expect the refusal text and
 * nothing written: no task, no room line, no message for coder. */
static void
expect_refused(hd_fixture *fx, const char *actor, const char *assignee,
    int code, const char *text)
{
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	size_t tasks, posts, msgs, tasks0, posts0, msgs0;

	counts(fx, "coder", &tasks0, &posts0, &msgs0);
	spec.team = "dev";
	spec.subject = "Fix the parser";
	spec.description = "tests in tests/parse";
	spec.created_by = actor;
	assert_hd_err(hd_board_delegate(&t, fx->st, &spec, assignee, &err),
	    code, text, &err);
	assert_null(t);
	counts(fx, "coder", &tasks, &posts, &msgs);
	assert_int_equal(tasks, tasks0);
	assert_int_equal(posts, posts0);
	assert_int_equal(msgs, msgs0);
}

/* The leader delegates: the task is claimed by the assignee, which has
 * its message, and the room has exactly one line for the act. */
static void
test_board_delegate__task_owner_and_message_in_one_act(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_posts p;
	hd_messages m;
	hd_event_filter ef = {0};
	hd_event_list el;
	hd_err err = HD_ERR_INIT;

	spec.team = "dev";
	spec.subject = "Fix the parser";
	spec.description = "tests in tests/parse";
	spec.priority = 3;
	spec.created_by = "manager";
	assert_hd_ok(hd_board_delegate(&t, fx->st, &spec, "coder", &err), &err);
	assert_int_equal(t->id, 1);
	assert_string_equal(t->status, "claimed");
	assert_string_equal(t->owner, "coder");
	assert_string_equal(t->created_by, "manager");
	assert_int_equal(t->priority, 3);
	hd_task_free(t);

	assert_hd_ok(hd_mailbox_peek(&m, fx->st, "coder", 0, &err), &err);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.items[0].type, "task_update");
	assert_string_equal(m.items[0].from_agent, "manager");
	assert_string_equal(m.items[0].content,
	    "You were delegated task #1 \"Fix the parser\" by manager: tests "
	    "in tests/parse");
	hd_messages_dispose(&m);

	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.items[0].body,
	    "Task #1 \"Fix the parser\" delegated to coder by manager.");
	hd_posts_dispose(&p);

	ef.team = "dev";
	ef.kind = "task_claimed";
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 1);
	assert_true(
	    json_is_true(json_object_get(el.items[0].data, "delegated")));
	hd_event_list_dispose(&el);
}

/* A user delegates: the message comes from huddle, and without a
 * description it ends with a period. A subtask keeps its parent. */
static void
test_board_delegate__by_a_user_into_a_subtask(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_messages m;
	hd_err err = HD_ERR_INIT;
	int64_t root = bt_task(fx, "dev", "Release", NULL, 0);

	spec.team = "dev";
	spec.subject = "Changelog";
	spec.parent_id = root;
	assert_hd_ok(
	    hd_board_delegate(&t, fx->st, &spec, "tester", &err), &err);
	assert_int_equal(t->parent_id, root);
	assert_string_equal(t->created_by, "user");
	hd_task_free(t);
	assert_hd_ok(hd_mailbox_peek(&m, fx->st, "tester", 0, &err), &err);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.items[0].from_agent, HD_MAILBOX_SYSTEM);
	assert_string_equal(m.items[0].content,
	    "You were delegated task #2 \"Changelog\" by user.");
	hd_messages_dispose(&m);
}

static void
test_board_delegate__refusals_write_nothing(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	size_t tasks, posts, msgs;

	expect_refused(fx, "tester", "coder", HD_EREFUSED,
	    "only the team leader or a user may delegate, not tester");
	expect_refused(fx, "manager", "ghost", HD_EREFUSED,
	    "no member \"ghost\" in team dev");
	assert_hd_ok(hd_agent_set_status_reason(
			 fx->st, "coder", "error", "exit status 3", &err),
	    &err);
	expect_refused(fx, "manager", "coder", HD_EREFUSED,
	    "cannot delegate to coder: it is in error (exit status 3)");
	assert_hd_ok(hd_agent_set_status_reason(
			 fx->st, "coder", "shutdown_requested", NULL, &err),
	    &err);
	expect_refused(fx, "manager", "coder", HD_EREFUSED,
	    "cannot delegate to coder: it is in shutdown_requested");
	assert_hd_ok(
	    hd_agent_set_status_reason(fx->st, "coder", "shutdown", NULL, &err),
	    &err);
	expect_refused(fx, NULL, "coder", HD_EREFUSED,
	    "cannot delegate to coder: it is in shutdown");
	expect_refused(fx, "manager", "Bad!", HD_EINVAL,
	    "invalid agent name \"Bad!\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'");
	counts(fx, "coder", &tasks, &posts, &msgs);
	assert_int_equal(tasks + posts + msgs, 0);
}

/* A cap refuses a delegation as it refuses a create, and the claim and
 * message go with it. */
static void
test_board_delegate__a_cap_refuses_the_whole_act(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {0};
	hd_team *team = NULL;
	hd_err err = HD_ERR_INIT;

	ts.id = "dev";
	ts.max_new_roots = 1;
	assert_hd_ok(hd_team_update(&team, fx->st, &ts, &err), &err);
	hd_team_free(team);
	{
		hd_task_spec spec = {0};
		hd_task *t = NULL;

		spec.team = "dev";
		spec.subject = "First";
		spec.created_by = "manager";
		assert_hd_ok(
		    hd_board_delegate(&t, fx->st, &spec, "tester", &err), &err);
		hd_task_free(t);
	}
	expect_refused(fx, "manager", "coder", HD_EREFUSED,
	    "manager already created 1 root task in the last 300 s (the "
	    "team's max_new_roots); make this a subtask of one of them, wait, "
	    "or raise it with huddle team update dev --max-new-roots N");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_delegate__task_owner_and_message_in_one_act, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_delegate__by_a_user_into_a_subtask, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_delegate__refusals_write_nothing, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_delegate__a_cap_refuses_the_whole_act, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
