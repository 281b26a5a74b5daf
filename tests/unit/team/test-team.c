/*
 * test-team.c -- teams and agents: the spec's validation texts, duplicates,
 * leader rules, agent counts, and what `team rm` refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/runtime.h>
#include <huddle/team.h>
#include <huddle/team_remove.h>

#include <store/store.h>

#include "testutil.h"

static void
expect_no_teams(hd_fixture *fx)
{
	hd_teams l;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_team_list(&l, fx->st, &err), &err);
	assert_int_equal(l.n, 0);
	hd_teams_dispose(&l);
}

static void
test_team__bad_names_are_refused_before_any_write(void **state)
{
	static const char *const bad[] = {
		"../x", "a/b", "", "Upper", "test@team", "-lead", "_x", "a b",
		"ab\xc3\xa9", "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijk",
	};
	hd_fixture *fx = *state;
	hd_team_spec ts = {0};
	hd_err err = HD_ERR_INIT;
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ts.id = bad[i];
		snprintf(want, sizeof(want),
		    "invalid team name \"%s\": use 1-50 lowercase letters, "
		    "digits, '-' or '_'",
		    bad[i]);
		assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err),
		    HD_EINVAL, want, &err);
	}
	expect_no_teams(fx);
}

static void
test_team__names_at_the_limits_are_accepted(void **state)
{
	hd_fixture *fx = *state;
	const char *fifty = "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij";
	hd_team_spec ts = {0};
	hd_err err = HD_ERR_INIT;

	assert_int_equal(strlen(fifty), 50);
	ts.id = fifty;
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	ts.id = "0";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	ts.id = "a-b_c9";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
}

static void
test_team__duplicate_is_refused(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "existing-team", .name = "First"};
	hd_team *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	ts.name = "Second";
	assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err), HD_EEXISTS,
	    "team \"existing-team\" already exists", &err);
	assert_hd_ok(hd_team_get(&t, fx->st, "existing-team", &err), &err);
	assert_string_equal(t->name, "First");
	hd_team_free(t);
}

static void
test_team__missing_team_is_named(void **state)
{
	hd_fixture *fx = *state;
	hd_team *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_team_get(&t, fx->st, "ghost", &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	assert_null(t);
	/* the existence probe says the same, and yes for a team that is */
	assert_hd_err(hd_team_exists(fx->st, "ghost", &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	assert_int_equal(hd_team_exists(fx->st, "Bad Id", &err), HD_EINVAL);
	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_ok(hd_team_exists(fx->st, "dev", &err), &err);
}

static void
test_team__list_counts_agents_on_read(void **state)
{
	hd_fixture *fx = *state;
	hd_teams l;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	hd_fixture_team(fx, "ops", "sre", NULL);
	hd_fixture_team(fx, "empty", NULL);
	assert_hd_ok(hd_team_list(&l, fx->st, &err), &err);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.items[0].id, "dev");
	assert_int_equal(l.items[0].agent_count, 3);
	assert_string_equal(l.items[0].leader_agent_id, "manager");
	assert_string_equal(l.items[1].id, "empty");
	assert_int_equal(l.items[1].agent_count, 0);
	assert_null(l.items[1].leader_agent_id);
	assert_string_equal(l.items[2].id, "ops");
	assert_int_equal(l.items[2].agent_count, 1);
	hd_teams_dispose(&l);
	assert_hd_ok(hd_agent_remove(fx->st, "tester", &err), &err);
	assert_hd_ok(hd_team_list(&l, fx->st, &err), &err);
	assert_int_equal(l.items[0].agent_count, 2);
	hd_teams_dispose(&l);
}

static void
test_team__field_limits_have_clear_errors(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "dev"};
	char longname[160];
	hd_err err = HD_ERR_INIT;

	memset(longname, 'n', 101);
	longname[101] = '\0';
	ts.name = longname;
	assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "team display name is 101 characters; the limit is 100", &err);
	ts.name = "";
	assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "team display name must not be empty", &err);
	ts.name = "bad \xff utf8";
	assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "team display name must be valid UTF-8", &err);
	expect_no_teams(fx);
}

