/*
 * test-spend.c -- a team's spend over time (spend.h): cost events at
 * known times (written as the engines write them, with their ts set)
 * summed into hour and day buckets per agent, the window's edges, the
 * newest and costliest turn lists with what each turn was, the budgets
 * of the team and its members, another team's spend never counted, and
 * every refusal.
 */
#include <string.h>

#include <huddle/budget.h>
#include <huddle/spend.h>

#include <store/store.h>

#include "testutil.h"

/* 2026-01-15T00:00:00Z */
#define BASE INT64_C(1768435200000)
#define MIN INT64_C(60000)
#define HOUR INT64_C(3600000)
#define DAY INT64_C(86400000)

static void
cost(hd_fixture *fx, const char *team, const char *agent, int64_t ts,
    const char *data)
{
	hd_err err = HD_ERR_INIT;
	char id[37];

	assert_hd_ok(hd_store_uuid(fx->st, id, &err), &err);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO events(id, ts, kind, team_id, agent_id,"
			 " data) VALUES (?, ?, 'cost', ?, ?, ?)",
			 HD_TEXT(id), HD_INT(ts), HD_TEXT(team), HD_TEXT(agent),
			 HD_TEXT(data)),
	    &err);
}

/* dev: coder and manager over two hours and the next day, one turn
 * before the window and an event of another kind; ops: boss, twice, at
 * the same cost. */
static void
seed(hd_fixture *fx)
{
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	hd_fixture_team(fx, "ops", "boss", NULL);
	cost(fx, "dev", "coder", BASE - 2 * HOUR,
	    "{\"room_id\":\"team:dev\",\"turn\":9,\"usd\":0.07,"
	    "\"microcents\":7000000,\"input_tokens\":1,\"output_tokens\":1,"
	    "\"estimated\":false}");
	cost(fx, "dev", "coder", BASE + 10 * MIN,
	    "{\"room_id\":\"team:dev\",\"turn\":1,\"usd\":0.000003,"
	    "\"microcents\":300,\"input_tokens\":100,\"output_tokens\":20,"
	    "\"estimated\":false}");
	cost(fx, "dev", "manager", BASE + 20 * MIN,
	    "{\"conversation_id\":\"c-1\",\"usd\":0.000001,"
	    "\"microcents\":100,\"input_tokens\":40,\"output_tokens\":4,"
	    "\"estimated\":true}");
	cost(fx, "ops", "boss", BASE + 30 * MIN,
	    "{\"turn\":3,\"usd\":0.00999999,\"microcents\":999999,"
	    "\"input_tokens\":5,\"output_tokens\":5,\"estimated\":false}");
	cost(fx, "dev", "coder", BASE + HOUR + 5 * MIN,
	    "{\"turn\":7,\"usd\":0.000005,\"microcents\":500,"
	    "\"input_tokens\":200,\"output_tokens\":30,\"estimated\":false}");
	cost(fx, "ops", "boss", BASE + HOUR + 30 * MIN,
	    "{\"turn\":4,\"usd\":0.00999999,\"microcents\":999999,"
	    "\"input_tokens\":5,\"output_tokens\":5,\"estimated\":false}");
	cost(fx, "dev", "manager", BASE + DAY + 2 * HOUR,
	    "{\"room_id\":\"team:dev\",\"turn\":2,\"usd\":0.000002,"
	    "\"microcents\":200,\"input_tokens\":60,\"output_tokens\":6,"
	    "\"estimated\":false}");
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO events(id, ts, kind, team_id, agent_id,"
			 " data) VALUES ('x', ?, 'task_created', 'dev', 'coder',"
			 " '{\"microcents\":12345}')",
			 HD_INT(BASE + 11 * MIN)),
	    &err);
}

static json_t *
spend(hd_fixture *fx, const char *team, int64_t since, int64_t until,
    const char *bucket, int turns)
{
	hd_spend_query q = {team, since, until, bucket, turns};
	hd_err err = HD_ERR_INIT;
	json_t *out = NULL;

	assert_hd_ok(hd_spend_read(&out, fx->st, &q, &err), &err);
	assert_non_null(out);
	return out;
}

static json_int_t
geti(const json_t *o, const char *path)
{
	return json_integer_value(json_object_get(o, path));
}

