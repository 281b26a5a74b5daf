/*
 * hermes.c -- the `hermes` runtime: Nous Research's Hermes Agent, a
 * Python CLI agent with a persistent home (memory, skills, sessions),
 * driven one turn at a time with its scripted one-shot entry point, in a
 * HERMES_HOME of the agent's own. First the output parser, then the
 * adapter.
 * What it follows, from Hermes's own published documentation:
 *   CLI:    https://hermes-agent.nousresearch.com/docs/reference/cli-commands
 *           (source: github.com/NousResearch/hermes-agent,
 *           website/docs/reference/cli-commands.md)
 *   Config: https://hermes-agent.nousresearch.com/docs/user-guide/configuration
 *   MCP:    https://hermes-agent.nousresearch.com/docs/user-guide/features/mcp
 *  (1) A turn runs `hermes [--resume SESSION] --usage-file FILE [-m MODEL]
 *      [--provider P] -z PROMPT`. `-z` is documented as "single prompt in,
 *      final response text out", nothing else on either output: the
 *      whole of standard output is the reply (emitted as it comes, then as
 *      the reply). `--usage-file` writes a JSON report after the run,
 *      "even when the run fails": estimated_cost_usd, input_tokens,
 *      output_tokens, session_id, completed, failed. Its session_id is
 *      the session the next turn resumes with the global `--resume`
 *      ("Resume a previous session by ID"). The file is huddle's, in the
 *      home, removed before each run so a stale one is never read.
 *  (2) The docs give no exit codes for -z: a run succeeded when it exited
 *      0 and its usage report, when there is one, does not say failed;
 *      otherwise the turn ends in error quoting the end of standard error
 *      (`hermes: exit status 1: ...`). Cost is the report's
 *      estimated_cost_usd (Hermes's own estimate: flagged estimated);
 *      without a report, runtime.c's SPEC 8.2 estimate. The docs are
 *      silent on -z reading its prompt from standard input, so a prompt
 *      past what one argument may carry (HD_RUNTIME_ARG_PROMPT_MAX) is
 *      refused with a message instead.
 *  (3) The home is HERMES_HOME, the "home directory variable" the docs
 *      name (default ~/.hermes): config.yaml, .env, auth.json, SOUL.md,
 *      memories/, skills/, sessions/, state.db, logs/. huddle writes
 *      exactly two things there, everything else being Hermes's, never
 *      read or touched (home.c (4)):
 *       a. Seeds, copied once when absent (home.c (4)), from the user's
 *          own home ($HERMES_HOME, else ~/.hermes): config.yaml and .env
 *          (the configuration page: ".env  # API keys and secrets"),
 *          owner-only (home.c keeps the owner's bits, at least 0600).
 *       b. huddle's MCP server for this agent, refreshed every run. Hermes
 *          reads MCP servers only from config.yaml's top-level mcp_servers
 *          mapping (command/args/env for stdio, url/headers for HTTP); it
 *          has no file of its own for them. So huddle owns one marked
 *          block at the end of config.yaml, between HERMES_BEGIN and
 *          HERMES_END comment lines, and rewrites only that block: the
 *          rest of the file (the seed, the user's or Hermes's edits) is
 *          kept byte for byte. huddle has no YAML library (its chosen
 *          dependencies have none), so it writes no YAML of its own
 *          making: the block is `mcp_servers: ` then a one-line JSON
 *          object from Jansson, and a JSON object is a YAML flow mapping
 *          (YAML 1.2 is a superset of JSON; Hermes's hermes_cli/config.py
 *          loads config.yaml with PyYAML's safe_load, which reads
 *          JSON-shaped flow mappings; the test's stand-in loads it the
 *          same way). A top-level mcp_servers outside the block (the user's seeded one, or the
 *          block rewritten by Hermes's own `hermes config set`, which
 *          drops comments) would be a duplicate key: the turn refuses
 *          with a message saying so rather than guess at YAML.
 *      The file is replaced through a temporary file and rename(), mode
 *      0600: it carries the bearer token literally (the MCP page documents
 *      ${VAR} in headers for catalog entries only, so huddle does not
 *      rely on it); the home is 0700 (home.c). Hermes's managed scope
 *      (HERMES_MANAGED_DIR, docs/user-guide/managed-scope) would merge a
 *      file of huddle's own, but it is an administrator's override that
 *      would replace /etc/hermes's policy: not used. Besides these, the
 *      home holds what every runtime home does: home.c's generic
 *      huddle-mcp.json (Hermes never reads it) and the work directory
 *      (cfg.c (2), unless runtime_config.workdir names another).
 *  (4) Attaching by hand (`huddle attach`) is not offered: Hermes's config
 *      is YAML that only its own tools should edit.
 * Callers: runtime.c's adapter table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

#define HERMES_DEFAULT_TIMEOUT_S 600
#define HERMES_QUOTE_MAX 300
#define HERMES_CONFIG "config.yaml"
#define HERMES_CONFIG_MAX (4 * 1024 * 1024)
#define HERMES_BEGIN                                                           \
	"# >>> huddle: its MCP server for this agent, rewritten every run; "    \
	"edit above this line >>>"
#define HERMES_END "# <<< huddle <<<"

/* ---- the output: plain text, the reply (1) ---- */

