/*
 * codex.c -- the `codex` runtime: OpenAI's Codex CLI, driven one turn at
 * a time (`codex exec --json`), its thread resumed turn after turn in a
 * CODEX_HOME of the agent's own, huddle's MCP server handed to it as -c
 * flags. First the stream parser, then the adapter.
 *  (1) The stream is read line by line as it arrives, each line parsed
 *      whole with Jansson: thread.started gives the thread to resume; an
 *      mcp_tool_call item becomes tool_call (when it starts) and
 *      tool_result (when it completes; both then, if only its completion
 *      was seen); an agent_message text_delta, the last one being the
 *      reply; an item of type error is a warning (Codex says so of an
 *      unknown model's metadata), a status, never the turn's failure.
 *  (2) Codex reports tokens, no cost: the cost is priced here (price.c,
 *      from runtime_config.prices or codex_prices, the list prices of
 *      OpenAI's models, which this file alone knows) and flagged
 *      estimated. After a resume its usage counts the whole
 *      thread, so a run is charged the difference from the totals saved
 *      after the run before (the adapter keeps them in the agent's home).
 *  (3) turn.failed and error lines fail the turn; a provider's JSON error
 *      body inside the message is reduced to its own message. A process
 *      that exited non-zero failed the turn too; without a message its
 *      standard error's tail says why, less Codex's known noise.
 *  (4) Every message starts `codex: `, is one line without control
 *      characters, and quotes at most CODEX_QUOTE_MAX bytes of what the
 *      CLI said; a text of blanks and control characters says nothing
 *      and is replaced, never quoted as an empty message. A failed run ends in error without a thread to resume.
 *  (5) The adapter's child is proc.c's (own process group, killed whole
 *      on timeout or abort). CODEX_HOME is the agent's persistent home,
 *      seeded once from the user's config.toml and auth.json and never
 *      written back; huddle's MCP server is passed only as -c flags, never
 *      written into any config file. What it prepares as claude.c does
 *      (config checks, work directory, binary, prompt argument or stdin,
 *      the run) is cfg.c's hd_runtime_cli (cfg.c (5)).
 *  (6) Attaching by hand (`huddle attach`, runtime.h hd_runtime_attacher):
 *      `codex mcp add`, which writes the user's own ~/.codex/config.toml.
 *      Codex expands no variable in an MCP url, so the shell puts the URL
 *      there (never in a project) and the token is read from its
 *      variable (bearer_token_env_var); over stdio, the [mcp_servers.NAME]
 *      table itself.
 * Callers: runtime.c's adapter table; the parser also the tests.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

#define CODEX_QUOTE_MAX 300

/* (2): OpenAI's list prices as of 2026, USD per million tokens (input,
 * cached input, output), by model-name prefix: the adapter's `prices`. */
static const hd_price_row codex_prices[] = {
    {"gpt-5-nano", {0.05, 0.005, 0.40}},
    {"gpt-5-mini", {0.25, 0.025, 2.00}},
    {"gpt-5", {1.25, 0.125, 10.00}},
    {"gpt-4.1-nano", {0.10, 0.025, 0.40}},
    {"gpt-4.1-mini", {0.40, 0.10, 1.60}},
    {"gpt-4.1", {2.00, 0.50, 8.00}},
    {"gpt-4o-mini", {0.15, 0.075, 0.60}},
    {"gpt-4o", {2.50, 1.25, 10.00}},
    {"o4-mini", {1.10, 0.275, 4.40}},
    {"o3", {2.00, 0.50, 8.00}},
    {NULL, {0, 0, 0}},
};

struct hd_codex_stream {
	hd_price price;
	hd_codex_usage base;
	hd_codex_usage seen; /* the last turn.completed's totals */
	int have_usage;
	char *thread;
	char *reply;   /* the last agent_message */
	char *error;   /* turn.failed / error */
	json_t *begun; /* ids of tool calls already announced */
	int said_text;
	size_t malformed;
};

