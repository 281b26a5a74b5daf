#!/usr/bin/env bash
# test-memory.sh -- team memory (docs/memory.md) from every surface: the
# CLI, REST (as the user and as agents proving who they are) and MCP over
# HTTP and stdio. Each reads its team's facts, the global ones and its own
# private ones -- never another team's, never another agent's private
# ones; a secret-shaped text is refused naming the pattern, never echoing
# it; FTS syntax in a query is plain words; facts survive a restart.
. "$(dirname "$0")/lib.sh"

run team create dev
run agent add dev manager --leader
run agent add dev coder
run agent add dev tester
run team create ops
run agent add ops boss --leader

# ids: the sorted ids of a {facts: [...]} answer
ids() { json_get "$1" 'sorted(f["id"] for f in j["facts"])'; }

# --- CLI: save in every scope, from both teams
run_says 0 "saved fact #1 (team) in dev" "save a team fact" \
	memory save dev "the staging DB listens on 5433" --as coder --tag db --tag staging
run_says 0 "saved fact #2 (agent) in dev" "save a private fact" \
	memory save dev "coder: load tests use the staging DB" --as coder --scope agent
run_says 0 "saved fact #3 (agent) in dev" "another agent's private fact" \
	memory save dev "tester: the staging DB resets nightly" --as tester --scope agent
run_says 0 "saved fact #4 (team) in ops" "another team's fact" \
	memory save ops "ops: the staging DB belongs to ops" --as boss
run_says 0 "saved fact #5 (global) in ops" "a global fact" \
	memory save ops "every staging DB needs a backup" --as boss --scope global
run_says 0 "saved fact #6 (agent) in ops" "another team's private fact" \
	memory save ops "boss: the staging DB is mine" --as boss --scope agent
run_says 0 "saved fact #7 (team) in dev" "the user saves a team fact" \
	memory save dev "the user: the staging DB is on a small box" --expires 7d

run --json memory search dev "staging DB" --as coder
expect_eq "$(ids "$OUT")" "[1, 2, 5, 7]" "CLI: coder sees dev's, global and its own"
run --json memory search dev "staging DB" --as tester
expect_eq "$(ids "$OUT")" "[1, 3, 5, 7]" "CLI: tester sees its own, not coder's"
run --json memory search dev "staging DB"
expect_eq "$(ids "$OUT")" "[1, 5, 7]" "CLI: the user sees no private fact"
run --json memory search ops "staging DB" --as boss
expect_eq "$(ids "$OUT")" "[4, 5, 6]" "CLI: ops sees ops's and the global one"
run --json memory list dev --as coder
expect_eq "$(json_get "$OUT" '[f["id"] for f in j["facts"]]')" "[7, 5, 2, 1]" "CLI: list, newest first"
run_says 1 'huddle: no member "boss" in team dev' "CLI: a reader outside the team" \
	memory search dev "staging" --as boss

# ranking, limit, tag, human output
run memory search dev "listens 5433" --as coder
expect_eq "$OUT" "#1 [team] the staging DB listens on 5433  #db #staging" "CLI: human line"
run --json memory search dev "staging DB load tests" --as coder --limit 2
expect_eq "$(json_get "$OUT" '[f["id"] for f in j["facts"]], j["facts"][0]["rank"] <= j["facts"][1]["rank"]')" \
	"([2, 1], True)" "CLI: best first, cut by --limit"
run --json memory search dev "staging" --as coder --tag db
expect_eq "$(ids "$OUT")" "[1]" "CLI: --tag filters"
run --json memory list dev --tag staging
expect_eq "$(json_get "$OUT" 'j["facts"][0]["tags"], j["facts"][0]["source"]')" \
	"(['db', 'staging'], {'agent': 'coder', 'task': None})" "CLI: tags and source"
run --json memory list dev
expect_eq "$(json_get "$OUT" 'j["facts"][0]["expires_at"] > j["facts"][0]["created_at"] + 6 * 86400000')" \
	"True" "CLI: --expires 7d"

