/*
 * claude.c -- the `claude-code` runtime: Claude Code's CLI, driven one
 * turn at a time (`claude -p ... --output-format stream-json --verbose`),
 * its session resumed turn after turn, huddle's MCP server handed to it
 * as its only MCP server. First the stream parser, then the adapter.
 *  (1) The stream is read line by line as it arrives, each line parsed
 *      whole with Jansson: tool_use blocks become tool_call events,
 *      tool_result blocks tool_result (named after the call they answer),
 *      text blocks text_delta, api_retry lines a status. A line that is
 *      not a JSON object with a type is counted, never fatal; unknown
 *      types are skipped.
 *  (2) The last `result` line decides the turn: its `result` is the
 *      reply, its `session_id` the session to resume, its total_cost_usd
 *      and usage the cost (reported, not estimated). `is_error` is what
 *      says an API error failed the turn: the subtype stays "success".
 *      The usage on assistant lines is partial and never summed.
 *  (3) A process that exited non-zero failed the turn, whatever its
 *      stream said; without a result line the message is the exit status
 *      and the tail of its standard error.
 *  (4) Every message starts `claude-code: `, is one line, and quotes at
 *      most CLAUDE_QUOTE_MAX bytes of what the CLI said.
 *  (5) The adapter's child is proc.c's: its own process group, killed
 *      whole on timeout or abort; stdin is /dev/null unless the prompt
 *      is too long for one argument, when it goes on stdin.
 *  (6) huddle writes only huddle-mcp.json in the agent's home (and, with
 *      "home": "private", Claude's own state goes under <home>/claude
 *      through CLAUDE_CONFIG_DIR); with "home": "user" Claude Code runs
 *      against the user's own login and settings. The work directory is
 *      stable per agent, since Claude keys sessions by it.
 * Callers: runtime.c's adapter table; the parser also the tests.
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

#define CLAUDE_QUOTE_MAX 300
#define CLAUDE_TOOL_NAMES 64 /* tool_use ids remembered for their results */

struct hd_claude_stream {
	json_t *result; /* the last result line */
	char *session;  /* from init or result */
	json_t *tools;  /* tool_use id -> name */
	int said_text;  /* a text block was sent: separate the next */
	size_t malformed;
};

