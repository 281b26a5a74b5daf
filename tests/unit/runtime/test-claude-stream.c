/*
 * test-claude-stream.c -- the parser of `claude -p --output-format
 * stream-json --verbose` (src/runtime/claude.c), driven through the real
 * turn driver: a test adapter feeds lines (captured samples from
 * tests/unit/runtime/samples/, found through HUDDLE_SRC, or lines written
 * here) to hd_claude__stream_line and ends with hd_claude__stream_finish
 * and a given exit status. Each test asserts the exact event sequence,
 * the reply, the cost, the session and the messages.
 */
#include "feed.h"

/* claude.c's parser, for feed.h */
static void *
claude_open(void)
{
	return hd_claude__stream_new();
}

static int
claude_line(void *p, hd_runtime_emit *em, const char *l, size_t n)
{
	return hd_claude__stream_line(p, em, l, n);
}

static void
claude_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	hd_claude__stream_finish(p, em, exit_code, tail);
}

static const char *
claude_session(void *p)
{
	return hd_claude__stream_session(p);
}

static void
claude_close(void *p)
{
	hd_claude__stream_free(p);
}

static const feed_parser claude_parser = {
    claude_open, claude_line, claude_finish, claude_session, claude_close};

static void
assert_cost(turn_case *c, int64_t microcents, int64_t in, int64_t out)
{
	assert_int_equal(c->res.cost.estimated, 0);
	assert_int_equal(c->res.cost.microcents, microcents);
	assert_int_equal(c->res.cost.input_tokens, in);
	assert_int_equal(c->res.cost.output_tokens, out);
	assert_int_equal(c->t.r.cost.estimated, 0);
	assert_int_equal(c->t.r.cost.microcents, microcents);
}

static void
assert_error(turn_case *c, const char *msg)
{
	assert_int_equal(c->res.reason, HD_DONE_ERROR);
	assert_true(c->rc < 0);
	assert_non_null(c->res.error);
	assert_string_equal(c->res.error, msg);
	assert_string_equal(c->err.msg, msg);
	assert_null(c->res.native_session_id);
}

#define SAMPLE_FINAL                                                           \
	"FINAL m-claude_http_sdk -> posted #523 to general: m-claude_http_sdk"
#define SAMPLE_SESSION "551c30ae-8e76-49fd-86fe-bbd5f3d9d735"
#define SAMPLE_TOOL "mcp__team__team_chat_post"
#define SAMPLE_TOOL_ID "toolu_mwrn72410005"
#define SAMPLE_INPUT                                                           \
	"{\"channel\":\"general\",\"task_id\":\"m-claude_http_sdk\","          \
	"\"text\":\"m-claude_http_sdk\"}"
#define SAMPLE_OUTPUT                                                          \
	"[{\"text\":\"posted #523 to general: m-claude_http_sdk\","            \
	"\"type\":\"text\"}]"

/* The captured turn: one MCP call, its result, the final text; the reply
 * is the result line's, the cost its total_cost_usd and usage. */
static void
test_claude__sample_turn(void **state)
{
	turn_case c;
	size_t i;

	(void)state;
	case_init(&c);
	case_sample(&c, "claude-2.1.197-stream-json.jsonl");
	assert_int_equal(c.f.n, 5);
	assert_int_equal(case_run(&c, 0, ""), 0);
	for (i = 0; i < c.f.n; i++)
		assert_int_equal(c.f.rcs[i], 0);
	assert_string_equal(
	    rec_kinds(&c.t.r), "tool_call,tool_result,text_delta,cost,done");
	assert_int_equal(c.t.ntools, 2);
	assert_tool(&c, 0, HD_RT_TOOL_CALL, SAMPLE_TOOL, SAMPLE_TOOL_ID,
	    SAMPLE_INPUT, 0);
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, SAMPLE_TOOL, SAMPLE_TOOL_ID,
	    SAMPLE_OUTPUT, 0);
	assert_string_equal(hd_buf_cstr(&c.t.r.reply), SAMPLE_FINAL);
	assert_string_equal(c.res.text, SAMPLE_FINAL);
	assert_int_equal(c.res.text_len, strlen(SAMPLE_FINAL));
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	assert_null(c.res.error);
	assert_string_equal(c.res.native_session_id, SAMPLE_SESSION);
	assert_string_equal(c.f.session, SAMPLE_SESSION);
	/* $0.002 for 200 in (no cache) and 40 out; the assistant lines'
	 * partial usage (100 in, 1 out each) is not summed */
	assert_cost(&c, 200000, 200, 40);
	case_dispose(&c);
}

