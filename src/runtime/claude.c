/*
 * claude.c -- the `claude-code` runtime: Claude Code run as `claude -p
 * <prompt> --output-format stream-json --verbose`. First the parser of
 * that stream, one JSON object per line (system/init, system/api_retry,
 * assistant, user, and a final result line), turned into runtime events;
 * the rest of the file (the adapter, which spawns the CLI and feeds the
 * parser its standard output line by line) follows it.
 *  (1) Every line is parsed with Jansson on its own, so a line can never
 *      spoil another. An empty line is ignored; a line that is not a JSON
 *      object with a string `type`, or an assistant or user line without
 *      message.content, is counted as malformed and the turn goes on.
 *      Unknown types and blocks are ignored, and so are a tool_use without
 *      a name and a tool_result without a tool_use_id. Nothing in a line
 *      can crash the parser or make it keep more than the last result
 *      line, the session id and the names of the tool calls still waiting
 *      for their results (at most CLAUDE_TOOLS_MAX).
 *  (2) Live events as lines come: tool_use blocks are tool_call, their
 *      tool_result blocks are tool_result carrying the tool's name (paired
 *      by id; huddle's own tools by their bare names, task_claim for
 *      Claude Code's mcp__huddle__task_claim, as every runtime names
 *      them; other tools as Claude Code does), text blocks are text_delta ("\n\n" between the text of two
 *      assistant lines), a failed MCP server and each api_retry are a
 *      status. The synthetic assistant line Claude Code writes for an API
 *      failure (it carries a top-level `error`) is not the agent's text
 *      and is not streamed: the error says it once, at the end.
 *  (3) The outcome comes from the last result line only, at finish: its
 *      `result` is the reply (hd_runtime_emit_reply) unless is_error, its
 *      total_cost_usd and usage are the cost (not estimated; without
 *      total_cost_usd no cost is emitted and the driver estimates). The
 *      usage of assistant lines is partial and never read.
 *  (4) is_error tells failure from success; subtype does not (it stays
 *      "success" on API errors) except "error_max_turns", which ends the
 *      turn max_turns. A nonzero exit fails the turn even after a good
 *      result line. Every message is one line prefixed "claude-code: ";
 *      text quoted from the stream has no control characters and is cut
 *      to CLAUDE_MSG_MAX bytes (an error text to its first line).
 *  (5) finish ends the turn with exactly one done: success or max_turns
 *      with the session id, else error without one (a failed run may have
 *      left nothing to resume).
 * The adapter:
 *  (6) Its child is proc.c's: its own process group, killed whole on
 *      timeout or abort; stdin is /dev/null unless the prompt is too long
 *      for one argument, when it goes on stdin. huddle's MCP server is its
 *      only MCP server (--mcp-config huddle-mcp.json, --strict-mcp-config)
 *      and mcp__huddle its allowed tools, with allowed_tools added.
 *      What it prepares as codex.c does (config checks, work directory,
 *      binary, prompt argument or stdin, the run) is cfg.c's
 *      hd_runtime_cli (cfg.c (5)).
 *  (7) huddle writes only huddle-mcp.json in the agent's home; with
 *      "home": "private" Claude's own state goes under <home>/claude
 *      (CLAUDE_CONFIG_DIR), with "home": "user" it runs against the user's
 *      own login and settings. The work directory is stable per agent,
 *      since Claude keys sessions by it, and the session is resumed there.
 * Attaching by hand (`huddle attach`, runtime.h hd_runtime_attacher):
 *  (8) The formats Claude Code reads: `claude mcp add` and an mcpServers
 *      entry (.mcp.json, --mcp-config). Over HTTP both keep ${URL_VAR} and
 *      `Bearer ${TOKEN_VAR}`, which Claude Code expands from the
 *      environment when it starts, so the files are safe to commit; over
 *      stdio, the `huddle mcp` command.
 * Callers: runtime.c's adapter table; the parser also
 * tests/unit/runtime/test-claude-stream.c and tests/fuzz/fuzz-claude-stream.c.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

#define CLAUDE_PREFIX "claude-code: "
/* Text of the stream quoted in a message keeps at most this many bytes. */
#define CLAUDE_MSG_MAX 300
/* Tool calls whose names are kept until their results come. */
#define CLAUDE_TOOLS_MAX 4096
/* Denied tools named in the warning; the rest are counted. */
#define CLAUDE_DENIALS_MAX 8

