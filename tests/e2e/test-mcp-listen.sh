#!/usr/bin/env bash
# test-mcp-listen.sh -- live room delivery to MCP clients (SPEC 10.1):
# mcp-listen.test.mjs drives the streams with real clients (1,000 posts,
# a forced reconnect, mail, another team); here the refusals, each a
# clear JSON error and never a stream: a read-only URL, a missing or
# unknown session, a bad Last-Event-ID, a read-only listen.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
need_node_modules @modelcontextprotocol/client
"$HUDDLE" up "$HUDDLE_SRC/examples/dev-team.json" >/dev/null
"$HUDDLE" team create ops >/dev/null
"$HUDDLE" agent add ops sre --leader >/dev/null

if node --test --test-reporter=spec "$E2E/mcp-listen.test.mjs"; then pass; else fail "mcp-listen.test.mjs"; fi

serve_bg
u=$("$HUDDLE" attach dev coder --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
sid=$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' -d "$init" "$u" |
	tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
expect_eq "${#sid}" 32 "initialize over HTTP opens a session"

get() { # get URL [HEADER...]: status and body of GET /mcp (never a stream here)
	local url=$1
	shift
	curl -s -m 5 -o "$T_TMP/get.body" -w '%{http_code}' "$@" "$url"
}
code=$(get "$url/mcp" -H "Mcp-Session-Id: $sid")
expect_eq "$code" 403 "GET /mcp on a read-only URL"
expect_contains "$(cat "$T_TMP/get.body")" "read-only" "the read-only GET says why"
code=$(get "$u")
expect_eq "$code" 400 "GET /mcp without a session"
expect_contains "$(cat "$T_TMP/get.body")" "Mcp-Session-Id" "the sessionless GET names the header"
code=$(get "$u" -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef")
expect_eq "$code" 404 "GET /mcp in an unknown session"
expect_contains "$(cat "$T_TMP/get.body")" "no MCP session" "the unknown session is named"
for bad in x -1 1.5 99999999999999999999; do
	code=$(get "$u" -H "Mcp-Session-Id: $sid" -H "Last-Event-ID: $bad")
	expect_eq "$code" 400 "GET /mcp with Last-Event-ID $bad"
	expect_contains "$(cat "$T_TMP/get.body")" "Last-Event-ID" "the bad Last-Event-ID $bad is named"
done
r=$("$HUDDLE" attach dev reviewer --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
code=$(get "$r" -H "Mcp-Session-Id: $sid")
expect_eq "$code" 404 "a session is its own identity's: another agent's URL cannot use it"

# A POST naming an unknown session is 404; without one it is served as ever.
list='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H 'Mcp-Session-Id: nope' -d "$list" "$u")
expect_eq "$code" 404 "POST /mcp in an unknown session"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -H "Mcp-Session-Id: $sid" -d "$list" "$u")
expect_eq "$code" 200 "POST /mcp in its session"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d "$list" "$u")
expect_eq "$code" 200 "POST /mcp without a session"

# DELETE ends the session; after it, the session is unknown.
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$u")
expect_eq "$code" 400 "DELETE /mcp without a session"
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $sid" "$u")
expect_eq "$code" 204 "DELETE /mcp ends the session"
code=$(get "$u" -H "Mcp-Session-Id: $sid")
expect_eq "$code" 404 "GET /mcp after DELETE"

# 2026: a read-only listen asking for the room is refused; a bad
# Last-Event-ID is 400; a bad filter is -32602.
listen() { # listen URL FILTER [HEADER...]
	local url=$1 filter=$2
	shift 2
	curl -s -m 5 -o "$T_TMP/listen.body" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: subscriptions/listen' "$@" \
		-d "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":$filter,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" "$url"
}
code=$(listen "$url/mcp" '{"huddle/room":true}')
expect_eq "$code $(json_get "$(cat "$T_TMP/listen.body")" 'str(j["error"]["code"]) + " " + str("read-only" in j["error"]["message"])')" \
	"403 -32602 True" "a read-only listen for the room"
code=$(listen "$u" '{"huddle/room":true}' -H 'Last-Event-ID: nope')
expect_eq "$code" 400 "a listen with a bad Last-Event-ID"
code=$(listen "$u" '[]')
expect_eq "$code $(json_get "$(cat "$T_TMP/listen.body")" 'j["error"]["code"]')" "200 -32602" "a listen without a filter object"

# Over stdio nothing streams: listen is not served there, nor advertised.
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	"$init" | "$HUDDLE" mcp --team dev --agent coder)
expect_contains "$(echo "$out" | sed -n 1p)" '"code":-32601' "stdio listen is not served"
expect_contains "$(echo "$out" | sed -n 2p)" '"capabilities":{"tools":{}}' "stdio advertises tools only"
finish