hd_claude_stream *
hd_claude__stream_new(void)
{
	hd_claude_stream *cs = calloc(1, sizeof(*cs));

	if (cs != NULL && (cs->tools = json_object()) == NULL) {
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
	return cs->session;
}

static void
set_session(hd_claude_stream *cs, const json_t *line)
{
	const char *sid =
	    json_string_value(json_object_get(line, "session_id"));

	if (sid == NULL || sid[0] == '\0' ||
	    (cs->session != NULL && strcmp(cs->session, sid) == 0))
		return;
	free(cs->session);
	cs->session = strdup(sid);
}

/* The first line of s, at most CLAUDE_QUOTE_MAX bytes on a character
 * boundary, into b (4). */
static void
quote(hd_buf *b, const char *s)
{
	size_t n = strcspn(s, "\r\n");

	if (n > CLAUDE_QUOTE_MAX) {
		n = CLAUDE_QUOTE_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	hd_buf_put(b, s, n);
}

/* The last non-empty line of s (a standard-error tail), or NULL. */
static const char *
last_line(const char *s)
{
	const char *end = s + strlen(s), *start;

	while (
	    end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (end == s)
		return NULL;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	return start;
}

/* A tool_result's text: a string, or the text blocks of an array. */
static json_t *
result_text(const json_t *content)
{
	hd_buf b = HD_BUF_INIT(0);
	const json_t *blk;
	json_t *out;
	size_t i;

	if (json_is_string(content))
		return json_incref((json_t *)content);
	json_array_foreach (content, i, blk) {
		const char *t = json_string_value(json_object_get(blk, "text"));

		if (t == NULL)
			continue;
		if (b.len > 0)
			hd_buf_putc(&b, '\n');
		hd_buf_puts(&b, t);
	}
	out = json_stringn(hd_buf_cstr(&b), b.len);
	hd_buf_dispose(&b);
	return out != NULL ? out : json_string("");
}

static void
on_assistant(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *msg)
{
	const json_t *blk;
	hd_runtime_event ev;
	const char *type, *text;
	size_t i;

	json_array_foreach (json_object_get(msg, "content"), i, blk) {
		type = json_string_value(json_object_get(blk, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0 &&
		    (text = json_string_value(json_object_get(blk, "text"))) !=
			NULL &&
		    text[0] != '\0') {
			if (cs->said_text)
				hd_runtime_emit_text(em, "\n\n", 2);
			hd_runtime_emit_text(em, text, strlen(text));
			cs->said_text = 1;
		} else if (strcmp(type, "tool_use") == 0) {
			memset(&ev, 0, sizeof(ev));
			ev.kind = HD_RT_TOOL_CALL;
			ev.name =
			    json_string_value(json_object_get(blk, "name"));
			ev.id = json_string_value(json_object_get(blk, "id"));
			ev.data = json_object_get(blk, "input");
			if (ev.id != NULL && ev.name != NULL &&
			    json_object_size(cs->tools) < CLAUDE_TOOL_NAMES)
				json_object_set_new(
				    cs->tools, ev.id, json_string(ev.name));
			hd_runtime_emit_event(em, &ev);
		}
	}
}

static void
on_user(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *msg)
{
	const json_t *blk;
	hd_runtime_event ev;
	json_t *text;
	const char *type;
	size_t i;

	json_array_foreach (json_object_get(msg, "content"), i, blk) {
		type = json_string_value(json_object_get(blk, "type"));
		if (type == NULL || strcmp(type, "tool_result") != 0)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.kind = HD_RT_TOOL_RESULT;
		ev.id = json_string_value(json_object_get(blk, "tool_use_id"));
		ev.name = ev.id != NULL ? json_string_value(
					      json_object_get(cs->tools, ev.id))
					: NULL;
		ev.is_error = json_is_true(json_object_get(blk, "is_error"));
		text = result_text(json_object_get(blk, "content"));
		ev.data = text;
		hd_runtime_emit_event(em, &ev);
		json_decref(text);
	}
}

static void
on_system(hd_claude_stream *cs, hd_runtime_emit *em, const json_t *line)
{
	const char *sub = json_string_value(json_object_get(line, "subtype"));
	const json_t *srv;
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	if (sub == NULL)
		return;
	if (strcmp(sub, "init") == 0) {
		set_session(cs, line);
		json_array_foreach (
		    json_object_get(line, "mcp_servers"), i, srv) {
			const char *st =
			    json_string_value(json_object_get(srv, "status"));
			const char *name =
			    json_string_value(json_object_get(srv, "name"));

			if (st != NULL && name != NULL &&
			    strcmp(st, "connected") != 0) {
				hd_buf_reset(&b);
				hd_buf_printf(&b,
				    "claude-code: MCP server %.64s %s", name,
				    strcmp(st, "failed") == 0
					? "failed to start"
					: st);
				hd_runtime_emit_status(em, hd_buf_cstr(&b));
			}
		}
	} else if (strcmp(sub, "api_retry") == 0) {
		hd_buf_printf(&b,
		    "claude-code: API error %lld, retry %lld of %lld",
		    (long long)json_integer_value(
			json_object_get(line, "error_status")),
		    (long long)json_integer_value(
			json_object_get(line, "attempt")),
		    (long long)json_integer_value(
			json_object_get(line, "max_retries")));
		hd_runtime_emit_status(em, hd_buf_cstr(&b));
	}
	hd_buf_dispose(&b);
}

int
hd_claude__stream_line(
    hd_claude_stream *cs, hd_runtime_emit *em, const char *line, size_t len)
{
	json_t *j;
	const char *type;
	size_t i = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len)
		return 0; /* a blank line says nothing */
	j = json_loadb(line, len, 0, NULL);
	if (!json_is_object(j) ||
	    (type = json_string_value(json_object_get(j, "type"))) == NULL) {
		json_decref(j);
		cs->malformed++;
		return -1;
	}
	if (strcmp(type, "assistant") == 0)
		on_assistant(cs, em, json_object_get(j, "message"));
	else if (strcmp(type, "user") == 0)
		on_user(cs, em, json_object_get(j, "message"));
	else if (strcmp(type, "system") == 0)
		on_system(cs, em, j);
	else if (strcmp(type, "result") == 0) {
		set_session(cs, j);
		json_decref(cs->result);
		cs->result = json_incref(j);
	}
	json_decref(j);
	return 0;
}

/* The cost the result line reports (2); 0 when it reports none. */
static int
result_cost(hd_runtime_cost *c, const json_t *result)
{
	const json_t *usd = json_object_get(result, "total_cost_usd");
	const json_t *u = json_object_get(result, "usage");

	memset(c, 0, sizeof(*c));
	if (!json_is_number(usd) || json_number_value(usd) < 0 ||
	    !isfinite(json_number_value(usd)))
		return 0;
	c->usd = json_number_value(usd);
	c->microcents = (int64_t)llround(c->usd * 1e8);
	c->input_tokens =
	    json_integer_value(json_object_get(u, "input_tokens")) +
	    json_integer_value(
		json_object_get(u, "cache_creation_input_tokens")) +
	    json_integer_value(json_object_get(u, "cache_read_input_tokens"));
	c->output_tokens =
	    json_integer_value(json_object_get(u, "output_tokens"));
	c->estimated = 0;
	return 1;
}

/* The permission denials, as one warning (a turn can go on without a
 * tool; the model hears the refusal). */
static void
denials(hd_runtime_emit *em, const json_t *result)
{
	const json_t *list = json_object_get(result, "permission_denials"), *d;
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	if (json_array_size(list) == 0)
		return;
	hd_buf_puts(&b, "claude-code: permission denied for");
	json_array_foreach (list, i, d) {
		const char *n =
		    json_string_value(json_object_get(d, "tool_name"));

		if (i == 8) {
			hd_buf_printf(
			    &b, " and %zu more", json_array_size(list) - 8);
			break;
		}
		hd_buf_printf(&b, "%s %.80s", i ? "," : "", n ? n : "a tool");
	}
	hd_runtime_emit_status(em, hd_buf_cstr(&b));
	hd_buf_dispose(&b);
}

void
hd_claude__stream_finish(hd_claude_stream *cs, hd_runtime_emit *em,
    int exit_code, const char *stderr_tail)
{
	const json_t *r = cs->result;
	const char *text = json_string_value(json_object_get(r, "result"));
	hd_runtime_cost cost;
	hd_buf msg = HD_BUF_INIT(0);
	int failed;

	if (stderr_tail == NULL)
		stderr_tail = "";
	if (r != NULL) {
		if (result_cost(&cost, r))
			hd_runtime_emit_cost(em, &cost);
		denials(em, r);
	}
	failed = r == NULL || json_is_true(json_object_get(r, "is_error")) ||
		 exit_code != 0;
	if (!failed) {
		hd_runtime_emit_reply(em, text != NULL ? text : "",
		    text != NULL ? strlen(text) : 0);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, cs->session);
		return;
	}
	hd_buf_puts(&msg, "claude-code: ");
	if (r != NULL && json_is_true(json_object_get(r, "is_error"))) {
		const json_t *st = json_object_get(r, "api_error_status");

		if (json_is_integer(st))
			hd_buf_printf(&msg, "API error %lld: ",
			    (long long)json_integer_value(st));
		quote(&msg, text != NULL && text[0] ? text : "the turn failed");
	} else if (exit_code < 0)
		hd_buf_puts(&msg, "killed");
	else if (exit_code != 0) {
		hd_buf_printf(&msg, "exit status %d", exit_code);
		if (last_line(stderr_tail) != NULL) {
			hd_buf_puts(&msg, ": ");
			quote(&msg, last_line(stderr_tail));
		} else if (text != NULL && text[0] != '\0') {
			hd_buf_puts(&msg, ": ");
			quote(&msg, text);
		}
	} else
		hd_buf_puts(&msg, "the stream ended without a result line");
	if (r == NULL && cs->malformed > 0)
		hd_buf_printf(&msg, " (%zu malformed line%s)", cs->malformed,
		    cs->malformed == 1 ? "" : "s");
	hd_runtime_emit_error(em, "%s", hd_buf_cstr(&msg));
	hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, cs->session);
	hd_buf_dispose(&msg);
}

/* ---- the adapter ---- */

#define CLAUDE_DEFAULT_TIMEOUT_S 600
#define CLAUDE_LINE_MAX (8 * 1024 * 1024) /* one stream-json line */
#define CLAUDE_ARG_PROMPT_MAX (96 * 1024) /* larger prompts go on stdin */

static void
claude_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_WRAPPED_ONESHOT;
	/* its MCP config, its work directory and (home "private") its
	 * sessions live in one home per agent */
	out->native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	out->native_home.persist = 1;
	out->native_memory = HD_NATIVE_PRESERVE;
	out->native_skills = HD_NATIVE_PRESERVE;
}

