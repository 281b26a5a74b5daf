/*
 * ops.c -- the operation table's engine (ops.h): the table itself, the
 * MCP inputSchema made from an entry's arguments, and the one argument
 * check every surface runs, worded in the surface's dialect.
 *
 * Invariants:
 *  (1) An argument an entry does not name is refused on every surface,
 *      never dropped: over MCP except the identity arguments (mcp.c reads
 *      them), over REST except "as" (or the entry's rest_as) and, for an
 *      agent-only operation without rest_as, "agent" (the route reads
 *      them), and the fields its route family shares (rest_common:
 *      typed, then ignored), on the CLI by getopt.
 *  (2) The checked object holds canonical names only, each of its
 *      declared type; a handler reads nothing else.
 *  (3) The table is fixed once a surface has read it: hd_ops_all builds
 *      it on first use (once, whichever thread asks first) and
 *      hd_ops_test_add is refused afterwards.
 *  (4) A limit binds where the entry says: an int's range and an enum's
 *      values on every surface, unless the CLI has its own range
 *      (cli_more) or a surface leaves the values to the library
 *      (HD_OPA_OPEN_REST, HD_OPA_OPEN_CLI).
 *  (5) CLI positionals: those argv must fill (required, with no older
 *      option spelling them) take theirs first; the others take what is
 *      left, in order -- so `send TEXT --team T` and `send T TEXT` both
 *      read. A value given both ways (TEAM and --team, --as and --from)
 *      must agree.
 * Callers: mcp.c, route.c and route-ops.c, src/cli/cli-ops.c, and the
 * group files' handlers (hd_op_str and friends).
 *
 * Hand-written beside the table: nothing any more (messages, task
 * create/list, chat read and spawn became entries once the table could
 * say their surfaces' own spellings). A REST refusal of an unknown field
 * may keep a route's older words (rest_unknown: spawn's "use name, as,
 * task, ..."); a CLI JSON option that is not JSON says where the parser
 * stopped (`--config: line 1, column 4: ...`), as agent add's does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/util.h>

#include "ops.h"

#define OPS_MAX 96
#define OPS_EXTRA 4

static const hd_op *extra[OPS_EXTRA];
static size_t nextra;
static const hd_op *table[OPS_MAX + 1];
static int built;
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

static const char *const identity_keys[] = {
    "authorAgentId",
    "teamId",
    "roomId",
    "agent",
    "team_name",
    NULL,
};

/* The groups in tools/list order. */
static void
build(void)
{
	static const hd_op *const groups[] = {
	    hd_ops_chat,
	    hd_ops_board,
	    hd_ops_team,
	    hd_ops_mail,
	    hd_ops_memory,
	    hd_ops_routine,
	    hd_ops_spend,
	    NULL,
	};
	const hd_op *const *g;
	const hd_op *op;
	size_t n = 0, i;

	for (g = groups; *g != NULL; g++)
		for (op = *g; op->name != NULL && n < OPS_MAX; op++)
			table[n++] = op;
	for (i = 0; i < nextra && n < OPS_MAX; i++)
		table[n++] = extra[i];
	table[n] = NULL;
	built = 1;
}

const hd_op *const *
hd_ops_all(void)
{
	pthread_once(&build_once, build);
	return table;
}

int
hd_ops_test_add(const hd_op *op)
{
	if (built || nextra == OPS_EXTRA)
		return -1;
	extra[nextra++] = op;
	return 0;
}