static const char *
str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void
test_spend__hourly_buckets_per_agent(void **state)
{
	hd_fixture *fx = *state;
	json_t *s, *b, *a, *t;

	seed(fx);
	/* three hours: hourly without asking */
	s = spend(fx, "dev", BASE, BASE + 3 * HOUR, NULL, 2);
	assert_string_equal(str_of(s, "bucket"), "hour");
	assert_int_equal(geti(s, "bucket_ms"), HOUR);
	assert_int_equal(geti(s, "since"), BASE);
	assert_int_equal(geti(s, "until"), BASE + 3 * HOUR);
	t = json_object_get(s, "total");
	assert_int_equal(geti(t, "microcents"), 900);
	assert_int_equal(geti(t, "turns"), 3);
	assert_int_equal(geti(t, "input_tokens"), 340);
	assert_int_equal(geti(t, "output_tokens"), 54);
	assert_true(json_real_value(json_object_get(t, "usd")) == 900 / 1e8);

	b = json_object_get(s, "buckets");
	assert_int_equal(json_array_size(b), 2);
	assert_int_equal(geti(json_array_get(b, 0), "start"), BASE);
	assert_int_equal(geti(json_array_get(b, 0), "microcents"), 400);
	assert_int_equal(geti(json_array_get(b, 0), "turns"), 2);
	a = json_object_get(json_array_get(b, 0), "agents");
	assert_int_equal(json_object_size(a), 2);
	assert_int_equal(geti(a, "coder"), 300);
	assert_int_equal(geti(a, "manager"), 100);
	assert_int_equal(geti(json_array_get(b, 1), "start"), BASE + HOUR);
	a = json_object_get(json_array_get(b, 1), "agents");
	assert_int_equal(json_object_size(a), 1);
	assert_int_equal(geti(a, "coder"), 500);

	a = json_object_get(s, "agents"); /* by id */
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(str_of(json_array_get(a, 0), "agent"), "coder");
	assert_int_equal(geti(json_array_get(a, 0), "microcents"), 800);
	assert_int_equal(geti(json_array_get(a, 0), "turns"), 2);
	assert_int_equal(geti(json_array_get(a, 0), "input_tokens"), 300);
	assert_string_equal(str_of(json_array_get(a, 1), "agent"), "manager");
	assert_int_equal(geti(json_array_get(a, 1), "microcents"), 100);

	/* the newest two, newest first, each saying what it was */
	t = json_object_get(s, "turns");
	assert_int_equal(json_array_size(t), 2);
	assert_int_equal(geti(json_array_get(t, 0), "ts"), BASE + HOUR + 5 * MIN);
	assert_string_equal(str_of(json_array_get(t, 0), "source"), "autorun");
	assert_int_equal(geti(json_array_get(t, 0), "autorun_turn"), 7);
	assert_int_equal(geti(json_array_get(t, 0), "microcents"), 500);
	assert_string_equal(str_of(json_array_get(t, 1), "source"),
	    "conversation");
	assert_string_equal(
	    str_of(json_array_get(t, 1), "conversation_id"), "c-1");
	assert_string_equal(str_of(json_array_get(t, 1), "agent"), "manager");
	assert_true(json_is_true(
	    json_object_get(json_array_get(t, 1), "estimated")));
	/* the costliest two, costliest first */
	t = json_object_get(s, "costliest");
	assert_int_equal(json_array_size(t), 2);
	assert_int_equal(geti(json_array_get(t, 0), "microcents"), 500);
	assert_int_equal(geti(json_array_get(t, 1), "microcents"), 300);
	assert_string_equal(str_of(json_array_get(t, 1), "source"), "exchange");
	assert_string_equal(str_of(json_array_get(t, 1), "room_id"), "team:dev");
	assert_int_equal(geti(json_array_get(t, 1), "turn"), 1);
	assert_int_equal(geti(json_array_get(t, 1), "input_tokens"), 100);
	assert_int_equal(geti(json_array_get(t, 1), "output_tokens"), 20);
	json_decref(s);
}

