#!/usr/bin/env bash
# test-runtimes.sh -- the claude-code and codex runtimes with the REAL
# Claude Code and Codex CLIs (pinned in tests/e2e/package.json), both
# pointed at tests/e2e/fake-model.mjs on 127.0.0.1, with huddle's own MCP
# server as their only MCP server. The script each fake turn follows
# travels in the prompt (fake-model.mjs says how).
#   - huddle ask: a Claude Code leader mentions a Codex member, which
#     claims a task over MCP; the answer comes back;
#   - huddle exchange: 4 turns alternating the two, each agent's second
#     turn resuming its own session (the fake sees the earlier history),
#     each turn's cost on its agent and the team;
#   - an agent that posts as another is stored under its own name;
#   - an API error 400, a hung CLI killed at timeout_s with nothing left
#     running, a missing binary: each a clear [error: ...] reply;
#   - a teammate's message sent mid-turn reaches the Claude Code agent in
#     its next tool result, once;
#   - huddle doctor finds both binaries and their credentials;
#   - autorun: a spawned Claude Code teammate claims and completes its
#     first task from its mailbox, and the Codex leader is woken with it;
#   - every model call went to the fake.
. "$(dirname "$0")/lib.sh"

claude=$(agent_cli_bin claude) || exit $?
codex=$(agent_cli_bin codex) || exit $?
fake_model_start
# nothing of the user's: the CLIs' state stays in this test's homes
export HOME=$T_TMP/user
mkdir -p "$HOME"

url=http://127.0.0.1:$FAKE_MODEL_PORT
# script JSON: the line a fake turn follows
script() { printf 'FAKE_SCRIPT:%s' "$1"; }

run team create dev --name "Pair"
expect_rc 0 "create the team"
run agent add dev lead --leader --role lead --runtime claude-code --config "$(claude_cfg)"
expect_rc 0 "add a Claude Code leader"
run agent add dev builder --role builder --runtime codex --config "$(codex_cfg)"
expect_rc 0 "add a Codex member"

# ---- doctor ---------------------------------------------------------------
run doctor dev --json
expect_rc 0 "doctor: both runtimes could run"
expect_eq "$(json_get "$OUT" '[a["binary"]["version"] for a in j["agents"]]')" \
	"['2.1.330 (Claude Code)', 'codex-cli 0.169.0']" "doctor: both versions"
expect_eq "$(json_get "$OUT" '[a["env"]["present"] for a in j["agents"]]')" \
	"[['ANTHROPIC_API_KEY'], ['FAKE_OPENAI_API_KEY']]" "doctor: credentials by name"
case "$OUT" in *sk-ant-fake* | *sk-fake*) fail "doctor printed a secret: $OUT" ;; *) pass ;; esac

# ---- ask: the leader hands a task to the member ----------------------------
run task create dev "Write the parser"
expect_rc 0 "task 1"
member=$(script '{"turns":[{"tool":{"name":"task_claim","input":{"task_id":1}}},{"text":"claimed it: {{!tool_result}}"}]}')
lead_turns=$(python3 -c 'import json,sys; print(json.dumps({"by_agent":{"lead":{"turns":[{"text":"Builder, this one is yours. [@builder: please claim task 1\n"+sys.argv[1]+"]"}]}}}))' "$member")
HUDDLE_LOG=debug run ask dev "Get task 1 going.
$(script "$lead_turns")"
expect_rc 0 "ask the pair"
# the store reaches each stdio MCP server through the environment, never
# on a command line (ps) nor in a file of the agent's home: Codex is told
# to pass HUDDLE_STORE on by name (the debug log shows its command)
if on_pg; then
	expect_contains "$ERR" 'mcp_servers.huddle.env_vars=[\"HUDDLE_STORE\"]' \
		"Codex passes the store on by name"
	case "$ERR" in *"$HUDDLE_STORE"*) fail "a command line carried the store's URL" ;; *) pass ;; esac
	if grep -rlF -- "$HUDDLE_STORE" "$HUDDLE_HOME/homes" >/dev/null 2>&1; then
		fail "an agent's home holds the store's URL: $(grep -rlF -- "$HUDDLE_STORE" "$HUDDLE_HOME/homes")"
	else
		pass
	fi
