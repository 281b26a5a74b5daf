/*
 * test-codex-stream.c -- the parser of `codex exec --json`
 * (src/runtime/codex.c), driven through the real turn driver by feed.h on
 * the captured samples and on lines written here: each test asserts the
 * exact event sequence, the reply, the priced cost (new tokens only after
 * a resume), the thread and the messages.
 */
#include "feed.h"

/* Every run here is priced at $1.25 in, $0.125 cached, $10 out per
 * million tokens: 100 micro-cents per token per dollar. */
static hd_price price = {1.25, 0.125, 10.0};
static hd_codex_usage base; /* the thread's totals before the run */
static hd_codex_usage after;

static void *
codex_open(void)
{
	return hd_codex__stream_new(&price, &base);
}

static int
codex_line(void *p, hd_runtime_emit *em, const char *l, size_t n)
{
	return hd_codex__stream_line(p, em, l, n);
}

static void
codex_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	hd_codex__stream_finish(p, em, exit_code, tail);
}

static const char *
codex_thread(void *p)
{
	return hd_codex__stream_thread(p);
}

static void
codex_close(void *p)
{
	hd_codex__stream_usage(p, &after);
	hd_codex__stream_free(p);
}

static const feed_parser codex_parser = {
    codex_open, codex_line, codex_finish, codex_thread, codex_close};

static int
reset(void **state)
{
	(void)state;
	memset(&base, 0, sizeof(base));
	memset(&after, 0, sizeof(after));
	return 0;
}

static void
assert_cost(turn_case *c, int64_t microcents, int64_t in, int64_t out)
{
	assert_int_equal(c->res.cost.estimated, 1);
	assert_int_equal(c->res.cost.microcents, microcents);
	assert_int_equal(c->res.cost.input_tokens, in);
	assert_int_equal(c->res.cost.output_tokens, out);
}

static void
assert_error(turn_case *c, const char *msg)
{
	assert_int_equal(c->res.reason, HD_DONE_ERROR);
	assert_true(c->rc < 0);
	assert_string_equal(c->res.error, msg);
	assert_string_equal(c->err.msg, msg);
	assert_null(c->res.native_session_id);
}

#define SAMPLE "codex-0.169.0-exec-json.jsonl"
#define RESUME_SAMPLE "codex-0.169.0-exec-resume-json.jsonl"
#define THREAD "01a2029d-5b85-76f3-aea7-703cc23b05f9"
#define WARNING                                                                \
	"codex: Model metadata for `fake-model` not found. Defaulting to "     \
	"fallback metadata; this can degrade performance and cause issues."
#define FINAL                                                                  \
	"FINAL m-codex_http_raw -> Wall time: 0.0039 seconds\nOutput:\n"       \
	"posted to general: m-codex_http_raw"
#define ARGS                                                                   \
	"{\"channel\":\"general\",\"task_id\":\"m-codex_http_raw\","           \
	"\"text\":\"m-codex_http_raw\"}"

/* The captured turn: a warning, one MCP call, the final message. */
static void
test_codex__sample_turn(void **state)
{
	turn_case c;
	size_t i;

	(void)state;
	assert_int_equal(case_feed_sample(&c, SAMPLE, 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "status,tool_call,tool_result,text_delta,cost,done");
	assert_string_equal(ev_text(&c, 0), WARNING);
	assert_tool(
	    &c, 0, HD_RT_TOOL_CALL, "team_chat_post", "item_1", ARGS, 0);
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, "team_chat_post", "item_1",
	    "{\"content\":[{\"text\":\"posted to general: m-codex_http_raw\","
	    "\"type\":\"text\"}],\"structured_content\":null}",
	    0);
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	assert_string_equal(c.res.text, FINAL);
	assert_string_equal(hd_buf_cstr(&c.t.r.reply), FINAL);
	assert_string_equal(c.res.native_session_id, THREAD);
	assert_string_equal(c.f.session, THREAD);
	/* 200 in at 1.25, 40 out at 10 */
	assert_cost(&c, 200 * 125 + 40 * 1000, 200, 40);
	for (i = 0; i < c.f.n; i++)
		assert_int_equal(c.f.rcs[i], 0);
	assert_int_equal(after.input, 200);
	assert_int_equal(after.output, 40);
	case_dispose(&c);
}

/* After a resume Codex reports the thread's totals: only the run's own
 * tokens are charged, and the totals are handed on. */