/* A resumed session: the same shape, the session id of the resumed
 * conversation. */
static void
test_claude__resume_sample_keeps_its_session(void **state)
{
	turn_case c;

	(void)state;
	case_init(&c);
	case_sample(&c, "claude-2.1.197-resume-stream-json.jsonl");
	assert_int_equal(case_run(&c, 0, ""), 0);
	assert_string_equal(
	    rec_kinds(&c.t.r), "tool_call,tool_result,text_delta,cost,done");
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, SAMPLE_TOOL, "toolu_mwrn74ji000k",
	    "[{\"text\":\"posted to general: m-claude_resume-b\","
	    "\"type\":\"text\"}]",
	    0);
	assert_string_equal(c.res.text,
	    "FINAL m-claude_resume-b -> posted to general: m-claude_resume-b");
	assert_string_equal(
	    c.res.native_session_id, "f210b942-a131-48c8-a9aa-adca176fc9ac");
	assert_cost(&c, 200000, 200, 40);
	case_dispose(&c);
}

/* HTTP 400: is_error with api_error_status (subtype "success"!). The
 * synthetic assistant line repeating the error is not streamed as text. */
static void
test_claude__api_error_400(void **state)
{
	turn_case c;

	(void)state;
	case_feed_sample(&c, "claude-error-400.jsonl", 1, "");
	assert_string_equal(rec_kinds(&c.t.r), "cost,error,done");
	assert_error(&c, "claude-code: API error 400: bad thing");
	assert_string_equal(
	    ev_text(&c, 1), "claude-code: API error 400: bad thing");
	assert_string_equal(c.res.text, "");
	assert_int_equal(c.t.r.reply.len, 0);
	assert_cost(&c, 0, 0, 0); /* the CLI's $0, not an estimate */
	/* the session was seen, but a failed run does not hand it on */
	assert_string_equal(
	    c.f.session, "c1c1d952-9d26-438c-a8db-1462bb79c5c2");
	case_dispose(&c);
}

/* HTTP 529 after a retry: the retry is a status, the failure an error. */
static void
test_claude__api_error_529_after_a_retry(void **state)
{
	turn_case c;

	(void)state;
	case_feed_sample(&c, "claude-error-529-retry.jsonl", 1, "");
	assert_string_equal(rec_kinds(&c.t.r), "status,cost,error,done");
	assert_string_equal(ev_text(&c, 0),
	    "claude-code: API error 529 (overloaded); retrying in 0.572 s "
	    "(attempt 1 of 1)");
	assert_error(&c,
	    "claude-code: API error 529: Overloaded. This is a server-side "
	    "issue, usually temporary \xe2\x80\x94 try again in a moment. If "
	    "it persists, check your inference gateway (127.0.0.1:18080).");
	assert_string_equal(c.res.text, "");
	assert_cost(&c, 0, 0, 0);
	case_dispose(&c);
}

/* is_error without a status ("Not logged in"): the text alone; no
 * total_cost_usd, so the driver estimates. */
static void
test_claude__error_without_a_status(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\","
	    "\"mcp_servers\":[]}",
	    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
	    "\"result\":\"Not logged in \xc2\xb7 Please run /login\","
	    "\"session_id\":\"s-1\"}",
	    NULL,
	};
	turn_case c;

	(void)state;
	case_feed_lines(&c, lines, 1, "some stderr");
	assert_string_equal(rec_kinds(&c.t.r), "error,cost,done");
	assert_error(
	    &c, "claude-code: Not logged in \xc2\xb7 Please run /login");
	assert_int_equal(c.res.cost.estimated, 1);
	case_dispose(&c);
}

