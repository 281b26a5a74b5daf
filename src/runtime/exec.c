/*
 * exec.c -- the `exec` runtime (SPEC 9.4): any command is an agent.
 * runtime_config: {"command": [...], "prompt": "stdin"|"arg",
 *                  "timeout_s": 600, "env": {...}, "cwd": "..."}
 * The prompt goes to the command's standard input (or as its last
 * argument); what it writes to standard output is the reply, streamed as
 * text_delta; its standard error is kept only as a tail for messages.
 * The child itself (process group, signals, pipes, environment, the
 * timeout and abort) is proc.c's, with its invariants.
 *  (1) The reply is capped by the emitter (HD_RUNTIME_OUTPUT_MAX) while
 *      proc.c keeps draining, so a chatty command never blocks on a full
 *      pipe. Bytes pass through untouched; a UTF-8 sequence split between
 *      two reads is held back and sent whole (hd_exec__reply_out, fed
 *      any output in any pieces by tests/fuzz/fuzz-exec-output.c).
 *  (2) A non-zero exit or a timeout is an error with standard error's
 *      tail; an abort ends the turn aborted with what was said so far.
 *  (3) The command gets huddle's identity variables (HUDDLE_AGENT,
 *      HUDDLE_TEAM, HUDDLE_HOME, HUDDLE_MCP_URL, HUDDLE_MCP_TOKEN,
 *      HUDDLE_AGENT_HOME), which its own env can never override.
 * Callers: runtime.c's adapter table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

#define EXEC_DEFAULT_TIMEOUT_S 600

static void
exec_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_WRAPPED_ONESHOT;
	/* A command may keep state between turns in its own home. */
	out->native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	out->native_home.persist = 1;
}

static int
exec_check(const json_t *c, hd_err *err)
{
	static const char *const keys[] = {
	    "command", "prompt", "timeout_s", "env", "cwd", NULL};
	const json_t *cmd = json_object_get(c, "command"), *v;
	const char *key;
	size_t i;
	int rc;

	if ((rc = hd_runtime__check_keys(c, keys, "exec", err)) < 0)
		return rc;
	if (!json_is_array(cmd) || json_array_size(cmd) == 0)
		goto badcmd;
	json_array_foreach (cmd, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0)
			goto badcmd;
	}
	if ((v = json_object_get(c, "prompt")) != NULL &&
	    (!json_is_string(v) ||
		(strcmp(json_string_value(v), "stdin") != 0 &&
		    strcmp(json_string_value(v), "arg") != 0)))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.prompt must be \"stdin\" or \"arg\"");
	if ((v = json_object_get(c, "timeout_s")) != NULL &&
	    (!json_is_integer(v) || json_integer_value(v) < 1 ||
		json_integer_value(v) > 86400))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.timeout_s must be an integer from 1 to "
		    "86400");
	if ((v = json_object_get(c, "cwd")) != NULL && !json_is_string(v))
		return hd_err_set(
		    err, HD_EINVAL, "runtime_config.cwd must be a string");
	if ((v = json_object_get(c, "env")) != NULL) {
		const json_t *ev;

		if (!json_is_object(v))
			return hd_err_set(err, HD_EINVAL,
			    "runtime_config.env must be an object of strings");
		json_object_foreach ((json_t *)v, key, ev) {
			if (!json_is_string(ev) || key[0] == '\0' ||
			    strchr(key, '=') != NULL)
				return hd_err_set(err, HD_EINVAL,
				    "runtime_config.env must be an object of "
				    "strings");
		}
	}
	return 0;
badcmd:
	return hd_err_set(err, HD_EINVAL,
	    "runtime_config.command must be a non-empty array of strings");
}

/* ---- the reply, (1) ---- */

/* Send buf on, holding back an unfinished UTF-8 sequence at its end. */
static void
emit_bytes(hd_exec_reply *rs, const char *buf, size_t n, int eof)
{
	size_t keep = 0, i, need;
	unsigned char lead;

	if (!eof && n > 0) {
		for (i = n; i > 0 && n - i < 3; i--) {
			lead = (unsigned char)buf[i - 1];
			if ((lead & 0xc0) == 0x80)
				continue;
			if (lead >= 0xf0 && lead <= 0xf7)
				need = 4;
			else if (lead >= 0xe0 && lead <= 0xef)
				need = 3;
			else if (lead >= 0xc0 && lead <= 0xdf)
				need = 2;
			else
				need = 1; /* ASCII or not a lead: send it */
			if (need > n - (i - 1))
				keep = n - (i - 1);
			break;
		}
	}
	hd_runtime_emit_text(rs->em, buf, n - keep);
	memmove(rs->carry, buf + n - keep, keep);
	rs->ncarry = keep;
}

