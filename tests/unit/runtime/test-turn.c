/*
 * test-turn.c -- the runtime contract (SPEC 9.1): adapter lookup, the
 * scripted adapter's rules, the cost estimate, and the driver's promise
 * that a sink sees exactly one done, last, whatever an adapter does.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "testutil.h"

#include "rec.h"

/* ---- lookup ---- */

static void
test_turn__find_builtin_adapters(void **state)
{
	const hd_runtime_adapter *rt;
	hd_err err = HD_ERR_INIT;

	(void)state;
	assert_hd_ok(hd_runtime_find(&rt, "scripted", &err), &err);
	assert_string_equal(rt->name, "scripted");
	assert_string_equal(rt->label, "scripted");
	assert_int_equal(rt->is_scripted, 1);
	assert_hd_ok(hd_runtime_find(&rt, "exec", &err), &err);
	assert_string_equal(rt->name, "exec");
	assert_int_equal(rt->is_scripted, 0);
}

static void
test_turn__declared_but_unbuilt_runtimes_say_so(void **state)
{
	static const char *const names[] = {"openai"};
	const hd_runtime_adapter *rt = (void *)1;
	hd_err err = HD_ERR_INIT;
	char want[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want),
		    "runtime \"%s\" is not available in this build yet",
		    names[i]);
		assert_hd_err(hd_runtime_find(&rt, names[i], &err),
		    HD_ENOTFOUND, want, &err);
		assert_null(rt);
	}
	assert_hd_err(hd_runtime_find(&rt, "bogus", &err), HD_EINVAL,
	    "unknown runtime \"bogus\": use scripted, exec, claude-code, "
	    "codex, native, hermes or openclaw",
	    &err);
}

static void
test_turn__run_with_an_unbuilt_runtime_still_ends_in_done(void **state)
{
	hd_agent a;
	hd_runtime_turn t = {0};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	rec r;

	(void)state;
	test_agent(&a, "coder", "openai", "{}");
	rec_init(&r);
	t.agent = &a;
	t.prompt = "hi";
	assert_hd_err(hd_runtime_run(&res, &t, rec_sink, &r, &err),
	    HD_ENOTFOUND,
	    "runtime \"openai\" is not available in this build yet", &err);
	assert_string_equal(rec_kinds(&r), "error,cost,done");
	assert_string_equal(r.texts[0],
	    "runtime \"openai\" is not available in this build yet");
	assert_int_equal(res.reason, HD_DONE_ERROR);
	assert_string_equal(
	    res.error, "runtime \"openai\" is not available in this build yet");
	assert_string_equal(res.text, "");
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
	json_decref(a.runtime_config);
}

/* ---- cost ---- */

static void
test_turn__cost_estimate_arithmetic(void **state)
{
	hd_runtime_cost c;

	(void)state;
	/* 11 chars -> 3 tokens in; 9 chars -> 3 tokens out:
	 * 3 x 300 + 3 x 1500 = 5400 micro-cents = $0.000054 */
	hd_runtime_cost_estimate(&c, "hello world", 11, "Hi there!", 9);
	assert_int_equal(c.input_tokens, 3);
	assert_int_equal(c.output_tokens, 3);
	assert_int_equal(c.microcents, 5400);
	assert_true(c.usd == 5400 / 1e8);
	assert_int_equal(c.estimated, 1);

	/* chars are code points: "héllo wörld" is 13 bytes, 11 chars */
	hd_runtime_cost_estimate(
	    &c, "h\xc3\xa9llo w\xc3\xb6rld", 13, "\xf0\x9f\x8e\x89", 4);
	assert_int_equal(c.input_tokens, 3);
	assert_int_equal(c.output_tokens, 1);
	assert_int_equal(c.microcents, 3 * 300 + 1500);

	/* ceil: 4 chars are 1 token, 5 are 2; nothing is nothing */
	hd_runtime_cost_estimate(&c, "abcd", 4, "abcde", 5);
	assert_int_equal(c.input_tokens, 1);
	assert_int_equal(c.output_tokens, 2);
	assert_int_equal(c.microcents, 300 + 3000);
	hd_runtime_cost_estimate(&c, "", 0, NULL, 0);
	assert_int_equal(c.input_tokens, 0);
	assert_int_equal(c.output_tokens, 0);
	assert_int_equal(c.microcents, 0);

	/* a million chars of prompt = 250,000 tokens = $0.75 */
	{
		char *big = malloc(1000000);

		memset(big, 'x', 1000000);
		hd_runtime_cost_estimate(&c, big, 1000000, "", 0);
		assert_int_equal(c.input_tokens, 250000);
		assert_int_equal(c.microcents, 75000000);
		assert_true(c.usd == 0.75);
		free(big);
	}
}

