/*
 * route-teams.c -- REST routes for teams, agents and the event log
 * (SPEC 11). Each route validates its input, calls one domain function and
 * answers JSON; errors are {"error": msg} with the status of hd_http_fail.
 * POST /api/teams is the operation table's team.create
 * (src/ops/ops-team.c). GET /api/events?team=T&task=N is one task's history, its newest
 * `limit` events (the dashboard's task drawer); GET /api/runtimes lists
 * the runtimes this build can add an agent with (hd_runtime_adapters).
 */
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include <huddle/budget.h>
#include <huddle/events.h>
#include <huddle/runtime.h>
#include <huddle/supervisor.h>
#include <huddle/team.h>
#include <huddle/team_remove.h>
#include <huddle/util.h>

#include "http.h"

static int
opt_string_field(
    hd_http_req *r, json_t *body, const char *key, const char **out)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		hd_http_error(r, 400, "\"%s\" must be a string", key);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

static int
route_teams_list(hd_http_req *r)
{
	hd_teams l;
	hd_err err = HD_ERR_INIT;
	json_t *arr;
	size_t i;

	if (hd_team_list(&l, r->st, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_team_to_json(&l.items[i]));
	hd_teams_dispose(&l);
	hd_http_json(r, 200, json_pack("{s:o}", "teams", arr));
	return 0;
}

static int
route_team_get(hd_http_req *r)
{
	hd_team *t = NULL;
	hd_agents al = {0};
	hd_err err = HD_ERR_INIT;
	json_t *o, *arr;
	size_t i;

	if (hd_team_get(&t, r->st, r->params[0], &err) < 0 ||
	    hd_agent_list(&al, r->st, r->params[0], &err) < 0) {
		hd_http_fail(r, &err);
		goto done;
	}
	o = hd_team_to_json(t);
	arr = json_array();
	for (i = 0; i < al.n; i++)
		json_array_append_new(arr, hd_agent_to_json(&al.items[i]));
	json_object_set_new(o, "agents", arr);
	hd_http_json(r, 200, json_pack("{s:o}", "team", o));
done:
	hd_team_free(t);
	hd_agents_dispose(&al);
	return 0;
}

static int
route_team_delete(hd_http_req *r)
{
	const char *purge = hd_http_query(r, "purge");
	int p = purge != NULL &&
		(strcmp(purge, "1") == 0 || strcmp(purge, "true") == 0);
	hd_err err = HD_ERR_INIT;

	if (hd_team_remove(r->st, r->params[0], p, &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, 200,
		    json_pack(
			"{s:s, s:b}", "removed", r->params[0], "purged", p));
	return 0;
}

/* "parked" (the reason or null) and "woken" (wakes waiting) of agent from
 * hd_supervisor_state's JSON (NULL: both unset). */
static void
autorun_fields(json_t *a, const json_t *sv, const char *agent)
{
	const json_t *m, *found = NULL;
	size_t i;

	json_array_foreach (json_object_get(sv, "agents"), i, m)
		if (strcmp(json_string_value(json_object_get(m, "agent")),
			agent) == 0)
			found = m;
	json_object_set(a, "parked",
	    found != NULL ? json_object_get(found, "parked") : json_null());
	json_object_set_new(a, "woken",
	    json_boolean(found != NULL &&
		json_array_size(json_object_get(found, "queue")) > 0));
}

static int
route_agents_list(hd_http_req *r)
{
	hd_agents l;
	hd_budgets spent;
	const hd_runtime_adapter *rt;
	hd_err err = HD_ERR_INIT;
	json_t *arr, *sv = NULL;
	size_t i, k;

	if (hd_agent_list(&l, r->st, r->params[0], &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	/* what each has spent so far (runtime-reported or estimated), for
	 * the dashboard's cards; a read failure only loses the figures */
	if (hd_budget_list(&spent, r->st, "agent", NULL, &err) < 0)
		memset(&spent, 0, sizeof(spent));
	/* and what autorun holds for each (parked, wakes waiting) */
	if (hd_supervisor_state(&sv, r->st, r->params[0], &err) < 0)
		sv = NULL;
	arr = json_array();
	for (i = 0; i < l.n; i++) {
		json_t *a = hd_agent_to_json(&l.items[i]);
		int64_t mc = 0;

		for (k = 0; k < spent.n; k++)
			if (strcmp(spent.items[k].subject, l.items[i].id) == 0)
				mc = spent.items[k].spent_microcents;
		json_object_set_new(
		    a, "spent_usd", json_real((double)mc / 1e8));
		/* canned replies are labelled as such wherever shown */
		json_object_set_new(a, "scripted",
		    json_boolean(
			hd_runtime_find(&rt, l.items[i].runtime, NULL) == 0 &&
			rt->is_scripted));
		autorun_fields(a, sv, l.items[i].id);
		json_array_append_new(arr, a);
	}
	json_decref(sv);
	hd_budgets_dispose(&spent);
	hd_agents_dispose(&l);
	hd_http_json(r, 200, json_pack("{s:o}", "agents", arr));
	return 0;
}

static int
route_agents_add(hd_http_req *r)
{
	hd_agent_spec spec = {0};
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *body, *v;

	if ((body = hd_http_body_object(r)) == NULL)
		return 0;
	spec.team = r->params[0];
	if (opt_string_field(r, body, "id", &spec.id) < 0 ||
	    opt_string_field(r, body, "name", &spec.name) < 0 ||
	    opt_string_field(r, body, "role", &spec.role) < 0 ||
	    opt_string_field(r, body, "runtime", &spec.runtime) < 0)
		goto done;
	if (spec.id == NULL) {
		hd_http_error(r, 400, "\"id\" is required");
		goto done;
	}
	spec.runtime_config = json_object_get(body, "runtime_config");
	spec.check = hd_runtime_check_config;
	v = json_object_get(body, "leader");
	if (v != NULL && !json_is_boolean(v)) {
		hd_http_error(r, 400, "\"leader\" must be true or false");
		goto done;
	}
	spec.leader = json_is_true(v);
	if (hd_agent_add(&a, r->st, &spec, &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(
		    r, 201, json_pack("{s:o}", "agent", hd_agent_to_json(a)));
done:
	hd_agent_free(a);
	json_decref(body);
	return 0;
}

static int
route_agent_get(hd_http_req *r)
{
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;

	if (hd_agent_get(&a, r->st, r->params[0], &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(
		    r, 200, json_pack("{s:o}", "agent", hd_agent_to_json(a)));
	hd_agent_free(a);
	return 0;
}

static int
route_agent_delete(hd_http_req *r)
{
	hd_err err = HD_ERR_INIT;

	if (hd_agent_remove(r->st, r->params[0], &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(
		    r, 200, json_pack("{s:s}", "removed", r->params[0]));
	return 0;
}

/* GET /api/runtimes: the runtimes an agent may be added with, in the
 * adapter table's order, for the dashboard's "Add agent" form. */
static int
route_runtimes(hd_http_req *r)
{
	const hd_runtime_adapter *const *rt;
	json_t *arr = json_array();

	for (rt = hd_runtime_adapters(); *rt != NULL; rt++)
		json_array_append_new(arr,
		    json_pack("{s:s, s:s, s:b}", "name", (*rt)->name, "label",
			(*rt)->label, "scripted", (*rt)->is_scripted));
	hd_http_json(r, 200, json_pack("{s:o}", "runtimes", arr));
	return 0;
}

/* Parse an optional integer query parameter; answers 400 on garbage. */
static int
query_int(hd_http_req *r, const char *key, int64_t dflt, int64_t *out)
{
	const char *v = hd_http_query(r, key);
	hd_err err = HD_ERR_INIT;

	*out = dflt;
	if (v == NULL)
		return 0;
	if (hd_parse_i64(out, v, key, &err) < 0) {
		hd_http_fail(r, &err);
		return -1;
	}
	return 0;
}

static int
route_events(hd_http_req *r)
{
	const char *accept = hd_http_header(r, MHD_HTTP_HEADER_ACCEPT);
	const char *team = hd_http_query(r, "team");
	const char *lei = hd_http_header(r, "Last-Event-ID");
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	int64_t after, limit, task;
	json_t *arr;
	size_t i;

	if (team != NULL && hd_slug_check("team", team, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	if (query_int(r, "after", -1, &after) < 0 ||
	    query_int(r, "limit", 100, &limit) < 0 ||
	    query_int(r, "task", 0, &task) < 0)
		return 0;
	if ((accept != NULL && strstr(accept, "text/event-stream") != NULL) ||
	    hd_http_query(r, "stream") != NULL) {
		if (lei != NULL && lei[0] != '\0' &&
		    hd_http_sse_last_id(&after, lei, &err) < 0) {
			hd_http_fail(r, &err);
			return 0;
		}
		hd_http_sse_start(r, team, after);
		return 0;
	}
	f.team = team;
	f.kind = hd_http_query(r, "kind");
	f.after_seq = after > 0 ? after : 0;
	if (task < 0) {
		hd_http_error(r, 400, "task must be a task id (a positive "
				      "integer)");
		return 0;
	}
	if (task > 0 && (team == NULL || f.kind != NULL || after > 0)) {
		hd_http_error(r, 400, "task takes team, and neither kind nor "
				      "after: /api/events?team=<id>&task=<id>");
		return 0;
	}
	if (limit < 1 || limit > HD_EVENTS_LIMIT_MAX) {
		hd_http_error(r, 400, "limit must be between 1 and %d",
		    HD_EVENTS_LIMIT_MAX);
		return 0;
	}
	f.limit = (int)limit;
	if ((task > 0 ? hd_events_list_task(&l, r->st, team, task, f.limit,
			    &err)
		      : hd_events_list(&l, r->st, &f, &err)) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_event_to_json(&l.items[i]));
	hd_event_list_dispose(&l);
	hd_http_json(r, 200, json_pack("{s:o}", "events", arr));
	return 0;
}

const hd_route hd_routes_teams[] = {
    {"GET", "/api/teams", route_teams_list},
    {"GET", "/api/teams/:team", route_team_get},
    {"DELETE", "/api/teams/:team", route_team_delete},
    {"GET", "/api/teams/:team/agents", route_agents_list},
    {"POST", "/api/teams/:team/agents", route_agents_add},
    {"GET", "/api/agents/:agent", route_agent_get},
    {"DELETE", "/api/agents/:agent", route_agent_delete},
    {"GET", "/api/events", route_events},
    {"GET", "/api/runtimes", route_runtimes},
    {NULL, NULL, NULL},
};
