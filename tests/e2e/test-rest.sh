#!/usr/bin/env bash
# test-rest.sh -- `huddle serve` over HTTP: each REST route's success and
# error shapes, the /mcp transport rules, SSE from another process with
# Last-Event-ID resume, and hostile input that must get a clear answer
# while the server keeps serving everyone else.
. "$(dirname "$0")/lib.sh"
"$HUDDLE" up "$HUDDLE_SRC/examples/dev-team.json" >/dev/null
HUDDLE_LOG=info serve_bg
B=$url
expect_eq "$(cat "$T_TMP/serve.out")" "huddle is running at http://127.0.0.1:$port
store: $(store_says)" "startup lines: where, and which store"

# req METHOD PATH [BODY] [extra curl args...]: sets CODE, BODY, CTYPE
req() {
	local m=$1 p=$2 data=${3-}
	shift 3 2>/dev/null || shift $#
	if [ -n "$data" ]; then
		curl -s -o "$T_TMP/body" -D "$T_TMP/headers" -X "$m" "$B$p" \
			-H 'Content-Type: application/json' --data-binary "$data" "$@" >/dev/null
	else
		curl -s -o "$T_TMP/body" -D "$T_TMP/headers" -X "$m" "$B$p" "$@" >/dev/null
	fi
	CODE=$(sed -n '1s/HTTP\/1.1 \([0-9]*\).*/\1/p' "$T_TMP/headers")
	CTYPE=$(sed -n 's/^[Cc]ontent-[Tt]ype: \(.*\)\r$/\1/p' "$T_TMP/headers")
	BODY=$(cat "$T_TMP/body")
}
expect_http() { # CODE BODY DESCRIPTION
	expect_eq "$CODE" "$1" "$3 (status; body $BODY)"
	[ -z "$2" ] || expect_eq "$BODY" "$2" "$3 (body)"
}
# req_is CODE BODY DESCRIPTION METHOD PATH [BODY] [extra curl args...]:
# req, then expect_http (CODE, BODY and CTYPE stay set)
req_is() {
	local code=$1 body=$2 what=$3
	shift 3
	req "$@"
	expect_http "$code" "$body" "$what"
}
# sig_of AGENT: the sig of its attach URL, which is also its REST
# credential (Huddle-Signature)
sig_of() {
	"$HUDDLE" attach "$1" --format json --port "$port" | python3 -c '
import json, sys, urllib.parse as u
print(u.parse_qs(u.urlparse(json.load(sys.stdin)["url"]).query)["sig"][0])'
}
# as_agent TEAM AGENT: the curl arguments that prove AGENT, in AS
as_agent() { AS=(-H "Huddle-Agent: $1/$2" -H "Huddle-Signature: $(sig_of "$2")"); }
as_agent dev coder && CODER=("${AS[@]}")
as_agent dev tester && TESTER=("${AS[@]}")
as_agent dev manager && MANAGER=("${AS[@]}")
as_agent dev reviewer && REVIEWER=("${AS[@]}")