/* A long, multi-line error text with a control character is cut to its
 * first line and 300 bytes, on a character boundary, with "...". */
static void
test_claude__long_error_text_is_cut(void **state)
{
	char line[4096], want[512];
	const char *lines[2] = {line, NULL};
	turn_case c;
	size_t len;

	(void)state;
	/* "API Error: 500 " then "\u0001" then 298 x then a 2-byte é then
	 * more, then a second line */
	len = (size_t)snprintf(line, sizeof(line),
	    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":500,"
	    "\"total_cost_usd\":0.5,\"result\":\"API Error: 500 \\u0001");
	memset(line + len, 'x', 298);
	len += 298;
	snprintf(
	    line + len, sizeof(line) - len, "\xc3\xa9yyyy\\nsecond line\"}");
	snprintf(want, sizeof(want), "claude-code: API error 500:  %.*s...",
	    298, line + len - 298);
	case_feed_lines(&c, lines, 1, "");
	assert_string_equal(rec_kinds(&c.t.r), "cost,error,done");
	assert_error(&c, want);
	assert_cost(&c, 50000000, 0, 0);
	case_dispose(&c);
}

/* Denied tools are a warning, not an error: the turn succeeds. Each tool
 * is named once, as Claude Code names it (what its settings allow). The
 * tool_result carries the name of its call; huddle's tools go by their
 * bare names, as every runtime's do. */
static void
test_claude__permission_denials_warn(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-2\"}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"t1\",\"name\":\"mcp__huddle__task_claim\","
	    "\"input\":{\"id\":7}}]}}",
	    "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true,"
	    "\"content\":\"Claude requested permissions to use "
	    "mcp__huddle__task_claim, but you haven't granted it yet.\"}]}}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"I could not claim it.\"}]}}",
	    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
	    "\"result\":\"I could not claim it.\",\"session_id\":\"s-2\","
	    "\"total_cost_usd\":0.001,\"usage\":{\"input_tokens\":100,"
	    "\"output_tokens\":20},\"permission_denials\":["
	    "{\"tool_name\":\"mcp__huddle__task_claim\",\"tool_use_id\":\"t1\","
	    "\"tool_input\":{\"id\":7}},"
	    "{\"tool_name\":\"mcp__huddle__task_claim\",\"tool_use_id\":\"t2\","
	    "\"tool_input\":{\"id\":8}},"
	    "{\"tool_name\":\"mcp__huddle__team_chat_post\",\"tool_use_id\":"
	    "\"t3\",\"tool_input\":{}}]}",
	    NULL,
	};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "tool_call,tool_result,text_delta,status,cost,done");
	assert_tool(&c, 0, HD_RT_TOOL_CALL, "task_claim", "t1",
	    "{\"id\":7}", 0);
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, "task_claim", "t1",
	    "\"Claude requested permissions to use mcp__huddle__task_claim, "
	    "but you haven't granted it yet.\"",
	    1);
	assert_string_equal(ev_text(&c, 3),
	    "claude-code: permission denied for mcp__huddle__task_claim, "
	    "mcp__huddle__team_chat_post");
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	assert_null(c.res.error);
	assert_string_equal(c.res.text, "I could not claim it.");
	assert_string_equal(c.res.native_session_id, "s-2");
	assert_cost(&c, 100000, 100, 20);
	case_dispose(&c);
}

/* More than eight denied tools: eight are named, the rest counted. */
static void
test_claude__many_denials_are_counted(void **state)
{
	char line[2048];
	const char *lines[2] = {line, NULL};
	turn_case c;
	size_t len;
	int i;

	(void)state;
	len = (size_t)snprintf(line, sizeof(line),
	    "{\"type\":\"result\",\"is_error\":false,\"result\":\"ok\","
	    "\"total_cost_usd\":0,\"permission_denials\":[");
	for (i = 0; i < 11; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
		    "%s{\"tool_name\":\"t%d\"}", i ? "," : "", i);
	snprintf(line + len, sizeof(line) - len, ",{\"tool_use_id\":\"x\"}]}");
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r), "status,cost,done");
	assert_string_equal(ev_text(&c, 0),
	    "claude-code: permission denied for t0, t1, t2, t3, t4, t5, t6, t7 "
	    "and 4 more");
	case_dispose(&c);
}

