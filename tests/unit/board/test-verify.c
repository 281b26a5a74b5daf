/*
 * test-verify.c -- verification on the board (verify.h): the verifying
 * state in the state machine, who may give a verdict, the runs' take
 * (one taker; a dead runner's run taken again), every runner write
 * conditional on its run, the room lines each step makes, and a critic
 * given as a runtime: its throwaway member's join, verdict, leave and
 * sweep.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/agent.h>
#include <huddle/buf.h>
#include <huddle/mailbox.h>
#include <huddle/room.h>
#include <huddle/util.h>
#include <huddle/verify.h>

#include "board-test.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder tester");
}

/* A task with a gate and/or a critic, claimed by coder; its id. */
static int64_t
vt_task(hd_fixture *fx, const char *gate, const char *critic)
{
	hd_task_spec spec;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id;

	memset(&spec, 0, sizeof(spec));
	spec.team = "dev";
	spec.subject = "Parse";
	spec.gate = gate;
	spec.critic = critic;
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	id = t->id;
	hd_task_free(t);
	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	return id;
}

/* Complete task id as coder: it must go to verifying. */
static void
vt_submit(hd_fixture *fx, int64_t id)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_board_complete(&t, fx->st, id, "coder", "done", &err),
	    &err);
	assert_string_equal(t->status, "verifying");
	assert_string_equal(t->result, "done");
	assert_non_null(t->verify);
	assert_string_equal(t->verify->state, "queued");
	hd_task_free(t);
}

static void
test_board_verify__state_machine(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t id = vt_task(fx, "true", "tester");
	int64_t plain = bt_task(fx, "dev", "Plain", NULL, 0);

	/* a task without a spec completes as always */
	assert_hd_ok(hd_board_claim(NULL, fx->st, plain, "coder", &err), &err);
	assert_hd_ok(
	    hd_board_complete(NULL, fx->st, plain, "coder", NULL, &err), &err);
	assert_status(fx, plain, "completed");
	vt_submit(fx, id);
	assert_room_last(fx, "Task #1 \"Parse\" completed by coder; verifying: "
			     "gate `true`, critic tester.");
	/* from verifying only a verdict or a cancel moves it */
	assert_hd_err(hd_board_start(NULL, fx->st, id, "coder", &err),
	    HD_EREFUSED, "task 1 cannot go from verifying to in_progress", &err);
	assert_hd_err(hd_board_complete(NULL, fx->st, id, "coder", "x", &err),
	    HD_EREFUSED, "task 1 cannot go from verifying to completed", &err);
	assert_hd_err(hd_board_fail(NULL, fx->st, id, "coder", "x", &err),
	    HD_EREFUSED, "task 1 cannot go from verifying to failed", &err);
	assert_hd_err(hd_board_release(NULL, fx->st, id, "coder", &err),
	    HD_EREFUSED, "task 1 cannot go from verifying to pending", &err);
	assert_hd_ok(hd_board_cancel(NULL, fx->st, id, "manager", &err), &err);
	assert_status(fx, id, "cancelled");
}

static void
test_board_verify__who_gives_the_verdict(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	hd_messages m;
	int64_t id = vt_task(fx, NULL, "tester");

	assert_hd_err(hd_board_claim(NULL, fx->st, id, "tester", &err),
	    HD_EREFUSED,
	    "tester is the critic of task 1 and cannot own it (a task's owner "
	    "is never its own critic)",
	    &err);
	assert_hd_err(hd_board_verdict(NULL, fx->st, id, "tester", 1, NULL, &err),
	    HD_EREFUSED, "task 1 is claimed, not verifying", &err);
	vt_submit(fx, id);
	assert_hd_err(hd_board_verdict(NULL, fx->st, id, "coder", 1, NULL, &err),
	    HD_EREFUSED, "coder owns task 1 and cannot be its own critic", &err);
	assert_hd_err(
	    hd_board_verdict(NULL, fx->st, id, "manager", 1, NULL, &err),
	    HD_EREFUSED, "task 1's critic is tester, not manager", &err);
	assert_hd_err(hd_board_verdict(NULL, fx->st, id, "tester", 0, "", &err),
	    HD_EINVAL, "a rejection needs its reasons: what must change", &err);
	assert_status(fx, id, "verifying");
	/* reject: back to coder, with a comment and a message */
	assert_hd_ok(hd_board_verdict(&t, fx->st, id, "tester", 0,
			 "the tests fail", &err),
	    &err);
	assert_string_equal(t->status, "in_progress");
	assert_string_equal(t->owner, "coder");
	assert_null(t->result);
	hd_task_free(t);
	assert_room_last(fx, "Task #1 \"Parse\" rejected by tester: the tests "
			     "fail; back to coder.");
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_int_equal(t->ncomments, 1);
	assert_string_equal(t->comments[0].author, "tester");
	assert_string_equal(t->comments[0].body, "the tests fail");
	assert_string_equal(t->verify->verdict, "reject");
	hd_task_free(t);
	assert_hd_ok(hd_mailbox_read(&m, fx->st, "coder", 100, &err), &err);
	assert_true(m.n >= 1);
	assert_string_equal(m.items[m.n - 1].content,
	    "Task #1 \"Parse\" was rejected by tester: the tests fail");
	hd_messages_dispose(&m);
	/* approve, by a user: completed */
	vt_submit(fx, id);
	assert_hd_ok(
	    hd_board_verdict(&t, fx->st, id, NULL, 1, "checked by hand", &err),
	    &err);
	assert_string_equal(t->status, "completed");
	assert_string_equal(t->result, "done");
	assert_true(t->has_unblocked);
	hd_task_free(t);
	assert_room_last(fx, "Task #1 \"Parse\" approved by user: completed.");
}

