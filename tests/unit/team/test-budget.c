/*
 * test-budget.c -- budgets (SPEC 8.2): setting them and every refusal,
 * spend recorded with or without a limit, cap versus warn, and the
 * crossing reported once.
 */
#include <string.h>

#include <huddle/budget.h>

#include "testutil.h"

static void
test_budget__set_and_its_refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_budget *b = NULL;
	hd_budgets l;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_err(hd_budget_set(NULL, fx->st, "org", "dev", 5, "cap", &err),
	    HD_EINVAL, "invalid budget scope \"org\": use team or agent", &err);
	assert_hd_err(
	    hd_budget_set(NULL, fx->st, "team", "dev", 5, "stop", &err),
	    HD_EINVAL, "invalid budget mode \"stop\": use warn or cap", &err);
	assert_hd_err(
	    hd_budget_set(NULL, fx->st, "team", "dev", -1, "cap", &err),
	    HD_EINVAL, "budget limit must be between 0 and 1000000000 cents",
	    &err);
	assert_hd_err(
	    hd_budget_set(NULL, fx->st, "team", "ghost", 5, "cap", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(
	    hd_budget_set(NULL, fx->st, "agent", "ghost", 5, "cap", &err),
	    HD_ENOTFOUND, "agent \"ghost\" not found", &err);
	assert_hd_err(
	    hd_budget_set(NULL, fx->st, "agent", "Bad!", 5, "cap", &err),
	    HD_EINVAL,
	    "invalid agent name \"Bad!\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	assert_hd_err(hd_budget_get(&b, fx->st, "agent", "coder", &err),
	    HD_ENOTFOUND, "no budget for agent coder", &err);

	assert_hd_ok(
	    hd_budget_set(&b, fx->st, "agent", "coder", 250, "cap", &err),
	    &err);
	assert_string_equal(b->scope, "agent");
	assert_string_equal(b->subject, "coder");
	assert_int_equal(b->limit_cents, 250);
	assert_string_equal(b->mode, "cap");
	assert_int_equal(b->spent_microcents, 0);
	hd_budget_free(b);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 1000, "warn", &err),
	    &err);
	assert_hd_ok(hd_budget_list(&l, fx->st, NULL, NULL, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].scope, "agent");
	assert_string_equal(l.items[1].scope, "team");
	hd_budgets_dispose(&l);
	assert_hd_ok(hd_budget_list(&l, fx->st, "team", NULL, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].subject, "dev");
	hd_budgets_dispose(&l);
}

static void
test_budget__spend_cap_and_warn(void **state)
{
	hd_fixture *fx = *state;
	hd_budget *b = NULL;
	hd_err err = HD_ERR_INIT;
	const char *which = "x";
	int crossed = -1;
	json_t *j;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	/* spend is tracked without a limit */
	assert_hd_ok(
	    hd_budget_charge(&crossed, fx->st, "dev", "coder", 400000, &err),
	    &err);
	assert_int_equal(crossed, 0);
	/* the row exists now: a charge adds to it */
	assert_hd_ok(
	    hd_budget_charge(&crossed, fx->st, "dev", "coder", 150000, &err),
	    &err);
	assert_int_equal(crossed, 0);
	assert_hd_ok(hd_budget_get(&b, fx->st, "agent", "coder", &err), &err);
	assert_int_equal(b->spent_microcents, 550000);
	hd_budget_free(b);
	assert_hd_ok(hd_budget_get(&b, fx->st, "team", "dev", &err), &err);
	assert_int_equal(b->spent_microcents, 550000);
	hd_budget_free(b);
	assert_hd_ok(
	    hd_budget_charge(&crossed, fx->st, "dev", "coder", 0, &err), &err);
	assert_hd_ok(hd_budget_get(&b, fx->st, "agent", "coder", &err), &err);
	assert_int_equal(b->spent_microcents, 550000);
	assert_int_equal(b->limit_cents, -1);
	assert_string_equal(b->mode, "warn");
	assert_int_equal(hd_budget_over(b), 0);
	hd_budget_free(b);

	/* a limit set later counts what was spent: 1 cent = 10^6 */
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "coder", 1, "cap", &err),
	    &err);
	assert_hd_ok(
	    hd_budget_paused(&which, fx->st, "dev", "coder", &err), &err);
	assert_null(which);
	assert_hd_ok(
	    hd_budget_charge(&crossed, fx->st, "dev", "coder", 449999, &err),
	    &err);
	assert_int_equal(crossed, 0); /* 999,999: just under */
	assert_hd_ok(
	    hd_budget_charge(&crossed, fx->st, "dev", "coder", 1, &err), &err);
	assert_int_equal(crossed, HD_BUDGET_CROSSED_CAP); /* at: paused */
	assert_hd_ok(
	    hd_budget_paused(&which, fx->st, "dev", "coder", &err), &err);
	assert_string_equal(which, "agent");
	assert_hd_ok(
	    hd_budget_charge(&crossed, fx->st, "dev", "coder", 5, &err), &err);
	assert_int_equal(crossed, 0); /* already over: crossed once */

	assert_hd_ok(hd_budget_get(&b, fx->st, "agent", "coder", &err), &err);
	j = hd_budget_to_json(b);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "spent_microcents")),
	    1000005);
	assert_true(json_is_true(json_object_get(j, "paused")));
	json_decref(j);
	hd_budget_free(b);

	/* warn: over, never paused; the team goes first */
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "coder", 1, "warn", &err),
	    &err);
	assert_hd_ok(
	    hd_budget_paused(&which, fx->st, "dev", "coder", &err), &err);
	assert_null(which);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 1, "cap", &err), &err);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "coder", 1, "cap", &err),
	    &err);
	assert_hd_ok(
	    hd_budget_paused(&which, fx->st, "dev", "coder", &err), &err);
	assert_string_equal(which, "team");
	assert_hd_ok(hd_budget_get(&b, fx->st, "team", "dev", &err), &err);
	assert_int_equal(b->spent_microcents, 1000005);
	hd_budget_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_budget__set_and_its_refusals),
	    hd_fixture_test(test_budget__spend_cap_and_warn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