static void
test_team__spawn_depth_limit_defaults_and_updates(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "dev"};
	hd_team *t = NULL;
	json_t *j;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_team_create(&t, fx->st, &ts, &err), &err);
	assert_int_equal(t->max_spawn_depth, HD_TEAM_SPAWN_DEPTH);
	hd_team_free(t);

	ts.max_spawn_depth = 2;
	assert_hd_ok(hd_team_update(&t, fx->st, &ts, &err), &err);
	assert_int_equal(t->max_spawn_depth, 2);
	j = hd_team_to_json(t);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "max_spawn_depth")), 2);
	json_decref(j);
	hd_team_free(t);

	/* another field's update leaves it alone */
	ts.max_spawn_depth = 0;
	ts.name = "Dev";
	assert_hd_ok(hd_team_update(&t, fx->st, &ts, &err), &err);
	assert_int_equal(t->max_spawn_depth, 2);
	hd_team_free(t);

	ts.max_spawn_depth = 101;
	assert_hd_err(hd_team_update(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "max_spawn_depth must be between 1 and 100", &err);
	ts.max_spawn_depth = -1;
	assert_hd_err(hd_team_update(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "max_spawn_depth must be between 1 and 100", &err);
	ts.id = "other";
	ts.max_spawn_depth = 9;
	assert_hd_ok(hd_team_create(&t, fx->st, &ts, &err), &err);
	assert_int_equal(t->max_spawn_depth, 9);
	hd_team_free(t);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_int_equal(t->max_spawn_depth, 2); /* refusals wrote nothing */
	hd_team_free(t);
}

/* The board's caps: defaults, updated one at a time, shown in the JSON,
 * refused outside their ranges. */
static void
test_team__board_caps_default_and_update(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "dev"};
	hd_team *t = NULL;
	json_t *j;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_team_create(&t, fx->st, &ts, &err), &err);
	assert_int_equal(t->max_children, HD_TEAM_MAX_CHILDREN);
	assert_int_equal(t->max_task_depth, HD_TEAM_TASK_DEPTH);
	assert_int_equal(t->max_new_roots, HD_TEAM_NEW_ROOTS);
	assert_int_equal(t->new_roots_window_s, HD_TEAM_NEW_ROOTS_WINDOW);
	hd_team_free(t);

	ts.max_children = 3;
	ts.new_roots_window_s = 60;
	assert_hd_ok(hd_team_update(&t, fx->st, &ts, &err), &err);
	assert_int_equal(t->max_children, 3);
	assert_int_equal(t->max_task_depth, HD_TEAM_TASK_DEPTH);
	assert_int_equal(t->new_roots_window_s, 60);
	j = hd_team_to_json(t);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "max_children")), 3);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "max_task_depth")), 2);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "max_new_roots")), 30);
	assert_int_equal(
	    json_integer_value(json_object_get(j, "new_roots_window_s")), 60);
	json_decref(j);
	hd_team_free(t);

	memset(&ts, 0, sizeof(ts));
	ts.id = "dev";
	ts.max_children = 1001;
	assert_hd_err(hd_team_update(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "max_children must be between 1 and 1000", &err);
	ts.max_children = 0;
	ts.max_task_depth = 21;
	assert_hd_err(hd_team_update(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "max_task_depth must be between 1 and 20", &err);
	ts.max_task_depth = 0;
	ts.max_new_roots = -2;
	assert_hd_err(hd_team_update(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "max_new_roots must be between 1 and 10000", &err);
	ts.max_new_roots = 0;
	ts.new_roots_window_s = 86401;
	assert_hd_err(hd_team_update(NULL, fx->st, &ts, &err), HD_EINVAL,
	    "new_roots_window_s must be between 1 and 86400", &err);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_int_equal(t->max_children, 3); /* refusals wrote nothing */
	assert_int_equal(t->new_roots_window_s, 60);
	hd_team_free(t);
}

static void
test_agent__bad_names_and_runtimes_are_refused(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as = {.team = "dev"};
	json_t *cfg;
	hd_agents l;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", NULL);
	as.id = "Coder";
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "invalid agent name \"Coder\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	as.id = "coder";
	/* the domain's own checks: a runtime name, a config object */
	as.runtime = "GPT 5";
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "invalid runtime name \"GPT 5\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	as.runtime = "gpt";
	cfg = json_pack("[s]", "x");
	as.runtime_config = cfg;
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime_config must be a JSON object", &err);
	json_decref(cfg);
	as.runtime_config = NULL;
	/* what a runtime accepts, from the runtime layer the surfaces hand
	 * down */
	as.check = hd_runtime_check_config;
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime \"gpt\" is not available in this build: use scripted, "
	    "exec, claude-code, codex, native, hermes or openclaw",
	    &err);
	as.runtime = "openai";
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime \"openai\" is not available in this build: use scripted, "
	    "exec, claude-code, codex, native, hermes or openclaw",
	    &err);
	as.runtime = "exec";
	cfg = json_pack("{s:[]}", "command");
	as.runtime_config = cfg;
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime_config.command must be a non-empty array of strings", &err);
	json_decref(cfg);
	as.runtime = "scripted";
	cfg = json_pack("{s:[{s:s}]}", "rules", "when", "x");
	as.runtime_config = cfg;
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime_config.rules[0] must be {\"when\": text, \"reply\": text}",
	    &err);
	json_decref(cfg);
	cfg = json_pack("{s:s}", "defualt", "x");
	as.runtime_config = cfg;
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EINVAL,
	    "runtime_config: unknown key \"defualt\" for runtime scripted",
	    &err);
	json_decref(cfg);
	as.runtime_config = NULL;
	as.team = "ghost";
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	assert_hd_ok(hd_agent_list(&l, fx->st, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	hd_agents_dispose(&l);
}

static void
test_agent__an_agent_is_in_one_team(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as = {.id = "coder", .team = "qa"};
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	hd_fixture_team(fx, "qa", NULL);
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EEXISTS,
	    "agent \"coder\" already exists in team dev", &err);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->team_id, "dev");
	assert_string_equal(a->runtime, "scripted");
	assert_string_equal(a->status, "idle");
	assert_false(a->is_leader);
	hd_agent_free(a);
	hd_assert_no_agent(fx, "nobody");
}

