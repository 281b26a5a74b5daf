/*
 * test-replace.c -- replacing a member (hd_team_replace): the new agent
 * takes the old one's role, runtime and config unless given, its claimed
 * and in_progress tasks with a comment each, and hears of them in its
 * first message; the old one is shut down; every refusal, and a failure
 * late in the transaction, leaves everything as it was.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/mailbox.h>
#include <huddle/runtime.h>
#include <huddle/spawn.h>
#include <huddle/team.h>

#include "testutil.h"

struct rfx {
	hd_fixture *fx;
	int64_t claimed, started, done, pending;
};

/* A task of team dev as "user"; claimed (and started, and completed) by
 * owner when given. */
static int64_t
task(hd_fixture *fx, const char *subject, const char *owner, int start,
    int complete)
{
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id;

	ts.team = "dev";
	ts.subject = subject;
	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err);
	id = t->id;
	hd_task_free(t);
	if (owner != NULL)
		assert_hd_ok(
		    hd_board_claim(NULL, fx->st, id, owner, &err), &err);
	if (start)
		assert_hd_ok(
		    hd_board_start(NULL, fx->st, id, owner, &err), &err);
	if (complete)
		assert_hd_ok(
		    hd_board_complete(NULL, fx->st, id, owner, NULL, &err),
		    &err);
	return id;
}

/* Team dev: manager (leader), coder (exec, role coder, in error: exit
 * status 1, two open tasks, one done), tester. */
static int
setup(void **state)
{
	hd_fixture *fx;
	hd_agent_spec as = {0};
	struct rfx *r;
	json_t *cfg = json_pack("{s:[s]}", "command", "./agent.sh");
	hd_err err = HD_ERR_INIT;

	if (hd_fixture_setup((void **)&fx) != 0)
		return -1;
	hd_fixture_team(fx, "dev", "manager", "tester", NULL);
	as.team = "dev";
	as.id = "coder";
	as.role = "coder";
	as.runtime = "exec";
	as.runtime_config = cfg;
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	json_decref(cfg);
	assert_hd_ok(hd_agent_set_status_reason(
			 fx->st, "coder", "error", "exit status 1", &err),
	    &err);
	r = calloc(1, sizeof(*r));
	r->fx = fx;
	r->claimed = task(fx, "Fix the claim path", "coder", 0, 0);
	r->started = task(fx, "Write the test", "coder", 1, 0);
	r->done = task(fx, "Old work", "coder", 0, 1);
	r->pending = task(fx, "Nobody's", NULL, 0, 0);
	*state = r;
	return 0;
}

static int
teardown(void **state)
{
	struct rfx *r = *state;

	*state = r->fx;
	free(r);
	return hd_fixture_teardown(state);
}

/* The owner of task id, as "" when none, into buf. */
static const char *
owner(hd_fixture *fx, int64_t id, char *buf, size_t len)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	snprintf(buf, len, "%s", t->owner ? t->owner : "");
	hd_task_free(t);
	return buf;
}

/* Nothing changed: coder still owns its tasks and is in error, and no
 * coder-2 exists. */
static void
expect_untouched(struct rfx *r)
{
	hd_fixture *fx = r->fx;
	hd_agent *a = NULL;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	char buf[64];

	assert_string_equal(owner(fx, r->claimed, buf, sizeof(buf)), "coder");
	assert_string_equal(owner(fx, r->started, buf, sizeof(buf)), "coder");
	assert_hd_ok(hd_board_get(&t, fx->st, r->started, &err), &err);
	assert_int_equal(t->ncomments, 0);
	hd_task_free(t);
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->status, "error");
	assert_string_equal(a->status_reason, "exit status 1");
	hd_agent_free(a);
	assert_int_equal(
	    hd_agent_get(&a, fx->st, "coder-2", &err), HD_ENOTFOUND);
}

