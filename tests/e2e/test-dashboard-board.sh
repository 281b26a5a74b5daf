#!/usr/bin/env bash
# test-dashboard-board.sh -- acting from the board in a real headless
# Chromium (web/board.js, web/forms.js): starts `huddle serve` on a free
# port with a fresh, empty home, runs dashboard-board.test.mjs (node's test
# runner driving Debian's chromium through playwright-core), then stops the
# server and checks its log. The page itself creates the team and its
# agents. Screenshots of each step go to
# <build dir>/e2e-screenshots/board/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-board

browser_serve
browser_run dashboard-board dashboard-board.test.mjs
finish