static void
test_team__one_leader_at_a_time(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as = {.id = "second", .team = "dev", .leader = 1};
	hd_team_spec up = {.id = "dev"};
	hd_team *t = NULL;
	hd_agents l;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	hd_fixture_team(fx, "ops", "sre", NULL);
	assert_hd_err(hd_agent_add(NULL, fx->st, &as, &err), HD_EREFUSED,
	    "team dev already has a leader (manager)", &err);
	up.leader = "sre";
	assert_hd_err(hd_team_update(NULL, fx->st, &up, &err), HD_EREFUSED,
	    "no member \"sre\" in team dev", &err);
	up.leader = "coder";
	assert_hd_ok(hd_team_update(&t, fx->st, &up, &err), &err);
	assert_string_equal(t->leader_agent_id, "coder");
	hd_team_free(t);
	/* The leader is listed first. */
	assert_hd_ok(hd_agent_list(&l, fx->st, "dev", &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].id, "coder");
	assert_true(l.items[0].is_leader);
	assert_false(l.items[1].is_leader);
	hd_agents_dispose(&l);
	/* Removing the leader leaves the team without one. */
	assert_hd_ok(hd_agent_remove(fx->st, "coder", &err), &err);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_null(t->leader_agent_id);
	hd_team_free(t);
	up.leader = "";
	assert_hd_ok(hd_team_update(NULL, fx->st, &up, &err), &err);
}

