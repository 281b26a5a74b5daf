/*
 * cfg.c -- what the adapters that run a CLI share beyond the process:
 * reading and checking runtime_config fields, the per-agent work
 * directory, and ending a turn on a failure or on how the process ended.
 * Owns no table and no state.
 *  (1) Every check names the field in its message
 *      (`runtime_config.timeout_s must be an integer from 1 to 86400`),
 *      and a field that is absent is always fine: defaults are the
 *      adapter's.
 *  (2) A work directory is runtime_config.workdir as given (it must
 *      exist: huddle never creates a user's project directory), or
 *      <home>/work, created 0700: stable across turns, since Claude Code
 *      keys its sessions by the working directory.
 *  (3) hd_runtime__fail and hd_runtime__ended end the turn with error (or
 *      aborted) and done, so an adapter's every way out reports one done.
 *  (4) hd_runtime__run_stream runs a JSON-lines CLI (proc.c's child) and
 *      feeds its parser each line as it arrives, at most
 *      HD_RUNTIME_LINE_MAX bytes of one (a longer one reaches the parser
 *      cut, hence not JSON, hence counted malformed); the parser's finish
 *      runs only for a process that exited by itself.
 *  (5) hd_runtime_cli holds what a one-shot CLI turn (claude.c, codex.c)
 *      prepares the same way: the checked config, the work directory,
 *      the binary on PATH, the argv with the prompt as one argument or
 *      on stdin; each adapter adds only its own flags, environment and
 *      parser.
 * Callers: claude.c, codex.c; exec.c (the timeout).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <huddle/buf.h>
#include <huddle/log.h>
#include <huddle/util.h>

#include "runtime_int.h"

const char *
hd_runtime__cfg_str(const json_t *cfg, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(cfg, key));

	return v != NULL && v[0] != '\0' ? v : dflt;
}

int
hd_runtime__check_keys(const json_t *cfg, const char *const *allowed,
    const char *runtime, hd_err *err)
{
	const char *key;
	json_t *v;
	int i, ok;

	json_object_foreach ((json_t *)cfg, key, v) {
		ok = 0;
		for (i = 0; allowed[i] != NULL && !ok; i++)
			ok = strcmp(allowed[i], key) == 0;
		if (!ok)
			return hd_err_set(err, HD_EINVAL,
			    "runtime_config: unknown key \"%.64s\" for runtime "
			    "%s",
			    key, runtime);
	}
	return 0;
}

int
hd_runtime__check_string(const json_t *cfg, const char *key, hd_err *err)
{
	const json_t *v = json_object_get(cfg, key);

	if (v != NULL && (!json_is_string(v) || json_string_length(v) == 0))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.%s must be a non-empty string", key);
	return 0;
}

int
hd_runtime__check_strings(const json_t *cfg, const char *key, hd_err *err)
{
	const json_t *v = json_object_get(cfg, key), *s;
	size_t i;

	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		goto bad;
	json_array_foreach (v, i, s)
		if (!json_is_string(s) || json_string_length(s) == 0 ||
		    strchr(json_string_value(s), ',') != NULL)
			goto bad;
	return 0;
bad:
	return hd_err_set(err, HD_EINVAL,
	    "runtime_config.%s must be an array of names (no commas)", key);
}

int
hd_runtime__check_int(const json_t *cfg, const char *key, long long min,
    long long max, hd_err *err)
{
	const json_t *v = json_object_get(cfg, key);

	if (v != NULL && (!json_is_integer(v) || json_integer_value(v) < min ||
			     json_integer_value(v) > max))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.%s must be an integer from %lld to %lld",
		    key, min, max);
	return 0;
}

int
hd_runtime__check_env(const json_t *cfg, hd_err *err)
{
	const json_t *v = json_object_get(cfg, "env"), *ev;
	const char *key;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		goto bad;
	json_object_foreach ((json_t *)v, key, ev)
		if (!json_is_string(ev) || key[0] == '\0' ||
		    strchr(key, '=') != NULL)
			goto bad;
	return 0;
bad:
	return hd_err_set(
	    err, HD_EINVAL, "runtime_config.env must be an object of strings");
}

int64_t
hd_runtime__timeout_ms(
    const json_t *cfg, const hd_runtime_turn *in, int64_t default_s)
{
	const json_t *v = json_object_get(cfg, "timeout_s");
	int64_t ms = (v != NULL ? json_integer_value(v) : default_s) * 1000;

	return in->timeout_ms > 0 && in->timeout_ms < ms ? in->timeout_ms : ms;
}

int
hd_runtime__bin(char **found, hd_strv *env, const hd_runtime_turn *in,
    char *const *extra, const char *runtime, const char *dflt,
    hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config;
	const char *bin = hd_runtime__cfg_str(cfg, "bin", dflt);

	hd_runtime__env(env, in, json_object_get(cfg, "env"), extra);
	if ((*found = hd_runtime__which(
		 bin, hd_runtime__env_get(env->v, "PATH"))) == NULL)
		return hd_runtime__fail(em, err,
		    "%s: '%s' not found on PATH (runtime_config.bin)", runtime,
		    bin);
	return 0;
}

int
hd_runtime__workdir(char *out, size_t outlen, const json_t *cfg,
    const char *home, const char *runtime, hd_err *err)
{
	const char *given = hd_runtime__cfg_str(cfg, "workdir", NULL);
	struct stat sb;
	int rc;

	if (given != NULL) {
		if (stat(given, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return hd_err_set(err, HD_ENOTFOUND,
			    "%s: runtime_config.workdir %s is not a directory",
			    runtime, given);
		if (realpath(given, out) == NULL || strlen(out) >= outlen)
			return hd_err_set(err, HD_EINVAL,
			    "%s: cannot resolve workdir %s: %s", runtime, given,
			    strerror(errno));
		return 0;
	}
	if ((size_t)snprintf(out, outlen, "%s/work", home) >= outlen)
		return hd_err_set(
		    err, HD_EINVAL, "%s: path too long in %s", runtime, home);
	if ((rc = hd_mkdir_p(out, 0700, err)) < 0)
		return hd_err_set(err, rc, "%s: %s", runtime, err->msg);
	return 0;
}

void
hd_runtime__log_run(const char *runtime, char *const *argv, const char *prompt,
    const char *cwd, char *const *extra)
{
	json_t *a, *e, *o;
	const char *eq;
	char key[128], *text;
	size_t i;

	if (!hd_log_enabled(HD_LOG_DEBUG))
		return;
	a = json_array();
	e = json_object();
	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		json_array_append_new(a,
		    json_string(prompt != NULL && strcmp(argv[i], prompt) == 0
				    ? "{PROMPT}"
				    : argv[i]));
	for (i = 0; extra != NULL && extra[i] != NULL; i++)
		if ((eq = strchr(extra[i], '=')) != NULL &&
		    eq - extra[i] < (ptrdiff_t)sizeof(key)) {
			memcpy(key, extra[i], (size_t)(eq - extra[i]));
			key[eq - extra[i]] = '\0';
			json_object_set_new(e, key, json_string(eq + 1));
		}
	o = json_pack(
	    "{s:s, s:o, s:o}", "cwd", cwd ? cwd : "", "env", e, "argv", a);
	text = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)
			 : NULL;
	hd_log_write(HD_LOG_DEBUG, runtime, "run %s", text ? text : "?");
	free(text);
	json_decref(o);
}

int
hd_runtime__fail(hd_runtime_emit *em, hd_err *err, const char *fmt, ...)
{
	char msg[HD_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hd_runtime_emit_error(em, "%s", msg);
	hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
	return hd_err_set(err,
	    err->code != HD_OK && err->code < 0 ? err->code : HD_ERR, "%s",
	    msg);
}

int
hd_runtime__ended(hd_runtime_emit *em, const hd_proc_result *pr,
    int64_t timeout_ms, const char *runtime, hd_err *err)
{
	char msg[64];

	if (pr->why == HD_PROC_ABORTED) {
		hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, NULL);
		return 0;
	}
	if (pr->why == HD_PROC_TIMEOUT) {
		hd_runtime__timeout_msg(msg, sizeof(msg), timeout_ms);
		err->code = HD_ETIMEOUT;
		return hd_runtime__fail(em, err,
		    "%s: %s (the process group was "
		    "killed)",
		    runtime, msg);
	}
	return 1;
}

/* ---- a JSON-lines CLI, line by line (4) ---- */

