/*
 * apply.c -- `huddle up FILE`: apply a team file (SPEC 3) idempotently.
 *  (1) The whole document is checked before anything is written; a file
 *      that does not parse names path:line:column, one that parses but is
 *      wrong names the field. Either way nothing changes.
 *  (2) Everything is applied in one BEGIN IMMEDIATE transaction: create
 *      what is missing, update what differs, never delete. Two processes
 *      applying the same file end with one consistent team and no error;
 *      the second finds nothing to do.
 *  (3) Applying an unchanged file writes nothing (no updated_at bump, no
 *      event), so "unchanged" is observable.
 *  (4) When several agents are flagged leader the first is kept and the
 *      rest become members, with a warning in the report.
 *  (5) "max_messages" (1-1000), the team's conversation loop guard, is
 *      kept in kv under HD_TEAM_MAX_MESSAGES_KEY (read by the
 *      conversation engine); absent, whatever is set stays.
 *  (6) "autorun" (true, false, or {"on", "turns_per_hour", "park_after"})
 *      sets the team's autorun settings (autorun.h); absent, whatever is
 *      set stays. A pause made by hand is never undone by a file.
 *  (7) "max_spawn_depth" (1-100) sets how deep a chain of spawns may go
 *      in the team (team.h); absent, whatever is set stays. So do the
 *      board's caps (team.h): "max_children" (1-1000), "max_task_depth"
 *      (1-20), "max_new_roots" (1-10000), "new_roots_window_s" (1-86400).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/autorun.h>
#include <huddle/events.h>
#include <huddle/util.h>

#include "team_int.h"

#define TEAMFILE_MAX (4 * 1024 * 1024)

struct plan_agent {
	hd_agent_spec spec;
	int has_runtime;
};

struct plan {
	const char *origin;
	hd_agent_runtime_check check; /* the runtime layer's, or NULL */
	hd_team_spec team;
	struct plan_agent *agents;
	size_t nagents;
	const char *leader; /* first flagged, or NULL */
	int64_t max_messages; /* 0: not given */
	int has_autorun;
	hd_autorun_spec autorun;
	json_t *report;	    /* built while applying */
	int changed;
};

static int
opt_string(const char **out, const json_t *obj, const char *key,
    const char *origin, const char *where, hd_err *err)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return hd_err_set(err, HD_EINVAL, "%s: %s%s must be a string",
		    origin, where, key);
	*out = json_string_value(v);
	if (strlen(*out) != json_string_length(v))
		return hd_err_set(err, HD_EINVAL,
		    "%s: %s%s must not contain NUL bytes", origin, where, key);
	return 0;
}

/* Prefix a field error from a lower check with the file and field. */
static int
reframe(int rc, hd_err *err, const char *origin, const char *where)
{
	char msg[HD_ERR_MSG_MAX];

	snprintf(msg, sizeof(msg), "%s", err->msg);
	return hd_err_set(err, (hd_code)rc, "%s: %s%s", origin, where, msg);
}

/* An optional cap of the board (team.h): an integer 1..max, else
 * `<origin>: max_children must be an integer from 1 to 1000`. */
static int
opt_cap(int *out, const json_t *doc, const char *key, int max,
    const char *origin, hd_err *err)
{
	const json_t *v = json_object_get(doc, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > max)
		return hd_err_set(err, HD_EINVAL,
		    "%s: %s must be an integer from 1 to %d", origin, key, max);
	*out = (int)json_integer_value(v);
	return 0;
}

/* 1 when a cap the file gives (> 0) is not what the team has. */
static int
cap_differs(int given, int have)
{
	return given > 0 && given != have;
}