hd_codex_stream *
hd_codex__stream_new(const hd_price *price, const hd_codex_usage *base)
{
	hd_codex_stream *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return NULL;
	if ((cs->begun = json_object()) == NULL) {
		free(cs);
		return NULL;
	}
	if (price != NULL)
		cs->price = *price;
	else
		hd_runtime__price(&cs->price, NULL, NULL, NULL, NULL);
	if (base != NULL)
		cs->base = *base;
	return cs;
}

void
hd_codex__stream_free(hd_codex_stream *cs)
{
	if (cs == NULL)
		return;
	json_decref(cs->begun);
	free(cs->thread);
	free(cs->reply);
	free(cs->error);
	free(cs);
}

const char *
hd_codex__stream_thread(const hd_codex_stream *cs)
{
	return cs->thread;
}

void
hd_codex__stream_usage(const hd_codex_stream *cs, hd_codex_usage *out)
{
	/* the thread's totals now: what the last turn.completed said */
	*out = cs->have_usage ? cs->seen : cs->base;
}

static void
replace(char **slot, const char *s)
{
	char *c = s != NULL ? strdup(s) : NULL;

	free(*slot);
	*slot = c;
}

/* The first line of s, at most CODEX_QUOTE_MAX bytes on a character
 * boundary, control characters made spaces, no trailing blank, into b
 * (4). Returns the bytes added: 0 when s says nothing. */
static size_t
quote(hd_buf *b, const char *s)
{
	return hd_runtime__quote(
	    b, s, strlen(s), CODEX_QUOTE_MAX, HD_QUOTE_FIRST_LINE);
}

/* (3): a provider's error body ({"error":{"message":...}}) says its own
 * message; anything else is the message. */
static void
remember_error(hd_codex_stream *cs, const char *msg)
{
	json_t *j;
	const char *inner;

	if (msg == NULL || msg[0] == '\0')
		msg = "the turn failed";
	j = msg[0] == '{' ? json_loads(msg, 0, NULL) : NULL;
	inner = json_string_value(
	    json_object_get(json_object_get(j, "error"), "message"));
	replace(&cs->error, inner != NULL && inner[0] ? inner : msg);
	json_decref(j);
}

static void
tool_event(hd_runtime_emit *em, hd_runtime_event_kind kind, const json_t *item)
{
	hd_runtime_event ev;
	const json_t *err = json_object_get(item, "error");
	const char *status = json_string_value(json_object_get(item, "status"));

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.name = json_string_value(json_object_get(item, "tool"));
	ev.id = json_string_value(json_object_get(item, "id"));
	if (kind == HD_RT_TOOL_CALL)
		ev.data = json_object_get(item, "arguments");
	else {
		ev.is_error = (err != NULL && !json_is_null(err)) ||
			      (status != NULL && strcmp(status, "failed") == 0);
		ev.data = ev.is_error && err != NULL && !json_is_null(err)
			      ? err
			      : json_object_get(item, "result");
	}
	hd_runtime_emit_event(em, &ev);
}