static void
test_board_verify__approve_unblocks(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	int64_t id = vt_task(fx, NULL, "tester"), next;

	next = bt_task(fx, "dev", "Ship", &id, 1);
	vt_submit(fx, id);
	assert_int_equal(
	    strcmp(bt_blocked(fx, next, (char[16]){0}, 16), "1"), 0);
	assert_hd_ok(
	    hd_board_verdict(&t, fx->st, id, "tester", 1, NULL, &err), &err);
	assert_int_equal(t->nunblocked, 1);
	assert_int_equal(t->unblocked[0], next);
	hd_task_free(t);
	assert_room_last(fx, "Task #1 \"Parse\" approved by tester: completed; "
			     "now ready: #2 \"Ship\".");
}

/* A pid that names no process: a child that has exited and been reaped. */
static int64_t
dead_pid(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return (int64_t)p;
}

static void
test_board_verify__runs(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_verify_job j;
	hd_task *t = NULL;
	int64_t me = (int64_t)getpid(), start = hd_proc_start(me), dead;
	int found, passed, due;
	int64_t id = vt_task(fx, "make test", "tester");

	assert_hd_ok(hd_board_verify_due(&due, fx->st, &err), &err);
	assert_int_equal(due, 0);
	vt_submit(fx, id);
	assert_hd_ok(hd_board_verify_due(&due, fx->st, &err), &err);
	assert_int_equal(due, 1);
	/* one taker */
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r1", me, start,
			 0, &err),
	    &err);
	assert_int_equal(found, 1);
	assert_int_equal(j.task_id, id);
	assert_int_equal(j.attempt, 1);
	assert_string_equal(j.gate, "make test");
	assert_string_equal(j.critic, "tester");
	assert_string_equal(j.owner, "coder");
	assert_string_equal(j.summary, "done");
	hd_verify_job_dispose(&j);
	assert_room_last(fx, "Task #1 \"Parse\": verification started (attempt 1).");
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r2", me, start,
			 0, &err),
	    &err);
	assert_int_equal(found, 0); /* r1 lives: nothing to take */
	assert_hd_ok(hd_board_verify_due(&due, fx->st, &err), &err);
	assert_int_equal(due, 0);
	/* only r1 may write its run */
	assert_hd_err(hd_board_verify_fail(fx->st, id, "r2", "x", &err),
	    HD_ECONFLICT, "task 1's verification is no longer this runner's",
	    &err);
	assert_hd_ok(hd_board_verify_gate(&passed, fx->st, id, "r1", 0,
			 "exit status 0", "ok\n", &err),
	    &err);
	assert_int_equal(passed, 1);
	assert_room_last(fx, "Task #1 \"Parse\": gate passed (exit status 0).");
	assert_hd_err(hd_board_verify_retry(NULL, fx->st, id, "coder", &err),
	    HD_ECONFLICT, "task 1 is being verified by r1 (attempt 1)", &err);
	assert_hd_ok(hd_board_verify_fail(fx->st, id, "r1",
			 "critic tester's turn failed: boom", &err),
	    &err);
	assert_room_last(fx, "Task #1 \"Parse\": verification failed: critic "
			     "tester's turn failed: boom; the task stays "
			     "verifying (retry with huddle task verify dev 1).");
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_string_equal(t->status, "verifying");
	assert_string_equal(t->verify->state, "failed");
	assert_string_equal(
	    t->verify->error, "critic tester's turn failed: boom");
	assert_int_equal(t->verify->gate_exit, 0);
	hd_task_free(t);
	/* a failed run waits for a retry: nothing to take */
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r2", me, start,
			 0, &err),
	    &err);
	assert_int_equal(found, 0);
	assert_hd_err(hd_board_verify_retry(NULL, fx->st, id, "tester", &err),
	    HD_EREFUSED, "task 1 is owned by coder, not tester", &err);
	assert_hd_ok(hd_board_verify_retry(NULL, fx->st, id, "coder", &err),
	    &err);
	/* a runner that died: its run is taken again, as a new attempt */
	dead = dead_pid();
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "gone", dead, 1,
			 0, &err),
	    &err);
	assert_int_equal(found, 1);
	hd_verify_job_dispose(&j);
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r3", me, start,
			 id, &err),
	    &err);
	assert_int_equal(found, 1);
	assert_int_equal(j.attempt, 3);
	hd_verify_job_dispose(&j);
	assert_room_last(fx, "Task #1 \"Parse\": verification started (attempt "
			     "3, resumed: its last runner died).");
	/* a verdict meanwhile ends the run: the runner's writes conflict */
	assert_hd_ok(
	    hd_board_verdict(NULL, fx->st, id, "tester", 1, NULL, &err), &err);
	assert_hd_err(hd_board_verify_gate(&passed, fx->st, id, "r3", 1,
			  "exit status 1", "", &err),
	    HD_ECONFLICT, "task 1's verification is no longer this runner's",
	    &err);
	assert_status(fx, id, "completed");
}

