/*
 * test-events.c -- the event log: filters, tail and resume order, a read of
 * several kinds at once, one task's history, that an event written
 * inside a rolled-back transaction leaves no trace, and that a change
 * whose event cannot be written is refused as a whole (a reflection's
 * failed event drops the reflection alone).
 */
#include <string.h>

#include <huddle/board.h>
#include <huddle/events.h>
#include <huddle/room.h>

#include <store/store.h>

#include "testutil.h"

static void
test_events__filters_and_tail_order(void **state)
{
	hd_fixture *fx = *state;
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;

	hd_events_append(fx->st, "task_created", "dev", 5, "coder",
	    json_pack("{s:s}", "subject", "Write docs"));
	hd_events_append(fx->st, "task_claimed", "dev", 5, "coder", NULL);
	hd_events_append(fx->st, "task_created", "ops", 6, NULL, NULL);

	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.items[0].seq, 1);
	assert_string_equal(l.items[0].kind, "task_created");
	assert_int_equal(l.items[0].task_id, 5);
	assert_string_equal(l.items[0].agent_id, "coder");
	assert_string_equal(
	    json_string_value(json_object_get(l.items[0].data, "subject")),
	    "Write docs");
	assert_int_equal(json_object_size(l.items[1].data), 0);
	assert_null(l.items[2].agent_id);
	hd_event_list_dispose(&l);

	f.team = "dev";
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	hd_event_list_dispose(&l);

	f.team = NULL;
	f.kind = "task_created";
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[1].team_id, "ops");
	hd_event_list_dispose(&l);

	/* The newest N, oldest first. */
	f.kind = NULL;
	f.limit = 2;
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].seq, 2);
	assert_int_equal(l.items[1].seq, 3);
	hd_event_list_dispose(&l);

	/* Resume after a seq. */
	f.limit = 0;
	f.after_seq = 1;
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].seq, 2);
	hd_event_list_dispose(&l);

	f.limit = 10001;
	assert_hd_err(hd_events_list(&l, fx->st, &f, &err), HD_EINVAL,
	    "limit must be between 1 and 10000, not 10001", &err);
}

/* A raw append answers with the seq the event got. */
static void
test_events__raw_append_returns_its_seq(void **state)
{
	hd_fixture *fx = *state;
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	int64_t a, b;

	a = hd_events_append_raw(fx->st, "x", NULL, 0, NULL, "{\"n\":1}");
	b = hd_events_append_raw(fx->st, "y", NULL, 0, NULL, NULL);
	assert_true(a > 0);
	assert_int_equal(b, a + 1);
	f.after_seq = a - 1;
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].seq, a);
	assert_string_equal(l.items[0].kind, "x");
	assert_int_equal(l.items[1].seq, b);
	assert_string_equal(l.items[1].kind, "y");
	hd_event_list_dispose(&l);
}

/* Several kinds in one read: what one read per kind gives, merged by seq. */
static void
test_events__several_kinds_in_seq_order(void **state)
{
	hd_fixture *fx = *state;
	static const char *const two[] = {"task_claimed", "status_changed"};
	static const char *const five[] = {"a", "b", "c", "d", "e"};
	static const char *const with_null[] = {"task_claimed", NULL};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;

	hd_events_append(fx->st, "task_claimed", "dev", 5, "coder",
	    json_pack("{s:s}", "owner", "coder"));
	hd_events_append(fx->st, "task_created", "dev", 6, NULL, NULL);
	hd_events_append(fx->st, "status_changed", "ops", 7, NULL, NULL);
	hd_events_append(fx->st, "status_changed", "dev", 5, NULL,
	    json_pack("{s:s}", "to", "completed"));
	hd_events_append(fx->st, "task_claimed", "dev", 8, "coder", NULL);
	hd_events_append(fx->st, "turn_started", "dev", 0, "coder", NULL);

	assert_hd_ok(hd_events_list_kinds(
			 &l, fx->st, "dev", two, 2, 0, 0, &err),
	    &err);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.items[0].seq, 1);
	assert_string_equal(l.items[0].kind, "task_claimed");
	assert_string_equal(
	    json_string_value(json_object_get(l.items[0].data, "owner")),
	    "coder");
	assert_int_equal(l.items[1].seq, 4);
	assert_string_equal(l.items[1].kind, "status_changed");
	assert_int_equal(l.items[1].task_id, 5);
	assert_int_equal(l.items[2].seq, 5);
	hd_event_list_dispose(&l);

	/* after a seq, any team, a limit */
	assert_hd_ok(hd_events_list_kinds(
			 &l, fx->st, NULL, two, 2, 1, 2, &err),
	    &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].seq, 3);
	assert_string_equal(l.items[0].team_id, "ops");
	assert_int_equal(l.items[1].seq, 4);
	hd_event_list_dispose(&l);

	/* one kind: the same as hd_events_list with that kind */
	assert_hd_ok(hd_events_list_kinds(
			 &l, fx->st, "dev", two + 1, 1, 0, 0, &err),
	    &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].seq, 4);
	hd_event_list_dispose(&l);

	assert_hd_err(hd_events_list_kinds(
			  &l, fx->st, "dev", five, 5, 0, 0, &err),
	    HD_EINVAL, "between 1 and 4 kinds, not 5", &err);
	assert_hd_err(hd_events_list_kinds(
			  &l, fx->st, "dev", two, 0, 0, 0, &err),
	    HD_EINVAL, "between 1 and 4 kinds, not 0", &err);
	assert_hd_err(hd_events_list_kinds(
			  &l, fx->st, "dev", with_null, 2, 0, 0, &err),
	    HD_EINVAL, "a kind is required", &err);
	assert_hd_err(hd_events_list_kinds(
			  &l, fx->st, "dev", two, 2, 0, 10001, &err),
	    HD_EINVAL, "limit must be between 1 and 10000, not 10001", &err);
}