/* ---- scripted ---- */

static const char *scripted_cfg =
    "{\"rules\": [{\"when\": \"all hands\", \"reply\": \"On my way.\"},"
    " {\"when\": \"hands\", \"reply\": \"second rule\"},"
    " {\"when\": \"status\", \"reply\": \"All green.\"}],"
    " \"default\": \"Noted.\"}";

static void
scripted_reply(const char *cfg, const char *prompt, const char *want)
{
	hd_agent a;
	hd_runtime_turn t = {0};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	const hd_runtime_adapter *rt;
	hd_runtime_cost est;
	rec r;

	test_agent(&a, "coder", "scripted", cfg);
	rec_init(&r);
	t.agent = &a;
	t.prompt = prompt;
	assert_hd_ok(hd_runtime_find(&rt, "scripted", &err), &err);
	assert_hd_ok(
	    hd_runtime_run_turn(&res, rt, &t, rec_sink, &r, &err), &err);
	assert_string_equal(res.text, want);
	assert_int_equal(res.text_len, strlen(want));
	assert_string_equal(hd_buf_cstr(&r.reply), want);
	assert_int_equal(res.reason, HD_DONE_SUCCESS);
	assert_string_equal(rec_kinds(&r), "text_delta,cost,done");
	hd_runtime_cost_estimate(
	    &est, prompt, strlen(prompt), want, strlen(want));
	assert_int_equal(res.cost.microcents, est.microcents);
	assert_int_equal(res.cost.input_tokens, est.input_tokens);
	assert_int_equal(res.cost.output_tokens, est.output_tokens);
	assert_int_equal(res.cost.estimated, 1);
	assert_null(res.error);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
	json_decref(a.runtime_config);
}

static void
test_turn__scripted_first_matching_rule_wins(void **state)
{
	(void)state;
	/* both "all hands" and "hands" match: the first rule wins */
	scripted_reply(
	    scripted_cfg, "Team, all hands on deck please", "On my way.");
	scripted_reply(
	    scripted_cfg, "many hands make light work", "second rule");
	scripted_reply(scripted_cfg, "status report?", "All green.");
	/* substring match is case-sensitive and exact */
	scripted_reply(scripted_cfg, "STATUS?", "Noted.");
}

static void
test_turn__scripted_default_then_fallback(void **state)
{
	(void)state;
	scripted_reply(scripted_cfg, "something else", "Noted.");
	scripted_reply("{\"rules\": [{\"when\": \"x\", \"reply\": \"y\"}]}",
	    "nothing matches", "(scripted agent coder has no reply for this)");
	scripted_reply(
	    "{}", "anything", "(scripted agent coder has no reply for this)");
}

static void
test_turn__scripted_cost_is_exact(void **state)
{
	hd_agent a;
	hd_runtime_turn t = {0};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	const hd_runtime_adapter *rt;

	(void)state;
	test_agent(&a, "coder", "scripted",
	    "{\"rules\": [{\"when\": \"hello\", \"reply\": \"Hi there!\"}]}");
	t.agent = &a;
	t.prompt = "hello world";
	assert_hd_ok(hd_runtime_find(&rt, "scripted", &err), &err);
	assert_hd_ok(hd_runtime_run_turn(&res, rt, &t, NULL, NULL, &err), &err);
	assert_string_equal(res.text, "Hi there!");
	assert_int_equal(res.cost.input_tokens, 3);
	assert_int_equal(res.cost.output_tokens, 3);
	assert_int_equal(res.cost.microcents, 5400);
	assert_true(res.cost.usd == 0.000054);
	hd_runtime_result_dispose(&res);
	json_decref(a.runtime_config);
}

struct later {
	atomic_int *flag;
	int64_t after_ms;
};

static void *
set_later(void *p)
{
	struct later *l = p;

	hd_sleep_us(l->after_ms * 1000);
	atomic_store(l->flag, 1);
	return NULL;
}

