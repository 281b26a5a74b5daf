#!/usr/bin/env bash
# test-dashboard-memory.sh -- the dashboard's Memory panel (web/memory.js)
# in a real headless Chromium: starts `huddle serve` on a free port with a
# fresh home holding two teams whose agents saved facts in every scope
# (through the CLI, as they would through MCP), runs
# dashboard-memory.test.mjs at 1440x900 and 390x844, then stops the
# server. Screenshots go to <build dir>/e2e-screenshots/memory/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-memory

run team create dev
run agent add dev lead --leader
run agent add dev coder
run team create ops
run agent add ops boss --leader
save() { run memory save "$@"; expect_rc 0 "memory save $*"; }
save dev "the staging DB listens on port 5433" --as coder --tag db         # 1
save dev "coder's secret stash of staging notes" --as coder --scope agent  # 2
save ops "ops keeps the staging DB backups" --as boss                       # 3
save ops "every staging release needs a changelog" --as boss --scope global # 4
save dev "the demo <b>box</b> is <script>x()</script> blue" --as lead       # 5

browser_serve
browser_run dashboard-memory dashboard-memory.test.mjs
finish