static void
test_board_verify__failed_gate_rejects(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_verify_job j;
	hd_task *t = NULL;
	hd_messages m;
	int64_t me = (int64_t)getpid(), start = hd_proc_start(me);
	int found, passed;
	int64_t id = vt_task(fx, "make test", NULL);

	vt_submit(fx, id);
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r1", me, start,
			 0, &err),
	    &err);
	hd_verify_job_dispose(&j);
	assert_hd_ok(hd_board_verify_gate(&passed, fx->st, id, "r1", 2,
			 "exit status 2", "FAIL: test_parse\n", &err),
	    &err);
	assert_int_equal(passed, 0);
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_string_equal(t->status, "in_progress");
	assert_string_equal(t->comments[0].author, "huddle");
	assert_string_equal(t->comments[0].body,
	    "the gate failed (exit status 2); its output ends:\n"
	    "FAIL: test_parse\n");
	assert_string_equal(t->verify->verdict_by, "huddle");
	hd_task_free(t);
	/* without a critic a passing gate approves */
	vt_submit(fx, id);
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r1", me, start,
			 0, &err),
	    &err);
	hd_verify_job_dispose(&j);
	assert_hd_ok(hd_board_verify_gate(&passed, fx->st, id, "r1", 0,
			 "exit status 0", "", &err),
	    &err);
	assert_hd_ok(hd_board_verify_pass(fx->st, id, "r1", &err), &err);
	assert_status(fx, id, "completed");
	assert_room_last(fx, "Task #1 \"Parse\" approved by huddle: completed.");
	/* the leader hears of it as the owner's completion */
	assert_hd_ok(hd_mailbox_read(&m, fx->st, "manager", 100, &err), &err);
	assert_true(m.n >= 1);
	assert_string_equal(m.items[m.n - 1].from_agent, "coder");
	assert_string_equal(m.items[m.n - 1].content,
	    "Task #1 \"Parse\" completed by coder (approved by huddle): done");
	hd_messages_dispose(&m);
}

static void
test_board_verify__spec_checks(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec;
	hd_err err = HD_ERR_INIT;
	hd_tasks l;
	hd_task *t = NULL;

	memset(&spec, 0, sizeof(spec));
	spec.team = "dev";
	spec.subject = "X";
	spec.critic = "ghost";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EREFUSED,
	    "no member \"ghost\" in team dev", &err);
	spec.critic = NULL;
	spec.gate = "";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "gate command must not be empty", &err);
	spec.gate = "true";
	spec.workdir = "rel/dir";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "gate workdir must be an absolute path, not \"rel/dir\"", &err);
	spec.workdir = NULL;
	spec.gate_timeout_s = 86401;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "gate timeout must be 1..86400 seconds, not 86401", &err);
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, 0);
	hd_tasks_dispose(&l);
	/* no refusal used up a task number: the critic's membership is
	 * checked before the insert (on PostgreSQL a rolled-back insert
	 * keeps its identity value) */
	spec.gate_timeout_s = 0;
	spec.gate = NULL;
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	assert_int_equal(t->id, 1);
	hd_task_free(t);
}

