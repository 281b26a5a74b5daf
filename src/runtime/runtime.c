/*
 * runtime.c -- the runtime contract (SPEC 9.1, 9.2): the adapter registry,
 * the integration plan, the emitter every adapter reports through, and the
 * turn drivers hd_runtime_run_turn() and hd_runtime_run(). Owns no table.
 *  (1) A sink sees exactly one done per turn and nothing after it: the
 *      emitter drops whatever follows the first done, and the driver makes
 *      one when the adapter did not (error when run() failed, aborted when
 *      the abort flag is set, else success).
 *  (2) A cost event always precedes done: the runtime's own, or the SPEC
 *      8.2 estimate (price.c) made here from the prompt and the reply.
 *  (3) The reply keeps at most HD_RUNTIME_OUTPUT_MAX bytes, cut on a UTF-8
 *      boundary; the first cut appends HD_RUNTIME_TRUNCATED_NOTE once, and
 *      the sink receives exactly the bytes the result keeps.
 *  (4) hd_runtime_resolve_integration() is pure: the plan depends on the
 *      capabilities alone, never on a runtime's name.
 *  (5) Nothing here is shared between turns, so turns run concurrently on
 *      different threads without locks.
 *  (6) The adapter table is the one list of runtimes. Everything huddle
 *      knows of a runtime is in its adapter's row, from its own file: its
 *      name, its capabilities (hence its class and home), the check of
 *      its runtime_config, its price list, its attach formats, its doctor.
 *      Adding a runtime is that file and one row here; the refusals' list
 *      of names is read from the table, and nothing outside src/runtime
 *      branches on a runtime's name.
 * Callers: engines (conversations, exchanges) and `huddle agent run`;
 * the surfaces for the table and hd_runtime_check_config, which they
 * hand the domain as the check of an agent's runtime (agent.h).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

/* An error message keeps at most this much (a stderr tail is ~4 KiB). */
#define ERROR_MSG_MAX (16 * 1024)

/* (6): the runtimes of this build, one row each, in the order refusals
 * name them; then one spare row, NULL but in tests
 * (hd_runtime__test_adapter), and the end. */
static const hd_runtime_adapter *adapters[] = {
    &hd_runtime__scripted,
    &hd_runtime__exec,
    &hd_runtime__claude,
    &hd_runtime__codex,
    &hd_runtime__native,
    &hd_runtime__hermes,
    &hd_runtime__openclaw,
    NULL,
    NULL,
};

struct hd_runtime_emit {
	const hd_runtime_turn *in;
	hd_runtime_sink sink;
	void *payload;
	hd_buf text; /* the kept reply, (3) */
	int truncated;
	int done;
	hd_done_reason reason;
	char *error;
	char *summary;
	char *native_session_id;
	hd_runtime_cost cost;
	int have_cost;
};

/* ---- names ---- */

const char *
hd_runtime_home_kind_name(hd_home_kind k)
{
	switch (k) {
	case HD_HOME_PERSISTENT: return "persistent";
	case HD_HOME_CONNECTED: return "connected";
	case HD_HOME_EPHEMERAL: break;
	}
	return "ephemeral";
}

const char *
hd_runtime_event_kind_name(hd_runtime_event_kind k)
{
	switch (k) {
	case HD_RT_TEXT_DELTA: return "text_delta";
	case HD_RT_TOOL_CALL: return "tool_call";
	case HD_RT_TOOL_RESULT: return "tool_result";
	case HD_RT_STATUS: return "status";
	case HD_RT_COST: return "cost";
	case HD_RT_ERROR: return "error";
	case HD_RT_DONE: return "done";
	}
	return "unknown";
}

const char *
hd_runtime_done_name(hd_done_reason r)
{
	switch (r) {
	case HD_DONE_SUCCESS: return "success";
	case HD_DONE_MAX_TURNS: return "max_turns";
	case HD_DONE_ABORTED: return "aborted";
	case HD_DONE_ERROR: return "error";
	}
	return "error";
}

void
hd_runtime__timeout_msg(char *out, size_t outlen, int64_t ms)
{
	snprintf(out, outlen, "timed out after %g s", (double)ms / 1000.0);
}

/* ---- the plan (SPEC 9.2) ---- */