# --- teams and agents
req_is 200 "" "list teams" GET /api/teams
expect_eq "$CTYPE" "application/json" "JSON content type"
expect_eq "$(json_get "$BODY" '[t["id"] for t in j["teams"]]')" "['dev']" "teams listed"
req_is 201 "" "create team" POST /api/teams '{"id": "qa", "name": "QA"}'
expect_eq "$(json_get "$BODY" 'j["team"]["name"]')" "QA" "created team"
req_is 409 '{"error":"team \"qa\" already exists"}' "duplicate team" POST /api/teams '{"id": "qa"}'
req_is 400 "{\"error\":\"invalid team name \\\"Bad!\\\": use 1-50 lowercase letters, digits, '-' or '_'\"}" "bad team name" POST /api/teams '{"id": "Bad!"}'
req_is 400 '{"error":"\"id\" must be a string"}' "wrong type" POST /api/teams '{"id": 5}'
req_is 400 '{"error":"body must be a JSON object"}' "array body" POST /api/teams '[1, 2]'
req_is 400 '{"error":"body is not valid JSON: string or '"'"'}'"'"' expected near end of file (line 1, column 11)"}' "malformed JSON" POST /api/teams '{"id": "x",'
req_is 404 '{"error":"team \"ghost\" not found"}' "missing team" GET /api/teams/ghost
req_is 201 "" "add agent" POST /api/teams/qa/agents '{"id": "auditor", "role": "audit", "leader": true}'
req GET /api/teams/qa
expect_eq "$(json_get "$BODY" 'j["team"]["leader_agent_id"]')" "auditor" "leader set"
req_is 400 '{"error":"runtime \"gpt\" is not available in this build: use scripted, exec, claude-code, codex, native, hermes or openclaw"}' "unknown runtime refused" POST /api/teams/qa/agents '{"id": "x", "runtime": "gpt"}'
req GET /api/agents/auditor
expect_eq "$(json_get "$BODY" 'j["agent"]["team_id"]')" "qa" "get agent"

# --- the room: the compatibility shape of GET /api/team-chat
req_is 400 '{"error":"teamId or roomId is required"}' "team-chat needs a team" GET "/api/team-chat"
req_is 200 '{"roomId":"team:dev","posts":[],"nextSeq":0}' "empty room" GET "/api/team-chat?teamId=dev"
req_is 201 "" "user post" POST /api/teams/dev/posts '{"text": "hello from the user"}'
"$HUDDLE" chat post dev "from the cli" --as coder >/dev/null
req GET "/api/team-chat?teamId=dev&sinceSeq=0&limit=10"
expect_eq "$(json_get "$BODY" 'sorted(j.keys())')" "['nextSeq', 'posts', 'roomId']" "team-chat keys"
expect_eq "$(json_get "$BODY" 'sorted(j["posts"][1].keys())')" "['authorAgentId', 'body', 'createdAt', 'id', 'kind', 'roomId', 'seq', 'teamId']" "post keys"
expect_eq "$(json_get "$BODY" '[(p["seq"], p["authorAgentId"], p["kind"]) for p in j["posts"]]')" "[(1, 'user', 'user'), (2, 'coder', 'peer')]" "posts in order"
expect_eq "$(json_get "$BODY" 'j["nextSeq"]')" 2 "nextSeq is the last seq"
req GET "/api/team-chat?roomId=team:dev&sinceSeq=2"
expect_eq "$(json_get "$BODY" '(j["posts"], j["nextSeq"])')" "([], 2)" "nextSeq stays at sinceSeq when nothing is new"
req_is 400 '{"error":"limit must be between 1 and 500"}' "limit bound" GET "/api/team-chat?teamId=dev&limit=501"
req_is 400 '{"error":"sinceSeq must be an integer, not \"abc\""}' "bad sinceSeq" GET "/api/team-chat?teamId=dev&sinceSeq=abc"
req_is 400 "" "empty post" POST /api/teams/dev/posts '{"text": ""}'
req_is 400 "" "invalid UTF-8 in JSON is refused" POST /api/teams/dev/posts "$(printf '{"text": "bad \xff utf8"}')"