const hd_op *
hd_ops_find(const char *name)
{
	const hd_op *const *o;

	for (o = hd_ops_all(); *o != NULL; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

const hd_op *
hd_ops_find_mcp(const char *tool)
{
	const hd_op *const *o;

	for (o = hd_ops_all(); *o != NULL; o++)
		if ((*o)->mcp != NULL && strcmp((*o)->mcp, tool) == 0)
			return *o;
	return NULL;
}

const hd_op *
hd_ops_find_cli(const char *words)
{
	const hd_op *const *o;

	for (o = hd_ops_all(); *o != NULL; o++)
		if ((*o)->cli != NULL && strcmp((*o)->cli, words) == 0)
			return *o;
	return NULL;
}

int
hd_ops_identity_key(const char *key)
{
	int i;

	for (i = 0; identity_keys[i] != NULL; i++)
		if (strcmp(identity_keys[i], key) == 0)
			return 1;
	return 0;
}

/* ---- the MCP schema --------------------------------------------------- */

static const char *
schema_type(hd_op_type t)
{
	switch (t) {
	case HD_OPT_INT: return "integer";
	case HD_OPT_BOOL: return "boolean";
	case HD_OPT_OBJECT: return "object";
	case HD_OPT_INTS: return "array";
	case HD_OPT_STRS: return "array";
	default: return "string";
	}
}

static int
on_mcp(const hd_op_arg *a)
{
	return !(a->flags & HD_OPA_NO_MCP);
}

json_t *
hd_ops_schema(const hd_op *op)
{
	json_t *props = json_object(), *req = json_array(), *p, *vals;
	const hd_op_arg *a;
	const char *who = op->mcp_agent_desc != NULL ? op->mcp_agent_desc
						     : "the acting agent";
	char desc[160];
	size_t i;

	for (a = op->args; a != NULL && a->name != NULL; a++) {
		if (!on_mcp(a))
			continue;
		p = json_pack("{s:s}", "type", schema_type(a->type));
		if (a->type == HD_OPT_INTS)
			json_object_set_new(
			    p, "items", json_pack("{s:s}", "type", "integer"));
		if (a->type == HD_OPT_STRS)
			json_object_set_new(
			    p, "items", json_pack("{s:s}", "type", "string"));
		if (a->type == HD_OPT_STRS && a->max > 0)
			json_object_set_new(p, "maxItems", json_integer(a->max));
		if (a->type == HD_OPT_ENUM) {
			vals = json_array();
			for (i = 0; a->values[i] != NULL; i++)
				json_array_append_new(
				    vals, json_string(a->values[i]));
			json_object_set_new(p, "enum", vals);
		}
		if (a->type == HD_OPT_INT && a->min < a->max) {
			json_object_set_new(p, "minimum", json_integer(a->min));
			json_object_set_new(p, "maximum", json_integer(a->max));
		}
		if (a->type == HD_OPT_INT && (a->flags & HD_OPA_ID))
			json_object_set_new(p, "minimum", json_integer(1));
		if (a->type == HD_OPT_STR && a->max > 0)
			json_object_set_new(p, "maxLength", json_integer(a->max));
		if (a->desc != NULL)
			json_object_set_new(p, "description", json_string(a->desc));
		json_object_set_new(props, a->name, p);
		if (a->flags & (HD_OPA_REQUIRED | HD_OPA_REQ_MCP))
			json_array_append_new(req, json_string(a->name));
	}
	snprintf(desc, sizeof(desc), "unbound connections only: %s", who);
	if (op->mcp_ids == HD_OPI_AGENT_TEAM ||
	    op->mcp_ids == HD_OPI_AGENT_TEAM_NAME)
		json_object_set_new(props, "authorAgentId",
		    json_pack("{s:s, s:s}", "type", "string", "description",
			desc));
	if (op->mcp_ids == HD_OPI_AGENT_TEAM)
		json_object_set_new(props, "teamId",
		    json_pack("{s:s, s:s}", "type", "string", "description",
			"unbound connections only: the team"));
	if (op->mcp_ids == HD_OPI_TEAM_NAME ||
	    op->mcp_ids == HD_OPI_AGENT_TEAM_NAME)
		json_object_set_new(props, "team_name",
		    json_pack("{s:s, s:s}", "type", "string", "description",
			"unbound connections only: the team"));
	return json_pack("{s:s, s:o, s:o}", "type", "object", "properties",
	    props, "required", req);
}

/* ---- the check -------------------------------------------------------- */

/* The REST key of a (":cap" gives "cap"); NULL when not on REST. */
static const char *
rest_key(const hd_op_arg *a)
{
	if (a->rest == NULL)
		return a->name;
	if (a->rest[0] == '\0')
		return NULL;
	return a->rest[0] == ':' ? a->rest + 1 : a->rest;
}

/* How a names the argument in messages. */
static void
label(char *buf, size_t len, const hd_op_arg *a, hd_ops_dialect d)
{
	if (d == HD_OPS_REST && a->rest != NULL && a->rest[0] == ':')
		snprintf(buf, len, "%s", a->noun ? a->noun : rest_key(a));
	else if (d == HD_OPS_REST)
		snprintf(buf, len, "\"%s\"", rest_key(a));
	else if (d == HD_OPS_CLI && a->cli != NULL && a->cli[0] == '-')
		snprintf(buf, len, "%s", a->cli);
	else if (d == HD_OPS_CLI)
		snprintf(buf, len, "%s", a->noun ? a->noun : a->name);
	else
		snprintf(buf, len, "%s", a->name);
}

static const char *
type_noun(hd_op_type t, hd_ops_dialect d)
{
	switch (t) {
	case HD_OPT_INT: return "an integer";
	case HD_OPT_BOOL: return d == HD_OPS_MCP ? "true or false" : "a boolean";
	case HD_OPT_OBJECT: return "an object";
	case HD_OPT_INTS: return "an array";
	case HD_OPT_STRS: return "an array of strings";
	default: return "a string";
	}
}

static int
type_ok(const json_t *v, hd_op_type t)
{
	switch (t) {
	case HD_OPT_INT: return json_is_integer(v);
	case HD_OPT_BOOL: return json_is_boolean(v);
	case HD_OPT_OBJECT: return json_is_object(v);
	case HD_OPT_INTS: return json_is_array(v);
	case HD_OPT_STRS: return json_is_array(v);
	default: return json_is_string(v);
	}
}

static const hd_op_arg *
find_arg(const hd_op *op, hd_ops_dialect d, const char *key)
{
	const hd_op_arg *a;
	const char *k;

	for (a = op->args; a != NULL && a->name != NULL; a++) {
		if (d == HD_OPS_MCP)
			k = on_mcp(a) ? a->name : NULL;
		else if (d == HD_OPS_REST)
			k = rest_key(a);
		else
			k = a->name;
		if (k != NULL && strcmp(k, key) == 0)
			return a;
	}
	return NULL;
}

/* The REST body key naming the actor. */
static const char *
rest_actor(const hd_op *op)
{
	return op->rest_as != NULL ? op->rest_as : "as";
}

/* `unknown argument "x" to tool: use a, b` (MCP), `unknown field "x"
 * for POST /api/...: use a, b` (REST). */
static int
unknown(const hd_op *op, hd_ops_dialect d, const char *key, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0);
	const hd_op_arg *a;
	const char *k;
	size_t n = 0;
	int rc;

	for (a = op->args; a != NULL && a->name != NULL; a++) {
		k = d == HD_OPS_MCP ? (on_mcp(a) ? a->name : NULL) : rest_key(a);
		if (k == NULL || (d == HD_OPS_REST && a->rest != NULL &&
				     a->rest[0] == ':'))
			continue;
		hd_buf_puts(&b, n++ > 0 ? ", " : "");
		hd_buf_puts(&b, k);
	}
	if (d == HD_OPS_REST && op->who != HD_OPW_ANYONE) {
		hd_buf_puts(&b, n++ > 0 ? ", " : "");
		hd_buf_puts(&b, rest_actor(op));
	}
	if (d == HD_OPS_REST && op->rest_unknown != NULL)
		rc = hd_err_set(err, HD_EINVAL, "unknown field \"%.64s\": %s",
		    key, op->rest_unknown);
	else if (d == HD_OPS_MCP)
		rc = hd_err_set(err, HD_EINVAL,
		    "unknown argument \"%.64s\" to %s: %s%s", key, op->mcp,
		    n > 0 ? "use " : "it takes no arguments",
		    hd_buf_failed(&b) ? "" : hd_buf_cstr(&b));
	else
		rc = hd_err_set(err, HD_EINVAL,
		    "unknown field \"%.64s\" for %s %s: %s%s", key, op->method,
		    op->path, n > 0 ? "use " : "it takes none",
		    hd_buf_failed(&b) ? "" : hd_buf_cstr(&b));
	hd_buf_dispose(&b);
	return rc;
}

/* A REST path capture is text: an id parsed here. */
static int
capture_int(json_t **v, const hd_op_arg *a, hd_err *err)
{
	hd_err e2 = HD_ERR_INIT;
	int64_t n;

	if (!json_is_string(*v))
		return 0;
	if (hd_parse_i64(&n, json_string_value(*v), "id", &e2) < 0 || n <= 0)
		return hd_err_set(err, HD_EINVAL,
		    "%s must be a positive integer, not \"%.32s\"",
		    a->noun ? a->noun : a->name, json_string_value(*v));
	*v = json_integer(n);
	return 1;
}

const hd_op_cli_arg *
hd_ops_cli_more(const hd_op *op, const char *arg)
{
	const hd_op_cli_arg *m;

	for (m = op->cli_more; m != NULL && m->arg != NULL; m++)
		if (strcmp(m->arg, arg) == 0)
			return m;
	return NULL;
}

static int
check_value(const hd_op *op, const hd_op_arg *arg, hd_ops_dialect d,
    const json_t *v, hd_err *err)
{
	const hd_op_cli_arg *more;
	hd_op_arg cli_arg, *a = &cli_arg;
	char lb[96];
	const json_t *item;
	size_t i;

	cli_arg = *arg; /* with the CLI's own limits, on the CLI */
	more = d == HD_OPS_CLI ? hd_ops_cli_more(op, arg->name) : NULL;
	if (more != NULL && more->min < more->max) {
		cli_arg.min = more->min;
		cli_arg.max = more->max;
	}
	label(lb, sizeof(lb), a, d);
	if (!type_ok(v, a->type))
		return d == HD_OPS_MCP
			   ? hd_err_set(err, HD_EINVAL,
				 "argument \"%s\" must be %s", a->name,
				 type_noun(a->type, d))
			   : hd_err_set(err, HD_EINVAL, "%s must be %s", lb,
				 type_noun(a->type, d));
	if (a->type == HD_OPT_INTS) {
		json_array_foreach (v, i, item)
			if (!json_is_integer(item))
				return d == HD_OPS_MCP
					   ? hd_err_set(err, HD_EINVAL,
						 "argument \"%s\" must be an "
						 "array of integers",
						 a->name)
					   : hd_err_set(err, HD_EINVAL,
						 "%s must be an array of %ss",
						 lb,
						 a->noun ? a->noun : "integer");
		if (a->max > 0 && json_array_size(v) > (size_t)a->max)
			return hd_err_set(err, HD_EINVAL,
			    "%s may name at most %lld", lb, (long long)a->max);
	}
	if (a->type == HD_OPT_STRS) {
		json_array_foreach (v, i, item)
			if (!json_is_string(item))
				return d == HD_OPS_MCP
					   ? hd_err_set(err, HD_EINVAL,
						 "argument \"%s\" must be an "
						 "array of strings",
						 a->name)
					   : hd_err_set(err, HD_EINVAL,
						 "%s must be an array of "
						 "strings",
						 lb);
		if (a->max > 0 && json_array_size(v) > (size_t)a->max)
			return hd_err_set(err, HD_EINVAL,
			    "%s may name at most %lld", lb, (long long)a->max);
	}
	if (a->type == HD_OPT_ENUM &&
	    !(d == HD_OPS_REST && (a->flags & HD_OPA_OPEN_REST)) &&
	    !(d == HD_OPS_CLI && (a->flags & HD_OPA_OPEN_CLI))) {
		for (i = 0; a->values[i] != NULL; i++)
			if (strcmp(a->values[i], json_string_value(v)) == 0)
				break;
		if (a->values[i] == NULL) {
			hd_buf b = HD_BUF_INIT(0);
			int rc;

			for (i = 0; a->values[i] != NULL; i++) {
				hd_buf_puts(&b, i > 0 ? ", " : "");
				hd_buf_puts(&b, a->values[i]);
			}
			rc = hd_err_set(err, HD_EINVAL,
			    "%s must be one of %s, not \"%.64s\"", lb,
			    hd_buf_failed(&b) ? "" : hd_buf_cstr(&b),
			    json_string_value(v));
			hd_buf_dispose(&b);
			return rc;
		}
	}
	if (a->type == HD_OPT_INT && (a->flags & HD_OPA_ID) &&
	    json_integer_value(v) <= 0)
		return hd_err_set(err, HD_EINVAL,
		    "%s must be a %s (a positive integer)", lb,
		    a->noun ? a->noun : "task id");
	if (a->type == HD_OPT_INT && a->min < a->max &&
	    (json_integer_value(v) < a->min || json_integer_value(v) > a->max))
		return hd_err_set(err, HD_EINVAL, "%s must be between %lld and %lld",
		    d == HD_OPS_REST ? rest_key(a) : lb, (long long)a->min,
		    (long long)a->max);
	if (a->type == HD_OPT_STR && a->max > 0 &&
	    strlen(json_string_value(v)) > (size_t)a->max)
		return hd_err_set(err, HD_EINVAL,
		    "%s is longer than %lld bytes", lb, (long long)a->max);
	return 0;
}

/* A field of op's REST family (rest_common), or NULL. */
static const hd_op_arg *
common_arg(const hd_op *op, const char *key)
{
	const hd_op_arg *a;

	for (a = op->rest_common; a != NULL && a->name != NULL; a++)
		if (strcmp(a->name, key) == 0)
			return a;
	return NULL;
}

int
hd_ops_check(json_t **out, const hd_op *op, hd_ops_dialect d,
    const json_t *in, hd_err *err)
{
	const hd_op_arg *a;
	const char *key;
	json_t *v, *res = json_object();
	char lb[96];
	int rc;

	*out = NULL;
	json_object_foreach ((json_t *)in, key, v) {
		int owned = 0;

		if ((a = find_arg(op, d, key)) == NULL) {
			if (d == HD_OPS_MCP && hd_ops_identity_key(key))
				continue;
			if (d == HD_OPS_REST && (a = common_arg(op, key)) != NULL) {
				if ((rc = check_value(op, a, d, v, err)) < 0) {
					json_decref(res);
					return rc;
				}
				continue;
			}
			if (d == HD_OPS_REST &&
			    (strcmp(key, rest_actor(op)) == 0 ||
				(op->who == HD_OPW_AGENT && op->rest_as == NULL &&
				    strcmp(key, "agent") == 0)))
				continue;
			json_decref(res);
			return unknown(op, d, key, err);
		}
		if (d == HD_OPS_REST && json_is_null(v) &&
		    (a->flags & HD_OPA_NULL_OK))
			continue;
		if (d == HD_OPS_REST && a->rest != NULL && a->rest[0] == ':' &&
		    a->type == HD_OPT_INT) {
			if ((rc = capture_int(&v, a, err)) < 0) {
				json_decref(res);
				return rc;
			}
			owned = rc;
		}
		if ((rc = check_value(op, a, d, v, err)) < 0) {
			if (owned)
				json_decref(v);
			json_decref(res);
			return rc;
		}
		json_object_set_new(res, a->name, owned ? v : json_incref(v));
	}
	for (a = op->args; a != NULL && a->name != NULL; a++) {
		if (!((a->flags & HD_OPA_REQUIRED) ||
			(d == HD_OPS_MCP && (a->flags & HD_OPA_REQ_MCP)) ||
			(d == HD_OPS_CLI && (a->flags & HD_OPA_REQ_CLI))) ||
		    json_object_get(res, a->name) != NULL)
			continue;
		if (d == HD_OPS_MCP && !on_mcp(a))
			continue;
		json_decref(res);
		label(lb, sizeof(lb), a, d);
		if (d == HD_OPS_MCP)
			return hd_err_set(err, HD_EINVAL,
			    "missing required argument \"%s\"", a->name);
		if (d == HD_OPS_CLI && op->cli_needs != NULL)
			return hd_err_set(err, HD_EINVAL, "%s", op->cli_needs);
		if (d == HD_OPS_REST && op->rest_required != NULL)
			return hd_err_set(err, HD_EINVAL, "%s", op->rest_required);
		if (d == HD_OPS_CLI)
			return hd_err_set(err, HD_EINVAL, "'%s' needs %s%s%s",
			    op->cli, lb, a->cli_meta ? " " : "",
			    a->cli_meta ? a->cli_meta : "");
		return hd_err_set(err, HD_EINVAL, "%s is required", lb);
	}
	if (op->one_of[0] != NULL) {
		const json_t *x = json_object_get(res, op->one_of[0]);
		const json_t *y = json_object_get(res, op->one_of[1]);
		int hx = x != NULL && !json_is_false(x);
		int hy = y != NULL && !json_is_false(y);

		if (hx == hy) {
			json_decref(res);
			return hd_err_set(err, HD_EINVAL, "%s",
			    hx ? op->one_of_both[d] : op->one_of_neither[d]);
		}
	}
	*out = res;
	return 0;
}

/* ---- REST ------------------------------------------------------------- */

size_t
hd_ops_rest_captures(const hd_op *op, const char *names[4])
{
	const hd_op_arg *a;
	const char *p;
	size_t n = 0, len;

	for (p = op->path; p != NULL && (p = strchr(p, ':')) != NULL && n < 4;
	     p += len) {
		len = strcspn(p, "/");
		names[n] = NULL;
		for (a = op->args; a != NULL && a->name != NULL; a++)
			if (a->rest != NULL && a->rest[0] == ':' &&
			    strlen(a->rest) == len &&
			    strncmp(a->rest, p, len) == 0)
				names[n] = a->rest + 1;
		n++;
	}
	return n;
}

/* ---- the CLI ---------------------------------------------------------- */

static int
positional(const hd_op_arg *a)
{
	return a->cli != NULL && a->cli[0] != '-';
}

/* A positional argv must fill: required, and no older option spells it. */
static int
must_fill(const hd_op *op, const hd_op_arg *a)
{
	const hd_op_cli_arg *m = hd_ops_cli_more(op, a->name);

	return (a->flags & (HD_OPA_REQUIRED | HD_OPA_REQ_CLI)) &&
	       (m == NULL || m->alias == NULL);
}

void
hd_ops_cli_synopsis(const hd_op *op, char *buf, size_t len, int *min, int *max)
{
	const hd_op_arg *a;
	size_t off = 0;
	int req;

	*min = *max = 0;
	buf[0] = '\0';
	for (a = op->args; a != NULL && a->name != NULL; a++) {
		if (!positional(a))
			continue;
		(*max)++;
		if (must_fill(op, a))
			(*min)++;
		req = (a->flags & (HD_OPA_REQUIRED | HD_OPA_REQ_CLI)) != 0;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s",
			    off ? " " : "", req ? "" : "[", a->cli, req ? "" : "]");
	}
}

