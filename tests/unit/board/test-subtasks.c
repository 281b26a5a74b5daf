/*
 * test-subtasks.c -- subtasks and the board's runaway caps (issue 22
 * item 3): parent_id and children on every read, a parent of the same
 * team, the caps on children, depth and new roots per agent (each
 * refusal naming the cap and what to do instead), a parent that cannot
 * complete while a subtask is open, and comments reflected into the room.
 */
#include <stdio.h>

#include <huddle/room.h>
#include <huddle/team.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder; ops: boss");
}

/* Create subject in dev under parent (0: a root) as actor; its id. */
static int64_t
sub(hd_fixture *fx, const char *subject, int64_t parent, const char *actor)
{
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id;

	spec.team = "dev";
	spec.subject = subject;
	spec.parent_id = parent;
	spec.created_by = actor;
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	id = t->id;
	hd_task_free(t);
	return id;
}

/* The create hd_board_create refuses, with its code and text. */
static void
sub_refused(hd_fixture *fx, int64_t parent, const char *actor, int code,
    const char *text)
{
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;

	spec.team = "dev";
	spec.subject = "One too many";
	spec.parent_id = parent;
	spec.created_by = actor;
	assert_hd_err(
	    hd_board_create(&t, fx->st, &spec, &err), code, text, &err);
	assert_null(t);
}

static void
set_caps(hd_fixture *fx, int children, int depth, int roots, int window)
{
	hd_team_spec ts = {0};
	hd_team *team = NULL;
	hd_err err = HD_ERR_INIT;

	ts.id = "dev";
	ts.max_children = children;
	ts.max_task_depth = depth;
	ts.max_new_roots = roots;
	ts.new_roots_window_s = window;
	assert_hd_ok(hd_team_update(&team, fx->st, &ts, &err), &err);
	hd_team_free(team);
}

static void
test_board_subtasks__parent_and_children_on_every_read(void **state)
{
	hd_fixture *fx = *state;
	hd_task *t = NULL;
	hd_tasks l;
	json_t *j;
	hd_err err = HD_ERR_INIT;
	int64_t root = sub(fx, "Release", 0, NULL);
	int64_t a = sub(fx, "Changelog", root, "coder");
	int64_t b = sub(fx, "Tag", root, NULL);

	assert_hd_ok(hd_board_get(&t, fx->st, root, &err), &err);
	j = hd_task_to_json(t);
	assert_true(json_is_null(json_object_get(j, "parent_id")));
	assert_int_equal(json_array_size(json_object_get(j, "children")), 2);
	assert_int_equal(json_integer_value(
			     json_array_get(json_object_get(j, "children"), 0)),
	    a);
	assert_int_equal(json_integer_value(
			     json_array_get(json_object_get(j, "children"), 1)),
	    b);
	json_decref(j);
	hd_task_free(t);

	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.items[0].id, b); /* newest first */
	assert_int_equal(l.items[0].parent_id, root);
	assert_int_equal(l.items[0].nchildren, 0);
	assert_int_equal(l.items[2].id, root);
	assert_int_equal(l.items[2].nchildren, 2);
	j = hd_task_to_json(&l.items[1]);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "parent_id")), root);
	json_decref(j);
	hd_tasks_dispose(&l);
}

/* A parent must exist in the same team and still be open to work. */
static void
test_board_subtasks__parent_of_the_same_team_only(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t root = sub(fx, "Release", 0, NULL);

	spec.team = "ops";
	spec.subject = "Elsewhere";
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	sub_refused(fx, t->id, NULL, HD_ENOTFOUND, "unknown parent: task 2");
	hd_task_free(t);
	sub_refused(fx, 99, NULL, HD_ENOTFOUND, "unknown parent: task 99");
	sub_refused(fx, -1, NULL, HD_ENOTFOUND, "unknown parent: task -1");
	assert_hd_ok(hd_board_cancel(NULL, fx->st, root, NULL, &err), &err);
	sub_refused(fx, root, NULL, HD_EREFUSED,
	    "cannot add a subtask to task 1: it is cancelled");
}

/* max_children counts open subtasks: finishing one makes room. */
static void
test_board_subtasks__children_cap(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t root = sub(fx, "Release", 0, NULL);
	int64_t a;

	set_caps(fx, 2, 0, 0, 0);
	a = sub(fx, "A", root, "coder");
	sub(fx, "B", root, "coder");
	sub_refused(fx, root, "coder", HD_EREFUSED,
	    "task 1 already has 2 subtasks (the team's max_children); finish "
	    "or cancel some, or raise it with huddle team update dev "
	    "--max-children N");
	assert_hd_ok(hd_board_cancel(NULL, fx->st, a, "coder", &err), &err);
	sub(fx, "C", root, "coder");
}

