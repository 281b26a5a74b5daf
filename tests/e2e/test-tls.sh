#!/usr/bin/env bash
# test-tls.sh -- `huddle serve --tls-cert F --tls-key F`: HTTPS for agents
# on other machines, with a CA and certificates made at test time by the
# openssl command (for huddle.test, localhost and 127.0.0.1):
#   - missing, unreadable, garbage, encrypted or mismatched certificate and
#     key files, an expired certificate: a clear error naming the file,
#     exit 1, nothing served;
#   - served with a bearer token and --public-url https://huddle.test:PORT
#     (curl --resolve points the name at 127.0.0.1): `huddle attach` prints
#     https URLs under it, its Claude Code config sends the token as a
#     header from ${HUDDLE_TOKEN} and its Codex command names the variable
#     (bearer_token_env_var); the token is never in a URL nor printed;
#   - curl with the test CA: MCP initialize, tools/list and tools/call on
#     the signed URL, a REST call, an SSE stream that gets an event, the
#     dashboard; curl with another CA, or none, is refused (exit 60);
#   - no token or a wrong one: 401 on every route family (MCP, REST
#     reads and writes, events); a foreign Host: 403;
#   - plain HTTP to the TLS port fails and the server serves on;
#   - an exchange (a request answered later, async.c) over TLS, whose
#     turn, run by the server itself, gets no https attach URL; nor does
#     one `huddle exchange` runs next to a TLS server without a token;
#   - the MCP SDK client (NODE_EXTRA_CA_CERTS = the test CA) connects over
#     https with the token as a header and posts as the attached agent
#     (tls.test.mjs), and is refused without the token or with a wrong one;
#   - bound beyond loopback (0.0.0.0, only read here) over plain HTTP,
#     serve warns once, naming what travels in clear; with TLS it does not.
. "$(dirname "$0")/lib.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
if ! command -v openssl >/dev/null 2>&1; then
	echo "$T_NAME: skipped: needs the openssl command (scripts/deps.sh test)"
	exit 77
fi
unset HUDDLE_TOKEN

# ---- a CA, a server certificate it signs, and another CA -------------------
pki=$T_TMP/pki
mkdir -p "$pki"
newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
newca() { # newca NAME: NAME.key and the self-signed NAME.pem
	newkey "$pki/$1.key" &&
		openssl req -x509 -new -key "$pki/$1.key" -out "$pki/$1.pem" -days 2 \
			-subj "/CN=huddle e2e $1" 2>/dev/null
}
newca ca && newca otherca && newkey "$pki/srv.key" &&
	openssl req -new -key "$pki/srv.key" -out "$pki/srv.csr" -subj "/CN=huddle.test" 2>/dev/null &&
	printf 'subjectAltName=DNS:huddle.test,DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$pki/ext.cnf" &&
	openssl x509 -req -in "$pki/srv.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
		-CAcreateserial -out "$pki/srv.pem" -days 2 -extfile "$pki/ext.cnf" 2>/dev/null
RC=$?
expect_rc 0 "the test PKI"

run team create dev --name Dev
run agent add dev coder --role builder
expect_rc 0 "an agent to attach"
# ops: an exec agent that records whether its turn got an attach URL
cat >"$T_TMP/env-agent.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
echo "url=${HUDDLE_MCP_URL:-none}" >>"$AGENT_LOG"
echo "$HUDDLE_AGENT done"
EOF
chmod +x "$T_TMP/env-agent.sh"
cat >"$T_TMP/ops.json" <<EOF
{"team": "ops", "agents": [{"id": "ops-lead", "leader": true, "runtime": "exec",
  "runtime_config": {"command": ["$T_TMP/env-agent.sh"], "env": {"AGENT_LOG": "$T_TMP/env.log"}}}]}
EOF
run up "$T_TMP/ops.json"
expect_rc 0 "up ops"

