/*
 * test-native-wire.c -- the native runtime's wire formats
 * (src/runtime/native-wire.c): SSE framing in every split and line
 * ending, a cut event never dispatched; both providers' streamed replies
 * (text, tool calls assembled from pieces, usage, the end of reply, an
 * error in the stream, malformed events) fed byte by byte and whole;
 * the request bodies made from a neutral transcript, and the same bodies
 * joined from kept pieces; error bodies.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "runtime/native.h"

/* ---- SSE ---- */

typedef struct sse_log {
	hd_buf b; /* "event|data\n" per dispatched event */
	int n;
} sse_log;

static void
sse_rec(void *ctx, const char *event, const char *data, size_t len)
{
	sse_log *l = ctx;

	hd_buf_printf(&l->b, "%s|", event);
	hd_buf_put(&l->b, data, len);
	hd_buf_putc(&l->b, '\n');
	l->n++;
}

/* Feed text to a fresh parser in chunks of step bytes (0: whole). */
static void
sse_run(sse_log *l, const char *text, size_t step, int *cut)
{
	hd_sse s;
	size_t i, n = strlen(text);

	l->b = (hd_buf)HD_BUF_INIT(0);
	l->n = 0;
	hd_sse_init(&s, sse_rec, l);
	if (step == 0)
		hd_sse_feed(&s, text, n);
	else
		for (i = 0; i < n; i += step)
			hd_sse_feed(&s, text + i, n - i < step ? n - i : step);
	if (cut != NULL)
		*cut = s.cut;
	hd_sse_dispose(&s);
}

static void
test_native_wire__sse_framing_in_any_split(void **state)
{
	static const char *text =
	    ": a comment\n"
	    "event: message_start\n"
	    "data: {\"a\":1}\n\n"
	    "data:no space\r\n"
	    "data:  two spaces\r\n\r\n"
	    "event: x\rdata: cr only\r\r"
	    "id: 7\nretry: 100\ndata\n\n"
	    "event: ignored without data\n\n"
	    "data: the last, cut";
	static const char *want = "message_start|{\"a\":1}\n"
				  "|no space\n two spaces\n"
				  "x|cr only\n"
				  "|\n";
	sse_log l;
	size_t steps[] = {0, 1, 2, 3, 7};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		sse_run(&l, text, steps[i], NULL);
		assert_string_equal(hd_buf_cstr(&l.b), want);
		assert_int_equal(l.n, 4);
		hd_buf_dispose(&l.b);
	}
}

static void
test_native_wire__an_oversized_event_is_dropped(void **state)
{
	char *big = malloc(HD_SSE_EVENT_MAX + 64);
	sse_log l;
	int cut = 0;

	(void)state;
	memcpy(big, "data: ", 6);
	memset(big + 6, 'x', HD_SSE_EVENT_MAX + 10);
	memcpy(big + 6 + HD_SSE_EVENT_MAX + 10, "\n\ndata: ok\n\n", 13);
	sse_run(&l, big, 0, &cut);
	assert_true(cut);
	assert_string_equal(hd_buf_cstr(&l.b), "|ok\n");
	hd_buf_dispose(&l.b);
	free(big);
}

/* ---- replies ---- */

typedef struct got_text {
	hd_buf b;
} got_text;

static void
text_rec(void *ctx, const char *text, size_t len)
{
	hd_buf_put(&((got_text *)ctx)->b, text, len);
}

static void
feed_all(hd_native_stream *ns, const char *text, size_t step)
{
	size_t i, n = strlen(text);

	for (i = 0; i < n; i += step)
		hd_native__stream_feed(ns, text + i, n - i < step ? n - i : step);
	hd_native__stream_end(ns);
}

static char *
calls_text(const hd_native_reply *r)
{
	return json_dumps(r->calls, JSON_COMPACT | JSON_SORT_KEYS);
}

static const char *anthropic_tool_stream =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
    "\"usage\":{\"input_tokens\":90,\"cache_read_input_tokens\":10,"
    "\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
    "{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
    "\"text_delta\",\"text\":\"Let me \"}}\n\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
    "\"text_delta\",\"text\":\"claim it.\"}}\n\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"task_claim\","
    "\"input\":{}}}\n\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
    "\"input_json_delta\",\"partial_json\":\"{\\\"task_\"}}\n\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
    "\"input_json_delta\",\"partial_json\":\"id\\\": 1}\"}}\n\n"
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"task_list\","
    "\"input\":{}}}\n\n"
    "data: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n"
    "data: {\"type\":\"message_stop\"}\n\n";