static void
on_item(
    hd_codex_stream *cs, hd_runtime_emit *em, const json_t *item, int completed)
{
	const char *type = json_string_value(json_object_get(item, "type"));
	const char *id = json_string_value(json_object_get(item, "id"));
	const char *text;
	hd_buf b = HD_BUF_INIT(0);

	if (type == NULL)
		return;
	if (strcmp(type, "mcp_tool_call") == 0) {
		if (id != NULL && json_object_get(cs->begun, id) == NULL) {
			tool_event(em, HD_RT_TOOL_CALL, item);
			json_object_set_new(cs->begun, id, json_true());
		} else if (id == NULL && !completed)
			tool_event(em, HD_RT_TOOL_CALL, item);
		if (completed)
			tool_event(em, HD_RT_TOOL_RESULT, item);
	} else if (strcmp(type, "agent_message") == 0 && completed) {
		if ((text = json_string_value(json_object_get(item, "text"))) ==
		    NULL)
			return;
		if (cs->said_text)
			hd_runtime_emit_text(em, "\n\n", 2);
		hd_runtime_emit_text(em, text, strlen(text));
		cs->said_text = 1;
		replace(&cs->reply, text);
	} else if (strcmp(type, "error") == 0 && completed) {
		/* (1): a warning item, not the turn's failure */
		hd_buf_puts(&b, "codex: ");
		text = json_string_value(json_object_get(item, "message"));
		if (text == NULL || quote(&b, text) == 0)
			hd_buf_puts(&b, "warning");
		hd_runtime_emit_status(em, hd_buf_cstr(&b));
	}
	hd_buf_dispose(&b);
}

static int64_t
usage_field(const json_t *u, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(u, key));

	return v > 0 ? (int64_t)v : 0;
}

int
hd_codex__stream_line(
    hd_codex_stream *cs, hd_runtime_emit *em, const char *line, size_t len)
{
	json_t *j;
	const char *type;
	const json_t *u;
	size_t i = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len)
		return 0;
	j = json_loadb(line, len, 0, NULL);
	if (!json_is_object(j) ||
	    (type = json_string_value(json_object_get(j, "type"))) == NULL) {
		json_decref(j);
		cs->malformed++;
		return -1;
	}
	if (strcmp(type, "thread.started") == 0) {
		const char *t =
		    json_string_value(json_object_get(j, "thread_id"));

		if (t != NULL && t[0] != '\0')
			replace(&cs->thread, t);
	} else if (strcmp(type, "item.started") == 0)
		on_item(cs, em, json_object_get(j, "item"), 0);
	else if (strcmp(type, "item.completed") == 0)
		on_item(cs, em, json_object_get(j, "item"), 1);
	else if (strcmp(type, "turn.completed") == 0) {
		u = json_object_get(j, "usage");
		/* output_tokens includes the reasoning tokens (Responses
		 * API accounting): reasoning_output_tokens is a part of it */
		cs->seen.input = usage_field(u, "input_tokens");
		cs->seen.cached = usage_field(u, "cached_input_tokens");
		cs->seen.output = usage_field(u, "output_tokens");
		cs->have_usage = 1;
	} else if (strcmp(type, "turn.failed") == 0)
		remember_error(
		    cs, json_string_value(json_object_get(
			    json_object_get(j, "error"), "message")));
	else if (strcmp(type, "error") == 0)
		remember_error(
		    cs, json_string_value(json_object_get(j, "message")));
	json_decref(j);
	return 0;
}

/* (2): what this run added to the thread's totals. */
static void
run_tokens(const hd_codex_stream *cs, hd_codex_usage *out)
{
	const hd_codex_usage *s = &cs->seen, *b = &cs->base;

	if (s->input < b->input || s->output < b->output ||
	    s->cached < b->cached)
		*out = *s; /* the count started over: all of it is new */
	else {
		out->input = s->input - b->input;
		out->cached = s->cached - b->cached;
		out->output = s->output - b->output;
	}
}

/* The last line of a standard-error tail that is not Codex's known
 * noise and says something, into b as ": <line>". */
static void
quote_tail(hd_buf *b, const char *tail)
{
	const char *end = tail + strlen(tail), *start;
	hd_buf q = HD_BUF_INIT(0);

	while (end > tail) {
		start = end;
		while (start > tail && start[-1] != '\n')
			start--;
		/* the line [start, end), up to a '\r' in it */
		if (strncmp(start, "WARNING: proceeding, even though", 32) !=
			0 &&
		    strncmp(start, "Reading additional input from stdin", 35) !=
			0 &&
		    hd_runtime__quote(&q, start, (size_t)(end - start),
			CODEX_QUOTE_MAX, HD_QUOTE_FIRST_LINE) > 0)
			break;
		hd_buf_reset(&q);
		end = start > tail ? start - 1 : tail;
	}
	if (q.len > 0 && !hd_buf_failed(&q))
		hd_buf_printf(b, ": %s", hd_buf_cstr(&q));
	hd_buf_dispose(&q);
}

