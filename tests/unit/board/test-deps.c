/*
 * test-deps.c -- dependencies (SPEC 4): blocked_by is computed, completion
 * unblocks at once, failure keeps dependents blocked, cycles (self, 2, 3)
 * are refused and change nothing; the one-task read names its dependents.
 */
#include <stdio.h>

#include <huddle/events.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder; ops: boss");
}

static void
finish(hd_fixture *fx, int64_t id)
{
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, id, "coder", "ok", &err), &err);
}

static void
expect_blocked(hd_fixture *fx, int64_t id, const char *ids)
{
	hd_err err = HD_ERR_INIT;
	char want[96];

	snprintf(want, sizeof(want), "task %lld is blocked by %s",
	    (long long)id, ids);
	assert_hd_err(hd_board_claim(NULL, fx->st, id, "coder", &err),
	    HD_EREFUSED, want, &err);
	assert_status(fx, id, "pending");
}

/* 1 <- 2 <- 3: each link unblocks only its direct dependent. */
static void
test_board_deps__chain_unblocks_one_link_at_a_time(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char b[64];
	int64_t t1 = bt_task(fx, "dev", "one", NULL, 0);
	int64_t t2 = bt_task(fx, "dev", "two", &t1, 1);
	int64_t t3 = bt_task(fx, "dev", "three", &t2, 1);

	assert_string_equal(bt_blocked(fx, t2, b, sizeof(b)), "1");
	assert_string_equal(bt_blocked(fx, t3, b, sizeof(b)), "2");
	expect_blocked(fx, t2, "1");
	expect_blocked(fx, t3, "2");
	finish(fx, t1);
	assert_string_equal(bt_blocked(fx, t2, b, sizeof(b)), "");
	assert_string_equal(bt_blocked(fx, t3, b, sizeof(b)), "2");
	expect_blocked(fx, t3, "2");
	finish(fx, t2);
	assert_string_equal(bt_blocked(fx, t3, b, sizeof(b)), "");
	assert_hd_ok(hd_board_claim(NULL, fx->st, t3, "coder", &err), &err);
}

/* A task depending on E and F: blocked_by [E,F] -> [F] -> []. */
static void
test_board_deps__two_deps_shrink(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	char b[64], ef[32];
	int64_t e = bt_task(fx, "dev", "E", NULL, 0);
	int64_t f = bt_task(fx, "dev", "F", NULL, 0);
	int64_t deps[2] = {e, f};
	int64_t g = bt_task(fx, "dev", "G", deps, 2);

	snprintf(ef, sizeof(ef), "%lld,%lld", (long long)e, (long long)f);
	assert_string_equal(bt_blocked(fx, g, b, sizeof(b)), ef);
	snprintf(ef, sizeof(ef), "%lld, %lld", (long long)e, (long long)f);
	expect_blocked(fx, g, ef);
	finish(fx, e);
	snprintf(ef, sizeof(ef), "%lld", (long long)f);
	assert_string_equal(bt_blocked(fx, g, b, sizeof(b)), ef);
	expect_blocked(fx, g, ef);
	finish(fx, f);
	assert_string_equal(bt_blocked(fx, g, b, sizeof(b)), "");
	assert_hd_ok(hd_board_get(&t, fx->st, g, &err), &err);
	assert_int_equal(t->ndepends_on, 2); /* depends_on keeps both */
	hd_task_free(t);
	assert_hd_ok(hd_board_claim(NULL, fx->st, g, "coder", &err), &err);
}

/* Only completion unblocks: failed (and cancelled) keep dependents
 * blocked; a retry then completion does unblock. */
static void
test_board_deps__failed_dependency_keeps_blocking(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_tasks l;
	hd_task_filter f = {0};
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", &a, 1);
	int64_t c = bt_task(fx, "dev", "C", NULL, 0);
	int64_t d = bt_task(fx, "dev", "D", &c, 1);

	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, a, "coder", "broke", &err), &err);
	expect_blocked(fx, b, "1");
	assert_hd_ok(hd_board_cancel(NULL, fx->st, c, "user", &err), &err);
	expect_blocked(fx, d, "3");
	f.blocked = 1;
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].id, d);
	assert_int_equal(l.items[1].id, b);
	hd_tasks_dispose(&l);
	/* auto-claim skips blocked tasks */
	assert_hd_err(hd_board_auto_claim(NULL, fx->st, "dev", "coder", &err),
	    HD_ENOTFOUND, "no ready task in team dev", &err);
	assert_hd_ok(hd_board_retry(NULL, fx->st, a, "manager", &err), &err);
	finish(fx, a);
	assert_hd_ok(hd_board_claim(NULL, fx->st, b, "coder", &err), &err);
}

static int64_t
deps_count(hd_fixture *fx, int64_t id)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t n;

	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	n = (int64_t)t->ndepends_on;
	hd_task_free(t);
	return n;
}