struct hd_claude_stream {
	json_t *result;    /* the last result line, or NULL */
	json_t *tools;     /* tool_use id -> name, until its result */
	char *session;     /* from system/init, then the result line */
	size_t malformed;  /* lines counted by (1) */
	size_t assistants; /* assistant lines seen */
	size_t text_line;  /* the assistant line that last streamed text */
	int have_text;     /* any text streamed yet */
};

hd_claude_stream *
hd_claude__stream_new(void)
{
	hd_claude_stream *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return NULL;
	if ((cs->tools = json_object()) == NULL) {
		free(cs);
		return NULL;
	}
	return cs;
}

void
hd_claude__stream_free(hd_claude_stream *cs)
{
	if (cs == NULL)
		return;
	json_decref(cs->result);
	json_decref(cs->tools);
	free(cs->session);
	free(cs);
}

const char *
hd_claude__stream_session(const hd_claude_stream *cs)
{
	return cs != NULL ? cs->session : NULL;
}

/* ---- helpers ---- */

static void
set_session(hd_claude_stream *cs, const json_t *id)
{
	const char *s = json_string_value(id);
	char *copy;

	if (s == NULL || s[0] == '\0' ||
	    (cs->session != NULL && strcmp(cs->session, s) == 0))
		return;
	if ((copy = strdup(s)) == NULL)
		return; /* keep the one we had */
	free(cs->session);
	cs->session = copy;
}

/*
 * Append s (len bytes of valid UTF-8, as Jansson guarantees) to b: with
 * first_line, only its first line; control characters made spaces, no
 * trailing blank; cut to max bytes on a character boundary with "..."
 * after a cut (4). Returns the bytes added: 0 when s says nothing.
 */
static size_t
put_quoted(hd_buf *b, const char *s, size_t len, size_t max, int first_line)
{
	return hd_runtime__quote(b, s, len, max,
	    HD_QUOTE_ELLIPSIS | (first_line ? HD_QUOTE_FIRST_LINE : 0));
}

/* A name from the stream (a server, a tool): whole, made one line. */
static size_t
put_name(hd_buf *b, const json_t *str)
{
	return put_quoted(b, json_string_value(str), json_string_length(str),
	    CLAUDE_MSG_MAX, 0);
}

static void
emit_status_buf(hd_runtime_emit *em, hd_buf *b)
{
	if (!hd_buf_failed(b))
		hd_runtime_emit_status(em, hd_buf_cstr(b));
	hd_buf_dispose(b);
}

/* A JSON integer in [0, max], else 0 (a count from the stream). */
static int64_t
count_of(const json_t *v, int64_t max)
{
	json_int_t n;

	if (!json_is_integer(v))
		return 0;
	n = json_integer_value(v);
	return n < 0 ? 0 : n > max ? max : (int64_t)n;
}

/* ---- lines ---- */

/* system/init: the session, and a warning per MCP server that failed. */
static void
on_init(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *j)
{
	const json_t *srv;
	size_t i;

	set_session(cs, json_object_get(j, "session_id"));
	json_array_foreach (json_object_get(j, "mcp_servers"), i, srv) {
		const char *st =
		    json_string_value(json_object_get(srv, "status"));
		hd_buf b = HD_BUF_INIT(0);

		if (st == NULL || strcmp(st, "failed") != 0)
			continue;
		hd_buf_puts(&b, CLAUDE_PREFIX "MCP server ");
		if (put_name(&b, json_object_get(srv, "name")) == 0)
			hd_buf_puts(&b, "(unnamed)");
		hd_buf_puts(&b, " failed to start");
		emit_status_buf(em, &b);
	}
}