void
hd_codex__stream_finish(hd_codex_stream *cs, hd_runtime_emit *em, int exit_code,
    const char *stderr_tail)
{
	hd_codex_usage t;
	hd_runtime_cost cost;
	hd_buf msg = HD_BUF_INIT(0);

	if (cs->have_usage) {
		run_tokens(cs, &t);
		hd_runtime__price_cost(
		    &cost, &cs->price, t.input, t.cached, t.output);
		hd_runtime_emit_cost(em, &cost);
	}
	if (cs->error == NULL && exit_code == 0 && cs->have_usage) {
		hd_runtime_emit_reply(em, cs->reply != NULL ? cs->reply : "",
		    cs->reply != NULL ? strlen(cs->reply) : 0);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, cs->thread);
		return;
	}
	hd_buf_puts(&msg, "codex: ");
	if (cs->error != NULL) {
		/* nothing but blanks and control characters says nothing */
		if (quote(&msg, cs->error) == 0)
			hd_buf_puts(&msg, "the turn failed");
	} else if (exit_code < 0)
		hd_buf_puts(&msg, "killed");
	else if (exit_code != 0) {
		hd_buf_printf(&msg, "exit status %d", exit_code);
		quote_tail(&msg, stderr_tail != NULL ? stderr_tail : "");
	} else
		hd_buf_puts(&msg, "the stream ended without turn.completed");
	if (cs->error == NULL && cs->malformed > 0)
		hd_buf_printf(&msg, " (%zu malformed line%s)", cs->malformed,
		    cs->malformed == 1 ? "" : "s");
	hd_runtime_emit_error(em, "%s", hd_buf_cstr(&msg));
	/* a failed run hands on no thread: the one resumed stays (turn.c) */
	hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
	hd_buf_dispose(&msg);
}

/* ---- the adapter ---- */

#define CODEX_DEFAULT_TIMEOUT_S 600
#define CODEX_USAGE_FILE "huddle-codex-usage.json"

static int
codex_check(const json_t *cfg, hd_err *err)
{
	static const char *const keys[] = {"bin", "model", "workdir",
	    "overrides", "env", "timeout_s", "prices", NULL};
	const json_t *v, *ov;
	hd_price p;
	const char *key;
	int rc;

	if ((rc = hd_runtime__cli_check(cfg, keys, "codex", err)) < 0 ||
	    (rc = hd_runtime__price(
		 &p, NULL, NULL, json_object_get(cfg, "prices"), err)) < 0)
		return rc;
	if ((v = json_object_get(cfg, "overrides")) != NULL) {
		if (!json_is_object(v))
			return hd_err_set(err, HD_EINVAL,
			    "runtime_config.overrides must be an object of "
			    "Codex config keys and values");
		json_object_foreach ((json_t *)v, key, ov) {
			if (key[0] == '\0' || strchr(key, '=') != NULL ||
			    json_is_null(ov))
				return hd_err_set(err, HD_EINVAL,
				    "runtime_config.overrides.%.64s: a key "
				    "without '=' and a non-null value",
				    key);
			if (strncmp(key, "mcp_servers.huddle", 18) == 0)
				return hd_err_set(err, HD_EINVAL,
				    "runtime_config.overrides.%.64s: huddle's "
				    "own MCP server is set by huddle",
				    key);
		}
	}
	return 0;
}

/* ---- TOML values for -c key=value ---- */

