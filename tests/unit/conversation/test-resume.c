/*
 * test-resume.c -- durability (SPEC 7): a process running a conversation
 * is killed with SIGKILL in the middle of an agent's turn, and another
 * engine finishes it with exactly one reply per message: through
 * hd_conversation_resume_all() (the dead process still a zombie), and
 * lazily, when the dead engine's message blocks a live engine's worker.
 * Also: a stopped engine puts its turn back and releases the conversation;
 * a conversation whose replies were all in when its process died is
 * completed (transcript and all) on resume.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/runtime.h>
#include <huddle/util.h>

#include "conv-test.h"
#include "store/store.h"

/* Make the coder quick (so the resumed turn ends at once). */
static void
coder_quick(hd_fixture *fx)
{
	hd_apply_report rep;
	hd_err err = HD_ERR_INIT;
	json_t *doc = json_pack("{s:s, s:[{s:s, s:s, s:{s:s}}]}", "team", "dev",
	    "agents", "id", "coder", "runtime", "scripted", "runtime_config",
	    "default", "coded");

	assert_hd_ok(hd_team_apply_json(&rep, fx->st, doc, "test",
			 hd_runtime_check_config, &err),
	    &err);
	hd_apply_report_dispose(&rep);
	json_decref(doc);
}

/* Make the coder quick; a new engine adopts the one conversation left
 * running and takes id to its end. Returns that engine. */
static hd_conversation_engine *
resume_to_end(hd_fixture *fx, const char *id)
{
	hd_conversation_engine *e;
	hd_err err = HD_ERR_INIT;
	size_t adopted = 0;

	coder_quick(fx);
	e = ct_engine(fx, NULL);
	assert_hd_ok(
	    hd_conversation_resume_all(&adopted, e, fx->st, &err), &err);
	assert_int_equal(adopted, 1);
	assert_hd_ok(
	    hd_conversation_wait(e, fx->st, id, CT_WAIT_MS, &err), &err);
	return e;
}

/* Fork a process that starts the conversation on its own engine and
 * runs it until killed; returns its pid, id gets the conversation. */
static pid_t
fork_engine(hd_fixture *fx, const char *message, char id[37])
{
	int fds[2];
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		hd_conversation_engine_config cfg;
		hd_conversation_engine *e = NULL;
		hd_conversation_spec spec = {"dev", message, "child"};
		hd_store *st = NULL;
		hd_err err = HD_ERR_INIT;
		char cid[37];

		close(fds[0]);
		memset(&cfg, 0, sizeof(cfg));
		cfg.home = fx->home;
		if (hd_store_open(&st, fx->home, &err) < 0 ||
		    hd_conversation_engine_start(&e, &cfg, &err) < 0 ||
		    hd_conversation_start(cid, e, st, &spec, &err) < 0) {
			fprintf(stderr, "child: %s\n", err.msg);
			_exit(1);
		}
		if (write(fds[1], cid, 37) != 37)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	n = read(fds[0], id, 37);
	close(fds[0]);
	assert_int_equal(n, 37);
	return pid;
}

/* Exactly one reply per delivery, every delivery done. */
static void
assert_one_reply_each(const hd_conversation *c)
{
	size_t i, j;

	assert_int_equal(c->nreplies, c->ndeliveries);
	assert_int_equal(c->total_messages, (int64_t)c->nreplies);
	for (i = 0; i < c->ndeliveries; i++) {
		int n = 0;

		assert_string_equal(c->deliveries[i].state, "done");
		for (j = 0; j < c->nreplies; j++)
			n += c->replies[j].delivery_id == c->deliveries[i].id;
		assert_int_equal(n, 1);
	}
}

static void
test_resume__killed_mid_turn_then_resumed(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_event_list ev;
	char id[37], *s;
	pid_t pid;
	int status;

	ct_slow_team(fx);
	pid = fork_engine(fx, "fan out", id);
	ct_wait_coder_running(fx, id);
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* not reaped yet: a zombie is as dead as a gone process */
	usleep(100000);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "running");
	assert_int_equal(c->pending, 1);
	hd_conversation_free(c);
	hd_assert_agent_status(fx, "coder", "working");

	e = resume_to_end(fx, id);
	hd_conversation_engine_stop(e);
	assert_int_equal(waitpid(pid, &status, 0), pid);

	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_one_reply_each(c);
	assert_int_equal(c->nreplies, 3);
	s = ct_replies(c);
	assert_string_equal(s, "manager: Fanning out. [@coder: slow job] "
			       "[@reviewer: quick job] | reviewer: reviewed | "
			       "coder: coded");
	free(s);
	hd_conversation_free(c);
	ev = ct_events(fx, "conversation_resumed", id);
	assert_int_equal(ev.n, 1);
	assert_int_equal(
	    json_integer_value(json_object_get(ev.items[0].data, "requeued")),
	    1);
	hd_event_list_dispose(&ev);
	hd_assert_agent_status(fx, "coder", "idle");
}

