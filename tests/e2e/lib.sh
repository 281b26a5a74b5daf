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
