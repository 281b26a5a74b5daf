/*
 * test-table.c -- the operation table (src/ops/ops.h) is where the
 * surfaces come from: the MCP tool list, the REST routes and the CLI's
 * commands each hold every entry the table says they should, and
 * nothing hand-written besides the listed exceptions. An extra entry,
 * appended before any surface is built (hd_ops_test_add), becomes an MCP
 * tool with a generated schema, answers a REST request on a real server
 * (libcurl against hd_http_start on 127.0.0.1) and parses as a CLI
 * command -- with nothing else written for it. Further extra entries
 * show what a surface says its own way (aliases, limits, REST's actor
 * key and unknown-field words, the CLI's --name beside MCP's "name", a
 * JSON option's parse position), and agent replace is a second entry
 * sharing spawn's handler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include <http/http.h>
#include <mcp/mcp.h>
#include <ops/ops.h>

#include <huddle/buf.h>

#include "testutil.h"

/* ---- the extra entry -------------------------------------------------- */

static int
echo_fn(json_t **result, const hd_op_call *c, hd_err *err)
{
	int64_t times, i;
	char out[128] = "";
	size_t off = 0;

	hd_op_int(c, "times", 1, &times);
	for (i = 0; i < times && off < sizeof(out); i++)
		off += (size_t)snprintf(
		    out + off, sizeof(out) - off, "%s", hd_op_str(c, "text"));
	if (hd_op_bool(c, "loud") && strcmp(out, "boom") == 0)
		return hd_err_set(err, HD_EREFUSED, "too loud");
	*result = json_pack("{s:s, s:s?, s:s?}", "echo", out, "team", c->team,
	    "agent", c->agent);
	return 0;
}

static const hd_op_arg echo_args[] = {
    {"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL, NULL,
	":team", "TEAM", 0, NULL, NULL, "team"},
    {"text", HD_OPT_STR, HD_OPA_REQUIRED, 0, 20, NULL, "what to say", NULL,
	"TEXT", 0, NULL, NULL, "text"},
    {"times", HD_OPT_INT, 0, 1, 5, NULL, "how often", NULL, "--times", 'n',
	"how often", "N", NULL},
    {"loud", HD_OPT_BOOL, 0, 0, 0, NULL, NULL, NULL, "--loud", 0, "louder",
	NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL},
};

static const hd_op echo_op = {
    .name = "test.echo",
    .who = HD_OPW_MEMBER,
    .flags = HD_OPF_NEEDS_TEAM,
    .args = echo_args,
    .fn = echo_fn,
    .mcp = "test_echo",
    .mcp_desc = "Say text back, times times (a test-only operation).",
    .method = "POST",
    .path = "/api/test/:team/echo",
    .status = 200,
    .cli = "task echo",
    .cli_summary = "Say TEXT back",
    .cli_as_help = "act as AGENT",
};

/* A second extra entry, for what a surface says its own way: a REST
 * actor key ("from") and one message for what is missing, the CLI's
 * older spellings (--team for TEAM, --from for --as), its own limit
 * (--limit up to 1000 where MCP and REST stop at 10), a repeated
 * KEY=VALUE option, an enum the CLI leaves to the library. */
static const char *const note_kinds[] = {"plain", "loud", NULL};

static const hd_op_arg note_args[] = {
    {"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL, NULL,
	":team", "TEAM", 0, NULL, NULL, "team"},
    {"text", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, "what to note", NULL,
	"TEXT", 0, NULL, NULL, NULL},
    {"limit", HD_OPT_INT, 0, 1, 10, NULL, "at most", NULL, "--limit", 0,
	"at most N", "N", NULL},
    {"tags", HD_OPT_OBJECT, HD_OPA_PAIRS, 0, 0, NULL, "labels", NULL,
	"--tag", 0, "a label", "KEY=VALUE", NULL},
    {"kind", HD_OPT_ENUM, HD_OPA_OPEN_CLI, 0, 0, note_kinds, "how", NULL,
	"--kind", 0, "how", "KIND", NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL},
};

static const hd_op_cli_arg note_more[] = {
    {"team", "team", 't', "older spelling of TEAM", "team", 0, 0},
    {"as", "from", 0, "older spelling of --as", "sender", 0, 0},
    {"limit", NULL, 0, NULL, NULL, 1, 1000},
    {NULL, NULL, 0, NULL, NULL, 0, 0},
};

static const hd_op note_op = {
    .name = "test.note",
    .who = HD_OPW_AGENT,
    .flags = HD_OPF_NEEDS_TEAM,
    .args = note_args,
    .fn = echo_fn,
    .mcp = "test_note",
    .mcp_desc = "Note text (a test-only operation).",
    .method = "POST",
    .path = "/api/test/:team/note",
    .status = 201,
    .rest_as = "from",
    .rest_required = "\"from\" and \"text\" are required",
    .cli = "task note",
    .cli_summary = "Note TEXT",
    .cli_as_help = "the sender",
    .cli_needs = "'task note' needs a team and --as",
    .cli_more = note_more,
};