static void
test_resume__a_blocked_worker_takes_the_dead_engines_work_over(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_err err = HD_ERR_INIT;
	char id[37], id2[37];
	pid_t pid;
	int status;

	ct_slow_team(fx);
	/* fork before this process has threads of its own: a child forked
	 * while a thread holds an allocator lock (ASan's, libc's) would wait
	 * on it forever */
	pid = fork_engine(fx, "fan out", id);
	ct_wait_coder_running(fx, id);
	e = ct_engine(fx, NULL); /* alive before the other process dies */
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	coder_quick(fx);
	/* no resume_all: the coder's worker finds the dead engine's message
	 * in its way and takes that conversation over */
	ct_ask(fx, e, "dev", "@coder also this", id2);
	assert_hd_ok(
	    hd_conversation_wait(e, fx->st, id, CT_WAIT_MS, &err), &err);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_one_reply_each(c);
	assert_int_equal(c->nreplies, 3);
	hd_conversation_free(c);
	c = ct_get(fx, id2);
	assert_string_equal(c->status, "completed");
	assert_one_reply_each(c);
	assert_string_equal(c->response, "coded");
	hd_conversation_free(c);
}

static void
test_resume__a_stopped_engine_puts_its_turn_back(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_err err = HD_ERR_INIT;
	char id[37];
	size_t adopted = 0;

	ct_slow_team(fx);
	e = ct_engine(fx, NULL);
	{
		hd_conversation_spec spec = {"dev", "fan out", "test"};

		assert_hd_ok(
		    hd_conversation_start(id, e, fx->st, &spec, &err), &err);
	}
	ct_wait_coder_running(fx, id);
	hd_conversation_engine_stop(e); /* aborts the coder's turn */
	c = ct_get(fx, id);
	assert_string_equal(c->status, "running");
	assert_string_equal(ct_state_of(c, "coder"), "queued");
	assert_int_equal(c->nreplies, 2);
	hd_conversation_free(c);

	e = resume_to_end(fx, id);
	/* nothing left to take over */
	assert_hd_ok(
	    hd_conversation_resume_all(&adopted, e, fx->st, &err), &err);
	assert_int_equal(adopted, 0);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_one_reply_each(c);
	hd_conversation_free(c);
}

/* A pid that is certainly gone: a child that exited and was reaped. */
static pid_t
dead_pid(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return pid;
}

static void
test_resume__all_replies_in_but_not_completed(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_err err = HD_ERR_INIT;
	char id[37], path[4096], owner[64], *response, *before, *after;
	size_t adopted = 0;
	hd_stmt *s;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1, "[@coder: go]");
	ct_scripted(fx, "dev", "coder", 0, "went");
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "dev", "start", id);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	response = strdup(c->response);
	assert_hd_ok(hd_conversation_transcript_path(
			 path, sizeof(path), fx->home, c, &err),
	    &err);
	assert_hd_ok(hd_read_file(&before, NULL, path, 1 << 20, &err), &err);
	hd_conversation_free(c);

	/* as if its process died after the last reply, before completing */
	assert_int_equal(unlink(path), 0);
	snprintf(owner, sizeof(owner), "%d:1:dead", (int)dead_pid());
	assert_hd_ok(hd_store_prepare(fx->st, &s,
			 "UPDATE conversations SET status = 'running', response"
			 " = NULL, completed_at = NULL, owner = ?2,"
			 " owner_pid = ?3, owner_start = 1 WHERE id = ?1",
			 &err),
	    &err);
	hd_stmt_bind_text(s, 1, id);
	hd_stmt_bind_text(s, 2, owner);
	hd_stmt_bind_int(s, 3, atoll(owner));
	assert_int_equal(hd_stmt_step(s), HD_DONE);
	hd_store_reset(s);

	e = ct_engine(fx, NULL);
	assert_hd_ok(
	    hd_conversation_resume_all(&adopted, e, fx->st, &err), &err);
	assert_int_equal(adopted, 1);
	assert_hd_ok(hd_conversation_wait(e, fx->st, id, 1000, &err), &err);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_string_equal(c->response, response);
	assert_int_equal(c->nreplies, 2);
	hd_conversation_free(c);
	assert_hd_ok(hd_read_file(&after, NULL, path, 1 << 20, &err), &err);
	assert_string_equal(after, before);
	free(before);
	free(after);
	free(response);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_resume__killed_mid_turn_then_resumed),
	    hd_fixture_test(
		test_resume__a_blocked_worker_takes_the_dead_engines_work_over),
	    hd_fixture_test(test_resume__a_stopped_engine_puts_its_turn_back),
	    hd_fixture_test(test_resume__all_replies_in_but_not_completed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
