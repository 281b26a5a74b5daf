/*
 * test-era.c -- MCP's 2026-07-28 era beside 2025-11-25 (src/mcp/era.c):
 * the per-request _meta and the HTTP headers checked with their exact
 * JSON-RPC codes and HTTP statuses, the removed methods 404, and a
 * client that starts with initialize served as before.
 */
#include "mcp-fx.h"

#define META_OK                                                        \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"       \
	"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* Send msg over "HTTP" with headers h (NULL: stdio); want the status and
 * the error code (0: a result), and return the parsed reply. */
static json_t *
http(struct mcp_fx *fx, const char *msg, const hd_mcp_headers *h,
    int want_status, int want_code)
{
	char *reply = NULL;
	int status = -1;
	json_t *j;

	hd_mcp_handle_http(&reply, &status, &fx->s, msg, strlen(msg), h);
	assert_non_null(reply);
	j = json_loads(reply, 0, NULL);
	assert_non_null(j);
	if (status != want_status)
		fail_msg("status %d, wanted %d: %s", status, want_status, reply);
	free(reply);
	if (want_code == 0)
		assert_non_null(json_object_get(j, "result"));
	else
		assert_int_equal(json_integer_value(json_object_get(
				     json_object_get(j, "error"), "code")),
		    want_code);
	return j;
}

static const char *
err_message(const json_t *j)
{
	return json_string_value(
	    json_object_get(json_object_get(j, "error"), "message"));
}

static void
test_mcp__meta_is_validated_with_exact_codes(void **state)
{
	struct mcp_fx *fx = *state;
	const hd_mcp_headers h = {"2026-07-28", "server/discover", NULL};
	json_t *j;

	/* a 2026 header and no _meta: -32602, 400 */
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":101,\"method\":\"server/discover\","
	    "\"params\":{}}",
	    &h, 400, -32602);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 101);
	assert_string_equal(err_message(j),
	    "Invalid params: the request has no _meta object; 2026-07-28 "
	    "requests carry io.modelcontextprotocol/protocolVersion and "
	    "io.modelcontextprotocol/clientCapabilities in params._meta");
	json_decref(j);
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":102,\"method\":\"server/discover\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}}}",
	    &h, 400, -32602);
	assert_string_equal(err_message(j), "Invalid params: _meta is missing "
					    "io.modelcontextprotocol/"
					    "protocolVersion");
	json_decref(j);
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":104,\"method\":\"server/discover\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2026-07-28\"}}}",
	    &h, 400, -32602);
	assert_string_equal(err_message(j), "Invalid params: _meta is missing "
					    "io.modelcontextprotocol/"
					    "clientCapabilities");
	json_decref(j);
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server/discover\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":[]}}}",
	    &h, 400, -32602);
	json_decref(j);
	/* clientInfo is optional, but when given it is an Implementation */
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"server/discover\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{},\"io.modelcontextprotocol/clientInfo\":"
	    "{\"name\":\"x\"}}}}",
	    &h, 400, -32602);
	json_decref(j);
}

static void
test_mcp__headers_must_agree_with_the_body(void **state)
{
	struct mcp_fx *fx = *state;
	const hd_mcp_headers other = {"2026-07-28", "tools/list", NULL};
	const hd_mcp_headers v999 = {"v999.0.0", "server/discover", NULL};
	const hd_mcp_headers nover = {NULL, "server/discover", NULL};
	const hd_mcp_headers nomethod = {"2026-07-28", NULL, NULL};
	const hd_mcp_headers spaced = {" 2026-07-28 ", "server/discover", NULL};
	const char *discover =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
	    "\"params\":{" META_OK "}}";
	json_t *j, *data;

	json_decref(http(fx, discover, &other, 400, -32020));
	json_decref(http(fx, discover, &v999, 400, -32020));
	json_decref(http(fx, discover, &nover, 400, -32020));
	json_decref(http(fx, discover, &nomethod, 400, -32020));
	json_decref(http(fx, discover, &spaced, 200, 0));
	/* a version this era does not speak: -32022 naming the supported */
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":301,\"method\":\"server/discover\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"v999.0.0\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}}}",
	    &v999, 400, -32022);
	data = json_object_get(json_object_get(j, "error"), "data");
	assert_string_equal(json_string_value(json_object_get(data, "requested")),
	    "v999.0.0");
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(data, "supported"), 0)),
	    "2026-07-28");
	json_decref(j);
}