static void
test_spend__daily_buckets_and_the_window(void **state)
{
	hd_fixture *fx = *state;
	json_t *s, *b;

	seed(fx);
	/* more than two days: daily; the turn two hours before BASE is
	 * outside, the one at the window's last ms inside */
	s = spend(fx, "dev", BASE - HOUR, BASE + DAY + 2 * HOUR, NULL, 10);
	assert_string_equal(str_of(s, "bucket"), "hour");
	json_decref(s);
	s = spend(fx, "dev", BASE - HOUR, BASE + 3 * DAY, NULL, 10);
	assert_string_equal(str_of(s, "bucket"), "day");
	assert_int_equal(geti(s, "bucket_ms"), DAY);
	b = json_object_get(s, "buckets");
	assert_int_equal(json_array_size(b), 2);
	assert_int_equal(geti(json_array_get(b, 0), "start"), BASE);
	assert_int_equal(geti(json_array_get(b, 0), "microcents"), 900);
	assert_int_equal(geti(json_array_get(b, 1), "start"), BASE + DAY);
	assert_int_equal(geti(json_array_get(b, 1), "microcents"), 200);
	assert_int_equal(
	    geti(json_object_get(s, "total"), "microcents"), 1100);
	assert_int_equal(json_array_size(json_object_get(s, "turns")), 4);
	json_decref(s);
	/* asked by day over three hours; until inclusive, since too */
	s = spend(fx, "dev", BASE + 10 * MIN, BASE + DAY + 2 * HOUR, "day", 0);
	assert_string_equal(str_of(s, "bucket"), "day");
	assert_int_equal(geti(json_object_get(s, "total"), "turns"), 4);
	assert_int_equal(json_array_size(json_object_get(s, "turns")), 0);
	assert_int_equal(json_array_size(json_object_get(s, "costliest")), 0);
	json_decref(s);
	/* hourly over days when asked */
	s = spend(fx, "dev", BASE - 3 * HOUR, BASE + 2 * DAY, "hour", 1);
	assert_int_equal(json_array_size(json_object_get(s, "buckets")), 4);
	assert_int_equal(geti(json_array_get(json_object_get(s, "buckets"), 0),
			     "microcents"),
	    7000000);
	json_decref(s);
	/* nothing in the window: empty, not an error */
	s = spend(fx, "dev", BASE + 5 * DAY, BASE + 6 * DAY, NULL, 10);
	assert_int_equal(geti(json_object_get(s, "total"), "turns"), 0);
	assert_int_equal(json_array_size(json_object_get(s, "buckets")), 0);
	assert_int_equal(json_array_size(json_object_get(s, "agents")), 0);
	json_decref(s);
}

static void
test_spend__teams_apart_and_budgets(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	json_t *s, *b, *t;
	size_t i;

	seed(fx);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 100, "cap", &err), &err);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "coder", 1, "warn", &err),
	    &err);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "boss", 5, "cap", &err), &err);
	assert_hd_ok(hd_budget_charge(NULL, fx->st, "dev", "coder",
			 2 * HD_BUDGET_MICROCENTS_PER_CENT, &err),
	    &err);
	assert_hd_ok(hd_budget_charge(NULL, fx->st, "ops", "boss", 7, &err),
	    &err);

	s = spend(fx, "dev", BASE - 3 * HOUR, BASE + 3 * DAY, NULL, 10);
	/* none of ops's 999999s */
	assert_int_equal(
	    geti(json_object_get(s, "total"), "microcents"), 7001100);
	json_array_foreach (json_object_get(s, "turns"), i, t)
		assert_string_not_equal(str_of(t, "agent"), "boss");
	/* the team's budget, then its members'; never boss's */
	b = json_object_get(s, "budgets");
	assert_int_equal(json_array_size(b), 2);
	assert_string_equal(str_of(json_array_get(b, 0), "scope"), "team");
	assert_string_equal(str_of(json_array_get(b, 0), "subject"), "dev");
	assert_int_equal(geti(json_array_get(b, 0), "limit_cents"), 100);
	assert_string_equal(str_of(json_array_get(b, 0), "mode"), "cap");
	assert_int_equal(geti(json_array_get(b, 0), "spent_microcents"),
	    2 * HD_BUDGET_MICROCENTS_PER_CENT);
	assert_string_equal(str_of(json_array_get(b, 1), "subject"), "coder");
	assert_string_equal(str_of(json_array_get(b, 1), "mode"), "warn");
	assert_true(json_is_true(json_object_get(json_array_get(b, 1), "over")));
	json_decref(s);

	/* ops sees its own two turns, equal in cost: newest first */
	s = spend(fx, "ops", BASE, BASE + DAY, NULL, 10);
	assert_int_equal(
	    geti(json_object_get(s, "total"), "microcents"), 2 * 999999);
	assert_int_equal(json_array_size(json_object_get(s, "agents")), 1);
	t = json_object_get(s, "costliest");
	assert_int_equal(json_array_size(t), 2);
	assert_int_equal(geti(json_array_get(t, 0), "autorun_turn"), 4);
	assert_int_equal(geti(json_array_get(t, 1), "autorun_turn"), 3);
	b = json_object_get(s, "budgets");
	assert_int_equal(json_array_size(b), 2);
	assert_string_equal(str_of(json_array_get(b, 0), "subject"), "ops");
	assert_true(json_is_null(json_object_get(json_array_get(b, 0),
	    "limit_cents")));
	assert_string_equal(str_of(json_array_get(b, 1), "subject"), "boss");
	json_decref(s);
}