hd_runtime_plan
hd_runtime_resolve_integration(const hd_runtime_caps *caps)
{
	hd_runtime_plan p;
	int persistent;

	memset(&p, 0, sizeof(p));
	p.home = HD_HOME_EPHEMERAL;
	p.needs_dir = 1;
	p.huddle_tools = 1;
	/* omitted caps: wrapped-oneshot, ephemeral, nothing kept */
	if (caps == NULL)
		return p;
	p.huddle_tools = caps->huddle_tools != HD_TOOLS_NONE;
	if (caps->runtime_class == HD_RUNTIME_CONNECTED_SUBSTRATE) {
		p.home = HD_HOME_CONNECTED;
		p.needs_dir = 0;
		p.use_gateway_channels =
		    caps->native_channels == HD_CHANNELS_GATEWAY;
		return p;
	}
	persistent = caps->native_home.scope == HD_HOME_SCOPE_PER_IDENTITY &&
		     caps->native_home.persist;
	p.home = persistent ? HD_HOME_PERSISTENT : HD_HOME_EPHEMERAL;
	p.needs_dir = caps->native_home.scope != HD_HOME_SCOPE_NONE;
	/* Preserving native state needs somewhere to keep it: anything else
	 * is a misdeclaration and degrades to the safe default. */
	p.preserve_memory =
	    persistent && caps->native_memory == HD_NATIVE_PRESERVE;
	p.preserve_skills =
	    persistent && caps->native_skills == HD_NATIVE_PRESERVE;
	p.co_run_scheduler = 0;
	return p;
}

/* ---- lookup ---- */

/* Runtimes agents may come to name that this build has no adapter for
 * yet: named as such, not as unknown. */
static const char *const planned[] = {
    "openai", NULL};

/* "scripted, exec, claude-code, codex, native, hermes or openclaw": every adapter, from
 * the table. */
static void
adapter_names(hd_buf *b)
{
	int i;

	for (i = 0; adapters[i] != NULL; i++) {
		if (i > 0)
			hd_buf_puts(b, adapters[i + 1] != NULL ? ", " : " or ");
		hd_buf_puts(b, adapters[i]->name);
	}
}

const hd_runtime_adapter *const *
hd_runtime_adapters(void)
{
	return adapters;
}

void
hd_runtime__test_adapter(const hd_runtime_adapter *rt)
{
	adapters[sizeof(adapters) / sizeof(adapters[0]) - 2] = rt;
}

int
hd_runtime_find(const hd_runtime_adapter **out, const char *name, hd_err *err)
{
	hd_buf names = HD_BUF_INIT(0);
	int i, rc;

	*out = NULL;
	if (name == NULL)
		name = "";
	for (i = 0; adapters[i] != NULL; i++)
		if (strcmp(adapters[i]->name, name) == 0) {
			*out = adapters[i];
			return 0;
		}
	for (i = 0; planned[i] != NULL; i++)
		if (strcmp(planned[i], name) == 0)
			return hd_err_set(err, HD_ENOTFOUND,
			    "runtime \"%s\" is not available in this build yet",
			    name);
	adapter_names(&names);
	rc = hd_err_set(err, HD_EINVAL, "unknown runtime \"%.64s\": use %s",
	    name, hd_buf_cstr(&names));
	hd_buf_dispose(&names);
	return rc;
}

int
hd_runtime_check_config(const char *runtime, const json_t *cfg, hd_err *err)
{
	const hd_runtime_adapter *rt;
	hd_buf names = HD_BUF_INIT(0);
	int rc;

	if (runtime == NULL)
		runtime = HD_AGENT_RUNTIME_DEFAULT;
	/* A name this build has no adapter for, planned or not, is refused
	 * the same way where an agent is written (SPEC 9.4): which runtimes
	 * this build runs is what the user can act on. */
	rc = hd_runtime_find(&rt, runtime, err);
	if (rc == HD_ENOTFOUND || rc == HD_EINVAL) {
		adapter_names(&names);
		rc = hd_err_set(err, HD_EINVAL,
		    "runtime \"%s\" is not available in this build: use %s",
		    runtime, hd_buf_cstr(&names));
		hd_buf_dispose(&names);
	}
	if (rc < 0)
		return rc;
	if (cfg == NULL) /* no config: each runtime's defaults, or its run
			    says what is missing */
		return 0;
	if (!json_is_object(cfg))
		return hd_err_set(
		    err, HD_EINVAL, "runtime_config must be a JSON object");
	return rt->check_config != NULL ? rt->check_config(cfg, err) : 0;
}

/* ---- the emitter ---- */

int
hd_runtime_aborted(const hd_runtime_turn *in)
{
	return in != NULL && in->abort != NULL && atomic_load(in->abort) != 0;
}