static void
test_native_wire__anthropic_text_tools_usage(void **state)
{
	size_t steps[] = {1, 5, 4096};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		hd_native_stream ns;
		got_text g = {HD_BUF_INIT(0)};
		char *calls;

		hd_native__stream_init(&ns, HD_NATIVE_ANTHROPIC, text_rec, &g);
		feed_all(&ns, anthropic_tool_stream, steps[i]);
		assert_string_equal(hd_buf_cstr(&g.b), "Let me claim it.");
		assert_string_equal(hd_buf_cstr(&ns.r.text), "Let me claim it.");
		calls = calls_text(&ns.r);
		assert_string_equal(calls,
		    "[{\"args\":\"{\\\"task_id\\\": 1}\",\"id\":\"toolu_1\","
		    "\"name\":\"task_claim\"},{\"args\":\"{}\",\"id\":"
		    "\"toolu_2\",\"name\":\"task_list\"}]");
		free(calls);
		assert_int_equal(ns.r.input, 100); /* cached reads included */
		assert_int_equal(ns.r.cached, 10);
		assert_int_equal(ns.r.output, 42);
		assert_true(ns.r.finished);
		assert_string_equal(ns.r.stop, "tool_use");
		assert_null(ns.r.error);
		assert_int_equal(ns.r.malformed, 0);
		hd_native__stream_dispose(&ns);
		hd_buf_dispose(&g.b);
	}
}

static void
test_native_wire__anthropic_error_and_cut(void **state)
{
	hd_native_stream ns;

	(void)state;
	hd_native__stream_init(&ns, HD_NATIVE_ANTHROPIC, NULL, NULL);
	feed_all(&ns,
	    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
	    3);
	assert_string_equal(ns.r.error, "Overloaded");
	assert_false(ns.r.finished);
	hd_native__stream_dispose(&ns);
	/* cut mid-event: nothing of the last event counts, no end */
	hd_native__stream_init(&ns, HD_NATIVE_ANTHROPIC, NULL, NULL);
	feed_all(&ns,
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
	    "{\"type\":\"text_delta\",\"text\":\"half\"}}\n\n"
	    "data: {\"type\":\"message_stop\"}",
	    64);
	assert_string_equal(hd_buf_cstr(&ns.r.text), "half");
	assert_false(ns.r.finished);
	hd_native__stream_dispose(&ns);
	/* garbage is counted, not fatal */
	hd_native__stream_init(&ns, HD_NATIVE_ANTHROPIC, NULL, NULL);
	feed_all(&ns, "data: {not json\n\ndata: [1]\n\ndata: {}\n\n", 4096);
	assert_int_equal(ns.r.malformed, 3);
	hd_native__stream_dispose(&ns);
}

static const char *openai_tool_stream =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
    "\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
    "\"On it\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
    "[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":"
    "{\"name\":\"team_chat_post\",\"arguments\":\"{\\\"text\\\":\"}}]},"
    "\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
    "[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":"
    "{\"name\":\"task_\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
    "[{\"index\":0,\"function\":{\"name\":\"claim\",\"arguments\":"
    "\"{\\\"task_id\\\":1}\"}},{\"index\":1,\"function\":{\"arguments\":"
    "\"\\\"hi\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,"
    "\"completion_tokens\":30,\"prompt_tokens_details\":{\"cached_tokens\":"
    "20}}}\n\n"
    "data: [DONE]\n\n";

