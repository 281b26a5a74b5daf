/*
 * test-dispatch.c -- the MCP JSON-RPC dispatcher: exact reply bytes for
 * every protocol path, tool errors as isError results, identity binding.
 */
#include <huddle/board.h>

#include "mcp-fx.h"

static void
expect_reply(struct mcp_fx *fx, const char *msg, const char *want)
{
	char *got = call(fx, msg);

	if (want == NULL) {
		if (got != NULL)
			fail_msg("expected no reply to %s, got %s", msg, got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static const char *
tool_text(json_t *res)
{
	return json_string_value(json_object_get(
	    json_array_get(json_object_get(res, "content"), 0), "text"));
}

static void
expect_tool_error(
    struct mcp_fx *fx, const char *name, const char *args, const char *want)
{
	json_t *res = tool(fx, name, args);

	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_string_equal(tool_text(res), want);
	json_decref(res);
}

static void
test_mcp__protocol_replies_are_exact(void **state)
{
	struct mcp_fx *fx = *state;

	/* id keeps its type; 0 is valid; result precedes nothing else */
	expect_reply(fx, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}");
	expect_reply(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"result\":{}}");
	expect_reply(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"foo/bar\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,"
	    "\"message\":\"Method not found: foo/bar\"}}");
	expect_reply(fx, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":",
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"Parse error: the message is not valid JSON\"}}");
	expect_reply(fx, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
	    "\"message\":\"Invalid Request: batches are not supported; send "
	    "one JSON-RPC object per message\"}}");
	expect_reply(fx, "{\"foo\":1}",
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
	    "\"message\":\"Invalid Request: expected a JSON-RPC 2.0 request "
	    "object with \\\"jsonrpc\\\":\\\"2.0\\\", a string \\\"method\\\" "
	    "and a string or integer \\\"id\\\"\"}}");
	expect_reply(fx, "{\"jsonrpc\":\"1.0\",\"id\":9,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32600,"
	    "\"message\":\"Invalid Request: expected a JSON-RPC 2.0 request "
	    "object with \\\"jsonrpc\\\":\\\"2.0\\\", a string \\\"method\\\" "
	    "and a string or integer \\\"id\\\"\"}}");
	expect_reply(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\","
	    "\"params\":[1]}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32602,"
	    "\"message\":\"Invalid params: params must be an object\"}}");
	expect_reply(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
	    "\"params\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32602,"
	    "\"message\":\"Invalid params: tools/call needs a string "
	    "\\\"name\\\"\"}}");
	/* notifications and responses: no reply */
	expect_reply(fx,
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
	    "initialized\"}",
	    NULL);
	expect_reply(fx, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}", NULL);
	expect_reply(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", NULL);
	{
		const char *n = "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}";
		const char *q =
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}";

		assert_true(hd_mcp_is_notification(n, strlen(n)));
		assert_false(hd_mcp_is_notification(q, strlen(q)));
	}
}

/* A message with a repeated key is a parse error for the dispatcher, so
 * it is no notification either: HTTP must not answer it 202 and drop it
 * (found by tests/fuzz/fuzz-jsonrpc.c). */
static void
test_mcp__duplicate_keys_are_never_a_notification(void **state)
{
	struct mcp_fx *fx = *state;
	static const char *const msgs[] = {
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"id\":4,\"result\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\","
	    "\"method\":\"x\"}",
	};
	char *reply;
	size_t i;

	for (i = 0; i < 2; i++) {
		assert_false(hd_mcp_is_notification(msgs[i], strlen(msgs[i])));
		reply = call(fx, msgs[i]);
		assert_non_null(reply);
		assert_string_equal(reply,
		    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
		    "-32700,\"message\":\"Parse error: the message is not "
		    "valid JSON\"}}");
		free(reply);
	}
}

static void
test_mcp__initialize_negotiates_the_version(void **state)
{
	struct mcp_fx *fx = *state;
	static const char *const cases[][2] = {
	    {"2025-06-18", "2025-06-18"},
	    {"2025-03-26", "2025-03-26"},
	    {"2025-11-25", "2025-11-25"},
	    {"2024-11-05", "2025-11-25"},
	    {"banana", "2025-11-25"},
	};
	char msg[256], *reply;
	json_t *j;
	size_t i;

	for (i = 0; i < 5; i++) {
		snprintf(msg, sizeof(msg),
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		    "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{}"
		    ","
		    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
		    cases[i][0]);
		reply = call(fx, msg);
		j = json_loads(reply, 0, NULL);
		free(reply);
		assert_string_equal(
		    json_string_value(json_object_get(
			json_object_get(j, "result"), "protocolVersion")),
		    cases[i][1]);
		assert_true(json_is_object(json_object_get(
		    json_object_get(
			json_object_get(j, "result"), "capabilities"),
		    "tools")));
		assert_int_equal(json_object_size(j), 3);
		json_decref(j);
	}
}

static void
test_mcp__tools_list_has_schemas_and_answers_before_initialize(void **state)
{
	struct mcp_fx *fx = *state;
	static const char *const want[] = {"team_chat_post",
	    "team_chat_subscribe", "task_create", "task_list", "task_get",
	    "task_claim", "task_auto_claim", "task_assign", "task_start",
	    "task_complete", "verify_verdict", "task_verify",
	    "task_fail", "task_release", "task_link", "task_comment",
	    "team_create", "team_state", "teammate_spawn", "team_delegate",
	    "team_shutdown",
	    "send_message", "inbox_read", "memory_save", "memory_search",
	    "memory_forget", NULL};
	char *reply;
	json_t *j, *tools, *t, *sch;
	size_t i, k;

	reply = call(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
			 "\"tools/list\"}");
	j = json_loads(reply, 0, NULL);
	free(reply);
	tools = json_object_get(json_object_get(j, "result"), "tools");
	for (k = 0; want[k] != NULL; k++) {
		int found = 0;

		json_array_foreach (tools, i, t) {
			if (strcmp(
				json_string_value(json_object_get(t, "name")),
				want[k]) != 0)
				continue;
			found = 1;
			assert_true(strlen(json_string_value(json_object_get(
					t, "description"))) > 20);
			sch = json_object_get(t, "inputSchema");
			assert_string_equal(
			    json_string_value(json_object_get(sch, "type")),
			    "object");
			assert_true(
			    json_is_object(json_object_get(sch, "properties")));
			assert_true(
			    json_is_array(json_object_get(sch, "required")));
		}
		if (!found)
			fail_msg("tool %s missing from tools/list", want[k]);
	}
	assert_int_equal(json_array_size(tools), k);
	json_decref(j);

	/* read-only: the five read tools only */
	fx->s.read_only = 1;
	reply = call(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
			 "\"tools/list\"}");
	j = json_loads(reply, 0, NULL);
	free(reply);
	tools = json_object_get(json_object_get(j, "result"), "tools");
	assert_int_equal(json_array_size(tools), 5);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(tools, 0), "name")),
	    "team_chat_subscribe");
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(tools, 4), "name")),
	    "memory_search");
	json_decref(j);
}