static void
test_agent__roster_configs_parse_as_a_list_reads_them(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as = {.id = "coder", .team = "dev"};
	hd_team_spec up = {.id = "ops"};
	hd_agents full, roster;
	char **texts = NULL, *a, *b;
	hd_err err = HD_ERR_INIT;
	json_t *cfg;
	size_t i;

	hd_fixture_team(fx, "dev", "manager", NULL);
	cfg = json_loads("{\"default\": \"ok\", \"delay_ms\": 5}", 0, NULL);
	as.runtime_config = cfg;
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	json_decref(cfg);
	/* a damaged row reads as an empty object, parsed now or later */
	assert_hd_ok(hd_store_exec(fx->st,
			 "UPDATE agents SET runtime_config = '[1' "
			 "WHERE id = 'manager'",
			 &err),
	    &err);
	assert_hd_ok(hd_agent_list(&full, fx->st, "dev", &err), &err);
	assert_hd_ok(hd_agent_roster_configs(&roster, &texts, fx->st, "dev",
			 &err),
	    &err);
	assert_int_equal(roster.n, full.n);
	assert_non_null(texts);
	for (i = 0; i < roster.n; i++) {
		assert_string_equal(roster.items[i].id, full.items[i].id);
		assert_int_equal(json_object_size(roster.items[i].runtime_config),
		    0); /* not parsed yet */
		assert_hd_ok(hd_agent_config_parse(NULL, &roster.items[i], texts[i],
				 &err),
		    &err);
		a = json_dumps(roster.items[i].runtime_config, JSON_SORT_KEYS);
		b = json_dumps(full.items[i].runtime_config, JSON_SORT_KEYS);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	assert_string_equal(texts[1], "{\"default\":\"ok\",\"delay_ms\":5}");
	hd_agent_config_texts_free(texts, roster.n);
	hd_agents_dispose(&roster);
	hd_agents_dispose(&full);
	/* the leader first, then by id; with no leader, by id alone, in a
	 * team's list, its roster and the list of every team alike */
	hd_fixture_team(fx, "ops", "zed", "sre", NULL);
	assert_hd_ok(hd_agent_roster(&roster, fx->st, "ops", &err), &err);
	assert_int_equal(roster.n, 2);
	assert_string_equal(roster.items[0].id, "zed");
	assert_true(roster.items[0].is_leader);
	assert_string_equal(roster.items[1].id, "sre");
	assert_false(roster.items[1].is_leader);
	/* a roster names members, nothing more */
	assert_null(roster.items[0].name);
	assert_null(roster.items[0].runtime_config);
	hd_agents_dispose(&roster);
	up.leader = "";
	assert_hd_ok(hd_team_update(NULL, fx->st, &up, &err), &err);
	assert_hd_ok(hd_agent_list(&full, fx->st, "ops", &err), &err);
	assert_int_equal(full.n, 2);
	assert_string_equal(full.items[0].id, "sre");
	assert_string_equal(full.items[1].id, "zed");
	assert_false(full.items[0].is_leader || full.items[1].is_leader);
	hd_agents_dispose(&full);
	assert_hd_ok(hd_agent_list(&full, fx->st, NULL, &err), &err);
	assert_int_equal(full.n, 4);
	assert_string_equal(full.items[0].id, "manager");
	assert_string_equal(full.items[1].id, "coder");
	assert_string_equal(full.items[2].id, "sre");
	assert_string_equal(full.items[3].id, "zed");
	hd_agents_dispose(&full);
	/* added last, listed first: each config text moves with its agent */
	as.id = "ann";
	as.team = "ops";
	cfg = json_loads("{\"default\": \"ann\"}", 0, NULL);
	as.runtime_config = cfg;
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	json_decref(cfg);
	assert_hd_ok(hd_agent_roster_configs(&roster, &texts, fx->st, "ops",
			 &err),
	    &err);
	assert_int_equal(roster.n, 3);
	assert_string_equal(roster.items[0].id, "ann");
	assert_string_equal(texts[0], "{\"default\":\"ann\"}");
	assert_string_equal(roster.items[1].id, "sre");
	assert_string_equal(texts[1], "{}");
	assert_string_equal(roster.items[2].id, "zed");
	assert_string_equal(texts[2], "{}");
	hd_agent_config_texts_free(texts, roster.n);
	hd_agents_dispose(&roster);
	/* a leader in the middle by id moves to the front alone: the others
	 * keep their order, each with its own text */
	up.leader = "sre";
	assert_hd_ok(hd_team_update(NULL, fx->st, &up, &err), &err);
	assert_hd_ok(
	    hd_agent_roster_configs(&roster, &texts, fx->st, "ops", &err),
	    &err);
	assert_int_equal(roster.n, 3);
	assert_string_equal(roster.items[0].id, "sre");
	assert_true(roster.items[0].is_leader);
	assert_string_equal(texts[0], "{}");
	assert_string_equal(roster.items[1].id, "ann");
	assert_false(roster.items[1].is_leader);
	assert_string_equal(texts[1], "{\"default\":\"ann\"}");
	assert_string_equal(roster.items[2].id, "zed");
	assert_false(roster.items[2].is_leader);
	hd_agent_config_texts_free(texts, roster.n);
	hd_agents_dispose(&roster);
	/* a team without agents lists none, and is no error */
	up.id = "empty";
	up.leader = NULL;
	assert_hd_ok(hd_team_create(NULL, fx->st, &up, &err), &err);
	assert_hd_ok(
	    hd_agent_roster_configs(&roster, &texts, fx->st, "empty", &err),
	    &err);
	assert_int_equal(roster.n, 0);
	hd_agent_config_texts_free(texts, roster.n);
	assert_hd_ok(hd_agent_list(&full, fx->st, "empty", &err), &err);
	assert_int_equal(full.n, 0);
	hd_agents_dispose(&full);
	assert_hd_ok(hd_agent_roster(&roster, fx->st, "empty", &err), &err);
	assert_int_equal(roster.n, 0);
	hd_agents_dispose(&roster);
	assert_hd_err(hd_agent_roster(&roster, fx->st, "ghost", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	/* a list keeps each config's parse in the store's memo: the next
	 * list shares it while the stored text is the same, and a changed
	 * text is parsed anew */
	{
		hd_agents again;

		assert_hd_ok(hd_agent_list(&full, fx->st, "ops", &err), &err);
		assert_hd_ok(hd_agent_list(&again, fx->st, "ops", &err), &err);
		assert_string_equal(full.items[1].id, "ann");
		assert_ptr_equal(full.items[1].runtime_config,
		    again.items[1].runtime_config);
		hd_agents_dispose(&again);
		assert_hd_ok(hd_store_exec(fx->st,
				 "UPDATE agents SET runtime_config = "
				 "'{\"default\": \"changed\"}' WHERE id = 'ann'",
				 &err),
		    &err);
		assert_hd_ok(hd_agent_list(&again, fx->st, "ops", &err), &err);
		assert_string_equal(json_string_value(json_object_get(
					again.items[1].runtime_config, "default")),
		    "changed");
		assert_string_equal(json_string_value(json_object_get(
					full.items[1].runtime_config, "default")),
		    "ann");
		hd_agents_dispose(&again);
		hd_agents_dispose(&full);
	}
	/* no team: the same refusal as a list */
	assert_hd_err(hd_agent_roster_configs(&roster, &texts, fx->st, "ghost",
			  &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_null(texts);
	hd_agent_config_texts_free(NULL, 0);
}

static void
insert_post(hd_fixture *fx, const char *team, int seq)
{
	char sql[512];
	hd_err err = HD_ERR_INIT;

	snprintf(sql, sizeof(sql),
	    "INSERT INTO team_chat(id, room_id, team_id, author_agent_id, body,"
	    " kind, created_at, seq) VALUES ('p%s%d', 'team:%s', '%s', 'user',"
	    " 'hi', 'user', 1, %d)",
	    team, seq, team, team, seq);
	assert_hd_ok(hd_store_exec(fx->st, sql, &err), &err);
}

static void
test_team__rm_refuses_a_team_with_posts_unless_purged(void **state)
{
	hd_fixture *fx = *state;
	hd_team *t = NULL;
	hd_event_list ev;
	hd_event_filter f = {.kind = "team_removed"};
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	hd_fixture_team(fx, "ops", "sre", NULL);
	insert_post(fx, "dev", 1);
	insert_post(fx, "dev", 2);
	insert_post(fx, "ops", 1);
	assert_hd_err(hd_team_remove(fx->st, "dev", 0, &err), HD_EREFUSED,
	    "team dev still has 2 posts; pass --purge to delete them too", &err);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	hd_team_free(t);
	assert_hd_ok(hd_team_remove(fx->st, "dev", 1, &err), &err);
	assert_hd_err(hd_team_get(&t, fx->st, "dev", &err), HD_ENOTFOUND,
	    "team \"dev\" not found", &err);
	hd_assert_no_agent(fx, "coder");
	/* The other team's posts are untouched. */
	assert_hd_err(hd_team_remove(fx->st, "ops", 0, &err), HD_EREFUSED,
	    "team ops still has 1 post; pass --purge to delete them too", &err);
	assert_hd_err(hd_team_remove(fx->st, "ghost", 0, &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	/* The event log keeps the removal. */
	assert_hd_ok(hd_events_list(&ev, fx->st, &f, &err), &err);
	assert_int_equal(ev.n, 1);
	assert_string_equal(ev.items[0].team_id, "dev");
	hd_event_list_dispose(&ev);
}

static void
test_team__rm_of_an_empty_team_needs_no_purge(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_ok(hd_team_remove(fx->st, "dev", 0, &err), &err);
	expect_no_teams(fx);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hd_fixture_setup, \
    hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_team__bad_names_are_refused_before_any_write),
		T(test_team__names_at_the_limits_are_accepted),
		T(test_team__duplicate_is_refused),
		T(test_team__missing_team_is_named),
		T(test_team__list_counts_agents_on_read),
		T(test_team__field_limits_have_clear_errors),
		T(test_team__spawn_depth_limit_defaults_and_updates),
		T(test_team__board_caps_default_and_update),
		T(test_agent__bad_names_and_runtimes_are_refused),
		T(test_agent__an_agent_is_in_one_team),
		T(test_team__one_leader_at_a_time),
		T(test_agent__roster_configs_parse_as_a_list_reads_them),
		T(test_team__rm_refuses_a_team_with_posts_unless_purged),
		T(test_team__rm_of_an_empty_team_needs_no_purge),
	};
	return cmocka_run_group_tests_name("unit/team", tests, NULL, NULL);
}
