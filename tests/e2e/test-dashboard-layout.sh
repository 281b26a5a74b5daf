#!/usr/bin/env bash
# test-dashboard-layout.sh -- the dashboard on a phone (390x844) and a
# desktop (1280x800), from the keyboard, and for a team of 20 agents and
# 500 tasks, in a real headless Chromium: starts `huddle serve` on a free
# port with a fresh, empty home and runs dashboard-layout.test.mjs, which
# makes its teams itself (REST, and `huddle up` for the 20 agents). It
# prints how long the big team took to show and the page's longest task
# (reported, never asserted). Screenshots (empty and full, at both widths)
# go to <build dir>/e2e-screenshots/layout/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-layout

browser_serve
browser_run dashboard-layout dashboard-layout.test.mjs
finish