typedef struct stream_ctx {
	const hd_runtime_stream *rs;
	hd_runtime_emit *em;
	hd_lines lines;
} stream_ctx;

static void
stream_line(void *ctx, const char *line, size_t len, int cut)
{
	stream_ctx *c = ctx;

	(void)cut; /* a cut line is not JSON: the parser counts it */
	c->rs->line(c->rs->parser, c->em, line, len);
}

static void
stream_out(void *ctx, const char *data, size_t n)
{
	hd_lines_feed(&((stream_ctx *)ctx)->lines, data, n);
}

int
hd_runtime__run_stream(hd_runtime_emit *em, const hd_runtime_turn *in,
    const hd_runtime_stream *rs, const hd_proc_spec *spec, char *const *extra,
    hd_err *err)
{
	hd_proc_spec ps = *spec;
	hd_proc_result pr;
	stream_ctx ctx;
	int rc;

	ctx.rs = rs;
	ctx.em = em;
	hd_lines_init(&ctx.lines, HD_RUNTIME_LINE_MAX, stream_line, &ctx);
	hd_runtime__log_run(rs->runtime, ps.argv, in->prompt, ps.cwd, extra);
	ps.abort = in->abort;
	ps.on_spawn = in->on_spawn;
	ps.spawn_ctx = in->spawn_ctx;
	ps.on_out = stream_out;
	ps.ctx = &ctx;
	if ((rc = hd_proc_run(&pr, &ps, err)) < 0)
		rc = hd_runtime__fail(em, err, "%s: %s", rs->runtime, err->msg);
	else if ((rc = hd_runtime__ended(
		      em, &pr, ps.timeout_ms, rs->runtime, err)) == 1) {
		/* it exited by itself: the stream tells the rest */
		rs->finish(rs->parser, em, pr.exit_code, pr.tail);
		rc = 0;
	}
	hd_proc_result_dispose(&pr);
	hd_lines_dispose(&ctx.lines);
	return rc;
}

