#!/usr/bin/env bash
# test-native.sh -- the native runtime (huddle's own agent loop) against
# tests/e2e/fake-model.mjs on 127.0.0.1: an OpenAI-compatible Chat
# Completions endpoint and the Anthropic Messages API, both streamed, the
# script each fake turn follows in the prompt (fake-model.mjs says how).
#   - huddle ask: a native leader (OpenAI) claims a task and posts to the
#     room through huddle's tools, run in process as itself;
#   - huddle exchange: two native agents (one per provider), each turn two
#     resuming the agent's own transcript from its home;
#   - a tool call with arguments that are not JSON is answered as a tool
#     error and the loop goes on; an agent cannot post as another; its
#     mail rides on a tool's result, once;
#   - max_turns stops a model that never stops calling tools;
#   - 429 then success (Retry-After honoured); 401 a clear error; a stream
#     cut mid-way a clear error; a bad runtime_config refused by key; an
#     unknown tool in runtime_config.tools named before any model call;
#   - huddle doctor says what a native agent needs, never a key's value;
#   - cost events carry the fake's usage at runtime_config.prices.
. "$(dirname "$0")/lib.sh"

fake_model_start
url=http://127.0.0.1:$FAKE_MODEL_PORT
export FAKE_NATIVE_KEY=sk-native-fake
openai_cfg() { # openai_cfg [EXTRA_JSON_MEMBERS]
	printf '{"provider":"openai","model":"fake-model","base_url":"%s/v1","api_key_env":"FAKE_NATIVE_KEY","prices":{"input":1,"output":10},"timeout_s":60%s}' \
		"$url" "${1:+,$1}"
}
anthropic_cfg() {
	printf '{"provider":"anthropic","model":"claude-fake","base_url":"%s","api_key_env":"FAKE_NATIVE_KEY","timeout_s":60%s}' \
		"$url" "${1:+,$1}"
}
script() { printf 'FAKE_SCRIPT:%s' "$1"; }
# the requests the fake got on PATH, as JSON lines
requests() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r["path"]==sys.argv[2]: print(json.dumps(r))' "$FAKE_MODEL_LOG" "$1" 2>/dev/null
}

run team create dev --name "Native"
expect_rc 0 "create the team"
lead_tools='"tools":["team_chat_post","team_chat_subscribe","task_list","task_get","task_claim","task_complete","task_assign","send_message","inbox_read"]'
run agent add dev lead --leader --runtime native --config "$(openai_cfg "$lead_tools")"
expect_rc 0 "add a native leader on an OpenAI-compatible endpoint"
run agent add dev coder --runtime native --config "$(anthropic_cfg)"
expect_rc 0 "add a native member on the Anthropic API"

# ---- config refusals name the key -------------------------------------------
run_says 1 'huddle: runtime_config.provider must be "anthropic" or "openai" (any OpenAI-compatible endpoint)' \
	"an unknown provider" agent add dev x --runtime native --config '{"provider":"gemini","model":"m"}'
run_says 1 'huddle: runtime_config: unknown key "api_key" for runtime native' \
	"a key in the config itself" agent add dev x --runtime native --config '{"provider":"openai","model":"m","api_key":"sk"}'
run_says 1 'huddle: runtime_config.api_key_env must be the name of an environment variable (letters, digits, _), not a key' \
	"api_key_env holding a key" agent add dev x --runtime native --config '{"provider":"openai","model":"m","api_key_env":"sk-123"}'
run_says 1 'huddle: runtime_config.max_turns must be an integer from 1 to 1000' \
	"max_turns 0" agent add dev x --runtime native --config '{"provider":"openai","model":"m","max_turns":0}'

# ---- doctor -------------------------------------------------------------------
run doctor dev --json
expect_rc 0 "doctor: both native agents could run"
expect_eq "$(json_get "$OUT" '[(a["runtime"], a["env"]["present"], a["endpoint"]["provider"]) for a in j["agents"]]')" \
	"[('native', ['FAKE_NATIVE_KEY'], 'openai'), ('native', ['FAKE_NATIVE_KEY'], 'anthropic')]" \
	"doctor: the key variable by name and the endpoint"
case "$OUT" in *sk-native-fake*) fail "doctor printed the key: $OUT" ;; *) pass ;; esac
run doctor dev
expect_contains "$OUT" "ok   lead (team dev): native
      endpoint openai $url/v1 (model fake-model)
      needs   FAKE_NATIVE_KEY (runtime_config.api_key_env); set: FAKE_NATIVE_KEY" \
	"doctor, as text: the endpoint where a CLI runtime shows its binary"
