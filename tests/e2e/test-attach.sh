#!/usr/bin/env bash
# test-attach.sh -- `huddle attach` against a real server on a non-default
# port with a bearer token, its printed configs and commands used by the
# REAL Claude Code and Codex CLIs (pinned in tests/e2e/package.json, HOME
# and CODEX_HOME sandboxed, models faked by fake-model.mjs on loopback):
#   - with no server, attach says it uses the defaults; with one, it reads
#     the port from HUDDLE_HOME/serve.json and says so (pid); explicit
#     --port wins; a stale record (dead pid) is ignored; --public-url is
#     what the URL is built on;
#   - `--format claude` written to a project's .mcp.json, with the export
#     line eval'd and HUDDLE_TOKEN set: claude -p calls
#     mcp__huddle-coder__team_chat_post and the post is coder's; without
#     the token the call is refused;
#   - the printed `claude mcp add` and `codex mcp add` lines, run as
#     printed: both succeed, and claude / codex exec then post as coder;
#   - neither the signing secret nor the token is in anything printed or
#     written, and the committed-style files hold no signed URL either;
#   - two nodes, one store: a sig `huddle attach` made through one
#     server's home is accepted by a second server with another
#     HUDDLE_HOME on the same database (the secret lives in the store),
#     and a forged one is not.
. "$(dirname "$0")/lib.sh"

claude=$(agent_cli_bin claude) || exit $?
codex=$(agent_cli_bin codex) || exit $?
fake_model_start
export HOME=$T_TMP/user CODEX_HOME=$T_TMP/user/.codex
mkdir -p "$HOME" "$CODEX_HOME"
# the printed commands say `claude` and `codex`: these are the pinned ones
export PATH="$(dirname "$claude"):$PATH"
unset HUDDLE_TOKEN
model=http://127.0.0.1:$FAKE_MODEL_PORT
export ANTHROPIC_BASE_URL=$model ANTHROPIC_API_KEY=sk-ant-fake \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 \
	DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_MAX_RETRIES=0 \
	FAKE_OPENAI_API_KEY=sk-fake
printed=$T_TMP/printed # everything attach printed, to search for secrets
mkdir -p "$printed"
n_printed=0
keep() { n_printed=$((n_printed + 1)); printf '%s\n%s\n' "$OUT" "$ERR" >"$printed/$n_printed.txt"; }
script() { printf 'FAKE_SCRIPT:%s' "$1"; }
post_script() { # post_script TEXT: a turn that posts TEXT through huddle-coder
	script "$(python3 -c 'import json,sys; print(json.dumps({"turns":[{"tool":{"name":"team_chat_post","server":"huddle-coder","input":{"text":sys.argv[1]}}},{"text":"posted: {{tool_result}}"}]}))' "$1")"
}
posted_by() { # posted_by TEXT: the authors of posts with that body
	"$HUDDLE" chat read dev --json --limit 500 |
		python3 -c 'import json,sys; print(" ".join(p["authorAgentId"] for p in json.load(sys.stdin)["posts"] if p["body"]==sys.argv[1]))' "$1"
}

run team create dev --name Dev
run agent add dev coder --role builder
expect_rc 0 "an agent to attach"
run agent add dev tester
run team create ops
run agent add ops ghost

# ---- no server: the defaults, and it says so --------------------------------
run attach dev coder
keep
expect_rc 0 "attach without a server"
expect_contains "$ERR" "no server is running for this home; using the defaults: http://127.0.0.1:7340" \
	"says it uses the defaults"
expect_contains "$OUT" "export HUDDLE_CODER_URL='http://127.0.0.1:7340/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=" \
	"the export line, on the default port"
expect_eq "$(grep -c -- '--header\|--bearer-token-env-var' <<<"$OUT")" "0" "no token needed: none asked for"
run attach dev ghost
expect_rc 1 "an agent of another team"
expect_contains "$ERR" 'agent "ghost" is not in team dev' "is refused, naming the team"
run attach dev coder --as tester
expect_rc 2 "two agents"
run attach dev coder --format yaml
expect_rc 2 "an unknown format"
expect_contains "$ERR" "--format must be text, claude, codex, json or env" "names the formats"

# ---- an empty HUDDLE_TOKEN is no token: the server asks for none, and
# serve.json must not tell attach otherwise
HUDDLE_TOKEN= "$HUDDLE" serve --port 0 >"$T_TMP/serve0.out" 2>"$T_TMP/serve0.err" &
server=$!
trap 'kill "$server" "$FAKE_MODEL_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T_TMP"' EXIT
for _ in $(seq 1 200); do [ -s "$HUDDLE_HOME/serve.json" ] && break; sleep 0.1; done
expect_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$HUDDLE_HOME/serve.json")" \
	"False" "serve.json: an empty HUDDLE_TOKEN requires no token"