fi
expect_contains "$OUT" "@lead: Builder, this one is yours." "the leader's reply"
expect_contains "$OUT" "@builder: claimed it: " "the member's reply came back"
expect_contains "$OUT" '"owner":"builder"' "the member's tool result, in its reply"
run task show 1 --json
expect_eq "$(json_get "$OUT" 'j["owner"] + " " + j["status"]')" "builder claimed" \
	"the member claimed task 1 over MCP"
expect_eq "$(fake_model_requests /v1/messages)" "1" "one Claude model call"
expect_eq "$(fake_model_requests /v1/responses)" "2" "two Codex model calls (tool, then text)"

# the calls each turn made are events (the dashboard shows them live)
run events --team dev --kind tool_call --json
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["phase"], e["data"]["name"]) for e in j]')" \
	"[('builder', 'call', 'task_claim'), ('builder', 'result', 'task_claim')]" "tool_call events"

# ---- exchange: 4 turns, each agent resuming its own session ----------------
run task create dev "Review"
run task create dev "Ship"
run task assign 2 builder --as lead
expect_rc 0 "task 2 assigned to the member before the exchange"
turns=$(python3 -c 'import json; print(json.dumps({"by_agent":{
 "lead":{"turns":[{"text":"lead 1, resumed {{saw:Builder, this one}}"},{"text":"lead 2, resumed {{saw:lead 1}}","delay_ms":4000}]},
 "builder":{"turns":[{"tool":{"name":"task_complete","input":{"task_id":2,"result":"reviewed"}}},
   {"text":"builder 1, resumed {{saw:claimed it}}"},{"text":"builder 2, resumed {{saw:builder 1}}"}]}}}))')
last_seq() { "$HUDDLE" events --json -n 1 | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e[-1]["seq"] if e else 0)'; }
head=$(last_seq)
# the board obliges the member again only if work reaches it during the
# leader's second turn: as a user would, assign task 3 then
(
	for _ in $(seq 1 300); do
		if "$HUDDLE" events --team dev --kind turn_started --after "$head" --json |
			python3 -c 'import json,sys; sys.exit(0 if any(e["data"]["turn"]==3 for e in json.load(sys.stdin)) else 1)'; then
			"$HUDDLE" task assign 3 builder --as lead >/dev/null
			exit 0
		fi
		sleep 0.1
	done
) &
assigner=$!
run exchange dev --stimulus "Run the sprint.
$(script "$turns")" --max-turns 4 --json
wait "$assigner"
expect_rc 0 "the exchange"
expect_eq "$(json_get "$OUT" 'j["result"]["speakers"]')" "['lead', 'builder', 'lead', 'builder']" "four turns, alternating"
# after the member's last turn nobody owes one (SPEC 8: that is checked
# before the turn cap)
expect_eq "$(json_get "$OUT" 'j["result"]["endedReason"]')" "no_pending_obligation" "ended with nothing owed"
run chat read dev --json --limit 500
posts=$(json_get "$OUT" '"|".join(p["body"] for p in j["posts"] if p["kind"]=="peer" and (", resumed " in p["body"]))')
# each agent resumed its own session turn after turn: the model saw the
# agent's own earlier replies (from the ask, then from its first turn
# here), never the other agent's
expect_eq "$posts" "lead 1, resumed yes|builder 1, resumed yes|lead 2, resumed yes|builder 2, resumed yes" \
	"each turn resumed the agent's own session"
expect_eq "$(python3 -c 'import json,sys
n=0
for l in open(sys.argv[1]):
    b=json.loads(l)["body"] or {}
    if b.get("model")!="fake-model": continue
    if any("Builder, this one" in json.dumps(i) for i in b.get("input",[]) if i.get("role")=="assistant"): n+=1