/* system/api_retry: "claude-code: API error 529 (overloaded); retrying in
 * 0.572 s (attempt 1 of 10)". */
static void
on_retry(hd_runtime_emit *em, const json_t *j)
{
	const json_t *status = json_object_get(j, "error_status");
	const json_t *delay = json_object_get(j, "retry_delay_ms");
	const json_t *what = json_object_get(j, "error");
	hd_buf b = HD_BUF_INIT(0), q = HD_BUF_INIT(0);
	double ms;

	hd_buf_puts(&b, CLAUDE_PREFIX "API error");
	if (json_is_integer(status)) {
		hd_buf_putc(&b, ' ');
		hd_buf_put_i64(&b, (int64_t)json_integer_value(status));
	}
	if (put_quoted(&q, json_string_value(what), json_string_length(what),
		CLAUDE_MSG_MAX, 1) > 0)
		hd_buf_printf(&b, " (%s)", hd_buf_cstr(&q));
	hd_buf_dispose(&q);
	hd_buf_puts(&b, "; retrying");
	if (json_is_number(delay)) {
		ms = json_number_value(delay);
		if (isfinite(ms) && ms >= 0 && ms < 1e12)
			hd_buf_printf(
			    &b, " in %g s", (double)llround(ms) / 1000.0);
	}
	if (json_is_integer(json_object_get(j, "attempt"))) {
		hd_buf_puts(&b, " (attempt ");
		hd_buf_put_i64(
		    &b, count_of(json_object_get(j, "attempt"), INT64_MAX));
		if (json_is_integer(json_object_get(j, "max_retries"))) {
			hd_buf_puts(&b, " of ");
			hd_buf_put_i64(
			    &b, count_of(json_object_get(j, "max_retries"),
				    INT64_MAX));
		}
		hd_buf_putc(&b, ')');
	}
	emit_status_buf(em, &b);
}

/* (2): huddle's tools by their own names; any other as Claude names it */
static const char *
tool_name(const char *name)
{
	static const char prefix[] = "mcp__huddle__";

	if (name != NULL && strncmp(name, prefix, sizeof(prefix) - 1) == 0 &&
	    name[sizeof(prefix) - 1] != '\0')
		return name + sizeof(prefix) - 1;
	return name;
}

static void
on_tool_use(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *blk)
{
	const json_t *id = json_object_get(blk, "id");
	const json_t *name = json_object_get(blk, "name");
	hd_runtime_event ev;

	if (!json_is_string(name)) /* not a call anyone could answer */
		return;
	if (json_is_string(id) &&
	    json_object_size(cs->tools) < CLAUDE_TOOLS_MAX)
		json_object_set(
		    cs->tools, json_string_value(id), (json_t *)name);
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_TOOL_CALL;
	ev.name = tool_name(json_string_value(name));
	ev.id = json_string_value(id);
	ev.data = json_object_get(blk, "input");
	hd_runtime_emit_event(em, &ev);
}

static int
on_assistant(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *j)
{
	const json_t *content =
	    json_object_get(json_object_get(j, "message"), "content");
	const json_t *blk, *text;
	const char *type;
	/* (2): an API failure's stand-in for a reply */
	int synthetic = json_is_string(json_object_get(j, "error"));
	size_t i;

	if (!json_is_array(content))
		return -1;
	cs->assistants++;
	json_array_foreach (content, i, blk) {
		type = json_string_value(json_object_get(blk, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "tool_use") == 0) {
			on_tool_use(cs, em, blk);
			continue;
		}
		text = json_object_get(blk, "text");
		if (strcmp(type, "text") != 0 || synthetic ||
		    json_string_length(text) == 0)
			continue;
		if (cs->have_text && cs->text_line != cs->assistants)
			hd_runtime_emit_text(em, "\n\n", 2);
		hd_runtime_emit_text(
		    em, json_string_value(text), json_string_length(text));
		cs->have_text = 1;
		cs->text_line = cs->assistants;
	}
	return 0;
}

