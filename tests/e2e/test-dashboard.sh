#!/usr/bin/env bash
# test-dashboard.sh -- the dashboard in a real headless Chromium (SPEC 12):
# starts `huddle serve` on a free port with a fresh home holding the example
# team, runs dashboard.test.mjs (node's test runner driving Debian's
# chromium through playwright-core), then stops the server. The test itself
# kills the server with SIGKILL and restarts it on the same port; it
# records the live server's pid in $T_TMP/server.pid so the one stopped
# here is always the current one. Screenshots of each step go to
# <build dir>/e2e-screenshots/dashboard/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard

run up "$HUDDLE_SRC/examples/dev-team.json"
expect_rc 0 "apply the example team"

browser_serve
browser_run dashboard dashboard.test.mjs
finish
