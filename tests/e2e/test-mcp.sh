#!/usr/bin/env bash
# test-mcp.sh -- huddle's MCP servers through real clients: the official
# MCP TypeScript SDK (mcp.test.mjs) and the MCP Inspector CLI, over stdio
# and Streamable HTTP.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
need_node_modules @modelcontextprotocol/sdk
"$HUDDLE" up "$HUDDLE_SRC/examples/dev-team.json" >/dev/null
"$HUDDLE" team create ops >/dev/null
"$HUDDLE" agent add ops sre --leader >/dev/null

# The SDK client (node's test runner prints its own summary).
if node --test --test-reporter=spec "$E2E/mcp.test.mjs"; then pass; else fail "mcp.test.mjs"; fi

# The MCP Inspector CLI: one tool over each transport.
inspector="$E2E/node_modules/.bin/mcp-inspector"
run_inspector() {
	INSPECTOR_OUT=$(cd "$T_TMP" && HOME="$T_TMP" timeout 60 "$inspector" --cli "$@" 2>"$T_TMP/inspector.err")
	INSPECTOR_RC=$?
}
# (the inspector gives its stdio server a default environment, PATH and
# HOME: the store goes as --store)
run_inspector "$HUDDLE" --home "$HUDDLE_HOME" ${HUDDLE_STORE:+--store "$HUDDLE_STORE"} \
	mcp --team dev --agent tester \
	--method tools/call --tool-name team_chat_post --tool-arg "text=from the inspector over stdio"
expect_eq "$INSPECTOR_RC" 0 "inspector over stdio (stderr: $(cat "$T_TMP/inspector.err"))"
expect_contains "$INSPECTOR_OUT" '"authorAgentId": "tester"' "inspector stdio result"

serve_bg
url=$("$HUDDLE" attach reviewer --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
run_inspector "$url" --transport http --method tools/call --tool-name team_chat_post \
	--tool-arg "text=from the inspector over http"
expect_eq "$INSPECTOR_RC" 0 "inspector over http (stderr: $(cat "$T_TMP/inspector.err"))"
expect_contains "$INSPECTOR_OUT" '"authorAgentId": "reviewer"' "inspector http result"

# The piggyback over HTTP, where posts are group-committed (a post may be
# written on another request's connection): mail waiting for the agent comes
# with the post's result, once; 8 agents at a time, each its own.
mcp_call() { # mcp_call URL TEXT -> the JSON-RPC reply
	curl -s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"$2\"}}}" "$1"
}
agents="coder reviewer tester"
for i in 1 2 3 4 5; do
	"$HUDDLE" agent add dev "poster$i" >/dev/null
	agents="$agents poster$i"
done
for a in $agents; do
	"$HUDDLE" send --team dev --from manager --to "$a" "note for $a" >/dev/null
done
pids=()
for a in $agents; do
	u=$("$HUDDLE" attach "$a" --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
	(for i in $(seq 1 60); do mcp_call "$u" "post $i by $a"; echo; done >"$T_TMP/mcp-$a.json") &
	pids+=($!)
done
wait "${pids[@]}"
for a in $agents; do
	expect_eq "$(grep -c '"result"' "$T_TMP/mcp-$a.json")" "60" "$a: 60 posts, 60 results"
	got=$(grep -o "note for [a-z0-9]*" "$T_TMP/mcp-$a.json" | sort | uniq -c | tr -s ' ')
	expect_eq "$got" " 2 note for $a" "$a's note came with one post's result (summary and content), once, and no one else's"
done
kill -TERM "$serve_pid"
wait "$serve_pid"
expect_eq "$?" 0 "serve exits 0 on SIGTERM"

run chat read dev --json --limit 500
expect_contains "$OUT" "from the inspector over stdio" "stdio post landed"
expect_contains "$OUT" "from the inspector over http" "http post landed"
finish