static int
on_user(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *j)
{
	const json_t *content =
	    json_object_get(json_object_get(j, "message"), "content");
	const json_t *blk, *id, *name;
	hd_runtime_event ev;
	size_t i;

	if (json_is_string(content)) /* a prompt echoed back: nothing to do */
		return 0;
	if (!json_is_array(content))
		return -1;
	json_array_foreach (content, i, blk) {
		const char *type =
		    json_string_value(json_object_get(blk, "type"));

		if (type == NULL || strcmp(type, "tool_result") != 0)
			continue;
		id = json_object_get(blk, "tool_use_id");
		if (!json_is_string(id)) /* a result of nothing */
			continue;
		name = json_object_get(cs->tools, json_string_value(id));
		memset(&ev, 0, sizeof(ev));
		ev.kind = HD_RT_TOOL_RESULT;
		ev.name = tool_name(json_string_value(name));
		ev.id = json_string_value(id);
		ev.data = json_object_get(blk, "content");
		ev.is_error = json_is_true(json_object_get(blk, "is_error"));
		hd_runtime_emit_event(em, &ev);
		if (name != NULL) /* a result comes once; forget the call */
			json_object_del(cs->tools, json_string_value(id));
	}
	return 0;
}

static int
is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return 0;
	return 1;
}

int
hd_claude__stream_line(
    hd_claude_stream *cs, hd_runtime_emit *em, const char *line, size_t len)
{
	json_t *j;
	const char *type, *sub;
	int rc = 0;

	if (cs == NULL)
		return -1;
	if (line == NULL || is_blank(line, len))
		return 0;
	j = json_loadb(line, len, 0, NULL);
	type = json_string_value(json_object_get(j, "type"));
	if (!json_is_object(j) || type == NULL) {
		json_decref(j);
		cs->malformed++;
		return -1;
	}
	if (strcmp(type, "assistant") == 0)
		rc = on_assistant(cs, em, j);
	else if (strcmp(type, "user") == 0)
		rc = on_user(cs, em, j);
	else if (strcmp(type, "system") == 0) {
		sub = json_string_value(json_object_get(j, "subtype"));
		if (sub != NULL && strcmp(sub, "init") == 0)
			on_init(cs, em, j);
		else if (sub != NULL && strcmp(sub, "api_retry") == 0)
			on_retry(em, j);
	} else if (strcmp(type, "result") == 0) {
		json_decref(cs->result);
		cs->result = json_incref(j); /* (3): the last one wins */
		set_session(cs, json_object_get(j, "session_id"));
	}
	json_decref(j);
	if (rc < 0)
		cs->malformed++;
	return rc;
}

/* ---- the end ---- */

/* permission_denials: "claude-code: permission denied for a, b". */
static void
warn_denials(hd_runtime_emit *em, const json_t *res)
{
	const json_t *d, *name;
	json_t *seen = json_object(); /* a tool denied twice is named once */
	hd_buf b = HD_BUF_INIT(0);
	size_t i, named = 0, more = 0;
	const char *n;

	json_array_foreach (json_object_get(res, "permission_denials"), i, d) {
		name = json_object_get(d, "tool_name");
		n = json_is_string(name) ? json_string_value(name) : "";
		if (seen == NULL || json_object_get(seen, n) != NULL)
			continue;
		json_object_set_new(seen, n, json_true());
		if (named == CLAUDE_DENIALS_MAX) {
			more++;
			continue;
		}
		hd_buf_puts(
		    &b, named ? ", " : CLAUDE_PREFIX "permission denied for ");
		if (put_name(&b, name) == 0)
			hd_buf_puts(&b, "a tool");
		named++;
	}
	json_decref(seen);
	if (more > 0)
		hd_buf_printf(&b, " and %zu more", more);
	if (named > 0)
		emit_status_buf(em, &b);
	else
		hd_buf_dispose(&b);
}

