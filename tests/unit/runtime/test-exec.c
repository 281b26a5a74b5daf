/*
 * test-exec.c -- the exec runtime (SPEC 9.4) with real processes: the
 * prompt on stdin or as an argument, the reply streamed, the environment,
 * errors with the stderr tail, the 1 MiB cap, bytes untouched, a command
 * that never reads its input, and timeouts and aborts that kill the whole
 * process group and leave no zombie or orphan behind. Two turns on two
 * threads run at the same time. A command dies with the process that
 * runs it (kill -9 of that process) and reports its process group at
 * spawn, so what it left there can be killed later.
 *
 * The test process makes itself a child subreaper, so processes the
 * commands leave behind become its children: a killed one can then be
 * reaped here and checked gone with kill(pid, 0) == ESRCH.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "rec.h"

/* An executable script in the fixture home (hd_fixture_script). */
static const char *
script(hd_fixture *fx, const char *name, const char *body)
{
	return hd_fixture_script(fx, name, body);
}

/* runtime_config {"command": [path], ...extra} */
static json_t *
config_for(const char *path, const char *extra_json)
{
	json_t *cfg =
	    extra_json ? json_loads(extra_json, 0, NULL) : json_object();

	assert_non_null(cfg);
	json_object_set_new(cfg, "command", json_pack("[s]", path));
	return cfg;
}

typedef struct turn_case {
	hd_agent agent;
	hd_runtime_turn turn;
	hd_runtime_result res;
	hd_err err;
	rec r;
	int rc;
} turn_case;

static void
case_init(turn_case *c, json_t *cfg, const char *prompt)
{
	memset(c, 0, sizeof(*c));
	c->agent.id = (char *)"coder";
	c->agent.team_id = (char *)"dev";
	c->agent.runtime = (char *)"exec";
	c->agent.runtime_config = cfg;
	c->turn.agent = &c->agent;
	c->turn.prompt = prompt;
	c->err = (hd_err)HD_ERR_INIT;
	rec_init(&c->r);
}

static int
case_run(turn_case *c)
{
	const hd_runtime_adapter *rt;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_runtime_find(&rt, "exec", &err), &err);
	c->rc = hd_runtime_run_turn(
	    &c->res, rt, &c->turn, rec_sink, &c->r, &c->err);
	return c->rc;
}

static void
case_dispose(turn_case *c)
{
	hd_runtime_result_dispose(&c->res);
	rec_dispose(&c->r);
	json_decref(c->agent.runtime_config);
}

/* The pid a script wrote to file, or -1. */
static pid_t
pid_from(const hd_fixture *fx, const char *file)
{
	char path[600], *text = NULL;
	hd_err err = HD_ERR_INIT;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", fx->home, file);
	if (hd_read_file(&text, NULL, path, 64, &err) < 0)
		return -1;
	pid = (pid_t)atoi(text);
	free(text);
	return pid;
}

/* 1 once pid is gone (reaping it if it became our zombie), within 10 s. */
static int
gone(pid_t pid)
{
	int i;

	for (i = 0; i < 1000; i++) {
		waitpid(pid, NULL, WNOHANG);
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return 1;
		hd_sleep_us(10000);
	}
	return 0;
}

static void
test_exec__stdin_in_reply_out(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;

	case_init(&c, config_for(script(fx, "upper.sh", "tr a-z A-Z"), NULL),
	    "hello, agent");
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "HELLO, AGENT");
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	assert_string_equal(hd_buf_cstr(&c.r.reply), "HELLO, AGENT");
	assert_int_equal(rec_count(&c.r, HD_RT_DONE), 1);
	assert_int_equal(c.r.kinds[c.r.n - 1], HD_RT_DONE);
	assert_int_equal(c.r.kinds[c.r.n - 2], HD_RT_COST);
	/* 12 chars each way: 3 tokens in, 3 out, estimated */
	assert_int_equal(c.res.cost.microcents, 3 * 300 + 3 * 1500);
	assert_int_equal(c.res.cost.estimated, 1);
	case_dispose(&c);
}

