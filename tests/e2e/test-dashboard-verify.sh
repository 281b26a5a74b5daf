#!/usr/bin/env bash
# test-dashboard-verify.sh -- a task's verification in the dashboard's
# task drawer, in a real headless Chromium (web/verify.js). Team vd: lead
# and coder (scripted), and sleeper, an exec critic
# (agents/critic-agent.sh in its sleep mode: it never answers in time).
# Before the browser opens, `huddle serve`'s own verifier has run:
#   #1 "Failing gate"  its gate prints two lines and exits 3: rejected by
#                      huddle, back in progress for coder
#   #2 "Slow critic"   a passing gate, sleeper's turn times out (2 s): the
#                      run failed, the task stays verifying
#   #3 "Approve me"    no gate, the same critic: failed, verifying
#   #4 "Reject me"     a passing gate, the same critic: failed, verifying
#   #5 "Fresh eyes"    a critic runtime (exec, the same script in sleep
#                      mode), claimed by coder, completed from the test
# dashboard-verify.test.mjs checks the drawer against the API for each,
# acts from it (Verify again, Approve, Reject without and with reasons),
# follows #5's throwaway critic live, and the layout at 390 px.
# Screenshots go to <build dir>/e2e-screenshots/verify/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-verify

CRIT=$T_TMP/crit
mkdir -p "$CRIT"
echo sleep >"$CRIT/mode"
critic_cmd=$HUDDLE_SRC/tests/e2e/agents/critic-agent.sh
critic_env="{\"CRITIC_DIR\":\"$CRIT\",\"HUDDLE_BIN\":\"$HUDDLE\",\"CRITIC_OWNER\":\"coder\"}"
cat >"$T_TMP/team.json" <<EOT
{"team":"vd","agents":[
 {"id":"lead","leader":true,"runtime":"scripted"},
 {"id":"coder","runtime":"scripted"},
 {"id":"sleeper","runtime":"exec","runtime_config":{
  "command":["$critic_cmd"],"env":$critic_env}}]}
EOT
run up "$T_TMP/team.json"
expect_rc 0 "up"
run task create vd "Failing gate" --critic sleeper \
	--gate "echo checking the parser; echo 'FAIL: 2 of 9 tests' >&2; exit 3"
run task create vd "Slow critic" --gate "echo all good" --critic sleeper --critic-timeout 2
run task create vd "Approve me" --critic sleeper --critic-timeout 2
run task create vd "Reject me" --gate "echo gate ok" --critic sleeper --critic-timeout 2
run task create vd "Fresh eyes" --critic-timeout 20 --critic-runtime exec \
	--critic-config "{\"command\":[\"$critic_cmd\"],\"env\":$critic_env}"
expect_rc 0 "five tasks with a gate, a critic or both"
for id in 1 2 3 4 5; do
	run task claim "$id" --as coder
	expect_rc 0 "coder claims #$id"
done

browser_serve
for id in 1 2 3 4; do
	run task complete "$id" --as coder -r "done #$id"
	expect_rc 0 "coder completes #$id: verifying"
done
state_is() { # state_is ID STATUS VERIFY_STATE
	"$HUDDLE" task show "$1" --json | python3 -c \
		'import json,sys; j=json.load(sys.stdin); sys.exit(0 if (j["status"], j["verify"]["state"]) == (sys.argv[1], sys.argv[2]) else 1)' \
		"$2" "$3"
}
wait_for 60 state_is 1 in_progress idle &&
	pass || fail "the failing gate did not reject #1: $(tail -5 "$log")"
for id in 2 3 4; do
	wait_for 90 state_is "$id" verifying failed &&
		pass || fail "sleeper's timeout did not fail #$id's run: $(tail -5 "$log")"
done

browser_run dashboard-verify dashboard-verify.test.mjs
finish