/* A third, for spawn's spellings: the CLI's --name is a display name
 * (an argument hidden from MCP and REST) where MCP's and REST's "name"
 * is the id (the CLI's positional); --config is JSON; REST refuses an
 * unknown field in its own words. */
static const hd_op_arg label_args[] = {
    {"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL, NULL,
	":team", "TEAM", 0, NULL, NULL, "team"},
    {"name", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, "the id", NULL, "ID",
	0, NULL, NULL, NULL},
    {"display_name", HD_OPT_STR, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "",
	"--name", 0, "display name", "TEXT", NULL},
    {"config", HD_OPT_OBJECT, 0, 0, 0, NULL, "settings", NULL, "--config", 0,
	"settings", "JSON", NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL},
};

static const hd_op label_op = {
    .name = "test.label",
    .who = HD_OPW_MEMBER,
    .flags = HD_OPF_NEEDS_TEAM,
    .args = label_args,
    .fn = echo_fn,
    .mcp = "test_label",
    .mcp_desc = "Label something (a test-only operation).",
    .method = "POST",
    .path = "/api/test/:team/label",
    .status = 201,
    .rest_unknown = "use name, config or as",
    .cli = "task label",
    .cli_summary = "Label ID",
    .cli_as_help = "act as AGENT",
};

/* ---- what is hand-written, on purpose --------------------------------- */

/* REST routes outside the table: REST-only operations (SSE, MCP's own
 * endpoint, the dashboard, conversations and exchanges), and the ones
 * not moved to it yet -- each listed here, so a new hand-written route
 * is a decision this test makes visible. */
static const char *const rest_hand[] = {
    /* REST-only */
    "POST /mcp", "GET /mcp", "DELETE /mcp", "GET /", "GET /assets/*",
    "GET /*", "GET /api/events", "GET /api/runtimes",
    "POST /api/teams/:team/chat", "GET /api/conversations/:id",
    "GET /api/conversations/:id/files",
    "GET /api/conversations/:id/files/:file",
    "POST /api/conversations/:id/cancel", "POST /api/team-chat/exchange",
    "POST /api/teams/:team/exchange/cancel",
    /* not in the table yet (also on the CLI or MCP) */
    "GET /api/teams", "GET /api/teams/:team",
    "DELETE /api/teams/:team", "GET /api/teams/:team/agents",
    "POST /api/teams/:team/agents", "GET /api/agents/:agent",
    "DELETE /api/agents/:agent", NULL};

/* Subcommands outside the table: CLI-only ones, and the ones not moved
 * to it yet (also on REST or MCP). */
static const char *const cli_hand[] = {
    /* CLI-only */
    "chat tail", "team list", "team show", "team update", "team rm",
    "team pause", "team resume", "agent set-status", "agent reset-session",
    "agent run", "agent wake", "agent park", "agent unpark",
    /* not in the table yet (also on REST) */
    "agent add", "agent list", "agent show", "agent rm",
    NULL};

