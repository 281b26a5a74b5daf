#!/usr/bin/env bash
# test-dashboard-progress.sh -- progress and cancel on the dashboard, in a
# real headless Chromium (the structure of test-dashboard.sh): starts
# `huddle serve` on a free port with a team whose leader is a slow exec
# agent (tests/e2e/agents/slow-agent.sh), runs
# dashboard-progress.test.mjs at both widths, then stops the server and
# checks its log. Screenshots go to <build dir>/e2e-screenshots-progress/.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

# `make test` installs all of these (scripts/deps.sh test, npm ci); a bare
# ctest on a machine without them reports the test skipped, saying why.
if ! command -v node >/dev/null 2>&1 || [ ! -x "$chromium" ] ||
	[ ! -d "$here/node_modules/playwright-core" ]; then
	echo "dashboard-progress: skipped: needs node, $chromium and tests/e2e/node_modules" \
		"(make test installs them: scripts/deps.sh test, npm ci in tests/e2e)"
	exit 77
fi

pidfile=$T_TMP/server.pid
log=$T_TMP/serve.log
stop_server() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || return 0
	rm -f "$pidfile"
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 200); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}
trap 'stop_server; rm -rf "$T_TMP"' EXIT

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

"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>>"$log" &
disown
echo $! >"$pidfile"
port=
for _ in $(seq 1 200); do
	port=$(sed -n 's|^huddle is running at http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$T_TMP/serve.out")
	[ -n "$port" ] && break
	kill -0 "$(cat "$pidfile")" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	fail "huddle serve did not start: $(cat "$T_TMP/serve.out" "$log")"
	finish
	exit 1
fi

shots=$(cd "$(dirname "$HUDDLE")" && pwd)/e2e-screenshots-progress
rm -rf "$shots"
mkdir -p "$shots"

export HUDDLE HUDDLE_SRC HUDDLE_HOME CHROMIUM="$chromium"
export HUDDLE_PORT=$port HUDDLE_SERVER_PID_FILE=$pidfile HUDDLE_SERVE_LOG=$log
export HUDDLE_SHOTS=$shots HUDDLE_TMP=$T_TMP AGENT_LOG=$T_TMP/log
(cd "$here" && node --test --test-concurrency=1 dashboard-progress.test.mjs)
RC=$?
OUT= ERR=$(tail -n 30 "$log")
expect_rc 0 "the browser tests (server log tail in stderr)"

# The server stops cleanly on SIGTERM, and (in a sanitizer build) with
# nothing to report: its whole log is checked.
stop_server
if grep -qE 'Sanitizer|runtime error:' "$log"; then
	fail "the server's log has sanitizer reports: $(cat "$log")"
else
	pass
fi
echo "dashboard-progress: screenshots in $shots"
finish