static int
plan_build(struct plan *p, const json_t *doc, hd_err *err)
{
	static const char *const team_keys[] = {"team", "name", "description",
	    "icon", "color", "agents", "max_messages", "autorun",
	    "max_spawn_depth", "max_children", "max_task_depth",
	    "max_new_roots", "new_roots_window_s", NULL};
	static const char *const agent_keys[] = {"id", "name", "role",
	    "runtime", "runtime_config", "leader", NULL};
	const json_t *agents, *a, *v;
	const char *key, *origin = p->origin;
	size_t i, j;
	int k, rc, ok;

	if (!json_is_object(doc))
		return hd_err_set(err, HD_EINVAL,
		    "%s: a team file must be a JSON object", origin);
	json_object_foreach((json_t *)doc, key, v) {
		for (ok = 0, k = 0; team_keys[k] != NULL && !ok; k++)
			ok = strcmp(team_keys[k], key) == 0;
		if (!ok)
			return hd_err_set(err, HD_EINVAL,
			    "%s: unknown key \"%.64s\"", origin, key);
	}
	if ((rc = opt_string(&p->team.id, doc, "team", origin, "", err)) < 0)
		return rc;
	if (p->team.id == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "%s: \"team\" (the team id) is required", origin);
	if ((rc = hd_slug_check("team", p->team.id, err)) < 0)
		return reframe(rc, err, origin, "");
	if ((rc = opt_string(&p->team.name, doc, "name", origin, "", err)) < 0 ||
	    (rc = opt_string(&p->team.description, doc, "description", origin,
		 "", err)) < 0 ||
	    (rc = opt_string(&p->team.icon, doc, "icon", origin, "", err)) < 0 ||
	    (rc = opt_string(&p->team.color, doc, "color", origin, "", err)) < 0)
		return rc;
	if ((rc = hd_team__check_fields(&p->team, err)) < 0)
		return reframe(rc, err, origin, "");
	v = json_object_get(doc, "max_messages");
	if (v != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 1000)
			return hd_err_set(err, HD_EINVAL,
			    "%s: max_messages must be an integer from 1 to 1000",
			    origin);
		p->max_messages = json_integer_value(v);
	}
	v = json_object_get(doc, "max_spawn_depth");
	if (v != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > HD_TEAM_SPAWN_DEPTH_MAX)
			return hd_err_set(err, HD_EINVAL,
			    "%s: max_spawn_depth must be an integer from 1 to "
			    "%d",
			    origin, HD_TEAM_SPAWN_DEPTH_MAX);
		p->team.max_spawn_depth = (int)json_integer_value(v);
	}
	if ((rc = opt_cap(&p->team.max_children, doc, "max_children",
		 HD_TEAM_MAX_CHILDREN_MAX, origin, err)) < 0 ||
	    (rc = opt_cap(&p->team.max_task_depth, doc, "max_task_depth",
		 HD_TEAM_TASK_DEPTH_MAX, origin, err)) < 0 ||
	    (rc = opt_cap(&p->team.max_new_roots, doc, "max_new_roots",
		 HD_TEAM_NEW_ROOTS_MAX, origin, err)) < 0 ||
	    (rc = opt_cap(&p->team.new_roots_window_s, doc,
		 "new_roots_window_s", HD_TEAM_NEW_ROOTS_WINDOW_MAX, origin,
		 err)) < 0)
		return rc;
	if ((v = json_object_get(doc, "autorun")) != NULL) {
		if ((rc = hd_autorun_parse(&p->autorun, v, err)) < 0)
			return reframe(rc, err, origin, "");
		p->has_autorun = 1;
	}

	agents = json_object_get(doc, "agents");
	if (agents == NULL)
		return 0;
	if (!json_is_array(agents))
		return hd_err_set(err, HD_EINVAL, "%s: agents must be an array",
		    origin);
	p->nagents = json_array_size(agents);
	if (p->nagents > 0 &&
	    (p->agents = calloc(p->nagents, sizeof(*p->agents))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	json_array_foreach(agents, i, a) {
		struct plan_agent *pa = &p->agents[i];
		char where[48];

		snprintf(where, sizeof(where), "agents[%zu].", i);
		if (!json_is_object(a))
			return hd_err_set(err, HD_EINVAL,
			    "%s: agents[%zu] must be an object", origin, i);
		json_object_foreach((json_t *)a, key, v) {
			for (ok = 0, k = 0; agent_keys[k] != NULL && !ok; k++)
				ok = strcmp(agent_keys[k], key) == 0;
			if (!ok)
				return hd_err_set(err, HD_EINVAL,
				    "%s: %sunknown key \"%.64s\"", origin, where,
				    key);
		}
		pa->spec.team = p->team.id;
		if ((rc = opt_string(&pa->spec.id, a, "id", origin, where,
			 err)) < 0 ||
		    (rc = opt_string(&pa->spec.name, a, "name", origin, where,
			 err)) < 0 ||
		    (rc = opt_string(&pa->spec.role, a, "role", origin, where,
			 err)) < 0 ||
		    (rc = opt_string(&pa->spec.runtime, a, "runtime", origin,
			 where, err)) < 0)
			return rc;
		if (pa->spec.id == NULL)
			return hd_err_set(err, HD_EINVAL, "%s: %sid is required",
			    origin, where);
		if ((rc = hd_slug_check("agent", pa->spec.id, err)) < 0 ||
		    (rc = hd_agent__check_fields(pa->spec.name, pa->spec.role,
			 err)) < 0)
			return reframe(rc, err, origin, where);
		for (j = 0; j < i; j++)
			if (strcmp(p->agents[j].spec.id, pa->spec.id) == 0)
				return hd_err_set(err, HD_EINVAL,
				    "%s: %sid \"%s\" appears twice", origin, where,
				    pa->spec.id);
		pa->has_runtime = pa->spec.runtime != NULL;
		pa->spec.runtime_config = json_object_get(a, "runtime_config");
		if ((rc = hd_agent_check_runtime(
			 pa->spec.runtime ? pa->spec.runtime
					  : HD_AGENT_RUNTIME_DEFAULT,
			 pa->spec.runtime_config, p->check, err)) < 0)
			return reframe(rc, err, origin, where);
		v = json_object_get(a, "leader");
		if (v != NULL && !json_is_boolean(v))
			return hd_err_set(err, HD_EINVAL,
			    "%s: %sleader must be true or false", origin, where);
		pa->spec.leader = json_is_true(v);
		if (pa->spec.leader && p->leader == NULL)
			p->leader = pa->spec.id;
	}
	return 0;
}

static int
differs(const char *want, const char *have)
{
	if (want == NULL)
		return 0; /* not given: keep what is there */
	if (have == NULL)
		return 1;
	return strcmp(want, have) != 0;
}

static int
json_differs(const json_t *want, const json_t *have)
{
	char *a, *b;
	int d;

	if (want == NULL)
		return 0;
	a = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
	b = json_dumps(have, JSON_COMPACT | JSON_SORT_KEYS);
	d = a == NULL || b == NULL || strcmp(a, b) != 0;
	free(a);
	free(b);
	return d;
}

static int
apply_agent(struct plan *p, struct plan_agent *pa, json_t *list, hd_store *st,
    hd_err *err)
{
	const hd_agent_spec *sp = &pa->spec;
	hd_agent *a = NULL;
	const char *action = "unchanged";
	char *cfg = NULL;
	int rc;

	if ((rc = hd_agent__load(&a, st, sp->id, err)) < 0)
		return rc;
	if (a == NULL) {
		if ((rc = hd_agent__insert(st, sp, err)) < 0)
			return rc;
		action = "created";
	} else if (a->team_id != NULL && strcmp(a->team_id, p->team.id) != 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "%s: agent \"%s\" already belongs to team %s", p->origin,
		    sp->id, a->team_id);
		goto done;
	} else if (a->team_id == NULL || differs(sp->name, a->name) ||
	    differs(sp->role, a->role) || differs(sp->runtime, a->runtime) ||
	    json_differs(sp->runtime_config, a->runtime_config)) {
		if (sp->runtime_config != NULL)
			cfg = json_dumps(sp->runtime_config,
			    JSON_COMPACT | JSON_SORT_KEYS);
		if ((rc = hd_store_run(st, err,
			 "UPDATE agents SET team_id = ?1,"
			 " name = COALESCE(?2, name), role = COALESCE(?3, role),"
			 " runtime = COALESCE(?4, runtime),"
			 " runtime_config = COALESCE(?5, runtime_config),"
			 " updated_at = ?6 WHERE id = ?7",
			 HD_TEXT(p->team.id), HD_TEXT(sp->name), HD_TEXT(sp->role),
			 HD_TEXT(sp->runtime), HD_TEXT(cfg), HD_INT(hd_now_ms()),
			 HD_TEXT(sp->id))) < 0)
			goto done;
		hd_events_append(st, "agent_updated", p->team.id, 0, sp->id,
		    NULL);
		action = "updated";
	}
	if (strcmp(action, "unchanged") != 0)
		p->changed = 1;
	json_array_append_new(list, json_pack("{s:s, s:s, s:b}", "id", sp->id,
					"action", action, "leader",
					p->leader && !strcmp(p->leader, sp->id)));
done:
	free(cfg);
	hd_agent_free(a);
	return rc;
}