void
hd_exec__reply_out(void *ctx, const char *data, size_t n)
{
	hd_exec_reply *rs = ctx;
	char buf[4 + 65536];
	size_t take;

	if (data == NULL) { /* the end: what was held back goes as it is */
		if (rs->ncarry > 0)
			hd_runtime_emit_text(rs->em, rs->carry, rs->ncarry);
		rs->ncarry = 0;
		return;
	}
	while (n > 0) {
		take =
		    n < sizeof(buf) - rs->ncarry ? n : sizeof(buf) - rs->ncarry;
		memcpy(buf, rs->carry, rs->ncarry);
		memcpy(buf + rs->ncarry, data, take);
		emit_bytes(rs, buf, rs->ncarry + take, 0);
		data += take;
		n -= take;
	}
}

static int
exec_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config, *cmd, *v;
	hd_strv argv = {0}, env = {0};
	hd_proc_spec ps;
	hd_proc_result pr;
	hd_exec_reply rs;
	const char *mode, *tail;
	char msg[64];
	int64_t timeout_ms;
	int rc;
	size_t i;

	memset(&ps, 0, sizeof(ps));
	memset(&rs, 0, sizeof(rs));
	memset(&pr, 0, sizeof(pr));
	rs.em = em;
	if ((rc = exec_check(cfg, err)) < 0)
		return rc;
	cmd = json_object_get(cfg, "command");
	if (cmd == NULL) /* an empty config passes the check; not a run */
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.command must be a non-empty array of "
		    "strings");
	json_array_foreach (cmd, i, v)
		hd_strv_adds(&argv, json_string_value(v));
	mode = json_string_value(json_object_get(cfg, "prompt"));
	if (mode != NULL && strcmp(mode, "arg") == 0)
		hd_strv_adds(&argv, in->prompt);
	else {
		ps.input = in->prompt;
		ps.input_len = strlen(in->prompt);
	}
	timeout_ms = hd_runtime__timeout_ms(cfg, in, EXEC_DEFAULT_TIMEOUT_S);
	hd_runtime__env(&env, in, json_object_get(cfg, "env"), NULL);
	if (argv.oom || env.oom) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	ps.argv = argv.v;
	ps.envp = env.v;
	ps.cwd = json_string_value(json_object_get(cfg, "cwd"));
	ps.timeout_ms = timeout_ms;
	ps.abort = in->abort;
	ps.on_spawn = in->on_spawn;
	ps.spawn_ctx = in->spawn_ctx;
	ps.on_out = hd_exec__reply_out;
	ps.ctx = &rs;
	if ((rc = hd_proc_run(&pr, &ps, err)) < 0)
		goto done;
	tail = pr.tail != NULL ? pr.tail : "";
	if (pr.why == HD_PROC_ABORTED)
		hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, NULL);
	else if (pr.why == HD_PROC_TIMEOUT) {
		hd_runtime__timeout_msg(msg, sizeof(msg), timeout_ms);
		hd_runtime_emit_error(
		    em, "%s%s%s", msg, tail[0] ? ": " : "", tail);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
		rc = hd_err_set(
		    err, HD_ETIMEOUT, "%s%s%s", msg, tail[0] ? ": " : "", tail);
	} else if (pr.exit_code == 0)
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
	else {
		hd_proc_status_text(msg, sizeof(msg), &pr);
		hd_runtime_emit_error(
		    em, "%s%s%s", msg, tail[0] ? ": " : "", tail);
		hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
		rc = hd_err_set(
		    err, HD_ERR, "%s%s%s", msg, tail[0] ? ": " : "", tail);
	}
done:
	hd_proc_result_dispose(&pr);
	hd_strv_dispose(&argv);
	hd_strv_dispose(&env);
	return rc;
}

/* huddle doctor: the command is there and can run (not run: any command
 * may be an agent, and its --version means nothing). */
static void
exec_doctor(const hd_agent *a, const char *home_dir, json_t *report)
{
	const json_t *cfg = a->runtime_config;
	const char *cmd = json_string_value(
	    json_array_get(json_object_get(cfg, "command"), 0));
	const char *cwd = json_string_value(json_object_get(cfg, "cwd"));
	char rel[4096], *path = NULL;

	(void)home_dir;
	if (cmd == NULL)
		return; /* check_config said so */
	if (cwd != NULL && strchr(cmd, '/') != NULL && cmd[0] != '/') {
		snprintf(rel, sizeof(rel), "%s/%s", cwd, cmd);
		path = hd_runtime__which(rel, NULL);
	} else {
		const char *p = hd_runtime__doctor_env(cfg, "PATH");

		path = hd_runtime__which(cmd, p);
	}
	json_object_set_new(report, "binary",
	    json_pack("{s:s, s:o, s:n}", "name", cmd, "path",
		path ? json_string(path) : json_null(), "version"));
	if (path == NULL)
		hd_runtime__doctor_problem(report,
		    "command \"%s\" not found or not executable "
		    "(runtime_config.command)",
		    cmd);
	free(path);
}

const hd_runtime_adapter hd_runtime__exec = {
    .name = "exec",
    .label = "exec",
    .is_scripted = 0,
    .capabilities = exec_caps,
    .check_config = exec_check,
    .run = exec_run,
    .doctor = exec_doctor,
};