/* is_error with no result text: the first of `errors`, else a subtype
 * other than "success", else the exit status, else a plain sentence. A
 * text of nothing but blanks and control characters is no text (a fuzzed
 * result of DEL bytes once made the error a bare "claude-code:"). */
static void
test_claude__error_results_without_text(void **state)
{
	static const struct {
		const char *line;
		int exit_code;
		const char *want;
	} cases[] = {
	    {"{\"type\":\"result\",\"subtype\":\"error_during_execution\","
	     "\"is_error\":true,\"errors\":[\"boom\\nat x\",\"two\"]}",
		1, "claude-code: boom"},
	    {"{\"type\":\"result\",\"subtype\":\"error_during_execution\","
	     "\"is_error\":true,\"result\":\"\"}",
		1, "claude-code: error_during_execution"},
	    {"{\"type\":\"result\",\"subtype\":\"success\","
	     "\"is_error\":true}",
		3, "claude-code: exit status 3: last words"},
	    {"{\"type\":\"result\",\"is_error\":true,"
	     "\"api_error_status\":\"400\"}",
		0, "claude-code: the result line reports an error"},
	    {"{\"type\":\"result\",\"is_error\":true,"
	     "\"api_error_status\":503,\"result\":\"API Error: 503\"}",
		1, "claude-code: API error 503"},
	    {"{\"type\":\"result\",\"is_error\":true,"
	     "\"result\":\"\\u007f\\u007f \\t\\u0001\\nsecond\"}",
		0, "claude-code: the result line reports an error"},
	    {"{\"type\":\"result\",\"is_error\":true,"
	     "\"result\":\"\\u007f\\u007f\"}",
		2, "claude-code: exit status 2: last words"},
	    {"{\"type\":\"result\",\"is_error\":true,"
	     "\"api_error_status\":500,\"result\":\"API Error: 500 \\u0001\"}",
		1, "claude-code: API error 500"},
	    {"{\"type\":\"result\",\"subtype\":\"\\u0002 \",\"is_error\":true}",
		0, "claude-code: the result line reports an error"},
	};
	turn_case c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *lines[2] = {cases[i].line, NULL};

		case_init(&c);
		case_lines(&c, lines);
		case_run(&c, cases[i].exit_code, "last words");
		assert_string_equal(rec_kinds(&c.t.r), "error,cost,done");
		assert_error(&c, cases[i].want);
		case_dispose(&c);
	}
}

/* A failed MCP server is a status naming it; connected ones are quiet. A
 * retry without a status or an error string still reads well. */
static void
test_claude__mcp_server_failed_and_bare_retry(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-3\","
	    "\"mcp_servers\":[{\"name\":\"huddle\",\"status\":\"failed\"},"
	    "{\"name\":\"other\",\"status\":\"connected\"},"
	    "{\"name\":\"bad\\nname\",\"status\":\"failed\"}]}",
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":2,"
	    "\"max_retries\":10,\"retry_delay_ms\":1000,\"error_status\":null}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"no tools today\"}]}}",
	    "{\"type\":\"result\",\"is_error\":false,\"result\":\"no tools "
	    "today\",\"total_cost_usd\":0,\"usage\":{}}",
	    NULL,
	};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_string_equal(
	    rec_kinds(&c.t.r), "status,status,status,text_delta,cost,done");
	assert_string_equal(
	    ev_text(&c, 0), "claude-code: MCP server huddle failed to start");
	assert_string_equal(
	    ev_text(&c, 1), "claude-code: MCP server bad name failed to start");
	assert_string_equal(ev_text(&c, 2),
	    "claude-code: API error; retrying in 1 s (attempt 2 of 10)");
	assert_string_equal(c.res.text, "no tools today");
	/* the session came from system/init: the result line has none */
	assert_string_equal(c.res.native_session_id, "s-3");
	assert_cost(&c, 0, 0, 0);
	case_dispose(&c);
}