static int
claude_check(const json_t *cfg, hd_err *err)
{
	static const char *const keys[] = {"bin", "model", "workdir",
	    "allowed_tools", "env", "timeout_s", "home", "max_turns", NULL};
	const json_t *v;
	const char *home;
	int rc;

	if ((rc = hd_runtime__check_keys(cfg, keys, "claude-code", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "bin", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "model", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "workdir", err)) < 0 ||
	    (rc = hd_runtime__check_strings(cfg, "allowed_tools", err)) < 0 ||
	    (rc = hd_runtime__check_env(cfg, err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "timeout_s", 1, 86400, err)) < 0 ||
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

typedef struct claude_run_ctx {
	hd_claude_stream *cs;
	hd_runtime_emit *em;
	hd_lines lines;
} claude_run_ctx;

static void
claude_line(void *ctx, const char *line, size_t len, int cut)
{
	claude_run_ctx *c = ctx;

	(void)cut; /* a cut line is not JSON: the parser counts it */
	hd_claude__stream_line(c->cs, c->em, line, len);
}

static void
claude_out(void *ctx, const char *data, size_t n)
{
	hd_lines_feed(&((claude_run_ctx *)ctx)->lines, data, n);
}

static int
claude_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config, *v;
	hd_strv argv = {0}, env = {0}, extra = {0};
	hd_buf allowed = HD_BUF_INIT(0);
	hd_proc_spec ps;
	hd_proc_result pr;
	claude_run_ctx ctx;
	const char *bin, *model, *workdir, *home;
	char mcp[PATH_MAX], work[PATH_MAX], msg[96], *found = NULL;
	int64_t timeout_ms = CLAUDE_DEFAULT_TIMEOUT_S * 1000LL;
	size_t i, plen = strlen(in->prompt);
	int rc;

	memset(&ps, 0, sizeof(ps));
	memset(&pr, 0, sizeof(pr));
	memset(&ctx, 0, sizeof(ctx));
	if ((rc = claude_check(cfg, err)) < 0)
		return hd_runtime__fail(em, err, "claude-code: %s", err->msg);
	if (in->home_dir == NULL)
		return hd_runtime__fail(em, err,
		    "claude-code: agent %s has no home directory",
		    in->agent->id);
	bin = hd_runtime__cfg_str(cfg, "bin", "claude");
	model = hd_runtime__cfg_str(cfg, "model", NULL);
	home = hd_runtime__cfg_str(cfg, "home", "user");
	if ((v = json_object_get(cfg, "timeout_s")) != NULL)
		timeout_ms = json_integer_value(v) * 1000;
	if (in->timeout_ms > 0 && in->timeout_ms < timeout_ms)
		timeout_ms = in->timeout_ms;
	/* sessions are keyed by the working directory: a stable one per
	 * agent unless the config names one */
	if ((rc = hd_runtime__workdir(work, sizeof(work), cfg, in->home_dir,
		 "claude-code", err)) < 0)
		return hd_runtime__fail(em, err, "%s", err->msg);
	workdir = work;
	snprintf(mcp, sizeof(mcp), "%s/%s", in->home_dir, HD_RUNTIME_MCP_FILE);

	/* the environment: the user's, the config's, then ours */
	if (strcmp(home, "private") == 0) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/claude", in->home_dir);
		if ((rc = hd_mkdir_p(dir, 0700, err)) < 0)
			return hd_runtime__fail(
			    em, err, "claude-code: %s", err->msg);
		hd_strv_add(
		    &extra, hd_runtime__env_pair("CLAUDE_CONFIG_DIR", dir));
	}
	hd_runtime__env(&env, in, json_object_get(cfg, "env"), extra.v);
	if ((found = hd_runtime__which(
		 bin, hd_runtime__env_get(env.v, "PATH"))) == NULL) {
		rc = hd_runtime__fail(em, err,
		    "claude-code: '%s' not found on PATH (runtime_config.bin)",
		    bin);
		goto done;
	}

	hd_strv_adds(&argv, found);
	hd_strv_adds(&argv, "-p");
	if (plen <= CLAUDE_ARG_PROMPT_MAX)
		hd_strv_adds(&argv, in->prompt);
	else { /* past the kernel's limit for one argument: stdin */
		ps.input = in->prompt;
		ps.input_len = plen;
	}
	hd_strv_adds(&argv, "--output-format");
	hd_strv_adds(&argv, "stream-json");
	hd_strv_adds(&argv, "--verbose");
	if (access(mcp, R_OK) == 0) {
		hd_strv_adds(&argv, "--mcp-config");
		hd_strv_adds(&argv, mcp);
	}
	hd_strv_adds(&argv, "--strict-mcp-config");
	hd_buf_puts(&allowed, "mcp__huddle");
	json_array_foreach (json_object_get(cfg, "allowed_tools"), i, v) {
		hd_buf_putc(&allowed, ',');
		hd_buf_puts(&allowed, json_string_value(v));
	}
	hd_strv_adds(&argv, "--allowedTools");
	hd_strv_adds(&argv, hd_buf_cstr(&allowed));
	if (model != NULL) {
		hd_strv_adds(&argv, "--model");
		hd_strv_adds(&argv, model);
	}
	if ((v = json_object_get(cfg, "max_turns")) != NULL) {
		snprintf(
		    msg, sizeof(msg), "%lld", (long long)json_integer_value(v));
		hd_strv_adds(&argv, "--max-turns");
		hd_strv_adds(&argv, msg);
	}
	if (in->resume_session_id != NULL) {
		hd_strv_adds(&argv, "--resume");
		hd_strv_adds(&argv, in->resume_session_id);
	}
	if (argv.oom || env.oom || extra.oom || hd_buf_failed(&allowed)) {
		rc = hd_runtime__fail(em, err, "out of memory");
		goto done;
	}

	if ((ctx.cs = hd_claude__stream_new()) == NULL) {
		rc = hd_runtime__fail(em, err, "out of memory");
		goto done;
	}
	ctx.em = em;
	hd_lines_init(&ctx.lines, CLAUDE_LINE_MAX, claude_line, &ctx);
	ps.argv = argv.v;
	ps.envp = env.v;
	ps.cwd = workdir;
	ps.timeout_ms = timeout_ms;
	ps.abort = in->abort;
	ps.on_out = claude_out;
	ps.ctx = &ctx;
	if ((rc = hd_proc_run(&pr, &ps, err)) < 0) {
		rc = hd_runtime__fail(em, err, "claude-code: %s", err->msg);
		goto done;
	}
	rc = hd_runtime__ended(em, &pr, timeout_ms, "claude-code", err);
	if (rc == 1) { /* it exited by itself: the stream tells the rest */
		rc = 0;
		hd_claude__stream_finish(ctx.cs, em, pr.exit_code, pr.tail);
	}
done:
	if (ctx.cs != NULL) {
		hd_lines_dispose(&ctx.lines);
		hd_claude__stream_free(ctx.cs);
	}
	hd_proc_result_dispose(&pr);
	hd_buf_dispose(&allowed);
	hd_strv_dispose(&argv);
	hd_strv_dispose(&env);
	hd_strv_dispose(&extra);
	free(found);
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

const hd_runtime_adapter hd_runtime__claude = {
    .name = "claude-code",
    .label = "claude-code",
    .is_scripted = 0,
    .capabilities = claude_caps,
    .check_config = claude_check,
    .run = claude_run,
    .doctor = claude_doctor,
};
