/*
 * route-ops.c -- the one REST handler of every operation in the table
 * (src/ops/ops.h): route.c routes an entry's method and path here, and
 * this reads the request the entry's way.
 *
 *  (1) The arguments are the JSON body (none: {}) -- for a GET, the query
 *      string's values of the entry's REST keys, typed by the entry (an
 *      integer parsed, a flag true unless "0", text as it came: the
 *      library judges it, its UTF-8 too) -- with the path's
 *      captures put over it under their REST keys (":id" -> "id"), checked
 *      by hd_ops_check(HD_OPS_REST): a field the entry does not name is
 *      refused (400), as is a wrong type or a value out of its limits.
 *  (2) Who acts is the agent the request proves (identity.c), which "as"
 *      (or the entry's rest_as: a message's "from") in the body may name
 *      -- naming one without its proof is refused (403); without proof
 *      the caller acts as the user. For an operation only an agent may
 *      do (HD_OPW_AGENT: a claim), "agent" names the actor too, once
 *      (not where rest_as names it); the user is then refused with the
 *      entry's rest_agent_required (400).
 *  (3) The answer is the handler's JSON with the entry's status, or
 *      hd_http_fail's status for its error.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "http.h"

/* The actor the body names (2); -1 after answering. */
static int
named_actor(hd_http_req *r, const hd_op *op, const json_t *body,
    const char **named)
{
	const char *key = op->rest_as != NULL ? op->rest_as : "as";
	const json_t *as = json_object_get(body, key);
	const json_t *agent = json_object_get(body, "agent");

	if (as != NULL && !json_is_string(as)) {
		hd_http_error(r, 400, "\"%s\" must be a string", key);
		return -1;
	}
	*named = json_string_value(as);
	if (op->who != HD_OPW_AGENT || op->rest_as != NULL || agent == NULL)
		return 0;
	if (!json_is_string(agent)) {
		hd_http_error(r, 400, "\"agent\" must be an agent id");
		return -1;
	}
	if (*named != NULL && strcmp(*named, json_string_value(agent)) != 0) {
		hd_http_error(r, 400, "a claim names its claimer once: "
				      "\"agent\" or \"as\"");
		return -1;
	}
	*named = json_string_value(agent);
	return 0;
}

/* A GET's arguments from its query string (1); -1 after answering. */
static int
query_args(hd_http_req *r, const hd_op *op, json_t *body)
{
	const hd_op_arg *a;
	hd_err err = HD_ERR_INIT;
	const char *key, *q;
	int64_t n;

	for (a = op->args; a != NULL && a->name != NULL; a++) {
		key = a->rest == NULL ? a->name : a->rest;
		if (key[0] == '\0' || key[0] == ':' ||
		    (q = hd_http_query(r, key)) == NULL)
			continue;
		if (a->type == HD_OPT_INT) {
			if (hd_parse_i64(&n, q, key, &err) < 0) {
				hd_http_fail(r, &err);
				return -1;
			}
			json_object_set_new(body, key, json_integer(n));
		} else if (a->type == HD_OPT_BOOL)
			json_object_set_new(
			    body, key, json_boolean(strcmp(q, "0") != 0));
		else /* unchecked, as on the CLI: the library judges it */
			json_object_set_new(body, key, json_string_nocheck(q));
	}
	return 0;
}

int
hd_http_route_ops(hd_http_req *r)
{
	const hd_op *op = hd_http_route_op(r->method, r->path);
	const char *caps[4], *named = NULL;
	char actor[HD_HTTP_ACTOR_MAX];
	hd_op_call call;
	hd_err err = HD_ERR_INIT;
	json_t *body = NULL, *args = NULL, *result = NULL;
	size_t ncaps, i;

	if (op == NULL) { /* route.c found it: cannot happen */
		hd_http_error(r, 404, "no such route");
		return 0;
	}
	if (r->body_len > 0 && (body = hd_http_body_object(r)) == NULL)
		return 0;
	if (body == NULL)
		body = json_object();
	if (strcmp(r->method, "GET") == 0 && query_args(r, op, body) < 0)
		goto done;
	ncaps = hd_ops_rest_captures(op, caps);
	for (i = 0; i < ncaps && i < (size_t)r->nparams; i++)
		if (caps[i] != NULL)
			json_object_set_new(
			    body, caps[i], json_string(r->params[i]));
	if (hd_ops_check(&args, op, HD_OPS_REST, body, &err) < 0) {
		hd_http_fail(r, &err);
		goto done;
	}
	if (named_actor(r, op, body, &named) < 0)
		goto done;
	memset(&call, 0, sizeof(call));
	if (op->who != HD_OPW_ANYONE) {
		if (hd_http_acting(r, named, actor) < 0)
			goto done;
		/* as the user, what the body named (nothing, or "user") */
		call.agent = strcmp(actor, HD_HTTP_USER) == 0 ? named : actor;
		if (call.agent != NULL && strcmp(call.agent, HD_HTTP_USER) == 0)
			call.agent = NULL;
	}
	if (op->who == HD_OPW_AGENT && call.agent == NULL) {
		hd_http_error(r, 400, "%s",
		    op->rest_agent_required ? op->rest_agent_required
					    : "\"agent\" is required");
		goto done;
	}
	call.st = r->st;
	call.args = args;
	call.team = json_string_value(json_object_get(args, "team"));
	call.dialect = HD_OPS_REST;
	if (hd_ops_run(&result, op, &call, &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, op->status ? op->status : 200,
		    result != NULL ? result : json_object());
done:
	json_decref(args);
	json_decref(body);
	return 0;
}