static int
listed(const char *const *list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* ---- MCP -------------------------------------------------------------- */

static json_t *
mcp(hd_mcp_session *s, const char *msg)
{
	char *reply = NULL;
	json_t *j;

	hd_mcp_handle(&reply, s, msg, strlen(msg));
	assert_non_null(reply);
	j = json_loads(reply, 0, NULL);
	free(reply);
	assert_non_null(j);
	return j;
}

static void
test_mcp_tools_are_the_table(void **state)
{
	hd_fixture *fx = *state;
	hd_mcp_server *srv;
	hd_mcp_session s;
	hd_err err = HD_ERR_INIT;
	const hd_op *const *o;
	json_t *j, *tools, *t;
	size_t i, want = 0;

	assert_hd_ok(hd_mcp_server_new(&srv, &err), &err);
	hd_mcp_session_init(&s, srv, fx->st);
	j = mcp(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	tools = json_object_get(json_object_get(j, "result"), "tools");
	for (o = hd_ops_all(); *o != NULL; o++) {
		json_t *sch;
		int found = 0;

		if ((*o)->mcp == NULL)
			continue;
		want++;
		sch = hd_ops_schema(*o);
		json_array_foreach (tools, i, t)
			if (strcmp(json_string_value(json_object_get(t, "name")),
				(*o)->mcp) == 0) {
				found = 1;
				assert_true(json_equal(
				    json_object_get(t, "inputSchema"), sch));
				assert_string_equal(json_string_value(json_object_get(
							t, "description")),
				    (*o)->mcp_desc);
			}
		json_decref(sch);
		if (!found)
			fail_msg("tool %s of %s missing", (*o)->mcp, (*o)->name);
	}
	/* and nothing else: every tool is an entry */
	assert_int_equal(json_array_size(tools), want);
	json_array_foreach (tools, i, t)
		assert_non_null(hd_ops_find_mcp(
		    json_string_value(json_object_get(t, "name"))));
	json_decref(j);
	hd_mcp_server_free(srv);
}

static void
test_extra_is_a_tool(void **state)
{
	hd_fixture *fx = *state;
	hd_mcp_server *srv;
	hd_mcp_session s;
	hd_err err = HD_ERR_INIT;
	json_t *j, *tools, *t, *sch = NULL, *res;
	size_t i;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_mcp_server_new(&srv, &err), &err);
	hd_mcp_session_init(&s, srv, fx->st);
	assert_hd_ok(hd_mcp_session_bind(&s, "dev", "coder", &err), &err);
	j = mcp(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	tools = json_object_get(json_object_get(j, "result"), "tools");
	json_array_foreach (tools, i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")),
			"test_echo") == 0)
			sch = json_object_get(t, "inputSchema");
	assert_non_null(sch);
	/* generated: the MCP arguments, typed, with their limits; the team
	 * (a path capture and a positional) is identity over MCP */
	assert_string_equal(json_string_value(json_object_get(json_object_get(
				json_object_get(sch, "properties"), "text"),
			       "type")),
	    "string");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(json_object_get(sch, "properties"),
				 "times"),
			     "maximum")),
	    5);
	assert_null(json_object_get(json_object_get(sch, "properties"), "team"));
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(sch, "required"), 0)),
	    "text");
	json_decref(j);

	/* called through the table's check and handler */
	j = mcp(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"test_echo\",\"arguments\":"
		    "{\"text\":\"hi\",\"times\":2}}}");
	res = json_object_get(json_object_get(j, "result"), "structuredContent");
	assert_string_equal(json_string_value(json_object_get(res, "echo")),
	    "hihi");
	assert_string_equal(
	    json_string_value(json_object_get(res, "team")), "dev");
	assert_string_equal(
	    json_string_value(json_object_get(res, "agent")), "coder");
	json_decref(j);
	/* its limits, in MCP's words */
	j = mcp(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"test_echo\",\"arguments\":"
		    "{\"text\":\"hi\",\"times\":9}}}");
	res = json_object_get(j, "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(
				json_object_get(res, "content"), 0),
			       "text")),
	    "times must be between 1 and 5");
	json_decref(j);
	j = mcp(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"test_echo\",\"arguments\":"
		    "{\"times\":1}}}");
	res = json_object_get(j, "result");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
				json_object_get(res, "content"), 0),
			       "text")),
	    "missing required argument \"text\"");
	json_decref(j);
	hd_mcp_server_free(srv);
}

/* ---- REST ------------------------------------------------------------- */

/* op's path with each capture filled in ("dev" for :team, else "7"). */
static void
concrete(char *buf, size_t len, const char *pattern)
{
	size_t off = 0;
	const char *p = pattern;

	while (*p != '\0' && off + 8 < len) {
		if (*p == ':') {
			const char *v = strncmp(p, ":team", 5) == 0 ? "dev" : "7";

			off += (size_t)snprintf(buf + off, len - off, "%s", v);
			p += strcspn(p, "/");
		} else
			buf[off++] = *p++;
	}
	buf[off] = '\0';
}

static void
test_rest_routes_are_the_table(void **state)
{
	static const hd_route *const hand[] = {hd_routes_mcp, hd_routes_teams,
	    hd_routes_chat, hd_routes_exchange,
	    hd_routes_conversation, hd_routes_web, NULL};
	const hd_op *const *o;
	const hd_route *const *t, *rt;
	const char *params[HD_ROUTE_PARAMS];
	char path[256], buf[1024], both[300];
	int n, known;

	(void)state;
	for (o = hd_ops_all(); *o != NULL; o++) {
		if ((*o)->method == NULL)
			continue;
		concrete(path, sizeof(path), (*o)->path);
		rt = hd_http_route_find((*o)->method, path, params, &n, buf,
		    sizeof(buf), &known);
		if (rt == NULL || rt->fn != hd_http_route_ops)
			fail_msg("%s %s (%s) is not routed to the table",
			    (*o)->method, path, (*o)->name);
		assert_ptr_equal(hd_http_route_op((*o)->method, path), *o);
	}
	/* nothing hand-written but the listed exceptions, none of them an
	 * entry's */
	for (t = hand; *t != NULL; t++)
		for (rt = *t; rt->method != NULL; rt++) {
			snprintf(both, sizeof(both), "%s %s", rt->method,
			    rt->pattern);
			if (!listed(rest_hand, both))
				fail_msg("hand-written route %s: make it an "
					 "operation (src/ops) or list it",
				    both);
			for (o = hd_ops_all(); *o != NULL; o++)
				if ((*o)->method != NULL &&
				    strcmp((*o)->method, rt->method) == 0 &&
				    strcmp((*o)->path, rt->pattern) == 0)
					fail_msg("%s is both hand-written and "
						 "%s",
					    both, (*o)->name);
		}
}