static void
test_mcp__tool_errors_are_results_with_exact_text(void **state)
{
	struct mcp_fx *fx = *state;

	expect_tool_error(
	    fx, "no_such_tool", "{}", "unknown tool \"no_such_tool\"");
	expect_tool_error(
	    fx, "team_chat_post", "{}", "missing required argument \"text\"");
	expect_tool_error(fx, "team_chat_post", "{\"text\":5}",
	    "argument \"text\" must be a string");
	expect_tool_error(fx, "team_chat_post",
	    "{\"text\":\"hi\",\"colour\":1}",
	    "unknown argument \"colour\" to team_chat_post: use text");
	/* every tool names what it takes, identity arguments left out */
	expect_tool_error(fx, "team_chat_subscribe", "{\"since\":3}",
	    "unknown argument \"since\" to team_chat_subscribe: use sinceSeq, "
	    "limit");
	expect_tool_error(fx, "team_state", "{\"verbose\":true}",
	    "unknown argument \"verbose\" to team_state: it takes no "
	    "arguments");
	expect_tool_error(fx, "team_chat_post", "{\"text\":\"hi\"}",
	    "no bound identity: pass authorAgentId + teamId (unbound mode)");
	expect_tool_error(fx, "team_chat_post",
	    "{\"text\":\"hi\",\"teamId\":\"dev\",\"authorAgentId\":\"sre\"}",
	    "no member \"sre\" in team dev");
	expect_tool_error(fx, "task_claim",
	    "{\"task_id\":\"5\",\"teamId\":"
	    "\"dev\",\"authorAgentId\":\"coder\"}",
	    "argument \"task_id\" must be an integer");
	expect_tool_error(fx, "task_claim",
	    "{\"task_id\":99,\"teamId\":"
	    "\"dev\",\"authorAgentId\":\"coder\"}",
	    "task 99 not found");
	expect_tool_error(fx, "task_create",
	    "{\"subject\":\"x\",\"depends_on\":"
	    "[\"a\"],\"teamId\":\"dev\","
	    "\"authorAgentId\":\"coder\"}",
	    "argument \"depends_on\" must be an array of integers");
	fx->s.read_only = 1;
	expect_tool_error(fx, "team_chat_post",
	    "{\"text\":\"hi\",\"teamId\":\"dev\",\"authorAgentId\":\"coder\"}",
	    "this connection is read-only: attach with a signed URL (huddle "
	    "attach TEAM AGENT) to post or change anything");
}