# --- the board
req_is 201 "" "create task" POST /api/teams/dev/tasks '{"subject": "Write docs", "priority": 2}'
tid=$(json_get "$BODY" 'j["task"]["id"]')
req POST /api/teams/dev/tasks '{"subject": "Ship", "depends_on": ['"$tid"']}'
tid2=$(json_get "$BODY" 'j["task"]["id"]')
expect_eq "$(json_get "$BODY" 'j["task"]["blocked_by"]')" "[$tid]" "blocked_by"
req_is 400 '{"error":"\"subject\" must be a string"}' "subject type" POST /api/teams/dev/tasks '{"subject": 7}'
req_is 404 '{"error":"unknown dependency: task 999"}' "unknown dependency" POST /api/teams/dev/tasks '{"subject": "x", "depends_on": [999]}'
req_is 422 "{\"error\":\"task $tid2 is blocked by $tid\"}" "blocked claim" POST "/api/tasks/$tid2/claim" '{"agent": "coder"}' "${CODER[@]}"
req_is 200 "" "claim" POST "/api/tasks/$tid/claim" '{"agent": "coder"}' "${CODER[@]}"
req_is 409 "{\"error\":\"task $tid is already claimed by coder\"}" "lost claim" POST "/api/tasks/$tid/claim" '{"agent": "tester"}' "${TESTER[@]}"
req_is 422 "{\"error\":\"task $tid is owned by coder, not tester\"}" "wrong owner" POST "/api/tasks/$tid/start" '{"as": "tester"}' "${TESTER[@]}"
req_is 200 "" "complete" POST "/api/tasks/$tid/complete" '{"as": "coder", "result": "done"}' "${CODER[@]}"
expect_eq "$(json_get "$BODY" 'j["task"]["unblocked"]')" "[$tid2]" "complete names what it made ready"
req GET "/api/tasks/$tid2"
expect_eq "$(json_get "$BODY" 'j["task"]["blocked_by"]')" "[]" "unblocked"
req_is 400 '{"error":"pass \"agent\" or \"auto\", not both"}' "assign: agent and auto" POST "/api/tasks/$tid2/assign" '{"agent": "coder", "auto": true}'
req_is 400 '{"error":"\"agent\" or \"auto\": true is required"}' "assign: neither agent nor auto" POST "/api/tasks/$tid2/assign" '{"as": "manager"}' "${MANAGER[@]}"
req_is 400 '{"error":"\"auto\" must be a boolean"}' "assign: auto is a boolean" POST "/api/tasks/$tid2/assign" '{"auto": "yes"}'
req_is 200 "" "assign auto" POST "/api/tasks/$tid2/assign" '{"auto": true, "as": "manager"}' "${MANAGER[@]}"
expect_eq "$(json_get "$BODY" '(j["task"]["owner"], j["assignee"], j["picked_because"])')" \
	"('coder', 'coder', 'idle, 0 open tasks, lowest id of 3 tied')" "assign auto picks and says why"

# delegate: one act; a subtask by parent_id
req_is 201 "" "delegate" POST /api/teams/dev/delegate '{"to": "reviewer", "subject": "Review the lexer", "description": "focus on errors", "as": "manager"}' "${MANAGER[@]}"
did=$(json_get "$BODY" 'j["task"]["id"]')
expect_eq "$(json_get "$BODY" '(j["task"]["status"], j["task"]["owner"])')" "('claimed', 'reviewer')" "delegate: claimed for the assignee"
expect_eq "$("$HUDDLE" --json inbox reviewer | python3 -c 'import json,sys; print([m["content"] for m in json.load(sys.stdin)][-1])')" \
	"You were delegated task #$did \"Review the lexer\" by manager: focus on errors" "delegate: the assignee's message"
req_is 422 '{"error":"only the team leader or a user may delegate, not coder"}' "delegate by a member" POST /api/teams/dev/delegate '{"to": "reviewer", "subject": "Nope", "as": "coder"}' "${CODER[@]}"
req_is 400 '{"error":"\"to\" is required"}' "delegate without to" POST /api/teams/dev/delegate '{"subject": "Nope"}'
req_is 201 "" "create a subtask" POST /api/teams/dev/tasks "{\"subject\": \"Lexer errors\", \"parent_id\": $did}"
expect_eq "$(json_get "$BODY" 'j["task"]["parent_id"]')" "$did" "subtask parent_id"
req_is 400 '{"error":"\"parent_id\" must be an integer"}' "parent_id is an integer" POST /api/teams/dev/tasks '{"subject": "Bad", "parent_id": "x"}'
req_is 422 "" "a parent waits for its subtasks" POST "/api/tasks/$did/complete" '{"as": "reviewer"}' "${REVIEWER[@]}"
expect_contains "$BODY" "cannot complete: its subtask #" "the refusal names the subtask"