/* KEY=VALUE into the object v (HD_OPA_PAIRS). */
static int
pair_value(json_t *v, const hd_op_arg *a, const char *s, hd_err *err)
{
	const char *eq = strchr(s, '=');

	if (eq == NULL || eq == s)
		return hd_err_set(err, HD_EINVAL, "%s must be KEY=VALUE, not \"%.64s\"",
		    a->cli, s);
	json_object_setn_new(v, s, (size_t)(eq - s), json_string(eq + 1));
	return 0;
}

/* One CLI text into its JSON value (a pair into *v, made by the caller). */
static int
cli_value(json_t **v, const hd_op_arg *a, const char *s, hd_err *err)
{
	json_error_t jerr;
	char lb[96];
	int64_t n;
	const char *p;

	label(lb, sizeof(lb), a, HD_OPS_CLI);
	switch (a->type) {
	case HD_OPT_INT:
		if (hd_parse_i64(&n, s, lb, err) < 0)
			return HD_EINVAL; /* its message */
		if ((a->flags & HD_OPA_ID) && n <= 0)
			return hd_err_set(err, HD_EINVAL,
			    "%s must be a positive integer, not \"%.64s\"", lb,
			    s);
		*v = json_integer(n);
		return 0;
	case HD_OPT_BOOL:
		*v = json_true();
		return 0;
	case HD_OPT_INTS:
		*v = json_array();
		for (p = s; *p != '\0';) {
			char one[32];
			size_t len = strcspn(p, ",");

			snprintf(one, sizeof(one), "%.*s",
			    (int)(len < sizeof(one) ? len : sizeof(one) - 1), p);
			if (hd_parse_i64(&n, one, lb, err) < 0) {
				json_decref(*v);
				return HD_EINVAL; /* its message */
			}
			if ((a->flags & HD_OPA_ID) && n <= 0) {
				json_decref(*v);
				return hd_err_set(err, HD_EINVAL,
				    "%s must be a positive integer, not "
				    "\"%.64s\"",
				    lb, one);
			}
			json_array_append_new(*v, json_integer(n));
			p += len;
			if (*p == ',')
				p++;
		}
		return 0;
	case HD_OPT_STRS: /* one more of a repeated option, into *v */
		json_array_append_new(*v, json_string_nocheck(s));
		return 0;
	case HD_OPT_OBJECT:
		if (a->flags & HD_OPA_PAIRS)
			return pair_value(*v, a, s, err);
		/* not JSON: where the parser stopped, as agent add says it */
		if ((*v = json_loads(s, JSON_REJECT_DUPLICATES, &jerr)) == NULL)
			return hd_err_set(err, HD_EINVAL,
			    "%s: line %d, column %d: %s", lb, jerr.line,
			    jerr.column, jerr.text);
		if (!json_is_object(*v)) {
			json_decref(*v);
			return hd_err_set(
			    err, HD_EINVAL, "%s must be a JSON object", lb);
		}
		return 0;
	default:
		/* unchecked: the library judges the text (its UTF-8 too) */
		*v = json_string_nocheck(s);
		return 0;
	}
}

