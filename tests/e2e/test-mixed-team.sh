#!/usr/bin/env bash
# test-mixed-team.sh -- examples/mixed-team.json end to end, plus an
# OpenClaw member: one team, one board, four runtimes, each the real thing
# against tests/e2e/fake-model.mjs on 127.0.0.1: the native leader on its
# OpenAI-compatible endpoint (Chat Completions, its tools in process), the
# real Claude Code CLI as the coder and the real Codex CLI as the reviewer
# (both over huddle's MCP server), and a scribe on a real OpenClaw Gateway
# (lib.sh's openclaw_gateway_start; Chat Completions to the fake), which
# has no huddle tools: its room is server-mediated. The team file is the
# example's, with only what points each runtime at the fake overridden
# (base_url; the CLIs' binaries, keys and providers), and the scribe's
# entry added (the example stays what users run: three members, no
# Gateway).
#   - huddle up loads it;
#   - huddle ask to each agent: each answers through its own CLI, API or
#     Gateway, its reply in the room under its name, one cost event per
#     turn (the scribe's estimated: the Gateway reports none);
#   - huddle exchange across all four, driven by the board: the leader
#     creates and assigns tasks with its in-process tools, the coder and
#     the reviewer complete theirs over MCP; the scribe, given a task,
#     answers in the room without a tool call and the leader completes its
#     task for it; each later speaker's model got the earlier speakers'
#     posts in its prompt, the scribe's included, and the scribe's the
#     posts before its turn;
#   - huddle doctor on that home covers all four runtimes (the scribe's
#     Gateway and session);
#   - the dashboard (mixed-team.test.mjs, in headless Chromium) shows each
#     agent's runtime and spend on its card, the native and OpenClaw ones
#     like the CLIs'.
# Another member is its entry in the team file written below, what points
# it at the fake in RUNTIME_CFG, the route it calls in API_PATH and its id
# in the roster below: the asks, doctor and the dashboard then cover it;
# the exchange gives it a turn when the leader's script assigns it a task.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require mixed-team

claude=$(agent_cli_bin claude) || exit $?
codex=$(agent_cli_bin codex) || exit $?
fake_model_start
# the Gateway starts while the first asks run (openclaw_gateway_wait below)
openclaw_gateway_start
# nothing of the user's: the CLIs' state stays in this test's homes
export HOME=$T_TMP/user
mkdir -p "$HOME"
url=http://127.0.0.1:$FAKE_MODEL_PORT
script() { printf 'FAKE_SCRIPT:%s' "$1"; }