static int
append_then_fail(hd_store *st, void *payload, hd_err *err)
{
	(void)payload;
	hd_events_append(st, "team_created", "ghost", 0, NULL, NULL);
	return hd_err_set(err, HD_EREFUSED, "refused on purpose");
}

static void
test_events__rolled_back_with_the_change_they_describe(void **state)
{
	hd_fixture *fx = *state;
	int64_t head = -1;
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_store_write(fx->st, append_then_fail, NULL, &err),
	    HD_EREFUSED, "refused on purpose", &err);
	assert_hd_ok(hd_events_head(&head, fx->st, &err), &err);
	assert_int_equal(head, 0);
}

static void
test_events__team_changes_are_logged(void **state)
{
	hd_fixture *fx = *state;
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].kind, "team_created");
	assert_string_equal(l.items[1].kind, "agent_added");
	assert_string_equal(l.items[1].agent_id, "manager");
	assert_true(json_is_true(json_object_get(l.items[1].data, "leader")));
	assert_int_equal(strlen(l.items[1].id), 36);
	hd_event_list_dispose(&l);
}

/* One task's history: its events in its team, the newest `limit`,
 * oldest first; another task's or team's are not in it. */
static void
test_events__one_tasks_history(void **state)
{
	hd_fixture *fx = *state;
	hd_event_list l;
	hd_err err = HD_ERR_INIT;

	hd_events_append(fx->st, "task_created", "dev", 5, NULL, NULL);
	hd_events_append(fx->st, "task_created", "dev", 6, NULL, NULL);
	hd_events_append(fx->st, "task_claimed", "dev", 5, "coder", NULL);
	hd_events_append(fx->st, "task_created", "ops", 5, NULL, NULL);
	hd_events_append(fx->st, "status_changed", "dev", 5, "coder", NULL);

	assert_hd_ok(hd_events_list_task(&l, fx->st, "dev", 5, 0, &err), &err);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.items[0].seq, 1);
	assert_string_equal(l.items[1].kind, "task_claimed");
	assert_int_equal(l.items[2].seq, 5);
	hd_event_list_dispose(&l);

	assert_hd_ok(hd_events_list_task(&l, fx->st, "dev", 5, 2, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].seq, 3);
	assert_int_equal(l.items[1].seq, 5);
	hd_event_list_dispose(&l);

	assert_hd_ok(hd_events_list_task(&l, fx->st, "dev", 7, 0, &err), &err);
	assert_int_equal(l.n, 0);
	hd_event_list_dispose(&l);
	assert_hd_err(hd_events_list_task(&l, fx->st, "dev", 5, 10001, &err),
	    HD_EINVAL, "limit must be between 1 and 10000, not 10001", &err);
}

/* The events table refuses inserts (of kind `only`, or all when NULL)
 * for the rest of the connection's life: a temporary trigger. */
