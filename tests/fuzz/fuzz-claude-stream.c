/*
 * fuzz-claude-stream.c -- the Claude Code stream parser
 * (src/runtime/claude.c) under the turn driver, for any output:
 *  (1) the sink sees exactly one done, and it is the last event; exactly
 *      one cost comes before it (the runtime's or the driver's estimate);
 *  (2) a turn succeeds only when the process exited 0, and the driver's
 *      code agrees with the reason (negative exactly for error);
 *  (3) the reply is at most HD_RUNTIME_OUTPUT_MAX bytes plus the
 *      truncation note, and never NULL;
 *  (4) error and status messages hold no control characters, and an
 *      error says "claude-code: ";
 *  (5) nothing crashes or leaks (ASan and UBSan check the replay).
 * The first input byte picks the exit status (0, 1, 2 or -1, killed) and
 * the stderr tail; the rest is the output, split into lines at '\n' and
 * fed line by line as the adapter will.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>

#include "fuzz.h"
#include "runtime/runtime_int.h"

typedef struct input {
	const uint8_t *data;
	size_t size;
	int exit_code;
	const char *tail;
} input;

typedef struct seen {
	size_t events, dones, costs;
	int after_done; /* an event came after done */
	int last_was_done;
} seen;

static const input *cur;

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-claude-stream: violated: %s\n", what);
		abort();
	}
}

static int
clean_line(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static void
sink(const hd_runtime_event *ev, void *payload)
{
	seen *s = payload;

	if (s->dones > 0)
		s->after_done = 1;
	s->events++;
	s->last_was_done = ev->kind == HD_RT_DONE;
	switch (ev->kind) {
	case HD_RT_DONE: s->dones++; break;
	case HD_RT_COST: s->costs++; break;
	case HD_RT_ERROR:
		check(ev->text != NULL && ev->len == strlen(ev->text),
		    "an error without its text");
		check(clean_line(ev->text, ev->len),
		    "a control character in an error");
		break;
	case HD_RT_STATUS:
		check(ev->text != NULL && ev->len == strlen(ev->text),
		    "a status without its text");
		check(clean_line(ev->text, ev->len),
		    "a control character in a status");
		check(strncmp(ev->text, "claude-code: ", 13) == 0,
		    "a status without the runtime's name");
		break;
	case HD_RT_TEXT_DELTA:
		check(ev->len > 0 && ev->text != NULL, "an empty text_delta");
		break;
	case HD_RT_TOOL_CALL:
	case HD_RT_TOOL_RESULT: break;
	}
}

static int
feed_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	hd_claude_stream *cs = hd_claude__stream_new();
	const char *p = (const char *)cur->data, *end = p + cur->size, *nl;
	int rc;

	(void)in;
	if (cs == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		rc = hd_claude__stream_line(cs, em, p, (size_t)(nl - p));
		check(rc == 0 || rc == -1, "a line returned neither 0 nor -1");
		p = nl + 1;
	}
	hd_claude__stream_finish(cs, em, cur->exit_code, cur->tail);
	hd_claude__stream_free(cs);
	return 0;
}

static void
feed_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
}

static const hd_runtime_adapter feed_adapter = {
    .name = "claude-code",
    .label = "claude-code (fuzz)",
    .capabilities = feed_caps,
    .run = feed_run,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int codes[] = {0, 1, 2, -1};
	static const char *const tails[] = {
	    "", "Error: boom\n\tat x\x01y", "\xe2\x80\x94 tail"};
	hd_runtime_result res;
	hd_runtime_turn turn;
	hd_agent agent;
	hd_err err = HD_ERR_INIT;
	input in;
	seen s;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&s, 0, sizeof(s));
	if (size > 0) {
		in.exit_code = codes[data[0] % 4];
		in.tail = tails[(data[0] / 4) % 3];
		data++;
		size--;
	} else
		in.tail = "";
	in.data = data;
	in.size = size;
	memset(&agent, 0, sizeof(agent));
	agent.id = (char *)"coder";
	agent.team_id = (char *)"dev";
	agent.runtime = (char *)"claude-code";
	memset(&turn, 0, sizeof(turn));
	turn.agent = &agent;
	turn.prompt = "fuzz";
	cur = &in;
	rc = hd_runtime_run_turn(&res, &feed_adapter, &turn, sink, &s, &err);
	cur = NULL;

	/* (1) */
	check(s.dones == 1, "not exactly one done");
	check(s.last_was_done && !s.after_done, "done is not the last event");
	check(s.costs == 1, "not exactly one cost");
	/* (2) */
	check(res.reason != HD_DONE_SUCCESS || in.exit_code == 0,
	    "success after a nonzero exit");
	check((rc < 0) == (res.reason == HD_DONE_ERROR),
	    "the code disagrees with the reason");
	/* (3) */
	check(res.text != NULL, "no reply");
	check(res.text[res.text_len] == '\0', "the reply is not terminated");
	check(res.text_len <=
		  HD_RUNTIME_OUTPUT_MAX + strlen(HD_RUNTIME_TRUNCATED_NOTE),
	    "the reply is over the cap");
	/* (4) */
	if (res.reason == HD_DONE_ERROR) {
		check(res.error != NULL, "an error turn without a message");
		check(clean_line(res.error, strlen(res.error)),
		    "a control character in the turn's error");
		check(strncmp(res.error, "claude-code: ", 13) == 0,
		    "an error without the runtime's name");
	}
	hd_runtime_result_dispose(&res);
	return 0;
}