static void
test_codex__a_resumed_thread_is_charged_its_new_tokens(void **state)
{
	turn_case c;

	(void)state;
	base.input = 200;
	base.output = 40;
	assert_int_equal(case_feed_sample(&c, RESUME_SAMPLE, 0, ""), 0);
	assert_cost(&c, 200 * 125 + 40 * 1000, 200, 40);
	assert_int_equal(after.input, 400);
	assert_int_equal(after.output, 80);
	case_dispose(&c);

	/* no totals known: all of it */
	memset(&base, 0, sizeof(base));
	assert_int_equal(case_feed_sample(&c, RESUME_SAMPLE, 0, ""), 0);
	assert_cost(&c, 400 * 125 + 80 * 1000, 400, 80);
	case_dispose(&c);

	/* totals below what we knew: the count started over, all of it */
	base.input = 1000;
	base.output = 500;
	assert_int_equal(case_feed_sample(&c, RESUME_SAMPLE, 0, ""), 0);
	assert_cost(&c, 400 * 125 + 80 * 1000, 400, 80);
	assert_int_equal(after.input, 400);
	case_dispose(&c);
}

static void
test_codex__cached_tokens_are_priced_as_cached(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}",
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":"
	    "\"agent_message\",\"text\":\"ok\"}}",
	    "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,"
	    "\"cached_input_tokens\":600,\"output_tokens\":10,"
	    "\"reasoning_output_tokens\":4}}",
	    NULL};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	/* 400 uncached at 1.25, 600 cached at 0.125, 10 out at 10 */
	assert_cost(&c, 400 * 125 + 600 * 12 + 600 / 2 + 10 * 1000, 1000, 10);
	assert_int_equal(after.cached, 600);
	case_dispose(&c);
}

static void
test_codex__api_error_400(void **state)
{
	turn_case c;

	(void)state;
	assert_true(case_feed_sample(&c, "codex-error-400.jsonl", 1, "") < 0);
	/* the provider's JSON body says its own message; no tokens: the
	 * driver's estimate */
	assert_string_equal(rec_kinds(&c.t.r), "status,error,cost,done");
	assert_error(&c, "codex: bad thing");
	assert_int_equal(c.res.cost.estimated, 1);
	case_dispose(&c);
}

static void
test_codex__api_error_500(void **state)
{
	turn_case c;

	(void)state;
	assert_true(case_feed_sample(&c, "codex-error-500.jsonl", 1, "") < 0);
	assert_error(&c, "codex: We\xe2\x80\x99re currently experiencing high "
			 "demand, which may cause temporary errors.");
	case_dispose(&c);
}

/* Junk between the captured lines is counted and changes nothing. */
static void
test_codex__garbage_lines_are_counted(void **state)
{
	static const char *const junk[] = {"not json", "[1,2]", "{}",
	    "{\"type\":7}", "{\"type\":\"item.completed\"}",
	    "{\"type\":\"item.started\",\"item\":{\"type\":\"mcp_tool_call\"}}",
	    "{\"type\":\"turn.completed\",\"usage\":\"x\"}", NULL};
	static const int want[] = {-1, -1, -1, -1, 0, 0, 0};
	turn_case clean, c;
	size_t i, k = 0, j;

	(void)state;
	case_init(&clean);
	case_sample(&clean, SAMPLE);
	case_init(&c);
	case_sample(&c, SAMPLE);
	/* the junk goes first: a usage line without numbers counts as 0 */
	memmove(c.f.lines + 7, c.f.lines, c.f.n * sizeof(c.f.lines[0]));
	memmove(c.f.lens + 7, c.f.lens, c.f.n * sizeof(c.f.lens[0]));
	for (j = 0; junk[j] != NULL; j++) {
		c.f.lines[j] = junk[j];
		c.f.lens[j] = strlen(junk[j]);
	}
	c.f.n += 7;
	assert_int_equal(case_run(&clean, 0, ""), 0);
	assert_int_equal(case_run(&c, 0, ""), 0);
	for (i = 0; i < 7; i++)
		assert_int_equal(c.f.rcs[i], want[i]);
	/* the mcp_tool_call without an id is announced; the rest as clean */
	assert_string_equal(rec_kinds(&c.t.r),
	    "tool_call,status,tool_call,tool_result,text_delta,cost,done");
	assert_string_equal(c.res.text, clean.res.text);
	assert_int_equal(c.res.cost.microcents, clean.res.cost.microcents);
	(void)k;
	case_dispose(&clean);
	case_dispose(&c);
}

