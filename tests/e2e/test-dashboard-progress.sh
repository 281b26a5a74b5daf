#!/usr/bin/env bash
# test-dashboard-progress.sh -- progress and cancel on the dashboard, in a
# real headless Chromium (the structure of test-dashboard.sh): starts
# `huddle serve` on a free port with a team whose leader is a slow exec
# agent (tests/e2e/agents/slow-agent.sh), runs
# dashboard-progress.test.mjs at both widths, then stops the server and
# checks its log. Screenshots go to <build dir>/e2e-screenshots-progress/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-progress

mkdir -p "$T_TMP/log"
cat >"$T_TMP/prog.json" <<EOF
{"team": "prog", "agents": [
  {"id": "prog-coder", "leader": true, "runtime": "exec", "runtime_config": {
    "command": ["$HUDDLE_SRC/tests/e2e/agents/slow-agent.sh"],
    "env": {"AGENT_LOG": "$T_TMP/log", "AGENT_SLEEP": "120"}}},
  {"id": "prog-reviewer", "runtime": "scripted", "runtime_config": {"default": "ok"}}
]}
EOF
run init
expect_rc 0 "init"
run up "$T_TMP/prog.json"
expect_rc 0 "apply the team"

browser_serve
export AGENT_LOG=$T_TMP/log
browser_run dashboard-progress dashboard-progress.test.mjs
finish