static void
test_exec__prompt_as_last_argument(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;
	json_t *cfg;

	(void)fx;
	cfg = json_pack("{s:[s,s,s], s:s}", "command", "sh", "-c",
	    "printf '%s|' \"$0\"; printf '[%s]' \"$(cat)\"", "prompt", "arg");
	case_init(&c, cfg, "the prompt, with spaces");
	assert_hd_ok(case_run(&c), &c.err);
	/* the prompt is the last argument; stdin is empty */
	assert_string_equal(c.res.text, "the prompt, with spaces|[]");
	case_dispose(&c);
}

static void
test_exec__environment(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;
	json_t *cfg;

	setenv("HUDDLE_MCP_TOKEN", "the-parent-token", 1);
	setenv("HUDDLE_TEST_INHERITED", "inherited", 1);
	cfg = config_for(script(fx, "env.sh",
			     "echo \"agent=$HUDDLE_AGENT team=$HUDDLE_TEAM "
			     "home=$HUDDLE_HOME url=$HUDDLE_MCP_URL "
			     "token=$HUDDLE_MCP_TOKEN ahome=$HUDDLE_AGENT_HOME "
			     "extra=$EXTRA inh=$HUDDLE_TEST_INHERITED\""),
	    "{\"env\": {\"EXTRA\": \"from config\", \"HUDDLE_AGENT\": "
	    "\"impostor\"}}");
	case_init(&c, cfg, "");
	c.turn.team = "dev";
	c.turn.huddle_home = "/srv/huddle";
	c.turn.mcp_url = "http://127.0.0.1:7340/mcp?x=1";
	c.turn.home_dir = "/srv/huddle/homes/exec/coder";
	assert_hd_ok(case_run(&c), &c.err);
	/* the parent's token is never passed on; the config cannot
	 * override huddle's identity variables */
	assert_string_equal(c.res.text,
	    "agent=coder team=dev home=/srv/huddle "
	    "url=http://127.0.0.1:7340/mcp?x=1 token= "
	    "ahome=/srv/huddle/homes/exec/coder extra=from config "
	    "inh=inherited\n");
	case_dispose(&c);

	cfg = config_for(
	    script(fx, "env2.sh", "echo \"token=$HUDDLE_MCP_TOKEN\""), NULL);
	case_init(&c, cfg, "");
	c.turn.mcp_token = "tok-coder";
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "token=tok-coder\n");
	case_dispose(&c);
	unsetenv("HUDDLE_MCP_TOKEN");
	unsetenv("HUDDLE_TEST_INHERITED");
}

static void
test_exec__cwd(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;
	json_t *cfg;
	char want[600];

	cfg = json_pack("{s:[s], s:s}", "command", "pwd", "cwd", fx->home);
	case_init(&c, cfg, "");
	assert_hd_ok(case_run(&c), &c.err);
	snprintf(want, sizeof(want), "%s\n", fx->home);
	assert_string_equal(c.res.text, want);
	case_dispose(&c);
}

