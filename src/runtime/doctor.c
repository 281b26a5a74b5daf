/*
 * doctor.c -- what `huddle doctor` says of one agent's runtime: whether
 * its turn could run here, without running one. Owns no table.
 *  (1) Nothing is changed: no home is created, no seed copied, no model
 *      called. The only process started is the runtime's own binary with
 *      --version, under a short timeout, in its own process group.
 *  (2) Environment variables are reported by name only, never by value.
 *  (3) Each adapter says what it needs through its doctor hook; the
 *      report's "ok" is false exactly when "problems" is not empty.
 * Callers: the CLI (cmd-doctor.c).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

#define DOCTOR_VERSION_TIMEOUT_MS 10000

void
hd_runtime__doctor_problem(json_t *report, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(
	    json_object_get(report, "problems"), json_string(msg));
}

/* The first line of what --version printed. */
typedef struct first_line {
	hd_buf b;
	int done;
} first_line;

static void
version_out(void *ctx, const char *data, size_t n)
{
	first_line *fl = ctx;
	const char *nl;

	if (data == NULL || fl->done)
		return;
	if ((nl = memchr(data, '\n', n)) != NULL) {
		n = (size_t)(nl - data);
		fl->done = 1;
	}
	if (fl->b.len + n < 256)
		hd_buf_put(&fl->b, data, n);
}

const char *
hd_runtime__doctor_env(const json_t *cfg, const char *key)
{
	const char *v = json_string_value(
	    json_object_get(json_object_get(cfg, "env"), key));

	return v != NULL ? v : getenv(key);
}

int
hd_runtime__doctor_bin(
    json_t *report, const hd_agent *a, const char *bin, const char *cfg_key)
{
	const json_t *cfg = a->runtime_config;
	hd_runtime_turn in;
	hd_strv env = {0};
	hd_proc_spec ps;
	hd_proc_result pr;
	hd_err err = HD_ERR_INIT;
	first_line fl;
	char *path;
	const char *argv[3];

	memset(&in, 0, sizeof(in));
	in.agent = a;
	hd_runtime__env(&env, &in, json_object_get(cfg, "env"), NULL);
	path = hd_runtime__which(bin, hd_runtime__env_get(env.v, "PATH"));
	if (path == NULL) {
		json_object_set_new(report, "binary",
		    json_pack(
			"{s:s, s:n, s:n}", "name", bin, "path", "version"));
		hd_runtime__doctor_problem(report,
		    "'%s' not found on PATH (runtime_config.%s)", bin, cfg_key);
		hd_strv_dispose(&env);
		return -1;
	}
	memset(&ps, 0, sizeof(ps));
	memset(&fl, 0, sizeof(fl));
	fl.b = (hd_buf)HD_BUF_INIT(0);
	argv[0] = path;
	argv[1] = "--version";
	argv[2] = NULL;
	ps.argv = (char *const *)argv;
	ps.envp = env.v;
	ps.timeout_ms = DOCTOR_VERSION_TIMEOUT_MS;
	ps.on_out = version_out;
	ps.ctx = &fl;
	if (hd_proc_run(&pr, &ps, &err) < 0 || pr.why != HD_PROC_EXITED ||
	    pr.exit_code != 0) {
		json_object_set_new(report, "binary",
		    json_pack("{s:s, s:s, s:n}", "name", bin, "path", path,
			"version"));
		hd_runtime__doctor_problem(report, "'%s --version' failed: %s",
		    path,
		    err.msg[0]                  ? err.msg
		    : pr.why == HD_PROC_TIMEOUT ? "it did not answer in 10 s"
		    : pr.tail != NULL && pr.tail[0] ? pr.tail
						    : "it exited in error");
	} else
		json_object_set_new(report, "binary",
		    json_pack("{s:s, s:s, s:s}", "name", bin, "path", path,
			"version", hd_buf_cstr(&fl.b)));
	hd_proc_result_dispose(&pr);
	hd_buf_dispose(&fl.b);
	hd_strv_dispose(&env);
	free(path);
	return 0;
}

void
hd_runtime__doctor_needs(json_t *report, const hd_agent *a, const char *needs,
    const char *const *names, int satisfied_otherwise)
{
	json_t *present = json_array();
	const char *v;
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if ((v = hd_runtime__doctor_env(a->runtime_config, names[i])) !=
			NULL &&
		    v[0] != '\0')
			json_array_append_new(present, json_string(names[i]));
	json_object_set_new(report, "env",
	    json_pack("{s:s, s:O}", "needs", needs, "present", present));
	if (json_array_size(present) == 0 && !satisfied_otherwise)
		hd_runtime__doctor_problem(report, "no credentials: %s", needs);
	json_decref(present);
}

int
hd_runtime_doctor(
    json_t **out, const hd_agent *a, const char *huddle_home, hd_err *err)
{
	const hd_runtime_adapter *rt;
	hd_runtime_caps caps;
	hd_runtime_plan plan;
	json_t *r;
	char home[PATH_MAX];
	struct stat sb;
	hd_err ferr = HD_ERR_INIT;

	*out = NULL;
	if ((r = json_pack("{s:s, s:o, s:s, s:[]}", "agent", a->id, "team",
		 a->team_id ? json_string(a->team_id) : json_null(), "runtime",
		 a->runtime, "problems")) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if (hd_runtime_find(&rt, a->runtime, &ferr) < 0) {
		hd_runtime__doctor_problem(r, "%s", ferr.msg);
		json_object_set_new(r, "home", json_null());
		goto done;
	}
	json_object_set_new(r, "label", json_string(rt->label));
	json_object_set_new(r, "scripted", json_boolean(rt->is_scripted));
	if (rt->check_config != NULL &&
	    rt->check_config(a->runtime_config, &ferr) < 0)
		hd_runtime__doctor_problem(r, "%s", ferr.msg);
	memset(&caps, 0, sizeof(caps));
	rt->capabilities(&caps);
	plan = hd_runtime_resolve_integration(&caps);
	json_object_set_new(r, "home_kind",
	    json_string(plan.home != HD_HOME_CONNECTED && !plan.needs_dir
			    ? "none"
			    : hd_runtime_home_kind_name(plan.home)));
	home[0] = '\0';
	if (plan.home == HD_HOME_PERSISTENT && plan.needs_dir &&
	    huddle_home != NULL)
		snprintf(home, sizeof(home), "%s/homes/%s/%s", huddle_home,
		    rt->name, a->id);
	json_object_set_new(
	    r, "home", home[0] ? json_string(home) : json_null());
	json_object_set_new(r, "home_exists",
	    json_boolean(
		home[0] && stat(home, &sb) == 0 && S_ISDIR(sb.st_mode)));
	if (rt->doctor != NULL)
		rt->doctor(a, home[0] ? home : NULL, r);
done:
	json_object_set_new(r, "ok",
	    json_boolean(json_array_size(json_object_get(r, "problems")) == 0));
	*out = r;
	return 0;
}
