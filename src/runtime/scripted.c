/*
 * scripted.c -- the `scripted` runtime (SPEC 9.4): canned replies chosen
 * by rules, for demos and tests. It is not a model, and says so: its
 * adapter is flagged is_scripted so every surface can label it.
 * runtime_config: {"rules": [{"when": "substring", "reply": "text"}],
 *                  "default": "text", "delay_ms": N}
 *  (1) Deterministic: the first rule whose `when` occurs in the prompt
 *      past its standing context (hd_runtime_turn.context_len: who the
 *      agent is and its team, the same boilerplate on every turn) wins,
 *      else `default`, else `(scripted agent <id> has no reply for
 *      this)`. The same prompt always gets the same reply.
 *  (2) delay_ms sleeps before replying (so engines can test overlap) and
 *      is abortable: an abort during the delay ends the turn aborted with
 *      no reply; a turn timeout shorter than the delay ends it in error.
 *  (3) It reports the SPEC 8.2 estimate like any runtime would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>
#include <huddle/util.h>

#include "runtime_int.h"

/* How often a delay looks at the abort flag. */
#define SCRIPTED_SLICE_US 5000

static void
scripted_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_WRAPPED_ONESHOT;
	out->native_home.scope = HD_HOME_SCOPE_NONE; /* needs no directory */
}

static int
scripted_check(const json_t *c, hd_err *err)
{
	static const char *const keys[] = {
	    "rules", "default", "delay_ms", NULL};
	static const char *const rule_keys[] = {"when", "reply", NULL};
	const json_t *rules = json_object_get(c, "rules"), *v;
	size_t i;
	int rc;

	if ((rc = hd_runtime__check_keys(c, keys, "scripted", err)) < 0)
		return rc;
	if (rules != NULL) {
		if (!json_is_array(rules))
			return hd_err_set(err, HD_EINVAL,
			    "runtime_config.rules must be an array");
		json_array_foreach (rules, i, v) {
			if (!json_is_object(v) ||
			    !json_is_string(json_object_get(v, "when")) ||
			    !json_is_string(json_object_get(v, "reply")))
				return hd_err_set(err, HD_EINVAL,
				    "runtime_config.rules[%zu] must be "
				    "{\"when\": "
				    "text, \"reply\": text}",
				    i);
			if ((rc = hd_runtime__check_keys(
				 v, rule_keys, "scripted", err)) < 0)
				return rc;
		}
	}
	if ((v = json_object_get(c, "default")) != NULL && !json_is_string(v))
		return hd_err_set(
		    err, HD_EINVAL, "runtime_config.default must be a string");
	if ((v = json_object_get(c, "delay_ms")) != NULL &&
	    (!json_is_integer(v) || json_integer_value(v) < 0 ||
		json_integer_value(v) > 600000))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.delay_ms must be an integer from 0 to "
		    "600000");
	return 0;
}

/* The reply for prompt, (1). Borrowed from cfg, or written to fallback. */
static const char *
scripted_pick(const json_t *cfg, const char *prompt, const char *agent,
    char *fallback, size_t fallback_len)
{
	const json_t *rules = json_object_get(cfg, "rules"), *r, *when, *reply;
	size_t i;

	json_array_foreach (rules, i, r) {
		when = json_object_get(r, "when");
		reply = json_object_get(r, "reply");
		if (json_is_string(when) && json_is_string(reply) &&
		    strstr(prompt, json_string_value(when)) != NULL)
			return json_string_value(reply);
	}
	if (json_is_string(json_object_get(cfg, "default")))
		return json_string_value(json_object_get(cfg, "default"));
	snprintf(fallback, fallback_len,
	    "(scripted agent %s has no reply for this)", agent);
	return fallback;
}

static int
scripted_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config, *d;
	char fallback[128], msg[64];
	hd_runtime_cost cost;
	const char *reply;
	int64_t delay_ms = 0, start, until, limit;
	int rc;

	if (cfg != NULL && (rc = scripted_check(cfg, err)) < 0)
		return rc;
	if ((d = json_object_get(cfg, "delay_ms")) != NULL)
		delay_ms = json_integer_value(d);
	start = hd_mono_ms();
	until = start + delay_ms;
	limit = in->timeout_ms > 0 ? start + in->timeout_ms : INT64_MAX;
	for (;;) { /* (2) */
		int64_t now = hd_mono_ms(), us;

		if (hd_runtime_aborted(in)) {
			hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, NULL);
			return 0;
		}
		if (now >= until)
			break;
		if (now >= limit) {
			hd_runtime__timeout_msg(
			    msg, sizeof(msg), in->timeout_ms);
			hd_runtime_emit_error(em, "%s", msg);
			hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
			return hd_err_set(err, HD_ETIMEOUT, "%s", msg);
		}
		us = ((until < limit ? until : limit) - now) * 1000;
		hd_sleep_us(us < SCRIPTED_SLICE_US ? us : SCRIPTED_SLICE_US);
	}
	reply = scripted_pick(cfg,
	    in->prompt +
		(in->context_len <= strlen(in->prompt) ? in->context_len : 0),
	    in->agent->id, fallback, sizeof(fallback));
	hd_runtime_emit_text(em, reply, strlen(reply));
	hd_runtime_cost_estimate(
	    &cost, in->prompt, strlen(in->prompt), reply, strlen(reply));
	hd_runtime_emit_cost(em, &cost);
	hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
	return 0;
}

const hd_runtime_adapter hd_runtime__scripted = {
    .name = "scripted",
    .label = "scripted",
    .is_scripted = 1,
    .capabilities = scripted_caps,
    .check_config = scripted_check,
    .run = scripted_run,
};
