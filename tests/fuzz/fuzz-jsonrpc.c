/*
 * fuzz-jsonrpc.c -- the MCP JSON-RPC dispatcher (src/mcp/mcp.c, SPEC 10)
 * on any message, against a real store (store-fuzz.h: team dev with lead
 * and coder) and every tool behind it. The first input byte picks the
 * session: bound to lead, bound to coder, unbound, or read-only (an HTTP
 * connection with a bad sig), and (its bit 2) whether the message comes
 * as stdio does or as POST /mcp with 2026-07-28's MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name headers (src/mcp/era.c); the rest is the
 * message. For every input:
 *  (1) a reply is given exactly when the message is not a notification or
 *      a response (hd_mcp_is_notification, the same parse);
 *  (2) a reply is one line of JSON: an object with "jsonrpc": "2.0", an
 *      "id", and exactly one of "result" and "error"; an error has an
 *      integer code and a string message;
 *  (3) nothing crashes or leaks (ASan and UBSan);
 *  (4) over HTTP, the status is 200, or 400 or 404 with an error.
 * Writes go to the shared store; over a long run it grows, which costs a
 * little per input and finds what only a busy store shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>

#include "fuzz.h"
#include "store-fuzz.h"

static hd_mcp_server *srv;

/* check, showing the reply that broke it */
static void
check_reply(int ok, const char *what, const char *reply)
{
	if (!ok)
		fprintf(
		    stderr, "reply: %s\n", reply != NULL ? reply : "(none)");
	check(ok, what);
}

static void
server_free(void)
{
	hd_mcp_server_free(srv);
	srv = NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const agents[] = {"lead", "coder"};
	static const hd_mcp_headers h26 = {
	    "2026-07-28", "tools/call", "team_chat_post"};
	hd_mcp_session s;
	hd_err err = HD_ERR_INIT;
	const char *msg;
	char *reply = NULL;
	json_t *j, *e;
	uint8_t pick = 0, http = 0;
	int note, status = 200;

	if (srv == NULL) {
		if (hd_mcp_server_new(&srv, &err) < 0)
			fuzz_die("mcp server", &err);
		atexit(server_free);
	}
	if (size > 0) {
		pick = data[0] % 4;
		http = data[0] & 4;
		data++;
		size--;
	}
	msg = (const char *)data;
	hd_mcp_session_init(&s, srv, fuzz_store());
	if (pick < 2 && hd_mcp_session_bind(&s, "dev", agents[pick], &err) < 0)
		fuzz_die("bind", &err);
	if (pick == 3)
		s.read_only = 1;
	note = hd_mcp_is_notification(msg, size);
	if (http)
		hd_mcp_handle_http(&reply, &status, &s, msg, size, &h26);
	else
		hd_mcp_handle(&reply, &s, msg, size);
	check_reply((reply == NULL) == (note != 0),
	    note ? "a notification got a reply" : "a request got no reply",
	    reply); /* (1) */
	if (reply != NULL) { /* (2) */
		check_reply(strchr(reply, '\n') == NULL,
		    "the reply is not one line", reply);
		j = json_loads(reply, JSON_REJECT_DUPLICATES, NULL);
		check_reply(
		    json_is_object(j), "the reply is not a JSON object", reply);
		check_reply(
		    json_is_string(json_object_get(j, "jsonrpc")) &&
			strcmp(json_string_value(json_object_get(j, "jsonrpc")),
			    "2.0") == 0,
		    "the reply is not JSON-RPC 2.0", reply);
		check_reply(json_object_get(j, "id") != NULL,
		    "the reply has no id", reply);
		e = json_object_get(j, "error");
		check_reply(
		    (json_object_get(j, "result") != NULL) != (e != NULL),
		    "the reply needs exactly one of result and error", reply);
		check_reply(
		    e == NULL ||
			(json_is_integer(json_object_get(e, "code")) &&
			    json_is_string(json_object_get(e, "message"))),
		    "an error without an integer code and a message", reply);
		check_reply(status == 200 ||
				((status == 400 || status == 404) && e != NULL),
		    "an HTTP status other than 200, or 400/404 with an error",
		    reply); /* (4) */
		json_decref(j);
	}
	free(reply);
	return 0;
}

/* The first byte of each seed picks the session (see above). */
const char *const hd_fuzz_seeds[] = {
    /* found by libFuzzer: a method name whose 100th byte falls inside a
     * character made "Method not found" invalid UTF-8, and the reply
     * went out with no error member */
    "\x02{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ab"
    "\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615"
    "\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615"
    "\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615"
    "\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615"
    "\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\\ue615\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
    "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}",
    "\x02{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
    "\x00{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"hi @coder\"}}}",
    "\x01{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"task_create\",\"arguments\":{\"subject\":\"x\"}}}",
    "\x01{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"task_list\",\"arguments\":{}}}",
    "\x00{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"send_message\",\"arguments\":{\"to\":\"coder\","
    "\"content\":\"hello\"}}}",
    "\x01{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"inbox_read\",\"arguments\":{}}}",
    "\x03{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"ro\"}}}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\","
    "\"params\":{\"name\":\"team_state\",\"arguments\":{\"team\":\"dev\"}}}",
    "\x02[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":1,",
    "\x02{\"jsonrpc\":\"1.0\",\"id\":null,\"method\":\"ping\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
    "\x04{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\","
    "\"params\":{\"name\":\"team_chat_post\",\"arguments\":{\"text\":"
    "\"2026\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
    "\x06{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"server/discover\","
    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
    "\"2026-07-28\"}}}",
    "\x02{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\","
    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
    "\"2099-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"",
    "\",\"arguments\":{",
    "}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":",
    "\"method\":",
    "\"params\":",
    "\"result\":",
    "\"error\":",
    "\"initialize\"",
    "\"ping\"",
    "\"tools/list\"",
    "\"tools/call\"",
    "\"notifications/initialized\"",
    "team_chat_post",
    "team_chat_subscribe",
    "task_create",
    "task_claim",
    "task_complete",
    "task_comment",
    "task_assign",
    "send_message",
    "inbox_read",
    "team_state",
    "team_delegate",
    "\"text\":\"",
    "\"subject\":\"",
    "\"task_id\":",
    "\"to\":\"coder\"",
    "\"team\":\"dev\"",
    "\"agent\":\"lead\"",
    "\"content\":\"x\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "1",
    "-1",
    "null",
    "true",
    "1e400",
    "\\u0000",
    "\xff",
    NULL,
};