static void
test_exec__nonzero_exit_reports_the_stderr_tail(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;
	char want[1024];
	size_t len;
	int i;

	/* 30 lines on stderr: the message keeps the last 20 */
	case_init(&c,
	    config_for(script(fx, "fail.sh",
			   "echo partial; i=1; while [ $i -le 30 ];"
			   " do echo \"line $i\" >&2; i=$((i+1));"
			   " done; exit 3"),
		NULL),
	    "x");
	len = (size_t)snprintf(want, sizeof(want), "exit status 3:");
	for (i = 11; i <= 30; i++)
		len += (size_t)snprintf(
		    want + len, sizeof(want) - len, " line %d", i);
	assert_hd_err(case_run(&c), HD_ERR, want, &c.err);
	assert_int_equal(c.res.reason, HD_DONE_ERROR);
	assert_string_equal(c.res.error, want);
	assert_string_equal(c.res.text, "partial\n");
	assert_string_equal(rec_kinds(&c.r), "text_delta,error,cost,done");
	case_dispose(&c);

	/* no stderr: just the status */
	case_init(&c, config_for(script(fx, "fail2.sh", "exit 7"), NULL), "x");
	assert_hd_err(case_run(&c), HD_ERR, "exit status 7", &c.err);
	case_dispose(&c);

	/* killed by a signal */
	case_init(
	    &c, config_for(script(fx, "fail3.sh", "kill -9 $$"), NULL), "x");
	assert_hd_err(
	    case_run(&c), HD_ERR, "killed by signal 9 (SIGKILL)", &c.err);
	case_dispose(&c);

	/* a long stderr keeps only its last 4 KiB */
	case_init(&c,
	    config_for(script(fx, "fail4.sh",
			   "head -c 100000 /dev/zero | tr '\\0' e"
			   " >&2; exit 1"),
		NULL),
	    "x");
	assert_int_equal(case_run(&c), HD_ERR);
	assert_int_equal(strlen(c.res.error), strlen("exit status 1: ") + 4096);
	case_dispose(&c);
}

static void
test_exec__a_command_that_cannot_run(void **state)
{
	turn_case c;

	(void)state;
	case_init(
	    &c, json_pack("{s:[s]}", "command", "/nonexistent/agent"), "x");
	assert_hd_err(case_run(&c), HD_ERR,
	    "cannot run \"/nonexistent/agent\": No such file or directory",
	    &c.err);
	assert_string_equal(rec_kinds(&c.r), "error,cost,done");
	case_dispose(&c);

	case_init(&c, json_object(), "x"); /* {} passes agent checks */
	assert_hd_err(case_run(&c), HD_EINVAL,
	    "runtime_config.command must be a non-empty array of strings",
	    &c.err);
	assert_int_equal(c.res.reason, HD_DONE_ERROR);
	case_dispose(&c);
}

static void
test_exec__output_is_capped_at_one_mib(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;
	size_t i, note = strlen(HD_RUNTIME_TRUNCATED_NOTE);

	/* 5 MiB: the writer is never blocked or killed by the cap (exit 0) */
	case_init(&c,
	    config_for(
		script(fx, "big.sh", "head -c 5242880 /dev/zero | tr '\\0' a"),
		NULL),
	    "");
	assert_hd_ok(case_run(&c), &c.err);
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	assert_int_equal(c.res.truncated, 1);
	assert_int_equal(c.res.text_len, 1048576 + note);
	for (i = 0; i < 1048576; i++)
		if (c.res.text[i] != 'a')
			fail_msg("byte %zu is %d", i, c.res.text[i]);
	assert_string_equal(c.res.text + 1048576,
	    "\n[output truncated: the agent wrote more than 1 MiB]");
	assert_int_equal(c.r.reply.len, c.res.text_len);
	case_dispose(&c);
}

static void
test_exec__bytes_pass_through_untouched(void **state)
{
	hd_fixture *fx = *state;
	const char *uni = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x80\x94 "
			  "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x8e\x89\n";
	hd_buf big = HD_BUF_INIT(0);
	turn_case c;
	int i;

	case_init(&c, config_for(script(fx, "cat.sh", "cat"), NULL), uni);
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, uni);
	case_dispose(&c);

	/* 300 KiB of mixed-width characters: many reads, and every delta is
	 * whole UTF-8 although reads split characters */
	for (i = 0; i < 9000; i++)
		hd_buf_puts(&big, uni);
	case_init(&c, config_for(script(fx, "cat.sh", "cat"), NULL),
	    hd_buf_cstr(&big));
	assert_hd_ok(case_run(&c), &c.err);
	assert_int_equal(c.res.text_len, big.len);
	assert_memory_equal(c.res.text, big.ptr, big.len);
	assert_true(rec_count(&c.r, HD_RT_TEXT_DELTA) > 1);
	assert_int_equal(c.r.deltas_valid_utf8, 1);
	case_dispose(&c);
	hd_buf_dispose(&big);
}

