/*
 * test-claim.c -- claim, assign and auto-claim in one process (SPEC 4):
 * who may claim, the loser's exact reasons, auto-claim's order, and the
 * task_claimed event. Cross-process atomicity is in test-contention.c.
 */
#include <stdio.h>

#include <huddle/events.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "dev: manager coder agent-fast agent-slow; ops: boss");
}

static void
test_board_claim__loser_is_told_who_won(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);

	assert_hd_ok(hd_board_claim(&t, fx->st, id, "agent-fast", &err), &err);
	assert_string_equal(t->owner, "agent-fast");
	hd_task_free(t);
	t = NULL;
	assert_hd_err(hd_board_claim(&t, fx->st, id, "agent-slow", &err),
	    HD_ECONFLICT, "task 1 is already claimed by agent-fast", &err);
	assert_null(t);
	/* the winner claiming again is told the same */
	assert_hd_err(hd_board_claim(NULL, fx->st, id, "agent-fast", &err),
	    HD_ECONFLICT, "task 1 is already claimed by agent-fast", &err);
}

static void
test_board_claim__reasons(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", NULL, 0);
	int64_t deps[2] = {a, b};
	int64_t c = bt_task(fx, "dev", "C", deps, 2);
	int64_t o = bt_task(fx, "ops", "O", NULL, 0);

	assert_hd_err(hd_board_claim(NULL, fx->st, 5, "coder", &err),
	    HD_ENOTFOUND, "task 5 not found", &err);
	assert_hd_err(hd_board_claim(NULL, fx->st, c, "coder", &err),
	    HD_EREFUSED, "task 3 is blocked by 1, 2", &err);
	/* the claimer must be a member of the task's team */
	assert_hd_err(hd_board_claim(NULL, fx->st, o, "coder", &err),
	    HD_EREFUSED, "no member \"coder\" in team ops", &err);
	assert_hd_err(hd_board_claim(NULL, fx->st, a, "ghost", &err),
	    HD_EREFUSED, "no member \"ghost\" in team dev", &err);
	assert_hd_err(hd_board_claim(NULL, fx->st, a, "", &err), HD_EINVAL,
	    "invalid agent name \"\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, a, "coder", NULL, &err), &err);
	assert_hd_err(hd_board_claim(NULL, fx->st, a, "coder", &err),
	    HD_EREFUSED, "task 1 is completed", &err);
	assert_hd_err(hd_board_claim(NULL, fx->st, c, "coder", &err),
	    HD_EREFUSED, "task 3 is blocked by 2", &err);
	(void)o;
}

static void
test_board_claim__event(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_event_filter ef = {0};
	hd_event_list el;
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);

	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	ef.kind = "task_claimed";
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 1);
	assert_string_equal(el.items[0].team_id, "dev");
	assert_int_equal(el.items[0].task_id, a);
	assert_string_equal(el.items[0].agent_id, "coder");
	assert_string_equal(
	    json_string_value(json_object_get(el.items[0].data, "owner")),
	    "coder");
	hd_event_list_dispose(&el);
	ef.kind = "task_created";
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 1);
	assert_string_equal(
	    json_string_value(json_object_get(el.items[0].data, "subject")),
	    "A");
	hd_event_list_dispose(&el);
}

static void
test_board_assign__leader_or_user_only(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", NULL, 0);
	int64_t c = bt_task(fx, "dev", "C", &a, 1);

	assert_hd_err(
	    hd_board_assign(NULL, fx->st, a, "coder", "agent-fast", &err),
	    HD_EREFUSED,
	    "only the team leader or a user may assign task 1, not "
	    "agent-fast",
	    &err);
	assert_hd_err(hd_board_assign(NULL, fx->st, a, "coder", "coder", &err),
	    HD_EREFUSED,
	    "only the team leader or a user may assign task 1, not "
	    "coder",
	    &err);
	assert_hd_err(hd_board_assign(NULL, fx->st, a, "boss", "manager", &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_hd_err(hd_board_assign(NULL, fx->st, a, "coder", "boss", &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_status(fx, a, "pending");
	assert_hd_ok(
	    hd_board_assign(&t, fx->st, a, "coder", "manager", &err), &err);
	assert_string_equal(t->status, "claimed");
	assert_string_equal(t->owner, "coder");
	hd_task_free(t);
	assert_hd_ok(
	    hd_board_assign(&t, fx->st, b, "agent-slow", NULL, &err), &err);
	assert_string_equal(t->owner, "agent-slow");
	hd_task_free(t);
	/* the same loser reasons as a claim */
	assert_hd_err(
	    hd_board_assign(NULL, fx->st, a, "agent-fast", "user", &err),
	    HD_ECONFLICT, "task 1 is already claimed by coder", &err);
	assert_hd_err(
	    hd_board_assign(NULL, fx->st, c, "agent-fast", "user", &err),
	    HD_EREFUSED, "task 3 is blocked by 1", &err);
}

static void
test_board_auto_claim__priority_then_lowest_id(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	static const int64_t prio[] = {0, 5, 5, 9, 0};
	const int64_t want[] = {4, 2, 3, 1, 5};
	size_t i;

	spec.team = "dev";
	spec.subject = "task";
	for (i = 0; i < 5; i++) {
		spec.priority = prio[i];
		assert_hd_ok(hd_board_create(NULL, fx->st, &spec, &err), &err);
	}
	/* task 1 blocks a sixth, high-priority task */
	spec.priority = 100;
	spec.depends_on = &want[3];
	spec.ndepends_on = 1;
	assert_hd_ok(hd_board_create(NULL, fx->st, &spec, &err), &err);
	for (i = 0; i < 5; i++) {
		assert_hd_ok(
		    hd_board_auto_claim(&t, fx->st, "dev", "coder", &err),
		    &err);
		assert_int_equal(t->id, want[i]);
		assert_string_equal(t->owner, "coder");
		if (i == 3) /* task 1 done: 6 becomes ready and goes first */
			assert_hd_ok(hd_board_complete(
					 NULL, fx->st, 1, "coder", NULL, &err),
			    &err);
		hd_task_free(t);
		if (i == 3) {
			assert_hd_ok(hd_board_auto_claim(
					 &t, fx->st, "dev", "agent-fast", &err),
			    &err);
			assert_int_equal(t->id, 6);
			hd_task_free(t);
		}
	}
	assert_hd_err(hd_board_auto_claim(&t, fx->st, "dev", "coder", &err),
	    HD_ENOTFOUND, "no ready task in team dev", &err);
	assert_null(t);
	assert_hd_err(hd_board_auto_claim(&t, fx->st, "dev", "boss", &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_hd_err(hd_board_auto_claim(&t, fx->st, "ghost", "boss", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_claim__loser_is_told_who_won, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_claim__reasons, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_claim__event, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_assign__leader_or_user_only, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_auto_claim__priority_then_lowest_id, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