typedef struct hermes_out {
	hd_buf reply;
	size_t lines;
	char usage_path[PATH_MAX];
} hermes_out;

static int
hermes_line(void *p, hd_runtime_emit *em, const char *line, size_t len)
{
	hermes_out *o = p;

	if (o->lines++ > 0) {
		hd_buf_putc(&o->reply, '\n');
		hd_runtime_emit_text(em, "\n", 1);
	}
	hd_buf_put(&o->reply, line, len);
	hd_runtime_emit_text(em, line, len);
	return 0;
}

/* One line, no control characters or trailing blank, at most
 * HERMES_QUOTE_MAX bytes on a character boundary (hd_runtime__quote);
 * returns the bytes added, 0 when s says nothing. */
static size_t
quote(hd_buf *b, const char *s)
{
	return s != NULL ? hd_runtime__quote(
			       b, s, strlen(s), HERMES_QUOTE_MAX, 0)
			 : 0;
}

static int64_t
usage_int(const json_t *u, const char *key)
{
	const json_t *v = json_object_get(u, key);

	return json_is_integer(v) && json_integer_value(v) > 0
		   ? (int64_t)json_integer_value(v)
		   : 0;
}

static void
hermes_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	hermes_out *o = p;
	char *text = NULL, status[64];
	json_t *u = NULL;
	const char *sid = NULL, *t;
	hd_buf msg = HD_BUF_INIT(0), q = HD_BUF_INIT(0);
	hd_runtime_cost c;
	hd_proc_result pr;
	const json_t *usd;

	if (hd_read_file(&text, NULL, o->usage_path, 1024 * 1024, NULL) == 0 &&
	    text != NULL)
		u = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_object(u)) {
		json_decref(u);
		u = NULL;
	}
	if (u != NULL) {
		sid = json_string_value(json_object_get(u, "session_id"));
		if ((usd = json_object_get(u, "estimated_cost_usd")) != NULL &&
		    json_is_number(usd) && json_number_value(usd) >= 0) {
			memset(&c, 0, sizeof(c));
			c.usd = json_number_value(usd);
			c.microcents = (int64_t)(c.usd * 1e8 + 0.5);
			c.input_tokens = usage_int(u, "input_tokens") +
					 usage_int(u, "cache_read_tokens") +
					 usage_int(u, "cache_write_tokens");
			c.output_tokens = usage_int(u, "output_tokens");
			c.estimated = 1; /* Hermes's estimate (2) */
			hd_runtime_emit_cost(em, &c);
		}
	}
	if (exit_code == 0 &&
	    (u == NULL || !json_is_true(json_object_get(u, "failed")))) {
		hd_runtime_emit_reply(em, hd_buf_cstr(&o->reply), o->reply.len);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, sid);
		json_decref(u);
		return;
	}
	memset(&pr, 0, sizeof(pr));
	pr.exit_code = exit_code;
	hd_proc_status_text(status, sizeof(status), &pr);
	hd_buf_printf(&msg, "hermes: %s", exit_code == 0 ? "the run failed"
							 : status);
	t = tail;
	while (t != NULL && (*t == '\n' || *t == ' '))
		t++;
	if (quote(&q, t) > 0 && !hd_buf_failed(&q))
		hd_buf_printf(&msg, ": %s", hd_buf_cstr(&q));
	else if (u != NULL && json_is_true(json_object_get(u, "failed")))
		hd_buf_puts(&msg, " (its usage report says failed)");
	hd_buf_dispose(&q);
	hd_runtime_emit_error(em, "%s", hd_buf_cstr(&msg));
	hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
	hd_buf_dispose(&msg);
	json_decref(u);
}

