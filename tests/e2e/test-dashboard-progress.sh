#!/usr/bin/env bash
# test-dashboard-progress.sh -- progress and cancel on the dashboard, in a
# real headless Chromium (the structure of test-dashboard.sh): starts
# `huddle serve` on a free port with a team whose leader is a slow exec
# agent (tests/e2e/agents/slow-agent.sh), runs
# dashboard-progress.test.mjs at both widths, then stops the server and
# checks its log. Screenshots go to <build dir>/e2e-screenshots/progress/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-progress

run init
expect_rc 0 "init"
slow_team prog 120

browser_serve
export AGENT_LOG=$T_TMP/log/prog
browser_run dashboard-progress dashboard-progress.test.mjs
finish