/* total_cost_usd and usage, not estimated (3). */
static void
emit_cost(hd_runtime_emit *em, const json_t *res)
{
	const json_t *usd = json_object_get(res, "total_cost_usd");
	const json_t *u = json_object_get(res, "usage");
	/* large enough for any bill, small enough that sums never overflow */
	const int64_t tmax = (int64_t)1 << 50;
	hd_runtime_cost c;
	double v;

	if (!json_is_number(usd))
		return;
	v = json_number_value(usd);
	if (!isfinite(v) || v < 0 || v > 1e9)
		return;
	memset(&c, 0, sizeof(c));
	c.microcents = (int64_t)llround(v * 1e8);
	c.usd = (double)c.microcents / 1e8;
	c.input_tokens =
	    count_of(json_object_get(u, "input_tokens"), tmax) +
	    count_of(json_object_get(u, "cache_creation_input_tokens"), tmax) +
	    count_of(json_object_get(u, "cache_read_input_tokens"), tmax);
	c.output_tokens = count_of(json_object_get(u, "output_tokens"), tmax);
	c.estimated = 0;
	hd_runtime_emit_cost(em, &c);
}

/* "exit status N: <tail>", or "killed". */
static void
error_exit(hd_runtime_emit *em, int exit_code, const char *tail)
{
	if (exit_code < 0)
		hd_runtime_emit_error(
		    em, CLAUDE_PREFIX "killed%s%s", tail[0] ? ": " : "", tail);
	else
		hd_runtime_emit_error(em, CLAUDE_PREFIX "exit status %d%s%s",
		    exit_code, tail[0] ? ": " : "", tail);
}

/* A result line with is_error: "API error N: <text>", "API error N",
 * "<text>", else its subtype, else the exit or a plain "reports an
 * error" (never an empty message: text that is all blanks says none). */
static void
error_result(
    hd_runtime_emit *em, const json_t *res, int exit_code, const char *tail)
{
	const json_t *status = json_object_get(res, "api_error_status");
	const json_t *text = json_object_get(res, "result");
	const json_t *sub = json_object_get(res, "subtype");
	const char *s;
	size_t len;
	char lead[64];
	hd_buf b = HD_BUF_INIT(0), q = HD_BUF_INIT(0);

	if (!json_is_string(text) || json_string_length(text) == 0)
		text = json_array_get(json_object_get(res, "errors"), 0);
	s = json_string_value(text);
	len = s != NULL ? json_string_length(text) : 0;
	if (json_is_integer(status)) {
		/* "API Error: 400 {...}" says the status we already give */
		snprintf(lead, sizeof(lead), "API Error: %lld",
		    (long long)json_integer_value(status));
		if (s != NULL && strncmp(s, lead, strlen(lead)) == 0) {
			s += strlen(lead);
			len -= strlen(lead);
			while (len > 0 && *s == ' ') {
				s++;
				len--;
			}
		}
		hd_buf_printf(&b, "API error %lld",
		    (long long)json_integer_value(status));
	}
	if (put_quoted(&q, s, len, CLAUDE_MSG_MAX, 1) > 0)
		hd_buf_printf(&b, "%s%s", b.len > 0 ? ": " : "",
		    hd_buf_cstr(&q));
	hd_buf_dispose(&q);
	if (b.len == 0 && json_is_string(sub) &&
	    strcmp(json_string_value(sub), "success") != 0)
		put_name(&b, sub);
	if (b.len == 0) {
		hd_buf_dispose(&b);
		if (exit_code != 0)
			error_exit(em, exit_code, tail);
		else
			hd_runtime_emit_error(em,
			    CLAUDE_PREFIX "the result line reports an error");
		return;
	}
	hd_runtime_emit_error(em, CLAUDE_PREFIX "%s",
	    hd_buf_failed(&b) ? "the run failed" : hd_buf_cstr(&b));
	hd_buf_dispose(&b);
}