static void
test_native_wire__openai_text_tools_usage(void **state)
{
	size_t steps[] = {1, 3, 4096};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		hd_native_stream ns;
		got_text g = {HD_BUF_INIT(0)};
		char *calls;

		hd_native__stream_init(&ns, HD_NATIVE_OPENAI, text_rec, &g);
		feed_all(&ns, openai_tool_stream, steps[i]);
		assert_string_equal(hd_buf_cstr(&g.b), "On it");
		calls = calls_text(&ns.r);
		/* in index order, names and arguments joined from pieces */
		assert_string_equal(calls,
		    "[{\"args\":\"{\\\"task_id\\\":1}\",\"id\":\"call_a\","
		    "\"name\":\"task_claim\"},{\"args\":\"{\\\"text\\\":"
		    "\\\"hi\\\"}\",\"id\":\"call_b\",\"name\":"
		    "\"team_chat_post\"}]");
		free(calls);
		assert_int_equal(ns.r.input, 120);
		assert_int_equal(ns.r.cached, 20);
		assert_int_equal(ns.r.output, 30);
		assert_true(ns.r.finished);
		assert_string_equal(ns.r.stop, "tool_calls");
		assert_int_equal(ns.r.malformed, 0);
		hd_native__stream_dispose(&ns);
		hd_buf_dispose(&g.b);
	}
}

static void
test_native_wire__openai_error_in_stream(void **state)
{
	hd_native_stream ns;

	(void)state;
	hd_native__stream_init(&ns, HD_NATIVE_OPENAI, NULL, NULL);
	feed_all(&ns,
	    "data: {\"error\":{\"message\":\"model overloaded\",\"type\":"
	    "\"server_error\"}}\n\n",
	    4096);
	assert_string_equal(ns.r.error, "model overloaded");
	assert_false(ns.r.finished);
	hd_native__stream_dispose(&ns);
}

/* ---- requests ---- */

static json_t *
transcript(void)
{
	return json_loads(
	    "[{\"role\":\"user\",\"text\":\"claim one\"},"
	    "{\"role\":\"assistant\",\"text\":\"ok\",\"calls\":["
	    "{\"id\":\"c1\",\"name\":\"task_claim\",\"args\":\"{\\\"task_id\\\":1}\"},"
	    "{\"id\":\"c2\",\"name\":\"task_list\",\"args\":\"{bad\"}]},"
	    "{\"role\":\"tool\",\"id\":\"c1\",\"name\":\"task_claim\",\"text\":"
	    "\"claimed\",\"is_error\":false},"
	    "{\"role\":\"tool\",\"id\":\"c2\",\"name\":\"task_list\",\"text\":"
	    "\"invalid\",\"is_error\":true},"
	    "{\"role\":\"assistant\",\"text\":\"done\"}]",
	    0, NULL);
}

static void
test_native_wire__requests(void **state)
{
	json_t *msgs = transcript(), *tools, *req;
	char *s;

	(void)state;
	tools = json_loads("[{\"name\":\"task_claim\",\"description\":\"Claim\","
			   "\"input_schema\":{\"type\":\"object\"}}]",
	    0, NULL);
	req = hd_native__request(HD_NATIVE_ANTHROPIC, "claude-x", "be brief",
	    msgs, tools);
	s = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
	    "{\"max_tokens\":8192,\"messages\":["
	    "{\"content\":\"claim one\",\"role\":\"user\"},"
	    "{\"content\":[{\"text\":\"ok\",\"type\":\"text\"},"
	    "{\"id\":\"c1\",\"input\":{\"task_id\":1},\"name\":\"task_claim\","
	    "\"type\":\"tool_use\"},{\"id\":\"c2\",\"input\":{},\"name\":"
	    "\"task_list\",\"type\":\"tool_use\"}],\"role\":\"assistant\"},"
	    "{\"content\":[{\"content\":\"claimed\",\"is_error\":false,"
	    "\"tool_use_id\":\"c1\",\"type\":\"tool_result\"},{\"content\":"
	    "\"invalid\",\"is_error\":true,\"tool_use_id\":\"c2\",\"type\":"
	    "\"tool_result\"}],\"role\":\"user\"},"
	    "{\"content\":[{\"text\":\"done\",\"type\":\"text\"}],\"role\":"
	    "\"assistant\"}],"
	    "\"model\":\"claude-x\",\"stream\":true,\"system\":\"be brief\","
	    "\"tools\":[{\"description\":\"Claim\",\"input_schema\":{\"type\":"
	    "\"object\"},\"name\":\"task_claim\"}]}");
	free(s);
	json_decref(req);
	req = hd_native__request(HD_NATIVE_OPENAI, "gpt-x", "be brief", msgs,
	    tools);
	s = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
	    "{\"messages\":[{\"content\":\"be brief\",\"role\":\"system\"},"
	    "{\"content\":\"claim one\",\"role\":\"user\"},"
	    "{\"content\":\"ok\",\"role\":\"assistant\",\"tool_calls\":["
	    "{\"function\":{\"arguments\":\"{\\\"task_id\\\":1}\",\"name\":"
	    "\"task_claim\"},\"id\":\"c1\",\"type\":\"function\"},"
	    "{\"function\":{\"arguments\":\"{bad\",\"name\":\"task_list\"},"
	    "\"id\":\"c2\",\"type\":\"function\"}]},"
	    "{\"content\":\"claimed\",\"role\":\"tool\",\"tool_call_id\":\"c1\"},"
	    "{\"content\":\"invalid\",\"role\":\"tool\",\"tool_call_id\":\"c2\"},"
	    "{\"content\":\"done\",\"role\":\"assistant\"}],"
	    "\"model\":\"gpt-x\",\"stream\":true,\"stream_options\":"
	    "{\"include_usage\":true},\"tools\":[{\"function\":{\"description\":"
	    "\"Claim\",\"name\":\"task_claim\",\"parameters\":{\"type\":"
	    "\"object\"}},\"type\":\"function\"}]}");
	free(s);
	json_decref(req);
	json_decref(tools);
	json_decref(msgs);
}

