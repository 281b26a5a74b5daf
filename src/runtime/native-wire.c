/*
 * native-wire.c -- the native runtime's wire formats: SSE framing, the
 * request bodies of the two provider APIs (Anthropic Messages, OpenAI
 * Chat Completions) and the parsers of their streamed replies. No I/O:
 * native.c sends and receives; this file turns bytes into a reply.
 *  (1) SSE is parsed here byte by byte (the line protocol of the HTML
 *      standard's text/event-stream): lines end in \n, \r\n or \r, a
 *      blank line dispatches, an unterminated last event is dropped, so a
 *      cut stream never yields half an event. An event's data is capped
 *      (HD_SSE_EVENT_MAX); a longer one is dropped and noted.
 *  (2) Every event's data is parsed whole by Jansson; nothing here reads
 *      JSON by hand. An event that is not JSON of a known shape is
 *      counted (malformed) and skipped; the caller decides what that
 *      means for the turn.
 *  (3) A reply is finished only by the provider's own end: Anthropic's
 *      message_stop, OpenAI's `data: [DONE]` or a choice's
 *      finish_reason. Without it the stream was cut (native.c says so).
 *  (4) Tool calls are assembled from their streamed pieces by index and
 *      kept with their arguments as the model wrote them (a string):
 *      whether they are valid JSON is the tool call's business, answered
 *      to the model as a tool error (native.c), never a parse failure
 *      here.
 *  (5) Usage: Anthropic's input_tokens exclude cached reads, so
 *      cache_read_input_tokens is added to make input count every input
 *      token (price.c's convention); OpenAI's prompt_tokens already do.
 *  (6) A request body is also made from kept pieces, so a turn resending
 *      a long history does not build and serialise it again for every
 *      model call: each neutral message's wire form is serialised once
 *      by Jansson (hd_native__wire: the message, or for Anthropic a tool
 *      result's block) and hd_native__body joins those serialisations
 *      with the rest of the body (hd_native__envelope, serialised by
 *      Jansson without its braces: JSON_EMBED), copied once into one
 *      allocation of the body's exact size (the join is run twice: to
 *      count, then to copy). A body is kept with where its messages end
 *      and the join's state there (hd_native_body), so a turn's next
 *      model call, whose messages are the last call's and those added
 *      since, extends it in place: only the new messages and the close
 *      are written again. Only the joining is written here: the
 *      messages array's brackets and commas, and the user message that
 *      holds a run of Anthropic tool results. The body
 *      parses to exactly hd_native__request's (the unit tests and the
 *      fuzz target check it), its keys in another order.
 * Callers: native.c, native-transcript.c;
 * tests/unit/runtime/test-native-wire.c;
 * tests/fuzz/fuzz-native-stream.c.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>

#include "native.h"

/* ---- SSE (1) ---- */

void
hd_sse_init(hd_sse *s, hd_sse_fn fn, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->line = (hd_buf)HD_BUF_INIT(HD_SSE_EVENT_MAX + 64);
	s->data = (hd_buf)HD_BUF_INIT(HD_SSE_EVENT_MAX + 64);
	s->fn = fn;
	s->ctx = ctx;
}

void
hd_sse_dispose(hd_sse *s)
{
	hd_buf_dispose(&s->line);
	hd_buf_dispose(&s->data);
}

static void
sse_reset_event(hd_sse *s)
{
	hd_buf_reset(&s->data);
	s->event[0] = '\0';
	s->have_data = 0;
	s->over = 0;
}

static void
sse_line(hd_sse *s, const char *line, size_t len)
{
	const char *colon, *value;
	size_t flen, vlen;

	if (len == 0) { /* dispatch */
		if (s->have_data && !s->over && !hd_buf_failed(&s->data) &&
		    s->fn != NULL)
			s->fn(s->ctx, s->event, hd_buf_cstr(&s->data),
			    s->data.len);
		else if (s->have_data)
			s->cut = 1;
		sse_reset_event(s);
		return;
	}
	if (line[0] == ':')
		return;
	colon = memchr(line, ':', len);
	flen = colon != NULL ? (size_t)(colon - line) : len;
	value = colon != NULL ? colon + 1 : line + len;
	vlen = len - (size_t)(value - line);
	if (vlen > 0 && value[0] == ' ') {
		value++;
		vlen--;
	}
	if (flen == 4 && memcmp(line, "data", 4) == 0) {
		if (s->have_data)
			hd_buf_putc(&s->data, '\n');
		if (s->data.len + vlen > HD_SSE_EVENT_MAX)
			s->cut = s->over = 1;
		else
			hd_buf_put(&s->data, value, vlen);
		s->have_data = 1;
	} else if (flen == 5 && memcmp(line, "event", 5) == 0) {
		if (vlen >= sizeof(s->event))
			vlen = sizeof(s->event) - 1;
		memcpy(s->event, value, vlen);
		s->event[vlen] = '\0';
	}
}