# ---- bad certificate and key files: a clear error, exit 1 ------------------
# serve_refused ARGS...: serve with ARGS, which must refuse to start
# (bounded, so a server that wrongly starts fails the test, not hangs it)
serve_refused() {
	OUT=$(timeout 20 "$HUDDLE" serve --port 0 "$@" 2>"$T_TMP/stderr")
	RC=$?
	ERR=$(cat "$T_TMP/stderr")
}
echo "not a certificate" >"$pki/garbage.pem"
openssl pkey -in "$pki/srv.key" -aes256 -passout pass:secret -out "$pki/enc.key" 2>/dev/null
serve_refused --tls-cert "$pki/missing.pem" --tls-key "$pki/srv.key"
expect_rc 1 "a missing certificate file"
expect_eq "$ERR" "huddle: cannot read the TLS certificate file $pki/missing.pem: No such file or directory" \
	"names the missing certificate file"
serve_refused --tls-cert "$pki/srv.pem" --tls-key "$pki/missing.key"
expect_rc 1 "a missing key file"
expect_eq "$ERR" "huddle: cannot read the TLS key file $pki/missing.key: No such file or directory" \
	"names the missing key file"
serve_refused --tls-cert "$pki/garbage.pem" --tls-key "$pki/srv.key"
expect_rc 1 "a certificate file that holds no certificate"
expect_eq "$ERR" "huddle: the TLS certificate file $pki/garbage.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)" \
	"says the certificate file holds none"
serve_refused --tls-cert "$pki/srv.pem" --tls-key "$pki/garbage.pem"
expect_rc 1 "a key file that holds no key"
expect_eq "$ERR" "huddle: the TLS key file $pki/garbage.pem holds no PEM private key (-----BEGIN PRIVATE KEY-----)" \
	"says the key file holds none"
serve_refused --tls-cert "$pki/srv.pem" --tls-key "$pki/ca.key"
expect_rc 1 "a key that is not the certificate's"
expect_eq "$ERR" "huddle: the TLS key in $pki/ca.key is not the key of the certificate in $pki/srv.pem" \
	"says the key does not match"
serve_refused --tls-cert "$pki/srv.pem" --tls-key "$pki/enc.key"
expect_rc 1 "an encrypted key"
expect_contains "$ERR" "huddle: the TLS key file $pki/enc.key is encrypted: huddle serve needs it unencrypted" \
	"says the key is encrypted"
openssl x509 -req -in "$pki/srv.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
	-out "$pki/expired.pem" -days -1 -extfile "$pki/ext.cnf" 2>/dev/null
serve_refused --tls-cert "$pki/expired.pem" --tls-key "$pki/srv.key"
expect_rc 1 "an expired certificate"
expect_eq "$ERR" "huddle: the TLS certificate in $pki/expired.pem has expired: make a new one" \
	"says the certificate has expired"
serve_refused --tls-cert "$pki" --tls-key "$pki/srv.key"
expect_rc 1 "a directory as the certificate"
expect_eq "$ERR" "huddle: the TLS certificate file $pki is not a regular file" "says it is no file"
serve_refused --tls-cert "$pki/srv.pem"
expect_rc 2 "a certificate without its key"
expect_contains "$ERR" "HTTPS needs both --tls-cert FILE and --tls-key FILE" "says both are needed"
expect_eq "$(ls "$HUDDLE_HOME/serve.json" 2>/dev/null)" "" "no refused server left a serve.json"

# ---- the server over TLS -----------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=tls-e2e-token-$RANDOM$RANDOM
B=https://huddle.test:$port
HUDDLE_TOKEN=$token "$HUDDLE" serve --port "$port" --tls-cert "$pki/srv.pem" --tls-key "$pki/srv.key" \
	--public-url "$B" >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
serve_pid=$!
wait_for 60 grep -q "huddle is running at" "$T_TMP/serve.out"
expect_eq "$(cat "$T_TMP/serve.out")" "huddle is running at https://127.0.0.1:$port
store: $(store_says)" "says it runs https, and its store"
expect_eq "$(grep -c 'warning' "$T_TMP/serve.err")" 0 "no warning on loopback"
expect_eq "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["tls"], j["token"], j["public_url"])' "$HUDDLE_HOME/serve.json")" \
	"True True $B" "serve.json says https, a token and the public URL"