static void
toml_string(hd_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	hd_buf_putc(b, '"');
	for (; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			hd_buf_putc(b, '\\');
			hd_buf_putc(b, (char)*p);
		} else if (*p < 0x20 || *p == 0x7f)
			hd_buf_printf(b, "\\u%04x", *p);
		else
			hd_buf_putc(b, (char)*p);
	}
	hd_buf_putc(b, '"');
}

static int
toml_key_bare(const char *k)
{
	if (*k == '\0')
		return 0;
	for (; *k != '\0'; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
			(*k >= '0' && *k <= '9') || *k == '_' || *k == '-'))
			return 0;
	return 1;
}

/* A JSON value as a TOML value (inline tables and arrays for objects and
 * arrays); -1 for null, which TOML cannot say. */
static int
toml_value(hd_buf *b, const json_t *v)
{
	const char *key;
	json_t *x;
	size_t i;
	int first = 1;

	switch (json_typeof(v)) {
	case JSON_STRING: toml_string(b, json_string_value(v)); return 0;
	case JSON_INTEGER:
		hd_buf_put_i64(b, (int64_t)json_integer_value(v));
		return 0;
	case JSON_REAL: hd_buf_printf(b, "%.17g", json_real_value(v)); return 0;
	case JSON_TRUE: hd_buf_puts(b, "true"); return 0;
	case JSON_FALSE: hd_buf_puts(b, "false"); return 0;
	case JSON_ARRAY:
		hd_buf_putc(b, '[');
		json_array_foreach (v, i, x) {
			if (i > 0)
				hd_buf_puts(b, ", ");
			if (toml_value(b, x) < 0)
				return -1;
		}
		hd_buf_putc(b, ']');
		return 0;
	case JSON_OBJECT:
		hd_buf_putc(b, '{');
		json_object_foreach ((json_t *)v, key, x) {
			hd_buf_puts(b, first ? "" : ", ");
			first = 0;
			if (toml_key_bare(key))
				hd_buf_puts(b, key);
			else
				toml_string(b, key);
			hd_buf_puts(b, " = ");
			if (toml_value(b, x) < 0)
				return -1;
		}
		hd_buf_putc(b, '}');
		return 0;
	case JSON_NULL: break;
	}
	return -1;
}

/* -c key=<TOML value of v> */
static void
add_override(hd_strv *argv, const char *key, const json_t *v)
{
	hd_buf b = HD_BUF_INIT(0);

	hd_buf_puts(&b, key);
	hd_buf_putc(&b, '=');
	if (toml_value(&b, v) < 0 || hd_buf_failed(&b)) {
		argv->oom = 1;
		hd_buf_dispose(&b);
		return;
	}
	hd_strv_adds(argv, "-c");
	hd_strv_add(argv, hd_buf_detach(&b));
}

static void
add_override_str(hd_strv *argv, const char *key, const char *value)
{
	json_t *v = json_string(value);

	if (v == NULL)
		argv->oom = 1;
	else
		add_override(argv, key, v);
	json_decref(v);
}

/* huddle's MCP server for the agent, as -c flags: never written into a
 * config file. */
static void
add_mcp(hd_strv *argv, const hd_runtime_turn *in)
{
	json_t *args;
	size_t i;

	if (in->mcp_url != NULL) {
		add_override_str(argv, "mcp_servers.huddle.url", in->mcp_url);
		if (in->mcp_token != NULL) /* proc.c sets HUDDLE_MCP_TOKEN */
			add_override_str(argv,
			    "mcp_servers.huddle.bearer_token_env_var",
			    "HUDDLE_MCP_TOKEN");
	} else if (in->mcp_command != NULL && in->mcp_command[0] != NULL) {
		add_override_str(
		    argv, "mcp_servers.huddle.command", in->mcp_command[0]);
		args = json_array();
		for (i = 1; in->mcp_command[i] != NULL; i++)
			json_array_append_new(
			    args, json_string(in->mcp_command[i]));
		add_override(argv, "mcp_servers.huddle.args", args);
		json_decref(args);
		/* Codex starts it with a few variables of its own choosing:
		 * the store is passed on by name, its value never on this
		 * command line (runtime.h hd_runtime__store_env) */
		if (hd_runtime__store_env() != NULL) {
			args = json_pack("[s]", "HUDDLE_STORE");
			if (args == NULL)
				argv->oom = 1;
			else
				add_override(
				    argv, "mcp_servers.huddle.env_vars", args);
			json_decref(args);
		}
	} else
		return;
	/* without it every call is refused: "requires approval, but
	 * approval policy is never" */
	add_override_str(
	    argv, "mcp_servers.huddle.default_tools_approval_mode", "approve");
}

