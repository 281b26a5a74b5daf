/*
 * route-board.c -- the board over REST (SPEC 4, 11). The acting identity
 * is the agent the request proves (identity.c), which "as" in the body
 * may name -- naming one without its proof is refused (403); without
 * proof the caller acts as the user, who may assign, start, complete,
 * fail and release any task like a leader. A claim's claimer ("agent",
 * or "as") and auto-claim's "agent" are the acting agent too: the user
 * gives a task to an agent with assign. Assign takes "agent", or "auto": true
 * to let the board pick the member (hd_board_assign_auto). A task is
 * made a subtask by "parent_id" at create; POST /api/teams/:team/delegate
 * {"to", "subject", "description"?, "priority"?, "parent_id"?, "as"?}
 * creates, assigns and tells the assignee in one act (hd_board_delegate).
 * GET /api/tasks/:id is the whole task (hd_board_get): its comments and
 * its dependents too, which the list leaves out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/util.h>

#include "http.h"

static int
parse_id(hd_http_req *r, const char *s, int64_t *id)
{
	hd_err err = HD_ERR_INIT;

	if (hd_parse_i64(id, s, "task id", &err) < 0 || *id <= 0) {
		hd_http_error(r, 400, "task id must be a positive integer, not "
				      "\"%.32s\"",
		    s);
		return -1;
	}
	return 0;
}

static const char *
body_str(json_t *body, const char *key)
{
	return json_string_value(json_object_get(body, key));
}

/* The actor of a write: the agent the body names, checked against
 * the request's proof (identity.c); as the user, what the body named
 * (nothing, or "user"). NULL in *who means the user. Returns -1 after
 * answering 403. */
static int
acting(hd_http_req *r, const char *named, char actor[HD_HTTP_ACTOR_MAX],
    const char **who)
{
	if (hd_http_acting(r, named, actor) < 0)
		return -1;
	*who = strcmp(actor, HD_HTTP_USER) == 0 ? named : actor;
	return 0;
}

/* Check that every present key of body has the given JSON type. */
static int
body_types(hd_http_req *r, json_t *body, const char *const *keys,
    const char *types)
{
	size_t i;

	for (i = 0; keys[i] != NULL; i++) {
		json_t *v = json_object_get(body, keys[i]);
		int ok;

		if (v == NULL)
			continue;
		switch (types[i]) {
		case 's': ok = json_is_string(v); break;
		case 'i': ok = json_is_integer(v); break;
		case 'o': ok = json_is_object(v); break;
		case 'a': ok = json_is_array(v); break;
		case 'b': ok = json_is_boolean(v); break;
		default: ok = 1; break;
		}
		if (!ok) {
			hd_http_error(r, 400, "\"%s\" must be %s", keys[i],
			    types[i] == 's' ? "a string"
			    : types[i] == 'i' ? "an integer"
			    : types[i] == 'o' ? "an object"
			    : types[i] == 'b' ? "a boolean"
					      : "an array");
			return -1;
		}
	}
	return 0;
}

static void
answer_task(hd_http_req *r, int status, hd_task *t, int rc, hd_err *err)
{
	if (rc < 0)
		hd_http_fail(r, err);
	else
		hd_http_json(r, status, json_pack("{s:o}", "task",
		    hd_task_to_json(t)));
	hd_task_free(t);
}

