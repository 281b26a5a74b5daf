/*
 * test-transitions.c -- the board's state machine (SPEC 4): every
 * operation from every status, allowed or refused with the exact text,
 * and the owner/leader/user rule.
 */
#include <stdio.h>

#include <huddle/events.h>

#include "board-test.h"

enum { PENDING, CLAIMED, IN_PROGRESS, COMPLETED, FAILED, CANCELLED, NST };

static const char *const st_name[NST] = {
    "pending", "claimed", "in_progress", "completed", "failed", "cancelled"};

typedef int (*op_fn)(hd_task **, hd_store *, int64_t, const char *, hd_err *);

static int
op_complete(hd_task **o, hd_store *st, int64_t id, const char *a, hd_err *e)
{
	return hd_board_complete(o, st, id, a, "done", e);
}

static int
op_fail(hd_task **o, hd_store *st, int64_t id, const char *a, hd_err *e)
{
	return hd_board_fail(o, st, id, a, "broken", e);
}

/* Each operation, its target, and the statuses it may leave (SPEC 4). */
static const struct {
	const char *name;
	op_fn fn;
	int to;
	int allowed[NST];
} ops[] = {
    {"start", hd_board_start, IN_PROGRESS, {0, 1, 0, 0, 0, 0}},
    {"complete", op_complete, COMPLETED, {0, 1, 1, 0, 0, 0}},
    {"fail", op_fail, FAILED, {0, 1, 1, 0, 0, 0}},
    {"release", hd_board_release, PENDING, {0, 1, 1, 0, 0, 0}},
    {"cancel", hd_board_cancel, CANCELLED, {1, 1, 1, 0, 0, 0}},
    {"retry", hd_board_retry, PENDING, {0, 0, 0, 0, 1, 0}},
};

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder tester");
}

/* A new task of team dev brought to status s (owner coder when owned). */
static int64_t
task_in(hd_fixture *fx, int s)
{
	hd_err err = HD_ERR_INIT;
	int64_t id = bt_task(fx, "dev", "Write docs", NULL, 0);

	if (s == CANCELLED) {
		assert_hd_ok(
		    hd_board_cancel(NULL, fx->st, id, "user", &err), &err);
		return id;
	}
	if (s == PENDING)
		return id;
	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	if (s == IN_PROGRESS)
		assert_hd_ok(
		    hd_board_start(NULL, fx->st, id, "coder", &err), &err);
	if (s == COMPLETED)
		assert_hd_ok(
		    hd_board_complete(NULL, fx->st, id, "coder", NULL, &err),
		    &err);
	if (s == FAILED)
		assert_hd_ok(
		    hd_board_fail(NULL, fx->st, id, "coder", NULL, &err), &err);
	assert_status(fx, id, st_name[s]);
	return id;
}

static int64_t
events_head(hd_fixture *fx)
{
	hd_err err = HD_ERR_INIT;
	int64_t h = 0;

	assert_hd_ok(hd_events_head(&h, fx->st, &err), &err);
	return h;
}

/* Every operation from every status: the allowed ones land on their
 * target and emit status_changed; the others are refused with the exact
 * text and change nothing. */
static void
test_board_transitions__every_op_from_every_status(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_event_filter ef = {0};
	hd_event_list el;
	char want[128];
	size_t o;
	int s;

	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (s = 0; s < NST; s++) {
			int64_t id = task_in(fx, s), before = events_head(fx);
			hd_task *t = NULL;
			int rc;

			rc = ops[o].fn(&t, fx->st, id, "user", &err);
			if (ops[o].allowed[s]) {
				if (rc != 0)
					fail_msg("%s from %s: %s", ops[o].name,
					    st_name[s], err.msg);
				assert_string_equal(
				    t->status, st_name[ops[o].to]);
				if (ops[o].to == PENDING)
					assert_null(t->owner);
				else if (s != PENDING)
					assert_string_equal(t->owner, "coder");
				hd_task_free(t);
				ef.after_seq = before;
				ef.kind = "status_changed";
				assert_hd_ok(
				    hd_events_list(&el, fx->st, &ef, &err),
				    &err);
				assert_int_equal(el.n, 1);
				assert_string_equal(
				    json_string_value(json_object_get(
					el.items[0].data, "from")),
				    st_name[s]);
				assert_string_equal(
				    json_string_value(json_object_get(
					el.items[0].data, "to")),
				    st_name[ops[o].to]);
				assert_string_equal(
				    json_string_value(json_object_get(
					el.items[0].data, "by")),
				    "user");
				hd_event_list_dispose(&el);
			} else {
				snprintf(want, sizeof(want),
				    "task %lld cannot go from %s to %s",
				    (long long)id, st_name[s],
				    st_name[ops[o].to]);
				if (rc != HD_EREFUSED ||
				    strcmp(err.msg, want) != 0)
					fail_msg("%s from %s: rc %d \"%s\", "
						 "wanted \"%s\"",
					    ops[o].name, st_name[s], rc,
					    err.msg, want);
				assert_null(t);
				assert_status(fx, id, st_name[s]);
				assert_int_equal(events_head(fx), before);
			}
		}
	}
}

/* Claim from every status: only pending (and ready) succeeds; each loser
 * hears the precise reason. */