/* ---- the thread's running token totals (in a file huddle owns) ---- */

static void
usage_load(hd_codex_usage *out, const char *home, const char *thread)
{
	char path[PATH_MAX], *text = NULL;
	json_t *j;

	memset(out, 0, sizeof(*out));
	if (thread == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", home, CODEX_USAGE_FILE);
	if (hd_read_file(&text, NULL, path, 65536, NULL) < 0 || text == NULL)
		return;
	j = json_loads(text, 0, NULL);
	free(text);
	if (json_is_object(j) && json_is_string(json_object_get(j, "thread")) &&
	    strcmp(json_string_value(json_object_get(j, "thread")), thread) ==
		0) {
		out->input = json_integer_value(json_object_get(j, "input"));
		out->cached = json_integer_value(json_object_get(j, "cached"));
		out->output = json_integer_value(json_object_get(j, "output"));
	}
	json_decref(j);
}

static void
usage_save(const char *home, const char *thread, const hd_codex_usage *u)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	json_t *j;

	if (thread == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", home, CODEX_USAGE_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	j = json_pack("{s:s, s:I, s:I, s:I}", "thread", thread, "input",
	    (json_int_t)u->input, "cached", (json_int_t)u->cached, "output",
	    (json_int_t)u->output);
	if (j != NULL && json_dump_file(j, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	json_decref(j);
}

/* The user's Codex config and login, copied once into the agent's own
 * CODEX_HOME (never written back): $CODEX_HOME, else ~/.codex. */
static int
seed_home(const char *home, hd_err *err)
{
	static const char *const names[] = {"config.toml", "auth.json", NULL};
	char dir[PATH_MAX - 32];

	hd_runtime__user_dir(dir, sizeof(dir), "CODEX_HOME", ".codex");
	return hd_runtime__seed_from(home, dir, names, err);
}

/* the parser behind hd_runtime__run_stream */
static int
codex_line(void *p, hd_runtime_emit *em, const char *line, size_t len)
{
	return hd_codex__stream_line(p, em, line, len);
}

static void
codex_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	hd_codex__stream_finish(p, em, exit_code, tail);
}

static int
codex_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config, *v;
	hd_runtime_cli c;
	hd_runtime_stream rs = {"codex", NULL, codex_line, codex_finish};
	hd_codex_usage base, after;
	hd_price price;
	const char *key;
	int rc;

	if ((rc = hd_runtime__cli_begin(&c, in, "codex", codex_check,
		 CODEX_DEFAULT_TIMEOUT_S, em, err)) < 0)
		goto done;
	/* CODEX_HOME: its sessions, so `exec resume` works across turns */
	if ((rc = seed_home(in->home_dir, err)) < 0) {
		rc = hd_runtime__fail(em, err, "codex: %s", err->msg);
		goto done;
	}
	hd_runtime__price(&price, &hd_runtime__codex, c.model,
	    json_object_get(cfg, "prices"), NULL);

	hd_strv_add(&c.extra, hd_runtime__env_pair("CODEX_HOME", in->home_dir));
	if ((rc = hd_runtime__bin(&c.found, &c.env, in, c.extra.v, "codex",
		 "codex", em, err)) < 0)
		goto done;

	/* codex exec --json --skip-git-repo-check [-m M] [-c k=v]...
	 *   [resume THREAD] PROMPT|- */
	hd_strv_adds(&c.argv, c.found);
	hd_strv_adds(&c.argv, "exec");
	hd_strv_adds(&c.argv, "--json");
	hd_strv_adds(&c.argv, "--skip-git-repo-check");
	if (c.model != NULL) {
		hd_strv_adds(&c.argv, "-m");
		hd_strv_adds(&c.argv, c.model);
	}
	json_object_foreach (
	    (json_t *)json_object_get(cfg, "overrides"), key, v)
		add_override(&c.argv, key, v);
	add_mcp(&c.argv, in);
	if (in->resume_session_id != NULL) {
		hd_strv_adds(&c.argv, "resume");
		hd_strv_adds(&c.argv, in->resume_session_id);
	}
	hd_runtime__cli_prompt(&c, in, "-");

	usage_load(&base, in->home_dir, in->resume_session_id);
	rs.parser = hd_codex__stream_new(&price, &base);
	rc = hd_runtime__cli_run(&c, in, &rs, em, err);
	if (rs.parser != NULL) {
		/* the thread's totals now, for the next run's difference (2) */
		hd_codex__stream_usage(rs.parser, &after);
		usage_save(in->home_dir, hd_codex__stream_thread(rs.parser),
		    &after);
	}
	hd_codex__stream_free(rs.parser);
done:
	hd_runtime__cli_dispose(&c);
	return rc;
}