void
hd_sse_feed(hd_sse *s, const char *data, size_t n)
{
	size_t i, start = 0;

	for (i = 0; i < n; i++) {
		char c = data[i];

		if (c != '\n' && c != '\r')
			continue;
		if (c == '\n' && s->cr && i == start && s->line.len == 0) {
			/* the \n of a \r\n whose \r ended the line */
			s->cr = 0;
			start = i + 1;
			continue;
		}
		hd_buf_put(&s->line, data + start, i - start);
		sse_line(s, hd_buf_cstr(&s->line), s->line.len);
		hd_buf_reset(&s->line);
		s->cr = c == '\r';
		start = i + 1;
	}
	if (start < n) {
		s->cr = 0;
		if (s->line.len + (n - start) > HD_SSE_EVENT_MAX) {
			s->cut = s->over = 1; /* a runaway line: drop it */
			hd_buf_reset(&s->line);
		} else
			hd_buf_put(&s->line, data + start, n - start);
	}
}

/* ---- requests ---- */

const char *
hd_native__provider_name(hd_native_provider p)
{
	return p == HD_NATIVE_ANTHROPIC ? "anthropic" : "openai";
}

static const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* A call's arguments as an object for Anthropic's tool_use.input: the
 * model's own when they parse as an object, else {} (the tool result
 * already told it they were not). */
static json_t *
args_object(const char *args)
{
	json_t *j = json_loads(args, JSON_DECODE_ANY, NULL);

	if (json_is_object(j))
		return j;
	json_decref(j);
	return json_object();
}

/* One neutral message as an OpenAI message; NULL for an unknown role. */
static json_t *
openai_message(const json_t *m)
{
	const char *role = jstr(m, "role");
	json_t *o, *calls, *c;
	const json_t *mc;
	size_t k;

	if (strcmp(role, "user") == 0)
		return json_pack(
		    "{s:s, s:s}", "role", "user", "content", jstr(m, "text"));
	if (strcmp(role, "tool") == 0)
		return json_pack("{s:s, s:s, s:s}", "role", "tool",
		    "tool_call_id", jstr(m, "id"), "content", jstr(m, "text"));
	if (strcmp(role, "assistant") != 0)
		return NULL;
	o = json_pack("{s:s}", "role", "assistant");
	mc = json_object_get(m, "calls");
	json_object_set_new(o, "content",
	    jstr(m, "text")[0] ? json_string(jstr(m, "text")) : json_null());
	if (json_array_size(mc) > 0) {
		calls = json_array();
		json_array_foreach (mc, k, c)
			json_array_append_new(calls,
			    json_pack("{s:s, s:s, s:{s:s, s:s}}", "id",
				jstr(c, "id"), "type", "function", "function",
				"name", jstr(c, "name"), "arguments",
				jstr(c, "args")));
		json_object_set_new(o, "tool_calls", calls);
	}
	return o;
}

static json_t *
openai_system(const char *system)
{
	return json_pack("{s:s, s:s}", "role", "system", "content", system);
}

static json_t *
openai_messages(const char *system, const json_t *messages)
{
	json_t *out = json_array(), *m, *o;
	size_t i;

	if (system != NULL && system[0] != '\0')
		json_array_append_new(out, openai_system(system));
	json_array_foreach (messages, i, m)
		if ((o = openai_message(m)) != NULL)
			json_array_append_new(out, o);
	return out;
}

/* One neutral message for Anthropic: a user or assistant message, or a
 * tool result's tool_result block (consecutive ones go in one user
 * message); NULL for an unknown role. */