static void
test_exec__a_command_that_never_reads_its_input(void **state)
{
	hd_fixture *fx = *state;
	char *prompt = malloc(3 << 20);
	turn_case c;

	/* 3 MiB of prompt to a command that exits without reading: a
	 * blocking write would hang, a SIGPIPE would kill this test */
	memset(prompt, 'p', 3 << 20);
	prompt[(3 << 20) - 1] = '\0';
	case_init(&c, config_for(script(fx, "deaf.sh", "echo ignored"), NULL),
	    prompt);
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "ignored\n");
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	case_dispose(&c);

	/* one that reads a little, answers, and leaves */
	case_init(
	    &c, config_for(script(fx, "sip.sh", "head -c 5"), NULL), prompt);
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "ppppp");
	case_dispose(&c);

	/* one that sleeps first, so the pipe is full when it exits */
	case_init(&c,
	    config_for(script(fx, "nap.sh", "sleep 0.2; echo late"), NULL),
	    prompt);
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "late\n");
	case_dispose(&c);
	free(prompt);
}

static void
test_exec__timeout_kills_the_whole_group(void **state)
{
	hd_fixture *fx = *state;
	pid_t leader, grandchild;
	turn_case c;

	case_init(&c,
	    config_for(script(fx, "hang.sh",
			   "cd \"$(dirname \"$0\")\";"
			   " echo $$ > leader.pid; sleep 300 &"
			   " echo $! > grandchild.pid; echo working;"
			   " wait"),
		NULL),
	    "x");
	c.turn.timeout_ms = 300;
	assert_hd_err(
	    case_run(&c), HD_ETIMEOUT, "timed out after 0.3 s", &c.err);
	assert_int_equal(c.res.reason, HD_DONE_ERROR);
	assert_string_equal(c.res.error, "timed out after 0.3 s");
	assert_string_equal(c.res.text, "working\n");
	leader = pid_from(fx, "leader.pid");
	grandchild = pid_from(fx, "grandchild.pid");
	assert_true(leader > 0);
	assert_true(grandchild > 0);
	/* the leader was reaped by the turn: not even a zombie is left */
	assert_int_equal(kill(leader, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* and the background grandchild died with its group */
	assert_true(gone(grandchild));
	case_dispose(&c);
}

static void
test_exec__timeout_s_from_the_config(void **state)
{
	hd_fixture *fx = *state;
	turn_case c;

	/* the smaller of the turn's timeout and timeout_s wins */
	case_init(&c,
	    config_for(
		script(fx, "slow.sh", "sleep 300"), "{\"timeout_s\": 1}"),
	    "x");
	c.turn.timeout_ms = 60000;
	assert_hd_err(case_run(&c), HD_ETIMEOUT, "timed out after 1 s", &c.err);
	case_dispose(&c);
}

static void
test_exec__a_term_ignoring_group_is_killed(void **state)
{
	hd_fixture *fx = *state;
	pid_t grandchild;
	turn_case c;

	/* everything ignores SIGTERM: SIGKILL after the grace period */
	case_init(&c,
	    config_for(script(fx, "stubborn.sh",
			   "trap '' TERM; cd \"$(dirname \"$0\")\";"
			   " sh -c 'trap \"\" TERM; sleep 300' &"
			   " echo $! > stubborn.pid; wait"),
		NULL),
	    "x");
	c.turn.timeout_ms = 200;
	assert_int_equal(case_run(&c), HD_ETIMEOUT);
	grandchild = pid_from(fx, "stubborn.pid");
	assert_true(grandchild > 0);
	assert_true(gone(grandchild));
	case_dispose(&c);
}

static void
test_exec__abort_mid_run_kills_the_group(void **state)
{
	hd_fixture *fx = *state;
	atomic_int abort_flag = 0;
	pid_t grandchild;
	turn_case c;

	/* the sink aborts when the first reply bytes arrive, by which time
	 * the grandchild's pid is on disk */
	case_init(&c,
	    config_for(script(fx, "long.sh",
			   "cd \"$(dirname \"$0\")\"; sleep 300 &"
			   " echo $! > long.pid; echo started; wait"),
		NULL),
	    "x");
	c.turn.abort = &abort_flag;
	c.r.abort_on_text = &abort_flag;
	assert_hd_ok(case_run(&c), &c.err);
	assert_int_equal(c.res.reason, HD_DONE_ABORTED);
	assert_string_equal(c.res.text, "started\n");
	assert_null(c.res.error);
	assert_string_equal(rec_kinds(&c.r), "text_delta,cost,done");
	grandchild = pid_from(fx, "long.pid");
	assert_true(grandchild > 0);
	assert_true(gone(grandchild));
	case_dispose(&c);

	/* aborted before it starts: nothing runs */
	abort_flag = 1;
	case_init(&c,
	    config_for(
		script(fx, "never.sh", "touch \"$(dirname \"$0\")/ran\""),
		NULL),
	    "x");
	c.turn.abort = &abort_flag;
	assert_hd_ok(case_run(&c), &c.err);
	assert_int_equal(c.res.reason, HD_DONE_ABORTED);
	assert_int_equal(pid_from(fx, "ran"), -1); /* no such file */
	case_dispose(&c);
}

static void
test_exec__leftovers_do_not_outlive_the_turn(void **state)
{
	hd_fixture *fx = *state;
	pid_t grandchild;
	turn_case c;

	/* the command exits at once, leaving a background process that
	 * does not hold its output: the turn succeeds and the leftover is
	 * killed with the group */
	case_init(&c,
	    config_for(script(fx, "leave.sh",
			   "cd \"$(dirname \"$0\")\";"
			   " sleep 300 >/dev/null 2>&1 &"
			   " echo $! > left.pid; echo bye"),
		NULL),
	    "x");
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "bye\n");
	grandchild = pid_from(fx, "left.pid");
	assert_true(grandchild > 0);
	assert_true(gone(grandchild));
	case_dispose(&c);

	/* one that keeps the output pipe open does not hold the turn
	 * until its timeout either */
	case_init(&c,
	    config_for(script(fx, "hold.sh",
			   "cd \"$(dirname \"$0\")\"; sleep 300 &"
			   " echo $! > hold.pid; echo bye"),
		NULL),
	    "x");
	c.turn.timeout_ms = 60000;
	assert_hd_ok(case_run(&c), &c.err);
	assert_string_equal(c.res.text, "bye\n");
	grandchild = pid_from(fx, "hold.pid");
	assert_true(gone(grandchild));
	case_dispose(&c);
}

static void
spawned_to_pipe(void *ctx, int64_t pgid, int64_t start)
{
	int64_t v[2] = {pgid, start};

	if (write(*(int *)ctx, v, sizeof(v)) != (ssize_t)sizeof(v))
		_exit(30);
}

static void
test_exec__the_command_dies_with_its_runner(void **state)
{
	hd_fixture *fx = *state;
	const char *path;
	int64_t v[2];
	pid_t runner, leader, kid;
	int fds[2], status, i;

	path = script(fx, "orphan.sh",
	    "cd \"$(dirname \"$0\")\"; sleep 300 & echo $! > kid.pid;"
	    " echo $$ > leader.pid; wait");
	assert_int_equal(pipe(fds), 0);
	runner = fork();
	assert_true(runner >= 0);
	if (runner == 0) { /* a huddle running one turn, killed mid-turn */
		turn_case c;

		close(fds[0]);
		case_init(&c, config_for(path, NULL), "x");
		c.turn.on_spawn = spawned_to_pipe;
		c.turn.spawn_ctx = &fds[1];
		case_run(&c);
		_exit(31); /* never: the turn waits for ever */
	}
	close(fds[1]);
	/* on_spawn told the command's pid, its group's id, and start time */
	assert_int_equal(read(fds[0], v, sizeof(v)), (ssize_t)sizeof(v));
	close(fds[0]);
	for (i = 0; i < 1000 && (pid_from(fx, "leader.pid") <= 0 ||
				    pid_from(fx, "kid.pid") <= 0);
	     i++)
		hd_sleep_us(10000);
	leader = pid_from(fx, "leader.pid");
	kid = pid_from(fx, "kid.pid");
	assert_int_equal(v[0], leader);
	assert_int_equal(getpgid(kid), leader);
	assert_int_equal(v[1], hd_proc_start(leader));

	/* kill -9 of the runner: its command dies with it (PDEATHSIG) */
	assert_int_equal(kill(runner, SIGKILL), 0);
	assert_int_equal(waitpid(runner, &status, 0), runner);
	assert_true(gone(leader));
	/* what the command started lives on in its group, until the group
	 * recorded at spawn is killed; a recording whose start time no
	 * longer matches a live leader would be left alone */
	assert_int_equal(kill(kid, 0), 0);
	assert_int_equal(hd_proc_group_kill(v[0], v[1]), 1);
	assert_true(gone(kid));
	assert_int_equal(hd_proc_group_kill(v[0], v[1]), 0);
}

struct overlap {
	turn_case c;
	int64_t started_us, ended_us;
};

static void *
overlap_run(void *p)
{
	struct overlap *o = p;

	o->started_us = hd_mono_us();
	case_run(&o->c);
	o->ended_us = hd_mono_us();
	return NULL;
}

static void
test_exec__two_turns_on_two_threads_overlap(void **state)
{
	hd_fixture *fx = *state;
	struct overlap a, b;
	pthread_t ta, tb;
	const char *path;

	/* each turn marks its start, then waits for the other's mark: run
	 * one after the other, each would give up and say "alone" */
	path = script(fx, "meet.sh",
	    "cd \"$(dirname \"$0\")\"; touch \"$1.started\"; i=0;"
	    " while [ ! -e \"$2.started\" ]; do sleep 0.01; i=$((i+1));"
	    " if [ $i -gt 3000 ]; then echo alone; exit 1; fi; done;"
	    " echo \"$1 met $2\"");
	case_init(
	    &a.c, json_pack("{s:[s,s,s]}", "command", path, "a", "b"), "");
	case_init(
	    &b.c, json_pack("{s:[s,s,s]}", "command", path, "b", "a"), "");
	assert_int_equal(pthread_create(&ta, NULL, overlap_run, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, overlap_run, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_hd_ok(a.c.rc, &a.c.err);
	assert_hd_ok(b.c.rc, &b.c.err);
	assert_string_equal(a.c.res.text, "a met b\n");
	assert_string_equal(b.c.res.text, "b met a\n");
	/* each started before the other ended */
	assert_true(a.started_us < b.ended_us);
	assert_true(b.started_us < a.ended_us);
	case_dispose(&a.c);
	case_dispose(&b.c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)                                                                   \
	cmocka_unit_test_setup_teardown(                                       \
	    f, hd_fixture_setup, hd_fixture_teardown)
	    T(test_exec__stdin_in_reply_out),
	    T(test_exec__prompt_as_last_argument),
	    T(test_exec__environment),
	    T(test_exec__cwd),
	    T(test_exec__nonzero_exit_reports_the_stderr_tail),
	    T(test_exec__a_command_that_cannot_run),
	    T(test_exec__output_is_capped_at_one_mib),
	    T(test_exec__bytes_pass_through_untouched),
	    T(test_exec__a_command_that_never_reads_its_input),
	    T(test_exec__timeout_kills_the_whole_group),
	    T(test_exec__timeout_s_from_the_config),
	    T(test_exec__a_term_ignoring_group_is_killed),
	    T(test_exec__abort_mid_run_kills_the_group),
	    T(test_exec__leftovers_do_not_outlive_the_turn),
	    T(test_exec__two_turns_on_two_threads_overlap),
	    T(test_exec__the_command_dies_with_its_runner),
#undef T
	};

	/* SIGPIPE at its default: if the runtime let one through, this
	 * process would die and the test fail */
	signal(SIGPIPE, SIG_DFL);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		perror("prctl");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