/* The variable the configured provider reads its key from:
 * overrides "model_providers.<p>.env_key" (flat or as a table) for the
 * overrides' model_provider, else NULL (OpenAI's own). */
static const char *
provider_key_var(const json_t *ov)
{
	const char *p =
	    json_string_value(json_object_get(ov, "model_provider"));
	const char *key;
	const json_t *v;
	char flat[256];

	if (p == NULL)
		return NULL;
	snprintf(flat, sizeof(flat), "model_providers.%s.env_key", p);
	if ((key = json_string_value(json_object_get(ov, flat))) != NULL)
		return key;
	snprintf(flat, sizeof(flat), "model_providers.%s", p);
	if ((v = json_object_get(ov, flat)) != NULL)
		return json_string_value(json_object_get(v, "env_key"));
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(ov, "model_providers"), p),
	    "env_key"));
}

/* huddle doctor: the binary and its version, and credentials: the key
 * the configured provider reads, else OpenAI's, or a `codex login`
 * (auth.json in the agent's CODEX_HOME, or the user's it is seeded from). */
static void
codex_doctor(const hd_agent *a, const char *home_dir, json_t *report)
{
	const json_t *cfg = a->runtime_config;
	const char *var = provider_key_var(json_object_get(cfg, "overrides"));
	const char *openai[] = {"OPENAI_API_KEY", "CODEX_API_KEY", NULL};
	const char *own[] = {var, NULL};
	const char *src = getenv("CODEX_HOME"), *h = getenv("HOME");
	char path[PATH_MAX], needs[300];
	int login = 0;

	hd_runtime__doctor_bin(
	    report, a, hd_runtime__cfg_str(cfg, "bin", "codex"), "bin");
	if (home_dir != NULL) {
		snprintf(path, sizeof(path), "%s/auth.json", home_dir);
		login = access(path, R_OK) == 0;
	}
	if (!login && src != NULL && src[0] != '\0') {
		snprintf(path, sizeof(path), "%s/auth.json", src);
		login = access(path, R_OK) == 0;
	} else if (!login && h != NULL && h[0] != '\0') {
		snprintf(path, sizeof(path), "%s/.codex/auth.json", h);
		login = access(path, R_OK) == 0;
	}
	if (var != NULL) {
		snprintf(needs, sizeof(needs),
		    "%.200s (the provider's env_key)", var);
		hd_runtime__doctor_needs(report, a, needs, own, 0);
	} else
		hd_runtime__doctor_needs(report, a,
		    "OPENAI_API_KEY or CODEX_API_KEY, or a `codex login`",
		    openai, login);
}

