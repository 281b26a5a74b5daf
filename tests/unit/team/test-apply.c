/*
 * test-apply.c -- `huddle up`: team files are applied idempotently, in one
 * transaction, with exact errors for malformed input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/events.h>
#include <huddle/runtime.h>
#include <huddle/team.h>

#include "testutil.h"

static const char *const dev_file =
    "{\"team\": \"dev\", \"name\": \"Dev team\", \"description\": \"d\",\n"
    " \"agents\": [\n"
    "  {\"id\": \"manager\", \"leader\": true, \"role\": \"team lead\",\n"
    "   \"runtime\": \"scripted\", \"runtime_config\": {\"rules\":\n"
    "   [{\"when\": \"all hands\", \"reply\": \"ok\"}]}},\n"
    "  {\"id\": \"coder\", \"runtime\": \"exec\",\n"
    "   \"runtime_config\": {\"command\": [\"./bin/agent\"]}},\n"
    "  {\"id\": \"tester\", \"role\": \"tester\"}\n"
    " ]}\n";

static int64_t
event_count(hd_fixture *fx)
{
	int64_t head = 0;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_events_head(&head, fx->st, &err), &err);
	return head;
}

static void
test_apply__creates_then_changes_nothing_the_second_time(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report r;
	hd_team *t1 = NULL, *t2 = NULL;
	hd_agents l;
	char path[512];
	hd_err err = HD_ERR_INIT;
	int64_t events;

	snprintf(path, sizeof(path), "%s/dev.json", fx->home);
	hd_write_file(path, dev_file);
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, hd_runtime_check_config, &err), &err);
	assert_true(r.changed);
	assert_string_equal(
	    json_string_value(json_object_get(r.json, "action")), "created");
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_get(&t1, fx->st, "dev", &err), &err);
	assert_string_equal(t1->name, "Dev team");
	assert_string_equal(t1->leader_agent_id, "manager");
	assert_int_equal(t1->agent_count, 3);
	assert_hd_ok(hd_agent_list(&l, fx->st, "dev", &err), &err);
	assert_string_equal(l.items[0].id, "manager");
	assert_string_equal(l.items[0].role, "team lead");
	assert_string_equal(l.items[1].id, "coder");
	assert_string_equal(l.items[1].runtime, "exec");
	assert_string_equal(l.items[2].id, "tester");
	assert_string_equal(l.items[2].runtime, "scripted");
	hd_agents_dispose(&l);

	events = event_count(fx);
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, hd_runtime_check_config, &err), &err);
	assert_false(r.changed);
	assert_string_equal(
	    json_string_value(json_object_get(r.json, "action")), "unchanged");
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(r.json, "agents"), 1),
				"action")),
	    "unchanged");
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_get(&t2, fx->st, "dev", &err), &err);
	assert_int_equal(t2->updated_at, t1->updated_at);
	assert_int_equal(event_count(fx), events); /* nothing written */
	hd_team_free(t1);
	hd_team_free(t2);
}

static void
test_apply__an_edited_field_is_updated(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report r;
	hd_agent *a = NULL;
	hd_team *t = NULL;
	char path[512], *edited, *p;
	hd_err err = HD_ERR_INIT;

	snprintf(path, sizeof(path), "%s/dev.json", fx->home);
	hd_write_file(path, dev_file);
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, hd_runtime_check_config, &err), &err);
	hd_apply_report_dispose(&r);

	edited = strdup(dev_file);
	p = strstr(edited, "\"tester\"}");
	memcpy(p, "\"auditr\"}", 9); /* role tester -> auditr */
	hd_write_file(path, edited);
	free(edited);
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, hd_runtime_check_config, &err), &err);
	assert_true(r.changed);
	assert_string_equal(
	    json_string_value(json_object_get(r.json, "action")), "unchanged");
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(r.json, "agents"), 2),
				"action")),
	    "updated");
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_agent_get(&a, fx->st, "tester", &err), &err);
	assert_string_equal(a->role, "auditr");
	hd_agent_free(a);

	hd_write_file(path, "{\"team\": \"dev\", \"name\": \"Renamed\"}");
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, hd_runtime_check_config, &err), &err);
	assert_string_equal(
	    json_string_value(json_object_get(r.json, "action")), "updated");
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_string_equal(t->name, "Renamed");
	assert_int_equal(t->agent_count, 3); /* never deletes */
	hd_team_free(t);
}