static size_t
collect(char *data, size_t size, size_t nmemb, void *b)
{
	hd_buf_put(b, data, size * nmemb);
	return size * nmemb;
}

/* POST body to the server; the status, and the answer in *out. */
static long
post(int port, const char *path, const char *body, json_t **out)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	hd_buf b = HD_BUF_INIT(0);
	char url[256];
	long status = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	*out = json_loads(hd_buf_cstr(&b), 0, NULL);
	hd_buf_dispose(&b);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

static void
test_extra_answers_rest(void **state)
{
	hd_fixture *fx = *state;
	hd_http_config cfg = {0};
	hd_http_server *srv = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *j;
	int port;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	cfg.home = fx->home;
	cfg.bind = "127.0.0.1";
	cfg.port = 0;
	cfg.threads = 2;
	assert_hd_ok(hd_http_start(&srv, &cfg, &err), &err);
	port = hd_http_port(srv);

	assert_int_equal(post(port, "/api/test/dev/echo",
			     "{\"text\":\"ab\",\"times\":3}", &j),
	    200);
	assert_string_equal(
	    json_string_value(json_object_get(j, "echo")), "ababab");
	assert_string_equal(json_string_value(json_object_get(j, "team")), "dev");
	assert_true(json_is_null(json_object_get(j, "agent"))); /* the user */
	json_decref(j);
	/* checked from the table, in REST's words */
	assert_int_equal(post(port, "/api/test/dev/echo", "{\"times\":3}", &j),
	    400);
	assert_string_equal(json_string_value(json_object_get(j, "error")),
	    "\"text\" is required");
	json_decref(j);
	assert_int_equal(post(port, "/api/test/dev/echo",
			     "{\"text\":\"ab\",\"times\":\"3\"}", &j),
	    400);
	assert_string_equal(json_string_value(json_object_get(j, "error")),
	    "\"times\" must be an integer");
	json_decref(j);
	assert_int_equal(post(port, "/api/test/dev/echo",
			     "{\"text\":\"ab\",\"volume\":11}", &j),
	    400);
	assert_string_equal(json_string_value(json_object_get(j, "error")),
	    "unknown field \"volume\" for POST /api/test/:team/echo: use text, "
	    "times, loud, as");
	json_decref(j);
	/* the handler's own error, with its status */
	assert_int_equal(post(port, "/api/test/dev/echo",
			     "{\"text\":\"boom\",\"loud\":true}", &j),
	    422);
	assert_string_equal(
	    json_string_value(json_object_get(j, "error")), "too loud");
	json_decref(j);
	hd_http_stop(srv);
}

/* ---- the CLI ---------------------------------------------------------- */

static const char *
opt_of(void *ctx, const char *name)
{
	const char *const *kv = ctx;

	for (; kv[0] != NULL; kv += 2)
		if (strcmp(kv[0], name) == 0)
			return kv[1];
	return NULL;
}