static void
test_replace__takes_over_open_tasks_in_one_go(void **state)
{
	struct rfx *r = *state;
	hd_fixture *fx = r->fx;
	hd_spawn_spec s = {0};
	hd_agent *a = NULL, *old = NULL;
	hd_tasks moved;
	hd_task *t = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char buf[64];

	s.team = "dev";
	s.id = "coder-2";
	s.replaces = "coder";
	s.caller = "manager";
	s.check = hd_runtime_check_config;
	assert_hd_ok(hd_team_replace(&a, &moved, fx->st, &s, &err), &err);

	/* the old one's role, runtime and config; spawned as spawns are */
	assert_string_equal(a->role, "coder");
	assert_string_equal(a->runtime, "exec");
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(a->runtime_config, "command"), 0)),
	    "./agent.sh");
	assert_string_equal(a->spawned_by, "manager");
	assert_int_equal(a->spawn_depth, 1);
	/* it took over a started task: working by its work (activity.h) */
	assert_string_equal(a->status, "working");

	/* the open tasks moved, status kept; the rest stayed */
	assert_int_equal(moved.n, 2);
	assert_int_equal(moved.items[0].id, r->claimed);
	assert_string_equal(moved.items[0].status, "claimed");
	assert_int_equal(moved.items[1].id, r->started);
	assert_string_equal(moved.items[1].status, "in_progress");
	hd_tasks_dispose(&moved);
	assert_string_equal(owner(fx, r->claimed, buf, sizeof(buf)), "coder-2");
	assert_string_equal(owner(fx, r->started, buf, sizeof(buf)), "coder-2");
	assert_string_equal(owner(fx, r->done, buf, sizeof(buf)), "coder");
	assert_string_equal(owner(fx, r->pending, buf, sizeof(buf)), "");
	assert_hd_ok(hd_board_get(&t, fx->st, r->started, &err), &err);
	assert_int_equal(t->ncomments, 1);
	assert_string_equal(t->comments[0].author, "manager");
	assert_string_equal(t->comments[0].body,
	    "moved from coder to coder-2: coder is in error (exit status 1); "
	    "coder-2 replaces it");
	hd_task_free(t);

	/* the old one is retired, saying by whom */
	assert_hd_ok(hd_agent_get(&old, fx->st, "coder", &err), &err);
	assert_string_equal(old->status, "shutdown");
	assert_string_equal(old->status_reason, "replaced by coder-2");
	hd_agent_free(old);

	/* the first message names what it took over */
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "coder-2", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].from_agent, "manager");
	assert_string_equal(l.items[0].content,
	    "Join team dev as coder-2\n\n"
	    "You replace coder, who is in error (exit status 1). You took "
	    "over its unfinished tasks:\n"
	    "  - #1 \"Fix the claim path\" (claimed)\n"
	    "  - #2 \"Write the test\" (in_progress)");
	hd_messages_dispose(&l);
	hd_agent_free(a);
}

static void
test_replace__given_fields_win_and_a_task_comes_first(void **state)
{
	struct rfx *r = *state;
	hd_fixture *fx = r->fx;
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	json_t *cfg = json_pack("{s:s}", "workdir", "/src");
	const char *want;

	/* another runtime: the old config does not carry over */
	s.team = "dev";
	s.id = "coder-2";
	s.replaces = "coder";
	s.runtime = "claude-code";
	s.model = "sonnet";
	s.role = "fixer";
	s.task = "Finish what coder started";
	s.check = hd_runtime_check_config;
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_string_equal(a->role, "fixer");
	assert_string_equal(a->runtime, "claude-code");
	assert_int_equal(json_object_size(a->runtime_config), 1);
	assert_string_equal(
	    json_string_value(json_object_get(a->runtime_config, "model")),
	    "sonnet");
	/* no agent caller: a user, and the leader sends the message */
	assert_string_equal(a->spawned_by, "manager");
	hd_agent_free(a);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "coder-2", 0, &err), &err);
	want = "Finish what coder started\n\nYou replace coder, who is in "
	       "error (exit status 1). You took over";
	assert_true(strncmp(l.items[0].content, want, strlen(want)) == 0);
	hd_messages_dispose(&l);

	/* replacing a member with nothing open, config given */
	s.id = "tester-2";
	s.replaces = "tester";
	s.runtime = NULL;
	s.model = NULL;
	s.role = NULL;
	s.task = NULL;
	s.runtime_config = cfg;
	s.runtime = "codex";
	assert_hd_ok(hd_team_spawn(&a, fx->st, &s, &err), &err);
	assert_string_equal(
	    json_string_value(json_object_get(a->runtime_config, "workdir")),
	    "/src");
	hd_agent_free(a);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "tester-2", 0, &err), &err);
	assert_string_equal(l.items[0].content,
	    "Join team dev as tester-2\n\nYou replace tester, who is idle. It "
	    "had no unfinished tasks.");
	hd_messages_dispose(&l);
	json_decref(cfg);
}