print(n)' "$FAKE_MODEL_LOG")" "0" "the member never saw the lead's session"
run task show 2 --json
expect_eq "$(json_get "$OUT" 'j["status"]')" "completed" "the member completed task 2 in its turn"

# each turn's cost on its own agent: Claude's reported, Codex's priced
run events --team dev --kind cost --after "$head" --json
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["estimated"]) for e in j]')" \
	"[('lead', False), ('builder', True), ('lead', False), ('builder', True)]" \
	"cost events: reported for claude-code, estimated for codex"
# codex, at $1.25 / $10 per million tokens: its first turn made two model
# calls (200 in, 40 out), its second one (100 in, 20 out). After a resume
# Codex reports the thread's totals; only what each run added is charged.
builder_costs=$(json_get "$OUT" '[e["data"]["microcents"] for e in j if e["agent_id"]=="builder"]')
expect_eq "$builder_costs" "[65000, 32500]" "codex turns priced from their new tokens only"
run budget show --json
spend=$(json_get "$OUT" '{b["scope"]+":"+b["subject"]: b["spent_microcents"] for b in j["budgets"]}')
expect_eq "$(python3 -c 'import sys,ast; s=ast.literal_eval(sys.argv[1]); print(s["team:dev"] == s["agent:lead"] + s["agent:builder"] and s["agent:lead"] > 0 and s["agent:builder"] > 0)' "$spend")" \
	"True" "the team's spend is its agents' spend"

# ---- identity: an agent cannot post as another ------------------------------
run agent run builder "Post this. $(script '{"turns":[{"tool":{"name":"team_chat_post","input":{"text":"I am the lead","authorAgentId":"lead","teamId":"dev"}}},{"text":"posted"}]}')"
expect_rc 0 "the member's turn"
run chat read dev --json --limit 500
expect_eq "$(json_get "$OUT" '[p["authorAgentId"] for p in j["posts"] if p["body"]=="I am the lead"]')" \
	"['builder']" "a post claiming to be the lead is stored as the member's"

# ---- a prompt past one argument's limit goes on stdin ---------------------
long=$(python3 -c 'print("y" * 100000)')
for a in lead builder; do
	run agent run "$a" "$long
$(script '{"turns":[{"text":"got the long prompt"}]}')"
	expect_rc 0 "$a: a 100 KB prompt"
	expect_eq "$OUT" "got the long prompt" "$a: a 100 KB prompt reaches the model"
done

# ---- errors ----------------------------------------------------------------
run ask dev "@lead now fail. $(script '{"turns":[{"error":{"status":400,"message":"bad thing"}}]}')"
expect_contains "$OUT" "[error: claude-code: API error 400: bad thing]" "an API error 400 is the reply"
expect_rc 1 "a failed turn fails huddle ask (its answer still printed)"
expect_contains "$ERR" "huddle: 1 of 1 replies failed" "and says so"
run agent show lead --json
expect_eq "$(json_get "$OUT" 'j["status"]')" "error" "the agent is in error until a good turn"

run agent add dev sleepy --runtime claude-code --config "$(claude_cfg 3)"
expect_rc 0 "add an agent with a 3 s timeout"
run ask dev "@sleepy take your time. $(script '{"turns":[{"hang":true}]}')"
expect_contains "$OUT" "[error: claude-code: timed out after 3 s (the process group was killed)]" \
	"a hung CLI ends at timeout_s"
sleep 0.5
left=$(pgrep -f -- "$HUDDLE_HOME/homes/claude-code/sleepy" | tr '\n' ' ')
expect_eq "$left" "" "no process of the hung turn is left"

run agent add dev ghost --runtime claude-code --config '{"bin":"huddle-test-no-such-claude"}'
run ask dev "@ghost hello"
expect_contains "$OUT" "[error: claude-code: 'huddle-test-no-such-claude' not found on PATH (runtime_config.bin)]" \
	"a missing binary is a clear error"