static void
test_turn__scripted_delay_is_abortable(void **state)
{
	hd_agent a;
	hd_runtime_turn t = {0};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	const hd_runtime_adapter *rt;
	atomic_int abort_flag = 0;
	struct later l = {&abort_flag, 50};
	pthread_t th;
	rec r;

	(void)state;
	/* a 10-minute delay, aborted 50 ms in: the turn ends aborted, with
	 * no reply (the ctest timeout bounds this if it does not) */
	test_agent(&a, "coder", "scripted",
	    "{\"default\": \"late\", \"delay_ms\": 600000}");
	rec_init(&r);
	t.agent = &a;
	t.prompt = "hi";
	t.abort = &abort_flag;
	assert_hd_ok(hd_runtime_find(&rt, "scripted", &err), &err);
	assert_int_equal(pthread_create(&th, NULL, set_later, &l), 0);
	assert_hd_ok(
	    hd_runtime_run_turn(&res, rt, &t, rec_sink, &r, &err), &err);
	pthread_join(th, NULL);
	assert_int_equal(res.reason, HD_DONE_ABORTED);
	assert_string_equal(res.text, "");
	assert_string_equal(rec_kinds(&r), "cost,done");
	assert_int_equal(r.reason, HD_DONE_ABORTED);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);

	/* aborted before it starts: no reply either */
	rec_init(&r);
	assert_hd_ok(
	    hd_runtime_run_turn(&res, rt, &t, rec_sink, &r, &err), &err);
	assert_int_equal(res.reason, HD_DONE_ABORTED);
	assert_int_equal(rec_count(&r, HD_RT_TEXT_DELTA), 0);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
	json_decref(a.runtime_config);
}

static void
test_turn__scripted_delay_past_the_timeout_is_an_error(void **state)
{
	hd_agent a;
	hd_runtime_turn t = {0};
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	const hd_runtime_adapter *rt;
	rec r;

	(void)state;
	test_agent(&a, "coder", "scripted",
	    "{\"default\": \"late\", \"delay_ms\": 600000}");
	rec_init(&r);
	t.agent = &a;
	t.prompt = "hi";
	t.timeout_ms = 50;
	assert_hd_ok(hd_runtime_find(&rt, "scripted", &err), &err);
	assert_hd_err(hd_runtime_run_turn(&res, rt, &t, rec_sink, &r, &err),
	    HD_ETIMEOUT, "timed out after 0.05 s", &err);
	assert_int_equal(res.reason, HD_DONE_ERROR);
	assert_string_equal(res.error, "timed out after 0.05 s");
	assert_string_equal(rec_kinds(&r), "error,cost,done");
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);

	/* a short delay within the timeout replies */
	json_decref(a.runtime_config);
	test_agent(&a, "coder", "scripted",
	    "{\"default\": \"on time\", \"delay_ms\": 10}");
	t.timeout_ms = 60000;
	assert_hd_ok(hd_runtime_run_turn(&res, rt, &t, NULL, NULL, &err), &err);
	assert_string_equal(res.text, "on time");
	hd_runtime_result_dispose(&res);
	json_decref(a.runtime_config);
}

/* ---- the driver: exactly one done, last ---- */

enum fake_mode {
	FAKE_FORGETS_DONE,
	FAKE_TWO_DONES,
	FAKE_FAILS,
	FAKE_ERROR_THEN_FAILS,
	FAKE_OWN_COST,
	FAKE_BIG,
	FAKE_SPLIT_AT_CAP,
	FAKE_TOOLS,
	FAKE_BAD_BYTES_ERROR,
};

static enum fake_mode fake_mode;

static void
fake_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
}

