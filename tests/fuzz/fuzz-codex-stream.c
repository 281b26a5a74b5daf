/*
 * fuzz-codex-stream.c -- the Codex `exec --json` stream parser
 * (src/runtime/codex.c) under the turn driver, for any output: the checks
 * of stream-fuzz.h.
 */
#include "stream-fuzz.h"

/* The first byte also picks the thread's totals before the run. */
static void *
codex_open(uint8_t first)
{
	static const hd_price price = {1.25, 0.125, 10.0};
	hd_codex_usage base = {0, 0, 0};

	if ((first / 12) % 2) {
		base.input = 200;
		base.output = 40;
	}
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

/* the totals handed on are never negative */
static void
codex_close(void *p)
{
	hd_codex_usage u;

	hd_codex__stream_usage(p, &u);
	if (u.input < 0 || u.cached < 0 || u.output < 0) {
		fprintf(stderr, "fuzz-codex-stream: negative thread totals\n");
		abort();
	}
	hd_codex__stream_free(p);
}

static const stream_fuzz parser = {
    "codex: ", codex_open, codex_line, codex_finish, codex_close};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return stream_fuzz_one(&parser, data, size);
}

#define THREAD "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n"
#define WARN                                                                   \
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":"   \
	"\"error\",\"message\":\"Model metadata for `x` not found.\"}}\n"
#define STARTED                                                                \
	"{\"type\":\"item.started\",\"item\":{\"id\":\"item_1\",\"type\":"     \
	"\"mcp_tool_call\",\"server\":\"huddle\",\"tool\":\"task_claim\","     \
	"\"arguments\":{\"task_id\":1},\"status\":\"in_progress\"}}\n"
#define DONE_CALL                                                              \
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_1\",\"type\":"   \
	"\"mcp_tool_call\",\"tool\":\"task_claim\",\"result\":{\"content\":"   \
	"[{\"type\":\"text\",\"text\":\"ok\"}]},\"status\":\"completed\"}}\n"
#define MESSAGE                                                                \
	"{\"type\":\"item.completed\",\"item\":{\"id\":\"item_2\",\"type\":"   \
	"\"agent_message\",\"text\":\"FINAL ok\"}}\n"
#define USAGE                                                                  \
	"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":400,"        \
	"\"cached_input_tokens\":100,\"output_tokens\":80}}\n"

const char *const hd_fuzz_seeds[] = {
    "\x00",
    "\x00" THREAD WARN
    "{\"type\":\"turn.started\"}\n" STARTED DONE_CALL MESSAGE USAGE,
    "\x0c" THREAD MESSAGE USAGE,
    "\x01" THREAD WARN
    "{\"type\":\"error\",\"message\":\"{\\\"error\\\":{\\\"message\\\":"
    "\\\"bad \\\\u0001thing\\\"}}\"}\n"
    "{\"type\":\"turn.failed\",\"error\":{\"message\":\"x\\ny\"}}\n",
    "\x02" THREAD MESSAGE,
    "\x03" THREAD STARTED,
    "\x00" MESSAGE MESSAGE "{\"type\":\"turn.comp",
    "\x00not json\n[1]\n{}\n{\"type\":7}\n\n\r\n{\"type\":\"item.started\"}\n",
    "\x00{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":-5,"
    "\"cached_input_tokens\":9223372036854775807,\"output_tokens\":"
    "9223372036854775807}}",
    /* found by libFuzzer: an error of nothing but DEL characters */
    "]0\n{\n{\"type\":\"error\",\"messa\":\"error\",\"message\":\""
    "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\"}\n,",
    "\x00{\"type\":\"item.completed\",\"item\":{\"type\":\"mcp_tool_call\","
    "\"id\":7,\"error\":[],\"status\":\"failed\"}}",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    STREAM_FUZZ_JSON_TOKENS,
    THREAD,
    WARN,
    STARTED,
    DONE_CALL,
    MESSAGE,
    USAGE,
    "{\"type\":\"turn.started\"}\n",
    "{\"type\":\"turn.failed\",\"error\":{\"message\":\"boom\"}}\n",
    "{\"type\":\"error\",\"message\":\"{\\\"error\\\":{\\\"message\\\":"
    "\\\"bad\\\"}}\"}\n",
    "{\"type\":\"item.completed\",\"item\":{",
    "{\"type\":\"item.started\",\"item\":{",
    "\"type\":\"mcp_tool_call\",",
    "\"type\":\"agent_message\",",
    "\"type\":\"error\",",
    "\"id\":\"item_1\",",
    "\"tool\":\"task_claim\",",
    "\"status\":\"failed\",",
    "\"error\":{\"message\":\"denied\"},",
    "\"text\":\"hi\"",
    "\"message\":\"warn\"",
    "}}\n",
    "{\"type\":\"turn.completed\",\"usage\":{",
    "\"input_tokens\":100,",
    "\"cached_input_tokens\":50,",
    "\"output_tokens\":20",
    NULL,
};