# the failed turn left ghost in error, which an exchange would skip: reset
run agent set-status ghost idle
run exchange dev --stimulus "ghost, speak" --first ghost --max-turns 1
expect_rc 1 "a failed turn fails huddle exchange too"
expect_contains "$ERR" "huddle: 1 of 1 turns failed" "and says so"
run agent show ghost --json
expect_eq "$(json_get "$OUT" 'j["status"]')" "error" "the exchange's failed turn leaves its agent in error"

# ---- a message during a turn reaches the agent in its next tool result ----
mark=$(last_seq)
"$HUDDLE" ask dev "@lead look around. $(script '{"turns":[{"tool":{"name":"task_list","input":{}}},{"tool":{"name":"task_list","input":{}},"delay_ms":2500},{"text":"heard: {{tool_result}}"}]}')" \
	>"$T_TMP/ask.out" 2>"$T_TMP/ask.err" &
asker=$!
for _ in $(seq 1 200); do
	n=$("$HUDDLE" events --team dev --kind tool_call --after "$mark" --json |
		python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin) if e["agent_id"]=="lead" and e["data"]["phase"]=="result"))')
	[ "$n" -ge 1 ] && break
	sleep 0.05
done
run send --team dev --from builder --to lead "psst: the parser landed"
expect_rc 0 "a message while the lead's turn runs"
wait "$asker"
run chat read dev --json --limit 500
reply=$(json_get "$OUT" '[p["body"] for p in j["posts"] if p["authorAgentId"]=="lead"][-1]')
expect_contains "$reply" '<teammate-message teammate_id="builder" type="message" summary="psst: the parser landed">' \
	"the message came with the next tool result"
expect_eq "$(grep -o '<teammate-message teammate_id="builder"' <<<"$reply" | wc -l)" "1" "once"
# and only in the second result: the first was returned before it was sent
expect_eq "$(python3 -c 'import json,sys
n=[]
for l in open(sys.argv[1]):
    b=json.loads(l)["body"] or {}
    res=[c for m in b.get("messages",[]) if m["role"]=="user" and isinstance(m["content"],list) for c in m["content"] if c.get("type")=="tool_result"]
    if res and "look around" in json.dumps(b): n.append(sum("psst" in json.dumps(c) for c in res))
print(n)' "$FAKE_MODEL_LOG")" "[0, 1]" "the results the model got: none, then one with the message"
run inbox lead --peek --json
expect_eq "$OUT" "[]" "and it was marked delivered"
run agent show lead --json
expect_eq "$(json_get "$OUT" 'j["status"]')" "idle" "a good turn takes the agent out of error"

# ---- with huddle serve running on this home: MCP over its signed URL -------
"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
server=$!
for _ in $(seq 1 100); do [ -s "$HUDDLE_HOME/serve.json" ] && break; sleep 0.1; done
expect_eq "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["pid"], j["token"])' "$HUDDLE_HOME/serve.json")" \
	"$server False" "serve.json says where the server is"
run task create dev "Over HTTP" --json
http_task=$(json_get "$OUT" 'j["id"]')
http_script=$(python3 -c 'import json,sys; print(json.dumps({"turns":[{"tool":{"name":"task_claim","input":{"task_id":int(sys.argv[1])}}},{"text":"claimed over http"}]}))' "$http_task")
run ask dev "@lead claim it. $(script "$http_script")"
expect_contains "$OUT" "claimed over http" "a turn while the server runs"
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mcpServers"]["huddle"]["type"])' \
	"$HUDDLE_HOME/homes/claude-code/lead/huddle-mcp.json")" "http" "the agent reached huddle over HTTP"