# a keyless local server (no api_key_env): nothing to set, no problem
run agent add dev local --runtime native --config '{"provider":"openai","model":"qwen3:8b","base_url":"http://127.0.0.1:11434/v1"}'
expect_rc 0 "add a native agent on a keyless server"
run doctor dev --json
expect_eq "$(json_get "$OUT" '[(a["ok"], a["env"]) for a in j["agents"] if a["agent"]=="local"]')" \
	"[(True, {'needs': 'no key: runtime_config.api_key_env is not set, so none is sent (a keyless server)', 'present': [], 'keyless': True})]" \
	"doctor: a keyless native agent needs no key"
run doctor dev
expect_contains "$OUT" "ok   local (team dev): native
      endpoint openai http://127.0.0.1:11434/v1 (model qwen3:8b)
      needs   no key: runtime_config.api_key_env is not set, so none is sent (a keyless server)
" "doctor, as text: keyless"
run agent rm local
expect_rc 0 "remove the keyless agent"

# ---- ask: the leader claims a task and posts through its tools ---------------
run task create dev "Write the parser"
expect_rc 0 "task 1"
run ask dev "@lead take task 1.
$(script '{"turns":[{"tool":{"name":"task_claim","input":{"task_id":1}}},{"tool":{"name":"team_chat_post","input":{"text":"on task 1 now"}}},{"text":"claimed and said so: {{tool_result}}"}]}')"
expect_rc 0 "ask the leader"
expect_contains "$OUT" "@lead: claimed and said so: " "the leader's reply"
expect_contains "$OUT" '"authorAgentId":"lead"' "the post's tool result reached the model"
run task show 1 --json
expect_eq "$(json_get "$OUT" 'j["owner"] + " " + j["status"]')" "lead claimed" "the leader claimed task 1 in process"
run chat read dev --json --limit 100
expect_eq "$(json_get "$OUT" '[p["authorAgentId"] for p in j["posts"] if p["body"]=="on task 1 now"]')" "['lead']" \
	"its post is in the room under its name"
expect_eq "$(fake_model_requests /v1/chat/completions)" "3" "three model calls (two tools, then text)"
# the request: streamed, the tools runtime_config.tools picks offered by their own names, the key sent as a bearer
expect_eq "$(requests /v1/chat/completions | head -1 | python3 -c 'import json,sys
r=json.loads(sys.stdin.readline()); b=r["body"]
print(b["stream"], sorted(t["function"]["name"] for t in b["tools"]), r["headers"]["authorization"])')" \
	"True ['inbox_read', 'send_message', 'task_assign', 'task_claim', 'task_complete', 'task_get', 'task_list', 'team_chat_post', 'team_chat_subscribe'] Bearer sk-native-fake" \
	"the request offers the configured tools"
run events --team dev --kind tool_call --json
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["phase"], e["data"]["name"]) for e in j]')" \
	"[('lead', 'call', 'task_claim'), ('lead', 'result', 'task_claim'), ('lead', 'call', 'team_chat_post'), ('lead', 'result', 'team_chat_post')]" \
	"tool_call events"
# cost: three calls of 100 in / 20 out at $1 / $10 per million = 3 x 300 micro-cents... x100
run events --team dev --kind cost --json
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["microcents"], e["data"]["input_tokens"]) for e in j]')" \
	"[('lead', 90000, 300)]" "the turn's cost: the fake's usage at runtime_config.prices"

# ---- exchange: each agent's second turn resumes its own transcript -----------
# the board obliges each turn: the leader assigns (task_assign, one of its
# configured tools), the member completes (a default tool)
run task create dev "Review"
run task create dev "Ship"
turns=$(python3 -c 'import json; print(json.dumps({"by_agent":{
 "lead":{"turns":[{"tool":{"name":"task_assign","input":{"task_id":2,"assignee":"coder"}}},
   {"text":"lead 1 saw ask {{saw:claimed and said so}}"},
   {"tool":{"name":"task_assign","input":{"task_id":3,"assignee":"coder"}}},
   {"text":"lead 2 saw {{saw:lead 1 saw}}"}]},
 "coder":{"turns":[{"tool":{"name":"task_complete","input":{"task_id":2,"result":"reviewed"}}},
   {"text":"coder 1 done"},
   {"tool":{"name":"task_complete","input":{"task_id":3,"result":"shipped"}}},
   {"text":"coder 2 saw {{saw:coder 1 done}}"}]}}}))')