static void
test_extra_parses_as_a_command(void **state)
{
	const hd_op *op = hd_ops_find_cli("task echo");
	const char *opts[] = {"times", "2", "loud", "", NULL, NULL};
	const char *bad[] = {"times", "x", NULL, NULL};
	const char *far[] = {"times", "6", NULL, NULL};
	char *argv[] = {"dev", "hey", "extra"};
	hd_err err = HD_ERR_INIT;
	char syn[64];
	json_t *args;
	int min, max;

	(void)state;
	assert_ptr_equal(op, &echo_op);
	hd_ops_cli_synopsis(op, syn, sizeof(syn), &min, &max);
	assert_string_equal(syn, "TEAM TEXT");
	assert_int_equal(min, 2);
	assert_int_equal(max, 2);
	assert_hd_ok(hd_ops_cli_args(&args, op, 2, argv, opt_of, opts, &err),
	    &err);
	assert_string_equal(
	    json_string_value(json_object_get(args, "team")), "dev");
	assert_string_equal(
	    json_string_value(json_object_get(args, "text")), "hey");
	assert_int_equal(json_integer_value(json_object_get(args, "times")), 2);
	assert_true(json_is_true(json_object_get(args, "loud")));
	json_decref(args);
	/* the CLI's words for the same checks */
	assert_int_equal(hd_ops_cli_args(&args, op, 2, argv, opt_of, bad, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "--times must be an integer, not \"x\"");
	assert_int_equal(hd_ops_cli_args(&args, op, 2, argv, opt_of, far, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "--times must be between 1 and 5");
	assert_int_equal(hd_ops_cli_args(&args, op, 1, argv, opt_of, opts, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "'task echo' needs text");
	assert_int_equal(hd_ops_cli_args(&args, op, 3, argv, opt_of, opts, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "unexpected argument \"extra\" for 'task "
				     "echo'");
}

static int
opts_of(void *ctx, const char *name, const char *const **vals)
{
	const char *const *kv = ctx;
	static const char *found[8];
	int n = 0;

	for (; kv[0] != NULL && n < 8; kv += 2)
		if (strcmp(kv[0], name) == 0)
			found[n++] = kv[1];
	*vals = found;
	return n;
}

/* A limit per surface: MCP's schema and check and REST's stop at 10, the
 * CLI's at 1000. An enum the CLI leaves open is still MCP's. */
static void
test_limits_per_surface(void **state)
{
	const hd_op *op = hd_ops_find("test.note");
	json_t *schema = hd_ops_schema(op), *in, *args;
	const json_t *lim = json_object_get(
	    json_object_get(schema, "properties"), "limit");
	const char *ok[] = {"limit", "11", "kind", "odd", NULL, NULL};
	const char *far[] = {"limit", "1001", NULL, NULL};
	char *argv[] = {"dev", "hey"};
	hd_err err = HD_ERR_INIT;

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(lim, "maximum")), 10);
	assert_int_equal(json_integer_value(json_object_get(lim, "minimum")), 1);
	assert_int_equal(json_array_size(json_object_get(json_object_get(
			     json_object_get(schema, "properties"), "kind"),
			     "enum")),
	    2);
	json_decref(schema);
	in = json_pack("{s:s, s:i}", "text", "x", "limit", 11);
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_MCP, in, &err), HD_EINVAL);
	assert_string_equal(err.msg, "limit must be between 1 and 10");
	json_object_set_new(in, "team", json_string("dev"));
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_REST, in, &err), HD_EINVAL);
	assert_string_equal(err.msg, "limit must be between 1 and 10");
	json_decref(in);
	in = json_pack("{s:s, s:s}", "text", "x", "kind", "odd");
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_MCP, in, &err), HD_EINVAL);
	assert_string_equal(err.msg, "kind must be one of plain, loud, not \"odd\"");
	json_decref(in);
	/* the CLI: 11 is fine, and so is a kind the library will judge */
	assert_hd_ok(hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, ok, &err),
	    &err);
	assert_int_equal(json_integer_value(json_object_get(args, "limit")), 11);
	assert_string_equal(
	    json_string_value(json_object_get(args, "kind")), "odd");
	json_decref(args);
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, far, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "--limit must be between 1 and 1000");
}

/* A repeated --tag KEY=VALUE is one object; over MCP and REST it is a
 * JSON object. */
static void
test_repeated_pairs(void **state)
{
	const hd_op *op = hd_ops_find_cli("task note");
	const char *two[] = {"tag", "area=docs", "tag", "owner=ana=b", NULL,
	    NULL};
	const char *bad[] = {"tag", "novalue", NULL, NULL};
	char *argv[] = {"dev", "hey"};
	hd_err err = HD_ERR_INIT;
	json_t *args, *tags;
	char cmd[1024];

	(void)state;
	assert_hd_ok(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, two, &err),
	    &err);
	tags = json_object_get(args, "tags");
	assert_int_equal(json_object_size(tags), 2);
	assert_string_equal(
	    json_string_value(json_object_get(tags, "area")), "docs");
	assert_string_equal(
	    json_string_value(json_object_get(tags, "owner")), "ana=b");
	json_decref(args);
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, bad, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "--tag must be KEY=VALUE, not \"novalue\"");
	/* without every value, the last one only */
	assert_hd_ok(hd_ops_cli_args(&args, op, 2, argv, opt_of, two, &err),
	    &err);
	assert_int_equal(json_object_size(json_object_get(args, "tags")), 1);
	json_decref(args);
	/* a real command with a repeated option: task create --meta */
	snprintf(cmd, sizeof(cmd),
	    "'%s' task create --help | grep -c -- '--meta KEY=VALUE'",
	    getenv("HUDDLE"));
	assert_int_equal(system(cmd), 0);
}

/* An older spelling works beside the current one, and the two must
 * agree; the positional it spells then takes no argv. */
