/*
 * test-create.c -- creating, reading and listing tasks (SPEC 4): fields,
 * the size limits with their exact texts, metadata, dependencies given at
 * create time, comments, list filters and order.
 */
#include <stdio.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "dev: manager coder tester; ops: boss");
}

static char *
repeat(const char *unit, size_t n)
{
	size_t ul = strlen(unit), i;
	char *s = malloc(ul * n + 1);

	for (i = 0; i < n; i++)
		memcpy(s + i * ul, unit, ul);
	s[ul * n] = '\0';
	return s;
}

static void
test_board_create__fields_and_get(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task_spec spec = {0};
	hd_task *t = NULL, *g = NULL;
	hd_task_comment *c = NULL;
	json_t *meta = json_pack("{s:s, s:i}", "area", "docs", "points", 3);
	json_t *j;

	spec.team = "dev";
	spec.subject = "Write docs";
	spec.description = "All of them";
	spec.active_form = "Writing docs";
	spec.priority = 7;
	spec.metadata = meta;
	spec.created_by = "coder";
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	assert_int_equal(t->id, 1);
	assert_string_equal(t->team_id, "dev");
	assert_string_equal(t->subject, "Write docs");
	assert_string_equal(t->description, "All of them");
	assert_string_equal(t->active_form, "Writing docs");
	assert_string_equal(t->status, "pending");
	assert_null(t->owner);
	assert_int_equal(t->priority, 7);
	assert_true(json_equal(t->metadata, meta));
	assert_string_equal(t->created_by, "coder");
	assert_true(t->created_at > 0);
	assert_int_equal(t->ndepends_on, 0);
	hd_task_free(t);

	assert_hd_ok(
	    hd_board_comment(&c, fx->st, 1, "tester", "looks good", &err),
	    &err);
	assert_string_equal(c->author, "tester");
	hd_task_comment_free(c);
	assert_hd_ok(
	    hd_board_comment(NULL, fx->st, 1, NULL, "thanks", &err), &err);
	assert_hd_err(hd_board_comment(NULL, fx->st, 1, "boss", "hi", &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_hd_err(hd_board_comment(NULL, fx->st, 1, "coder", "", &err),
	    HD_EINVAL, "task comment must not be empty", &err);
	assert_hd_err(hd_board_comment(NULL, fx->st, 5, "coder", "x", &err),
	    HD_ENOTFOUND, "task 5 not found", &err);

	assert_hd_ok(hd_board_get(&g, fx->st, 1, &err), &err);
	assert_int_equal(g->ncomments, 2);
	assert_string_equal(g->comments[0].author, "tester");
	assert_string_equal(g->comments[0].body, "looks good");
	assert_string_equal(g->comments[1].author, "user");
	j = hd_task_to_json(g);
	assert_string_equal(
	    json_string_value(json_object_get(j, "subject")), "Write docs");
	assert_int_equal(json_array_size(json_object_get(j, "comments")), 2);
	assert_true(json_is_true(json_object_get(j, "ready")));
	assert_true(json_is_null(json_object_get(j, "owner")));
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(j, "metadata"), "points")),
	    3);
	json_decref(j);
	hd_task_free(g);
	json_decref(meta);

	assert_hd_err(hd_board_get(&g, fx->st, 5, &err), HD_ENOTFOUND,
	    "task 5 not found", &err);
	assert_null(g);
}

static void
test_board_create__refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task_spec spec = {0};
	json_t *arr = json_array();
	char *s;
	int64_t deps[2];
	hd_tasks l;

	spec.team = "dev";
	spec.subject = "";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "task subject must not be empty", &err);
	spec.subject = NULL;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "task subject must not be empty", &err);
	spec.subject = " \t\r\n"; /* blank is empty (hd_text_blank) */
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "task subject must not be empty", &err);
	s = repeat("é", 201); /* characters, not bytes */
	spec.subject = s;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "task subject is 201 characters; the limit is 200", &err);
	s[strlen(s) - 2] = '\0';
	assert_hd_ok(hd_board_create(NULL, fx->st, &spec, &err), &err);
	free(s);
	spec.subject = "Write docs";
	s = repeat("d", 10001);
	spec.description = s;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "task description is 10001 characters; the limit is 10000", &err);
	s[10000] = '\0';
	assert_hd_ok(hd_board_create(NULL, fx->st, &spec, &err), &err);
	free(s);
	spec.description = NULL;
	spec.metadata = arr;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "task metadata must be a JSON object", &err);
	spec.metadata = NULL;
	spec.team = "ghost";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	spec.team = "Dev Team";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "invalid team name \"Dev Team\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	spec.team = "dev";
	spec.created_by = "boss";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EREFUSED,
	    "no member \"boss\" in team dev", &err);
	spec.created_by = NULL;
	/* dependencies: missing, and in another team */
	deps[0] = 1;
	deps[1] = 9;
	spec.depends_on = deps;
	spec.ndepends_on = 2;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_ENOTFOUND,
	    "unknown dependency: task 9", &err);
	deps[1] = bt_task(fx, "ops", "Deploy", NULL, 0);
	{
		char want[64];

		snprintf(want, sizeof(want), "unknown dependency: task %lld",
		    (long long)deps[1]);
		assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err),
		    HD_ENOTFOUND, want, &err);
	}
	/* refusals wrote nothing: dev has the two good tasks only */
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, 2);
	hd_tasks_dispose(&l);
	json_decref(arr);
}