/* (5): write the loop guard only when it differs. */
static int
apply_max_messages(struct plan *p, hd_store *st, int existed,
    const char **action, hd_err *err)
{
	char key[96], want[32], *have = NULL;
	int rc;

	snprintf(key, sizeof(key), HD_TEAM_MAX_MESSAGES_KEY, p->team.id);
	snprintf(want, sizeof(want), "%lld", (long long)p->max_messages);
	if ((rc = hd_store_kv_get(&have, st, key, err)) < 0)
		return rc;
	if (have == NULL || strcmp(have, want) != 0) {
		if ((rc = hd_store_kv_put(st, key, want, err)) == 0 && existed) {
			hd_events_append(st, "team_updated", p->team.id, 0, NULL,
			    json_pack("{s:I}", "max_messages",
				(json_int_t)p->max_messages));
			*action = "updated";
		}
	}
	free(have);
	return rc;
}

static int
apply_txn(hd_store *st, void *payload, hd_err *err)
{
	struct plan *p = payload;
	hd_team *t = NULL;
	json_t *list = NULL;
	const char *action = "unchanged";
	size_t i;
	int rc;

	/* The transaction may be retried: start the report afresh. */
	json_decref(p->report);
	p->report = NULL;
	p->changed = 0;
	list = json_array();
	if ((rc = hd_team__load(&t, st, p->team.id, err)) < 0)
		goto done;
	if (t == NULL) {
		if ((rc = hd_team__insert(st, &p->team, err)) < 0)
			goto done;
		action = "created";
	} else if (differs(p->team.name, t->name) ||
	    differs(p->team.description, t->description) ||
	    differs(p->team.icon, t->icon) ||
	    differs(p->team.color, t->color) ||
	    (p->team.max_spawn_depth > 0 &&
		p->team.max_spawn_depth != t->max_spawn_depth) ||
	    cap_differs(p->team.max_children, t->max_children) ||
	    cap_differs(p->team.max_task_depth, t->max_task_depth) ||
	    cap_differs(p->team.max_new_roots, t->max_new_roots) ||
	    cap_differs(p->team.new_roots_window_s, t->new_roots_window_s)) {
		hd_team_spec up = p->team;

		up.leader = NULL;
		if ((rc = hd_team_update(NULL, st, &up, err)) < 0)
			goto done;
		action = "updated";
	}
	for (i = 0; i < p->nagents; i++)
		if ((rc = apply_agent(p, &p->agents[i], list, st, err)) < 0)
			goto done;
	if (p->leader != NULL &&
	    (t == NULL || differs(p->leader, t->leader_agent_id))) {
		if ((rc = hd_team__set_leader(st, p->team.id, p->leader, err)) < 0)
			goto done;
		if (t != NULL) {
			hd_events_append(st, "team_updated", p->team.id, 0, NULL,
			    json_pack("{s:s}", "leader", p->leader));
			action = "updated";
		}
	}
	if (p->max_messages > 0 &&
	    (rc = apply_max_messages(p, st, t != NULL, &action, err)) < 0)
		goto done;
	if (p->has_autorun) {
		hd_autorun was, now;

		if ((rc = hd_autorun_get(&was, st, p->team.id, err)) < 0 ||
		    (rc = hd_autorun_set(&now, st, p->team.id, &p->autorun,
			 err)) < 0)
			goto done;
		if (t != NULL && memcmp(&was, &now, sizeof(was)) != 0)
			action = "updated";
	}
	if (strcmp(action, "unchanged") != 0)
		p->changed = 1;
	p->report = json_pack("{s:s, s:s, s:O, s:[]}", "team", p->team.id,
	    "action", action, "agents", list, "warnings");
done:
	json_decref(list);
	hd_team_free(t);
	return rc;
}