# FTS syntax is plain words
run --json memory search dev '"staging" AND (NEAR(DB* listens, 2) OR -x:^y)' --as coder
expect_rc 0 "CLI: FTS syntax in a query is no error"
expect_eq "$(json_get "$OUT" '[f["id"] for f in j["facts"]][0]')" "1" "CLI: ...and its words still match"
run_says 1 "huddle: the query has no words to search for" "CLI: a query of punctuation" \
	memory search dev '"()*:^' --as coder

# secrets: refused, named, never echoed, nothing written
key="ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"
run memory save dev "the CI token is $key" --as coder
expect_rc 1 "CLI: a secret is refused"
expect_eq "$ERR" "huddle: the text looks like a GitHub token (ghp_...); memory never stores secrets: leave the secret out, or say where it is kept" "CLI: refusal names the pattern"
run --json memory save dev "key: -----BEGIN RSA PRIVATE KEY-----" --as coder
expect_eq "$(json_get "$ERR" 'j["code"], "PRIVATE KEY" in j["error"], "PEM" in j["error"]')" \
	"('refused', True, True)" "CLI --json: the refusal as JSON on stderr"
run --json memory list dev --limit 200
expect_eq "$(json_get "$OUT" 'len(j["facts"])')" "3" "CLI: nothing was written"

# usage errors (exit 2) and bad input (exit 1)
run memory save dev --as coder
expect_rc 2 "CLI: save without TEXT"
run memory save dev "x" --scope everyone
expect_rc 2 "CLI: an unknown scope"
expect_contains "$ERR" "--scope must be one of team, global, agent" "CLI: the scopes named"
run_says 1 "huddle: scope agent needs an acting agent: a private fact is an agent's own" \
	"CLI: a private fact needs --as" memory save dev "x" --scope agent
run_says 1 "huddle: invalid tag \"Not A Tag\": use 1-50 lowercase letters, digits, '-' or '_'" \
	"CLI: a bad tag" memory save dev "x" --tag "Not A Tag"
run memory save dev "x" --expires soon
expect_rc 1 "CLI: a bad expiry"
expect_contains "$ERR" "expires must be a duration like 7d" "CLI: the expiry's forms"

# forget
run_says 1 "huddle: no fact 3 in team dev" "CLI: coder cannot forget tester's fact" \
	memory forget dev 3 --as coder
run_says 1 "huddle: no fact 5 in team dev" "CLI: dev cannot forget ops's global fact" \
	memory forget dev 5 --as coder

# --- REST, on a real server
serve_bg
api() { # api METHOD PATH [BODY] [curl args...]: sets CODE and BODY
	local m=$1 p=$2 b=${3:-}
	shift 3 2>/dev/null || shift $#
	if [ -n "$b" ]; then
		CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -X "$m" -H 'Content-Type: application/json' -d "$b" "$@" "$url$p")
	else
		CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -X "$m" "$@" "$url$p")
	fi
	BODY=$(cat "$T_TMP/body")
}
sig_of() {
	"$HUDDLE" attach "$1" --format json --port "$port" | python3 -c '
import json, sys, urllib.parse as u
print(u.parse_qs(u.urlparse(json.load(sys.stdin)["url"]).query)["sig"][0])'
}
CODER=(-H "Huddle-Agent: dev/coder" -H "Huddle-Signature: $(sig_of coder)")
TESTER=(-H "Huddle-Agent: dev/tester" -H "Huddle-Signature: $(sig_of tester)")
BOSS=(-H "Huddle-Agent: ops/boss" -H "Huddle-Signature: $(sig_of boss)")