/* A check standing for the runtime layer's (the domain knows no
 * runtime): exec alone, its config needing a command. */
static int
exec_only(const char *runtime, const json_t *cfg, hd_err *err)
{
	if (strcmp(runtime, "exec") != 0)
		return hd_err_set(err, HD_EINVAL, "unknown runtime \"%s\"",
		    runtime);
	if (json_object_get(cfg, "command") == NULL)
		return hd_err_set(err, HD_EINVAL, "exec needs a command");
	return 0;
}

/* A task whose critic is a runtime, claimed by coder and completed. */
static int64_t
vt_runtime_task(hd_fixture *fx)
{
	hd_task_spec spec;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *cfg = json_pack("{s:[s]}", "command", "/bin/true");
	int64_t id;

	memset(&spec, 0, sizeof(spec));
	spec.team = "dev";
	spec.subject = "Parse";
	spec.critic_runtime = "exec";
	spec.critic_config = cfg;
	spec.critic_check = exec_only;
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	json_decref(cfg);
	id = t->id;
	hd_task_free(t);
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_string_equal(t->verify->critic_runtime, "exec");
	assert_string_equal(t->verify->critic_config, "{\"command\":[\"/bin/true\"]}");
	assert_null(t->verify->critic);
	hd_task_free(t);
	assert_hd_ok(hd_board_claim(NULL, fx->st, id, "coder", &err), &err);
	vt_submit(fx, id);
	return id;
}

static int
member_gone(hd_fixture *fx, const char *id)
{
	hd_err err = HD_ERR_INIT;

	return hd_agent_exists(fx->st, id, &err) == HD_ENOTFOUND;
}