static void
test_board_transitions__claim_from_every_status(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	char want[128];
	int s;

	for (s = 0; s < NST; s++) {
		int64_t id = task_in(fx, s), before = events_head(fx);
		int rc = hd_board_claim(&t, fx->st, id, "tester", &err);

		if (s == PENDING) {
			assert_int_equal(rc, 0);
			assert_string_equal(t->status, "claimed");
			assert_string_equal(t->owner, "tester");
			assert_true(t->claimed_at > 0);
			hd_task_free(t);
			t = NULL;
			continue;
		}
		if (s == CLAIMED || s == IN_PROGRESS) {
			snprintf(want, sizeof(want),
			    "task %lld is already claimed by coder",
			    (long long)id);
			assert_int_equal(rc, HD_ECONFLICT);
		} else {
			snprintf(want, sizeof(want), "task %lld is %s",
			    (long long)id, st_name[s]);
			assert_int_equal(rc, HD_EREFUSED);
		}
		assert_string_equal(err.msg, want);
		assert_null(t);
		assert_status(fx, id, st_name[s]);
		assert_int_equal(events_head(fx), before);
	}
}

static void
test_board_transitions__owner_leader_or_user(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	int64_t id = task_in(fx, CLAIMED), id2, id3;
	char want[128];

	snprintf(want, sizeof(want), "task %lld is owned by coder, not tester",
	    (long long)id);
	assert_hd_err(hd_board_start(NULL, fx->st, id, "tester", &err),
	    HD_EREFUSED, want, &err);
	assert_hd_err(hd_board_complete(NULL, fx->st, id, "tester", "x", &err),
	    HD_EREFUSED, want, &err);
	assert_hd_err(hd_board_fail(NULL, fx->st, id, "tester", "x", &err),
	    HD_EREFUSED, want, &err);
	assert_hd_err(hd_board_release(NULL, fx->st, id, "tester", &err),
	    HD_EREFUSED, want, &err);
	assert_hd_err(hd_board_cancel(NULL, fx->st, id, "tester", &err),
	    HD_EREFUSED, want, &err);
	assert_status(fx, id, "claimed");
	/* not a member at all */
	assert_hd_err(hd_board_start(NULL, fx->st, id, "ghost", &err),
	    HD_EREFUSED, "no member \"ghost\" in team dev", &err);
	assert_hd_err(hd_board_start(NULL, fx->st, id, "Bad Name", &err),
	    HD_EINVAL,
	    "invalid agent name \"Bad Name\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	/* the owner, the leader and a user may */
	assert_hd_ok(hd_board_start(NULL, fx->st, id, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, id, "manager", "merged", &err), &err);
	assert_string_equal(t->result, "merged");
	assert_string_equal(t->owner, "coder");
	assert_true(t->completed_at > 0);
	hd_task_free(t);
	id2 = task_in(fx, CLAIMED);
	assert_hd_ok(
	    hd_board_fail(&t, fx->st, id2, NULL, "no disk", &err), &err);
	assert_string_equal(t->status, "failed");
	assert_string_equal(t->result, "no disk");
	hd_task_free(t);
	/* retry is owner-checked too, and clears owner and reason */
	snprintf(want, sizeof(want), "task %lld is owned by coder, not tester",
	    (long long)id2);
	assert_hd_err(hd_board_retry(NULL, fx->st, id2, "tester", &err),
	    HD_EREFUSED, want, &err);
	assert_hd_ok(hd_board_retry(&t, fx->st, id2, "coder", &err), &err);
	assert_string_equal(t->status, "pending");
	assert_null(t->owner);
	assert_null(t->result);
	assert_int_equal(t->claimed_at, 0);
	hd_task_free(t);
	/* an unowned task may be cancelled by any member */
	id3 = task_in(fx, PENDING);
	assert_hd_ok(hd_board_cancel(&t, fx->st, id3, "tester", &err), &err);
	assert_string_equal(t->status, "cancelled");
	hd_task_free(t);
	/* release clears the owner and makes the task ready again */
	id3 = task_in(fx, IN_PROGRESS);
	assert_hd_ok(hd_board_release(&t, fx->st, id3, "coder", &err), &err);
	assert_null(t->owner);
	assert_int_equal(t->started_at, 0);
	hd_task_free(t);
	assert_hd_ok(hd_board_claim(&t, fx->st, id3, "tester", &err), &err);
	assert_string_equal(t->owner, "tester");
	hd_task_free(t);
}

static void
test_board_transitions__missing_task(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_board_start(NULL, fx->st, 99, "coder", &err),
	    HD_ENOTFOUND, "task 99 not found", &err);
	assert_hd_err(hd_board_complete(NULL, fx->st, 99, NULL, NULL, &err),
	    HD_ENOTFOUND, "task 99 not found", &err);
	assert_hd_err(hd_board_retry(NULL, fx->st, 99, "user", &err),
	    HD_ENOTFOUND, "task 99 not found", &err);
	assert_hd_err(hd_board_claim(NULL, fx->st, 99, "coder", &err),
	    HD_ENOTFOUND, "task 99 not found", &err);
}

static void
test_board_transitions__result_and_reason_limits(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t id = task_in(fx, CLAIMED);
	char *big = malloc(HD_TASK_RESULT_MAX + 2);

	memset(big, 'r', HD_TASK_RESULT_MAX + 1);
	big[HD_TASK_RESULT_MAX + 1] = '\0';
	assert_hd_err(hd_board_complete(NULL, fx->st, id, "coder", big, &err),
	    HD_EINVAL, "task result is 100001 characters; the limit is 100000",
	    &err);
	big[HD_TASK_REASON_MAX + 1] = '\0';
	assert_hd_err(hd_board_fail(NULL, fx->st, id, "coder", big, &err),
	    HD_EINVAL, "failure reason is 2001 characters; the limit is 2000",
	    &err);
	assert_status(fx, id, "claimed");
	big[HD_TASK_REASON_MAX] = '\0';
	assert_hd_ok(hd_board_fail(NULL, fx->st, id, "coder", big, &err), &err);
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_transitions__every_op_from_every_status, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_transitions__claim_from_every_status, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_transitions__owner_leader_or_user, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_transitions__missing_task, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_transitions__result_and_reason_limits, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
