#!/usr/bin/env bash
# test-verify.sh -- verification (issue 15 item 3): a task with a gate and
# a critic goes to verifying when its owner completes it; the verifier
# (huddle serve's, or `huddle task verify` in the foreground) runs the
# gate, then the critic's turn (an exec agent, agents/critic-agent.sh,
# that answers through `huddle task verdict` as itself). Covered: the
# approve path (dependants unblock), the reject path (comment and
# message), the owner never its own critic, a failing gate, a critic that
# times out or answers no verdict (the task stays verifying with the
# error; `huddle task verify` retries), kill -9 of the server while the
# gate runs (the next server resumes the run), REST and bad input; and a
# critic given as a runtime: a throwaway member per run with a fresh home
# (gone with the run; the next run's critic finds nothing of it), kill -9
# while it runs (the next server removes it and runs a new attempt with
# a new one), and the native runtime as that critic against the fake
# model, answering through its in-process verify_verdict.
. "$(dirname "$0")/lib.sh"

CRIT=$T_TMP/crit
mkdir -p "$CRIT"
export FAKE_NATIVE_KEY=sk-native-fake # the native critic's, at the end
echo approve >"$CRIT/mode"
cat >"$T_TMP/team.json" <<EOT
{"team":"dev","agents":[
 {"id":"lead","leader":true,"runtime":"scripted"},
 {"id":"coder","runtime":"scripted"},
 {"id":"reviewer","runtime":"exec","runtime_config":{
  "command":["$HUDDLE_SRC/tests/e2e/agents/critic-agent.sh"],
  "env":{"CRITIC_DIR":"$CRIT","HUDDLE_BIN":"$HUDDLE","CRITIC_OWNER":"coder"}}}]}
EOT
run up "$T_TMP/team.json"
expect_rc 0 "up"
jq_task() { # jq_task ID EXPR: EXPR of task ID's JSON (python)
	run task show "$1" --json
	json_get "$OUT" "$2"
}

# ---- bad input -------------------------------------------------------------
run_says 1 "huddle: gate workdir must be an absolute path, not \"rel\"" \
	"a relative gate workdir" task create dev X --gate true --gate-workdir rel
run_says 1 "huddle: no member \"ghost\" in team dev" "a critic from nowhere" \
	task create dev X --critic ghost
run task create dev X --gate true --gate-timeout 0
expect_rc 2 "a gate timeout of 0"
expect_contains "$ERR" "gate-timeout" "the message names the option"
run_says 1 "huddle: a critic timeout needs a critic or a critic runtime" "a critic timeout alone" \
	task create dev X --critic-timeout 5
run task list dev --json
expect_eq "$(json_get "$OUT" 'len(j)')" "0" "refused creates wrote nothing"

# ---- the owner is never its own critic -------------------------------------
run task create dev "Parse" --gate "echo gate-ran; test -f $T_TMP/ok" \
	--critic reviewer --description "parse the input"
expect_rc 0 "create with a gate and a critic"
run task create dev "Ship" --depends-on 1
run_says 1 "huddle: reviewer is the critic of task 1 and cannot own it (a task's owner is never its own critic)" \
	"the critic cannot claim" task claim 1 --as reviewer
run task auto-claim dev --as reviewer
expect_rc 1 "auto-claim skips the task whose critic it is"
expect_contains "$ERR" "no ready task" "auto-claim found none for the critic"
run task claim 1 --as coder
expect_rc 0 "the coder claims"
run_says 1 "huddle: task 1 is claimed, not verifying" "no verdict before verifying" \
	task verdict 1 --verdict approve --as reviewer

# ---- a failing gate rejects without asking the critic ----------------------
run_says 0 'task #1 "Parse" is now verifying' "complete goes to verifying" \
	task complete 1 --as coder -r "parser done"
expect_eq "$(jq_task 1 'j["verify"]["state"]')" "queued" "its run is queued"
run_says 1 "huddle: coder owns task 1 and cannot be its own critic" \
	"the owner's own verdict is refused" task verdict 1 --verdict approve --as coder
run_says 1 "huddle: task 1's critic is reviewer, not lead" \
	"another member's verdict is refused" task verdict 1 --verdict approve --as lead
run task verdict 1 --verdict maybe --as reviewer
expect_rc 2 "an unknown verdict"
expect_contains "$ERR" "approve" "the message lists the verdicts"
run_says 1 "huddle: a rejection needs its reasons: what must change" \
	"a rejection without reasons" task verdict 1 --verdict reject --as reviewer
run_says 0 'task #1 "Parse" was rejected by huddle; back to coder' \
	"the gate fails: back to the owner" task verify 1
expect_eq "$(jq_task 1 'j["status"], j["owner"], j["verify"]["gate_exit"]')" \
	"('in_progress', 'coder', 1)" "in progress again, same owner, the gate's exit"