void
hd_claude__stream_finish(hd_claude_stream *cs, hd_runtime_emit *em,
    int exit_code, const char *stderr_tail)
{
	const json_t *res = cs != NULL ? cs->result : NULL, *text, *sub;
	const char *tail = stderr_tail != NULL ? stderr_tail : "";
	int max_turns;

	if (res == NULL) {
		if (exit_code != 0)
			error_exit(em, exit_code, tail);
		else if (cs != NULL && cs->malformed > 0)
			hd_runtime_emit_error(em,
			    CLAUDE_PREFIX "the stream ended without a result "
					  "line (%zu malformed line%s)",
			    cs->malformed, cs->malformed == 1 ? "" : "s");
		else
			hd_runtime_emit_error(em, CLAUDE_PREFIX
			    "the stream ended without a result line");
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
		return;
	}
	warn_denials(em, res);
	sub = json_object_get(res, "subtype");
	max_turns = json_is_string(sub) &&
		    strcmp(json_string_value(sub), "error_max_turns") == 0;
	text = json_object_get(res, "result");
	if (json_is_string(text) &&
	    (max_turns || !json_is_true(json_object_get(res, "is_error"))))
		hd_runtime_emit_reply(
		    em, json_string_value(text), json_string_length(text));
	emit_cost(em, res);
	if (max_turns) {
		hd_buf b = HD_BUF_INIT(0);
		int64_t n =
		    count_of(json_object_get(res, "num_turns"), 1 << 30);

		hd_buf_puts(&b, CLAUDE_PREFIX "stopped at the turn limit");
		if (n > 0)
			hd_buf_printf(&b, " after %lld turn%s", (long long)n,
			    n == 1 ? "" : "s");
		emit_status_buf(em, &b);
		hd_runtime_emit_done(em, HD_DONE_MAX_TURNS, NULL, cs->session);
	} else if (json_is_true(json_object_get(res, "is_error"))) {
		error_result(em, res, exit_code, tail);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
	} else if (exit_code != 0) {
		error_exit(em, exit_code, tail);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
	} else
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, cs->session);
}

/* ---- the adapter ---- */

#define CLAUDE_DEFAULT_TIMEOUT_S 600

static int
claude_check(const json_t *cfg, hd_err *err)
{
	static const char *const keys[] = {"bin", "model", "workdir",
	    "allowed_tools", "env", "timeout_s", "home", "max_turns", NULL};
	const json_t *v;
	const char *home;
	int rc;

	if ((rc = hd_runtime__cli_check(cfg, keys, "claude-code", err)) < 0 ||
	    (rc = hd_runtime__check_strings(cfg, "allowed_tools", err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "max_turns", 1, 1000, err)) < 0)
		return rc;
	if ((v = json_object_get(cfg, "home")) != NULL &&
	    (!json_is_string(v) ||
		((home = json_string_value(v)),
		    strcmp(home, "user") != 0 && strcmp(home, "private") != 0)))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.home must be \"user\" or \"private\"");
	return 0;
}

/* the parser behind hd_runtime__run_stream */
static int
claude_line(void *p, hd_runtime_emit *em, const char *line, size_t len)
{
	return hd_claude__stream_line(p, em, line, len);
}

static void
claude_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	hd_claude__stream_finish(p, em, exit_code, tail);
}

