/*
 * docs-dump.c -- prints, as one JSON object on stdout, what the reference
 * docs describe that the binary cannot be asked for: the operation table
 * (src/ops/ops.h: every entry's names on each surface, its REST method,
 * path and status, its arguments with types, limits and spellings) and
 * every route the HTTP server matches (the table's and the hand-written
 * ones, hd_http_route_tables), and the runtimes an agent can name
 * (hd_runtime_adapters). Caller: tests/e2e/docs.py, which generates
 * docs/rest.md's argument tables from it and fails the docs test when a
 * route exists that docs/rest.md does not mention, or the other way round,
 * and when a runtime has no section in docs/runtimes.md.
 * It reads only static tables: no store, no server.
 */
#include <stdio.h>

#include <jansson.h>

#include <huddle/runtime.h>

#include "http/http.h"
#include "ops/ops.h"

static const char *const type_names[] = {
    [HD_OPT_STR] = "string",
    [HD_OPT_INT] = "integer",
    [HD_OPT_BOOL] = "boolean",
    [HD_OPT_ENUM] = "enum",
    [HD_OPT_OBJECT] = "object",
    [HD_OPT_INTS] = "integer list",
    [HD_OPT_STRS] = "string list",
};

static const char *const who_names[] = {
    [HD_OPW_ANYONE] = "anyone",
    [HD_OPW_MEMBER] = "member",
    [HD_OPW_AGENT] = "agent",
    [HD_OPW_LEADER] = "leader",
};

static json_t *
str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
arg_json(const hd_op_arg *a)
{
	json_t *j = json_object(), *values = json_array();
	const char *const *v;

	for (v = a->values; v != NULL && *v != NULL; v++)
		json_array_append_new(values, json_string(*v));
	json_object_set_new(j, "name", json_string(a->name));
	json_object_set_new(j, "type", json_string(type_names[a->type]));
	json_object_set_new(j, "required",
	    json_boolean(a->flags & HD_OPA_REQUIRED));
	json_object_set_new(j, "required_mcp_only",
	    json_boolean(a->flags & HD_OPA_REQ_MCP));
	json_object_set_new(j, "id", json_boolean(a->flags & HD_OPA_ID));
	json_object_set_new(j, "mcp", json_boolean(!(a->flags & HD_OPA_NO_MCP)));
	json_object_set_new(j, "null_ok", json_boolean(a->flags & HD_OPA_NULL_OK));
	json_object_set_new(j, "min", json_integer(a->min));
	json_object_set_new(j, "max", json_integer(a->max));
	json_object_set_new(j, "values", values);
	json_object_set_new(j, "desc", str_or_null(a->desc));
	json_object_set_new(j, "rest",
	    a->rest == NULL ? json_string(a->name) : json_string(a->rest));
	json_object_set_new(j, "cli", str_or_null(a->cli));
	json_object_set_new(j, "cli_meta", str_or_null(a->cli_meta));
	json_object_set_new(j, "cli_help", str_or_null(a->cli_help));
	return j;
}

static json_t *
args_json(const hd_op_arg *args)
{
	json_t *list = json_array();

	for (; args != NULL && args->name != NULL; args++)
		json_array_append_new(list, arg_json(args));
	return list;
}

static json_t *
op_json(const hd_op *op)
{
	json_t *j = json_object();

	json_object_set_new(j, "name", json_string(op->name));
	json_object_set_new(j, "who", json_string(who_names[op->who]));
	json_object_set_new(j, "write", json_boolean(op->flags & HD_OPF_WRITE));
	json_object_set_new(j, "mcp", str_or_null(op->mcp));
	json_object_set_new(j, "method", str_or_null(op->method));
	json_object_set_new(j, "path", str_or_null(op->path));
	json_object_set_new(j, "status", json_integer(op->status));
	json_object_set_new(j, "rest_as",
	    json_string(op->rest_as != NULL ? op->rest_as : "as"));
	json_object_set_new(j, "cli", str_or_null(op->cli));
	json_object_set_new(j, "args", args_json(op->args));
	json_object_set_new(j, "rest_common", args_json(op->rest_common));
	json_object_set_new(j, "one_of",
	    op->one_of[0] != NULL ? json_pack("[ss]", op->one_of[0],
					op->one_of[1])
				  : json_null());
	return j;
}

static void
add_routes(json_t *list, const hd_route *rt, int op)
{
	for (; rt->method != NULL; rt++)
		json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "method",
						rt->method, "path", rt->pattern,
						"op", op));
}

int
main(void)
{
	const hd_op *const *o;
	const hd_route *const *t;
	const hd_runtime_adapter *const *rt;
	json_t *out = json_object(), *ops = json_array(), *routes = json_array();
	json_t *runtimes = json_array();

	for (o = hd_ops_all(); *o != NULL; o++)
		json_array_append_new(ops, op_json(*o));
	add_routes(routes, hd_http_routes_ops(), 1);
	for (t = hd_http_route_tables(); *t != NULL; t++)
		add_routes(routes, *t, 0);
	for (rt = hd_runtime_adapters(); *rt != NULL; rt++)
		json_array_append_new(runtimes, json_string((*rt)->name));
	json_object_set_new(out, "ops", ops);
	json_object_set_new(out, "runtimes", runtimes);
	json_object_set_new(out, "routes", routes);
	if (json_dumpf(out, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) < 0)
		return 1;
	putchar('\n');
	json_decref(out);
	return 0;
}
