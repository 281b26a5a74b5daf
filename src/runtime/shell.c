/*
 * shell.c -- a shell command run for an engine outside any turn: a
 * task's verification gate (engine/verifier.c). Owns no table and no
 * state.
 *  (1) The command is `/bin/sh -c CMD` with its standard error sent to
 *      its standard output (one `exec 2>&1` line before it), run through
 *      proc.c like a turn's command: its own process group, killed whole
 *      on timeout or abort, dying with huddle (proc.c (1) (9)).
 *  (2) It runs as the agent it is given: the caller's environment, then
 *      huddle's identity variables for that agent and team (proc.c (6)),
 *      never the caller's own identity.
 *  (3) Of its output only the last `keep` bytes are kept, so a chatty
 *      command costs a bounded buffer; how it ended is said in words
 *      (`exit status 3`, `timed out after 600 s`, `killed by signal 9
 *      (SIGKILL)`).
 * Callers: engine/verifier.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/runtime.h>

#include "runtime_int.h"

typedef struct shell_out {
	hd_buf buf;
	size_t keep;
} shell_out;

/* (3): keep the tail; drop the front once it is twice what is kept. */
static void
shell_collect(void *ctx, const char *data, size_t n)
{
	shell_out *o = ctx;
	size_t len;

	if (data == NULL)
		return;
	hd_buf_put(&o->buf, data, n);
	len = o->buf.len;
	if (len > 2 * o->keep && o->buf.ptr != NULL) {
		memmove(o->buf.ptr, o->buf.ptr + (len - o->keep), o->keep + 1);
		o->buf.len = o->keep;
	}
}

/* (1): "exec 2>&1", then the command, malloc'd. */
static char *
script(const char *cmd)
{
	size_t n = strlen(cmd) + sizeof("exec 2>&1\n");
	char *p = malloc(n);

	if (p != NULL)
		snprintf(p, n, "exec 2>&1\n%s", cmd);
	return p;
}

int
hd_runtime_shell(hd_runtime_shell_result *out, const hd_agent *agent,
    const char *team, const char *huddle_home, const char *cmd,
    const char *cwd, int64_t timeout_ms, size_t keep, atomic_int *abort,
    hd_err *err)
{
	hd_runtime_turn in;
	hd_proc_spec ps;
	hd_proc_result pr;
	hd_strv env = {0}, argv = {0};
	shell_out o;
	size_t len;
	const char *s;
	int rc;

	memset(out, 0, sizeof(*out));
	out->exit_code = -1;
	memset(&in, 0, sizeof(in));
	in.agent = agent;
	in.team = team;
	in.huddle_home = huddle_home;
	hd_runtime__env(&env, &in, NULL, NULL);
	hd_strv_adds(&argv, "/bin/sh");
	hd_strv_adds(&argv, "-c");
	hd_strv_add(&argv, script(cmd));
	if (env.oom || argv.oom) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	o.buf = (hd_buf)HD_BUF_INIT(0);
	o.keep = keep > 0 ? keep : 16000;
	memset(&ps, 0, sizeof(ps));
	ps.argv = argv.v;
	ps.envp = env.v;
	ps.cwd = cwd;
	ps.timeout_ms = timeout_ms > 0 ? timeout_ms : 600000;
	ps.abort = abort;
	ps.on_out = shell_collect;
	ps.ctx = &o;
	memset(&pr, 0, sizeof(pr));
	rc = hd_proc_run(&pr, &ps, err);
	if (rc == 0) {
		out->exit_code = pr.why == HD_PROC_EXITED ? pr.exit_code : -1;
		if (pr.why == HD_PROC_TIMEOUT)
			snprintf(out->how, sizeof(out->how),
			    "timed out after %lld s",
			    (long long)(ps.timeout_ms / 1000));
		else if (pr.why == HD_PROC_ABORTED)
			snprintf(out->how, sizeof(out->how), "stopped");
		else {
			hd_proc_status_text(out->how, sizeof(out->how), &pr);
			if (pr.exit_code < 0) /* a signal: never a pass */
				out->exit_code = -1;
		}
		len = o.buf.len;
		s = hd_buf_cstr(&o.buf);
		if (len > o.keep)
			s += len - o.keep;
		if (hd_buf_failed(&o.buf) || (out->output = strdup(s)) == NULL)
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	hd_proc_result_dispose(&pr);
	hd_buf_dispose(&o.buf);
done:
	hd_strv_dispose(&env);
	hd_strv_dispose(&argv);
	return rc;
}

void
hd_runtime_shell_dispose(hd_runtime_shell_result *r)
{
	free(r->output);
	r->output = NULL;
}