# curl with the test CA, the public name resolved to loopback
C=(curl -sS --max-time 20 --cacert "$pki/ca.pem" --resolve "huddle.test:$port:127.0.0.1")
auth=(-H "Authorization: Bearer $token")

# ---- attach: https URLs under --public-url, the token only by its name -----
run attach dev coder --json
expect_rc 0 "attach while the TLS server runs"
sig_url=$(json_get "$OUT" 'j["url"]')
expect_contains "$sig_url" "$B/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=" "the signed URL is https under --public-url"
expect_eq "$(json_get "$OUT" 'j["token_env"]')" "HUDDLE_TOKEN" "the token's variable"
expect_eq "$(json_get "$OUT" 'j["mcp_json"]["mcpServers"]["huddle-coder"]')" \
	"{'type': 'http', 'url': '\${HUDDLE_CODER_URL}', 'headers': {'Authorization': 'Bearer \${HUDDLE_TOKEN}'}}" \
	"Claude Code: the token as a header from \${HUDDLE_TOKEN}, the URL from its variable"
expect_eq "$(json_get "$OUT" 'j["commands"]["codex"]')" \
	'codex mcp add huddle-coder --url "$HUDDLE_CODER_URL" --bearer-token-env-var HUDDLE_TOKEN' \
	"Codex: bearer_token_env_var names the token's variable"
run attach dev coder --format claude
expect_eq "$(json_get "$OUT" 'j["mcpServers"]["huddle-coder"]["headers"]["Authorization"]')" 'Bearer ${HUDDLE_TOKEN}' \
	"--format claude: the header"
run attach dev coder
expect_contains "$ERR" "using the running server at $B (pid $serve_pid, its --public-url)" "attach says where"
expect_contains "$OUT" "claude mcp add --transport http huddle-coder '\${HUDDLE_CODER_URL}' --header 'Authorization: Bearer \${HUDDLE_TOKEN}'" \
	"claude mcp add sends the token as a header"
printed=$OUT$ERR
for f in claude codex json env; do
	run attach dev coder --format "$f"
	printed=$printed$OUT$ERR
done
case "$printed" in
*"$token"*) fail "the token's value was printed by attach" ;;
*) pass ;;
esac

# ---- curl over TLS with the test CA ----------------------------------------
mcp() { # mcp BODY [ARGS...]: POST a JSON-RPC body to the signed URL
	local body=$1
	shift
	"${C[@]}" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		"$@" -d "$body" "$sig_url"
}
out=$(mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' "${auth[@]}")
expect_eq "$(json_get "$out" 'j["result"]["protocolVersion"]')" "2025-06-18" "MCP initialize over TLS"
out=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "${auth[@]}")
expect_eq "$(json_get "$out" '"team_chat_post" in [t["name"] for t in j["result"]["tools"]]')" "True" \
	"MCP tools/list over TLS"
out=$(mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"team_chat_post","arguments":{"text":"over tls from curl"}}}' "${auth[@]}")
expect_eq "$(json_get "$out" 'j["result"]["structuredContent"]["posted"]["authorAgentId"]')" "coder" \
	"MCP tools/call over TLS posts as the attached agent"
out=$("${C[@]}" "${auth[@]}" "$B/api/teams")
expect_eq "$(json_get "$out" '[t["id"] for t in j["teams"]]')" "['dev', 'ops']" "a REST call over TLS"
code=$("${C[@]}" -o /dev/null -w '%{http_code}' "$B/")
expect_eq "$code" 200 "the dashboard over TLS"

# an SSE stream over TLS gets the event of a post made meanwhile
"${C[@]}" --max-time 60 -N "${auth[@]}" -H 'Accept: text/event-stream' "$B/api/events?team=dev" >"$T_TMP/sse" 2>"$T_TMP/sse.err" &
sse_pid=$!
wait_for 20 grep -q '^retry:\|^:' "$T_TMP/sse" || sleep 1
"$HUDDLE" chat post dev "while streaming over tls" --as coder >/dev/null
wait_for 30 grep -q '^event: team_chat_post' "$T_TMP/sse"
kill "$sse_pid" 2>/dev/null
wait "$sse_pid" 2>/dev/null
expect_contains "$(cat "$T_TMP/sse")" "event: team_chat_post" "an SSE stream over TLS gets the post's event"