/* Live text: "\n\n" between two assistant lines, none between two blocks
 * of one line; the stored reply is the LAST result line's, whose session
 * id wins over init's; cache tokens count as input; thinking ignored. */
static void
test_claude__text_deltas_and_the_last_result(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"old\"}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"thinking\",\"thinking\":\"hmm\"},{\"type\":\"text\",\"text\":"
	    "\"one\"}],\"usage\":{\"input_tokens\":999999,\"output_tokens\":"
	    "999999}}}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"two\"},{\"type\":\"text\",\"text\":\"\"},"
	    "{\"type\":\"text\",\"text\":\"three\"}]}}",
	    "{\"type\":\"result\",\"is_error\":false,\"result\":\"old\","
	    "\"total_cost_usd\":1.5,\"usage\":{\"input_tokens\":1}}",
	    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
	    "\"result\":\"new\",\"session_id\":\"new-session\","
	    "\"total_cost_usd\":0.0123456789,\"usage\":{\"input_tokens\":10,"
	    "\"cache_creation_input_tokens\":20,\"cache_read_input_tokens\":30,"
	    "\"output_tokens\":5}}",
	    NULL,
	};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "text_delta,text_delta,text_delta,text_delta,cost,done");
	assert_string_equal(hd_buf_cstr(&c.t.r.reply), "one\n\ntwothree");
	assert_string_equal(c.res.text, "new");
	assert_string_equal(c.res.native_session_id, "new-session");
	assert_cost(&c, 1234568, 60, 5); /* round(0.0123456789 * 1e8) */
	case_dispose(&c);
}

/* Parallel calls answered out of order, and a result for a call never
 * seen (no name). */
static void
test_claude__tool_results_are_paired_by_id(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"assistant\",\"message\":{\"content\":["
	    "{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"read\",\"input\":"
	    "{}},{\"type\":\"tool_use\",\"id\":\"b\",\"name\":\"post\","
	    "\"input\":{\"text\":\"hi\"}}]}}",
	    "{\"type\":\"user\",\"message\":{\"content\":["
	    "{\"type\":\"tool_result\",\"tool_use_id\":\"b\",\"content\":"
	    "[{\"type\":\"text\",\"text\":\"posted\"}]},"
	    "{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":"
	    "\"read it\",\"is_error\":false},"
	    "{\"type\":\"tool_result\",\"tool_use_id\":\"zz\"}]}}",
	    "{\"type\":\"user\",\"message\":{\"content\":\"a prompt\"}}",
	    "{\"type\":\"result\",\"is_error\":false,\"result\":\"done\","
	    "\"total_cost_usd\":0.00000001}",
	    NULL,
	};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_int_equal(c.f.rcs[2], 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "tool_call,tool_call,tool_result,tool_result,tool_result,cost,"
	    "done");
	assert_tool(&c, 0, HD_RT_TOOL_CALL, "read", "a", "{}", 0);
	assert_tool(
	    &c, 1, HD_RT_TOOL_CALL, "post", "b", "{\"text\":\"hi\"}", 0);
	assert_tool(&c, 2, HD_RT_TOOL_RESULT, "post", "b",
	    "[{\"text\":\"posted\",\"type\":\"text\"}]", 0);
	assert_tool(&c, 3, HD_RT_TOOL_RESULT, "read", "a", "\"read it\"", 0);
	assert_tool(&c, 4, HD_RT_TOOL_RESULT, "(null)", "zz", "(null)", 0);
	assert_null(c.res.native_session_id); /* none was ever given */
	assert_cost(&c, 1, 0, 0);
	case_dispose(&c);
}

/* The stream was cut inside the result line: that line is malformed, and
 * with no result the turn fails even though the CLI exited 0. The text
 * streamed so far is what the result keeps. */