/* A root is depth 0; with max_task_depth 2 a task at depth 3 is
 * refused; raised to 3, it fits. */
static void
test_board_subtasks__depth_cap(void **state)
{
	hd_fixture *fx = *state;
	int64_t d0 = sub(fx, "Root", 0, NULL);
	int64_t d1 = sub(fx, "Child", d0, NULL);
	int64_t d2 = sub(fx, "Grandchild", d1, NULL);

	sub_refused(fx, d2, NULL, HD_EREFUSED,
	    "a subtask of task 3 would be at depth 3, deeper than the team's "
	    "max_task_depth 2 (a root task is at depth 0); add it under a "
	    "shallower task, or raise it with huddle team update dev "
	    "--max-task-depth N");
	set_caps(fx, 0, 3, 0, 0);
	sub(fx, "Great-grandchild", d2, NULL);
}

/* An agent's root tasks per window are capped; its subtasks and a
 * user's roots are not. */
static void
test_board_subtasks__new_roots_cap(void **state)
{
	hd_fixture *fx = *state;
	int64_t r1;

	set_caps(fx, 0, 0, 2, 60);
	r1 = sub(fx, "One", 0, "coder");
	sub(fx, "Two", 0, "coder");
	sub_refused(fx, 0, "coder", HD_EREFUSED,
	    "coder already created 2 root tasks in the last 60 s (the team's "
	    "max_new_roots); make this a subtask of one of them, wait, or "
	    "raise it with huddle team update dev --max-new-roots N");
	sub(fx, "A subtask instead", r1, "coder");
	sub(fx, "Another agent's", 0, "manager");
	sub(fx, "A user's", 0, NULL);
	sub(fx, "And another", 0, "user");
}

/* A parent cannot complete while a subtask is pending, claimed or in
 * progress; the refusal names them and changes nothing. */
static void
test_board_subtasks__parent_waits_for_open_children(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t root = sub(fx, "Release", 0, NULL);
	int64_t a = sub(fx, "A", root, NULL);
	int64_t b = sub(fx, "B", root, NULL);
	int64_t c = sub(fx, "C", root, NULL);

	assert_hd_ok(hd_board_claim(NULL, fx->st, root, "coder", &err), &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, b, "coder", &err), &err);
	assert_hd_ok(hd_board_cancel(NULL, fx->st, c, NULL, &err), &err);
	assert_hd_err(
	    hd_board_complete(NULL, fx->st, root, "coder", NULL, &err),
	    HD_EREFUSED,
	    "task 1 cannot complete: its subtasks #2, #3 are still open", &err);
	assert_status(fx, root, "claimed");
	assert_hd_ok(hd_board_claim(NULL, fx->st, a, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, a, "coder", NULL, &err), &err);
	assert_hd_err(
	    hd_board_complete(NULL, fx->st, root, "coder", NULL, &err),
	    HD_EREFUSED, "task 1 cannot complete: its subtask #3 is still open",
	    &err);
	/* failing the parent is not refused: only completion waits */
	assert_hd_ok(
	    hd_board_fail(NULL, fx->st, b, "coder", "no time", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, root, "coder", "done", &err), &err);
	assert_status(fx, root, "completed");
}

/* A comment is a board change the room hears of, cut at 200 chars. */
static void
test_board_subtasks__comment_is_reflected(void **state)
{
	hd_fixture *fx = *state;
	hd_posts p;
	hd_err err = HD_ERR_INIT;
	char body[301], want[400];
	int64_t id = sub(fx, "Write docs", 0, NULL);

	memset(body, 'x', 300);
	body[300] = '\0';
	assert_hd_ok(
	    hd_board_comment(NULL, fx->st, id, "coder", "short one", &err),
	    &err);
	assert_hd_ok(
	    hd_board_comment(NULL, fx->st, id, NULL, body, &err), &err);
	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_int_equal(p.n, 3);
	assert_string_equal(p.items[1].body,
	    "Comment on task #1 \"Write docs\" by coder: short one");
	snprintf(want, sizeof(want),
	    "Comment on task #1 \"Write docs\" by user: %.200s", body);
	assert_string_equal(p.items[2].body, want);
	assert_string_equal(p.items[2].kind, "system");
	hd_posts_dispose(&p);
	/* a refused comment says nothing */
	assert_hd_err(hd_board_comment(NULL, fx->st, id, "boss", "hi", &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_int_equal(p.n, 3);
	hd_posts_dispose(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__parent_and_children_on_every_read, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__parent_of_the_same_team_only, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__children_cap, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__depth_cap, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__new_roots_cap, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__parent_waits_for_open_children, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_subtasks__comment_is_reflected, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