/* The body joined from kept pieces parses to hd_native__request's, for
 * both providers, with and without a system prompt and tools, whatever
 * pieces were already made (some, all, none, or made for a prefix). */
static void
body_matches(hd_native_provider p, const char *system, const json_t *msgs,
    const json_t *tools)
{
	json_t *req = hd_native__request(p, "m", system, msgs, tools);
	json_t *wire = json_array(), *got, *prefix = json_array();
	char *env = hd_native__envelope(p, "m", system, tools), *body;
	hd_native_body kept;
	size_t i, n = json_array_size(msgs);
	int pass;

	assert_non_null(env);
	for (pass = 0; pass < 3; pass++) {
		if (pass == 2) { /* pieces made for every other message */
			json_array_clear(wire);
			for (i = 0; i < n; i++)
				json_array_append_new(wire,
				    i % 2 ? hd_native__wire(p,
						json_array_get(msgs, i))
					  : json_null());
		}
		body = hd_native__body(p, env, system, msgs, wire);
		assert_non_null(body);
		got = json_loads(body, 0, NULL);
		assert_non_null(got);
		assert_true(json_equal(got, req));
		assert_int_equal(json_array_size(wire), n);
		json_decref(got);
		free(body);
	}
	/* a turn's history first, then the messages it adds: a kept body
	 * extended call after call is the body joined anew, byte for byte */
	json_array_clear(wire);
	memset(&kept, 0, sizeof(kept));
	for (i = 0; i < n; i++) {
		json_t *want;

		json_array_append(prefix, json_array_get(msgs, i));
		want = hd_native__request(p, "m", system, prefix, tools);
		body = hd_native__body(p, env, system, prefix, wire);
		got = json_loads(body, 0, NULL);
		assert_true(json_equal(got, want));
		assert_int_equal(
		    hd_native__body_make(&kept, p, env, system, prefix, wire), 0);
		assert_int_equal(kept.n, i + 1);
		assert_int_equal(kept.len, strlen(body));
		assert_string_equal(kept.text, body);
		json_decref(got);
		json_decref(want);
		free(body);
	}
	/* fewer messages than it holds: made anew */
	json_array_clear(prefix);
	json_array_append(prefix, json_array_get(msgs, 0));
	body = hd_native__body(p, env, system, prefix, wire);
	assert_int_equal(
	    hd_native__body_make(&kept, p, env, system, prefix, wire), 0);
	assert_string_equal(kept.text, body);
	free(body);
	hd_native__body_dispose(&kept);
	assert_null(kept.text);
	json_decref(prefix);
	json_decref(wire);
	json_decref(req);
	free(env);
}

