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
# gate runs (the next server resumes the run), REST and bad input.
. "$(dirname "$0")/lib.sh"

CRIT=$T_TMP/crit
mkdir -p "$CRIT"
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
run_says 1 "huddle: a critic timeout needs a critic" "a critic timeout alone" \
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

finish
