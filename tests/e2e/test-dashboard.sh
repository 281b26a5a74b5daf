#!/usr/bin/env bash
# test-dashboard.sh -- the dashboard in a real headless Chromium (SPEC 12):
# starts `huddle serve` on a free port with a fresh home holding the example
# team, runs dashboard.test.mjs (node's test runner driving Debian's
# chromium through playwright-core), then stops the server. The test itself
# kills the server with SIGKILL and restarts it on the same port; it
# records the live server's pid in $T_TMP/server.pid so the one stopped
# here is always the current one. Screenshots of each step go to
# <build dir>/e2e-screenshots/.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

# `make test` installs all of these (scripts/deps.sh test, npm ci); a bare
# ctest on a machine without them reports the test skipped, saying why.
if ! command -v node >/dev/null 2>&1 || [ ! -x "$chromium" ] ||
	[ ! -d "$here/node_modules/playwright-core" ]; then
	echo "dashboard: skipped: needs node, $chromium and tests/e2e/node_modules" \
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

run up "$HUDDLE_SRC/examples/dev-team.json"
expect_rc 0 "apply the example team"

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

shots=$(cd "$(dirname "$HUDDLE")" && pwd)/e2e-screenshots
rm -rf "$shots"
mkdir -p "$shots"

export HUDDLE HUDDLE_SRC HUDDLE_HOME CHROMIUM="$chromium"
export HUDDLE_PORT=$port HUDDLE_SERVER_PID_FILE=$pidfile HUDDLE_SERVE_LOG=$log
export HUDDLE_SHOTS=$shots HUDDLE_TMP=$T_TMP
(cd "$here" && node --test --test-concurrency=1 dashboard.test.mjs)
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
echo "dashboard: screenshots in $shots"
finish