static void
test_apply__max_spawn_depth_is_a_team_key(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report r;
	hd_team *t = NULL;
	char path[512], want[700];
	hd_err err = HD_ERR_INIT;
	int64_t events;

	snprintf(path, sizeof(path), "%s/dev.json", fx->home);
	hd_write_file(path, "{\"team\": \"dev\", \"max_spawn_depth\": 2}");
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_int_equal(t->max_spawn_depth, 2);
	hd_team_free(t);

	/* the same again changes nothing; another value is an update */
	events = event_count(fx);
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	assert_false(r.changed);
	hd_apply_report_dispose(&r);
	assert_int_equal(event_count(fx), events);
	hd_write_file(path, "{\"team\": \"dev\", \"max_spawn_depth\": 7}");
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	assert_true(r.changed);
	assert_string_equal(
	    json_string_value(json_object_get(r.json, "action")), "updated");
	hd_apply_report_dispose(&r);
	/* absent: whatever is set stays */
	hd_write_file(path, "{\"team\": \"dev\", \"name\": \"Dev\"}");
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_int_equal(t->max_spawn_depth, 7);
	hd_team_free(t);

	hd_write_file(path, "{\"team\": \"dev\", \"max_spawn_depth\": 0}");
	snprintf(want, sizeof(want),
	    "%s: max_spawn_depth must be an integer from 1 to 100", path);
	assert_hd_err(hd_team_apply_file(&r, fx->st, path, NULL, &err),
	    HD_EINVAL, want, &err);
	hd_write_file(path, "{\"team\": \"dev\", \"max_spawn_depth\": \"3\"}");
	assert_hd_err(hd_team_apply_file(&r, fx->st, path, NULL, &err),
	    HD_EINVAL, want, &err);
}

/* The board's caps are team keys too: set, kept when absent, checked. */
static void
test_apply__board_caps_are_team_keys(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report r;
	hd_team *t = NULL;
	char path[512], want[700];
	hd_err err = HD_ERR_INIT;

	snprintf(path, sizeof(path), "%s/dev.json", fx->home);
	hd_write_file(path, "{\"team\": \"dev\", \"max_children\": 5, "
			 "\"max_task_depth\": 3, \"max_new_roots\": 7, "
			 "\"new_roots_window_s\": 120}");
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	assert_false(r.changed);
	hd_apply_report_dispose(&r);
	hd_write_file(path, "{\"team\": \"dev\", \"max_children\": 6}");
	assert_hd_ok(hd_team_apply_file(&r, fx->st, path, NULL, &err), &err);
	assert_true(r.changed);
	hd_apply_report_dispose(&r);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_int_equal(t->max_children, 6);
	assert_int_equal(t->max_task_depth, 3);
	assert_int_equal(t->max_new_roots, 7);
	assert_int_equal(t->new_roots_window_s, 120);
	hd_team_free(t);

	hd_write_file(path, "{\"team\": \"dev\", \"max_task_depth\": 0}");
	snprintf(want, sizeof(want),
	    "%s: max_task_depth must be an integer from 1 to 20", path);
	assert_hd_err(hd_team_apply_file(&r, fx->st, path, NULL, &err),
	    HD_EINVAL, want, &err);
	hd_write_file(
	    path, "{\"team\": \"dev\", \"new_roots_window_s\": \"9\"}");
	snprintf(want, sizeof(want),
	    "%s: new_roots_window_s must be an integer from 1 to 86400", path);
	assert_hd_err(hd_team_apply_file(&r, fx->st, path, NULL, &err),
	    HD_EINVAL, want, &err);
}

static void
test_apply__several_leaders_keep_the_first_with_a_warning(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report r;
	hd_team *t = NULL;
	json_t *doc;
	hd_err err = HD_ERR_INIT;

	doc = json_loads("{\"team\": \"dev\", \"agents\": ["
			 "{\"id\": \"manager\"},"
			 "{\"id\": \"coder\", \"leader\": true},"
			 "{\"id\": \"tester\", \"leader\": true}]}",
	    0, NULL);
	assert_hd_ok(hd_team_apply_json(
			 &r, fx->st, doc, "dev.json", hd_runtime_check_config, &err),
	    &err);
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(r.json, "warnings"), 0)),
	    "multiple leaders flagged for team dev; keeping the first (coder)");
	hd_apply_report_dispose(&r);
	json_decref(doc);
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_string_equal(t->leader_agent_id, "coder");
	hd_team_free(t);
}

static void
expect_refused(hd_fixture *fx, const char *text, const char *want)
{
	hd_apply_report r;
	hd_teams l;
	char path[512];
	hd_err err = HD_ERR_INIT;
	int64_t before = event_count(fx);

	snprintf(path, sizeof(path), "%s/team.json", fx->home);
	hd_write_file(path, text);
	assert_int_not_equal(hd_team_apply_file(&r, fx->st, path, hd_runtime_check_config, &err), 0);
	if (strncmp(want, "%s", 2) == 0) {
		char full[1024];

		snprintf(full, sizeof(full), "%s%s", path, want + 2);
		assert_string_equal(err.msg, full);
	} else
		assert_string_equal(err.msg, want);
	assert_hd_ok(hd_team_list(&l, fx->st, &err), &err);
	assert_int_equal(l.n, 0); /* nothing written */
	hd_teams_dispose(&l);
	assert_int_equal(event_count(fx), before);
}