expect_contains "$(jq_task 1 'j["comments"][-1]["body"]')" "gate-ran" \
	"the gate's output is the comment"
expect_eq "$(jq_task 1 'j["comments"][-1]["author"]')" "huddle" "by huddle"
[ -e "$CRIT/prompt.1" ] && fail "the critic ran after a failed gate" || pass
run inbox dev --as coder --json
expect_contains "$OUT" 'Task #1 \"Parse\" was rejected by huddle: the gate failed (exit status 1)' \
	"the owner was told"

# ---- the critic rejects ---------------------------------------------------
touch "$T_TMP/ok"
echo reject >"$CRIT/mode"
echo "the parser drops blank lines" >"$CRIT/reasons"
run task complete 1 --as coder -r "parser done, really"
run_says 0 'task #1 "Parse" was rejected by reviewer; back to coder' \
	"the critic rejects" task verify 1
expect_contains "$(cat "$CRIT/prompt.1")" "coder's summary of the work:
parser done, really" "the critic's prompt has the builder's summary"
expect_contains "$(cat "$CRIT/prompt.1")" "gate-ran" "and the gate's output"
expect_contains "$(cat "$CRIT/prompt.1")" "parse the input" "and the task"
expect_eq "$(jq_task 1 'j["status"], j["comments"][-1]["author"], j["comments"][-1]["body"]')" \
	"('in_progress', 'reviewer', 'the parser drops blank lines')" \
	"in progress with the critic's reasons as a comment"
run inbox dev --as coder --json
expect_contains "$OUT" 'was rejected by reviewer: the parser drops blank lines' \
	"a message to the owner"

# ---- approve over MCP, through huddle serve's verifier ---------------------
echo mcp >"$CRIT/mode"
serve_bg
run task complete 1 --as coder -r "blank lines kept"
wait_for 60 sh -c "'$HUDDLE' task show 1 --json | grep -q '\"status\": \"completed\"'" &&
	pass || fail "the server's verifier did not complete task 1: $(cat "$T_TMP/serve.err" | tail -5)"
expect_eq "$(jq_task 1 'j["verify"]["verdict"], j["verify"]["verdict_by"], j["result"]')" \
	"('approve', 'reviewer', 'blank lines kept')" "approved by the critic, the result kept"
expect_contains "$(cat "$CRIT/mcp.out")" '"structuredContent":{"task":{"id":1,' \
	"the verify_verdict tool answered the completed task"
expect_eq "$(jq_task 2 'j["ready"]')" "True" "the dependant is ready"
run chat read dev
expect_contains "$OUT" 'Task #1 "Parse" approved by reviewer: completed; now ready: #2 "Ship".' \
	"the room says so"
expect_contains "$OUT" 'Task #1 "Parse" completed by coder; verifying: gate `echo gate-ran' \
	"and said it was verifying"
run events dev --json
for k in verify_queued verify_started verify_gate verify_verdict; do
	expect_contains "$OUT" "\"$k\"" "a $k event"
done

# ---- a critic that times out, then a retry ---------------------------------
run task create dev "Docs" --critic reviewer --critic-timeout 2
run task claim 3 --as coder
echo sleep >"$CRIT/mode"
run task complete 3 --as coder -r "docs written"
wait_for 60 sh -c "'$HUDDLE' task show 3 --json | grep -q '\"state\": \"failed\"'" &&
	pass || fail "the critic's timeout did not fail the run"
expect_eq "$(jq_task 3 'j["status"]')" "verifying" "the task stays verifying"
expect_contains "$(jq_task 3 'j["verify"]["error"]')" "critic reviewer's turn failed" \
	"the error names the critic"
run chat read dev
expect_contains "$OUT" "retry with huddle task verify dev 3" "the room says how to retry"
echo approve >"$CRIT/mode"
run task verify 3 --as lead
expect_rc 0 "the leader retries"
# the retry runs here, or on the server's verifier if it takes it first
wait_for 60 sh -c "'$HUDDLE' task show 3 --json | grep -q '\"status\": \"completed\"'" &&
	pass || fail "the retry did not approve task 3"
expect_eq "$(jq_task 3 'j["status"], j["verify"]["attempts"]')" "('completed', 2)" \
	"the retry approves it, as attempt 2"

# ---- a critic that answers without a verdict -------------------------------
run task create dev "Tests" --critic reviewer
run task claim 4 --as coder
echo silent >"$CRIT/mode"
run task complete 4 --as coder
wait_for 60 sh -c "'$HUDDLE' task show 4 --json | grep -q '\"state\": \"failed\"'" &&
	pass || fail "a silent critic did not fail the run"
expect_eq "$(jq_task 4 'j["verify"]["error"]')" \
	"critic reviewer ended its turn without a verdict (it must call verify_verdict)" \
	"the error says what was missing"