static void
test_mcp__mcp_name_names_the_tool(void **state)
{
	struct mcp_fx *fx = *state;
	const char *call =
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"team_state\",\"arguments\":{\"team_name\":"
	    "\"dev\"}," META_OK "}}";
	const hd_mcp_headers none = {"2026-07-28", "tools/call", NULL};
	const hd_mcp_headers wrong = {"2026-07-28", "tools/call", "task_list"};
	const hd_mcp_headers ows = {"2026-07-28", "tools/call", "  team_state "};
	/* "team_state" in the =?base64?...?= form */
	const hd_mcp_headers b64 = {
	    "2026-07-28", "tools/call", "=?base64?dGVhbV9zdGF0ZQ==?="};
	const hd_mcp_headers badb64 = {
	    "2026-07-28", "tools/call", "=?base64?dGVhbV9zd!==?="};
	json_t *j;

	/* inputResponses, when given, is an object of objects (in-band) */
	json_decref(http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"team_state\",\"arguments\":{},"
	    "\"inputResponses\":{\"user_name\":12345}," META_OK "}}",
	    &ows, 200, -32602));
	json_decref(http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"team_state\",\"arguments\":{},"
	    "\"inputResponses\":null," META_OK "}}",
	    &ows, 200, -32602));
	json_decref(http(fx, call, &none, 400, -32020));
	json_decref(http(fx, call, &wrong, 400, -32020));
	json_decref(http(fx, call, &badb64, 400, -32020));
	json_decref(http(fx, call, &b64, 200, 0));
	j = http(fx, call, &ows, 200, 0);
	/* a 2026 result says it is complete and keeps the 2025 frame */
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(j, "result"), "resultType")),
	    "complete");
	assert_non_null(json_object_get(
	    json_object_get(json_object_get(j, "result"), "structuredContent"),
	    "team"));
	json_decref(j);
}

static void
test_mcp__removed_and_unknown_methods_are_404(void **state)
{
	struct mcp_fx *fx = *state;
	static const char *const methods[] = {"initialize", "ping",
	    "logging/setLevel", "resources/subscribe", "subscriptions/listen",
	    "unknown/method", NULL};
	char msg[512];
	int i;

	for (i = 0; methods[i] != NULL; i++) {
		hd_mcp_headers h = {"2026-07-28", methods[i], NULL};
		json_t *j;

		snprintf(msg, sizeof(msg),
		    "{\"jsonrpc\":\"2.0\",\"id\":500,\"method\":\"%s\","
		    "\"params\":{" META_OK "}}",
		    methods[i]);
		j = http(fx, msg, &h, 404, -32601);
		assert_int_equal(
		    json_integer_value(json_object_get(j, "id")), 500);
		json_decref(j);
	}
}

static void
test_mcp__discover_and_list_carry_the_era_fields(void **state)
{
	struct mcp_fx *fx = *state;
	const hd_mcp_headers dh = {"2026-07-28", "server/discover", NULL};
	const hd_mcp_headers lh = {"2026-07-28", "tools/list", NULL};
	json_t *j, *r;

	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
	    "\"params\":{" META_OK "}}",
	    &dh, 200, 0);
	r = json_object_get(j, "result");
	assert_string_equal(
	    json_string_value(json_object_get(r, "resultType")), "complete");
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(r, "supportedVersions"), 0)),
	    "2026-07-28");
	assert_int_equal(json_array_size(json_object_get(r, "supportedVersions")),
	    1);
	assert_true(json_is_object(
	    json_object_get(json_object_get(r, "capabilities"), "tools")));
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(r, "_meta"),
				    "io.modelcontextprotocol/serverInfo"),
				"name")),
	    "huddle");
	assert_string_equal(
	    json_string_value(json_object_get(r, "cacheScope")), "private");
	assert_true(json_integer_value(json_object_get(r, "ttlMs")) > 0);
	json_decref(j);

	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
	    "\"params\":{" META_OK "}}",
	    &lh, 200, 0);
	r = json_object_get(j, "result");
	assert_true(json_array_size(json_object_get(r, "tools")) > 10);
	assert_string_equal(
	    json_string_value(json_object_get(r, "resultType")), "complete");
	assert_string_equal(
	    json_string_value(json_object_get(r, "cacheScope")), "private");
	json_decref(j);
}

static void
test_mcp__eras_are_per_request(void **state)
{
	struct mcp_fx *fx = *state;
	char *reply;
	json_t *j;

	/* stdio: the _meta alone makes a request 2026, with no headers */
	j = http(fx,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{"
	    META_OK "}}",
	    NULL, 404, -32601);
	json_decref(j);
	/* an initialize with a 2026 header is a mismatch */
	{
		const hd_mcp_headers h = {"2026-07-28", "initialize", NULL};

		json_decref(http(fx,
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		    "\"params\":{\"protocolVersion\":\"2025-11-25\"}}",
		    &h, 400, -32020));
	}
	/* and a 2025 client, before and after, gets the same bytes */
	reply = call(fx, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
	assert_string_equal(reply, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}");
	free(reply);
	{
		const hd_mcp_headers h = {"2025-11-25", NULL, NULL};

		j = http(fx,
		    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"foo/bar\"}", &h,
		    200, -32601);
		json_decref(j);
	}
	assert_int_equal(fx->s.initialized, 0);
	assert_string_equal(fx->s.protocol, "2025-11-25");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_mcp__meta_is_validated_with_exact_codes),
	    T(test_mcp__headers_must_agree_with_the_body),
	    T(test_mcp__mcp_name_names_the_tool),
	    T(test_mcp__removed_and_unknown_methods_are_404),
	    T(test_mcp__discover_and_list_carry_the_era_fields),
	    T(test_mcp__eras_are_per_request),
	};
	return cmocka_run_group_tests_name("unit/mcp/era", tests, NULL, NULL);
}