run exchange dev --stimulus "Run the sprint.
$(script "$turns")" --max-turns 4 --json
expect_rc 0 "the exchange"
expect_eq "$(json_get "$OUT" 'j["result"]["speakers"]')" "['lead', 'coder', 'lead', 'coder']" "four turns, alternating"
run chat read dev --json --limit 500
posts=$(json_get "$OUT" '"|".join(p["body"] for p in j["posts"] if p["kind"]=="peer" and " saw " in p["body"])')
expect_eq "$posts" "lead 1 saw ask yes|lead 2 saw yes|coder 2 saw yes" \
	"each second turn saw the agent's own earlier replies"
run task list dev --json
expect_eq "$(json_get "$OUT" '[(t["id"], t["owner"], t["status"]) for t in sorted(j["tasks"] if isinstance(j, dict) else j, key=lambda t: t["id"]) if t["id"] > 1]')" \
	"[(2, 'coder', 'completed'), (3, 'coder', 'completed')]" "assigned by the leader, completed by the member"
expect_eq "$(requests /v1/messages | head -1 | python3 -c 'import json,sys
print(sorted(t["name"] for t in json.loads(sys.stdin.readline())["body"]["tools"]))')" \
	"['inbox_read', 'send_message', 'task_claim', 'task_complete', 'task_get', 'task_list', 'team_chat_post', 'team_chat_subscribe', 'verify_verdict']" \
	"without runtime_config.tools: the default tools"