static void
test_aliases(void **state)
{
	const hd_op *op = hd_ops_find_cli("task note");
	const char *old[] = {"team", "dev", NULL, NULL};
	const char *other[] = {"team", "ops", NULL, NULL};
	const char *none[] = {NULL, NULL};
	char *argv[] = {"dev", "hey"};
	hd_err err = HD_ERR_INIT;
	char syn[64];
	json_t *args;
	int min, max;

	(void)state;
	hd_ops_cli_synopsis(op, syn, sizeof(syn), &min, &max);
	assert_string_equal(syn, "TEAM TEXT");
	assert_int_equal(min, 1); /* --team may give the team */
	assert_int_equal(max, 2);
	assert_hd_ok(
	    hd_ops_cli_read(&args, op, 1, argv + 1, opt_of, opts_of, old, &err),
	    &err);
	assert_string_equal(
	    json_string_value(json_object_get(args, "team")), "dev");
	assert_string_equal(
	    json_string_value(json_object_get(args, "text")), "hey");
	json_decref(args);
	assert_hd_ok(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, old, &err),
	    &err);
	json_decref(args);
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, other, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "the team is dev or ops? give it once, as "
				     "the first argument");
	/* neither spelling: the entry's one message */
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 1, argv + 1, opt_of, opts_of, none, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "'task note' needs a team and --as");
	/* the --as alias is the entry's too */
	assert_string_equal(hd_ops_cli_more(op, "as")->alias, "from");
}

/* REST names the actor "from": "as" is then an unknown field, and what
 * is missing has the entry's one message. */
static void
test_rest_actor_key(void **state)
{
	const hd_op *op = hd_ops_find("test.note");
	hd_err err = HD_ERR_INIT;
	json_t *in, *args;

	(void)state;
	in = json_pack("{s:s, s:s, s:s}", "team", "dev", "text", "x", "from",
	    "coder");
	assert_hd_ok(hd_ops_check(&args, op, HD_OPS_REST, in, &err), &err);
	assert_null(json_object_get(args, "from")); /* the route's */
	json_decref(args);
	json_object_set_new(in, "as", json_string("coder"));
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_REST, in, &err), HD_EINVAL);
	assert_string_equal(err.msg,
	    "unknown field \"as\" for POST /api/test/:team/note: use text, "
	    "limit, tags, kind, from");
	json_decref(in);
	in = json_pack("{s:s}", "team", "dev");
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_REST, in, &err), HD_EINVAL);
	assert_string_equal(err.msg, "\"from\" and \"text\" are required");
	json_decref(in);
}

/* The CLI's --name and MCP's and REST's "name" are two arguments: the
 * display name is the CLI's only, the id everyone's. */
static void
test_cli_only_name(void **state)
{
	const hd_op *op = hd_ops_find("test.label");
	const char *opts[] = {"name", "Seven", NULL, NULL};
	char *argv[] = {"dev", "x7"};
	hd_err err = HD_ERR_INIT;
	json_t *args, *in, *schema = hd_ops_schema(op);

	(void)state;
	assert_hd_ok(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, opts, &err),
	    &err);
	assert_string_equal(
	    json_string_value(json_object_get(args, "name")), "x7");
	assert_string_equal(
	    json_string_value(json_object_get(args, "display_name")), "Seven");
	json_decref(args);
	assert_non_null(
	    json_object_get(json_object_get(schema, "properties"), "name"));
	assert_null(json_object_get(
	    json_object_get(schema, "properties"), "display_name"));
	json_decref(schema);
	in = json_pack("{s:s, s:s}", "name", "x7", "display_name", "Seven");
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_MCP, in, &err), HD_EINVAL);
	assert_string_equal(err.msg, "unknown argument \"display_name\" to "
				     "test_label: use name, config");
	json_object_set_new(in, "team", json_string("dev"));
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_REST, in, &err), HD_EINVAL);
	json_decref(in);
}

/* REST's own words for an unknown field (rest_unknown): the test entry's,
 * and spawn's, which the e2e tests assert word for word. */
static void
test_rest_unknown_words(void **state)
{
	const hd_op *op = hd_ops_find("test.label");
	hd_err err = HD_ERR_INIT;
	json_t *in, *args;

	(void)state;
	in = json_pack("{s:s, s:s, s:s}", "team", "dev", "name", "x7", "nmae",
	    "y");
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_REST, in, &err), HD_EINVAL);
	assert_string_equal(
	    err.msg, "unknown field \"nmae\": use name, config or as");
	/* MCP keeps the list made from the arguments */
	json_object_del(in, "team");
	assert_int_equal(hd_ops_check(&args, op, HD_OPS_MCP, in, &err), HD_EINVAL);
	assert_string_equal(err.msg,
	    "unknown argument \"nmae\" to test_label: use name, config");
	json_decref(in);
	in = json_pack("{s:s, s:s, s:s}", "team", "dev", "name", "scout2",
	    "modle", "gpt-5");
	assert_int_equal(hd_ops_check(&args, hd_ops_find("team.spawn"),
			     HD_OPS_REST, in, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg,
	    "unknown field \"modle\": use name, as, task, role, runtime, "
	    "runtime_config, model or replaces");
	json_decref(in);
}