static void
test_apply__malformed_files_name_the_place_and_change_nothing(void **state)
{
	hd_fixture *fx = *state;

	expect_refused(fx, "{\"team\": \"dev\",\n  \"agents\": [\n    {\"id\": }\n]}",
	    "%s:3:12: unexpected token near '}'");
	expect_refused(fx, "{\"team\": \"dev\", \"team\": \"x\"}",
	    "%s:1:22: duplicate object key near '\"team\"'");
	expect_refused(fx, "", "%s:1:0: '[' or '{' expected near end of file");
	expect_refused(fx, "[1, 2]", "%s: a team file must be a JSON object");
	expect_refused(fx, "{\"name\": \"x\"}",
	    "%s: \"team\" (the team id) is required");
	expect_refused(fx, "{\"team\": \"Dev\"}",
	    "%s: invalid team name \"Dev\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'");
	expect_refused(fx, "{\"team\": \"dev\", \"agnets\": []}",
	    "%s: unknown key \"agnets\"");
	expect_refused(fx,
	    "{\"team\": \"dev\", \"agents\": [{\"id\": \"a\"}, {\"id\": \"../b\"}]}",
	    "%s: agents[1].invalid agent name \"../b\": use 1-50 lowercase "
	    "letters, digits, '-' or '_'");
	expect_refused(fx,
	    "{\"team\": \"dev\", \"agents\": [{\"id\": \"a\"}, {\"id\": \"a\"}]}",
	    "%s: agents[1].id \"a\" appears twice");
	expect_refused(fx,
	    "{\"team\": \"dev\", \"agents\": [{\"id\": \"a\", \"leader\": 1}]}",
	    "%s: agents[0].leader must be true or false");
	expect_refused(fx,
	    "{\"team\": \"dev\", \"agents\": [{\"id\": \"a\", \"runtime\": "
	    "\"exec\", \"runtime_config\": {\"command\": \"ls\"}}]}",
	    "%s: agents[0].runtime_config.command must be a non-empty array of "
	    "strings");
	/* a runtime this build has no adapter for, planned or not */
	expect_refused(fx,
	    "{\"team\": \"dev\", \"agents\": [{\"id\": \"a\", \"runtime\": "
	    "\"x\"}]}",
	    "%s: agents[0].runtime \"x\" is not available in this build: use "
	    "scripted, exec, claude-code, codex, native, hermes or openclaw");
}

static void
test_apply__an_agent_of_another_team_rolls_everything_back(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report r;
	hd_team *t = NULL;
	json_t *doc;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "qa", "coder", NULL);
	doc = json_loads("{\"team\": \"dev\", \"agents\": [{\"id\": \"manager\"},"
			 " {\"id\": \"coder\"}]}",
	    0, NULL);
	assert_hd_err(hd_team_apply_json(
			 &r, fx->st, doc, "dev.json", hd_runtime_check_config, &err),
	    HD_EREFUSED, "dev.json: agent \"coder\" already belongs to team qa",
	    &err);
	json_decref(doc);
	assert_hd_err(hd_team_get(&t, fx->st, "dev", &err), HD_ENOTFOUND,
	    "team \"dev\" not found", &err);
}

/* Four processes apply the same file at once: one consistent team, no
 * error, created exactly once. */
static void
test_apply__concurrent_processes_agree(void **state)
{
	hd_fixture *fx = *state;
	hd_event_list ev;
	hd_event_filter f = {.kind = "team_created"};
	hd_team *t = NULL;
	char path[512];
	pid_t pids[4];
	int i, status;
	hd_err err = HD_ERR_INIT;

	snprintf(path, sizeof(path), "%s/dev.json", fx->home);
	hd_write_file(path, dev_file);
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			hd_store *st = NULL;
			hd_apply_report r;
			hd_err cerr = HD_ERR_INIT;
			int rc;

			if (hd_store_open(&st, fx->home, &cerr) != 0)
				_exit(10);
			rc = hd_team_apply_file(&r, st, path, hd_runtime_check_config, &cerr);
			if (rc != 0)
				fprintf(stderr, "child: %s\n", cerr.msg);
			hd_apply_report_dispose(&r);
			hd_store_close(st);
			_exit(rc == 0 ? 0 : 11);
		}
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_hd_ok(hd_team_get(&t, fx->st, "dev", &err), &err);
	assert_int_equal(t->agent_count, 3);
	assert_string_equal(t->leader_agent_id, "manager");
	hd_team_free(t);
	assert_hd_ok(hd_events_list(&ev, fx->st, &f, &err), &err);
	assert_int_equal(ev.n, 1);
	hd_event_list_dispose(&ev);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hd_fixture_setup, \
    hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_apply__creates_then_changes_nothing_the_second_time),
		T(test_apply__an_edited_field_is_updated),
		T(test_apply__max_spawn_depth_is_a_team_key),
		T(test_apply__board_caps_are_team_keys),
		T(test_apply__several_leaders_keep_the_first_with_a_warning),
		T(test_apply__malformed_files_name_the_place_and_change_nothing),
		T(test_apply__an_agent_of_another_team_rolls_everything_back),
		T(test_apply__concurrent_processes_agree),
	};
	return cmocka_run_group_tests_name("unit/team/apply", tests, NULL,
	    NULL);
}