static void
test_mcp__success_is_text_plus_structured_content(void **state)
{
	struct mcp_fx *fx = *state;
	json_t *res, *parsed;

	res = tool(fx, "team_chat_post",
	    "{\"text\":\"hello\",\"teamId\":\"dev\",\"authorAgentId\":"
	    "\"coder\"}");
	assert_null(json_object_get(res, "isError"));
	parsed = json_loads(tool_text(res), 0, NULL);
	assert_true(
	    json_equal(parsed, json_object_get(res, "structuredContent")));
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(parsed, "posted"), "seq")),
	    1);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(parsed, "posted"), "roomId")),
	    "team:dev");
	json_decref(parsed);
	json_decref(res);
}

/* A bound session ignores identity arguments naming someone else. */
static void
test_mcp__bound_identity_cannot_be_spoofed(void **state)
{
	struct mcp_fx *fx = *state;
	hd_posts l;
	hd_err err = HD_ERR_INIT;
	json_t *res;

	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	res = tool(fx, "team_chat_post",
	    "{\"text\":\"spoof\",\"authorAgentId\":\"manager\",\"teamId\":"
	    "\"ops\",\"roomId\":\"team:ops\"}");
	assert_null(json_object_get(res, "isError"));
	json_decref(res);
	assert_hd_ok(
	    hd_room_read(&l, fx->base.st, "dev", 0, 10, NULL, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].author, "coder");
	assert_string_equal(l.items[0].body, "spoof");
	hd_posts_dispose(&l);
	assert_hd_ok(
	    hd_room_read(&l, fx->base.st, "ops", 0, 10, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	hd_posts_dispose(&l);

	/* and never sees its own posts */
	res = tool(fx, "team_chat_subscribe", "{}");
	assert_int_equal(
	    json_array_size(json_object_get(
		json_object_get(res, "structuredContent"), "posts")),
	    0);
	json_decref(res);
}

/* A subscriber receives teammates' posts wrapped as isUser=false. */
static void
test_mcp__subscribe_wraps_posts(void **state)
{
	struct mcp_fx *fx = *state;
	hd_err err = HD_ERR_INIT;
	json_t *res, *post;

	assert_hd_ok(hd_room_post(NULL, fx->base.st, "dev", "peer", "manager",
			 "line one\nline two", &err),
	    &err);
	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	res = tool(fx, "team_chat_subscribe", "{\"sinceSeq\":0}");
	post = json_array_get(
	    json_object_get(json_object_get(res, "structuredContent"), "posts"),
	    0);
	assert_string_equal(json_string_value(json_object_get(post, "wrapped")),
	    "[Inter-session message \xc2\xb7 from=manager \xc2\xb7 kind=peer "
	    "\xc2\xb7 seq=1 \xc2\xb7 isUser=false]\n| line one\n| line two");
	assert_int_equal(
	    json_integer_value(json_object_get(
		json_object_get(res, "structuredContent"), "nextSeq")),
	    1);
	json_decref(res);
}

/* A bound agent cannot touch another team's task. */
static void
test_mcp__board_tools_stay_in_the_team(void **state)
{
	struct mcp_fx *fx = *state;
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	char args[64];

	ts.team = "ops";
	ts.subject = "ops work";
	assert_hd_ok(hd_board_create(&t, fx->base.st, &ts, &err), &err);
	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	snprintf(args, sizeof(args), "{\"task_id\":%lld}", (long long)t->id);
	expect_tool_error(fx, "task_get", args, "task 1 not found");
	expect_tool_error(fx, "task_claim", args, "task 1 not found");
	hd_task_free(t);
}

/* task_assign: a named assignee or auto, exactly one; the answer names
 * the assignee and, with auto, why. Only the leader may assign. */
static void
test_mcp__task_assign_names_or_picks(void **state)
{
	struct mcp_fx *fx = *state;
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *res, *sc;
	int64_t a, b;
	char args[96];

	ts.team = "dev";
	ts.subject = "first";
	assert_hd_ok(hd_board_create(&t, fx->base.st, &ts, &err), &err);
	a = t->id;
	hd_task_free(t);
	ts.subject = "second";
	assert_hd_ok(hd_board_create(&t, fx->base.st, &ts, &err), &err);
	b = t->id;
	hd_task_free(t);
	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "manager", &err), &err);
	snprintf(args, sizeof(args),
	    "{\"task_id\":%lld,\"assignee\":\"coder\",\"auto\":true}",
	    (long long)a);
	expect_tool_error(
	    fx, "task_assign", args, "pass assignee or auto, not both");
	snprintf(args, sizeof(args), "{\"task_id\":%lld,\"auto\":false}",
	    (long long)a);
	expect_tool_error(
	    fx, "task_assign", args, "pass assignee (a member) or auto: true");

	snprintf(args, sizeof(args),
	    "{\"task_id\":%lld,\"assignee\":\"coder\"}", (long long)a);
	res = tool(fx, "task_assign", args);
	sc = json_object_get(res, "structuredContent");
	assert_string_equal(
	    json_string_value(json_object_get(sc, "assignee")), "coder");
	assert_null(json_object_get(sc, "picked_because"));
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(sc, "task"), "owner")),
	    "coder");
	json_decref(res);

	snprintf(args, sizeof(args), "{\"task_id\":%lld,\"auto\":true}",
	    (long long)b);
	res = tool(fx, "task_assign", args);
	sc = json_object_get(res, "structuredContent");
	assert_string_equal(
	    json_string_value(json_object_get(sc, "assignee")), "coder");
	assert_string_equal(
	    json_string_value(json_object_get(sc, "picked_because")),
	    "idle, 1 open task");
	json_decref(res);

	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	expect_tool_error(fx, "task_assign", args,
	    "only the team leader or a user may assign task 2, not coder");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_mcp__protocol_replies_are_exact),
	    T(test_mcp__duplicate_keys_are_never_a_notification),
	    T(test_mcp__initialize_negotiates_the_version),
	    T(test_mcp__tools_list_has_schemas_and_answers_before_initialize),
	    T(test_mcp__tool_errors_are_results_with_exact_text),
	    T(test_mcp__success_is_text_plus_structured_content),
	    T(test_mcp__bound_identity_cannot_be_spoofed),
	    T(test_mcp__subscribe_wraps_posts),
	    T(test_mcp__board_tools_stay_in_the_team),
	    T(test_mcp__task_assign_names_or_picks),
	};
	return cmocka_run_group_tests_name(
	    "unit/mcp/dispatch", tests, NULL, NULL);
}