/* The text of a: its positional or option, or its older option (its
 * alias); the two given and different is a usage error. */
static int
cli_text(const char **out, const hd_op *op, const hd_op_arg *a,
    const char *given, hd_ops_opt_fn opt, void *ctx, hd_err *err)
{
	const hd_op_cli_arg *m = hd_ops_cli_more(op, a->name);
	const char *old = m != NULL && m->alias != NULL ? opt(ctx, m->alias)
							: NULL;
	const hd_op_arg *first = op->args;

	*out = given != NULL ? given : old;
	if (given == NULL || old == NULL || strcmp(given, old) == 0)
		return 0;
	while (!positional(first))
		first++;
	if (positional(a))
		return hd_err_set(err, HD_EINVAL,
		    "the %s is %s or %s? give it once, as %s", m->noun, given,
		    old, a == first ? "the first argument" : a->cli);
	return hd_err_set(err, HD_EINVAL, "%s %s and --%s %s name two %ss; give "
					  "one (%s)",
	    a->cli, given, m->alias, old, m->noun, a->cli);
}

int
hd_ops_cli_read(json_t **out, const hd_op *op, int argc, char *const argv[],
    hd_ops_opt_fn opt, hd_ops_opts_fn all, void *ctx, hd_err *err)
{
	const hd_op_arg *a;
	json_t *in = json_object(), *v = NULL;
	const char *s, *const *vals;
	int pos = 0, spare = argc, rc, i, n;

	*out = NULL;
	/* the positionals argv must fill take theirs first; the others
	 * take what is left, in order */
	for (a = op->args; a != NULL && a->name != NULL; a++)
		if (positional(a) && must_fill(op, a))
			spare--;
	for (a = op->args; a != NULL && a->name != NULL; a++) {
		if (a->cli == NULL)
			continue;
		s = NULL;
		if (positional(a) && pos < argc &&
		    (must_fill(op, a) || spare-- > 0))
			s = argv[pos++];
		else if (!positional(a) &&
			 ((a->flags & HD_OPA_PAIRS) || a->type == HD_OPT_STRS) &&
			 all != NULL) {
			if ((n = all(ctx, a->cli + 2, &vals)) == 0)
				continue;
			v = a->type == HD_OPT_STRS ? json_array() : json_object();
			for (i = 0; i < n; i++)
				if ((rc = cli_value(&v, a, vals[i], err)) < 0) {
					json_decref(v);
					json_decref(in);
					return rc;
				}
			json_object_set_new(in, a->name, v);
			continue;
		} else if (!positional(a))
			s = opt(ctx, a->cli + 2);
		if ((rc = cli_text(&s, op, a, s, opt, ctx, err)) < 0) {
			json_decref(in);
			return rc;
		}
		if (s == NULL)
			continue;
		v = (a->flags & HD_OPA_PAIRS)	? json_object()
		    : a->type == HD_OPT_STRS ? json_array()
					     : NULL;
		if ((rc = cli_value(&v, a, s, err)) < 0) {
			if ((a->flags & HD_OPA_PAIRS) || a->type == HD_OPT_STRS)
				json_decref(v);
			json_decref(in);
			return rc;
		}
		json_object_set_new(in, a->name, v);
	}
	if (pos < argc) {
		json_decref(in);
		return hd_err_set(err, HD_EINVAL,
		    "unexpected argument \"%.64s\" for '%s'", argv[pos],
		    op->cli);
	}
	rc = hd_ops_check(out, op, HD_OPS_CLI, in, err);
	json_decref(in);
	return rc;
}