/* ---- the adapter ---- */

static int
hermes_check(const json_t *cfg, hd_err *err)
{
	static const char *const keys[] = {"bin", "model", "provider",
	    "workdir", "env", "timeout_s", NULL};

	int rc;

	if ((rc = hd_runtime__cli_check(cfg, keys, "hermes", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "provider", err)) < 0)
		return rc;
	return 0;
}

/* The user's own Hermes home: $HERMES_HOME, else ~/.hermes; "" when
 * neither can be told. */
static void
user_home(char *out, size_t outlen)
{
	hd_runtime__user_dir(out, outlen, "HERMES_HOME", ".hermes");
}

/* (3a): config.yaml and .env, copied once when absent. */
static int
seed_home(const char *home, hd_err *err)
{
	static const char *const names[] = {HERMES_CONFIG, ".env", NULL};
	char dir[PATH_MAX - 32];

	user_home(dir, sizeof(dir));
	return hd_runtime__seed_from(home, dir, names, err);
}

/* The mcp_servers value huddle owns: {"huddle": {...}}, one line of
 * JSON (3b); NULL when there is no MCP server to give. */
static char *
mcp_json(const hd_runtime_turn *in)
{
	json_t *srv = NULL, *args, *env, *all;
	char bearer[1024], *s;
	size_t i;

	if (in->mcp_url != NULL) {
		srv = json_pack("{s:s}", "url", in->mcp_url);
		if (srv != NULL && in->mcp_token != NULL) {
			snprintf(bearer, sizeof(bearer), "Bearer %s",
			    in->mcp_token);
			json_object_set_new(srv, "headers",
			    json_pack("{s:s}", "Authorization", bearer));
		}
	} else if (in->mcp_command != NULL && in->mcp_command[0] != NULL) {
		args = json_array();
		for (i = 1; in->mcp_command[i] != NULL; i++)
			json_array_append_new(
			    args, json_string(in->mcp_command[i]));
		/* the store, which Hermes would not pass on by itself; this
		 * file is owner-only (3b) */
		env = hd_runtime__store_env() != NULL
		    ? json_pack("{s:s}", "HUDDLE_STORE", hd_runtime__store_env())
		    : json_object();
		srv = json_pack("{s:s, s:o, s:o}", "command",
		    in->mcp_command[0], "args", args, "env", env);
	}
	if (srv == NULL)
		return NULL;
	all = json_pack("{s:o}", "huddle", srv);
	s = all != NULL ? json_dumps(all, JSON_PRESERVE_ORDER) : NULL;
	json_decref(all);
	return s;
}

/* The end of the line starting at p (its '\n' or the NUL). */
static const char *
line_end(const char *p)
{
	const char *e = strchr(p, '\n');

	return e != NULL ? e : p + strlen(p);
}

/*
 * text without huddle's block (3b) into out; -1 when a top-level
 * mcp_servers key stands outside it.
 */
