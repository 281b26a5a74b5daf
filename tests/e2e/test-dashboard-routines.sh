#!/usr/bin/env bash
# test-dashboard-routines.sh -- the dashboard's routines list in a real
# headless Chromium (web/routines.js): a team with a cron routine in a
# named zone, an interval routine and a disabled one, made with the CLI;
# `huddle serve` on a free port with the routines' clock a file the test
# moves (HUDDLE_CLOCK_FILE, docs/routines.md); then
# dashboard-routines.test.mjs checks the list and its next fire times, and
# that a fire the server makes when the clock passes one shows there.
# Screenshots go to <build dir>/e2e-screenshots/routines/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-routines

export HUDDLE_CLOCK_FILE="$T_TMP/clock"
# 2026-01-15T10:00:00Z
echo 1768471200000 >"$HUDDLE_CLOCK_FILE"
run team create rtd
run agent add rtd lead --leader
run agent add rtd coder
run routine add rtd standup --agent coder --cron '0 9 * * mon-fri' \
	--tz Europe/Berlin --task "Post the standup notes"
expect_rc 0 "cron routine"
run routine add rtd sweep --agent lead --every 2h --task "Triage new issues"
expect_rc 0 "interval routine"
run routine add rtd paused --agent lead --every 1d --task "Nothing"
run routine disable rtd paused
expect_rc 0 "disabled routine"

browser_serve
browser_run dashboard-routines dashboard-routines.test.mjs
finish