/* ---- attaching by hand (6) ---- */

static char *
codex_attach_cmd(const hd_runtime_attach *x)
{
	hd_buf b = HD_BUF_INIT(0);

	if (x->stdio) {
		hd_buf_printf(&b, "codex mcp add %s -- ", x->name);
		hd_runtime__attach_stdio(&b, x);
	} else {
		/* double quotes: the shell puts the URL in ~/.codex (6) */
		hd_buf_printf(&b, "codex mcp add %s --url \"$%s\"", x->name,
		    x->url_var);
		if (x->token_var != NULL)
			hd_buf_printf(&b, " --bearer-token-env-var %s",
			    x->token_var);
	}
	return hd_buf_detach(&b);
}

static void
codex_attach_text(
    hd_buf *b, const hd_runtime_attach *x, const char *cmd, int step)
{
	if (!x->stdio)
		hd_buf_printf(b,
		    "\n# %d. Codex reads no variable in an MCP url: this puts "
		    "the URL in your own\n#    ~/.codex/config.toml, never in "
		    "the project%s.\n",
		    step,
		    x->token_var != NULL ? "; the token stays in the variable"
					 : "");
	else
		hd_buf_puts(b, "\n# Codex:\n");
	hd_buf_printf(b,
	    "%s\n#    Let it call huddle's tools without asking: add "
	    "default_tools_approval_mode = \"approve\"\n#    under "
	    "[mcp_servers.%s] in ~/.codex/config.toml\n",
	    cmd, x->name);
}

/* s as a TOML basic string: JSON's string escaping is valid TOML. -1
 * when memory ran out. */
static int
codex_attach_toml_str(hd_buf *b, const char *s)
{
	json_t *j = json_string(s);
	char *q = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	if (q != NULL)
		hd_buf_puts(b, q);
	free(q);
	json_decref(j);
	return q != NULL ? 0 : -1;
}

/* --format codex: over stdio the config.toml table; over HTTP the
 * command, since the URL must not be written into a file (6). */
static int
codex_attach_config(const hd_runtime_attach *x, json_t **doc, hd_buf *out,
    hd_err *err)
{
	char *cmd;

	*doc = NULL;
	if (x->stdio) {
		hd_buf_printf(out, "[mcp_servers.%s]\ncommand = ", x->name);
		if (codex_attach_toml_str(out, x->exe) < 0)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		hd_buf_puts(out, "\nargs = [\"--home\", ");
		if (codex_attach_toml_str(out, x->home) < 0)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		hd_buf_printf(out,
		    ", \"mcp\", \"--team\", \"%s\", \"--agent\", \"%s\"]\n"
		    "default_tools_approval_mode = \"approve\"\n",
		    x->team, x->agent);
		return 0;
	}
	if ((cmd = codex_attach_cmd(x)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	hd_buf_printf(out,
	    "# Codex reads no variable in an MCP url: this puts the signed "
	    "URL in your own\n# ~/.codex/config.toml (never the project's). "
	    "First: %s (a secret)\n%s\n",
	    x->url_var, cmd);
	free(cmd);
	return 0;
}

static const hd_runtime_attacher codex_attach = {
    .format = "codex",
    .command = codex_attach_cmd,
    .text = codex_attach_text,
    .json = NULL,
    .config = codex_attach_config,
};

const hd_runtime_adapter hd_runtime__codex = {
    .name = "codex",
    .label = "codex",
    .is_scripted = 0,
    .capabilities = hd_runtime__cli_caps, /* CODEX_HOME: its sessions */
    .check_config = codex_check,
    .prices = codex_prices,
    .attach = &codex_attach,
    .run = codex_run,
    .doctor = codex_doctor,
};
