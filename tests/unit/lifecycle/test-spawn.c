/*
 * test-spawn.c -- teammate spawning (SPEC 3): spawned_by, the session key
 * format, the first message, the spawn depth and its limit, the runtime
 * config and model, and the refusals with their exact texts.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/mailbox.h>
#include <huddle/runtime.h>
#include <huddle/spawn.h>
#include <huddle/team.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder");
}

/* Spawning s is refused with code and msg, and hands back no agent. */
static void
expect_refused(
    hd_fixture *fx, const hd_spawn_spec *s, int code, const char *msg)
{
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_team_spawn(&a, fx->st, s, &err), code, msg, &err);
	assert_null(a);
}

/* 1 when s is "agent:<id>:teammate:" + a lowercase v4 UUID. */
static int
session_key_ok(const char *s, const char *id)
{
	char prefix[128];
	size_t n, i;
	const char *u;

	n = (size_t)snprintf(prefix, sizeof(prefix), "agent:%s:teammate:", id);
	if (strncmp(s, prefix, n) != 0)
		return 0;
	u = s + n;
	if (strlen(u) != 36 || u[14] != '4')
		return 0;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (u[i] != '-')
				return 0;
		} else if (!((u[i] >= '0' && u[i] <= '9') ||
			       (u[i] >= 'a' && u[i] <= 'f')))
			return 0;
	}
	return 1;
}

static void
test_spawn__default_first_message_from_the_leader(void **state)
{
	hd_fixture *fx = *state;
	hd_spawn_spec s = {0};
	hd_agent *a = NULL, *b = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	s.team = "dev";
	s.id = "researcher";
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_string_equal(a->team_id, "dev");
	assert_string_equal(a->spawned_by, "manager");
	assert_string_equal(a->runtime, "scripted");
	assert_string_equal(a->status, "idle");
	assert_false(a->is_leader);
	assert_true(session_key_ok(a->session_key, "researcher"));

	assert_hd_ok(hd_mailbox_read(&l, fx->st, "researcher", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].content, "Join team dev as researcher");
	assert_string_equal(l.items[0].from_agent, "manager");
	assert_string_equal(l.items[0].type, "message");
	hd_messages_dispose(&l);

	/* each spawn gets its own session */
	s.id = "second";
	assert_hd_ok(hd_team_spawn(&b, fx->st, &s, &err), &err);
	assert_true(session_key_ok(b->session_key, "second"));
	assert_string_not_equal(
	    strchr(a->session_key + 6, ':'), strchr(b->session_key + 6, ':'));
	hd_agent_free(a);
	hd_agent_free(b);
}

static void
test_spawn__task_caller_and_runtime(void **state)
{
	hd_fixture *fx = *state;
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	json_t *cfg = json_pack("{s:[s]}", "command", "./agent.sh");

	s.team = "dev";
	s.id = "helper";
	s.caller = "coder";
	s.task = "Review PR 42";
	s.role = "reviewer";
	s.runtime = "exec";
	s.runtime_config = cfg;
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_string_equal(a->spawned_by, "coder");
	assert_string_equal(a->role, "reviewer");
	assert_string_equal(a->runtime, "exec");
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "helper", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].content, "Review PR 42");
	assert_string_equal(l.items[0].from_agent, "coder");
	hd_messages_dispose(&l);
	hd_agent_free(a);
	json_decref(cfg);
}

static void
test_spawn__team_without_leader_or_caller(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {0};
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	ts.id = "flat";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	s.team = "flat";
	s.id = "first";
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_null(a->spawned_by);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "first", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].from_agent, "huddle");
	assert_string_equal(l.items[0].content, "Join team flat as first");
	hd_messages_dispose(&l);
	hd_agent_free(a);
}

static void
test_spawn__refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_spawn_spec s = {0};
	hd_err err = HD_ERR_INIT;

	s.team = "ghost";
	s.id = "x";
	expect_refused(fx, &s, HD_ENOTFOUND, "team \"ghost\" not found");

	s.team = "dev";
	s.id = "coder";
	expect_refused(
	    fx, &s, HD_EEXISTS, "agent \"coder\" already exists in team dev");

	s.id = "newbie";
	s.caller = "stranger";
	expect_refused(
	    fx, &s, HD_EREFUSED, "no member \"stranger\" in team dev");
	s.caller = NULL;
	s.task = "";
	expect_refused(fx, &s, HD_EINVAL, "message must not be empty");
	s.task = NULL;
	s.id = "Bad";
	expect_refused(fx, &s, HD_EINVAL,
	    "invalid agent name \"Bad\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'");
	/* nothing was added by the refusals */
	hd_assert_no_agent(fx, "newbie");

	assert_hd_ok(hd_team_set_status(fx->st, "dev", "shutdown", &err), &err);
	s.id = "late";
	expect_refused(fx, &s, HD_EREFUSED,
	    "team \"dev\" is not active (status: shutdown)");
	assert_hd_ok(
	    hd_team_set_status(fx->st, "dev", "shutting_down", &err), &err);
	expect_refused(fx, &s, HD_EREFUSED,
	    "team \"dev\" is not active (status: shutting_down)");
	hd_assert_no_agent(fx, "late");
}