static int
claude_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config, *v;
	hd_runtime_cli c;
	hd_buf allowed = HD_BUF_INIT(0);
	hd_runtime_stream rs = {
	    "claude-code", NULL, claude_line, claude_finish};
	const char *home;
	char mcp[PATH_MAX], msg[96];
	size_t i;
	int rc;

	if ((rc = hd_runtime__cli_begin(&c, in, "claude-code", claude_check,
		 CLAUDE_DEFAULT_TIMEOUT_S, em, err)) < 0)
		goto done;
	home = hd_runtime__cfg_str(cfg, "home", "user");
	snprintf(mcp, sizeof(mcp), "%s/%s", in->home_dir, HD_RUNTIME_MCP_FILE);

	/* the environment: the user's, the config's, then ours */
	if (strcmp(home, "private") == 0) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/claude", in->home_dir);
		if ((rc = hd_mkdir_p(dir, 0700, err)) < 0) {
			rc = hd_runtime__fail(
			    em, err, "claude-code: %s", err->msg);
			goto done;
		}
		hd_strv_add(
		    &c.extra, hd_runtime__env_pair("CLAUDE_CONFIG_DIR", dir));
	}
	if ((rc = hd_runtime__bin(&c.found, &c.env, in, c.extra.v,
		 "claude-code", "claude", em, err)) < 0)
		goto done;

	hd_strv_adds(&c.argv, c.found);
	hd_strv_adds(&c.argv, "-p");
	hd_runtime__cli_prompt(&c, in, NULL);
	hd_strv_adds(&c.argv, "--output-format");
	hd_strv_adds(&c.argv, "stream-json");
	hd_strv_adds(&c.argv, "--verbose");
	if (access(mcp, R_OK) == 0) {
		hd_strv_adds(&c.argv, "--mcp-config");
		hd_strv_adds(&c.argv, mcp);
	}
	hd_strv_adds(&c.argv, "--strict-mcp-config");
	hd_buf_puts(&allowed, "mcp__huddle");
	json_array_foreach (json_object_get(cfg, "allowed_tools"), i, v) {
		hd_buf_putc(&allowed, ',');
		hd_buf_puts(&allowed, json_string_value(v));
	}
	hd_strv_adds(&c.argv, "--allowedTools");
	if (hd_buf_failed(&allowed))
		c.argv.oom = 1;
	else
		hd_strv_adds(&c.argv, hd_buf_cstr(&allowed));
	if (c.model != NULL) {
		hd_strv_adds(&c.argv, "--model");
		hd_strv_adds(&c.argv, c.model);
	}
	if ((v = json_object_get(cfg, "max_turns")) != NULL) {
		snprintf(
		    msg, sizeof(msg), "%lld", (long long)json_integer_value(v));
		hd_strv_adds(&c.argv, "--max-turns");
		hd_strv_adds(&c.argv, msg);
	}
	if (in->resume_session_id != NULL) {
		hd_strv_adds(&c.argv, "--resume");
		hd_strv_adds(&c.argv, in->resume_session_id);
	}
	rs.parser = hd_claude__stream_new();
	rc = hd_runtime__cli_run(&c, in, &rs, em, err);
	hd_claude__stream_free(rs.parser);
done:
	hd_buf_dispose(&allowed);
	hd_runtime__cli_dispose(&c);
	return rc;
}

/* huddle doctor: the binary and its version, and credentials: a key in
 * the environment, or a login where Claude keeps it (CLAUDE_CONFIG_DIR
 * under the agent's home with "home": "private", else the user's). */
static void
claude_doctor(const hd_agent *a, const char *home_dir, json_t *report)
{
	static const char *const keys[] = {"ANTHROPIC_API_KEY",
	    "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", NULL};
	const json_t *cfg = a->runtime_config;
	const char *dir = hd_runtime__doctor_env(cfg, "CLAUDE_CONFIG_DIR");
	const char *home = hd_runtime__doctor_env(cfg, "HOME");
	char path[PATH_MAX];

	hd_runtime__doctor_bin(
	    report, a, hd_runtime__cfg_str(cfg, "bin", "claude"), "bin");
	path[0] = '\0';
	if (strcmp(hd_runtime__cfg_str(cfg, "home", "user"), "private") == 0) {
		if (home_dir != NULL)
			snprintf(path, sizeof(path),
			    "%s/claude/.credentials.json", home_dir);
	} else if (dir != NULL && dir[0] != '\0')
		snprintf(path, sizeof(path), "%s/.credentials.json", dir);
	else if (home != NULL && home[0] != '\0')
		snprintf(
		    path, sizeof(path), "%s/.claude/.credentials.json", home);
	hd_runtime__doctor_needs(report, a,
	    "ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or "
	    "CLAUDE_CODE_OAUTH_TOKEN, or a `claude` login",
	    keys, path[0] != '\0' && access(path, R_OK) == 0);
}

/* ---- attaching by hand (8) ---- */