#define INIT                                                                   \
	"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\","    \
	"\"mcp_servers\":[{\"name\":\"huddle\",\"status\":\"failed\"}]}\n"
#define CALL                                                                   \
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"         \
	"\"tool_use\",\"id\":\"t1\",\"name\":\"mcp__huddle__task_claim\","     \
	"\"input\":{\"id\":7}}]}}\n"
#define RESULT                                                                 \
	"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"              \
	"\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true,"            \
	"\"content\":[{\"type\":\"text\",\"text\":\"denied\"}]}]}}\n"
#define TEXT                                                                   \
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"         \
	"\"text\",\"text\":\"FINAL ok\"}]}}\n"
#define RETRY                                                                  \
	"{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,"        \
	"\"max_retries\":1,\"retry_delay_ms\":571.7,\"error_status\":529,"     \
	"\"error\":\"overloaded\"}\n"

const char *const hd_fuzz_seeds[] = {
    "\x00",
    "\x00" INIT CALL RESULT TEXT
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
    "\"result\":\"FINAL ok\",\"session_id\":\"s-1\",\"total_cost_usd\":"
    "0.002,\"usage\":{\"input_tokens\":200,\"output_tokens\":40},"
    "\"permission_denials\":[{\"tool_name\":\"mcp__huddle__task_claim\"}]}",
    "\x01" INIT RETRY
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\","
    "\"text\":\"API Error: 529 x\"}]},\"error\":\"server_error\"}\n"
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
    "\"api_error_status\":529,\"result\":\"API Error: 529 Overloaded\\n"
    "\\u0001more\",\"total_cost_usd\":0}\n",
    "\x05{\"type\":\"result\",\"is_error\":true,\"result\":\"Not logged "
    "in\"}",
    "\x02" INIT TEXT "{\"type\":\"result\",\"result\":\"x\"}\n",
    "\x03" INIT TEXT,
    "\x00" TEXT TEXT "{\"type\":\"result\",\"is_err",
    "\x00not json\n[1]\n{}\n{\"type\":7}\n\n\r\n{\"type\":\"assistant\"}\n",
    "\x00{\"type\":\"result\",\"subtype\":\"error_max_turns\","
    "\"is_error\":true}",
    "\x00{\"type\":\"result\",\"total_cost_usd\":1e300,\"usage\":"
    "{\"input_tokens\":-5,\"output_tokens\":9223372036854775807,"
    "\"cache_read_input_tokens\":9223372036854775807}}",
    "\x00{\"type\":\"result\",\"total_cost_usd\":-1,\"result\":7}",
    "\x00{\"type\":\"system\",\"subtype\":\"api_retry\",\"retry_delay_ms\":"
    "1e308,\"attempt\":-3,\"max_retries\":\"x\",\"error\":\"a\\nb\"}",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "\n",
    "\r\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "\\u0000",
    "\\u0001",
    "\\n",
    "\xe2\x80\x94",
    "\xff",
    "{\"type\":\"assistant\",\"message\":{\"content\":[",
    "{\"type\":\"text\",\"text\":\"hi\"}",
    "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"x\",\"input\":{}}",
    "]}}\n",
    "]},\"error\":\"unknown\"}\n",
    "{\"type\":\"user\",\"message\":{\"content\":[",
    "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}",
    "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true}",
    INIT,
    RETRY,
    CALL,
    RESULT,
    TEXT,
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\","
    "\"text\":\"API Error: 400 x\"}]},\"error\":\"unknown\"}\n",
    "{\"type\":\"user\",\"message\":{\"content\":\"prompt\"}}\n",
    "{\"type\":\"result\",\"is_error\":false,\"result\":\"FINAL\","
    "\"total_cost_usd\":0.002,\"permission_denials\":[{\"tool_name\":"
    "\"t\"},{\"tool_name\":\"t\"},{}]}\n",
    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":400,"
    "\"result\":\"API Error: 400 \\u0001bad\\nline\"}\n",
    "{\"type\":\"result\",\"subtype\":\"error_during_execution\","
    "\"is_error\":true,\"errors\":[\"boom\"]}\n",
    "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":"
    "true,\"total_cost_usd\":0.5}\n",
    "{\"type\":\"result\",",
    "\"subtype\":\"success\",",
    "\"subtype\":\"error_max_turns\",",
    "\"is_error\":true,",
    "\"is_error\":false,",
    "\"api_error_status\":400,",
    "\"api_error_status\":null,",
    "\"result\":\"API Error: 400 bad\",",
    "\"result\":\"FINAL\",",
    "\"session_id\":\"s-2\",",
    "\"total_cost_usd\":0.002,",
    "\"total_cost_usd\":1e300,",
    "\"usage\":{\"input_tokens\":200,\"output_tokens\":40},",
    "\"permission_denials\":[{\"tool_name\":\"t\"},{}],",
    "\"errors\":[\"boom\"],",
    "\"x\":0}\n",
    NULL,
};