/* Spawn id into dev as caller; the new agent's depth. */
static int
spawn_as(hd_fixture *fx, const char *id, const char *caller)
{
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	int depth;

	s.team = "dev";
	s.id = id;
	s.caller = caller;
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	depth = a->spawn_depth;
	hd_agent_free(a);
	return depth;
}

static void
test_spawn__depth_is_the_spawners_plus_one_up_to_the_limit(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {0};
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	/* added by hand: depth 0; spawned by nobody or a user: 1 */
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_int_equal(a->spawn_depth, 0);
	hd_agent_free(a);
	assert_int_equal(spawn_as(fx, "by-nobody", NULL), 1);
	assert_int_equal(spawn_as(fx, "by-user", "user"), 1);
	assert_hd_ok(hd_agent_get(&a, fx->st, "by-user", &err), &err);
	assert_string_equal(a->spawned_by, "manager");
	hd_agent_free(a);

	/* a chain: manager 0 -> r1 1 -> r2 2 */
	assert_int_equal(spawn_as(fx, "r1", "manager"), 1);
	assert_int_equal(spawn_as(fx, "r2", "r1"), 2);
	ts.id = "dev";
	ts.max_spawn_depth = 2;
	assert_hd_ok(hd_team_update(NULL, fx->st, &ts, &err), &err);
	s.team = "dev";
	s.id = "r3";
	s.caller = "r2";
	s.task = "dig deeper";
	expect_refused(fx, &s, HD_EREFUSED,
	    "cannot spawn: depth 3 would exceed team dev's spawn depth limit "
	    "of 2 (r2 is at depth 2)");
	/* refused before any write: no agent, no message */
	hd_assert_no_agent(fx, "r3");
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "r2", 0, &err), &err);
	assert_int_equal(l.n, 1); /* its own first message only */
	hd_messages_dispose(&l);

	/* shallower spawners still can; raising the limit lets r2 spawn */
	assert_int_equal(spawn_as(fx, "r1b", "r1"), 2);
	ts.max_spawn_depth = 3;
	assert_hd_ok(hd_team_update(NULL, fx->st, &ts, &err), &err);
	assert_int_equal(spawn_as(fx, "r3", "r2"), 3);
}

static void
test_spawn__runtime_config_and_model_are_checked_and_stored(void **state)
{
	hd_fixture *fx = *state;
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	json_t *cfg =
	    json_pack("{s:s, s:s}", "workdir", "/src", "model", "old");
	json_t *bad = json_string("x");
	hd_err err = HD_ERR_INIT;

	s.team = "dev";
	s.id = "claude";
	s.runtime = "claude-code";
	s.runtime_config = cfg;
	s.model = "sonnet";
	s.check = hd_runtime_check_config;
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_string_equal(a->runtime, "claude-code");
	assert_string_equal(json_string_value(json_object_get(
				a->runtime_config, "workdir")),
	    "/src");
	assert_string_equal(json_string_value(json_object_get(
				a->runtime_config, "model")),
	    "sonnet"); /* model wins over the config's */
	assert_string_equal(json_string_value(json_object_get(cfg, "model")),
	    "old"); /* the caller's config is left alone */
	hd_agent_free(a);
	a = NULL;

	/* model alone makes the config */
	s.id = "codex";
	s.runtime = "codex";
	s.runtime_config = NULL;
	s.model = "gpt-5";
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_int_equal(json_object_size(a->runtime_config), 1);
	assert_string_equal(json_string_value(json_object_get(
				a->runtime_config, "model")),
	    "gpt-5");
	hd_agent_free(a);
	a = NULL;

	/* refusals, as huddle agent add refuses them, and nothing added */
	s.id = "nope";
	s.runtime = "scripted";
	expect_refused(fx, &s, HD_EINVAL,
	    "runtime_config: unknown key \"model\" for runtime scripted");
	s.runtime = "claude-code";
	s.model = "";
	expect_refused(fx, &s, HD_EINVAL, "model must not be empty");
	s.model = "sonnet";
	s.runtime_config = bad;
	expect_refused(
	    fx, &s, HD_EINVAL, "runtime_config must be a JSON object");
	s.runtime_config = NULL;
	s.runtime = "teleport";
	expect_refused(fx, &s, HD_EINVAL,
	    "runtime \"teleport\" is not available in this build: use "
	    "scripted, exec, claude-code, codex, native, hermes or openclaw");
	hd_assert_no_agent(fx, "nope");
	json_decref(cfg);
	json_decref(bad);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_spawn__default_first_message_from_the_leader, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_spawn__task_caller_and_runtime,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_spawn__team_without_leader_or_caller, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_spawn__refusals, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_spawn__depth_is_the_spawners_plus_one_up_to_the_limit,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_spawn__runtime_config_and_model_are_checked_and_stored,
		setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