static void
test_native_wire__bodies_from_kept_pieces(void **state)
{
	json_t *msgs = transcript(), *tools, *none = json_array(), *odd;
	hd_native_provider ps[] = {HD_NATIVE_OPENAI, HD_NATIVE_ANTHROPIC};
	size_t k;

	(void)state;
	tools = json_loads("[{\"name\":\"task_claim\",\"description\":\"Claim\","
			   "\"input_schema\":{\"type\":\"object\"}}]",
	    0, NULL);
	/* a run of results first and last, an unknown role inside a run,
	 * text needing escapes */
	odd = json_loads(
	    "[{\"role\":\"tool\",\"id\":\"a\",\"text\":\"x\"},"
	    "{\"role\":\"user\",\"text\":\"q \\\"\\u00e9\\n\\u2028\"},"
	    "{\"role\":\"assistant\",\"text\":\"\"},"
	    "{\"role\":\"tool\",\"id\":\"b\",\"text\":\"y\"},"
	    "{\"role\":\"system-ish\",\"text\":\"z\"},"
	    "{\"role\":\"tool\",\"id\":\"c\",\"text\":\"w\"},"
	    "{\"role\":\"tool\",\"id\":\"d\",\"text\":\"v\","
	    "\"is_error\":true}]",
	    0, NULL);
	assert_non_null(odd);
	for (k = 0; k < 2; k++) {
		body_matches(ps[k], "be brief", msgs, tools);
		body_matches(ps[k], NULL, msgs, NULL);
		body_matches(ps[k], "", msgs, none);
		body_matches(ps[k], "sys", odd, tools);
		body_matches(ps[k], NULL, none, tools);
	}
	json_decref(odd);
	json_decref(none);
	json_decref(tools);
	json_decref(msgs);
}

static void
test_native_wire__error_bodies(void **state)
{
	static const struct {
		const char *body;
		const char *want;
	} cases[] = {
	    {"{\"error\":{\"message\":\"Incorrect API key\"}}",
		"Incorrect API key"},
	    {"{\"type\":\"error\",\"error\":{\"type\":\"x\",\"message\":"
	     "\"invalid x-api-key\"}}",
		"invalid x-api-key"},
	    {"{\"error\":\"model not found\"}", "model not found"},
	    {"{\"message\":\"rate limited\"}", "rate limited"},
	    {"<html>502 Bad Gateway</html>\nmore", "<html>502 Bad Gateway</html>"},
	};
	size_t i;
	char *m;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = hd_native__error_message(
		    cases[i].body, strlen(cases[i].body));
		assert_string_equal(m, cases[i].want);
		free(m);
	}
	assert_null(hd_native__error_message("", 0));
}

/* hd_native__dump gives json_dumps's bytes whether they fit the
 * caller's buffer (no allocation), fit it but for the byte of room a
 * caller keeps, or do not (a buffer of their own, with that byte). */
static void
test_native_wire__dump_in_and_past_the_buffer(void **state)
{
	json_t *v = json_pack("{s:s, s:[i, b], s:s}", "role", "tool", "n", 1,
	    0, "text", "caf\xc3\xa9 \"quoted\"\n\x01");
	char *want = json_dumps(v, JSON_COMPACT), buf[256], *heap, *s;
	size_t n = strlen(want), len, size;

	(void)state;
	for (size = 0; size <= n + 1; size++) {
		memset(buf, 'x', sizeof(buf));
		s = hd_native__dump(v, buf, size, &len, &heap);
		assert_non_null(s);
		assert_int_equal(len, n);
		assert_memory_equal(s, want, n);
		if (size >= n) {
			assert_ptr_equal(s, buf);
			assert_null(heap);
			assert_int_equal(buf[n], 'x'); /* nothing past it */
		} else {
			assert_ptr_equal(s, heap);
			s[n] = '\n'; /* the byte of room past the text */
		}
		free(heap);
	}
	free(want);
	json_decref(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_native_wire__sse_framing_in_any_split),
	    cmocka_unit_test(test_native_wire__an_oversized_event_is_dropped),
	    cmocka_unit_test(test_native_wire__anthropic_text_tools_usage),
	    cmocka_unit_test(test_native_wire__anthropic_error_and_cut),
	    cmocka_unit_test(test_native_wire__openai_text_tools_usage),
	    cmocka_unit_test(test_native_wire__openai_error_in_stream),
	    cmocka_unit_test(test_native_wire__requests),
	    cmocka_unit_test(test_native_wire__bodies_from_kept_pieces),
	    cmocka_unit_test(test_native_wire__error_bodies),
	    cmocka_unit_test(test_native_wire__dump_in_and_past_the_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
