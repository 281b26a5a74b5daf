/*
 * route-mail.c -- spawning over REST (SPEC 3, 11); sending mail, the
 * inbox, team state and shutdown are the operation table's
 * (src/ops/ops-mail.c, src/ops/ops-team.c). A spawn's "as" (the spawning
 * agent) must be the agent the request proves (identity.c), and may be
 * left out when it proves one; without it the user spawns.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>
#include <huddle/shutdown.h>
#include <huddle/spawn.h>
#include <huddle/team_state.h>
#include <huddle/util.h>

#include "http.h"

static const char *
body_str(json_t *body, const char *key)
{
	return json_string_value(json_object_get(body, key));
}

static int
check_strings(hd_http_req *r, json_t *body, const char *const *keys)
{
	size_t i;

	for (i = 0; keys[i] != NULL; i++) {
		json_t *v = json_object_get(body, keys[i]);

		if (v != NULL && !json_is_string(v)) {
			hd_http_error(r, 400, "\"%s\" must be a string", keys[i]);
			return -1;
		}
	}
	return 0;
}

/* The request's body, an object whose keys (those of them present) are
 * strings; NULL when it is not (answered). */
static json_t *
string_body(hd_http_req *r, const char *const *keys)
{
	json_t *body;

	if ((body = hd_http_body_object(r)) != NULL &&
	    check_strings(r, body, keys) < 0) {
		json_decref(body);
		return NULL;
	}
	return body;
}

/* Who acts (identity.c): the agent the request proves, else the one body
 * names under key (the user when none), into *who; -1 when refused
 * (answered). */
static int
acting(hd_http_req *r, json_t *body, const char *key,
    char actor[HD_HTTP_ACTOR_MAX], const char **who)
{
	if (hd_http_acting(r, body_str(body, key), actor) < 0)
		return -1;
	*who = strcmp(actor, HD_HTTP_USER) == 0 ? body_str(body, key) : actor;
	return 0;
}

/* 1 when key is one of keys. */
static int
str_in(const char *const *keys, const char *key)
{
	size_t i;

	for (i = 0; keys[i] != NULL; i++)
		if (strcmp(keys[i], key) == 0)
			return 1;
	return 0;
}

static int
route_spawn(hd_http_req *r)
{
	static const char *const keys[] = {"name", "as", "role", "runtime",
	    "model", "task", "replaces", NULL};
	hd_spawn_spec spec;
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	char actor[HD_HTTP_ACTOR_MAX];
	const char *key;
	json_t *body, *v;

	if ((body = string_body(r, keys)) == NULL)
		return 0;
	json_object_foreach (body, key, v) {
		/* a misspelt field is refused, never dropped */
		if (strcmp(key, "runtime_config") != 0 &&
		    !str_in(keys, key)) {
			hd_http_error(r, 400,
			    "unknown field \"%.64s\": use name, as, task, "
			    "role, runtime, runtime_config, model or replaces",
			    key);
			goto done;
		}
	}
	memset(&spec, 0, sizeof(spec));
	if (acting(r, body, "as", actor, &spec.caller) < 0)
		goto done;
	spec.team = r->params[0];
	spec.id = body_str(body, "name");
	spec.role = body_str(body, "role");
	spec.runtime = body_str(body, "runtime");
	spec.runtime_config = json_object_get(body, "runtime_config");
	spec.model = body_str(body, "model");
	spec.replaces = body_str(body, "replaces");
	spec.check = hd_runtime_check_config;
	spec.task = body_str(body, "task");
	if (spec.id == NULL)
		hd_http_error(r, 400, "\"name\" is required");
	else if (hd_team_spawn(&a, r->st, &spec, &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, 201, json_pack("{s:o}", "agent",
		    hd_agent_to_json(a)));
done:
	hd_agent_free(a);
	json_decref(body);
	return 0;
}

const hd_route hd_routes_mail[] = {
	{"POST", "/api/teams/:team/spawn", route_spawn},
	{NULL, NULL, NULL},
};