req_is 200 "" "fail with a reason" POST "/api/tasks/$tid2/fail" '{"as": "coder", "reason": "disk full"}' "${CODER[@]}"
expect_eq "$(json_get "$BODY" '(j["task"]["status"], j["task"]["reason"])')" "('failed', 'disk full')" "the reason is kept"
req_is 400 '{"error":"\"reason\" must be a string"}' "reason is a string" POST "/api/tasks/$tid2/retry" '{"reason": 5}'
req GET "/api/teams/dev/tasks?status=completed"
expect_eq "$(json_get "$BODY" '[t["subject"] for t in j["tasks"]]')" "['Write docs']" "filter by status"
req_is 400 '{"error":"task id must be a positive integer, not \"abc\""}' "bad task id" POST "/api/tasks/abc/claim" '{"agent": "coder"}'
req_is 404 "" "unknown task action" POST "/api/tasks/$tid/explode" '{}'
req_is 404 '{"error":"task 424242 not found"}' "missing task" GET "/api/tasks/424242"

# --- mailboxes, state
req_is 201 "" "send" POST /api/teams/dev/messages '{"from": "manager", "to": "coder", "content": "please review"}' "${MANAGER[@]}"
req_is 422 '{"error":"no member \"wrker-1\" in team dev"}' "phantom inbox" POST /api/teams/dev/messages '{"from": "manager", "to": "wrker-1", "content": "x"}' "${MANAGER[@]}"
req GET "/api/agents/coder/inbox?peek=1"
expect_eq "$(json_get "$BODY" '[m["content"] for m in j["messages"]]')" "['please review']" "peek"
req GET "/api/agents/coder/inbox"
req GET "/api/agents/coder/inbox"
expect_eq "$(json_get "$BODY" 'j["messages"]')" "[]" "read once"
req GET /api/teams/dev/state
expect_contains "$(json_get "$BODY" 'j["text"]')" "=== TEAM STATE ===" "team state text"
req_is 201 "" "a shutdown_request one to one" POST /api/teams/dev/messages '{"from": "manager", "to": "tester", "type": "shutdown_request", "request_id": "stop-t", "content": "stop"}' "${MANAGER[@]}"
req_is 201 "" "an answer without \"to\"" POST /api/teams/dev/messages '{"from": "tester", "type": "shutdown_response", "request_id": "stop-t", "approve": false, "reason": "busy", "content": "not now"}' "${TESTER[@]}"
expect_eq "$(json_get "$BODY" 'j["message"]["to_agent"]')" "manager" "the answer went to whoever asked"
req_is 404 '{"error":"no shutdown request \"stop-x\" in team dev"}' "an answer to no request" POST /api/teams/dev/messages '{"from": "tester", "type": "shutdown_response", "request_id": "stop-x", "approve": true, "content": "ok"}' "${TESTER[@]}"
req_is 201 "" "spawn" POST /api/teams/dev/spawn '{"name": "scout", "as": "coder", "runtime": "codex", "runtime_config": {"workdir": "/src"}, "model": "gpt-5"}' "${CODER[@]}"
expect_eq "$(json_get "$BODY" 'j["agent"]["runtime_config"]["model"]+" "+str(j["agent"]["spawn_depth"])')" \
	"gpt-5 1" "spawn: model and depth"
req_is 400 '{"error":"unknown field \"modle\": use name, as, task, role, runtime, runtime_config, model or replaces"}' \
	"spawn: a misspelt field is refused" POST /api/teams/dev/spawn '{"name": "scout2", "modle": "gpt-5"}'
req_is 404 "" "spawn: nothing written" GET /api/agents/scout2