static json_t *
anthropic_message(const json_t *m)
{
	const char *role = jstr(m, "role");
	json_t *blocks, *c;
	size_t k;

	if (strcmp(role, "tool") == 0)
		return json_pack("{s:s, s:s, s:s, s:b}", "type", "tool_result",
		    "tool_use_id", jstr(m, "id"), "content", jstr(m, "text"),
		    "is_error", json_is_true(json_object_get(m, "is_error")));
	if (strcmp(role, "user") == 0)
		return json_pack(
		    "{s:s, s:s}", "role", "user", "content", jstr(m, "text"));
	if (strcmp(role, "assistant") != 0)
		return NULL;
	blocks = json_array();
	if (jstr(m, "text")[0] != '\0')
		json_array_append_new(blocks, json_pack("{s:s, s:s}", "type",
						  "text", "text", jstr(m, "text")));
	json_array_foreach (json_object_get(m, "calls"), k, c)
		json_array_append_new(blocks,
		    json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use", "id",
			jstr(c, "id"), "name", jstr(c, "name"), "input",
			args_object(jstr(c, "args"))));
	if (json_array_size(blocks) == 0)
		json_array_append_new(blocks, json_pack("{s:s, s:s}", "type",
						  "text", "text", "(no reply)"));
	return json_pack("{s:s, s:o}", "role", "assistant", "content", blocks);
}

static json_t *
anthropic_messages(const json_t *messages)
{
	json_t *out = json_array(), *m, *o, *results = NULL;
	size_t i;

	json_array_foreach (messages, i, m) {
		int tool = strcmp(jstr(m, "role"), "tool") == 0;

		o = anthropic_message(m);
		if (tool && results == NULL) { /* a run of results begins */
			results = json_array();
			json_array_append_new(out, json_pack("{s:s, s:o}",
						       "role", "user",
						       "content", results));
		}
		if (!tool)
			results = NULL;
		if (o != NULL)
			json_array_append_new(tool ? results : out, o);
	}
	return out;
}

json_t *
hd_native__request(hd_native_provider p, const char *model,
    const char *system, const json_t *messages, const json_t *tools)
{
	json_t *body = json_object(), *t, *list = NULL;
	size_t i;

	json_object_set_new(body, "model", json_string(model ? model : ""));
	if (p == HD_NATIVE_ANTHROPIC) {
		json_object_set_new(body, "max_tokens", json_integer(8192));
		if (system != NULL && system[0] != '\0')
			json_object_set_new(body, "system", json_string(system));
		json_object_set_new(
		    body, "messages", anthropic_messages(messages));
		if (json_array_size(tools) > 0) {
			list = json_array();
			json_array_foreach (tools, i, t)
				json_array_append_new(list,
				    json_pack("{s:s, s:s, s:O}", "name",
					jstr(t, "name"), "description",
					jstr(t, "description"), "input_schema",
					json_object_get(t, "input_schema")));
		}
	} else {
		json_object_set_new(
		    body, "messages", openai_messages(system, messages));
		json_object_set_new(body, "stream_options",
		    json_pack("{s:b}", "include_usage", 1));
		if (json_array_size(tools) > 0) {
			list = json_array();
			json_array_foreach (tools, i, t)
				json_array_append_new(list,
				    json_pack("{s:s, s:{s:s, s:s, s:O}}", "type",
					"function", "function", "name",
					jstr(t, "name"), "description",
					jstr(t, "description"), "parameters",
					json_object_get(t, "input_schema")));
		}
	}
	if (list != NULL)
		json_object_set_new(body, "tools", list);
	json_object_set_new(body, "stream", json_true());
	return body;
}

/* ---- request bodies from kept fragments (6) ---- */

char *
hd_native__dump(
    const json_t *v, char *buf, size_t size, size_t *len, char **heap)
{
	size_t n = json_dumpb(v, buf, size, JSON_COMPACT);

	*heap = NULL;
	*len = n;
	if (n == 0)
		return NULL;
	if (n <= size)
		return buf;
	/* too long for buf: once more, into a buffer of its size and one
	 * byte of room past it */
	if ((*heap = malloc(n + 1)) == NULL ||
	    json_dumpb(v, *heap, n, JSON_COMPACT) != n) {
		free(*heap);
		*heap = NULL;
		return NULL;
	}
	return *heap;
}