static void
test_replace__refusals_change_nothing(void **state)
{
	struct rfx *r = *state;
	hd_fixture *fx = r->fx;
	hd_spawn_spec s = {0};
	hd_team_spec ts = {0};
	hd_agent *a = NULL;
	hd_tasks moved;
	hd_err err = HD_ERR_INIT;

	s.team = "dev";
	s.id = "coder-2";
	s.check = hd_runtime_check_config;
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err), HD_EINVAL,
	    "a replacement needs the agent it replaces", &err);
	s.replaces = "ghost";
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err),
	    HD_EREFUSED, "no member \"ghost\" in team dev", &err);
	s.replaces = "manager";
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err),
	    HD_EREFUSED, "cannot replace the leader (manager) of team dev",
	    &err);
	s.replaces = "coder";
	s.caller = "tester";
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err),
	    HD_EREFUSED,
	    "only the team leader or a user may replace coder, not tester",
	    &err);
	s.caller = "manager";
	s.id = "tester";
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err), HD_EEXISTS,
	    "agent \"tester\" already exists in team dev", &err);
	s.id = "coder-2";
	s.runtime = "teleport";
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err), HD_EINVAL,
	    "runtime \"teleport\" is not available in this build: use "
	    "scripted, exec, claude-code, codex, native, hermes or openclaw",
	    &err);
	s.runtime = NULL;
	s.model = "sonnet"; /* exec takes no model */
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err), HD_EINVAL,
	    "runtime_config: unknown key \"model\" for runtime exec", &err);
	s.model = NULL;

	/* the depth rule holds: a leader that was itself spawned */
	{
		hd_spawn_spec d = {0};

		d.team = "dev";
		d.id = "lead-2";
		assert_hd_ok(hd_team_spawn(NULL, fx->st, &d, &err), &err);
	}
	ts.id = "dev";
	ts.leader = "lead-2";
	ts.max_spawn_depth = 1;
	assert_hd_ok(hd_team_update(NULL, fx->st, &ts, &err), &err);
	s.caller = "lead-2";
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err),
	    HD_EREFUSED,
	    "cannot spawn: depth 2 would exceed team dev's spawn depth limit "
	    "of 1 (lead-2 is at depth 1)",
	    &err);
	assert_hd_ok(hd_team_set_status(fx->st, "dev", "shutdown", &err), &err);
	assert_hd_err(hd_team_replace(&a, &moved, fx->st, &s, &err),
	    HD_EREFUSED, "team \"dev\" is not active (status: shutdown)", &err);
	assert_null(a);
	assert_int_equal(moved.n, 0);
	expect_untouched(r);
}

/* A failure after the tasks moved (the first message, task plus the
 * list, is too long) rolls the whole replacement back. */
static void
test_replace__a_late_failure_rolls_everything_back(void **state)
{
	struct rfx *r = *state;
	hd_fixture *fx = r->fx;
	hd_spawn_spec s = {0};
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	char *task = malloc(HD_MESSAGE_MAX + 1);

	memset(task, 'x', HD_MESSAGE_MAX);
	task[HD_MESSAGE_MAX] = '\0'; /* fits alone; not with the list */
	s.team = "dev";
	s.id = "coder-2";
	s.replaces = "coder";
	s.task = task;
	assert_hd_err(hd_team_spawn(&a, fx->st, &s, &err), HD_ETOOBIG,
	    "message is 100165 bytes; the limit is 100000", &err);
	free(task);
	expect_untouched(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_replace__takes_over_open_tasks_in_one_go, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_replace__given_fields_win_and_a_task_comes_first, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_replace__refusals_change_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_replace__a_late_failure_rolls_everything_back, setup,
		teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