api GET "/api/teams/dev/memory/search?q=staging+DB" ""
expect_eq "$CODE $(ids "$BODY")" "200 [1, 5, 7]" "REST: the user sees no private fact"
api GET "/api/teams/dev/memory/search?q=staging+DB" "" "${CODER[@]}"
expect_eq "$CODE $(ids "$BODY")" "200 [1, 2, 5, 7]" "REST: coder, proven, sees its own"
api GET "/api/teams/dev/memory/search?q=staging+DB" "" "${TESTER[@]}"
expect_eq "$CODE $(ids "$BODY")" "200 [1, 3, 5, 7]" "REST: tester sees its own, not coder's"
api GET "/api/teams/ops/memory/search?q=staging+DB" "" "${BOSS[@]}"
expect_eq "$CODE $(ids "$BODY")" "200 [4, 5, 6]" "REST: boss in ops"
api GET "/api/teams/dev/memory/search?q=staging+DB" "" "${BOSS[@]}"
expect_eq "$CODE $BODY" '422 {"error":"no member \"boss\" in team dev"}' "REST: boss cannot read dev"
api GET "/api/teams/dev/memory?tag=db" ""
expect_eq "$CODE $(ids "$BODY")" "200 [1]" "REST: list with a tag"
api GET "/api/teams/dev/memory/search?q=%22%28%2A%3A%5E" ""
expect_eq "$CODE $BODY" '400 {"error":"the query has no words to search for"}' "REST: punctuation only"
api GET "/api/teams/dev/memory/search?q=DB%22+OR+%28" ""
expect_eq "$CODE" "200" "REST: FTS syntax is words"
api POST /api/teams/dev/memory '{"text": "coder: the REST box is blue", "scope": "agent", "tags": ["rest"]}' "${CODER[@]}"
expect_eq "$CODE $(json_get "$BODY" 'j["fact"]["id"], j["fact"]["agent"], j["fact"]["tags"]')" \
	"201 (8, 'coder', ['rest'])" "REST: coder saves a private fact"
api POST /api/teams/dev/memory '{"text": "as coder", "scope": "agent", "as": "coder"}'
expect_eq "$CODE" "403" "REST: naming an agent without its credential"
api POST /api/teams/dev/memory "{\"text\": \"Authorization: Bearer abc123def456ghi789jkl0\"}"
expect_eq "$CODE $BODY" '422 {"error":"the text looks like a bearer token (Bearer ...); memory never stores secrets: leave the secret out, or say where it is kept"}' \
	"REST: a bearer token is refused"
api POST /api/teams/dev/memory '{"text": "x", "tags": "db"}'
expect_eq "$CODE $BODY" '400 {"error":"\"tags\" must be an array of strings"}' "REST: tags must be a list"
api POST /api/teams/dev/memory '{"text": "x", "tags": [1]}'
expect_eq "$CODE $BODY" '400 {"error":"\"tags\" must be an array of strings"}' "REST: tags must be strings"
api GET "/api/teams/dev/memory/search?q=blue" "" "${TESTER[@]}"
expect_eq "$(ids "$BODY")" "[]" "REST: tester does not see coder's new fact"
api DELETE /api/teams/dev/memory/8 "" "${TESTER[@]}"
expect_eq "$CODE $BODY" '404 {"error":"no fact 8 in team dev"}' "REST: tester cannot forget it"
api DELETE /api/teams/dev/memory/8 "" "${CODER[@]}"
expect_eq "$CODE $BODY" '200 {"forgotten":8}' "REST: coder forgets it"