json_t *
hd_native__wire(hd_native_provider p, const json_t *m)
{
	json_t *o = p == HD_NATIVE_ANTHROPIC ? anthropic_message(m)
					     : openai_message(m);
	json_t *out;
	char buf[2048], *heap;
	const char *s;
	size_t len;

	if (o == NULL)
		return json_string(""); /* an unknown role: nothing sent */
	s = hd_native__dump(o, buf, sizeof(buf), &len, &heap);
	json_decref(o);
	if (s == NULL)
		return NULL;
	out = json_stringn_nocheck(s, len);
	free(heap);
	return out;
}

char *
hd_native__envelope(hd_native_provider p, const char *model,
    const char *system, const json_t *tools)
{
	json_t *none = json_array(), *r;
	char *s = NULL;

	r = hd_native__request(p, model, system, none, tools);
	json_decref(none);
	if (r != NULL && json_object_del(r, "messages") == 0)
		s = json_dumps(r, JSON_COMPACT | JSON_EMBED);
	json_decref(r);
	return s;
}

/* The body's bytes, in order, appended to out (len the bytes so far):
 * with out NULL only counted. Each part is run twice, once to size the
 * body and once to copy it, so the layout is written once. */
typedef struct body_out {
	char *out;
	size_t len;
} body_out;

static void
body_put(body_out *b, const char *s, size_t n)
{
	if (b->out != NULL)
		memcpy(b->out + b->len, s, n);
	b->len += n;
}

#define BODY_LIT(b, lit) body_put((b), (lit), sizeof(lit) - 1)

/* The messages from..n-1, their pieces made, after those before them:
 * js the join's state there, moved past them. */
static void
body_msgs(body_out *b, hd_native_provider p, const json_t *messages,
    const json_t *wire, size_t from, hd_native_join *js)
{
	size_t i, n = json_array_size(messages);
	const json_t *f;

	for (i = from; i < n; i++) {
		int tool = p == HD_NATIVE_ANTHROPIC &&
			   strcmp(jstr(json_array_get(messages, i), "role"),
			       "tool") == 0;

		f = json_array_get(wire, i);
		if (tool) { /* Anthropic: a run of results, one user message */
			if (!js->run) {
				if (!js->first)
					BODY_LIT(b, ",");
				BODY_LIT(b, "{\"role\":\"user\",\"content\":[");
				js->run = 1;
				js->first = 0;
				js->block_first = 1;
			}
			if (!js->block_first)
				BODY_LIT(b, ",");
			body_put(b, json_string_value(f), json_string_length(f));
			js->block_first = 0;
			continue;
		}
		if (js->run) {
			BODY_LIT(b, "]}");
			js->run = 0;
		}
		if (json_string_length(f) == 0)
			continue;
		if (!js->first)
			BODY_LIT(b, ",");
		body_put(b, json_string_value(f), json_string_length(f));
		js->first = 0;
	}
}

/* What follows the messages: an open run of results closed, the array
 * closed, the envelope. */
static void
body_close(body_out *b, const char *envelope, const hd_native_join *js)
{
	if (js->run)
		BODY_LIT(b, "]}");
	BODY_LIT(b, "],");
	body_put(b, envelope, strlen(envelope));
	BODY_LIT(b, "}");
}

void
hd_native__body_dispose(hd_native_body *b)
{
	free(b->text);
	memset(b, 0, sizeof(*b));
}

/* The body's opening: the messages array opened, OpenAI's system
 * message (sys, serialised, or NULL) first in it. */
static void
body_open(body_out *b, const char *sys)
{
	BODY_LIT(b, "{\"messages\":[");
	if (sys != NULL)
		body_put(b, sys, strlen(sys));
}