static void
test_claude__truncated_result_line(void **state)
{
	turn_case c;

	(void)state;
	case_init(&c);
	case_sample(&c, "claude-2.1.197-stream-json.jsonl");
	c.f.lens[4] /= 2;
	case_run(&c, 0, "");
	assert_int_equal(c.f.rcs[3], 0);
	assert_int_equal(c.f.rcs[4], -1);
	assert_string_equal(rec_kinds(&c.t.r),
	    "tool_call,tool_result,text_delta,error,cost,done");
	assert_error(&c, "claude-code: the stream ended without a result line "
			 "(1 malformed line)");
	assert_string_equal(c.res.text, SAMPLE_FINAL);
	assert_int_equal(c.res.cost.estimated, 1);
	case_dispose(&c);
}

/* Garbage between good lines is counted and skipped; the turn still
 * succeeds because a result line came. */
static void
test_claude__garbage_lines_are_counted(void **state)
{
	static const char *const garbage[] = {
	    "",
	    "not json",
	    "[1,2]",
	    "\"a string\"",
	    "{\"no\":\"type\"}",
	    "{\"type\":42}",
	    " \t\r",
	    "{\"type\":\"assistant\"}",
	    "{\"type\":\"user\",\"message\":{\"content\":7}}",
	    "{\"type\":\"stream_event\",\"event\":{}}",
	    "{\"type\":\"system\",\"subtype\":\"compact_boundary\"}",
	    "{\"type\":\"result\"",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[7,{\"type\":1},"
	    "{\"type\":\"tool_use\"},{\"type\":\"text\",\"text\":5},"
	    "{\"type\":\"tool_result\",\"content\":\"x\"}]}}",
	    "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_result\",\"content\":\"orphan\"}]}}",
	};
	static const int want[] = {
	    0, -1, -1, -1, -1, -1, 0, -1, -1, 0, 0, -1, 0, 0};
	turn_case c;
	size_t i, n = sizeof(garbage) / sizeof(garbage[0]), k = 0;
	feed f;

	(void)state;
	case_init(&c);
	case_sample(&c, "claude-2.1.197-stream-json.jsonl");
	/* garbage before every sample line */
	f = c.f;
	c.f.n = 0;
	for (i = 0; i < f.n; i++) {
		for (k = 0; k < n; k++) {
			c.f.lines[c.f.n] = garbage[k];
			c.f.lens[c.f.n++] = strlen(garbage[k]);
		}
		c.f.lines[c.f.n] = f.lines[i];
		c.f.lens[c.f.n++] = f.lens[i];
		assert_true(c.f.n + n < MAX_LINES);
	}
	assert_int_equal(case_run(&c, 0, ""), 0);
	for (i = 0; i < c.f.n; i++)
		assert_int_equal(
		    c.f.rcs[i], i % (n + 1) == n ? 0 : want[i % (n + 1)]);
	/* the same events as the clean sample: a tool_use without a name
	 * and a text that is not a string make none */
	assert_string_equal(
	    rec_kinds(&c.t.r), "tool_call,tool_result,text_delta,cost,done");
	assert_tool(&c, 0, HD_RT_TOOL_CALL, SAMPLE_TOOL, SAMPLE_TOOL_ID,
	    SAMPLE_INPUT, 0);
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, SAMPLE_TOOL, SAMPLE_TOOL_ID,
	    SAMPLE_OUTPUT, 0);
	assert_string_equal(hd_buf_cstr(&c.t.r.reply), SAMPLE_FINAL);
	assert_string_equal(c.res.text, SAMPLE_FINAL);
	assert_string_equal(c.res.native_session_id, SAMPLE_SESSION);
	assert_cost(&c, 200000, 200, 40);
	case_dispose(&c);
}

/* No result line and exit 1: the exit status and the stderr tail; killed
 * (-1) says so. */
static void
test_claude__no_result_and_a_nonzero_exit(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-4\"}",
	    NULL,
	};
	turn_case c;

	(void)state;
	case_feed_lines(
	    &c, lines, 1, "Error: No conversation found\nwith session ID: x");
	assert_string_equal(rec_kinds(&c.t.r), "error,cost,done");
	assert_error(&c, "claude-code: exit status 1: Error: No conversation "
			 "found with session ID: x");
	assert_int_equal(c.res.cost.estimated, 1);
	case_dispose(&c);

	case_feed_lines(&c, lines, -1, "");
	assert_string_equal(rec_kinds(&c.t.r), "error,cost,done");
	assert_error(&c, "claude-code: killed");
	case_dispose(&c);
}