# --- MCP over HTTP: the bound identity decides team and agent
mcp_url() { "$HUDDLE" attach "$1" --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'; }
mcp() { # mcp URL TOOL ARGS-JSON: the tool's result as JSON (or its error text)
	curl -s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" "$1" |
		python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
print(("ERROR " if r.get("isError") else "") + r["content"][0]["text"])'
}
U_CODER=$(mcp_url coder)
U_TESTER=$(mcp_url tester)
U_BOSS=$(mcp_url boss)
OUT=$(mcp "$U_CODER" memory_search '{"query": "staging DB"}')
expect_eq "$(ids "$OUT")" "[1, 2, 5, 7]" "MCP: coder sees dev's, global and its own"
OUT=$(mcp "$U_TESTER" memory_search '{"query": "staging DB"}')
expect_eq "$(ids "$OUT")" "[1, 3, 5, 7]" "MCP: tester sees its own, not coder's"
OUT=$(mcp "$U_BOSS" memory_search '{"query": "staging DB", "limit": 10}')
expect_eq "$(ids "$OUT")" "[4, 5, 6]" "MCP: boss is bound to ops"
OUT=$(mcp "$U_TESTER" memory_save '{"text": "tester: MCP saves work", "scope": "agent", "tags": ["mcp"]}')
expect_eq "$(json_get "$OUT" 'j["fact"]["id"], j["fact"]["team"], j["fact"]["agent"]')" \
	"(9, 'dev', 'tester')" "MCP: save as the bound agent in its team"
OUT=$(mcp "$U_CODER" memory_search '{"query": "MCP saves"}')
expect_eq "$(ids "$OUT")" "[]" "MCP: coder does not see tester's private fact"
OUT=$(mcp "$U_CODER" memory_save '{"text": "key sk-ant-api03-Xy7Qm2pLk9Rt4Vn8Bc3Df6Gh"}')
expect_eq "$OUT" "ERROR the text looks like an Anthropic API key (sk-ant-...); memory never stores secrets: leave the secret out, or say where it is kept" \
	"MCP: a secret is refused, not echoed"
OUT=$(mcp "$U_CODER" memory_forget '{"id": 9}')
expect_eq "$OUT" "ERROR no fact 9 in team dev" "MCP: coder cannot forget tester's fact"
OUT=$(mcp "$U_BOSS" memory_forget '{"id": 1}')
expect_eq "$OUT" "ERROR no fact 1 in team ops" "MCP: ops cannot forget dev's fact"
OUT=$(mcp "$U_TESTER" memory_forget '{"id": 9}')
expect_eq "$(json_get "$OUT" 'j["forgotten"]')" "9" "MCP: tester forgets its own"

# An unbound (read-only) session names an agent in its arguments, which
# nothing proves: it reads as the user, never that agent's private facts.
OUT=$(mcp "http://127.0.0.1:$port/mcp" memory_search '{"query": "staging DB", "authorAgentId": "coder", "teamId": "dev"}')
expect_eq "$(ids "$OUT")" "[1, 5, 7]" "MCP unbound: naming coder reads as the user"
OUT=$(mcp "http://127.0.0.1:$port/mcp?roomTeamId=dev&postAuthorAgentId=coder" memory_search '{"query": "staging DB", "authorAgentId": "coder", "teamId": "dev"}')
expect_eq "$(ids "$OUT")" "[1, 5, 7]" "MCP: coder's URL without its sig reads as the user"

# --- MCP over stdio: the same tools, the same scoping
stdio() { # stdio TEAM AGENT TOOL ARGS-JSON
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4}}" |
		"$HUDDLE" mcp --team "$1" --agent "$2" | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("id") == 2:
        print(m["result"]["content"][0]["text"])'
}
OUT=$(stdio dev tester memory_search '{"query": "staging DB"}')
expect_eq "$(ids "$OUT")" "[1, 3, 5, 7]" "MCP stdio: tester's view"
OUT=$(stdio ops boss memory_search '{"query": "staging DB"}')
expect_eq "$(ids "$OUT")" "[4, 5, 6]" "MCP stdio: boss's view"

# --- a restart: the facts are still there, on every surface
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null
serve_bg
api GET "/api/teams/dev/memory/search?q=staging+DB" "" -H "Huddle-Agent: dev/coder" -H "Huddle-Signature: $(sig_of coder)"
expect_eq "$CODE $(ids "$BODY")" "200 [1, 2, 5, 7]" "REST after a restart"
run --json memory search dev "staging DB" --as tester
expect_eq "$(ids "$OUT")" "[1, 3, 5, 7]" "CLI after a restart"

# --- team removal counts facts, and a purge takes them
run team rm ops
expect_rc 1 "team rm refuses a team with facts"
expect_contains "$ERR" "3 facts" "the refusal counts the facts"
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null
run team rm ops --purge
expect_rc 0 "team rm --purge"
run --json memory search dev "staging DB" --as coder
expect_eq "$(ids "$OUT")" "[1, 2, 7]" "ops's global fact went with ops"

finish