int
hd_ops_cli_args(json_t **out, const hd_op *op, int argc, char *const argv[],
    hd_ops_opt_fn opt, void *ctx, hd_err *err)
{
	return hd_ops_cli_read(out, op, argc, argv, opt, NULL, ctx, err);
}

/* ---- handlers --------------------------------------------------------- */

int
hd_ops_run(json_t **result, const hd_op *op, const hd_op_call *c, hd_err *err)
{
	hd_op_shape_fn shape = op->shape[c->dialect];
	json_t *raw;
	int rc;

	*result = NULL;
	if ((rc = op->fn(result, c, err)) < 0 || *result == NULL ||
	    shape == NULL)
		return rc;
	raw = *result;
	*result = shape(raw);
	json_decref(raw);
	return rc;
}

const char *
hd_op_str(const hd_op_call *c, const char *name)
{
	return json_string_value(json_object_get(c->args, name));
}

int
hd_op_int(const hd_op_call *c, const char *name, int64_t dflt, int64_t *out)
{
	const json_t *v = json_object_get(c->args, name);

	*out = v != NULL ? (int64_t)json_integer_value(v) : dflt;
	return v != NULL;
}

int
hd_op_bool(const hd_op_call *c, const char *name)
{
	return json_is_true(json_object_get(c->args, name));
}