# ---- REST: a user's verdict ------------------------------------------------
expect_curl '400 {"error":"a rejection needs its reasons: what must change"}' \
	"REST: a rejection without reasons" -X POST "$url/api/tasks/4/verdict" \
	-H 'content-type: application/json' -d '{"verdict":"reject"}'
code=$(curl -s -o "$T_TMP/v.json" -w '%{http_code}' -X POST "$url/api/tasks/4/verdict" \
	-H 'content-type: application/json' -d '{"verdict":"approve","reasons":"checked by hand"}')
expect_eq "$code $(json_get "$(cat "$T_TMP/v.json")" 'j["task"]["status"], j["task"]["verify"]["verdict_by"]')" \
	"200 ('completed', 'user')" "REST: a user approves"

# ---- kill -9 while the gate runs: the next server resumes ------------------
echo approve >"$CRIT/mode"
run task create dev "Build" --gate "touch $T_TMP/gate.\$\$; sleep 6; echo built"
run task claim 5 --as coder
run task complete 5 --as coder
wait_for 60 sh -c "ls $T_TMP/gate.* >/dev/null 2>&1" && pass || fail "the gate never started"
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null
expect_eq "$(jq_task 5 'j["status"], j["verify"]["state"], j["verify"]["attempts"]')" \
	"('verifying', 'running', 1)" "after kill -9 the run is still recorded as running"
serve_bg
wait_for 60 sh -c "'$HUDDLE' task show 5 --json | grep -q '\"status\": \"completed\"'" &&
	pass || fail "the next server did not resume the run: $(tail -5 "$T_TMP/serve.err")"
expect_eq "$(jq_task 5 'j["verify"]["attempts"], j["verify"]["gate_output"].strip()')" \
	"(2, 'built')" "resumed as attempt 2, the gate run again"
run events dev --kind verify_started --json
expect_contains "$OUT" '"resumed": true' "the resume is an event"
expect_eq "$(ls "$T_TMP"/gate.* | wc -l)" "2" "the gate ran twice, once per attempt"

# ---- a critic given as a runtime: a throwaway member per run ---------------
crit_cfg="{\"command\":[\"$HUDDLE_SRC/tests/e2e/agents/critic-agent.sh\"],\"env\":{\"CRITIC_DIR\":\"$CRIT\",\"HUDDLE_BIN\":\"$HUDDLE\",\"CRITIC_OWNER\":\"coder\"}}"
run_says 1 "huddle: give a critic (a member) or a critic runtime (a throwaway critic per run), not both" \
	"a critic and a critic runtime" task create dev X --critic reviewer --critic-runtime exec
run_says 1 "huddle: a critic config needs a critic runtime" "a config alone" \
	task create dev X --critic-config '{}'
run task create dev X --critic-runtime gemini
expect_rc 1 "an unknown critic runtime"
expect_contains "$ERR" 'runtime "gemini" is not available in this build' "the runtime layer's check names it"
run task create dev X --critic-runtime exec --critic-config '{"env":{}}'
expect_rc 1 "an exec critic without its command"
expect_contains "$ERR" "command" "the config's check names the field"
run task create dev X --critic-runtime exec --critic-config '{"command":'
expect_rc 2 "a critic config that is not JSON"
expect_contains "$ERR" "--critic-config: line 1, column 11" "the parser's place in it"
expect_eq "$(json_get "$("$HUDDLE" task list dev --json)" 'len(j)')" "5" \
	"no refused create left a task"

: >"$CRIT/record"
echo reject >"$CRIT/mode"
echo "the lint warnings are still there" >"$CRIT/reasons"
run task create dev "Lint" --critic-runtime exec --critic-config "$crit_cfg"
expect_rc 0 "create with a critic runtime"
expect_eq "$(jq_task 6 'j["verify"]["critic"], j["verify"]["critic_runtime"], j["verify"]["critic_config"]["command"][0].split("/")[-1]')" \
	"(None, 'exec', 'critic-agent.sh')" "the spec: a runtime and its config, no member"
run task claim 6 --as coder
run task complete 6 --as coder --result "lint clean"
wait_for 60 sh -c "'$HUDDLE' task show 6 --json | grep -q '\"status\": \"in_progress\"'" &&
	pass || fail "the throwaway critic did not reject task 6: $(tail -5 "$T_TMP/serve.err")"
expect_eq "$(jq_task 6 'j["verify"]["verdict_by"], j["comments"][-1]["author"], j["comments"][-1]["body"]')" \
	"('critic-6-1', 'critic-6-1', 'the lint warnings are still there')" \
	"the verdict and its comment are the throwaway critic's"