static void
test_codex__a_truncated_last_line(void **state)
{
	turn_case c;

	(void)state;
	case_init(&c);
	case_sample(&c, SAMPLE);
	c.f.lens[c.f.n - 1] -= 30; /* turn.completed, cut */
	assert_true(case_run(&c, 0, "") < 0);
	assert_int_equal(c.f.rcs[c.f.n - 1], -1);
	assert_error(&c, "codex: the stream ended without turn.completed (1 "
			 "malformed line)");
	case_dispose(&c);
}

static void
test_codex__a_nonzero_exit_says_why(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"thread.started\",\"thread_id\":\"t-2\"}", NULL};
	turn_case c;

	(void)state;
	case_init(&c);
	case_lines(&c, lines);
	/* Codex's known noise is not the reason */
	assert_true(case_run(&c, 2,
			"config.toml: bad \x01key\nWARNING: proceeding, even "
			"though we could not create PATH aliases\nReading "
			"additional input from stdin...\n") < 0);
	assert_error(&c, "codex: exit status 2: config.toml: bad  key");
	case_dispose(&c);

	/* a last line of control characters says nothing: the one before */
	case_init(&c);
	case_lines(&c, lines);
	assert_true(case_run(&c, 2, "the real reason\n\x7f\x01\t") < 0);
	assert_error(&c, "codex: exit status 2: the real reason");
	case_dispose(&c);
	case_init(&c);
	case_lines(&c, lines);
	assert_true(case_run(&c, 4, "\x7f\x01\n\x1b") < 0);
	assert_error(&c, "codex: exit status 4");
	case_dispose(&c);

	assert_true(case_feed_lines(&c, lines, -1, "") < 0);
	assert_error(&c, "codex: killed");
	case_dispose(&c);

	/* a good stream, then a nonzero exit: still a failure, still paid */
	assert_true(case_feed_sample(&c, SAMPLE, 3, "") < 0);
	assert_error(&c, "codex: exit status 3");
	assert_cost(&c, 200 * 125 + 40 * 1000, 200, 40);
	case_dispose(&c);
}

static void
test_codex__empty_input(void **state)
{
	turn_case c;

	(void)state;
	case_init(&c);
	assert_true(case_run(&c, 0, "") < 0);
	assert_error(&c, "codex: the stream ended without turn.completed");
	assert_string_equal(c.res.text, "");
	assert_null(c.f.session);
	case_dispose(&c);
}

/* A call seen only once complete is announced, then answered; a failed
 * call's result is its error; the last of two messages is the reply. */
static void
test_codex__calls_and_messages(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"thread.started\",\"thread_id\":\"t-3\"}",
	    "{\"type\":\"turn.started\"}",
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":"
	    "\"mcp_tool_call\",\"server\":\"huddle\",\"tool\":\"task_claim\","
	    "\"arguments\":{\"task_id\":1},\"result\":null,\"error\":{"
	    "\"message\":\"MCP tool call requires approval\"},\"status\":"
	    "\"failed\"}}",
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_2\",\"type\":"
	    "\"agent_message\",\"text\":\"first\"}}",
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_3\",\"type\":"
	    "\"reasoning\",\"text\":\"thinking\"}}",
	    "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_4\",\"type\":"
	    "\"agent_message\",\"text\":\"second\"}}",
	    "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,"
	    "\"output_tokens\":1}}",
	    NULL};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "tool_call,tool_result,text_delta,text_delta,text_delta,cost,done");
	assert_tool(&c, 0, HD_RT_TOOL_CALL, "task_claim", "item_1",
	    "{\"task_id\":1}", 0);
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, "task_claim", "item_1",
	    "{\"message\":\"MCP tool call requires approval\"}", 1);
	assert_string_equal(hd_buf_cstr(&c.t.r.reply), "first\n\nsecond");
	assert_string_equal(c.res.text, "second");
	assert_string_equal(c.res.native_session_id, "t-3");
	case_dispose(&c);
}

int
main(void)
{
	parser = &codex_parser;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_codex__sample_turn, reset),
	    cmocka_unit_test_setup(
		test_codex__a_resumed_thread_is_charged_its_new_tokens, reset),
	    cmocka_unit_test_setup(
		test_codex__cached_tokens_are_priced_as_cached, reset),
	    cmocka_unit_test_setup(test_codex__api_error_400, reset),
	    cmocka_unit_test_setup(test_codex__api_error_500, reset),
	    cmocka_unit_test_setup(
		test_codex__garbage_lines_are_counted, reset),
	    cmocka_unit_test_setup(test_codex__a_truncated_last_line, reset),
	    cmocka_unit_test_setup(test_codex__a_nonzero_exit_says_why, reset),
	    cmocka_unit_test_setup(test_codex__empty_input, reset),
	    cmocka_unit_test_setup(test_codex__calls_and_messages, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