static int
route_tasks_list(hd_http_req *r)
{
	hd_task_filter f;
	hd_tasks l;
	hd_err err = HD_ERR_INIT;
	const char *meta = hd_http_query(r, "meta");
	const char *limit = hd_http_query(r, "limit");
	int64_t n = 0;
	json_t *arr;
	size_t i;

	memset(&f, 0, sizeof(f));
	f.status = hd_http_query(r, "status");
	f.owner = hd_http_query(r, "owner");
	f.ready = hd_http_query(r, "ready") != NULL;
	f.blocked = hd_http_query(r, "blocked") != NULL;
	if (meta != NULL) {
		f.meta = &meta;
		f.nmeta = 1;
	}
	if (limit != NULL && (hd_parse_i64(&n, limit, "limit", &err) < 0 ||
				 n < 1 || n > 10000)) {
		hd_http_error(r, 400, "limit must be between 1 and 10000");
		return 0;
	}
	f.limit = (int)n;
	if (hd_board_list(&l, r->st, r->params[0], &f, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_task_to_json(&l.items[i]));
	hd_tasks_dispose(&l);
	hd_http_json(r, 200, json_pack("{s:o}", "tasks", arr));
	return 0;
}

/* "parent_id" (an integer, checked by body_types) into spec->parent_id:
 * a positive task id when present. */
static int
body_parent(hd_http_req *r, json_t *body, hd_task_spec *spec)
{
	json_t *v = json_object_get(body, "parent_id");

	if (v == NULL || json_is_null(v))
		return 0;
	spec->parent_id = (int64_t)json_integer_value(v);
	if (spec->parent_id <= 0) {
		hd_http_error(r, 400, "\"parent_id\" must be a task id (a "
				      "positive integer)");
		return -1;
	}
	return 0;
}

/* POST /api/teams/:team/delegate: create, assign to "to" and tell it. */
static int
route_delegate(hd_http_req *r)
{
	static const char *const keys[] = {"to", "subject", "description",
	    "priority", "parent_id", "as", NULL};
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	char actor[HD_HTTP_ACTOR_MAX];
	const char *to;
	json_t *body;
	int rc;

	if ((body = hd_http_body_object(r)) == NULL)
		return 0;
	if (body_types(r, body, keys, "sssiis") < 0 ||
	    body_parent(r, body, &spec) < 0)
		goto done;
	to = body_str(body, "to");
	spec.subject = body_str(body, "subject");
	if (to == NULL || spec.subject == NULL) {
		hd_http_error(r, 400, "\"%s\" is required",
		    to == NULL ? "to" : "subject");
		goto done;
	}
	spec.team = r->params[0];
	spec.description = body_str(body, "description");
	spec.priority = json_integer_value(json_object_get(body, "priority"));
	if (acting(r, body_str(body, "as"), actor, &spec.created_by) < 0)
		goto done;
	rc = hd_board_delegate(&t, r->st, &spec, to, &err);
	answer_task(r, 201, t, rc, &err);
done:
	json_decref(body);
	return 0;
}

static int
route_tasks_create(hd_http_req *r)
{
	static const char *const keys[] = {"subject", "description",
	    "active_form", "priority", "metadata", "depends_on", "as",
	    "parent_id", NULL};
	hd_task_spec spec = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	char actor[HD_HTTP_ACTOR_MAX];
	int64_t ids[HD_TASK_DEPS_MAX];
	json_t *body, *deps, *v;
	size_t i;
	int rc;

	if ((body = hd_http_body_object(r)) == NULL)
		return 0;
	if (body_types(r, body, keys, "sssioasi") < 0 ||
	    body_parent(r, body, &spec) < 0)
		goto done;
	deps = json_object_get(body, "depends_on");
	if (json_array_size(deps) > HD_TASK_DEPS_MAX) {
		hd_http_error(r, 400, "a task may depend on at most %d others",
		    HD_TASK_DEPS_MAX);
		goto done;
	}
	json_array_foreach(deps, i, v) {
		if (!json_is_integer(v)) {
			hd_http_error(r, 400, "\"depends_on\" must be an array "
					      "of task ids");
			goto done;
		}
		ids[i] = (int64_t)json_integer_value(v);
	}
	spec.team = r->params[0];
	spec.subject = body_str(body, "subject");
	if (spec.subject == NULL) {
		hd_http_error(r, 400, "\"subject\" is required");
		goto done;
	}
	spec.description = body_str(body, "description");
	spec.active_form = body_str(body, "active_form");
	spec.priority = json_integer_value(json_object_get(body, "priority"));
	spec.metadata = json_object_get(body, "metadata");
	spec.depends_on = ids;
	spec.ndepends_on = json_array_size(deps);
	if (acting(r, body_str(body, "as"), actor, &spec.created_by) < 0)
		goto done;
	rc = hd_board_create(&t, r->st, &spec, &err);
	answer_task(r, 201, t, rc, &err);
done:
	json_decref(body);
	return 0;
}

static int
route_task_get(hd_http_req *r)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id;
	int rc;

	if (parse_id(r, r->params[0], &id) < 0)
		return 0;
	rc = hd_board_get(&t, r->st, id, &err);
	answer_task(r, 200, t, rc, &err);
	return 0;
}

/* POST /api/tasks/:id/assign: {"agent"} or {"auto": true}, exactly one;
 * the answer names the assignee and, with auto, why it was picked. */
static void
task_assign(hd_http_req *r, json_t *body, int64_t id, const char *as)
{
	const char *agent = body_str(body, "agent");
	int automatic = json_is_true(json_object_get(body, "auto"));
	hd_board_pick pick;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *o;
	int rc;

	if (agent != NULL && automatic) {
		hd_http_error(r, 400, "pass \"agent\" or \"auto\", not both");
		return;
	}
	if (agent == NULL && !automatic) {
		hd_http_error(
		    r, 400, "\"agent\" or \"auto\": true is required");
		return;
	}
	if (automatic)
		rc = hd_board_assign_auto(&t, &pick, r->st, id, as, &err);
	else
		rc = hd_board_assign(&t, r->st, id, agent, as, &err);
	if (rc < 0) {
		hd_http_fail(r, &err);
		return;
	}
	o = json_pack("{s:o, s:s}", "task", hd_task_to_json(t), "assignee",
	    t->owner);
	if (automatic)
		json_object_set_new(
		    o, "picked_because", json_string(pick.reason));
	hd_http_json(r, 200, o);
	hd_task_free(t);
}