static int
fake_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	hd_runtime_cost c = {0.5, 50000000, 10, 20, 0};
	hd_runtime_event ev;
	char *chunk;
	size_t i;

	(void)in;
	switch (fake_mode) {
	case FAKE_FORGETS_DONE: hd_runtime_emit_text(em, "half", 4); return 0;
	case FAKE_TWO_DONES:
		hd_runtime_emit_text(em, "one", 3);
		hd_runtime_emit_done(em, HD_DONE_MAX_TURNS, "sum", "sess-1");
		hd_runtime_emit_text(em, "after", 5);
		hd_runtime_emit_error(em, "late error");
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, "sess-2");
		return 0;
	case FAKE_FAILS:
		hd_runtime_emit_text(em, "partial", 7);
		return hd_err_set(err, HD_ERR, "boom");
	case FAKE_ERROR_THEN_FAILS:
		hd_runtime_emit_error(em, "boom");
		return hd_err_set(err, HD_ERR, "boom");
	case FAKE_OWN_COST:
		hd_runtime_emit_text(em, "costly", 6);
		hd_runtime_emit_cost(em, &c);
		hd_runtime_emit_cost(em, &c);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
		return 0;
	case FAKE_BIG:
		chunk = malloc(600 * 1024);
		memset(chunk, 'b', 600 * 1024);
		for (i = 0; i < 3; i++)
			hd_runtime_emit_text(em, chunk, 600 * 1024);
		free(chunk);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
		return 0;
	case FAKE_SPLIT_AT_CAP:
		/* 1 MiB - 1 bytes, then a 2-byte character across the cap */
		chunk = malloc(HD_RUNTIME_OUTPUT_MAX + 1);
		memset(chunk, 'a', HD_RUNTIME_OUTPUT_MAX - 1);
		memcpy(chunk + HD_RUNTIME_OUTPUT_MAX - 1, "\xc3\xa9", 2);
		hd_runtime_emit_text(em, chunk, HD_RUNTIME_OUTPUT_MAX + 1);
		free(chunk);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
		return 0;
	case FAKE_BAD_BYTES_ERROR:
		/* a stray byte, then a character across the 16 KiB cap:
		 * "x\xffy " is 4 bytes, so "é" takes bytes 16383 and 16384 */
		chunk = malloc(16 * 1024);
		memset(chunk, 'e', 16 * 1024 - 5);
		memcpy(chunk + 16 * 1024 - 5, "\xc3\xa9", 3);
		/* a status quoting the same kind of bytes */
		hd_runtime_emit_status(em, "phase \xff\x01two\nlines");
		hd_runtime_emit_error(em, "x\xffy %s", chunk);
		free(chunk);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
		return 0;
	case FAKE_TOOLS:
		memset(&ev, 0, sizeof(ev));
		ev.kind = HD_RT_TOOL_CALL;
		ev.name = "board_list";
		hd_runtime_emit_event(em, &ev);
		ev.kind = HD_RT_TOOL_RESULT;
		hd_runtime_emit_event(em, &ev);
		hd_runtime_emit_status(em, "thinking");
		ev.kind = HD_RT_TEXT_DELTA;
		ev.text = "ok";
		ev.len = 2;
		hd_runtime_emit_event(em, &ev);
		ev.kind = HD_RT_DONE;
		ev.reason = HD_DONE_SUCCESS;
		hd_runtime_emit_event(em, &ev);
		ev.kind = HD_RT_TOOL_CALL; /* after done: dropped */
		hd_runtime_emit_event(em, &ev);
		return 0;
	}
	return 0;
}

static const hd_runtime_adapter fake = {
    .name = "fake",
    .label = "fake",
    .is_scripted = 0,
    .capabilities = fake_caps,
    .run = fake_run,
};

static int
run_fake(enum fake_mode mode, hd_runtime_result *res, rec *r, hd_err *err,
    atomic_int *abort_flag)
{
	static hd_agent a;
	hd_runtime_turn t = {0};

	fake_mode = mode;
	memset(&a, 0, sizeof(a));
	a.id = (char *)"coder";
	a.runtime = (char *)"fake";
	t.agent = &a;
	t.prompt = "hello world";
	t.abort = abort_flag;
	rec_init(r);
	return hd_runtime_run_turn(res, &fake, &t, rec_sink, r, err);
}

static void
test_turn__a_forgotten_done_is_supplied(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	atomic_int ab = 1;
	rec r;

	(void)state;
	assert_hd_ok(run_fake(FAKE_FORGETS_DONE, &res, &r, &err, NULL), &err);
	assert_string_equal(rec_kinds(&r), "text_delta,cost,done");
	assert_int_equal(res.reason, HD_DONE_SUCCESS);
	assert_string_equal(res.text, "half");
	/* the estimate: 11 chars in (3 tokens), 4 out (1 token) */
	assert_int_equal(res.cost.microcents, 3 * 300 + 1 * 1500);
	assert_int_equal(res.cost.estimated, 1);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);

	/* with the abort flag set, the supplied done says aborted */
	assert_hd_ok(run_fake(FAKE_FORGETS_DONE, &res, &r, &err, &ab), &err);
	assert_string_equal(rec_kinds(&r), "text_delta,cost,done");
	assert_int_equal(res.reason, HD_DONE_ABORTED);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
}