int
hd_native__body_make(hd_native_body *b, hd_native_provider p,
    const char *envelope, const char *system, const json_t *messages,
    json_t *wire)
{
	size_t i, n = json_array_size(messages);
	body_out o = {NULL, 0};
	hd_native_join js;
	char *sys = NULL, *text;
	int fresh = b->text == NULL || b->n > n;
	json_t *f;

	while (json_array_size(wire) < n)
		if (json_array_append_new(wire, json_null()) < 0)
			goto fail;
	/* the pieces not made yet of the messages it writes: all when
	 * made anew, else those it does not hold yet */
	for (i = fresh ? 0 : b->n; i < n; i++)
		if (!json_is_string(json_array_get(wire, i)) &&
		    ((f = hd_native__wire(p, json_array_get(messages, i))) ==
			    NULL ||
			json_array_set_new(wire, i, f) < 0))
			goto fail;
	if (fresh) { /* made anew: its opening */
		hd_native__body_dispose(b);
		if (p == HD_NATIVE_OPENAI && system != NULL &&
		    system[0] != '\0') {
			f = openai_system(system);
			sys = f != NULL ? json_dumps(f, JSON_COMPACT) : NULL;
			json_decref(f);
			if (sys == NULL)
				goto fail;
		}
		body_open(&o, sys);
		b->end = o.len;
		b->join.first = sys == NULL;
		b->join.run = 0;
		b->join.block_first = 1;
	}
	/* counted: the messages it does not hold yet, then the close */
	o.len = b->end;
	js = b->join;
	body_msgs(&o, p, messages, wire, b->n, &js);
	body_close(&o, envelope, &js);
	if ((text = realloc(b->text, o.len + 1)) == NULL)
		goto fail;
	b->text = text;
	/* copied: the opening when new, then from where its messages end */
	o.out = b->text;
	o.len = 0;
	if (fresh)
		body_open(&o, sys);
	o.len = b->end;
	js = b->join;
	body_msgs(&o, p, messages, wire, b->n, &js);
	b->end = o.len;
	b->join = js;
	b->n = n;
	body_close(&o, envelope, &js);
	b->text[o.len] = '\0';
	b->len = o.len;
	free(sys);
	return 0;
fail:
	free(sys);
	hd_native__body_dispose(b);
	return -1;
}

char *
hd_native__body(hd_native_provider p, const char *envelope,
    const char *system, const json_t *messages, json_t *wire)
{
	hd_native_body b;

	memset(&b, 0, sizeof(b));
	if (hd_native__body_make(&b, p, envelope, system, messages, wire) < 0)
		return NULL;
	return b.text;
}

/* ---- replies ---- */

static void
stream_sse(void *ctx, const char *event, const char *data, size_t len)
{
	hd_native__stream_event(ctx, event, data, len);
}

void
hd_native__stream_init(hd_native_stream *ns, hd_native_provider p,
    hd_native_text_fn on_text, void *ctx)
{
	memset(ns, 0, sizeof(*ns));
	ns->provider = p;
	ns->on_text = on_text;
	ns->ctx = ctx;
	ns->r.text = (hd_buf)HD_BUF_INIT(0);
	ns->r.calls = json_array();
	ns->partial = json_object();
	hd_sse_init(&ns->sse, stream_sse, ns);
}

void
hd_native__stream_dispose(hd_native_stream *ns)
{
	hd_sse_dispose(&ns->sse);
	hd_buf_dispose(&ns->r.text);
	json_decref(ns->r.calls);
	json_decref(ns->partial);
	free(ns->r.stop);
	free(ns->r.error);
	memset(ns, 0, sizeof(*ns));
}

void
hd_native__stream_feed(hd_native_stream *ns, const char *data, size_t n)
{
	hd_sse_feed(&ns->sse, data, n);
}

static void
set_str(char **slot, const char *s)
{
	free(*slot);
	*slot = s != NULL ? strdup(s) : NULL;
}

static void
add_text(hd_native_stream *ns, const char *text)
{
	size_t n = text != NULL ? strlen(text) : 0;

	if (n == 0)
		return;
	hd_buf_put(&ns->r.text, text, n);
	if (ns->on_text != NULL)
		ns->on_text(ns->ctx, text, n);
}

/* The call being streamed at index key, made when absent. */
static json_t *
partial_at(hd_native_stream *ns, const char *key)
{
	json_t *c = json_object_get(ns->partial, key);

	if (c == NULL) {
		c = json_pack("{s:s, s:s, s:s}", "id", "", "name", "", "args",
		    "");
		json_object_set_new(ns->partial, key, c);
	}
	return c;
}

static void
append_field(json_t *c, const char *key, const char *more)
{
	hd_buf b = HD_BUF_INIT(0);

	if (more == NULL || more[0] == '\0')
		return;
	hd_buf_puts(&b, jstr(c, key));
	hd_buf_puts(&b, more);
	if (!hd_buf_failed(&b))
		json_object_set_new(c, key, json_string(hd_buf_cstr(&b)));
	hd_buf_dispose(&b);
}

