#!/usr/bin/env bash
# test-dashboard-board.sh -- acting from the board in a real headless
# Chromium (web/board.js, web/forms.js): starts `huddle serve` on a free
# port with a fresh, empty home, runs dashboard-board.test.mjs (node's test
# runner driving Debian's chromium through playwright-core), then stops the
# server and checks its log. The page itself creates the team and its
# agents. Screenshots of each step go to
# <build dir>/e2e-screenshots-board/.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

# `make test` installs all of these (scripts/deps.sh test, npm ci); a bare
# ctest on a machine without them reports the test skipped, saying why.
if ! command -v node >/dev/null 2>&1 || [ ! -x "$chromium" ] ||
	[ ! -d "$here/node_modules/playwright-core" ]; then
	echo "dashboard-board: skipped: needs node, $chromium and tests/e2e/node_modules" \
		"(make test installs them: scripts/deps.sh test, npm ci in tests/e2e)"
	exit 77
fi

log=$T_TMP/serve.log
pid=
stop_server() {
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || { pid=; return 0; }
	for _ in $(seq 1 200); do
		kill -0 "$pid" 2>/dev/null || { pid=; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	pid=
}
trap 'stop_server; rm -rf "$T_TMP"' EXIT

"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>>"$log" &
pid=$!
port=
for _ in $(seq 1 300); do
	port=$(sed -n 's|^huddle is running at http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$T_TMP/serve.out")
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	fail "huddle serve did not start: $(cat "$T_TMP/serve.out" "$log")"
	finish
	exit 1
fi

shots=$(cd "$(dirname "$HUDDLE")" && pwd)/e2e-screenshots-board
rm -rf "$shots"
mkdir -p "$shots"

export HUDDLE HUDDLE_HOME CHROMIUM="$chromium"
export HUDDLE_PORT=$port HUDDLE_SHOTS=$shots
(cd "$here" && node --test --test-concurrency=1 dashboard-board.test.mjs)
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
echo "dashboard-board: screenshots in $shots"
finish