# --- who a write acts as: the user, unless the request proves an agent
# (Huddle-Agent + Huddle-Signature, the agent's attach sig)
imp='{"error":"acting as \"manager\" needs its credential: send Huddle-Agent: TEAM/AGENT and Huddle-Signature: <its attach sig>, or name no agent to act as the user"}'
req_is 201 "" "the user creates a task without proof" POST /api/teams/dev/tasks '{"subject": "Identity checks"}'
tid3=$(json_get "$BODY" 'j["task"]["id"]')
expect_eq "$(json_get "$BODY" 'j["task"]["created_by"]')" "user" "a task made without proof is the user's"
req_is 403 "$imp" "impersonation refused: room post" POST /api/teams/dev/posts '{"text": "forged", "as": "manager"}'
req_is 403 "$imp" "impersonation refused: mail" POST /api/teams/dev/messages '{"from": "manager", "to": "coder", "content": "forged"}'
req_is 403 "$imp" "impersonation refused: broadcast" POST /api/teams/dev/messages '{"from": "manager", "type": "broadcast", "content": "forged"}'
req_is 403 "$imp" "impersonation refused: shutdown response" POST /api/teams/dev/messages '{"from": "manager", "type": "shutdown_response", "request_id": "stop-t", "approve": true, "content": "forged"}'
req_is 403 "$imp" "impersonation refused: task create" POST /api/teams/dev/tasks '{"subject": "forged", "as": "manager"}'
req_is 403 "$imp" "impersonation refused: delegate" POST /api/teams/dev/delegate '{"to": "coder", "subject": "forged", "as": "manager"}'
req_is 403 "$imp" "impersonation refused: spawn" POST /api/teams/dev/spawn '{"name": "forged", "as": "manager"}'
req_is 403 "$imp" "impersonation refused: auto-claim" POST /api/teams/dev/auto-claim '{"agent": "manager"}'
req_is 403 "$imp" "impersonation refused: claim by agent" POST "/api/tasks/$tid3/claim" '{"agent": "manager"}'
for act in claim start complete fail release cancel retry; do
	req POST "/api/tasks/$tid3/$act" '{"as": "manager", "reason": "r"}'
	expect_http 403 "$imp" "impersonation refused: $act"
done
req_is 403 "$imp" "impersonation refused: assign" POST "/api/tasks/$tid3/assign" '{"agent": "coder", "as": "manager"}'
req_is 403 "$imp" "impersonation refused: link" POST "/api/tasks/$tid3/link" "{\"depends_on\": $tid, \"as\": \"manager\"}"
req_is 403 "$imp" "impersonation refused: comment" POST "/api/tasks/$tid3/comment" '{"body": "forged", "as": "manager"}'
req GET "/api/tasks/$tid3"
expect_eq "$(json_get "$BODY" '(j["task"]["status"], j["task"]["owner"], j["task"]["blocked_by"])')" "('pending', None, [])" "refused writes changed no task"
expect_eq "$("$HUDDLE" --json inbox coder --peek | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "refused writes sent no mail"
expect_eq "$("$HUDDLE" --json chat read dev | json_get "$(cat)" '[p["body"] for p in j["posts"] if p["body"] == "forged"]')" "[]" "refused writes posted nothing"
req_is 404 "" "refused writes spawned nobody" GET /api/agents/forged