run agent show coder --json
ls "$HUDDLE_HOME/homes/native/coder/native/"*.jsonl >/dev/null 2>&1 && pass || fail "the coder's transcript is in its home"
expect_eq "$(stat -c %a "$(ls "$HUDDLE_HOME"/homes/native/coder/native/*.jsonl | head -1)")" "600" "the transcript is private"
expect_eq "$(requests /v1/messages | tail -1 | python3 -c 'import json,sys
r=json.loads(sys.stdin.readline()); print(r["headers"]["x-api-key"], r["headers"]["anthropic-version"], r["body"]["stream"])')" \
	"sk-native-fake 2023-06-01 True" "the Anthropic request"

# ---- invalid tool arguments: a tool error, and the loop goes on -----------------
run agent run coder "Complete it.
$(script '{"turns":[{"tool":{"name":"task_complete","raw_args":"{not json"}},{"tool":{"name":"task_claim","input":{"task_id":"one"}}},{"text":"after errors: {{tool_result}}"}]}')" --json
expect_rc 0 "a turn with bad tool calls succeeds"
expect_eq "$(json_get "$OUT" 'j["reason"]')" "success" "the loop went on"
expect_contains "$OUT" "after errors: " "the model answered after the tool errors"
expect_eq "$(requests /v1/messages | tail -1 | python3 -c 'import json,sys
b=json.loads(sys.stdin.readline())["body"]
print([(c["is_error"], c["content"][:40]) for m in b["messages"] if m["role"]=="user" and isinstance(m["content"],list) for c in m["content"] if c.get("type")=="tool_result"][-2:])')" \
	"[(True, 'invalid arguments for task_complete: the'), (True, 'argument \"task_id\" must be an integer')]" \
	"both came back to the model as tool errors"

# ---- identity: a tool call cannot act as another agent -------------------------
run agent run coder "Post. $(script '{"turns":[{"tool":{"name":"team_chat_post","input":{"text":"I am the lead","authorAgentId":"lead","teamId":"dev"}}},{"text":"posted"}]}')"
expect_rc 0 "the member's turn"
run chat read dev --json --limit 500
expect_eq "$(json_get "$OUT" '[p["authorAgentId"] for p in j["posts"] if p["body"]=="I am the lead"]')" \
	"['coder']" "a post claiming to be the lead is stored as the member's"

# ---- mail rides on a tool's result, as over MCP (mcp.c (5)) -------------------
run send dev --as lead --to coder "rebase before you ship"
expect_rc 0 "the lead mails the member"
run agent run coder "List. $(script '{"turns":[{"tool":{"name":"task_list","input":{}}},{"text":"listed"}]}')"
expect_rc 0 "the member's turn with a read tool"
expect_eq "$(requests /v1/messages | tail -1 | python3 -c 'import json,sys
b=json.loads(sys.stdin.readline())["body"]
c=[c["content"] for m in b["messages"] if m["role"]=="user" and isinstance(m["content"],list) for c in m["content"] if c.get("type")=="tool_result"][-1]
head, mail = c.split("\n", 1)
print(sorted(json.loads(head)), mail.startswith("<teammate-message teammate_id=\"lead\""), "rebase before you ship" in mail)')" \
	"['tasks'] True True" "the tool's result, then the mail, in the text the model read"
run agent run coder "List again. $(script '{"turns":[{"tool":{"name":"task_list","input":{}}},{"text":"listed"}]}')"
expect_eq "$(requests /v1/messages | tail -1 | python3 -c 'import json,sys
b=json.loads(sys.stdin.readline())["body"]
c=[c["content"] for m in b["messages"] if m["role"]=="user" and isinstance(m["content"],list) for c in m["content"] if c.get("type")=="tool_result"][-1]
print("teammate-message" in c, sorted(json.loads(c)))')" \
	"False ['tasks']" "delivered once: the next result carries no mail"

# ---- max_turns stops a model that never stops calling tools ---------------------
run agent add dev looper --runtime native --config "$(openai_cfg '"max_turns":3')"
before=$(fake_model_requests /v1/chat/completions)
run agent run looper "Loop. $(script '{"loop":true,"turns":[{"tool":{"name":"task_list","input":{}}}]}')" --json
expect_eq "$(json_get "$OUT" 'j["reason"]')" "max_turns" "max_turns ends the turn"
expect_eq "$(($(fake_model_requests /v1/chat/completions) - before))" "3" "after exactly 3 model calls"

# ---- 429 then success; 401; a stream cut mid-way ---------------------------------
for a in lead coder; do
	t0=$(date +%s%N)
	run agent run "$a" "Retry. $(script '{"turns":[{"text":"answered after 429","fail_first":{"status":429,"retry_after":1}}]}')"
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_rc 0 "$a: 429 then success"
	expect_eq "$OUT" "answered after 429" "$a: the retried call's answer"
	[ "$ms" -ge 1000 ] && pass || fail "$a: Retry-After (1 s) was not honoured: ${ms} ms"
done
run ask dev "@lead fail. $(script '{"turns":[{"error":{"status":401,"message":"Incorrect API key provided"}}]}')"
expect_contains "$OUT" "[error: native: openai: HTTP 401: Incorrect API key provided]" "401: a clear error"
run agent run coder "Fail. $(script '{"turns":[{"error":{"status":401,"message":"invalid x-api-key"}}]}')"
expect_rc 1 "401 fails the turn"
expect_contains "$ERR" "huddle: native: anthropic: HTTP 401: invalid x-api-key" "401 from Anthropic"
for a in lead coder; do
	run agent run "$a" "Cut. $(script '{"turns":[{"text":"this reply is cut short","cut":true}]}')"
	expect_rc 1 "$a: a cut stream fails the turn"
	expect_contains "$ERR" "the stream ended before the reply did (cut mid-way)" "$a: says the stream was cut"
done
# a tool runtime_config.tools names that huddle has not: the turn ends
# before any model call, naming it (the tools it does have still picked)
calls=$(fake_model_requests /v1/chat/completions)
run agent add dev picky --runtime native --config "$(openai_cfg '"tools":["task_list","no_such_tool"]')"
expect_rc 0 "add an agent whose tools list names an unknown tool"
run agent run picky "hello"
expect_rc 1 "an unknown tool fails the turn"
expect_contains "$ERR" 'huddle: native: runtime_config.tools: unknown tool "no_such_tool"' "names the unknown tool"
expect_eq "$(fake_model_requests /v1/chat/completions)" "$calls" "no model call was made"
run agent rm picky
expect_rc 0 "remove it"
FAKE_NATIVE_KEY= run agent run lead "hello"
expect_rc 1 "no key"
expect_contains "$ERR" "huddle: native: openai: the API key variable FAKE_NATIVE_KEY (runtime_config.api_key_env) is not set" \
	"a missing key variable, named"

# every model call went to the fake, on loopback
expect_eq "$(python3 -c 'import json,sys
print(sorted({json.loads(l)["path"] for l in open(sys.argv[1])}))' "$FAKE_MODEL_LOG")" \
	"['/v1/chat/completions', '/v1/messages']" "only the fake's two APIs were called"
finish
