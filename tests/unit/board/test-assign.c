/*
 * test-assign.c -- auto-assignment (issue 21 item 7): the board picks the
 * idle member with the fewest open tasks, ties to the lowest id, never a
 * member that is working, in error or shutting down, the leader only when
 * it is alone; a refusal says who is busy and writes nothing.
 */
#include <stdio.h>

#include <huddle/agent.h>
#include <huddle/events.h>
#include <huddle/room.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager tester coder");
}

/* Auto-assign task id as the leader; check whom and why. */
static void
expect_pick(hd_fixture *fx, int64_t id, const char *agent, const char *why)
{
	hd_board_pick pick;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(
	    hd_board_assign_auto(&t, &pick, fx->st, id, "manager", &err), &err);
	assert_string_equal(pick.agent, agent);
	assert_string_equal(pick.reason, why);
	assert_string_equal(t->owner, agent);
	assert_string_equal(t->status, "claimed");
	hd_task_free(t);
}

/* The newest room line of team, malloc'd. */
static char *
last_line(hd_fixture *fx, const char *team)
{
	hd_posts p;
	hd_err err = HD_ERR_INIT;
	char *s;

	assert_hd_ok(hd_room_read(&p, fx->st, team, 0, 500, NULL, &err), &err);
	assert_true(p.n > 0);
	s = strdup(p.items[p.n - 1].body);
	hd_posts_dispose(&p);
	return s;
}

/* Two idle members with no open tasks: the lower id (coder, though
 * tester joined first). The assignment reads as any other. */
static void
test_board_assign__tie_goes_to_the_lowest_id(void **state)
{
	hd_fixture *fx = *state;
	hd_event_filter ef = {0};
	hd_event_list el;
	hd_err err = HD_ERR_INIT;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);
	char *line;

	expect_pick(fx, id, "coder", "idle, 0 open tasks, lowest id of 2 tied");
	line = last_line(fx, "dev");
	assert_string_equal(
	    line, "Task #1 \"Write docs\" assigned to coder by manager.");
	free(line);
	ef.team = "dev";
	ef.kind = "task_claimed";
	ef.limit = 1;
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 1);
	assert_string_equal(
	    json_string_value(json_object_get(el.items[0].data, "owner")),
	    "coder");
	assert_string_equal(
	    json_string_value(json_object_get(el.items[0].data, "by")),
	    "manager");
	assert_true(json_is_true(json_object_get(el.items[0].data, "auto")));
	hd_event_list_dispose(&el);
}

/* Fewer open tasks wins; only claimed and in_progress count. */
static void
test_board_assign__fewest_open_tasks_wins(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", NULL, 0);
	int64_t c = bt_task(fx, "dev", "C", NULL, 0);
	int64_t d = bt_task(fx, "dev", "D", NULL, 0);
	int64_t e = bt_task(fx, "dev", "E", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	expect_pick(fx, b, "tester", "idle, 0 open tasks");
	expect_pick(fx, c, "coder", "idle, 1 open task, lowest id of 2 tied");
	/* coder 2 (a, c), tester 1 (b) */
	expect_pick(fx, d, "tester", "idle, 1 open task");
	/* finished work is not open: coder 0 after completing and failing */
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, a, "coder", NULL, &err), &err);
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, c, "coder", "no time", &err), &err);
	expect_pick(fx, e, "coder", "idle, 0 open tasks");
}

/* working, error, shutdown_requested and shutdown are never picked, even
 * with fewer open tasks; the leader is not a candidate among members. */
static void
test_board_assign__busy_and_stopped_members_are_skipped(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as;
	hd_err err = HD_ERR_INIT;
	const char *const others[] = {"alpha", "beta", "delta", "gamma"};
	const char *const statuses[] = {
	    "error", "shutdown", "shutdown_requested", "working"};
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", NULL, 0);
	size_t i;

	for (i = 0; i < 4; i++) {
		memset(&as, 0, sizeof(as));
		as.id = others[i];
		as.team = "dev";
		assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
		hd_set_agent_status(fx, others[i], statuses[i]);
	}
	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "tester", &err), &err);
	hd_set_agent_status(fx, "coder", "working");
	/* tester, with one open task, is the only idle member */
	expect_pick(fx, b, "tester", "idle, 1 open task");
}

/* Nobody idle: a refusal naming each candidate's status, and nothing
 * written -- no claim, no room line, no event, no message. */