static void
test_board_verify__throwaway_critic(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_verify_job j;
	hd_agent_spec spec;
	hd_agent *a = NULL;
	hd_task *t = NULL;
	char *critic = NULL;
	int64_t me = (int64_t)getpid(), start = hd_proc_start(me);
	int found, removed;
	int64_t id = vt_runtime_task(fx);

	assert_room_last(fx, "Task #1 \"Parse\" completed by coder; verifying: "
			     "critic a fresh exec agent.");
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r1", me, start,
			 0, &err),
	    &err);
	assert_int_equal(found, 1);
	assert_null(j.critic);
	assert_string_equal(j.critic_runtime, "exec");
	/* only the run's runner makes its critic */
	assert_hd_err(hd_board_verify_critic_join(&critic, fx->st, id, "r2", 1,
			  exec_only, &err),
	    HD_ECONFLICT, "task 1's verification is no longer this runner's",
	    &err);
	assert_hd_ok(hd_board_verify_critic_join(&critic, fx->st, id, "r1",
			 j.attempt, exec_only, &err),
	    &err);
	hd_verify_job_dispose(&j);
	assert_string_equal(critic, "critic-1-1");
	assert_room_last(fx, "Task #1 \"Parse\": critic-1-1, a fresh exec agent, "
			     "joins as this run's critic (it leaves when the "
			     "run is over).");
	/* a member of the team, working (offered no ready work), marked */
	assert_hd_ok(hd_agent_get(&a, fx->st, critic, &err), &err);
	assert_string_equal(a->team_id, "dev");
	assert_string_equal(a->runtime, "exec");
	assert_string_equal(a->status, "working");
	assert_string_equal(a->role, "critic");
	assert_string_equal(a->spawned_by, "huddle");
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(a->runtime_config, "command"), 0)),
	    "/bin/true");
	hd_agent_free(a);
	/* a live run's critic is not swept */
	assert_hd_ok(hd_board_verify_sweep(&removed, fx->st, &err), &err);
	assert_int_equal(removed, 0);
	/* its verdict is the critic's; another member's is not */
	assert_hd_err(hd_board_verdict(NULL, fx->st, id, "tester", 1, NULL,
			  &err),
	    HD_EREFUSED, "task 1's critic is critic-1-1, not tester", &err);
	assert_hd_ok(hd_board_verdict(&t, fx->st, id, critic, 0,
			 "the parser drops blank lines", &err),
	    &err);
	assert_string_equal(t->status, "in_progress");
	hd_task_free(t);
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_string_equal(t->verify->verdict_by, "critic-1-1");
	assert_string_equal(t->comments[0].author, "critic-1-1");
	hd_task_free(t);
	/* it leaves when its run is over */
	assert_hd_ok(
	    hd_board_verify_critic_leave(fx->st, id, critic, &err), &err);
	assert_true(member_gone(fx, critic));
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_null(t->verify->run_critic);
	hd_task_free(t);
	free(critic);
	critic = NULL;
	/* a leave never removes a member that is not its throwaway */
	assert_hd_ok(
	    hd_board_verify_critic_leave(fx->st, id, "tester", &err), &err);
	assert_false(member_gone(fx, "tester"));

	/* a runner that died leaves its critic: the next take of its run
	 * removes it (a new attempt, a new name) */
	vt_submit(fx, id);
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "gone",
			 dead_pid(), 1, 0, &err),
	    &err);
	assert_hd_ok(hd_board_verify_critic_join(&critic, fx->st, id, "gone",
			 j.attempt, exec_only, &err),
	    &err);
	hd_verify_job_dispose(&j);
	assert_string_equal(critic, "critic-1-2");
	free(critic);
	critic = NULL;
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "r3", me, start,
			 0, &err),
	    &err);
	assert_int_equal(found, 1);
	assert_int_equal(j.attempt, 3);
	hd_verify_job_dispose(&j);
	assert_true(member_gone(fx, "critic-1-2"));
	/* a person's agent of the throwaway's name is never taken over */
	memset(&spec, 0, sizeof(spec));
	spec.id = "critic-1-3";
	spec.team = "dev";
	assert_hd_ok(hd_agent_add(NULL, fx->st, &spec, &err), &err);
	assert_hd_err(hd_board_verify_critic_join(&critic, fx->st, id, "r3", 3,
			  exec_only, &err),
	    HD_EEXISTS,
	    "agent \"critic-1-3\" exists and is not a throwaway critic: "
	    "rename it, or give the task a member as its critic",
	    &err);
	assert_null(critic);
	assert_false(member_gone(fx, "critic-1-3"));
	assert_hd_ok(hd_board_verify_fail(fx->st, id, "r3", "no critic", &err),
	    &err);
	/* a runner that died after its verdict came: the sweep removes its
	 * critic (a verifier sweeps when it starts) */
	assert_hd_ok(hd_board_verify_retry(NULL, fx->st, id, "coder", &err),
	    &err);
	assert_hd_ok(hd_board_verify_take(&found, &j, fx->st, "gone",
			 dead_pid(), 1, 0, &err),
	    &err);
	assert_hd_ok(hd_board_verify_critic_join(&critic, fx->st, id, "gone",
			 j.attempt, exec_only, &err),
	    &err);
	hd_verify_job_dispose(&j);
	assert_string_equal(critic, "critic-1-4");
	assert_hd_ok(
	    hd_board_verdict(NULL, fx->st, id, critic, 1, NULL, &err), &err);
	assert_status(fx, id, "completed");
	assert_false(member_gone(fx, critic));
	assert_hd_ok(hd_board_verify_sweep(&removed, fx->st, &err), &err);
	assert_int_equal(removed, 1);
	assert_true(member_gone(fx, critic));
	free(critic);
	critic = NULL;
	assert_false(member_gone(fx, "critic-1-3"));
}

static void
test_board_verify__critic_runtime_checks(void **state)
{
	hd_fixture *fx = *state;
	hd_task_spec spec;
	hd_err err = HD_ERR_INIT;
	json_t *cfg = json_pack("{s:s}", "model", "x");
	hd_tasks l;

	memset(&spec, 0, sizeof(spec));
	spec.team = "dev";
	spec.subject = "X";
	spec.critic = "tester";
	spec.critic_runtime = "exec";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "give a critic (a member) or a critic runtime (a throwaway critic "
	    "per run), not both",
	    &err);
	spec.critic = NULL;
	spec.critic_runtime = NULL;
	spec.critic_config = cfg;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "a critic config needs a critic runtime", &err);
	spec.critic_runtime = "Bad Name";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "invalid runtime name \"Bad Name\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	spec.critic_runtime = "codex";
	spec.critic_check = exec_only;
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "unknown runtime \"codex\"", &err);
	spec.critic_runtime = "exec";
	assert_hd_err(hd_board_create(NULL, fx->st, &spec, &err), HD_EINVAL,
	    "exec needs a command", &err);
	json_decref(cfg);
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, 0);
	hd_tasks_dispose(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_board_verify__state_machine, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__who_gives_the_verdict, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__approve_unblocks, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__runs, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__failed_gate_rejects, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__spec_checks, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__throwaway_critic, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_board_verify__critic_runtime_checks, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