run task show "$http_task" --json
expect_eq "$(json_get "$OUT" 'j["owner"]')" "lead" "and claimed as itself through the signed URL"
# Codex too: its -c mcp_servers.huddle.url is the signed URL
run task create dev "Codex over HTTP" --json
codex_task=$(json_get "$OUT" 'j["id"]')
http_script=$(python3 -c 'import json,sys; print(json.dumps({"turns":[{"tool":{"name":"task_claim","input":{"task_id":int(sys.argv[1])}}},{"text":"codex claimed over http"}]}))' "$codex_task")
HUDDLE_LOG=debug run ask dev "@builder claim it. $(script "$http_script")"
expect_contains "$OUT" "codex claimed over http" "a Codex turn while the server runs"
expect_contains "$ERR" "mcp_servers.huddle.url=\\\"http://127.0.0.1:$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$HUDDLE_HOME/serve.json")/mcp?" \
	"Codex was handed the server's URL (the debug log shows the command)"
run task show "$codex_task" --json
expect_eq "$(json_get "$OUT" 'j["owner"]')" "builder" "Codex claimed as itself through its signed URL"

# ---- autorun: a spawned Claude Code teammate starts on its first task --------
# and a Codex leader hears of the completion, with no ask anywhere
run team create crew --name "Crew"
run agent add crew boss --leader --runtime codex --config "$(codex_cfg)"
expect_rc 0 "a Codex leader"
run task create crew "Survey the auth module" --json
survey=$(json_get "$OUT" 'j["id"]')
run team update crew --autorun on
expect_rc 0 "autorun on"
first=$(python3 -c 'import json,sys; t=int(sys.argv[1]); print(json.dumps({"turns":[{"tool":{"name":"task_claim","input":{"task_id":t}}},{"tool":{"name":"task_complete","input":{"task_id":t,"result":"auth uses sessions"}}},{"text":"surveyed: {{!tool_result}}"}]}))' "$survey")
run agent spawn crew scout --as boss --runtime claude-code --config "$(claude_cfg)" \
	--task "Take task #$survey. $(script "$first")"
expect_rc 0 "spawn a Claude Code teammate"
for _ in $(seq 1 600); do
	st=$("$HUDDLE" task show "$survey" --json | python3 -c 'import json,sys; t=json.load(sys.stdin); print(t["status"], t["owner"])')
	[ "$st" = "completed scout" ] && break
	sleep 0.1
done
expect_eq "$st" "completed scout" "the spawned teammate claimed and completed its first task over MCP"
boss_told() {
	python3 -c 'import json,sys
n=0
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r["path"].startswith("/v1/responses") and "completed by scout" in json.dumps(r["body"]): n+=1
print(n)' "$FAKE_MODEL_LOG"
}
for _ in $(seq 1 600); do [ "$(boss_told)" -ge 1 ] && break; sleep 0.1; done
expect_eq "$([ "$(boss_told)" -ge 1 ] && echo yes)" yes "the Codex leader was woken with the completion in its prompt"
for _ in $(seq 1 300); do
	turns=$("$HUDDLE" team state crew --json | python3 -c 'import json,sys
j=json.load(sys.stdin)
print(" ".join("%s:%s" % (a["agent"], a["last_turn"]["status"] if a["last_turn"] else "-") for a in j["supervisor"]))')
	[ "$turns" = "boss:done scout:done" ] && break
	sleep 0.1
done
expect_eq "$turns" "boss:done scout:done" "both turns recorded by the supervisor"
run chat read crew
expect_contains "$OUT" "scout [peer]: surveyed:" "the teammate's narration is in the room"

kill -TERM "$server"
wait "$server"
expect_eq "$(test -e "$HUDDLE_HOME/serve.json" && echo left || echo gone)" "gone" "serve.json goes with the server"

# ---- nothing went anywhere but the fake -------------------------------------
expect_eq "$(python3 -c 'import json,sys; print(sorted({json.loads(l)["path"].split("?")[0] for l in open(sys.argv[1])}))' "$FAKE_MODEL_LOG")" \
	"['/v1/messages', '/v1/responses']" "every model call went to the fake"
cp "$FAKE_MODEL_LOG" /tmp/fake-debug.jsonl 2>/dev/null
finish
