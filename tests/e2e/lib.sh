# lib.sh -- helpers for end-to-end tests of the real binary.
# Source it: `. "$(dirname "$0")/lib.sh"`. Each test gets a fresh
# HUDDLE_HOME in a temporary directory, removed on exit.
set -u
HUDDLE=${HUDDLE:?set HUDDLE to the huddle binary}
HUDDLE_SRC=${HUDDLE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/huddle-e2e-XXXXXX")
export HUDDLE_HOME="$T_TMP/home"
trap 'rm -rf "$T_TMP"' EXIT
T_FAILS=0
T_PASSES=0
T_NAME=$(basename "$0" .sh)

# run CMD...: runs huddle, capturing stdout in $OUT, stderr in $ERR, the
# exit code in $RC.
run() {
	OUT=$("$HUDDLE" "$@" 2>"$T_TMP/stderr")
	RC=$?
	ERR=$(cat "$T_TMP/stderr")
}

pass() { T_PASSES=$((T_PASSES + 1)); }
fail() {
	T_FAILS=$((T_FAILS + 1))
	echo "FAIL [$T_NAME]: $*" >&2
}

# expect_rc N DESCRIPTION
expect_rc() {
	if [ "$RC" -eq "$1" ]; then pass; else
		fail "$2: exit $RC, wanted $1 (stdout: $OUT) (stderr: $ERR)"
	fi
}
# expect_eq ACTUAL WANTED DESCRIPTION
expect_eq() {
	if [ "$1" == "$2" ]; then pass; else
		fail "$3: got [$1], wanted [$2]"
	fi
}
# expect_contains HAYSTACK NEEDLE DESCRIPTION
expect_contains() {
	case "$1" in
	*"$2"*) pass ;;
	*) fail "$3: [$1] does not contain [$2]" ;;
	esac
}
# json_get JSON EXPR: evaluate a Python expression on the parsed JSON `j`.
json_get() {
	python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}
# expect_json TEXT DESCRIPTION: TEXT parses as JSON.
expect_json() {
	if python3 -c 'import json,sys; json.loads(sys.argv[1])' "$1" 2>/dev/null; then
		pass
	else
		fail "$2: not JSON: $1"
	fi
}

# finish: print the summary line and exit non-zero on any failure.
finish() {
	echo "$T_NAME: $T_PASSES passed, $T_FAILS failed"
	[ "$T_FAILS" -eq 0 ]
}

# ---- the real agent CLIs against tests/e2e/fake-model.mjs ----------------

# agent_cli_bin claude|codex: the pinned CLI in tests/e2e/node_modules; a
# test without them (ctest run by hand before `make test` installed them)
# is skipped, saying why (exit 77).
agent_cli_bin() {
	local bin="$HUDDLE_SRC/tests/e2e/node_modules/.bin/$1"
	if [ ! -x "$bin" ] || ! command -v node >/dev/null 2>&1; then
		echo "$T_NAME: skipped: needs node and $bin (make test installs it: npm ci in tests/e2e)"
		exit 77
	fi
	echo "$bin"
}

# fake_model_start: the fake model server on 127.0.0.1, killed when the
# test exits; sets FAKE_MODEL_PORT and FAKE_MODEL_LOG.
fake_model_start() {
	FAKE_MODEL_LOG=$T_TMP/fake-model.jsonl
	: >"$FAKE_MODEL_LOG"
	node "$HUDDLE_SRC/tests/e2e/fake-model.mjs" --port-file "$T_TMP/fake-model.port" \
		--log "$FAKE_MODEL_LOG" 2>>"$T_TMP/fake-model.err" &
	FAKE_MODEL_PID=$!
	trap 'kill "$FAKE_MODEL_PID" 2>/dev/null; wait "$FAKE_MODEL_PID" 2>/dev/null; rm -rf "$T_TMP"' EXIT
	for _ in $(seq 1 100); do
		[ -s "$T_TMP/fake-model.port" ] && break
		sleep 0.1
	done
	FAKE_MODEL_PORT=$(cat "$T_TMP/fake-model.port" 2>/dev/null)
	if [ -z "$FAKE_MODEL_PORT" ]; then
		echo "FAIL [$T_NAME]: the fake model did not start: $(cat "$T_TMP/fake-model.err")" >&2
		exit 1
	fi
	export FAKE_MODEL_PORT FAKE_MODEL_LOG
}

# fake_model_requests PATH: how many requests the fake model got on PATH.
fake_model_requests() {
	python3 -c 'import json,sys
n=0
for l in open(sys.argv[1]):
    if json.loads(l)["path"].split("?")[0]==sys.argv[2]: n+=1
print(n)' "$FAKE_MODEL_LOG" "$1"
}