run attach dev coder
expect_rc 0 "attach to the server with an empty HUDDLE_TOKEN"
expect_eq "$(grep -c -- '--header\|--bearer-token-env-var' <<<"$OUT")" "0" "no token asked for"
kill "$server"
wait "$server" 2>/dev/null
for _ in $(seq 1 100); do [ -e "$HUDDLE_HOME/serve.json" ] || break; sleep 0.1; done

# ---- a server on a non-default port with a token -----------------------------
token=tok-$RANDOM-$RANDOM-attach
HUDDLE_TOKEN=$token "$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
server=$!
for _ in $(seq 1 200); do [ -s "$HUDDLE_HOME/serve.json" ] && break; sleep 0.1; done
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$HUDDLE_HOME/serve.json")
expect_eq "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["pid"], j["bind"], j["token"], j["public_url"])' "$HUDDLE_HOME/serve.json")" \
	"$server 127.0.0.1 True None" "serve.json: pid, bind address, a token required, no public URL"
case "$(cat "$HUDDLE_HOME/serve.json")" in *"$token"*) fail "serve.json holds the token" ;; *) pass ;; esac
[ "$port" != 7340 ] && pass || fail "the server took the default port"

run attach dev coder
keep
expect_rc 0 "attach with the server running"
expect_contains "$ERR" "using the running server at http://127.0.0.1:$port (pid $server)" \
	"reads the port from the record and says so"
expect_contains "$ERR" "requires a bearer token: the configs read it from \$HUDDLE_TOKEN" \
	"says which variable carries the token"
expect_contains "$OUT" "export HUDDLE_CODER_URL='http://127.0.0.1:$port/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=" \
	"the export line, on the server's port"
claude_line=$(grep '^claude mcp add' <<<"$OUT")
codex_line=$(grep '^codex mcp add' <<<"$OUT")
expect_eq "$claude_line" "claude mcp add --transport http huddle-coder '\${HUDDLE_CODER_URL}' --header 'Authorization: Bearer \${HUDDLE_TOKEN}'" \
	"the claude mcp add line: references, not values"
expect_eq "$codex_line" "codex mcp add huddle-coder --url \"\$HUDDLE_CODER_URL\" --bearer-token-env-var HUDDLE_TOKEN" \
	"the codex mcp add line: the token from its variable"
expect_contains "$OUT" "--allowedTools mcp__huddle-coder" "the allowedTools hint"
url=$(grep '^export HUDDLE_CODER_URL=' <<<"$OUT" | sed "s/^export HUDDLE_CODER_URL='\(.*\)'\$/\1/")

# the older spellings answer the same
run attach coder --format json
keep
expect_eq "$(json_get "$OUT" 'j["url"]')" "$url" "attach AGENT (the older spelling)"
expect_eq "$(json_get "$OUT" '[j["name"], j["url_env"], j["token_env"], j["server"]["source"], j["server"]["pid"]]')" \
	"['huddle-coder', 'HUDDLE_CODER_URL', 'HUDDLE_TOKEN', 'running', $server]" "the JSON names it all"
run attach dev --as coder --format env
keep
expect_eq "$OUT" "export HUDDLE_CODER_URL='$url'" "attach TEAM --as AGENT, --format env"
run attach dev coder --port 7999 --format env
keep
expect_contains "$OUT" "http://127.0.0.1:7999/mcp?" "an explicit --port wins"
expect_contains "$ERR" "as given (--host/--port)" "and it says so"
run attach dev coder --host ::1 --format env
expect_contains "$OUT" "http://[::1]:$port/mcp?" "an IPv6 --host goes in brackets, the port still the server's"
run attach dev coder --host "evil/x?y" --format env
expect_rc 2 "a --host that is not a host"

# ---- Claude Code: the printed .mcp.json in a project ------------------------
proj=$T_TMP/project
mkdir -p "$proj"
run attach dev coder --format claude
keep
expect_rc 0 "--format claude"
printf '%s\n' "$OUT" >"$proj/.mcp.json"
expect_eq "$(json_get "$OUT" 'j["mcpServers"]["huddle-coder"]')" \
	"{'type': 'http', 'url': '\${HUDDLE_CODER_URL}', 'headers': {'Authorization': 'Bearer \${HUDDLE_TOKEN}'}}" \
	"the .mcp.json refers to the variables"