# the example's leader reads its key from the variable it names
keyvar=$(python3 -c 'import json,sys
print([a for a in json.load(open(sys.argv[1]))["agents"] if a["runtime"]=="native"][0]["runtime_config"]["api_key_env"])' \
	"$HUDDLE_SRC/examples/mixed-team.json")
export "$keyvar"=sk-native-fake

# what points each runtime at the fake, merged over the example's
# runtime_config (a runtime missing here fails the test: add it)
RUNTIME_CFG=$(python3 -c 'import json,sys
print(json.dumps({
 "native": {"base_url": sys.argv[1] + "/v1", "timeout_s": 60},
 "claude-code": json.loads(sys.argv[2]),
 "codex": json.loads(sys.argv[3]),
 "openclaw": {"url": sys.argv[4], "token_env": sys.argv[5], "timeout_s": 180}}))' \
	"$url" "$(claude_cfg)" "$(codex_cfg)" "$GW_URL" "$GW_TOKEN_ENV")
# the fake's route for each runtime's API (the Gateway's provider is Chat
# Completions)
declare -A API_PATH=([native]=/v1/chat/completions [claude-code]=/v1/messages [codex]=/v1/responses
	[openclaw]=/v1/chat/completions)

# the example, and the scribe (not in the example: it needs a Gateway)
python3 - "$HUDDLE_SRC/examples/mixed-team.json" "$RUNTIME_CFG" >"$T_TMP/mixed.json" <<'EOF' ||
import json, sys
team = json.load(open(sys.argv[1]))
over = json.loads(sys.argv[2])
team["agents"].append({"id": "scribe", "runtime": "openclaw", "runtime_config": {},
  "role": "writes up what the team did, in the room"})
for a in team["agents"]:
    if a["runtime"] not in over:
        sys.exit("no fake settings for runtime %s (agent %s): add them to RUNTIME_CFG" % (a["runtime"], a["id"]))
    a["runtime_config"].update(over[a["runtime"]])
print(json.dumps(team))
EOF
	fail "the example's team file could not be pointed at the fake"

run up "$T_TMP/mixed.json"
expect_rc 0 "huddle up the mixed example"
team=$(json_get "$(cat "$T_TMP/mixed.json")" 'j["team"]')
expect_eq "$team" "mixed" "the example's team"
# agent and runtime, as huddle lists them (the leader, then by id)
run agent list "$team" --json
roster=$(json_get "$OUT" '" ".join(a["id"] + ":" + a["runtime"] for a in j)')
expect_eq "$roster" "planner:native auditor:codex engineer:claude-code scribe:openclaw" \
	"a native leader, a Claude Code coder, a Codex reviewer, an OpenClaw scribe"
lead=planner coder=engineer reviewer=auditor scribe=scribe

# the newest event's seq (0: none yet), to read only what came after
last_seq() { "$HUDDLE" events --json -n 1 | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e[-1]["seq"] if e else 0)'; }

# ---- ask each agent: its own runtime answers, in the room, with a cost -----
for pair in $roster; do
	agent=${pair%%:*} rt=${pair#*:}
	[ "$rt" = openclaw ] && openclaw_gateway_wait
	before=$(fake_model_requests "${API_PATH[$rt]}")
	mark=$(last_seq)
	# the leader is asked without a mention (a message goes to it), each
	# member by its @id
	to="@$agent "
	[ "$agent" = "$lead" ] && to=
	run ask "$team" "${to}who are you?
$(script "{\"turns\":[{\"text\":\"$agent here, on $rt\"}]}")"
	expect_rc 0 "ask $agent"
	expect_contains "$OUT" "@$agent: $agent here, on $rt" "$agent answered the ask"
	after=$(fake_model_requests "${API_PATH[$rt]}")
	expect_eq "$((after - before))" "1" "$agent's turn: one call to ${API_PATH[$rt]} ($rt)"
	run chat read "$team" --json --limit 500
	expect_eq "$(json_get "$OUT" "[(p['authorAgentId'], p['kind']) for p in j['posts'] if p['body']=='$agent here, on $rt']")" \
		"[('$agent', 'peer')]" "$agent's reply is in the room under its name"
	run events --team "$team" --kind cost --after "$mark" --json
	expect_eq "$(json_get "$OUT" '[e["agent_id"] for e in j]')" "['$agent']" "one cost event for $agent's turn"
done
# what each runtime says of its cost: Claude Code reports it, codex and
# native are priced from the tokens the fake reported, the Gateway
# reports none (huddle estimates it)
run events --team "$team" --kind cost --json
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["estimated"], e["data"]["microcents"] > 0) for e in j]')" \
	"[('$lead', True, True), ('$reviewer', True, True), ('$coder', False, True), ('$scribe', True, True)]" \
	"cost events: reported or priced (the scribe's estimated from its prompt and reply), never zero"

# ---- exchange: the board hands the turns round the four runtimes ----------
# lead (native):      creates task 1, assigns it to the coder, creates
#                     task 2, assigns it to the scribe -> both owe (the
#                     coder first: as many turns, and "engineer" < "scribe")
# coder (claude):     completes task 1 over MCP            -> leader owes
# scribe (openclaw):  answers in the room, no tool call (it has none); it
#                     has spoken less than the leader, so it goes first
# lead:               completes the scribe's task 2 for it (a leader
#                     may), creates task 3, assigns it to the reviewer
# reviewer (codex):   completes task 3 over MCP            -> leader owes
# lead:               wraps up; nobody owes a turn
# The scribe's reply also says whether its Gateway session held its ask's
# reply ({{saw:...}}): huddle sends every turn to the same session.
turns=$(python3 - "$lead" "$coder" "$reviewer" "$scribe" <<'EOF'
import json, sys
lead, coder, reviewer, scribe = sys.argv[1:]
print(json.dumps({"by_agent": {
 lead: {"turns": [{"tool": {"name": "task_create", "input": {"subject": "Write the parser"}}},
   {"tool": {"name": "task_assign", "input": {"task_id": 1, "assignee": coder}}},
   {"tool": {"name": "task_create", "input": {"subject": "Write the release note"}}},
   {"tool": {"name": "task_assign", "input": {"task_id": 2, "assignee": scribe}}},
   {"text": "lead 1: the parser is yours, the release note the scribe's"},
   {"tool": {"name": "task_complete", "input": {"task_id": 2, "result": "the scribe's note, in the room"}}},
   {"tool": {"name": "task_create", "input": {"subject": "Review the parser"}}},
   {"tool": {"name": "task_assign", "input": {"task_id": 3, "assignee": reviewer}}},
   {"text": "lead 2: review it, please"},
   {"text": "lead 3: parser written and reviewed"}]},
 coder: {"turns": [{"tool": {"name": "task_complete", "input": {"task_id": 1, "result": "parser in parse.c"}}},
   {"text": "coder 1: the parser is written"}]},
 scribe: {"turns": [{"text": "scribe 1: release note, a parser in parse.c (same session: {{saw:scribe here, on openclaw}})"}]},
 reviewer: {"turns": [{"tool": {"name": "task_complete", "input": {"task_id": 3, "result": "approved"}}},
   {"text": "reviewer 1: approved"}]}}}))
EOF
)
mark=$(last_seq)
run exchange "$team" --stimulus "Build the parser.
$(script "$turns")" --max-turns 8 --json
expect_rc 0 "the exchange"
expect_eq "$(json_get "$OUT" 'j["result"]["speakers"]')" "['$lead', '$coder', '$scribe', '$lead', '$reviewer', '$lead']" \
	"each runtime speaks in turn, as the board obliges"