# naming another agent than the proven one; a forged or partial proof
req_is 403 '{"error":"the credential is dev/coder'"'"'s: it cannot act as \"manager\""}' "coder's credential cannot post as manager" POST /api/teams/dev/posts '{"text": "forged", "as": "manager"}' "${CODER[@]}"
req_is 403 '{"error":"the credential is dev/coder'"'"'s: it cannot act as \"manager\""}' "coder's credential cannot mail as manager" POST /api/teams/dev/messages '{"from": "manager", "to": "tester", "content": "forged"}' "${CODER[@]}"
req POST "/api/tasks/$tid3/claim" '{"agent": "manager"}' "${CODER[@]}"
expect_eq "$CODE" 403 "coder's credential cannot claim for manager"
req_is 403 '{"error":"Huddle-Signature is not the signature of dev/manager"}' "another agent's sig is refused" POST /api/teams/dev/posts '{"text": "forged"}' -H "Huddle-Agent: dev/manager" -H "Huddle-Signature: $(sig_of coder)"
req_is 403 '{"error":"Huddle-Signature is not the signature of dev/manager"}' "a forged sig is refused, even naming nobody" POST /api/teams/dev/posts '{"text": "forged"}' -H "Huddle-Agent: dev/manager" -H "Huddle-Signature: $(head -c 64 /dev/zero | tr '\0' 0)"
req_is 403 '{"error":"Huddle-Agent and Huddle-Signature go together: send both, or neither to act as the user"}' "half a credential is refused" POST /api/teams/dev/posts '{"text": "forged"}' -H "Huddle-Agent: dev/manager"
req_is 403 '{"error":"Huddle-Agent must be TEAM/AGENT"}' "Huddle-Agent without a team" POST /api/teams/dev/posts '{"text": "forged"}' -H "Huddle-Agent: manager" -H "Huddle-Signature: $(sig_of manager)"
expect_eq "$("$HUDDLE" --json chat read dev | json_get "$(cat)" '[p["body"] for p in j["posts"] if p["body"] == "forged"]')" "[]" "refused proofs posted nothing"

# a valid credential: acts as its agent, named or not; the user still acts
req_is 201 "" "a proven agent posts" POST /api/teams/dev/posts '{"text": "signed post"}' "${MANAGER[@]}"
expect_eq "$(json_get "$BODY" '(j["post"]["authorAgentId"], j["post"]["kind"])')" "('manager', 'peer')" "the post is the proven agent's"
req_is 201 "" "a proven agent may name itself" POST /api/teams/dev/posts '{"text": "signed post 2", "as": "manager"}' "${MANAGER[@]}"
req_is 201 "" "proven mail needs no from" POST /api/teams/dev/messages '{"to": "coder", "content": "signed mail"}' "${MANAGER[@]}"
expect_eq "$(json_get "$BODY" 'j["message"]["from_agent"]')" "manager" "the mail is the proven agent's"
req_is 200 "" "a proven agent claims" POST "/api/tasks/$tid3/claim" '{}' "${CODER[@]}"
expect_eq "$(json_get "$BODY" 'j["task"]["owner"]')" "coder" "the claimer is the proven agent"
req_is 400 '{"error":"\"agent\" is required: an agent claims (the user assigns)"}' "the user does not claim" POST "/api/tasks/$tid3/claim" '{}'
req_is 200 "" "the user releases without proof" POST "/api/tasks/$tid3/release" '{}'
req_is 200 "" "the user assigns without proof" POST "/api/tasks/$tid3/assign" '{"agent": "tester"}'
expect_eq "$(json_get "$BODY" 'j["task"]["owner"]')" "tester" "assigned by the user"
req_is 201 "" "the user posts without proof" POST /api/teams/dev/posts '{"text": "plain user post"}'
expect_eq "$(json_get "$BODY" '(j["post"]["authorAgentId"], j["post"]["kind"])')" "('user', 'user')" "the post is the user's"
req_is 201 "" "naming user needs no proof" POST /api/teams/dev/tasks '{"subject": "by name", "as": "user"}'
# an agent removed and added again elsewhere keeps no old credential
req POST /api/teams/dev/agents '{"id": "temp"}'
as_agent dev temp && TEMP=("${AS[@]}")
"$HUDDLE" agent rm temp >/dev/null
req POST /api/teams/qa/agents '{"id": "temp"}'
req_is 403 '{"error":"the credential is not valid: agent temp is no longer in team dev"}' "a stale credential is refused" POST /api/teams/qa/posts '{"text": "stale"}' "${TEMP[@]}"