int
hd_team_apply_json(hd_apply_report *out, hd_store *st, const json_t *doc,
    const char *origin, hd_agent_runtime_check check, hd_err *err)
{
	struct plan p;
	json_t *warnings;
	size_t i, nleaders = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	p.origin = origin;
	p.check = check;
	if ((rc = plan_build(&p, doc, err)) < 0)
		goto done;
	/* Single-leader normalisation: the first flagged stays leader. */
	for (i = 0; i < p.nagents; i++) {
		if (!p.agents[i].spec.leader)
			continue;
		if (nleaders++ > 0)
			p.agents[i].spec.leader = 0;
	}
	if ((rc = hd_store_write(st, apply_txn, &p, err)) < 0)
		goto done;
	if (nleaders > 1) {
		warnings = json_object_get(p.report, "warnings");
		json_array_append_new(warnings,
		    json_sprintf("multiple leaders flagged for team %s; keeping "
				 "the first (%s)",
			p.team.id, p.leader));
	}
	out->json = p.report;
	out->changed = p.changed;
	p.report = NULL;
done:
	json_decref(p.report);
	free(p.agents);
	return rc;
}

int
hd_team_apply_file(hd_apply_report *out, hd_store *st, const char *path,
    hd_agent_runtime_check check, hd_err *err)
{
	json_error_t jerr;
	json_t *doc;
	char *text = NULL;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_read_file(&text, &len, path, TEAMFILE_MAX, err)) < 0)
		return rc;
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (doc == NULL)
		return hd_err_set(err, HD_EINVAL, "%s:%d:%d: %s", path, jerr.line,
		    jerr.column, jerr.text);
	rc = hd_team_apply_json(out, st, doc, path, check, err);
	json_decref(doc);
	return rc;
}

void
hd_apply_report_dispose(hd_apply_report *r)
{
	if (r == NULL)
		return;
	json_decref(r->json);
	r->json = NULL;
}
