#!/usr/bin/env bash
# test-readme.sh -- README's "Your first five minutes" runs as written.
# The shell block between <!-- readme-test:begin --> and
# <!-- readme-test:end --> is taken from README.md and run by bash -e from
# the repository's top directory, with `huddle` on PATH (what `make
# install` gives), changing only the values of the two variables the block
# itself sets: HUDDLE_HOME (a temporary home) and PORT (a free port). Then:
# every command succeeded, the server it started listens on that port,
# attach found it there and said so, the post, the conversation and the
# exchange happened.
. "$(dirname "$0")/lib.sh"

readme=$HUDDLE_SRC/README.md
home=$T_TMP/readme-home
port=$(free_port)
block=$(python3 - "$readme" "$home" "$port" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"<!-- readme-test:begin -->\s*```sh\n(.*?)```\s*<!-- readme-test:end -->", text, re.S)
if not m:
    sys.exit("README.md has no ```sh block between the readme-test markers")
lines = m.group(1).splitlines()
setters = [i for i, l in enumerate(lines) if re.match(r"export HUDDLE_HOME=\S+ PORT=\d+(\s|$)", l)]
if len(setters) != 1:
    sys.exit("the README block must set HUDDLE_HOME and PORT on one export line, once")
i = setters[0]
lines[i] = re.sub(r"HUDDLE_HOME=\S+", lambda _: "HUDDLE_HOME=" + sys.argv[2], lines[i], count=1)
lines[i] = re.sub(r"PORT=\d+", "PORT=" + sys.argv[3], lines[i], count=1)
print("\n".join(lines))
EOF
)
[ -n "$block" ] && pass || { fail "no block to run"; finish; exit 1; }
huddle_on_path
server_pid() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$home/serve.json" 2>/dev/null; }
trap 'p=$(server_pid); [ -n "$p" ] && kill "$p" 2>/dev/null; rm -rf "$T_TMP"' EXIT

(cd "$HUDDLE_SRC" && unset HUDDLE_HOME HUDDLE_TOKEN && timeout 600 bash -e -c "$block") \
	>"$T_TMP/out" 2>"$T_TMP/err"
RC=$?
OUT=$(cat "$T_TMP/out")
ERR=$(cat "$T_TMP/err")
expect_rc 0 "the README block ran, every command succeeding"
pid=$(server_pid)
expect_eq "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["port"], j["bind"])' "$home/serve.json")" \
	"$port 127.0.0.1" "the server it started listens on \$PORT"
expect_contains "$OUT" "huddle is running at http://127.0.0.1:$port" "the server said where"
expect_contains "$ERR" "huddle: using the running server at http://127.0.0.1:$port (pid $pid)" \
	"attach found the running server and said so"
expect_contains "$OUT" "export HUDDLE_CODER_URL='http://127.0.0.1:$port/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=" \
	"attach printed coder's URL on that port"
expect_contains "$OUT" "claude mcp add --transport http huddle-coder" "and the claude mcp add line"
expect_contains "$OUT" "@coder:" "the ask was answered by a mentioned teammate"
expect_contains "$OUT" "ended: " "the exchange ended, saying why"
export HUDDLE_HOME=$home
run chat read dev --json --limit 500
expect_eq "$(json_get "$OUT" '[p["authorAgentId"] for p in j["posts"] if p["body"]=="hello team"]')" \
	"['reviewer']" "the post is in the room, reviewer's"
kill "$pid"
for _ in $(seq 1 100); do [ -e "$home/serve.json" ] || break; sleep 0.1; done
expect_eq "$(test -e "$home/serve.json" && echo left || echo gone)" "gone" "the server stops cleanly"
finish