static void
test_spend__refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_spend_query q = {"dev", BASE, BASE + HOUR, NULL, 10};
	json_t *out = NULL;
	int64_t ms = 0;

	hd_fixture_team(fx, "dev", "manager", NULL);
	q.team = "ghost";
	assert_hd_err(hd_spend_read(&out, fx->st, &q, &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	q.team = "dev";
	q.bucket = "week";
	assert_hd_err(hd_spend_read(&out, fx->st, &q, &err), HD_EINVAL,
	    "bucket must be hour or day, not \"week\"", &err);
	q.bucket = NULL;
	q.turns = 101;
	assert_hd_err(hd_spend_read(&out, fx->st, &q, &err), HD_EINVAL,
	    "turns must be between 0 and 100, not 101", &err);
	q.turns = 10;
	q.until_ms = BASE - 1;
	assert_hd_err(hd_spend_read(&out, fx->st, &q, &err), HD_EINVAL,
	    "the window ends before it starts", &err);
	assert_null(out);

	assert_hd_ok(hd_spend_parse_since(&ms, "24h", &err), &err);
	assert_int_equal(ms, DAY);
	assert_hd_ok(hd_spend_parse_since(&ms, "1m", &err), &err);
	assert_int_equal(ms, MIN);
	assert_hd_ok(hd_spend_parse_since(&ms, "2w", &err), &err);
	assert_int_equal(ms, 14 * DAY);
	assert_hd_ok(hd_spend_parse_since(&ms, "366d", &err), &err);
	assert_int_equal(ms, 366 * DAY);
	assert_hd_err(hd_spend_parse_since(&ms, "367d", &err), HD_EINVAL,
	    "since must be a duration like 24h or 7d (m, h, d or w), up to "
	    "366d, not \"367d\"",
	    &err);
	assert_hd_err(hd_spend_parse_since(&ms, "0h", &err), HD_EINVAL,
	    "since must be a duration like 24h or 7d (m, h, d or w), up to "
	    "366d, not \"0h\"",
	    &err);
	assert_hd_err(hd_spend_parse_since(&ms, "-1h", &err), HD_EINVAL,
	    "since must be a duration like 24h or 7d (m, h, d or w), up to "
	    "366d, not \"-1h\"",
	    &err);
	assert_hd_err(hd_spend_parse_since(&ms, "h", &err), HD_EINVAL,
	    "since must be a duration like 24h or 7d (m, h, d or w), up to "
	    "366d, not \"h\"",
	    &err);
	assert_hd_err(hd_spend_parse_since(&ms, "30s", &err), HD_EINVAL,
	    "since must be a duration like 24h or 7d (m, h, d or w), up to "
	    "366d, not \"30s\"",
	    &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_spend__hourly_buckets_per_agent),
	    hd_fixture_test(test_spend__daily_buckets_and_the_window),
	    hd_fixture_test(test_spend__teams_apart_and_budgets),
	    hd_fixture_test(test_spend__refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