expect_eq "$(json_get "$OUT" 'j["result"]["endedReason"]')" "no_pending_obligation" "ended with nothing owed"
run chat read "$team" --json --limit 500
expect_eq "$(json_get "$OUT" '[(p["authorAgentId"], p["body"]) for p in j["posts"] if p["kind"]=="peer" and p["body"].split(":")[0][-2:] in (" 1", " 2", " 3")]')" \
	"[('$lead', \"lead 1: the parser is yours, the release note the scribe's\"), ('$coder', 'coder 1: the parser is written'), ('$scribe', 'scribe 1: release note, a parser in parse.c (same session: yes)'), ('$lead', 'lead 2: review it, please'), ('$reviewer', 'reviewer 1: approved'), ('$lead', 'lead 3: parser written and reviewed')]" \
	"each turn's reply is in the room under its speaker's name"

# the board, afterwards: the leader's tasks, done by the members it gave
# them to (the scribe's completed by the leader: the scribe has no tools)
run task list "$team" --json
expect_eq "$(json_get "$OUT" '[(t["id"], t["subject"], t["owner"], t["status"]) for t in sorted(j["tasks"] if isinstance(j, dict) else j, key=lambda t: t["id"])]')" \
	"[(1, 'Write the parser', '$coder', 'completed'), (2, 'Write the release note', '$scribe', 'completed'), (3, 'Review the parser', '$reviewer', 'completed')]" \
	"created and assigned by the leader in process, completed by the members over MCP"
# every tool call, by whom, named as its runtime names it (Claude Code
# prefixes an MCP server's tools; the dashboard shows huddle's by name)
run events --team "$team" --kind tool_call --after "$mark" --json
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["name"]) for e in j if e["data"]["phase"]=="result"]')" \
	"[('$lead', 'task_create'), ('$lead', 'task_assign'), ('$lead', 'task_create'), ('$lead', 'task_assign'), ('$coder', 'task_complete'), ('$lead', 'task_complete'), ('$lead', 'task_create'), ('$lead', 'task_assign'), ('$reviewer', 'task_complete')]" \
	"every tool call, by whom (none by the scribe)"
run events --team "$team" --kind cost --after "$mark" --json
expect_eq "$(json_get "$OUT" '[e["agent_id"] for e in j]')" "['$lead', '$coder', '$scribe', '$lead', '$reviewer', '$lead']" \
	"one cost event per turn, on its speaker"

