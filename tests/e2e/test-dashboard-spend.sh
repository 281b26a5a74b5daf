#!/usr/bin/env bash
# test-dashboard-spend.sh -- the dashboard's Spend panel in a real headless
# Chromium (web/spend.js): team sp's two native agents (huddle's own agent
# loop) against tests/e2e/fake-model.mjs, priced by runtime_config.prices
# so each turn costs an exact amount (lead $0.30, coder $0.60), take three
# turns through `huddle exchange` (coder twice, lead once); a cap budget on
# the team and a warn budget on coder that coder's spend has passed; team
# quiet has none. Then `huddle serve` on a free port and
# dashboard-spend.test.mjs checks the chart, the budgets, the costliest
# turns, a live update when the server runs a new turn, and the layout at
# 390 px. Screenshots go to <build dir>/e2e-screenshots/spend/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-browser.sh"
browser_require dashboard-spend

fake_model_start
export FAKE_NATIVE_KEY=sk-spend-fake
cfg() { # cfg INPUT_PRICE OUTPUT_PRICE (USD per million tokens)
	printf '{"provider":"openai","model":"fake-model","base_url":"http://127.0.0.1:%s/v1","api_key_env":"FAKE_NATIVE_KEY","prices":{"input":%s,"output":%s},"timeout_s":60}' \
		"$FAKE_MODEL_PORT" "$1" "$2"
}
run team create sp
run agent add sp lead --leader --runtime native --config "$(cfg 1000 10000)"
run agent add sp coder --runtime native --config "$(cfg 2000 20000)"
expect_rc 0 "two priced native agents"
for first in coder coder lead; do
	run exchange sp --stimulus "go" --first "$first" --max-turns 1
	expect_rc 0 "a turn of $first"
done
run budget set sp --limit-cents 500 --mode cap
run budget set sp --agent coder --limit-cents 100 --mode warn
expect_rc 0 "budgets"
run team create quiet
run agent add quiet solo --leader
expect_rc 0 "a team without spend"

browser_serve
# browser_serve's exit trap stops the server; the fake model too
trap 'stop_server; t_cleanup' EXIT
browser_run dashboard-spend dashboard-spend.test.mjs
finish