/* POST /api/tasks/:id/:action -- the state changes. */
static int
route_task_action(hd_http_req *r)
{
	static const char *const keys[] = {"as", "agent", "result", "reason",
	    "depends_on", "body", "auto", NULL};
	const char *action = r->params[1], *as, *named;
	char actor[HD_HTTP_ACTOR_MAX];
	hd_task *t = NULL;
	hd_task_comment *cm = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *body = NULL;
	int64_t id;
	int rc;

	if (parse_id(r, r->params[0], &id) < 0)
		return 0;
	if (r->body_len > 0 && (body = hd_http_body_object(r)) == NULL)
		return 0;
	if (body == NULL)
		body = json_object();
	if (body_types(r, body, keys, "ssssisb") < 0)
		goto done;
	named = body_str(body, "as");
	if (strcmp(action, "claim") == 0 && body_str(body, "agent") != NULL) {
		/* the claimer acts: "agent", or "as" -- not two of them */
		if (named != NULL && strcmp(named, body_str(body, "agent")) != 0) {
			hd_http_error(r, 400, "a claim names its claimer once: "
					      "\"agent\" or \"as\"");
			goto done;
		}
		named = body_str(body, "agent");
	}
	if (acting(r, named, actor, &as) < 0)
		goto done;
	if (as == NULL)
		as = HD_BOARD_USER;
	if (strcmp(action, "claim") == 0) {
		if (strcmp(as, HD_BOARD_USER) == 0) {
			hd_http_error(r, 400, "\"agent\" is required: an agent "
					      "claims (the user assigns)");
			goto done;
		}
		rc = hd_board_claim(&t, r->st, id, as, &err);
	} else if (strcmp(action, "assign") == 0) {
		task_assign(r, body, id, as);
		goto done;
	} else if (strcmp(action, "start") == 0)
		rc = hd_board_start(&t, r->st, id, as, &err);
	else if (strcmp(action, "complete") == 0)
		rc = hd_board_complete(&t, r->st, id, as,
		    body_str(body, "result"), &err);
	else if (strcmp(action, "fail") == 0)
		rc = hd_board_fail(&t, r->st, id, as, body_str(body, "reason"),
		    &err);
	else if (strcmp(action, "release") == 0)
		rc = hd_board_release(&t, r->st, id, as, &err);
	else if (strcmp(action, "cancel") == 0)
		rc = hd_board_cancel(&t, r->st, id, as, &err);
	else if (strcmp(action, "retry") == 0)
		rc = hd_board_retry(&t, r->st, id, as, &err);
	else if (strcmp(action, "link") == 0) {
		if (!json_is_integer(json_object_get(body, "depends_on"))) {
			hd_http_error(r, 400, "\"depends_on\" (a task id) is "
					      "required");
			goto done;
		}
		rc = hd_board_link(&t, r->st, id,
		    json_integer_value(json_object_get(body, "depends_on")), as,
		    &err);
	} else if (strcmp(action, "comment") == 0) {
		if (body_str(body, "body") == NULL) {
			hd_http_error(r, 400, "\"body\" is required");
			goto done;
		}
		if (hd_board_comment(&cm, r->st, id, as, body_str(body, "body"),
			&err) < 0)
			hd_http_fail(r, &err);
		else
			hd_http_json(r, 201, json_pack("{s:o}", "comment",
			    hd_task_comment_to_json(cm)));
		hd_task_comment_free(cm);
		goto done;
	} else {
		hd_http_error(r, 404, "no task action \"%.32s\": use claim, "
				      "assign, start, complete, fail, release, "
				      "cancel, retry, link or comment",
		    action);
		goto done;
	}
	answer_task(r, 200, t, rc, &err);
done:
	json_decref(body);
	return 0;
}

static int
route_auto_claim(hd_http_req *r)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	char actor[HD_HTTP_ACTOR_MAX];
	const char *who;
	json_t *body, *agent;
	int rc;

	if ((body = hd_http_body_object(r)) == NULL)
		return 0;
	agent = json_object_get(body, "agent");
	if (agent != NULL && !json_is_string(agent))
		hd_http_error(r, 400, "\"agent\" must be an agent id");
	else if (acting(r, json_string_value(agent), actor, &who) < 0)
		; /* answered */
	else if (who == NULL)
		hd_http_error(r, 400, "\"agent\" is required");
	else {
		rc = hd_board_auto_claim(&t, r->st, r->params[0], who, &err);
		answer_task(r, 200, t, rc, &err);
	}
	json_decref(body);
	return 0;
}

const hd_route hd_routes_board[] = {
	{"GET", "/api/teams/:team/tasks", route_tasks_list},
	{"POST", "/api/teams/:team/tasks", route_tasks_create},
	{"POST", "/api/teams/:team/auto-claim", route_auto_claim},
	{"POST", "/api/teams/:team/delegate", route_delegate},
	{"GET", "/api/tasks/:id", route_task_get},
	{"POST", "/api/tasks/:id/:action", route_task_action},
	{NULL, NULL, NULL},
};