run attach dev coder --format env
eval "$OUT"
expect_eq "$HUDDLE_CODER_URL" "$url" "eval of --format env exports the URL"
export HUDDLE_CODER_URL
claude_p() { # claude_p PROMPT: one claude -p turn in the project, huddle-coder allowed
	(cd "$proj" && timeout 120 claude -p "$1" --allowedTools mcp__huddle-coder) >"$T_TMP/claude.out" 2>&1
}
HUDDLE_TOKEN=$token claude_p "Post it. $(post_script "from claude via .mcp.json")"
expect_eq "$?" "0" "claude -p with the printed .mcp.json"
expect_eq "$(posted_by "from claude via .mcp.json")" "coder" \
	"the model's tool call posted as coder (.mcp.json: $(cat "$T_TMP/claude.out"))"
claude_p "Post it. $(post_script "from claude without the token")"
expect_eq "$(posted_by "from claude without the token")" "" "without HUDDLE_TOKEN the server refuses the call"

# ---- claude mcp add, as printed ---------------------------------------------
mv "$proj/.mcp.json" "$T_TMP/committed.mcp.json"
(cd "$proj" && bash -c "$claude_line") >"$T_TMP/claude-add.out" 2>&1
expect_eq "$?" "0" "the printed claude mcp add runs ($(cat "$T_TMP/claude-add.out"))"
expect_eq "$(python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
print(j["projects"][sys.argv[2]]["mcpServers"]["huddle-coder"])' "$HOME/.claude.json" "$proj")" \
	"{'type': 'http', 'url': '\${HUDDLE_CODER_URL}', 'headers': {'Authorization': 'Bearer \${HUDDLE_TOKEN}'}}" \
	"Claude Code stored the references, not the values"
HUDDLE_TOKEN=$token claude_p "Post it. $(post_script "from claude via mcp add")"
expect_eq "$(posted_by "from claude via mcp add")" "coder" \
	"after claude mcp add, the tool call posts as coder ($(cat "$T_TMP/claude.out"))"

# ---- codex mcp add, as printed, then codex exec -----------------------------
(cd "$proj" && bash -c "$codex_line") >"$T_TMP/codex-add.out" 2>&1
expect_eq "$?" "0" "the printed codex mcp add runs ($(cat "$T_TMP/codex-add.out"))"
expect_contains "$(cat "$CODEX_HOME/config.toml")" "bearer_token_env_var = \"HUDDLE_TOKEN\"" \
	"Codex reads the token from HUDDLE_TOKEN"
(cd "$proj" && HUDDLE_TOKEN=$token timeout 120 codex exec --json --skip-git-repo-check -m fake-model \
	-c 'model_provider="fake"' \
	-c "model_providers.fake={name=\"fake\", base_url=\"$model/v1\", wire_api=\"responses\", env_key=\"FAKE_OPENAI_API_KEY\", request_max_retries=0, stream_max_retries=0}" \
	-c 'approval_policy="never"' -c 'check_for_update_on_startup=false' -c 'analytics.enabled=false' \
	-c 'feedback.enabled=false' -c 'otel.exporter="none"' \
	-c 'mcp_servers.huddle-coder.default_tools_approval_mode="approve"' -c mcp_servers.huddle-coder.startup_timeout_sec=120 \
	"Post it. $(post_script "from codex via mcp add")") >"$T_TMP/codex.out" 2>&1
expect_eq "$(posted_by "from codex via mcp add")" "coder" \
	"after codex mcp add, codex exec's tool call posts as coder ($(tail -5 "$T_TMP/codex.out"))"

