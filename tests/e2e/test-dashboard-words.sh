#!/usr/bin/env bash
# test-dashboard-words.sh -- what the dashboard says, in a real headless
# Chromium: agents' replies as sanitized Markdown with their tags as chips,
# the team's answer shown once, the events log as sentences with their
# JSON behind a toggle, costs in cents, the exchange's end in words, and
# never "null" on screen. Starts `huddle serve` on a free port with a fresh
# home holding two teams without a description (words: scripted agents
# whose canned replies carry Markdown, hostile HTML and a costly text;
# quiet: one agent that takes ten minutes to answer, so a conversation
# stays waiting for it), runs dashboard-words.test.mjs at 1440x900 and at
# 390x844, then stops the server. Screenshots go to
# <build dir>/e2e-screenshots-words/.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

if ! command -v node >/dev/null 2>&1 || [ ! -x "$chromium" ] ||
	[ ! -d "$here/node_modules/playwright-core" ]; then
	echo "dashboard-words: skipped: needs node, $chromium and tests/e2e/node_modules" \
		"(make test installs them: scripts/deps.sh test, npm ci in tests/e2e)"
	exit 77
fi

pid=
log=$T_TMP/serve.log
stop_server() {
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || { pid=; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	pid=
}
trap 'stop_server; rm -rf "$T_TMP"' EXIT

# The teams: written by python so the replies' Markdown and HTML stay
# exactly as an agent would send them.
python3 - "$T_TMP" <<'PY'
import json, sys
d = sys.argv[1]
lead_rules = [
    {"when": "markdown please", "reply":
        "## Plan\n\n- first **step**\n- second step\n\nRun `make build` first:\n\n"
        "```\nmake build && ctest\n```\n\n"
        "See [the docs](https://example.com/docs) and [this](javascript:alert(1)).\n\n"
        "[@coder: please review the plan]"},
    {"when": "hostile", "reply":
        "Look: <script>window.__pwned = 1</script> and "
        "<img src=x onerror=\"window.__pwned = 2\"> and <b>bold?</b>"},
]
words = {"team": "words", "agents": [
    {"id": "lead", "leader": True, "runtime": "scripted",
     "runtime_config": {"rules": lead_rules, "default": "Noted."}},
    {"id": "coder", "runtime": "scripted",
     "runtime_config": {"default": "Reviewed: looks *good* to me."}},
    # 3,900 characters: an estimate above a cent (SPEC 8.2), not cut
    {"id": "spender", "runtime": "scripted",
     "runtime_config": {"default": "spend " * 650}},
]}
quiet = {"team": "quiet", "agents": [
    {"id": "sleepy", "leader": True, "runtime": "scripted",
     "runtime_config": {"default": "finally awake", "delay_ms": 600000}},
]}
for name, team in (("words", words), ("quiet", quiet)):
    with open(f"{d}/{name}.json", "w") as f:
        json.dump(team, f)
PY
for t in words quiet; do
	run up "$T_TMP/$t.json"
	expect_rc 0 "apply team $t"
done

"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>>"$log" &
pid=$!
port=
for _ in $(seq 1 200); do
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

shots=$(cd "$(dirname "$HUDDLE")" && pwd)/e2e-screenshots-words
rm -rf "$shots"
mkdir -p "$shots"

export HUDDLE HUDDLE_SRC HUDDLE_HOME CHROMIUM="$chromium" HUDDLE_PORT=$port HUDDLE_SHOTS=$shots
(cd "$here" && node --test --test-concurrency=1 dashboard-words.test.mjs)
RC=$?
OUT= ERR=$(tail -n 30 "$log")
expect_rc 0 "the browser tests (server log tail in stderr)"

# The server stops on SIGTERM though a turn is still sleeping, and (in a
# sanitizer build) with nothing to report.
stop_server
if grep -qE 'Sanitizer|runtime error:' "$log"; then
	fail "the server's log has sanitizer reports: $(cat "$log")"
else
	pass
fi
echo "dashboard-words: screenshots in $shots"
finish