# --- /mcp transport rules
req_is 200 '{"jsonrpc":"2.0","id":1,"result":{}}' "mcp ping" POST /mcp '{"jsonrpc":"2.0","id":1,"method":"ping"}'
req_is 202 "" "notification" POST /mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}'
expect_eq "$BODY" "" "notification has an empty body"
req_is 200 '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}' "mcp parse error" POST /mcp '{"jsonrpc":"2.0","id":1,'
# GET and DELETE /mcp are the listening agent's (test-mcp-listen.sh):
# unbound, GET is refused, DELETE names no session
req GET /mcp
expect_eq "$CODE" 403 "GET /mcp on a read-only URL"
expect_contains "$BODY" "read-only" "the refused GET /mcp says why"
req DELETE /mcp
expect_eq "$CODE" 400 "DELETE /mcp without a session"
curl -s -o /dev/null -w '%{http_code}' -X POST "$B/mcp" -H 'Content-Type: text/plain' -d '{}' >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 415 "wrong content type"
curl -s -o /dev/null -w '%{http_code}' -X POST "$B/mcp" -H 'Content-Type: application/json' -H 'Accept: text/html' -d '{}' >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 406 "wrong Accept"
curl -s -o /dev/null -w '%{http_code}' -X POST "$B/mcp" -H 'Content-Type: application/json' -H 'Origin: http://evil.example' -d '{}' >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 403 "foreign Origin"
curl -s -o /dev/null -w '%{http_code}' -X POST "$B/mcp" -H 'Content-Type: application/json' -H 'Host: evil.example' -d '{}' >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 403 "foreign Host"
curl -s -o /dev/null -w '%{http_code}' -X POST "$B/mcp" -H 'Content-Type: application/json' -H "Origin: http://localhost:$port" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 200 "own Origin"

# --- hostile input
head -c $((3 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$T_TMP/big"
curl -s -o "$T_TMP/body" -w '%{http_code}' -X POST "$B/api/teams" -H 'Content-Type: application/json' --data-binary @"$T_TMP/big" >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 413 "3 MiB body"
expect_eq "$(cat "$T_TMP/body")" '{"error":"request body over the limit of 2097152 bytes"}' "413 text"
# chunked, so the size is only known while reading
curl -s -o /dev/null -w '%{http_code}' -X POST "$B/api/teams" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary @"$T_TMP/big" >"$T_TMP/c"
expect_eq "$(cat "$T_TMP/c")" 413 "3 MiB chunked body"
req_is 404 '{"error":"no such route"}' "unknown route" GET /api/nothing-here
req_is 404 '{"error":"no such route"}' "../ in a path parameter matches no route" GET "/api/teams/%2e%2e%2fetc"
req GET "/api/teams/dev%00x"
expect_eq "$CODE" 400 "NUL in a path parameter"
req GET "/api/team-chat?teamId=dev%00x"
expect_eq "$CODE" 400 "NUL in a query value"
req GET "/api/team-chat?teamId=$(head -c 5000 /dev/zero | tr '\0' a)"
expect_eq "$CODE" 400 "overlong query value"
req GET "/api/events?team=..%2F..%2Fx"
expect_eq "$CODE" 400 "../ in a query value"
req_is 400 '{"error":"the path is not valid UTF-8 once percent-decoded: %XX escapes must spell UTF-8 text"}' "a path that is not UTF-8 once decoded" GET "/api/teams/%ff%fe"
req_is 400 "{\"error\":\"invalid team name \\\"??\\\": use 1-50 lowercase letters, digits, '-' or '_'\"}" "a query value that is not UTF-8 gets a JSON error" GET "/api/team-chat?teamId=%ff%fe"
curl -s -o /dev/null -w '%{http_code}' "$B/api/teams" -H "X-Long: $(head -c 20000 /dev/zero | tr '\0' a)" >"$T_TMP/c"
case "$(cat "$T_TMP/c")" in 200 | 413 | 431) pass ;; *) fail "overlong header: $(cat "$T_TMP/c")" ;; esac

# A slow client that never finishes its body does not stop the others.
python3 - "$port" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /api/teams HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"id\":")
time.sleep(4)
PY
slow=$!
sleep 0.3
for i in 1 2 3 4 5; do
	req GET /api/teams
	expect_eq "$CODE" 200 "served while a slow client stalls ($i)"