static void
test_turn__only_the_first_done_counts(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	rec r;

	(void)state;
	assert_hd_ok(run_fake(FAKE_TWO_DONES, &res, &r, &err, NULL), &err);
	assert_string_equal(rec_kinds(&r), "text_delta,cost,done");
	assert_int_equal(res.reason, HD_DONE_MAX_TURNS);
	assert_string_equal(res.text, "one");
	assert_string_equal(res.summary, "sum");
	assert_string_equal(res.native_session_id, "sess-1");
	assert_null(res.error);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
}

static void
test_turn__a_failing_adapter_ends_in_error_done(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	rec r;

	(void)state;
	assert_hd_err(
	    run_fake(FAKE_FAILS, &res, &r, &err, NULL), HD_ERR, "boom", &err);
	assert_string_equal(rec_kinds(&r), "text_delta,error,cost,done");
	assert_string_equal(r.texts[1], "boom");
	assert_int_equal(r.reason, HD_DONE_ERROR);
	assert_int_equal(res.reason, HD_DONE_ERROR);
	assert_string_equal(res.error, "boom");
	assert_string_equal(res.text, "partial");
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);

	/* an error it already reported is not reported twice */
	assert_hd_err(run_fake(FAKE_ERROR_THEN_FAILS, &res, &r, &err, NULL),
	    HD_ERR, "boom", &err);
	assert_string_equal(rec_kinds(&r), "error,cost,done");
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);

	/* out may be NULL: the sink still sees the whole shape */
	fake_mode = FAKE_FAILS;
	rec_init(&r);
	assert_hd_err(
	    run_fake(FAKE_FAILS, NULL, &r, &err, NULL), HD_ERR, "boom", &err);
	assert_string_equal(rec_kinds(&r), "text_delta,error,cost,done");
	rec_dispose(&r);
}

static void
test_turn__an_error_is_valid_utf8_whatever_it_quotes(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	json_t *j;
	rec r;

	(void)state;
	run_fake(FAKE_BAD_BYTES_ERROR, &res, &r, &err, NULL);
	assert_string_equal(rec_kinds(&r), "status,error,cost,done");
	/* a status is one line of valid UTF-8 too: '?' and spaces */
	assert_string_equal(r.texts[0], "phase ? two lines");
	assert_non_null(res.error);
	/* the stray byte is '?', and the cap falls before "é", not in it */
	assert_int_equal(strncmp(res.error, "x?y eee", 7), 0);
	assert_int_equal(strlen(res.error), 16 * 1024 - 1);
	assert_true(hd_utf8_ok(res.error, strlen(res.error)));
	assert_true(hd_utf8_ok(r.texts[1], strlen(r.texts[1])));
	assert_non_null(j = json_string(res.error)); /* JSON carries it */
	json_decref(j);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
}

static void
test_turn__a_reported_cost_is_not_estimated(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	rec r;

	(void)state;
	assert_hd_ok(run_fake(FAKE_OWN_COST, &res, &r, &err, NULL), &err);
	assert_string_equal(rec_kinds(&r), "text_delta,cost,cost,done");
	assert_int_equal(res.cost.microcents, 100000000); /* two halves */
	assert_true(res.cost.usd == 1.0);
	assert_int_equal(res.cost.input_tokens, 20);
	assert_int_equal(res.cost.output_tokens, 40);
	assert_int_equal(res.cost.estimated, 0);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
}