static void
deliver(hd_runtime_emit *em, const hd_runtime_event *ev)
{
	if (em->sink != NULL)
		em->sink(ev, em->payload);
}

void
hd_runtime_emit_text(hd_runtime_emit *em, const char *text, size_t len)
{
	hd_runtime_event ev;
	size_t room, cut;

	if (em->done || em->truncated || len == 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_TEXT_DELTA;
	room = HD_RUNTIME_OUTPUT_MAX - em->text.len;
	cut = len <= room ? len : room;
	if (cut < len) /* never split a character at the cap */
		while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
			cut--;
	if (cut > 0) {
		hd_buf_put(&em->text, text, cut);
		ev.text = text;
		ev.len = cut;
		deliver(em, &ev);
	}
	if (cut < len) {
		em->truncated = 1;
		hd_buf_puts(&em->text, HD_RUNTIME_TRUNCATED_NOTE);
		ev.text = HD_RUNTIME_TRUNCATED_NOTE;
		ev.len = strlen(HD_RUNTIME_TRUNCATED_NOTE);
		deliver(em, &ev);
	}
}

void
hd_runtime_emit_reply(hd_runtime_emit *em, const char *text, size_t len)
{
	size_t cut = len;

	if (em->done)
		return;
	hd_buf_reset(&em->text);
	em->truncated = 0;
	if (cut > HD_RUNTIME_OUTPUT_MAX) { /* (3), on a character boundary */
		cut = HD_RUNTIME_OUTPUT_MAX;
		while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
			cut--;
	}
	hd_buf_put(&em->text, text, cut);
	if (cut < len) {
		em->truncated = 1;
		hd_buf_puts(&em->text, HD_RUNTIME_TRUNCATED_NOTE);
	}
}

const char *
hd_runtime_emit_text_so_far(const hd_runtime_emit *em, size_t *len)
{
	if (len != NULL)
		*len = em->text.len;
	return hd_buf_cstr(&em->text);
}

/* 1 when the len bytes at s are one line of valid UTF-8 (no control
 * character), as every status and error is delivered. */
static int
one_clean_line(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return hd_utf8_ok(s, len);
}

void
hd_runtime_emit_status(hd_runtime_emit *em, const char *text)
{
	hd_runtime_event ev;
	char *copy = NULL;
	size_t len;

	if (em->done || text == NULL)
		return;
	len = strlen(text);
	if (!one_clean_line(text, len)) {
		/* a runtime's bytes, quoted: made what a sink may record
		 * (JSON refuses what is not UTF-8) rather than lost there */
		if ((copy = strdup(text)) == NULL)
			return;
		hd_utf8_line(copy);
		text = copy;
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_STATUS;
	ev.text = text;
	ev.len = len;
	deliver(em, &ev);
	free(copy);
}

void
hd_runtime_emit_cost(hd_runtime_emit *em, const hd_runtime_cost *c)
{
	hd_runtime_event ev;

	if (em->done)
		return;
	em->cost.microcents += c->microcents;
	em->cost.input_tokens += c->input_tokens;
	em->cost.output_tokens += c->output_tokens;
	em->cost.usd = (double)em->cost.microcents / 1e8;
	em->cost.estimated |= c->estimated;
	em->have_cost = 1;
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_COST;
	ev.cost = *c;
	deliver(em, &ev);
}

static int
quote_blank(unsigned char c)
{
	return c <= 0x20 || c == 0x7f;
}

size_t
hd_runtime__quote(
    hd_buf *b, const char *s, size_t len, size_t max, unsigned flags)
{
	size_t n = len, cut, i, start = b->len;

	if (s == NULL)
		return 0;
	if (flags & HD_QUOTE_FIRST_LINE)
		for (n = 0; n < len && s[n] != '\n' && s[n] != '\r'; n++)
			;
	while (n > 0 && quote_blank((unsigned char)s[n - 1]))
		n--;
	cut = n;
	if (cut > max) {
		cut = max; /* s[cut], the first byte left out, starts one */
		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	for (i = 0; i < cut; i++)
		hd_buf_putc(b,
		    (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
	if (cut < n && (flags & HD_QUOTE_ELLIPSIS))
		hd_buf_puts(b, "...");
	return b->len - start;
}

void
hd_runtime_emit_error(hd_runtime_emit *em, const char *fmt, ...)
{
	hd_runtime_event ev;
	hd_buf b = HD_BUF_INIT(0);
	va_list ap;
	char *msg;
	size_t len;

	if (em->done)
		return;
	va_start(ap, fmt);
	hd_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if ((msg = hd_buf_detach(&b)) == NULL)
		msg = strdup("out of memory");
	if (msg == NULL)
		return;
	/* one line of valid UTF-8, whatever the bytes a runtime printed:
	 * scrubbed and made one line, then cut (not inside a character) */
	hd_utf8_line(msg);
	len = strlen(msg);
	if (len > ERROR_MSG_MAX)
		msg[len = hd_utf8_cut(msg, ERROR_MSG_MAX)] = '\0';
	while (len > 0 && msg[len - 1] == ' ')
		msg[--len] = '\0';
	free(em->error);
	em->error = msg;
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_ERROR;
	ev.text = msg;
	ev.len = len;
	deliver(em, &ev);
}

void
hd_runtime_emit_done(hd_runtime_emit *em, hd_done_reason reason,
    const char *summary, const char *native_session_id)
{
	hd_runtime_event ev;
	hd_runtime_cost est;

	if (em->done)
		return;
	if (!em->have_cost) { /* (2) */
		const char *p = em->in != NULL ? em->in->prompt : NULL;

		hd_runtime_cost_estimate(&est, p, p ? strlen(p) : 0,
		    hd_buf_cstr(&em->text), em->text.len);
		hd_runtime_emit_cost(em, &est);
	}
	em->done = 1;
	em->reason = reason;
	em->summary = summary ? strdup(summary) : NULL;
	em->native_session_id =
	    native_session_id ? strdup(native_session_id) : NULL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_DONE;
	ev.reason = reason;
	ev.summary = summary;
	ev.native_session_id = native_session_id;
	deliver(em, &ev);
}

void
hd_runtime_emit_event(hd_runtime_emit *em, const hd_runtime_event *ev)
{
	switch (ev->kind) {
	case HD_RT_TEXT_DELTA:
		hd_runtime_emit_text(em, ev->text, ev->len);
		return;
	case HD_RT_STATUS: hd_runtime_emit_status(em, ev->text); return;
	case HD_RT_COST: hd_runtime_emit_cost(em, &ev->cost); return;
	case HD_RT_ERROR:
		hd_runtime_emit_error(em, "%s", ev->text ? ev->text : "error");
		return;
	case HD_RT_DONE:
		hd_runtime_emit_done(
		    em, ev->reason, ev->summary, ev->native_session_id);
		return;
	case HD_RT_TOOL_CALL:
	case HD_RT_TOOL_RESULT:
		if (!em->done)
			deliver(em, ev);
		return;
	}
}

/* ---- results ---- */

void
hd_runtime_result_dispose(hd_runtime_result *r)
{
	if (r == NULL)
		return;
	free(r->text);
	free(r->error);
	free(r->summary);
	free(r->native_session_id);
	memset(r, 0, sizeof(*r));
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string of len bytes; invalid UTF-8 becomes U+FFFD, since an
 * agent's output is bytes and JSON needs text. */
static json_t *
json_text(const char *s, size_t len)
{
	hd_buf b = HD_BUF_INIT(0);
	json_t *j;
	size_t i = 0, k;

	if (s == NULL)
		return json_null();
	if (hd_utf8_ok(s, len) && memchr(s, '\0', len) == NULL)
		return json_stringn(s, len);
	while (i < len) {
		k = utf8_seq((const unsigned char *)s + i, len - i);
		if (k == 0 || s[i] == '\0') {
			hd_buf_puts(&b, "\xef\xbf\xbd");
			i++;
		} else {
			hd_buf_put(&b, s + i, k);
			i += k;
		}
	}
	j = json_stringn(hd_buf_cstr(&b), b.len);
	hd_buf_dispose(&b);
	return j ? j : json_null();
}

json_t *
hd_runtime_result_to_json(const hd_runtime_result *r)
{
	json_t *o = json_object(), *c = json_object();

	json_object_set_new(
	    o, "reason", json_string(hd_runtime_done_name(r->reason)));
	json_object_set_new(o, "text",
	    json_text(r->text ? r->text : "", r->text ? r->text_len : 0));
	json_object_set_new(o, "error",
	    r->error ? json_text(r->error, strlen(r->error)) : json_null());
	json_object_set_new(o, "summary",
	    r->summary ? json_text(r->summary, strlen(r->summary))
		       : json_null());
	json_object_set_new(o, "native_session_id",
	    r->native_session_id
		? json_text(r->native_session_id, strlen(r->native_session_id))
		: json_null());
	json_object_set_new(o, "truncated", json_boolean(r->truncated));
	json_object_set_new(o, "duration_ms", json_integer(r->duration_ms));
	json_object_set_new(c, "usd", json_real(r->cost.usd));
	json_object_set_new(c, "microcents", json_integer(r->cost.microcents));
	json_object_set_new(
	    c, "input_tokens", json_integer(r->cost.input_tokens));
	json_object_set_new(
	    c, "output_tokens", json_integer(r->cost.output_tokens));
	json_object_set_new(c, "estimated", json_boolean(r->cost.estimated));
	json_object_set_new(o, "cost", c);
	return o;
}

/* ---- the drivers ---- */

static void
emit_init(hd_runtime_emit *em, const hd_runtime_turn *in, hd_runtime_sink sink,
    void *payload)
{
	memset(em, 0, sizeof(*em));
	em->in = in;
	em->sink = sink;
	em->payload = payload;
	/* The cap is enforced by hd_runtime_emit_text; this one only stops a
	 * runaway bug from growing without bound. */
	em->text = (hd_buf)HD_BUF_INIT(HD_RUNTIME_OUTPUT_MAX + 256);
}

/* Hand the emitter's findings to out (or drop them) and pick the code. */
static int
emit_finish(hd_runtime_emit *em, hd_runtime_result *out, int64_t t0, int arc,
    const hd_err *aerr, hd_err *err)
{
	int rc = 0;

	if (em->reason == HD_DONE_ERROR) {
		if (arc < 0 && aerr->msg[0] != '\0')
			rc = hd_err_set(err,
			    aerr->code != HD_OK ? aerr->code : HD_ERR, "%s",
			    aerr->msg);
		else
			rc = hd_err_set(err, arc < 0 ? arc : HD_ERR, "%s",
			    em->error ? em->error : "the turn ended in error");
	}
	if (out != NULL) {
		memset(out, 0, sizeof(*out));
		out->text_len = em->text.len;
		out->text =
		    hd_buf_failed(&em->text) ? NULL : hd_buf_detach(&em->text);
		if (out->text == NULL) {
			out->text = strdup("");
			out->text_len = 0;
		}
		out->reason = em->reason;
		out->error = em->error;
		out->summary = em->summary;
		out->native_session_id = em->native_session_id;
		out->cost = em->cost;
		out->truncated = em->truncated;
		out->duration_ms = hd_mono_ms() - t0;
		em->error = em->summary = em->native_session_id = NULL;
	}
	hd_buf_dispose(&em->text);
	free(em->error);
	free(em->summary);
	free(em->native_session_id);
	return rc;
}

/* A turn that fails before any adapter runs still ends with error + done,
 * so every caller of the drivers sees the same shape (1). err is set and
 * non-NULL. */
static int
turn_fail(hd_runtime_result *out, const hd_runtime_turn *in,
    hd_runtime_sink sink, void *payload, int code, hd_err *err)
{
	hd_runtime_emit em;
	hd_err aerr = *err;

	emit_init(&em, in, sink, payload);
	hd_runtime_emit_error(&em, "%s", aerr.msg);
	hd_runtime_emit_done(&em, HD_DONE_ERROR, NULL, NULL);
	return emit_finish(&em, out, hd_mono_ms(), code, &aerr, err);
}

int
hd_runtime_run_turn(hd_runtime_result *out, const hd_runtime_adapter *rt,
    const hd_runtime_turn *in, hd_runtime_sink sink, void *payload, hd_err *err)
{
	hd_runtime_emit em;
	hd_err aerr = HD_ERR_INIT, local = HD_ERR_INIT;
	int64_t t0 = hd_mono_ms();
	int arc;

	if (err == NULL)
		err = &local;
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (rt == NULL || in == NULL || in->agent == NULL ||
	    in->prompt == NULL) {
		hd_err_set(err, HD_EINVAL,
		    "a turn needs a runtime, an agent and a prompt");
		return turn_fail(out, in, sink, payload, HD_EINVAL, err);
	}
	emit_init(&em, in, sink, payload);
	arc = rt->run(in, &em, &aerr);
	if (!em.done) { /* (1): the adapter forgot or failed */
		if (arc < 0) {
			if (em.error == NULL || strcmp(em.error, aerr.msg) != 0)
				hd_runtime_emit_error(&em, "%s",
				    aerr.msg[0] ? aerr.msg : hd_code_name(arc));
			hd_runtime_emit_done(&em, HD_DONE_ERROR, NULL, NULL);
		} else if (hd_runtime_aborted(in))
			hd_runtime_emit_done(&em, HD_DONE_ABORTED, NULL, NULL);
		else
			hd_runtime_emit_done(&em, HD_DONE_SUCCESS, NULL, NULL);
	}
	return emit_finish(&em, out, t0, arc, &aerr, err);
}

const char *
hd_runtime_self_exe(char *buf, size_t size)
{
	const char *env = getenv("HUDDLE_EXE");
	ssize_t n;

	if (env != NULL && env[0] == '/') {
		snprintf(buf, size, "%s", env);
		return buf;
	}
	if ((n = readlink("/proc/self/exe", buf, size - 1)) <= 0 ||
	    (size_t)n >= size - 1)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* The stdio MCP server for in's agent (runtime.h mcp_command): this
 * binary, `mcp --team T --agent A --home H`, every path absolute. The
 * store is never on this command line, where `ps` and the agent's config
 * files would show a password in its URL: it travels as HUDDLE_STORE in
 * the environment (--store sets it too), which the agent's CLI inherits
 * and each adapter has it hand to the server (hd_runtime__store_env). */
static void
mcp_command(const char *argv[9], char *exe, size_t exelen, char *home,
    size_t homelen, const hd_runtime_turn *in)
{
	argv[0] = NULL;
	if (in->huddle_home == NULL || in->team == NULL ||
	    hd_runtime_self_exe(exe, exelen) == NULL)
		return;
	if (in->huddle_home[0] == '/')
		snprintf(home, homelen, "%s", in->huddle_home);
	else if (realpath(in->huddle_home, home) ==
		 NULL) /* homelen >= PATH_MAX */
		return;
	argv[0] = exe;
	argv[1] = "mcp";
	argv[2] = "--team";
	argv[3] = in->team;
	argv[4] = "--agent";
	argv[5] = in->agent->id;
	argv[6] = "--home";
	argv[7] = home;
	argv[8] = NULL;
}

const char *
hd_runtime__store_env(void)
{
	const char *store = getenv("HUDDLE_STORE");

	return store != NULL && *store != '\0' ? store : NULL;
}

int
hd_runtime_run(hd_runtime_result *out, const hd_runtime_turn *in,
    hd_runtime_sink sink, void *payload, hd_err *err)
{
	const char *cmd[9];
	char exe[PATH_MAX], home_abs[PATH_MAX];
	const hd_runtime_adapter *rt;
	hd_runtime_caps caps;
	hd_runtime_plan plan;
	hd_runtime_home home = {NULL, 0};
	hd_runtime_home_spec hs;
	hd_runtime_turn t;
	hd_err local = HD_ERR_INIT;
	int rc;

	if (err == NULL)
		err = &local;
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (in == NULL || in->agent == NULL) {
		hd_err_set(err, HD_EINVAL, "a turn needs an agent");
		return turn_fail(out, in, sink, payload, HD_EINVAL, err);
	}
	if ((rc = hd_runtime_find(&rt, in->agent->runtime, err)) < 0)
		return turn_fail(out, in, sink, payload, rc, err);
	t = *in;
	if (t.team == NULL)
		t.team = in->agent->team_id;
	if (t.mcp_url == NULL && t.mcp_command == NULL) {
		mcp_command(
		    cmd, exe, sizeof(exe), home_abs, sizeof(home_abs), &t);
		if (cmd[0] != NULL)
			t.mcp_command = cmd;
	}
	if (t.home_dir == NULL) {
		memset(&caps, 0, sizeof(caps));
		rt->capabilities(&caps);
		plan = hd_runtime_resolve_integration(&caps);
		if (in->ephemeral_home && plan.home == HD_HOME_PERSISTENT) {
			plan.home = HD_HOME_EPHEMERAL;
			plan.preserve_skills = 0;
			plan.preserve_memory = 0;
		}
		memset(&hs, 0, sizeof(hs));
		hs.huddle_home = in->huddle_home;
		hs.runtime = rt->name;
		hs.agent = in->agent->id;
		hs.mcp_url = t.mcp_url;
		hs.mcp_token = t.mcp_token;
		hs.mcp_command = t.mcp_command;
		if ((rc = hd_runtime_home_prepare(&home, &plan, &hs, err)) <
		    0) {
			hd_runtime_home_release(&home);
			return turn_fail(out, &t, sink, payload, rc, err);
		}
		t.home_dir = home.path;
	}
	rc = hd_runtime_run_turn(out, rt, &t, sink, payload, err);
	hd_runtime_home_release(&home);
	return rc;
}