# later speakers heard earlier ones: the room posts each speaker's model
# got in its prompt (outside the script line), whatever its API
heard() { # heard AGENT TEXT: did a request for AGENT's turn carry TEXT?
	python3 - "$FAKE_MODEL_LOG" "$1" "$2" <<'EOF'
import json, re, sys
log, agent, text = sys.argv[1:]
def texts(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v: yield from texts(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            if k in ("text", "content", "input", "messages", "output"): yield from texts(x)
def prompts(body):
    # the user's side of the request: the prompts huddle sent, not the
    # model's own replies
    for m in body.get("messages") or body.get("input") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            yield from texts(m.get("content"))
for line in open(log):
    body = json.loads(line)["body"] or {}
    for p in prompts(body):
        if ("You are %s," % agent) not in p: continue
        if any(text in l for l in p.splitlines() if "FAKE_SCRIPT:" not in l):
            print("yes"); sys.exit(0)
print("no")
EOF
}
expect_eq "$(heard "$coder" 'lead 1: the parser is yours')" "yes" "the coder (Claude Code) got the leader's post"
expect_eq "$(heard "$scribe" 'coder 1: the parser is written')" "yes" "the scribe (OpenClaw) got the coder's post"
expect_eq "$(heard "$scribe" "lead 1: the parser is yours")" "yes" "and the leader's"
expect_eq "$(heard "$lead" 'scribe 1: release note')" "yes" "the leader (native) got the scribe's post"
expect_eq "$(heard "$reviewer" 'scribe 1: release note')" "yes" "the reviewer (Codex) got the scribe's post"
expect_eq "$(heard "$reviewer" 'coder 1: the parser is written')" "yes" "and the coder's"
expect_eq "$(heard "$reviewer" 'lead 2: review it, please')" "yes" "and the leader's"
expect_eq "$(heard "$lead" 'reviewer 1: approved')" "yes" "the leader (native) got the reviewer's post"
expect_eq "$(heard "$coder" 'reviewer 1: approved')" "no" "(a post made after a speaker's turn is not in it)"
expect_eq "$(heard "$scribe" 'reviewer 1: approved')" "no" "(nor in the scribe's)"

# ---- doctor: all four runtimes, on this home --------------------------------
run doctor "$team" --json
expect_rc 0 "doctor: every agent could run"
expect_eq "$(json_get "$OUT" '[(a["agent"], a["runtime"], a["ok"], a["home_exists"]) for a in j["agents"]]')" \
	"[('$lead', 'native', True, True), ('$reviewer', 'codex', True, True), ('$coder', 'claude-code', True, True), ('$scribe', 'openclaw', True, False)]" \
	"doctor: all four runtimes, each with its home (the scribe's is the Gateway's: none here)"
expect_eq "$(json_get "$OUT" '[a.get("binary", {}).get("version") for a in j["agents"]]')" \
	"[None, 'codex-cli 0.169.0', '2.1.330 (Claude Code)', None]" "doctor: the CLIs' versions"
expect_eq "$(json_get "$OUT" '[(a["home_kind"], a["gateway"]["url"], a["gateway"]["session"]) for a in j["agents"] if "gateway" in a]')" \
	"[('connected', '$GW_URL', 'huddle-$team-$scribe')]" "doctor: the scribe's Gateway and the session its turns go to"
expect_eq "$(json_get "$OUT" '[(a["endpoint"]["provider"], a["endpoint"]["base_url"]) for a in j["agents"] if "endpoint" in a]')" \
	"[('openai', '$url/v1')]" "doctor: the native leader's endpoint"
expect_eq "$(json_get "$OUT" '[a["env"]["present"] for a in j["agents"]]')" \
	"[['$keyvar'], ['FAKE_OPENAI_API_KEY'], ['ANTHROPIC_API_KEY'], ['$GW_TOKEN_ENV']]" "doctor: each runtime's credentials, by name"
expect_eq "$(json_get "$OUT" '[a["last_turn"]["status"] + " " + a["last_turn"]["engine"] for a in j["agents"]]')" \
	"['success exchange', 'success exchange', 'success exchange', 'success exchange']" "doctor: each agent's last turn"
case "$OUT" in *sk-native-fake* | *sk-ant-fake* | *sk-fake* | *"$GW_TOKEN"*) fail "doctor printed a secret: $OUT" ;; *) pass ;; esac
run doctor "$team"
expect_rc 0 "doctor, as text"
expect_eq "$(grep -E '^(ok  |FAIL) ' <<<"$OUT")" "ok   $lead (team mixed): native
ok   $reviewer (team mixed): codex
ok   $coder (team mixed): claude-code
ok   $scribe (team mixed): openclaw" "doctor, as text: one line per agent"
expect_contains "$OUT" "      endpoint openai $url/v1 (model openai/gpt-4.1-mini)" "doctor, as text: the native leader's endpoint"
expect_contains "$OUT" "      needs   $keyvar (runtime_config.api_key_env); set: $keyvar" "doctor, as text: its key variable"
expect_contains "$OUT" "      binary  $claude 2.1.330 (Claude Code)" "doctor, as text: Claude Code's binary"
expect_contains "$OUT" "      binary  $codex codex-cli 0.169.0" "doctor, as text: Codex's binary"
expect_contains "$OUT" "      gateway $GW_URL (session huddle-$team-$scribe)" "doctor, as text: the scribe's Gateway and session"
expect_contains "$OUT" "      needs   the Gateway's token in \$$GW_TOKEN_ENV (runtime_config.token_env); set: $GW_TOKEN_ENV" \
	"doctor, as text: the scribe's token variable"

# ---- the dashboard: every runtime's card like any other ----------------------
# autorun off first: the server would otherwise wake the leader for the
# completions in its mailbox, with the fake model unscripted
run team update "$team" --autorun off
expect_rc 0 "autorun off before serving"
browser_serve
# browser_serve's trap stops the server; the fake model still needs t_cleanup
trap 'stop_server; t_cleanup' EXIT
MIXED_TEAM=$team MIXED_RUNTIMES=$roster browser_run mixed-team mixed-team.test.mjs

# ---- nothing went anywhere but the fake -------------------------------------
# (the Gateway's model calls included: its one provider is the fake)
expect_eq "$(python3 -c 'import json,sys; print(sorted({json.loads(l)["path"].split("?")[0] for l in open(sys.argv[1])}))' "$FAKE_MODEL_LOG")" \
	"['/v1/chat/completions', '/v1/messages', '/v1/responses']" "every model call went to the fake, on each runtime's API"
finish