static char *
claude_attach_cmd(const hd_runtime_attach *x)
{
	hd_buf b = HD_BUF_INIT(0);

	if (x->stdio) {
		hd_buf_printf(&b, "claude mcp add %s -- ", x->name);
		hd_runtime__attach_stdio(&b, x);
	} else {
		/* single quotes: the config keeps the references (8) */
		hd_buf_printf(&b, "claude mcp add --transport http %s '${%s}'",
		    x->name, x->url_var);
		if (x->token_var != NULL)
			hd_buf_printf(&b,
			    " --header 'Authorization: Bearer ${%s}'",
			    x->token_var);
	}
	return hd_buf_detach(&b);
}

/* The mcpServers entry Claude Code reads (.mcp.json, --mcp-config). */
static json_t *
claude_attach_entry(const hd_runtime_attach *x)
{
	hd_buf ref = HD_BUF_INIT(0), auth = HD_BUF_INIT(0);
	json_t *e;

	if (x->stdio)
		return json_pack("{s:s, s:s, s:[s, s, s, s, s, s, s]}", "type",
		    "stdio", "command", x->exe, "args", "--home", x->home,
		    "mcp", "--team", x->team, "--agent", x->agent);
	hd_buf_printf(&ref, "${%s}", x->url_var);
	e = json_pack("{s:s, s:s}", "type", "http", "url", hd_buf_cstr(&ref));
	if (e != NULL && x->token_var != NULL) {
		hd_buf_printf(&auth, "Bearer ${%s}", x->token_var);
		json_object_set_new(e, "headers",
		    json_pack("{s:s}", "Authorization", hd_buf_cstr(&auth)));
	}
	hd_buf_dispose(&ref);
	hd_buf_dispose(&auth);
	return e;
}

static void
claude_attach_text(
    hd_buf *b, const hd_runtime_attach *x, const char *cmd, int step)
{
	if (!x->stdio)
		hd_buf_printf(b,
		    "\n# %d. Claude Code: the config keeps ${%s}%s%s%s, read "
		    "from the\n#    environment when claude starts; nothing "
		    "secret is written.\n%s\n",
		    step, x->url_var, x->token_var != NULL ? " and ${" : "",
		    x->token_var != NULL ? x->token_var : "",
		    x->token_var != NULL ? "}" : "", cmd);
	else
		hd_buf_printf(b, "\n# Claude Code:\n%s\n", cmd);
	hd_buf_printf(b,
	    "#    Let it call huddle's tools without asking: claude "
	    "--allowedTools mcp__%s\n#    A project .mcp.json instead (safe "
	    "to commit): huddle attach %s %s --format claude%s\n",
	    x->name, x->team, x->agent, x->stdio ? " --stdio" : "");
}

static void
claude_attach_json(json_t *commands, json_t *out, const hd_runtime_attach *x)
{
	hd_buf allowed = HD_BUF_INIT(0);

	hd_buf_printf(&allowed, "--allowedTools mcp__%s", x->name);
	json_object_set_new(commands, "claude_allowed_tools",
	    json_string(hd_buf_cstr(&allowed)));
	json_object_set_new(out, "mcp_json",
	    json_pack("{s:{s:o}}", "mcpServers", x->name,
		claude_attach_entry(x)));
	hd_buf_dispose(&allowed);
}

/* --format claude: a project's .mcp.json. */
static int
claude_attach_config(const hd_runtime_attach *x, json_t **doc, hd_buf *out,
    hd_err *err)
{
	(void)out;
	if ((*doc = json_pack("{s:{s:o}}", "mcpServers", x->name,
		 claude_attach_entry(x))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

static const hd_runtime_attacher claude_attach = {
    .format = "claude",
    .command = claude_attach_cmd,
    .text = claude_attach_text,
    .json = claude_attach_json,
    .config = claude_attach_config,
};

const hd_runtime_adapter hd_runtime__claude = {
    .name = "claude-code",
    .label = "claude-code",
    .is_scripted = 0,
    .capabilities = hd_runtime__cli_caps, /* MCP config, work dir, sessions */
    .check_config = claude_check,
    .attach = &claude_attach,
    .run = claude_run,
    .doctor = claude_doctor,
};
