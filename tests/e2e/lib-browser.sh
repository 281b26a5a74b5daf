# lib-browser.sh -- what every browser test script does around its
# node --test file: sourced after lib.sh by test-dashboard*.sh.
#   browser_require NAME   exit 77 (skipped, saying why) without node,
#                          Chromium or tests/e2e/node_modules
#   browser_serve          `huddle serve --port 0` on the test's home;
#                          sets $port; the live server's pid is kept in
#                          $pidfile (a test may kill and restart it: it
#                          writes the new pid there), its log in $log;
#                          stopped at exit
#   browser_run NAME FILE  the screenshots directory <build>/NAME, the
#                          environment the .mjs files read, then
#                          node --test FILE; then the server is stopped
#                          with SIGTERM and its whole log checked for
#                          sanitizer reports
# Environment given to FILE: HUDDLE, HUDDLE_SRC, HUDDLE_HOME, CHROMIUM,
# HUDDLE_PORT, HUDDLE_SERVER_PID_FILE, HUDDLE_SERVE_LOG, HUDDLE_SHOTS,
# HUDDLE_TMP, plus whatever the caller exported.
browser_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}
pidfile=$T_TMP/server.pid
log=$T_TMP/serve.log
port=

# `make test` installs all of these (scripts/deps.sh test, npm ci); a bare
# ctest on a machine without them reports the test skipped, saying why.
browser_require() {
	if ! command -v node >/dev/null 2>&1 || [ ! -x "$chromium" ] ||
		[ ! -d "$browser_here/node_modules/playwright-core" ]; then
		echo "$1: skipped: needs node, $chromium and tests/e2e/node_modules" \
			"(make test installs them: scripts/deps.sh test, npm ci in tests/e2e)"
		exit 77
	fi
}

stop_server() {
	local pid
	pid=$(cat "$pidfile" 2>/dev/null) || return 0
	rm -f "$pidfile"
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}

browser_serve() {
	trap 'stop_server; rm -rf "$T_TMP"' EXIT
	"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>>"$log" &
	disown
	echo $! >"$pidfile"
	for _ in $(seq 1 300); do
		port=$(sed -n 's|^huddle is running at http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$T_TMP/serve.out")
		[ -n "$port" ] && return 0
		kill -0 "$(cat "$pidfile")" 2>/dev/null || break
		sleep 0.1
	done
	fail "huddle serve did not start: $(cat "$T_TMP/serve.out" "$log")"
	finish
	exit 1
}

browser_run() {
	local name=$1 file=$2 shots
	# one folder per test under <build dir>/e2e-screenshots/: dashboard,
	# board, layout, ...
	shots=${name#dashboard-}
	shots=$(cd "$(dirname "$HUDDLE")" && pwd)/e2e-screenshots/$shots
	rm -rf "$shots"
	mkdir -p "$shots"
	export HUDDLE HUDDLE_SRC HUDDLE_HOME CHROMIUM="$chromium"
	export HUDDLE_PORT=$port HUDDLE_SERVER_PID_FILE=$pidfile HUDDLE_SERVE_LOG=$log
	export HUDDLE_SHOTS=$shots HUDDLE_TMP=$T_TMP
	(cd "$browser_here" && node --test --test-concurrency=1 "$file")
	RC=$?
	OUT= ERR=$(tail -n 30 "$log")
	expect_rc 0 "the browser tests (server log tail in stderr)"
	# The server stops on SIGTERM (a turn may still be running), and (in a
	# sanitizer build) with nothing to report: its whole log is checked.
	stop_server
	if grep -qE 'Sanitizer|runtime error:' "$log"; then
		fail "the server's log has sanitizer reports: $(cat "$log")"
	else
		pass
	fi
	echo "$name: screenshots in $shots"
}