# ---- nothing printed or written holds a secret -------------------------------
secret_hex=$(db_query "SELECT value FROM kv WHERE key = 'attach.secret'")
expect_eq "${#secret_hex}" "64" "the store's signing secret (kv attach.secret)"
files=("$printed"/*.txt "$T_TMP/committed.mcp.json" "$HOME/.claude.json" "$CODEX_HOME/config.toml" "$T_TMP/claude-add.out" "$T_TMP/codex-add.out")
leaks=""
for f in "${files[@]}"; do
	if grep -qF -- "$token" "$f" || od -An -tx1 "$f" | tr -d ' \n' | grep -q "$secret_hex" ||
		grep -qiF -- "$secret_hex" "$f"; then
		leaks="$leaks $f"
	fi
done
expect_eq "$leaks" "" "no printed or written file holds the token or the signing secret (${#files[@]} files)"
# the files a project would commit, and Claude's own, do not even hold the signed URL
expect_eq "$(grep -l 'sig=' "$T_TMP/committed.mcp.json" "$HOME/.claude.json" 2>/dev/null)" "" \
	"the .mcp.json and ~/.claude.json hold no signed URL"

# ---- a public URL, a stale record, and the server gone -----------------------
kill -TERM "$server"
wait "$server"
expect_eq "$(test -e "$HUDDLE_HOME/serve.json" && echo left || echo gone)" "gone" "serve.json goes with the server"
run attach dev coder --format env
expect_contains "$ERR" "no server is running for this home; using the defaults" "no server again: the defaults"
printf '{"pid":999999999,"start":1,"host":"127.0.0.1","bind":"127.0.0.1","port":7001,"public_url":null,"token":false}' \
	>"$HUDDLE_HOME/serve.json"
run attach dev coder --format env
expect_contains "$ERR" "no server is running for this home" "a stale record (dead pid) is ignored"
expect_contains "$OUT" "127.0.0.1:7340/" "and its port is not used"
run serve --port 0 --public-url "ftp://x"
expect_rc 2 "a --public-url that is not http(s)"
expect_contains "$ERR" "--public-url must be an http:// or https:// URL" "says what it takes"
"$HUDDLE" serve --port 0 --public-url https://huddle.example.test/team/ >"$T_TMP/serve2.out" 2>"$T_TMP/serve2.err" &
server=$!
for _ in $(seq 1 200); do
	grep -q "\"pid\":$server" "$HUDDLE_HOME/serve.json" 2>/dev/null && break
	sleep 0.1
done
run attach dev coder --format env
expect_eq "$OUT" "export HUDDLE_CODER_URL='https://huddle.example.test/team/mcp?${url#*\?}'" \
	"the URL is built on the server's --public-url"
expect_contains "$ERR" "using the running server at https://huddle.example.test/team (pid $server, its --public-url)" \
	"and says so"
kill -TERM "$server"
wait "$server"
# ---- two nodes, one store ----------------------------------------------------
# Each `huddle serve` has its own HUDDLE_HOME and they share the database.
# With HUDDLE_STORE a postgres:// URL that is the store's own sharing;
# SQLite has no second node, so node 2's huddle.db is a symbolic link to
# node 1's: a stand-in for this check only, not a setup huddle supports.
# Node 2's home holds an old-style secret file of its own: it must not
# matter, the database already has the secret.
node2=$T_TMP/node2
mkdir -m 700 "$node2"
head -c 32 /dev/urandom >"$node2/secret"
case "${HUDDLE_STORE:-sqlite}" in
postgres://* | postgresql://*) ;;
*) ln -s "$HUDDLE_HOME/huddle.db" "$node2/huddle.db" ;;
esac
"$HUDDLE" serve --port 0 >"$T_TMP/node1.out" 2>"$T_TMP/node1.err" &
n1=$!
HUDDLE_HOME=$node2 "$HUDDLE" serve --port 0 >"$T_TMP/node2.out" 2>"$T_TMP/node2.err" &
n2=$!
trap 'kill "$n1" "$n2" "$FAKE_MODEL_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T_TMP"' EXIT
wait_for 60 grep -q "huddle is running at" "$T_TMP/node1.out" || fail "node 1 did not start: $(cat "$T_TMP/node1.err")"
wait_for 60 grep -q "huddle is running at" "$T_TMP/node2.out" || fail "node 2 did not start: $(cat "$T_TMP/node2.err")"
for _ in $(seq 1 200); do grep -q "\"pid\":$n1" "$HUDDLE_HOME/serve.json" 2>/dev/null && break; sleep 0.05; done
port2=$(sed -n 's|^huddle is running at http://127\.0\.0\.1:||p' "$T_TMP/node2.out")
run attach dev coder --format json
expect_rc 0 "attach through node 1's home"
sig=$(json_get "$OUT" '__import__("urllib.parse").parse.parse_qs(j["url"].split("?", 1)[1])["sig"][0]')
expect_eq "${#sig}" "64" "node 1's URL carries a sig"
post2() { # post2 SIG TEXT: a room post on node 2 proving dev/coder with SIG
	curl -s -o "$T_TMP/node2.body" -w '%{http_code}' -X POST "http://127.0.0.1:$port2/api/teams/dev/posts" \
		-H 'Content-Type: application/json' -H "Huddle-Agent: dev/coder" -H "Huddle-Signature: $1" \
		--data "{\"text\": \"$2\"}"
}
expect_eq "$(post2 "$sig" "signed through node 1")" "201" \
	"node 2 (another HUDDLE_HOME, the same store) accepts node 1's sig ($(cat "$T_TMP/node2.body"))"
expect_eq "$(posted_by "signed through node 1")" "coder" "and the post is coder's"
forged=$(printf '%s' "$sig" | tr '0-9a-f' '1-9a-f0')
expect_eq "$(post2 "$forged" "forged on node 2")" "403" "a forged sig is refused on node 2"
expect_eq "$(posted_by "forged on node 2")" "" "and posts nothing"
expect_eq "$(HUDDLE_HOME=$node2 "$HUDDLE" attach dev coder --format json --port 7340 | json_get "$(cat)" 'j["url"].split("sig=")[1]')" \
	"$sig" "node 2's home signs the same URL"
kill -TERM "$n1" "$n2"
wait "$n1" "$n2"
finish