/* A CLI JSON option that is not JSON says where the parser stopped; one
 * that is JSON but no object, or names a key twice, is refused too. */
static void
test_json_option_position(void **state)
{
	const hd_op *op = hd_ops_find("test.label");
	const char *bad[] = {"config", "{bad", NULL, NULL};
	const char *line2[] = {"config", "{\"a\": 1,\n \"b\": }", NULL, NULL};
	const char *arr[] = {"config", "[1]", NULL, NULL};
	const char *twice[] = {"config", "{\"a\": 1, \"a\": 2}", NULL, NULL};
	const char *ok[] = {"config", "{\"a\": [1]}", NULL, NULL};
	char *argv[] = {"dev", "x7"};
	hd_err err = HD_ERR_INIT;
	json_t *args;

	(void)state;
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, bad, &err),
	    HD_EINVAL);
	assert_string_equal(
	    err.msg, "--config: line 1, column 4: string or '}' expected near "
		     "'bad'");
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, line2, &err),
	    HD_EINVAL);
	assert_string_equal(
	    err.msg, "--config: line 2, column 7: unexpected token near '}'");
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, arr, &err),
	    HD_EINVAL);
	assert_string_equal(err.msg, "--config must be a JSON object");
	assert_int_equal(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, twice, &err),
	    HD_EINVAL);
	assert_non_null(strstr(err.msg, "--config: line 1"));
	assert_hd_ok(
	    hd_ops_cli_read(&args, op, 2, argv, opt_of, opts_of, ok, &err),
	    &err);
	assert_int_equal(json_array_size(json_object_get(
			     json_object_get(args, "config"), "a")),
	    1);
	json_decref(args);
}

/* A CLI command spelled unlike its MCP tool is a second entry sharing the
 * handler: agent replace TEAM OLD NEW is team.spawn with replaces. */
static void
test_second_entry_shares_handler(void **state)
{
	const hd_op *spawn = hd_ops_find_cli("agent spawn");
	const hd_op *replace = hd_ops_find_cli("agent replace");
	const char *none[] = {NULL, NULL};
	char *argv[] = {"dev", "coder", "coder-2"};
	hd_err err = HD_ERR_INIT;
	char syn[64];
	json_t *args;
	int min, max;

	(void)state;
	assert_non_null(spawn);
	assert_non_null(replace);
	assert_ptr_equal(spawn, hd_ops_find_mcp("teammate_spawn"));
	assert_ptr_equal(replace->fn, spawn->fn);
	assert_null(replace->mcp);
	assert_null(replace->method);
	hd_ops_cli_synopsis(replace, syn, sizeof(syn), &min, &max);
	assert_string_equal(syn, "TEAM OLD NEW");
	assert_int_equal(min, 3);
	assert_int_equal(max, 3);
	hd_ops_cli_synopsis(spawn, syn, sizeof(syn), &min, &max);
	assert_string_equal(syn, "TEAM NAME");
	assert_hd_ok(
	    hd_ops_cli_read(&args, replace, 3, argv, opt_of, opts_of, none, &err),
	    &err);
	assert_string_equal(
	    json_string_value(json_object_get(args, "replaces")), "coder");
	assert_string_equal(
	    json_string_value(json_object_get(args, "name")), "coder-2");
	json_decref(args);
}

/* The subcommands `huddle GROUP --help` lists, into seen. */
static size_t
help_subs(const char *group, char seen[][32], size_t max)
{
	const char *huddle = getenv("HUDDLE");
	char cmd[1024], line[512];
	size_t nseen = 0;
	FILE *f;
	int in_subs = 0;

	assert_non_null(huddle);
	snprintf(cmd, sizeof(cmd), "'%s' %s --help", huddle, group);
	assert_non_null(f = popen(cmd, "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strcmp(line, "subcommands:\n") == 0) {
			in_subs = 1;
			continue;
		}
		if (in_subs && strncmp(line, "  ", 2) == 0 && nseen < max)
			sscanf(line, "%31s", seen[nseen++]);
		else if (in_subs)
			in_subs = 0;
	}
	assert_int_equal(pclose(f), 0);
	return nseen;
}