# another CA, or the system's: the certificate is refused
curl -sS --max-time 20 --cacert "$pki/otherca.pem" --resolve "huddle.test:$port:127.0.0.1" \
	"${auth[@]}" -o /dev/null "$B/api/teams" 2>/dev/null
RC=$?
expect_rc 60 "curl with another CA refuses the certificate"
curl -sS --max-time 20 --resolve "huddle.test:$port:127.0.0.1" "${auth[@]}" -o /dev/null "$B/api/teams" 2>/dev/null
RC=$?
expect_rc 60 "curl with the system's CAs refuses the certificate"

# ---- the token on every route family ---------------------------------------
refused='401 {"error":"missing or wrong bearer token"}'
mcp_list='{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
for h in "" "Authorization: Bearer wrong-$token" "Authorization: Basic $token"; do
	what=${h:-no token}
	hdr=(-H "${h:-X-None: 1}")
	expect_curl "$refused" "MCP with $what" "${C[@]:1}" "${hdr[@]}" -H 'Content-Type: application/json' \
		-d "$mcp_list" "$sig_url"
	expect_curl "$refused" "REST read with $what" "${C[@]:1}" "${hdr[@]}" "$B/api/teams"
	expect_curl "$refused" "REST write with $what" "${C[@]:1}" "${hdr[@]}" -H 'Content-Type: application/json' \
		-d '{"message":"sneaked in"}' "$B/api/teams/dev/chat"
	expect_curl "$refused" "events with $what" "${C[@]:1}" "${hdr[@]}" "$B/api/events?team=dev"
done
expect_curl '403 {"error":"Origin or Host is not this server"}' "a foreign Host over TLS" \
	"${C[@]:1}" "${auth[@]}" -H "Host: elsewhere.test:$port" "$B/api/teams"
expect_eq "$("$HUDDLE" chat read dev --json | python3 -c 'import json,sys; print(sum(p["body"]=="sneaked in" for p in json.load(sys.stdin)["posts"]))')" \
	"0" "nothing refused was posted"

# ---- plain HTTP to the TLS port fails; the server serves on ----------------
curl -sS --max-time 20 "${auth[@]}" -o /dev/null "http://127.0.0.1:$port/api/teams" 2>/dev/null
RC=$?
if [ "$RC" -ne 0 ]; then pass; else fail "plain HTTP to the TLS port was answered"; fi
out=$("${C[@]}" "${auth[@]}" "$B/api/teams")
expect_eq "$(json_get "$out" '[t["id"] for t in j["teams"]]')" "['dev', 'ops']" "served over TLS after a plain HTTP attempt"
kill -0 "$serve_pid" 2>/dev/null
RC=$?
expect_rc 0 "the server is still running"

# ---- a long request (an exchange, answered later) over TLS; the server's
# own turns attach over stdio, not to the https port they could not trust
out=$("${C[@]}" --max-time 120 "${auth[@]}" -H 'Content-Type: application/json' \
	-d '{"teamId":"ops","stimulus":"report your MCP","maxExchangeTurns":1}' "$B/api/team-chat/exchange")
expect_eq "$(json_get "$out" '(j["ok"], j["result"]["turnsTaken"])')" "(True, 1)" "an exchange over TLS: $out"
expect_eq "$(cat "$T_TMP/env.log")" "url=none" "the server's own turn got no https attach URL"

# ---- the MCP SDK client over https -----------------------------------------
need_node_modules @modelcontextprotocol/sdk
run attach dev coder --host localhost --json
sdk_url=$(json_get "$OUT" 'j["url"]')
expect_contains "$sdk_url" "https://localhost:$port/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=" \
	"attach --host keeps the running server's https"
