/*
 * fuzz-native-stream.c -- the native runtime's reply parsers
 * (src/runtime/native-wire.c): SSE framing and either provider's stream
 * (Anthropic Messages, OpenAI Chat Completions) on any body arriving in
 * pieces of any size. The first input byte picks the provider (its low
 * bit) and how the body is cut; the rest is the body. For every input:
 *  (1) the pieces the body came in change nothing: the text, the tool
 *      calls, the usage, the end of reply, the stream's error and the
 *      malformed count equal those of the whole body fed at once;
 *  (2) the text deltas handed over, joined, are the reply's text;
 *  (3) every tool call has a string id, name and args;
 *  (4) the next request, made from a transcript holding that reply, is
 *      a JSON object that dumps (whatever the model sent), and the body
 *      joined from kept pieces parses to exactly it; a body kept for its
 *      first message and extended by the rest is that body, byte for
 *      byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/native.h"

static void
on_text(void *ctx, const char *text, size_t len)
{
	hd_buf_put(ctx, text, len);
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	       (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_native_stream whole, cut;
	hd_native_provider p;
	hd_buf deltas = HD_BUF_INIT(0);
	uint8_t first = 0;
	size_t off = 0, n, step, i;
	json_t *msgs, *m, *req, *c;
	char *s;

	if (size > 0) {
		first = data[0];
		data++;
		size--;
	}
	p = first & 1 ? HD_NATIVE_ANTHROPIC : HD_NATIVE_OPENAI;
	hd_native__stream_init(&whole, p, NULL, NULL);
	hd_native__stream_feed(&whole, (const char *)data, size);
	hd_native__stream_end(&whole);
	hd_native__stream_init(&cut, p, on_text, &deltas);
	step = first >> 1;
	while (off < size) {
		n = fuzz_piece(&step, size - off);
		hd_native__stream_feed(&cut, (const char *)data + off, n);
		off += n;
	}
	hd_native__stream_end(&cut);
	/* (1) */
	check(whole.r.text.len == cut.r.text.len &&
		  memcmp(hd_buf_cstr(&whole.r.text), hd_buf_cstr(&cut.r.text),
		      cut.r.text.len) == 0,
	    "the text depends on the pieces");
	check(json_equal(whole.r.calls, cut.r.calls),
	    "the tool calls depend on the pieces");
	check(whole.r.input == cut.r.input && whole.r.output == cut.r.output &&
		  whole.r.cached == cut.r.cached &&
		  whole.r.have_usage == cut.r.have_usage,
	    "the usage depends on the pieces");
	check(whole.r.finished == cut.r.finished &&
		  same_str(whole.r.stop, cut.r.stop) &&
		  same_str(whole.r.error, cut.r.error) &&
		  whole.r.malformed == cut.r.malformed,
	    "the end of reply depends on the pieces");
	/* (2) */
	check(deltas.len == cut.r.text.len &&
		  memcmp(hd_buf_cstr(&deltas), hd_buf_cstr(&cut.r.text),
		      deltas.len) == 0,
	    "the deltas are not the text");
	/* (3) */
	json_array_foreach (cut.r.calls, i, c)
		check(json_is_string(json_object_get(c, "id")) &&
			  json_is_string(json_object_get(c, "name")) &&
			  json_is_string(json_object_get(c, "args")),
		    "a tool call without a string id, name or args");
	/* (4) */
	msgs = json_array();
	json_array_append_new(
	    msgs, json_pack("{s:s, s:s}", "role", "user", "text", "go"));
	m = json_pack("{s:s, s:s%}", "role", "assistant", "text",
	    hd_buf_cstr(&cut.r.text), cut.r.text.len);
	if (m == NULL) /* not UTF-8: native.c stores "" then */
		m = json_pack("{s:s, s:s}", "role", "assistant", "text", "");
	json_object_set(m, "calls", cut.r.calls);
	json_array_append_new(msgs, m);
	json_array_foreach (cut.r.calls, i, c)
		json_array_append_new(msgs,
		    json_pack("{s:s, s:O, s:s, s:b}", "role", "tool", "id",
			json_object_get(c, "id"), "text", "ok", "is_error", 0));
	req = hd_native__request(p, "m", "sys", msgs, NULL);
	check(json_is_object(req), "the next request is not an object");
	s = json_dumps(req, JSON_COMPACT);
	check(s != NULL, "the next request does not dump");
	free(s);
	{ /* the same body joined from kept pieces (native-wire.c (6)) */
		char *env = hd_native__envelope(p, "m", "sys", NULL), *body;
		json_t *wire = json_array(), *got;

		check(env != NULL, "no envelope");
		body = hd_native__body(p, env, "sys", msgs, wire);
		check(body != NULL, "no body from pieces");
		got = json_loads(body, JSON_ALLOW_NUL, NULL);
		check(json_equal(got, req),
		    "the body from pieces is not the request");
		{ /* kept for the first message, then extended by the rest */
			json_t *head = json_array(), *w2 = json_array();
			hd_native_body kept;

			memset(&kept, 0, sizeof(kept));
			json_array_append(head, json_array_get(msgs, 0));
			check(hd_native__body_make(&kept, p, env, "sys", head,
				  w2) == 0 &&
				  hd_native__body_make(
				      &kept, p, env, "sys", msgs, w2) == 0,
			    "no kept body");
			check(kept.len == strlen(body) &&
				  strcmp(kept.text, body) == 0,
			    "the extended body is not the body joined anew");
			hd_native__body_dispose(&kept);
			json_decref(head);
			json_decref(w2);
		}
		json_decref(got);
		json_decref(wire);
		free(body);
		free(env);
	}
	json_decref(req);
	json_decref(msgs);
	hd_buf_dispose(&deltas);
	hd_native__stream_dispose(&whole);
	hd_native__stream_dispose(&cut);
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "\x01"
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"
    "{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
    "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"task_claim\"}}\n\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
    "\"input_json_delta\",\"partial_json\":\"{\\\"task_id\\\":1}\"}}\n\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n"
    "data: {\"type\":\"message_stop\"}\n\n",
    "\x03"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
    "\"text_delta\",\"text\":\"hi \\u00e9\"}}\r\n\r\n"
    "event: error\rdata: {\"type\":\"error\",\"error\":{\"message\":\"x\"}}\r\r",
    "\x00"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"On it\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"id\":\"c\",\"function\":{\"name\":\"task_list\",\"arguments\":\"{\"}}]"
    "}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"function\":{\"arguments\":\"}\"}}]},\"finish_reason\":\"tool_calls\"}]"
    "}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":"
    "4}}\n\ndata: [DONE]\n\n",
    "\x02"
    "data: {\"error\":{\"message\":\"overloaded\"}}\n\n: comment\n\ndata: [DONE]",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "\n", "\r", "\r\n", "\n\n", "data: ", "data:", "event: ", ": ",
    "[DONE]", "{\"type\":\"message_start\",\"message\":{\"usage\":{}}}",
    "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":"
    "\"tool_use\",\"id\":\"a\",\"name\":\"b\"}}",
    "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
    "\"input_json_delta\",\"partial_json\":\"{\"}}",
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
    "\"text_delta\",\"text\":\"x\"}}",
    "{\"type\":\"content_block_stop\",\"index\":1}",
    "{\"type\":\"message_stop\"}",
    "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,"
    "\"id\":\"z\",\"function\":{\"name\":\"n\",\"arguments\":\"[\"}}]}}]}",
    "{\"choices\":[{\"delta\":{\"content\":\"\\u0000\"},\"finish_reason\":"
    "\"stop\"}]}",
    "{\"error\":\"e\"}", "\xff", "\xc3\xa9", NULL,
};