/* ---- one-shot CLI turns (5) ---- */

void
hd_runtime__cli_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_WRAPPED_ONESHOT;
	out->native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	out->native_home.persist = 1;
	out->native_memory = HD_NATIVE_PRESERVE;
	out->native_skills = HD_NATIVE_PRESERVE;
}

int
hd_runtime__cli_check(const json_t *cfg, const char *const *keys,
    const char *runtime, hd_err *err)
{
	int rc;

	if ((rc = hd_runtime__check_keys(cfg, keys, runtime, err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "bin", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "model", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "workdir", err)) < 0 ||
	    (rc = hd_runtime__check_env(cfg, err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "timeout_s", 1, 86400, err)) < 0)
		return rc;
	return 0;
}

int
hd_runtime__cli_begin(hd_runtime_cli *c, const hd_runtime_turn *in,
    const char *runtime, int (*check)(const json_t *cfg, hd_err *err),
    int64_t default_timeout_s, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config;
	int rc;

	memset(c, 0, sizeof(*c));
	c->runtime = runtime;
	if ((rc = check(cfg, err)) < 0)
		return hd_runtime__fail(em, err, "%s: %s", runtime, err->msg);
	if (in->home_dir == NULL)
		return hd_runtime__fail(em, err,
		    "%s: agent %s has no home directory", runtime,
		    in->agent->id);
	c->model = hd_runtime__cfg_str(cfg, "model", NULL);
	c->ps.timeout_ms = hd_runtime__timeout_ms(cfg, in, default_timeout_s);
	/* sessions are keyed by the working directory: a stable one per
	 * agent unless the config names one */
	if ((rc = hd_runtime__workdir(c->work, sizeof(c->work), cfg,
		 in->home_dir, runtime, err)) < 0)
		return hd_runtime__fail(em, err, "%s", err->msg);
	c->ps.cwd = c->work;
	return 0;
}

void
hd_runtime__cli_prompt(
    hd_runtime_cli *c, const hd_runtime_turn *in, const char *stdin_arg)
{
	size_t plen = strlen(in->prompt);

	if (plen <= HD_RUNTIME_ARG_PROMPT_MAX) {
		hd_strv_adds(&c->argv, in->prompt);
		return;
	}
	/* past the kernel's limit for one argument: stdin */
	if (stdin_arg != NULL)
		hd_strv_adds(&c->argv, stdin_arg);
	c->ps.input = in->prompt;
	c->ps.input_len = plen;
}

int
hd_runtime__cli_run(hd_runtime_cli *c, const hd_runtime_turn *in,
    const hd_runtime_stream *rs, hd_runtime_emit *em, hd_err *err)
{
	if (c->argv.oom || c->env.oom || c->extra.oom || rs->parser == NULL)
		return hd_runtime__fail(em, err, "out of memory");
	c->ps.argv = c->argv.v;
	c->ps.envp = c->env.v;
	return hd_runtime__run_stream(em, in, rs, &c->ps, c->extra.v, err);
}

void
hd_runtime__cli_dispose(hd_runtime_cli *c)
{
	hd_strv_dispose(&c->argv);
	hd_strv_dispose(&c->env);
	hd_strv_dispose(&c->extra);
	free(c->found);
}