static void
test_board_create__depends_on_at_create(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	int64_t a = bt_task(fx, "dev", "A", NULL, 0);
	int64_t b = bt_task(fx, "dev", "B", NULL, 0);
	int64_t deps[3] = {b, a, b}; /* duplicates collapse */

	spec.team = "dev";
	spec.subject = "C";
	spec.depends_on = deps;
	spec.ndepends_on = 3;
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	assert_int_equal(t->ndepends_on, 2);
	assert_int_equal(t->depends_on[0], a);
	assert_int_equal(t->depends_on[1], b);
	assert_int_equal(t->nblocked_by, 2);
	hd_task_free(t);
}

static void
test_board_list__newest_first_and_filters(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task_spec spec = {0};
	hd_task_filter f;
	hd_tasks l;
	json_t *m1 = json_pack(
	    "{s:s, s:i, s:b}", "area", "docs", "points", 3, "urgent", 1);
	json_t *m2 = json_pack("{s:s, s:i}", "area", "code", "points", 3);
	const char *q[2];
	int64_t t1, t2, t3, t4, dep[1];

	spec.team = "dev";
	spec.subject = "one";
	spec.metadata = m1;
	assert_hd_ok(hd_board_create(NULL, fx->st, &spec, &err), &err);
	spec.subject = "two";
	spec.metadata = m2;
	assert_hd_ok(hd_board_create(NULL, fx->st, &spec, &err), &err);
	t1 = 1;
	t2 = 2;
	dep[0] = t1;
	t3 = bt_task(fx, "dev", "three", dep, 1);
	t4 = bt_task(fx, "dev", "four", NULL, 0);
	bt_task(fx, "ops", "elsewhere", NULL, 0);
	assert_hd_ok(hd_board_claim(NULL, fx->st, t4, "coder", &err), &err);

	/* everything, newest first, only this team */
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.items[0].id, t4);
	assert_int_equal(l.items[1].id, t3);
	assert_int_equal(l.items[2].id, t2);
	assert_int_equal(l.items[3].id, t1);
	assert_int_equal(l.items[1].ndepends_on, 1);
	assert_int_equal(l.items[1].blocked_by[0], t1);
	assert_int_equal(l.items[0].nblocked_by, 0);
	hd_tasks_dispose(&l);

	memset(&f, 0, sizeof(f));
	f.status = "claimed";
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, t4);
	hd_tasks_dispose(&l);

	memset(&f, 0, sizeof(f));
	f.owner = "coder";
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 1);
	hd_tasks_dispose(&l);

	memset(&f, 0, sizeof(f));
	f.ready = 1;
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].id, t2);
	assert_int_equal(l.items[1].id, t1);
	hd_tasks_dispose(&l);

	memset(&f, 0, sizeof(f));
	f.blocked = 1;
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, t3);
	hd_tasks_dispose(&l);

	memset(&f, 0, sizeof(f));
	f.limit = 3;
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.items[2].id, t2);
	hd_tasks_dispose(&l);

	/* metadata: strings, numbers and booleans by their JSON text */
	memset(&f, 0, sizeof(f));
	q[0] = "area=docs";
	f.meta = q;
	f.nmeta = 1;
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, t1);
	hd_tasks_dispose(&l);
	q[0] = "points=3";
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].id, t2);
	hd_tasks_dispose(&l);
	f.limit = 1; /* the limit applies after the metadata filter */
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, t2);
	hd_tasks_dispose(&l);
	f.limit = 0;
	q[1] = "metadata.urgent=true"; /* the SPEC's spelling */
	f.nmeta = 2;
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, t1);
	hd_tasks_dispose(&l);
	q[1] = "area=nothing";
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", &f, &err), &err);
	assert_int_equal(l.n, 0);
	hd_tasks_dispose(&l);

	/* refusals */
	q[0] = "novalue";
	f.nmeta = 1;
	assert_hd_err(hd_board_list(&l, fx->st, "dev", &f, &err), HD_EINVAL,
	    "metadata filter must be KEY=VALUE, not \"novalue\"", &err);
	memset(&f, 0, sizeof(f));
	f.status = "done";
	assert_hd_err(hd_board_list(&l, fx->st, "dev", &f, &err), HD_EINVAL,
	    "unknown task status \"done\": use pending, claimed, in_progress, "
	    "completed, failed or cancelled",
	    &err);
	assert_hd_err(hd_board_list(&l, fx->st, "ghost", NULL, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	json_decref(m1);
	json_decref(m2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_create__fields_and_get, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_create__refusals, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_create__depends_on_at_create, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_list__newest_first_and_filters, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
