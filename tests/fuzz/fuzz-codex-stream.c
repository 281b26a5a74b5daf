/*
 * fuzz-codex-stream.c -- the Codex `exec --json` stream parser
 * (src/runtime/codex.c) under the turn driver, for any output:
 *  (1) the sink sees exactly one done, and it is the last event; exactly
 *      one cost comes before it (the runtime's or the driver's estimate);
 *  (2) a turn succeeds only when the process exited 0, and the driver's
 *      code agrees with the reason (negative exactly for error);
 *  (3) the reply is at most HD_RUNTIME_OUTPUT_MAX bytes plus the
 *      truncation note, and never NULL;
 *  (4) error and status messages hold no control characters, and each
 *      says "codex: ";
 *  (5) nothing crashes or leaks (ASan and UBSan check the replay).
 * The first input byte picks the exit status (0, 1, 2 or -1, killed), the
 * stderr tail and the thread's totals before the run; the rest is the output,
 * split into lines at '\n' and fed line by line as the adapter will.
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
	hd_codex_usage base;
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
		fprintf(stderr, "fuzz-codex-stream: violated: %s\n", what);
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
		check(strncmp(ev->text, "codex: ", 7) == 0,
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
	static const hd_price price = {1.25, 0.125, 10.0};
	hd_codex_stream *cs = hd_codex__stream_new(&price, &cur->base);
	hd_codex_usage u;
	const char *p = (const char *)cur->data, *end = p + cur->size, *nl;
	int rc;

	(void)in;
	if (cs == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		rc = hd_codex__stream_line(cs, em, p, (size_t)(nl - p));
		check(rc == 0 || rc == -1, "a line returned neither 0 nor -1");
		p = nl + 1;
	}
	hd_codex__stream_finish(cs, em, cur->exit_code, cur->tail);
	hd_codex__stream_usage(cs, &u);
	check(u.input >= 0 && u.cached >= 0 && u.output >= 0,
	    "negative thread totals");
	hd_codex__stream_free(cs);
	return 0;
}

static void
feed_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
}

static const hd_runtime_adapter feed_adapter = {
    .name = "codex",
    .label = "codex (fuzz)",
    .capabilities = feed_caps,
    .run = feed_run,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int codes[] = {0, 1, 2, -1};
	static const char *const tails[] = {"",
	    "Error: boom\n\tat x\x01y\nWARNING: proceeding, even though x\n",
	    "\xe2\x80\x94 tail"};
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
		in.base.input = (data[0] / 12) % 2 ? 200 : 0;
		in.base.output = in.base.input / 5;
		data++;
		size--;
	} else
		in.tail = "";
	in.data = data;
	in.size = size;
	memset(&agent, 0, sizeof(agent));
	agent.id = (char *)"coder";
	agent.team_id = (char *)"dev";
	agent.runtime = (char *)"codex";
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
		check(strncmp(res.error, "codex: ", 7) == 0,
		    "an error without the runtime's name");
	}
	hd_runtime_result_dispose(&res);
	return 0;
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
    "\x00{\"type\":\"item.completed\",\"item\":{\"type\":\"mcp_tool_call\","
    "\"id\":7,\"error\":[],\"status\":\"failed\"}}",
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