static int
strip_block(hd_buf *out, const char *text)
{
	const char *p = text, *e;
	size_t n;
	int in_block = 0, clash = 0;

	while (*p != '\0') {
		e = line_end(p);
		n = (size_t)(e - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (!in_block && n == strlen(HERMES_BEGIN) &&
		    memcmp(p, HERMES_BEGIN, n) == 0)
			in_block = 1;
		else if (in_block) {
			if (n == strlen(HERMES_END) &&
			    memcmp(p, HERMES_END, n) == 0)
				in_block = 0;
		} else {
			if (strncmp(p, "mcp_servers", 11) == 0 &&
			    (p[11] == ':' || p[11] == ' ' || p[11] == '\t'))
				clash = 1;
			hd_buf_put(out, p, (size_t)(e - p));
			if (*e == '\n')
				hd_buf_putc(out, '\n');
		}
		p = *e == '\n' ? e + 1 : e;
	}
	return clash ? -1 : 0;
}

/* (3b): rewrite huddle's block at the end of home/config.yaml. */
static int
write_mcp_block(const hd_runtime_turn *in, hd_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX], *text = NULL, *js = NULL;
	hd_buf b = HD_BUF_INIT(0);
	size_t len = 0;
	int fd = -1, rc = 0, e = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", in->home_dir,
		HERMES_CONFIG) >= sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.huddle-XXXXXX",
		in->home_dir, HERMES_CONFIG) >= sizeof(tmp))
		return hd_err_set(
		    err, HD_EINVAL, "path too long in %s", in->home_dir);
	if ((rc = hd_read_file(&text, &len, path, HERMES_CONFIG_MAX, err)) <
		0) {
		if (rc != HD_ENOTFOUND)
			return rc;
		hd_err_clear(err);
		rc = 0;
	}
	if (text != NULL && strlen(text) != len) {
		free(text);
		return hd_err_set(
		    err, HD_EINVAL, "%s holds a NUL byte: not YAML", path);
	}
	if (strip_block(&b, text != NULL ? text : "") < 0) {
		free(text);
		hd_buf_dispose(&b);
		return hd_err_set(err, HD_EINVAL,
		    "%s has a top-level mcp_servers of its own (seeded from "
		    "yours, or huddle's block rewritten by Hermes); huddle "
		    "owns that key in an agent's Hermes home: remove it there "
		    "(huddle adds its own server every run)",
		    path);
	}
	free(text);
	if (b.len > 0 && b.ptr[b.len - 1] != '\n')
		hd_buf_putc(&b, '\n');
	if ((js = mcp_json(in)) != NULL)
		hd_buf_printf(&b, "%s\nmcp_servers: %s\n%s\n", HERMES_BEGIN,
		    js, HERMES_END);
	free(js);
	if (hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0 || fchmod(fd, 0600) != 0)
		e = errno;
	else {
		const char *p = hd_buf_cstr(&b);
		size_t left = b.len;
		ssize_t n;

		while (left > 0 && e == 0) {
			if ((n = write(fd, p, left)) < 0) {
				if (errno != EINTR)
					e = errno;
				continue;
			}
			p += n;
			left -= (size_t)n;
		}
	}
	if (fd >= 0 && close(fd) != 0 && e == 0)
		e = errno;
	if (e == 0 && rename(tmp, path) != 0)
		e = errno;
	if (e != 0) {
		if (fd >= 0)
			unlink(tmp);
		rc = hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(e));
	}
	hd_buf_dispose(&b);
	return rc;
}

/* (1): an empty file for the usage report, outside the home (nothing
 * of huddle's but (3)'s is written there), removed after the run. */
static int
usage_file(char *out, size_t outlen, hd_err *err)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	if ((size_t)snprintf(out, outlen, "%s/huddle-hermes-usage-XXXXXX",
		tmp) >= outlen) {
		out[0] = '\0';
		return hd_err_set(err, HD_EINVAL, "path too long in %s", tmp);
	}
	if ((fd = mkostemp(out, O_CLOEXEC)) < 0) {
		out[0] = '\0';
		return hd_err_set(err, HD_ERR, "cannot create a file in %s: %s",
		    tmp, strerror(errno));
	}
	close(fd);
	return 0;
}

