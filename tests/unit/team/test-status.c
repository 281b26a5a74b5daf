/*
 * test-status.c -- the team and agent status setters: validation with the
 * exact texts, the no-op on an unchanged status, and the events the
 * dashboard follows.
 */
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder");
}

static void
test_status__agent(void **state)
{
	hd_fixture *fx = *state;
	hd_agent *a = NULL;
	hd_event_filter f = {0};
	hd_event_list l = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(
	    hd_agent_set_status(fx->st, "coder", "working", &err), &err);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->status, "working");
	assert_true(a->last_active_at > 0);
	hd_agent_free(a);
	/* the same status again: no change, no event */
	assert_hd_ok(
	    hd_agent_set_status(fx->st, "coder", "working", &err), &err);
	assert_int_equal(hd_count_events(fx->st, NULL, "agent_status"), 1);
	f.kind = "agent_status";
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_string_equal(l.items[0].agent_id, "coder");
	assert_string_equal(l.items[0].team_id, "dev");
	assert_string_equal(
	    json_string_value(json_object_get(l.items[0].data, "from")),
	    "idle");
	assert_string_equal(
	    json_string_value(json_object_get(l.items[0].data, "to")),
	    "working");
	hd_event_list_dispose(&l);

	assert_hd_err(hd_agent_set_status(fx->st, "coder", "busy", &err),
	    HD_EINVAL,
	    "invalid agent status \"busy\": use idle, working, "
	    "shutdown_requested, shutdown or error",
	    &err);
	assert_hd_err(hd_agent_set_status(fx->st, "ghost", "idle", &err),
	    HD_ENOTFOUND, "agent \"ghost\" not found", &err);
}

/* The conditional setter engines use: only from the expected status. */
static void
test_status__agent_if(void **state)
{
	hd_fixture *fx = *state;
	hd_agent *a = NULL;
	hd_event_filter f = {0};
	hd_event_list l = {0};
	hd_err err = HD_ERR_INIT;
	int changed = -1;

	assert_hd_ok(hd_agent_set_status_if(fx->st, NULL, "coder", "idle",
			 "working", &changed, &err),
	    &err);
	assert_int_equal(changed, 1);
	assert_int_equal(hd_count_events(fx->st, NULL, "agent_status"), 1);
	/* not in `from`: left alone, no event, no error */
	assert_hd_ok(hd_agent_set_status_if(fx->st, NULL, "coder", "idle",
			 "working", &changed, &err),
	    &err);
	assert_int_equal(changed, 0);
	assert_hd_ok(hd_agent_set_status(fx->st, "coder", "shutdown", &err),
	    &err);
	assert_hd_ok(hd_agent_set_status_if(fx->st, NULL, "coder", "working",
			 "idle", &changed, &err),
	    &err);
	assert_int_equal(changed, 0);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->status, "shutdown");
	hd_agent_free(a);
	assert_int_equal(hd_count_events(fx->st, NULL, "agent_status"), 2);
	assert_hd_ok(hd_agent_set_status_if(fx->st, NULL, "ghost", "idle",
			 "working", &changed, &err),
	    &err);
	assert_int_equal(changed, 0);
	/* a team named by the caller must be the agent's; the event carries
	 * it, as it carries the team read back */
	hd_fixture_team(fx, "ops", "sre", NULL);
	assert_hd_ok(hd_agent_set_status_if(fx->st, "ops", "manager", "idle",
			 "working", &changed, &err),
	    &err);
	assert_int_equal(changed, 0);
	assert_hd_ok(hd_agent_set_status_if(fx->st, "dev", "manager", "idle",
			 "working", &changed, &err),
	    &err);
	assert_int_equal(changed, 1);
	f.kind = "agent_status";
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 3); /* oldest first */
	assert_string_equal(l.items[2].agent_id, "manager");
	assert_string_equal(l.items[2].team_id, "dev");
	assert_string_equal(
	    json_string_value(json_object_get(l.items[2].data, "to")),
	    "working");
	hd_event_list_dispose(&l);
	assert_int_equal(hd_agent_set_status_if(fx->st, "Bad Team", "manager",
			     "working", "idle", NULL, &err),
	    HD_EINVAL);
	assert_hd_err(hd_agent_set_status_if(
			  fx->st, NULL, "coder", "idle", "busy", NULL, &err),
	    HD_EINVAL,
	    "invalid agent status \"busy\": use idle, working, "
	    "shutdown_requested, shutdown or error",
	    &err);
}

static void
test_status__agent_with_a_reason(void **state)
{
	hd_fixture *fx = *state;
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_agent_set_status_reason(
			 fx->st, "coder", "error", "exit status 1", &err),
	    &err);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->status, "error");
	assert_string_equal(a->status_reason, "exit status 1");
	hd_agent_free(a);
	/* the same status, another reason: written, no second event */
	assert_hd_ok(hd_agent_set_status_reason(
			 fx->st, "coder", "error", "exit status 2", &err),
	    &err);
	assert_int_equal(hd_count_events(fx->st, NULL, "agent_status"), 1);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->status_reason, "exit status 2");
	hd_agent_free(a);
	/* NULL clears it */
	assert_hd_ok(hd_agent_set_status_reason(
			 fx->st, "coder", "idle", NULL, &err),
	    &err);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_null(a->status_reason);
	hd_agent_free(a);
	assert_hd_err(hd_agent_set_status_reason(
			  fx->st, "coder", "gone", "x", &err),
	    HD_EINVAL,
	    "invalid agent status \"gone\": use idle, working, "
	    "shutdown_requested, shutdown or error",
	    &err);
	assert_hd_err(hd_agent_set_status_reason(
			  fx->st, "coder", "error", "", &err),
	    HD_EINVAL, "status reason must not be empty", &err);
	assert_hd_err(hd_agent_set_status_reason(
			  fx->st, "ghost", "error", "x", &err),
	    HD_ENOTFOUND, "agent \"ghost\" not found", &err);
}

static void
test_status__team(void **state)
{
	hd_fixture *fx = *state;
	hd_team *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(
	    hd_team_set_status(fx->st, "dev", "shutting_down", &err), &err);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_string_equal(t->status, "shutting_down");
	hd_team_free(t);
	assert_hd_ok(
	    hd_team_set_status(fx->st, "dev", "shutting_down", &err), &err);
	assert_int_equal(hd_count_events(fx->st, NULL, "team_status"), 1);
	assert_hd_err(hd_team_set_status(fx->st, "dev", "paused", &err),
	    HD_EINVAL,
	    "invalid team status \"paused\": use active, shutting_down or "
	    "shutdown",
	    &err);
	assert_hd_err(hd_team_set_status(fx->st, "ghost", "active", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_status__agent, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_status__agent_if, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_status__agent_with_a_reason, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_status__team, setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