if ATTACH_URL=$sdk_url HUDDLE_TOKEN=$token NODE_EXTRA_CA_CERTS=$pki/ca.pem \
	node --test --test-reporter=spec "$E2E/tls.test.mjs"; then pass; else fail "tls.test.mjs"; fi
expect_eq "$("$HUDDLE" chat read dev --json | python3 -c 'import json,sys; print([p["authorAgentId"] for p in json.load(sys.stdin)["posts"] if p["body"]=="over tls from the sdk"])')" \
	"['coder']" "the SDK's post is coder's"

kill "$serve_pid"
wait "$serve_pid"
RC=$?
expect_rc 0 "the TLS server stops cleanly"

# ---- the CLI's engines next to a TLS server without a token: their turns
# attach over stdio too (serve.json says tls), not to the https port
"$HUDDLE" serve --port 0 --tls-cert "$pki/srv.pem" --tls-key "$pki/srv.key" \
	>"$T_TMP/serve3.out" 2>"$T_TMP/serve3.err" &
serve3=$!
wait_for 60 grep -q "huddle is running at https://127.0.0.1:" "$T_TMP/serve3.out" ||
	fail "the tokenless TLS server did not start: $(cat "$T_TMP/serve3.err")"
: >"$T_TMP/env.log"
run exchange ops --stimulus "report your MCP" --max-turns 1
expect_rc 0 "huddle exchange next to a TLS server"
expect_eq "$(cat "$T_TMP/env.log")" "url=none" "the CLI's turn got no https attach URL"
kill "$serve3"
wait "$serve3"
RC=$?
expect_rc 0 "the tokenless TLS server stops cleanly"

# ---- attach without a server: --public-url ---------------------------------
run attach dev coder --public-url "https://huddle.test:7443/" --json
expect_contains "$(json_get "$OUT" 'j["url"]')" "https://huddle.test:7443/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=" \
	"attach --public-url without a server"
run attach dev coder --public-url "https://huddle.test:7443"
expect_contains "$ERR" "huddle: using https://huddle.test:7443, as given (--public-url); no server is running for this home" \
	"attach says it uses --public-url"
run attach dev coder --public-url "https://huddle.test" --port 7443
expect_rc 2 "--public-url with --port"
expect_contains "$ERR" "give --public-url or --host/--port, not both" "says to pick one"

# ---- beyond loopback: the warning (read, then the server is stopped) -------
# warn_check DESCRIPTION ARGS...: serve on 0.0.0.0 with ARGS until it
# runs, then stop it; its stderr is in $ERR
warn_check() {
	local what=$1 pid
	shift
	rm -f "$T_TMP/w.out" "$T_TMP/w.err" # not the last call's, read too soon
	"$HUDDLE" serve --bind 0.0.0.0 --port 0 --token "$token" "$@" >"$T_TMP/w.out" 2>"$T_TMP/w.err" &
	pid=$!
	wait_for 60 grep -q "huddle is running at" "$T_TMP/w.out" || fail "$what: did not start: $(cat "$T_TMP/w.err")"
	kill "$pid"
	wait "$pid"
	RC=$?
	ERR=$(cat "$T_TMP/w.err")
	expect_rc 0 "$what: stops cleanly"
}
warn_check "plain HTTP on 0.0.0.0"
expect_eq "$(grep -c 'huddle: warning:' <<<"$ERR")" 1 "one warning beyond loopback without TLS"
expect_contains "$ERR" "huddle: warning: serving 0.0.0.0 beyond loopback over plain HTTP: the bearer token and the signed attach URLs travel in clear" \
	"the warning names the risk"
warn_check "TLS on 0.0.0.0" --tls-cert "$pki/srv.pem" --tls-key "$pki/srv.key"
expect_eq "$(grep -c 'warning' <<<"$ERR")" 0 "no warning beyond loopback with TLS"
expect_contains "$(cat "$T_TMP/w.out")" "huddle is running at https://0.0.0.0:" "says https on 0.0.0.0"

finish