static void
test_board_deps__cycles_refused_nothing_changes(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_event_filter ef = {0};
	hd_event_list el;
	hd_task *t = NULL;
	int64_t t1 = bt_task(fx, "dev", "one", NULL, 0);
	int64_t t2 = bt_task(fx, "dev", "two", NULL, 0);
	int64_t t3 = bt_task(fx, "dev", "three", NULL, 0);
	int64_t before;

	/* self */
	assert_hd_err(hd_board_link(NULL, fx->st, t1, t1, NULL, &err),
	    HD_EREFUSED,
	    "linking task 1 to task 1 would create a circular dependency",
	    &err);
	/* 2-cycle: 2 -> 1, then 1 -> 2 */
	assert_hd_ok(hd_board_link(&t, fx->st, t2, t1, "coder", &err), &err);
	assert_int_equal(t->ndepends_on, 1);
	assert_int_equal(t->blocked_by[0], t1);
	hd_task_free(t);
	assert_hd_ok(hd_events_head(&before, fx->st, &err), &err);
	assert_hd_err(hd_board_link(NULL, fx->st, t1, t2, NULL, &err),
	    HD_EREFUSED,
	    "linking task 1 to task 2 would create a circular dependency",
	    &err);
	/* 3-cycle: 3 -> 2 (-> 1), then 1 -> 3 */
	assert_hd_ok(hd_board_link(NULL, fx->st, t3, t2, NULL, &err), &err);
	assert_hd_ok(hd_events_head(&before, fx->st, &err), &err);
	assert_hd_err(hd_board_link(NULL, fx->st, t1, t3, NULL, &err),
	    HD_EREFUSED,
	    "linking task 1 to task 3 would create a circular dependency",
	    &err);
	assert_int_equal(deps_count(fx, t1), 0);
	assert_int_equal(deps_count(fx, t2), 1);
	assert_int_equal(deps_count(fx, t3), 1);
	ef.after_seq = before;
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 0); /* a refusal emits nothing */
	hd_event_list_dispose(&el);
	/* a diamond is not a cycle: 3 -> 1 besides 3 -> 2 -> 1 */
	assert_hd_ok(hd_board_link(NULL, fx->st, t3, t1, NULL, &err), &err);
	assert_int_equal(deps_count(fx, t3), 2);
	/* linking again changes nothing and emits nothing */
	assert_hd_ok(hd_events_head(&before, fx->st, &err), &err);
	assert_hd_ok(hd_board_link(NULL, fx->st, t3, t1, NULL, &err), &err);
	ef.after_seq = before;
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 0);
	hd_event_list_dispose(&el);
}

static void
test_board_deps__link_refusals_and_event(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_event_filter ef = {0};
	hd_event_list el;
	int64_t t1 = bt_task(fx, "dev", "one", NULL, 0);
	int64_t t2 = bt_task(fx, "dev", "two", NULL, 0);
	int64_t o1 = bt_task(fx, "ops", "other", NULL, 0);

	assert_hd_err(hd_board_link(NULL, fx->st, 9, t1, NULL, &err),
	    HD_ENOTFOUND, "task 9 not found", &err);
	assert_hd_err(hd_board_link(NULL, fx->st, t1, 9, NULL, &err),
	    HD_ENOTFOUND, "unknown dependency: task 9", &err);
	assert_hd_err(hd_board_link(NULL, fx->st, t1, o1, NULL, &err),
	    HD_ENOTFOUND, "unknown dependency: task 3", &err);
	assert_hd_err(hd_board_link(NULL, fx->st, t1, t2, "boss", &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_hd_ok(
	    hd_board_link(NULL, fx->st, t2, t1, "manager", &err), &err);
	ef.kind = "dep_linked";
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	assert_int_equal(el.n, 1);
	assert_int_equal(el.items[0].task_id, t2);
	assert_string_equal(el.items[0].agent_id, "manager");
	assert_int_equal(
	    json_integer_value(json_object_get(el.items[0].data, "depends_on")),
	    t1);
	hd_event_list_dispose(&el);
}

/* The one-task read names the tasks waiting on it (dependents), and a
 * comment is in the task's history (task_comment). */
static void
test_board_deps__dependents_and_comment_event(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	hd_event_list el;
	json_t *j;
	int64_t t1 = bt_task(fx, "dev", "one", NULL, 0);
	int64_t t2 = bt_task(fx, "dev", "two", &t1, 1);
	int64_t t3 = bt_task(fx, "dev", "three", NULL, 0);

	assert_hd_ok(hd_board_link(NULL, fx->st, t3, t1, NULL, &err), &err);
	assert_hd_ok(hd_board_get(&t, fx->st, t1, &err), &err);
	assert_int_equal(t->ndependents, 2);
	assert_int_equal(t->dependents[0], t2);
	assert_int_equal(t->dependents[1], t3);
	j = hd_task_to_json(t);
	assert_int_equal(json_array_size(json_object_get(j, "dependents")), 2);
	json_decref(j);
	hd_task_free(t);
	assert_hd_ok(hd_board_get(&t, fx->st, t2, &err), &err);
	assert_int_equal(t->ndependents, 0);
	hd_task_free(t);

	assert_hd_ok(hd_board_comment(NULL, fx->st, t1, "coder", "on it", &err),
	    &err);
	assert_hd_ok(hd_events_list_task(&el, fx->st, "dev", t1, 0, &err), &err);
	assert_int_equal(el.n, 2);
	assert_string_equal(el.items[0].kind, "task_created");
	assert_string_equal(el.items[1].kind, "task_comment");
	assert_string_equal(el.items[1].agent_id, "coder");
	assert_string_equal(
	    json_string_value(json_object_get(el.items[1].data, "by")), "coder");
	assert_int_equal(json_integer_value(
			     json_object_get(el.items[1].data, "comment_id")),
	    1);
	hd_event_list_dispose(&el);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_deps__chain_unblocks_one_link_at_a_time, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_deps__two_deps_shrink, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_deps__failed_dependency_keeps_blocking, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_deps__cycles_refused_nothing_changes, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_deps__link_refusals_and_event, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_deps__dependents_and_comment_event, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