done
kill "$slow" 2>/dev/null

# --- SSE: a post made by the CLI in another process arrives; resume from
# Last-Event-ID gives exactly the events after it.
curl -sN -H 'Accept: text/event-stream' "$B/api/events?team=dev" >"$T_TMP/sse1" &
c1=$!
sleep 0.3
"$HUDDLE" chat post dev "live from another process" --as reviewer >/dev/null
for _ in $(seq 100); do grep -q '"author":"reviewer"' "$T_TMP/sse1" && break; sleep 0.02; done
kill "$c1"
expect_contains "$(cat "$T_TMP/sse1")" "event: team_chat_post" "SSE delivers the CLI post"
last=$(grep '^id: ' "$T_TMP/sse1" | tail -1 | cut -d' ' -f2)
"$HUDDLE" chat post dev "while away 1" --as tester >/dev/null
"$HUDDLE" chat post dev "while away 2" --as tester >/dev/null
timeout 2 curl -sN -H 'Accept: text/event-stream' -H "Last-Event-ID: $last" "$B/api/events?team=dev" >"$T_TMP/sse2"
ids=$(grep '^id: ' "$T_TMP/sse2" | cut -d' ' -f2 | tr '\n' ' ')
want=$("$HUDDLE" events --team dev --after "$last" --json | python3 -c 'import json,sys; print(" ".join(str(e["seq"]) for e in json.load(sys.stdin)) + " ")')
expect_eq "$ids" "$want" "resume after Last-Event-ID: no loss, no duplicate"
expect_eq "$(grep -c 'while away' "$T_TMP/sse2" || true)" 0 "events carry no bodies"
expect_eq "$(grep -c '^event: team_chat_post' "$T_TMP/sse2")" 2 "both posts made while away"

# Last-Event-ID beyond the head: answered from the head, saying so
curl -sN -H 'Accept: text/event-stream' -H 'Last-Event-ID: 999999999' "$B/api/events?team=dev" >"$T_TMP/sse4" &
c4=$!
for _ in $(seq 100); do grep -q 'beyond the head' "$T_TMP/sse4" && break; sleep 0.02; done
"$HUDDLE" chat post dev "after a future id" --as tester >/dev/null
for _ in $(seq 100); do grep -q '^event: team_chat_post' "$T_TMP/sse4" && break; sleep 0.02; done
kill "$c4"
note=$(grep '^: last-event-id' "$T_TMP/sse4" || true)
head_seq=$(printf '%s' "$note" | sed -n 's/^: last-event-id 999999999 is beyond the head \([0-9]*\); resuming from the head$/\1/p')
expect_eq "$([ -n "$head_seq" ] && echo ok)" ok "a future Last-Event-ID gets a comment naming the head ($note)"
new_id=$(grep '^id: ' "$T_TMP/sse4" | tail -1 | cut -d' ' -f2)
expect_eq "$([ -n "$new_id" ] && [ "$new_id" -gt "${head_seq:-0}" ] && echo ok)" ok "and the stream goes on from the head (id $new_id)"
req_is 400 '{"error":"Last-Event-ID must be an event id (0 or more), not \"-3\""}' "a negative Last-Event-ID" GET "/api/events?stream=1" "" -H 'Last-Event-ID: -3'

# --- graceful shutdown: an open stream gets a final event, exit 0
curl -sN -H 'Accept: text/event-stream' "$B/api/events" >"$T_TMP/sse3" &
c3=$!
sleep 0.3
kill -TERM "$serve_pid"
wait "$serve_pid"
expect_eq "$?" 0 "serve exits 0"
wait "$c3" 2>/dev/null
expect_contains "$(cat "$T_TMP/sse3")" "event: shutdown" "followers get a final event"
expect_contains "$(cat "$T_TMP/serve.err")" '"GET /api/teams" 200' "access log line"
finish