/* No result line and exit 0: the stream ended early. */
static void
test_claude__no_result_and_exit_zero(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-5\"}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"half an answer\"}]}}",
	    NULL,
	};
	turn_case c;

	(void)state;
	case_feed_lines(&c, lines, 0, "");
	assert_string_equal(rec_kinds(&c.t.r), "text_delta,error,cost,done");
	assert_error(&c, "claude-code: the stream ended without a result line");
	assert_string_equal(c.res.text, "half an answer");
	case_dispose(&c);
}

/* A good result line but exit 2: still an error; the reply and the cost
 * are kept. */
static void
test_claude__nonzero_exit_after_a_good_result(void **state)
{
	turn_case c;

	(void)state;
	case_feed_sample(&c, "claude-2.1.197-stream-json.jsonl", 2, "");
	assert_string_equal(rec_kinds(&c.t.r),
	    "tool_call,tool_result,text_delta,cost,error,done");
	assert_error(&c, "claude-code: exit status 2");
	assert_string_equal(c.res.text, SAMPLE_FINAL);
	assert_cost(&c, 200000, 200, 40);
	case_dispose(&c);
}

/* Nothing at all. */
static void
test_claude__empty_input(void **state)
{
	turn_case c;

	(void)state;
	case_init(&c);
	case_run(&c, 0, "");
	assert_string_equal(rec_kinds(&c.t.r), "error,cost,done");
	assert_error(&c, "claude-code: the stream ended without a result line");
	assert_string_equal(c.res.text, "");
	assert_null(c.f.session);
	case_dispose(&c);
}

/* The CLI's turn limit ends the turn max_turns, not error. */
static void
test_claude__turn_limit_is_max_turns(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-6\"}",
	    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"still working\"}]}}",
	    "{\"type\":\"result\",\"subtype\":\"error_max_turns\","
	    "\"is_error\":true,\"num_turns\":3,\"session_id\":\"s-6\","
	    "\"total_cost_usd\":0.003,\"usage\":{\"input_tokens\":300,"
	    "\"output_tokens\":60}}",
	    NULL,
	};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 1, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r), "text_delta,cost,status,done");
	assert_string_equal(ev_text(&c, 2),
	    "claude-code: stopped at the turn limit after 3 turns");
	assert_int_equal(c.res.reason, HD_DONE_MAX_TURNS);
	assert_null(c.res.error);
	assert_string_equal(c.res.text, "still working");
	assert_string_equal(c.res.native_session_id, "s-6");
	assert_cost(&c, 300000, 300, 60);
	case_dispose(&c);
}

int
main(void)
{
	parser = &claude_parser;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_claude__sample_turn),
	    cmocka_unit_test(test_claude__resume_sample_keeps_its_session),
	    cmocka_unit_test(test_claude__api_error_400),
	    cmocka_unit_test(test_claude__api_error_529_after_a_retry),
	    cmocka_unit_test(test_claude__error_without_a_status),
	    cmocka_unit_test(test_claude__long_error_text_is_cut),
	    cmocka_unit_test(test_claude__permission_denials_warn),
	    cmocka_unit_test(test_claude__many_denials_are_counted),
	    cmocka_unit_test(test_claude__error_results_without_text),
	    cmocka_unit_test(test_claude__mcp_server_failed_and_bare_retry),
	    cmocka_unit_test(test_claude__text_deltas_and_the_last_result),
	    cmocka_unit_test(test_claude__tool_results_are_paired_by_id),
	    cmocka_unit_test(test_claude__truncated_result_line),
	    cmocka_unit_test(test_claude__garbage_lines_are_counted),
	    cmocka_unit_test(test_claude__no_result_and_a_nonzero_exit),
	    cmocka_unit_test(test_claude__no_result_and_exit_zero),
	    cmocka_unit_test(test_claude__nonzero_exit_after_a_good_result),
	    cmocka_unit_test(test_claude__empty_input),
	    cmocka_unit_test(test_claude__turn_limit_is_max_turns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