static void
test_turn__the_reply_is_capped_at_one_mib(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	size_t note = strlen(HD_RUNTIME_TRUNCATED_NOTE);
	rec r;

	(void)state;
	assert_hd_ok(run_fake(FAKE_BIG, &res, &r, &err, NULL), &err);
	assert_int_equal(res.truncated, 1);
	assert_int_equal(res.text_len, HD_RUNTIME_OUTPUT_MAX + note);
	assert_int_equal(res.text[HD_RUNTIME_OUTPUT_MAX - 1], 'b');
	assert_string_equal(res.text + HD_RUNTIME_OUTPUT_MAX,
	    "\n[output truncated: the agent wrote more than 1 MiB]");
	/* the sink got exactly the bytes the result keeps */
	assert_int_equal(r.reply.len, res.text_len);
	assert_memory_equal(r.reply.ptr, res.text, res.text_len);
	assert_string_equal(
	    rec_kinds(&r), "text_delta,text_delta,text_delta,cost,done");
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);

	/* a character across the cap is dropped whole, not split */
	assert_hd_ok(run_fake(FAKE_SPLIT_AT_CAP, &res, &r, &err, NULL), &err);
	assert_int_equal(res.text_len, HD_RUNTIME_OUTPUT_MAX - 1 + note);
	assert_int_equal(hd_utf8_ok(res.text, res.text_len), 1);
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
}

static void
test_turn__tool_and_status_events_pass_through(void **state)
{
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	rec r;

	(void)state;
	assert_hd_ok(run_fake(FAKE_TOOLS, &res, &r, &err, NULL), &err);
	assert_string_equal(
	    rec_kinds(&r), "tool_call,tool_result,status,text_delta,cost,done");
	assert_string_equal(r.texts[2], "thinking");
	assert_string_equal(res.text, "ok");
	hd_runtime_result_dispose(&res);
	rec_dispose(&r);
}

static void
test_turn__result_json(void **state)
{
	hd_runtime_result res;
	json_t *j;
	char *s;

	(void)state;
	memset(&res, 0, sizeof(res));
	res.text = strdup("ok \xff end"); /* not UTF-8: replaced, not lost */
	res.text_len = strlen(res.text);
	res.reason = HD_DONE_MAX_TURNS;
	res.cost.microcents = 5400;
	res.cost.usd = 0.000054;
	res.cost.input_tokens = 3;
	res.cost.output_tokens = 3;
	res.cost.estimated = 1;
	j = hd_runtime_result_to_json(&res);
	/* usd is a double, so it is compared as one; the rest exactly */
	assert_true(json_real_value(json_object_get(
			json_object_get(j, "cost"), "usd")) == 0.000054);
	json_object_del(json_object_get(j, "cost"), "usd");
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s,
	    "{\"reason\":\"max_turns\",\"text\":\"ok \xef\xbf\xbd end\","
	    "\"error\":null,\"summary\":null,\"native_session_id\":null,"
	    "\"truncated\":false,\"duration_ms\":0,\"cost\":{"
	    "\"microcents\":5400,\"input_tokens\":3,\"output_tokens\":3,"
	    "\"estimated\":true}}");
	free(s);
	json_decref(j);
	hd_runtime_result_dispose(&res);
	assert_null(res.text);
	hd_runtime_result_dispose(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_turn__find_builtin_adapters),
	    cmocka_unit_test(test_turn__declared_but_unbuilt_runtimes_say_so),
	    cmocka_unit_test(
		test_turn__run_with_an_unbuilt_runtime_still_ends_in_done),
	    cmocka_unit_test(test_turn__cost_estimate_arithmetic),
	    cmocka_unit_test(test_turn__scripted_first_matching_rule_wins),
	    cmocka_unit_test(test_turn__scripted_default_then_fallback),
	    cmocka_unit_test(test_turn__scripted_cost_is_exact),
	    cmocka_unit_test(test_turn__scripted_delay_is_abortable),
	    cmocka_unit_test(
		test_turn__scripted_delay_past_the_timeout_is_an_error),
	    cmocka_unit_test(test_turn__a_forgotten_done_is_supplied),
	    cmocka_unit_test(test_turn__only_the_first_done_counts),
	    cmocka_unit_test(test_turn__a_failing_adapter_ends_in_error_done),
	    cmocka_unit_test(
		test_turn__an_error_is_valid_utf8_whatever_it_quotes),
	    cmocka_unit_test(test_turn__a_reported_cost_is_not_estimated),
	    cmocka_unit_test(test_turn__the_reply_is_capped_at_one_mib),
	    cmocka_unit_test(test_turn__tool_and_status_events_pass_through),
	    cmocka_unit_test(test_turn__result_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