/* A finished call into r.calls (arguments "" become "{}": a call
 * without arguments). */
static void
close_call(hd_native_stream *ns, const char *key)
{
	json_t *c = json_object_get(ns->partial, key);

	if (c == NULL)
		return;
	if (jstr(c, "args")[0] == '\0')
		json_object_set_new(c, "args", json_string("{}"));
	json_array_append(ns->r.calls, c);
	json_object_del(ns->partial, key);
}

static void
usage_anthropic(hd_native_reply *r, const json_t *u)
{
	const json_t *v;

	if (!json_is_object(u))
		return;
	r->have_usage = 1;
	if ((v = json_object_get(u, "input_tokens")) != NULL &&
	    json_is_integer(v))
		r->input = json_integer_value(v);
	if ((v = json_object_get(u, "cache_read_input_tokens")) != NULL &&
	    json_is_integer(v)) { /* (5) */
		r->cached = json_integer_value(v);
		r->input += r->cached;
	}
	if ((v = json_object_get(u, "output_tokens")) != NULL &&
	    json_is_integer(v))
		r->output = json_integer_value(v);
}

static int
anthropic_event(hd_native_stream *ns, const json_t *j)
{
	const char *type = json_string_value(json_object_get(j, "type"));
	const json_t *blk, *delta;
	char key[32];

	if (type == NULL)
		return -1;
	snprintf(key, sizeof(key), "%lld",
	    (long long)json_integer_value(json_object_get(j, "index")));
	if (strcmp(type, "message_start") == 0)
		usage_anthropic(&ns->r,
		    json_object_get(json_object_get(j, "message"), "usage"));
	else if (strcmp(type, "content_block_start") == 0) {
		blk = json_object_get(j, "content_block");
		if (strcmp(jstr(blk, "type"), "tool_use") == 0) {
			json_t *c = partial_at(ns, key);

			json_object_set_new(
			    c, "id", json_string(jstr(blk, "id")));
			json_object_set_new(
			    c, "name", json_string(jstr(blk, "name")));
		} else if (strcmp(jstr(blk, "type"), "text") == 0)
			add_text(ns, jstr(blk, "text"));
	} else if (strcmp(type, "content_block_delta") == 0) {
		delta = json_object_get(j, "delta");
		if (strcmp(jstr(delta, "type"), "text_delta") == 0)
			add_text(ns, jstr(delta, "text"));
		else if (strcmp(jstr(delta, "type"), "input_json_delta") == 0)
			append_field(partial_at(ns, key), "args",
			    jstr(delta, "partial_json"));
	} else if (strcmp(type, "content_block_stop") == 0)
		close_call(ns, key);
	else if (strcmp(type, "message_delta") == 0) {
		const json_t *u = json_object_get(j, "usage");
		const json_t *o = json_object_get(u, "output_tokens");

		if (json_is_integer(o)) {
			ns->r.output = json_integer_value(o);
			ns->r.have_usage = 1;
		}
		if (json_string_value(json_object_get(
			json_object_get(j, "delta"), "stop_reason")) != NULL)
			set_str(&ns->r.stop,
			    jstr(json_object_get(j, "delta"), "stop_reason"));
	} else if (strcmp(type, "message_stop") == 0)
		ns->r.finished = 1;
	else if (strcmp(type, "error") == 0) {
		const json_t *e = json_object_get(j, "error");

		set_str(&ns->r.error,
		    jstr(e, "message")[0] ? jstr(e, "message")
					  : "the stream reported an error");
	} else if (strcmp(type, "ping") != 0)
		return -1;
	return 0;
}