home1=$(cat "$CRIT/home.critic-6-1")
case "$home1" in
"$HUDDLE_HOME"/*|"") fail "the throwaway's home was not a fresh one: [$home1]" ;;
*) pass ;;
esac
[ -e "$home1" ] && fail "the throwaway's home outlived its run: $home1" || pass
wait_for 30 sh -c "! '$HUDDLE' agent show critic-6-1 >/dev/null 2>&1" &&
	pass || fail "the throwaway critic was not removed"
run chat read dev
expect_contains "$OUT" "critic-6-1, a fresh exec agent, joins as this run's critic (it leaves when the run is over)." \
	"the room says who joined as the critic"
run events dev --kind agent_removed --json
expect_contains "$OUT" '"agent_id": "critic-6-1"' "its removal is an event"

echo approve >"$CRIT/mode"
run task complete 6 --as coder --result "lint clean, really"
wait_for 60 sh -c "'$HUDDLE' task show 6 --json | grep -q '\"status\": \"completed\"'" &&
	pass || fail "the second throwaway critic did not approve task 6"
expect_eq "$(jq_task 6 'j["verify"]["verdict_by"], j["verify"]["run_critic"]')" \
	"('critic-6-2', None)" "a new run, a new throwaway critic, gone once it is over"
home2=$(cat "$CRIT/home.critic-6-2")
[ -n "$home2" ] && [ "$home2" != "$home1" ] && pass ||
	fail "the second critic shared the first one's home: [$home1] [$home2]"
expect_eq "$(cat "$CRIT/ls.critic-6-2" | grep -c planted)" "0" \
	"nothing the first critic left is in the second one's home"
expect_eq "$(json_get "$("$HUDDLE" agent list dev --json)" 'sorted(a["id"] for a in j)')" \
	"['coder', 'lead', 'reviewer']" "the team is as it was"

# kill -9 while a throwaway critic runs: the next server removes it, and
# its run goes on as a new attempt with a new critic
rm -f "$CRIT/record"
echo sleep >"$CRIT/mode"
run task create dev "Format" --critic-runtime exec --critic-config "$crit_cfg"
run task claim 7 --as coder
run task complete 7 --as coder
wait_for 60 sh -c "'$HUDDLE' agent show critic-7-1 >/dev/null 2>&1" &&
	pass || fail "the throwaway critic of task 7 never joined"
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null
run agent show critic-7-1
expect_rc 0 "after kill -9 the dead server's throwaway critic is still there"
echo approve >"$CRIT/mode"
serve_bg
wait_for 60 sh -c "'$HUDDLE' task show 7 --json | grep -q '\"status\": \"completed\"'" &&
	pass || fail "the next server did not finish task 7: $(tail -5 "$T_TMP/serve.err")"
expect_eq "$(jq_task 7 'j["verify"]["verdict_by"], j["verify"]["attempts"]')" \
	"('critic-7-2', 2)" "attempt 2, with a throwaway critic of its own"
wait_for 30 sh -c "! '$HUDDLE' agent show critic-7-1 >/dev/null 2>&1 && ! '$HUDDLE' agent show critic-7-2 >/dev/null 2>&1" &&
	pass || fail "a throwaway critic outlived its run: $("$HUDDLE" agent list dev)"

# a real runtime as the critic: native, against the fake model on
# 127.0.0.1, giving its verdict through its in-process verify_verdict
fake_model_start
native_cfg="{\"provider\":\"openai\",\"model\":\"fake-model\",\"base_url\":\"http://127.0.0.1:$FAKE_MODEL_PORT/v1\",\"api_key_env\":\"FAKE_NATIVE_KEY\",\"timeout_s\":60}"
run task create dev "Docs" --critic-runtime native --critic-config "$native_cfg" \
	--description 'Write the docs. FAKE_SCRIPT:{"turns":[{"tool":{"name":"verify_verdict","input":{"task_id":8,"verdict":"approve","reasons":"the docs read well"}}},{"text":"approved: {{tool_result}}"}]}'
expect_rc 0 "create with a native critic runtime"
run task claim 8 --as coder
run task complete 8 --as coder --result "docs written"
wait_for 60 sh -c "'$HUDDLE' task show 8 --json | grep -q '\"status\": \"completed\"'" &&
	pass || fail "the native throwaway critic did not approve task 8: $(tail -5 "$T_TMP/serve.err")"
expect_eq "$(jq_task 8 'j["verify"]["verdict_by"], j["verify"]["reasons"]')" \
	"('critic-8-1', 'the docs read well')" "the native critic's verdict, through its own tool"
[ -e "$HUDDLE_HOME/homes/native/critic-8-1" ] &&
	fail "the native critic's home was kept under HUDDLE_HOME" || pass
run events dev --kind cost --json
expect_contains "$OUT" '"agent_id": "critic-8-1"' "its turn's cost is recorded under its name"

finish