static void
refuse_events(hd_fixture *fx, const char *only)
{
	hd_err err = HD_ERR_INIT;

	if (strcmp(hd_store_backend_name(fx->st), "postgresql") == 0) {
		/* PostgreSQL has no temporary triggers: the fixture's
		 * database is the test's own, so a trigger on it is too */
		assert_hd_ok(hd_store_exec(fx->st,
				 only == NULL
				     ? "CREATE FUNCTION refuse() RETURNS trigger"
				       " LANGUAGE plpgsql AS $$ BEGIN RAISE"
				       " 'events refused by the test'; END $$;"
				       "CREATE TRIGGER refuse BEFORE INSERT ON"
				       " events FOR EACH ROW EXECUTE FUNCTION"
				       " refuse()"
				     : "CREATE FUNCTION refuse() RETURNS trigger"
				       " LANGUAGE plpgsql AS $$ BEGIN RAISE"
				       " 'events refused by the test'; END $$;"
				       "CREATE TRIGGER refuse BEFORE INSERT ON"
				       " events FOR EACH ROW WHEN (NEW.kind ="
				       " 'team_chat_post') EXECUTE FUNCTION"
				       " refuse()",
				 &err),
		    &err);
		return;
	}
	assert_hd_ok(hd_store_exec(fx->st,
			 only == NULL
			     ? "CREATE TEMP TRIGGER refuse BEFORE INSERT ON"
			       " main.events BEGIN SELECT RAISE(ABORT,"
			       " 'events refused by the test'); END"
			     : "CREATE TEMP TRIGGER refuse BEFORE INSERT ON"
			       " main.events WHEN NEW.kind = 'team_chat_post'"
			       " BEGIN SELECT RAISE(ABORT,"
			       " 'events refused by the test'); END",
			 &err),
	    &err);
}

static size_t
room_size(hd_fixture *fx)
{
	hd_posts l;
	hd_err err = HD_ERR_INIT;
	size_t n;

	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 500, NULL, &err), &err);
	n = l.n;
	hd_posts_dispose(&l);
	return n;
}

/* A post or a task whose event cannot be written is not written either:
 * the caller gets the event's error and nothing of the change stays. */
static void
test_events__a_failed_event_refuses_its_change(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec = {.team = "dev", .subject = "Write docs"};
	hd_post *p = NULL;
	hd_task *t = NULL;
	hd_tasks tasks;
	hd_event_list l;
	hd_event_filter f = {0};
	hd_err err = HD_ERR_INIT;
	int64_t head = 0;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_events_head(&head, fx->st, &err), &err);
	refuse_events(fx, NULL);

	assert_true(hd_room_post(&p, fx->st, "dev", "peer", "coder", "hello",
			&err) < 0);
	assert_non_null(strstr(err.msg, "events refused by the test"));
	assert_null(p);
	assert_int_equal(room_size(fx), 0);

	hd_err_clear(&err);
	assert_true(hd_board_create(&t, fx->st, &spec, &err) < 0);
	assert_non_null(strstr(err.msg, "events refused by the test"));
	assert_null(t);
	assert_hd_ok(hd_board_list(&tasks, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(tasks.n, 0);
	hd_tasks_dispose(&tasks);

	/* and the log has nothing past what was there before */
	f.after_seq = head;
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 0);
	hd_event_list_dispose(&l);
}

/* A board change stands when only its reflection's event fails: the
 * reflection (the room line) is dropped alone (SPEC 4). */
static void
test_events__a_failed_reflection_event_drops_the_reflection(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec = {.team = "dev", .subject = "Write docs"};
	hd_task *t = NULL;
	hd_event_filter f = {.kind = "task_created"};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	refuse_events(fx, "team_chat_post");
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	assert_non_null(t);
	hd_task_free(t);
	assert_int_equal(room_size(fx), 0);
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 1);
	hd_event_list_dispose(&l);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hd_fixture_setup, \
    hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_events__filters_and_tail_order),
		T(test_events__raw_append_returns_its_seq),
		T(test_events__several_kinds_in_seq_order),
		T(test_events__rolled_back_with_the_change_they_describe),
		T(test_events__team_changes_are_logged),
		T(test_events__one_tasks_history),
		T(test_events__a_failed_event_refuses_its_change),
		T(test_events__a_failed_reflection_event_drops_the_reflection),
	};
	return cmocka_run_group_tests_name("unit/events", tests, NULL, NULL);
}
