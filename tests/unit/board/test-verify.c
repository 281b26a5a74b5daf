/*
 * test-verify.c -- verification on the board (verify.h): the verifying
 * state in the state machine, who may give a verdict, the runs' take
 * (one taker; a dead runner's run taken again), every runner write
 * conditional on its run, and the room lines each step makes.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