static int
hermes_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config;
	hd_runtime_cli c;
	hermes_out o;
	hd_runtime_stream rs = {"hermes", NULL, hermes_line, hermes_finish};
	const char *provider = hd_runtime__cfg_str(cfg, "provider", NULL);
	int rc;

	memset(&o, 0, sizeof(o));
	if ((rc = hd_runtime__cli_begin(&c, in, "hermes", hermes_check,
		 HERMES_DEFAULT_TIMEOUT_S, em, err)) < 0)
		goto done;
	if (strlen(in->prompt) > HD_RUNTIME_ARG_PROMPT_MAX) {
		rc = hd_runtime__fail(em, err,
		    "hermes: the prompt is %zu bytes; -z takes it as one "
		    "argument, at most %d bytes",
		    strlen(in->prompt), HD_RUNTIME_ARG_PROMPT_MAX);
		goto done;
	}
	if ((rc = seed_home(in->home_dir, err)) < 0 ||
	    (rc = write_mcp_block(in, err)) < 0) {
		rc = hd_runtime__fail(em, err, "hermes: %s", err->msg);
		goto done;
	}
	if ((rc = usage_file(o.usage_path, sizeof(o.usage_path), err)) < 0) {
		rc = hd_runtime__fail(em, err, "hermes: %s", err->msg);
		goto done;
	}

	hd_strv_add(&c.extra, hd_runtime__env_pair("HERMES_HOME", in->home_dir));
	if ((rc = hd_runtime__bin(&c.found, &c.env, in, c.extra.v, "hermes",
		 "hermes", em, err)) < 0)
		goto done;

	/* hermes [--resume S] --usage-file F [-m M] [--provider P] -z PROMPT */
	hd_strv_adds(&c.argv, c.found);
	if (in->resume_session_id != NULL) {
		hd_strv_adds(&c.argv, "--resume");
		hd_strv_adds(&c.argv, in->resume_session_id);
	}
	hd_strv_adds(&c.argv, "--usage-file");
	hd_strv_adds(&c.argv, o.usage_path);
	if (c.model != NULL) {
		hd_strv_adds(&c.argv, "-m");
		hd_strv_adds(&c.argv, c.model);
	}
	if (provider != NULL) {
		hd_strv_adds(&c.argv, "--provider");
		hd_strv_adds(&c.argv, provider);
	}
	hd_strv_adds(&c.argv, "-z");
	hd_runtime__cli_prompt(&c, in, NULL);

	rs.parser = &o;
	rc = hd_runtime__cli_run(&c, in, &rs, em, err);
done:
	if (o.usage_path[0] != '\0')
		unlink(o.usage_path);
	hd_buf_dispose(&o.reply);
	hd_runtime__cli_dispose(&c);
	return rc;
}

/* huddle doctor: the binary and its version; credentials are Hermes's
 * own (.env in the agent's home, or the user's it is seeded from, or a
 * provider's variable): a missing .env in both is a problem. */
static void
hermes_doctor(const hd_agent *a, const char *home_dir, json_t *report)
{
	static const char *const names[] = {"OPENROUTER_API_KEY",
	    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "NOUS_API_KEY", NULL};
	const json_t *cfg = a->runtime_config;
	char path[PATH_MAX], dir[PATH_MAX - 32];
	int have = 0;

	hd_runtime__doctor_bin(
	    report, a, hd_runtime__cfg_str(cfg, "bin", "hermes"), "bin");
	if (home_dir != NULL) {
		snprintf(path, sizeof(path), "%s/.env", home_dir);
		have = access(path, R_OK) == 0;
	}
	user_home(dir, sizeof(dir));
	if (!have && dir[0] != '\0') {
		snprintf(path, sizeof(path), "%s/.env", dir);
		have = access(path, R_OK) == 0;
	}
	hd_runtime__doctor_needs(report, a,
	    "a Hermes .env (in the agent's home, or yours to seed it) or a "
	    "provider key variable",
	    names, have);
}

const hd_runtime_adapter hd_runtime__hermes = {
    .name = "hermes",
    .label = "hermes",
    .is_scripted = 0,
    .capabilities = hd_runtime__cli_caps, /* HERMES_HOME: memory, skills */
    .check_config = hermes_check,
    .prices = NULL,
    .attach = NULL,
    .run = hermes_run,
    .doctor = hermes_doctor,
};