/* The real binary's `huddle GROUP --help`, for each group the table
 * spells commands in, lists every table entry spelled "GROUP SUB" (the
 * binary has no test entry), and besides them only the listed
 * hand-written subcommands. */
static void
test_cli_commands_are_the_table(void **state)
{
	static const char *const groups[] = {"task", "chat", "team", "agent",
	    "memory", "routine", NULL};
	const hd_op *const *o;
	char seen[64][32], words[64];
	size_t nseen, i, g, len;

	(void)state;
	for (o = hd_ops_all(); *o != NULL; o++) {
		const char *sp = (*o)->cli ? strchr((*o)->cli, ' ') : NULL;
		int known = 0;

		if (sp == NULL || *o == &echo_op || *o == &note_op ||
		    *o == &label_op)
			continue;
		for (g = 0; groups[g] != NULL; g++)
			known |= strlen(groups[g]) == (size_t)(sp - (*o)->cli) &&
				 strncmp(groups[g], (*o)->cli,
				     (size_t)(sp - (*o)->cli)) == 0;
		if (!known)
			fail_msg("'%s': add its group to this test", (*o)->cli);
	}
	for (g = 0; groups[g] != NULL; g++) {
		nseen = help_subs(groups[g], seen, 64);
		len = strlen(groups[g]);
		assert_true(nseen > 2);
		for (o = hd_ops_all(); *o != NULL; o++) {
			int found = 0;

			if ((*o)->cli == NULL || *o == &echo_op || *o == &note_op ||
			    *o == &label_op ||
			    strncmp((*o)->cli, groups[g], len) != 0 ||
			    (*o)->cli[len] != ' ')
				continue;
			for (i = 0; i < nseen; i++)
				found |= strcmp(seen[i], (*o)->cli + len + 1) == 0;
			if (!found)
				fail_msg("'%s' missing from huddle %s --help",
				    (*o)->cli, groups[g]);
		}
		for (i = 0; i < nseen; i++) {
			snprintf(words, sizeof(words), "%s %s", groups[g],
			    seen[i]);
			if (!listed(cli_hand, words) &&
			    hd_ops_find_cli(words) == NULL)
				fail_msg("hand-written '%s': make it an "
					 "operation or list it",
				    words);
			if (listed(cli_hand, words) &&
			    hd_ops_find_cli(words) != NULL)
				fail_msg("'%s' is both listed and an "
					 "operation",
				    words);
		}
	}
}

/* Each table entry spelled in one word is a command of `huddle --help`,
 * listed once: not also a hand-written command of that name. */
static void
test_cli_words_are_the_table(void **state)
{
	const char *huddle = getenv("HUDDLE");
	const hd_op *const *o;
	char cmd[1024], line[512], name[64];
	FILE *f;
	int in_cmds, times, words = 0;

	(void)state;
	assert_non_null(huddle);
	for (o = hd_ops_all(); *o != NULL; o++) {
		if ((*o)->cli == NULL || strchr((*o)->cli, ' ') != NULL)
			continue;
		words++;
		snprintf(cmd, sizeof(cmd), "'%s' --help", huddle);
		assert_non_null(f = popen(cmd, "r"));
		in_cmds = times = 0;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strcmp(line, "commands:\n") == 0)
				in_cmds = 1;
			else if (in_cmds && strncmp(line, "  ", 2) == 0 &&
				 sscanf(line, "%63s", name) == 1)
				times += strcmp(name, (*o)->cli) == 0;
			else
				in_cmds = 0;
		}
		assert_int_equal(pclose(f), 0);
		if (times != 1)
			fail_msg("'%s' listed %d times by huddle --help",
			    (*o)->cli, times);
	}
	assert_true(words > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_mcp_tools_are_the_table),
	    hd_fixture_test(test_extra_is_a_tool),
	    cmocka_unit_test(test_rest_routes_are_the_table),
	    hd_fixture_test(test_extra_answers_rest),
	    cmocka_unit_test(test_extra_parses_as_a_command),
	    cmocka_unit_test(test_limits_per_surface),
	    cmocka_unit_test(test_repeated_pairs),
	    cmocka_unit_test(test_aliases),
	    cmocka_unit_test(test_rest_actor_key),
	    cmocka_unit_test(test_cli_only_name),
	    cmocka_unit_test(test_rest_unknown_words),
	    cmocka_unit_test(test_json_option_position),
	    cmocka_unit_test(test_second_entry_shares_handler),
	    cmocka_unit_test(test_cli_commands_are_the_table),
	    cmocka_unit_test(test_cli_words_are_the_table),
	};
	int rc;

	/* before anything reads the table */
	if (hd_ops_test_add(&echo_op) != 0 || hd_ops_test_add(&note_op) != 0 ||
	    hd_ops_test_add(&label_op) != 0)
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