static int
openai_event(hd_native_stream *ns, const json_t *j)
{
	const json_t *choices = json_object_get(j, "choices"), *ch, *delta,
		     *tc, *u, *e;
	size_t i, k;
	char key[32];

	if ((e = json_object_get(j, "error")) != NULL) {
		set_str(&ns->r.error, json_is_string(e) ? json_string_value(e)
				      : jstr(e, "message")[0]
					  ? jstr(e, "message")
					  : "the stream reported an error");
		return 0;
	}
	if (!json_is_array(choices))
		return -1;
	if (json_is_object(u = json_object_get(j, "usage"))) {
		ns->r.have_usage = 1;
		ns->r.input = json_integer_value(
		    json_object_get(u, "prompt_tokens"));
		ns->r.output = json_integer_value(
		    json_object_get(u, "completion_tokens"));
		ns->r.cached = json_integer_value(json_object_get(
		    json_object_get(u, "prompt_tokens_details"),
		    "cached_tokens"));
	}
	json_array_foreach (choices, i, ch) {
		delta = json_object_get(ch, "delta");
		add_text(ns, jstr(delta, "content"));
		json_array_foreach (json_object_get(delta, "tool_calls"), k,
		    tc) {
			const json_t *idx = json_object_get(tc, "index");
			const json_t *fn = json_object_get(tc, "function");
			json_t *c;

			snprintf(key, sizeof(key), "%06lld",
			    json_is_integer(idx)
				? (long long)json_integer_value(idx)
				: (long long)k);
			c = partial_at(ns, key);
			if (jstr(tc, "id")[0] != '\0')
				json_object_set_new(
				    c, "id", json_string(jstr(tc, "id")));
			append_field(c, "name", jstr(fn, "name"));
			append_field(c, "args", jstr(fn, "arguments"));
		}
		if (json_string_value(json_object_get(ch, "finish_reason")) !=
		    NULL) {
			set_str(&ns->r.stop, jstr(ch, "finish_reason"));
			ns->r.finished = 1;
		}
	}
	return 0;
}

int
hd_native__stream_event(
    hd_native_stream *ns, const char *event, const char *data, size_t len)
{
	json_t *j;
	int rc;

	(void)event; /* both providers name the type in the data too */
	if (ns->provider == HD_NATIVE_OPENAI && len == 6 &&
	    memcmp(data, "[DONE]", 6) == 0) {
		ns->r.finished = 1;
		return 0;
	}
	if ((j = json_loadb(data, len, 0, NULL)) == NULL ||
	    !json_is_object(j)) {
		json_decref(j);
		ns->r.malformed++;
		return -1;
	}
	rc = ns->provider == HD_NATIVE_ANTHROPIC ? anthropic_event(ns, j)
						 : openai_event(ns, j);
	json_decref(j);
	if (rc < 0)
		ns->r.malformed++;
	return rc;
}

void
hd_native__stream_end(hd_native_stream *ns)
{
	const char *key;
	json_t *v, *keys = json_array();
	size_t i;

	/* OpenAI's calls close only at the end; in index order (the keys
	 * are zero-padded) */
	json_object_foreach (ns->partial, key, v)
		json_array_append_new(keys, json_string(key));
	for (i = 0; i < json_array_size(keys); i++) {
		size_t j, best = i;

		for (j = i + 1; j < json_array_size(keys); j++)
			if (strcmp(json_string_value(json_array_get(keys, j)),
				json_string_value(
				    json_array_get(keys, best))) < 0)
				best = j;
		if (best != i) {
			json_t *a = json_incref(json_array_get(keys, i));

			json_array_set(keys, i, json_array_get(keys, best));
			json_array_set_new(keys, best, a);
		}
		close_call(ns, json_string_value(json_array_get(keys, i)));
	}
	json_decref(keys);
}

char *
hd_native__error_message(const char *body, size_t len)
{
	json_t *j;
	const json_t *e;
	const char *msg = NULL;
	char *out = NULL;
	size_t n;

	if (body == NULL || len == 0)
		return NULL;
	if ((j = json_loadb(body, len, 0, NULL)) != NULL) {
		e = json_object_get(j, "error");
		if (json_is_string(e))
			msg = json_string_value(e);
		else if (json_is_string(json_object_get(e, "message")))
			msg = json_string_value(json_object_get(e, "message"));
		else if (json_is_string(json_object_get(j, "message")))
			msg = json_string_value(json_object_get(j, "message"));
		if (msg != NULL)
			out = strdup(msg);
		json_decref(j);
		if (out != NULL)
			return out;
	}
	for (n = 0; n < len && n < 300 && body[n] != '\n' && body[n] != '\r';
	     n++)
		;
	while (n > 0 && n < len && ((unsigned char)body[n] & 0xc0) == 0x80)
		n--; /* on a character boundary */
	if ((out = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(out, body, n);
	out[n] = '\0';
	return out;
}