static void
test_board_assign__no_idle_member_is_refused_and_writes_nothing(void **state)
{
	hd_fixture *fx = *state;
	hd_board_pick pick;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);
	int64_t posts, events, now;

	hd_set_agent_status(fx, "coder", "working");
	hd_set_agent_status(fx, "tester", "error");
	assert_hd_ok(hd_room_head(&posts, fx->st, "dev", &err), &err);
	assert_hd_ok(hd_events_head(&events, fx->st, &err), &err);
	assert_hd_err(
	    hd_board_assign_auto(&t, &pick, fx->st, id, "manager", &err),
	    HD_EREFUSED,
	    "no idle member in team dev to assign task 1 to (coder: working, "
	    "tester: error)",
	    &err);
	assert_null(t);
	assert_string_equal(pick.agent, "");
	assert_hd_ok(hd_room_head(&now, fx->st, "dev", &err), &err);
	assert_int_equal(now, posts);
	assert_hd_ok(hd_events_head(&now, fx->st, &err), &err);
	assert_int_equal(now, events);
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_string_equal(t->status, "pending");
	assert_null(t->owner);
	hd_task_free(t);
}

/* More than five busy candidates: five named, the rest counted. */
static void
test_board_assign__refusal_names_five_then_counts(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as;
	hd_err err = HD_ERR_INIT;
	char id[16];
	int64_t task = bt_task(fx, "dev", "Write docs", NULL, 0);
	int i;

	hd_set_agent_status(fx, "coder", "working");
	hd_set_agent_status(fx, "tester", "working");
	for (i = 1; i <= 5; i++) {
		snprintf(id, sizeof(id), "m%d", i);
		memset(&as, 0, sizeof(as));
		as.id = id;
		as.team = "dev";
		assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
		hd_set_agent_status(fx, id, "shutdown");
	}
	assert_hd_err(
	    hd_board_assign_auto(NULL, NULL, fx->st, task, NULL, &err),
	    HD_EREFUSED,
	    "no idle member in team dev to assign task 1 to (coder: working, "
	    "m1: shutdown, m2: shutdown, m3: shutdown, m4: shutdown and 2 "
	    "more)",
	    &err);
}

/* The leader is picked only when it is the team's only member; with
 * members, all busy, it is not (and is not listed as a candidate). */
static void
test_board_assign__leader_only_when_alone(void **state)
{
	hd_fixture *fx = *state;
	hd_board_pick pick;
	hd_err err = HD_ERR_INIT;
	int64_t solo, id;
	char *line;

	hd_fixture_team(fx, "solo", "boss", NULL);
	solo = bt_task(fx, "solo", "Everything", NULL, 0);
	assert_hd_ok(
	    hd_board_assign_auto(NULL, &pick, fx->st, solo, "boss", &err),
	    &err);
	assert_string_equal(pick.agent, "boss");
	assert_string_equal(
	    pick.reason, "idle, 0 open tasks, the team's only member");
	line = last_line(fx, "solo");
	assert_string_equal(
	    line, "Task #1 \"Everything\" assigned to boss by boss.");
	free(line);

	id = bt_task(fx, "dev", "Write docs", NULL, 0);
	hd_set_agent_status(fx, "coder", "working");
	hd_set_agent_status(fx, "tester", "working");
	assert_hd_err(hd_board_assign_auto(NULL, NULL, fx->st, id, NULL, &err),
	    HD_EREFUSED,
	    "no idle member in team dev to assign task 2 to (coder: working, "
	    "tester: working)",
	    &err);
}

/* The task and the actor are checked first, with hd_board_assign's
 * texts; a team with no members at all says so. */
static void
test_board_assign__refusals_before_the_pick(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", &a, 1);
	int64_t lone;

	assert_hd_err(
	    hd_board_assign_auto(NULL, NULL, fx->st, a, "coder", &err),
	    HD_EREFUSED,
	    "only the team leader or a user may assign task 1, "
	    "not coder",
	    &err);
	assert_hd_err(
	    hd_board_assign_auto(NULL, NULL, fx->st, 99, "manager", &err),
	    HD_ENOTFOUND, "task 99 not found", &err);
	hd_set_agent_status(fx, "coder", "working");
	hd_set_agent_status(fx, "tester", "working");
	/* the task's own state comes before anyone's status */
	assert_hd_err(
	    hd_board_assign_auto(NULL, NULL, fx->st, b, "manager", &err),
	    HD_EREFUSED, "task 2 is blocked by 1", &err);
	assert_hd_err(hd_board_assign_auto(NULL, NULL, fx->st, a, "Bad!", &err),
	    HD_EINVAL,
	    "invalid agent name \"Bad!\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	hd_fixture_team(fx, "empty", NULL);
	lone = bt_task(fx, "empty", "Orphan", NULL, 0);
	assert_hd_err(
	    hd_board_assign_auto(NULL, NULL, fx->st, lone, NULL, &err),
	    HD_EREFUSED, "no member in team empty to assign task 3 to", &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_assign__tie_goes_to_the_lowest_id, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__fewest_open_tasks_wins, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__busy_and_stopped_members_are_skipped, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__no_idle_member_is_refused_and_writes_nothing,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__refusal_names_five_then_counts, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__leader_only_when_alone, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__refusals_before_the_pick, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
