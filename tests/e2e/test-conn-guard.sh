#!/usr/bin/env bash
# test-conn-guard.sh -- connections are a guarded resource (README
# "Connections"): a client holding many slow partial requests from one
# address (127.0.0.2) does not leave another client (127.0.0.1)
# unanswered; the per-address limit refuses its excess; the request
# deadline closes connections that trickle bytes; a follower past the
# event-stream budget is answered 503 JSON; nonsense limits are refused.
# Only "answered at all" is asserted here, with generous bounds: how fast
# is the benchmark's business (bench/bench-conn.c).
. "$(dirname "$0")/lib.sh"
"$HUDDLE" up "$HUDDLE_SRC/examples/dev-team.json" >/dev/null

# --- nonsense limits: a clear error, and nothing served
run serve --port 0 --max-connections 200 --max-followers 200
expect_rc 1 "followers as many as connections"
expect_contains "$ERR" "--max-followers 200 must be below --max-connections 200" "followers error"
run serve --port 0 --max-connections 200 --max-per-address 500
expect_rc 1 "per-address over the total"
expect_contains "$ERR" "--max-per-address 500 is over --max-connections 200" "per-address error"
run serve --port 0 --header-timeout 0
expect_rc 2 "zero deadline"
expect_contains "$ERR" "--header-timeout must be between 1 and 3600" "deadline error"
run serve --port 0 --max-connections 99999999
expect_rc 2 "absurd limit"
run serve --port 0 --max-connections 900000
expect_rc 1 "a limit beyond the open-file limit"
expect_contains "$ERR" "raise \`ulimit -n\`" "open-file limit named"

HUDDLE_LOG=info "$HUDDLE" serve --port 0 --max-connections 400 --max-per-address 20 \
	--max-followers 3 --header-timeout 2 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
srv=$!
for _ in $(seq 200); do grep -q "running at" "$T_TMP/serve.out" && break; sleep 0.05; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T_TMP/serve.out")
B="http://127.0.0.1:$port"
expect_contains "$(cat "$T_TMP/serve.err")" "connections: at most 400 (the last 50 for loopback and token holders), 20 per address sending a request or idle, 3 event streams; a request has 2 s to arrive" "effective limits logged"

# --- the attack: 150 slow partial requests from 127.0.0.2, a byte each
# 400 ms, watched for 7 s
node "$HUDDLE_SRC/tests/e2e/slow-clients.mjs" --port "$port" --from 127.0.0.2 \
	--count 150 --interval-ms 400 --watch-ms 7000 >"$T_TMP/attack.json" 2>"$T_TMP/attack.err" &
attacker=$!
sleep 1

# another client is answered meanwhile: a REST read and an MCP post
code=$(curl -s -o "$T_TMP/teams.json" -w '%{http_code}' --max-time 30 "$B/api/teams")
expect_eq "$code" "200" "REST read answered during the attack"
expect_eq "$(json_get "$(cat "$T_TMP/teams.json")" '[t["id"] for t in j["teams"]]')" "['dev']" "REST read's answer"
url=$("$HUDDLE" attach reviewer --format json --port "$port" | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])')
reply=$(curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"team_chat_post","arguments":{"text":"posted under attack"}}}' "$url")
expect_contains "$reply" '"authorAgentId":"reviewer"' "MCP post answered during the attack"

wait "$attacker"
expect_eq "$?" "0" "attacker ran (stderr: $(cat "$T_TMP/attack.err"))"
A=$(cat "$T_TMP/attack.json")
expect_eq "$(json_get "$A" 'j["opened"]')" "150" "the attacker connected 150 times"
# per-address limit: at most 20 held, the rest refused at once
expect_eq "$(json_get "$A" 'j["held"] <= 20 and j["held"] >= 1')" "True" "per-address limit holds ($A)"
expect_eq "$(json_get "$A" 'j["refused"] >= 130')" "True" "the excess is refused ($A)"
# the deadline: every held one was closed by the server, while still
# trickling bytes (which would reset an idle timeout), after about 2 s
expect_eq "$(json_get "$A" 'all(t is not None and 1500 <= t <= 6500 for t in j["held_closed_ms"])')" "True" \
	"trickling connections closed at the request deadline ($A)"
expect_eq "$(json_get "$A" 'j["trickled_max"] >= 3')" "True" "they were trickling when closed ($A)"
sleep 1 # the next report line of the guard
expect_contains "$(cat "$T_TMP/serve.err")" "connection guard: refused" "the refusals are logged"

# --- followers: 3 streams at most, the 4th is answered 503 JSON
for i in 1 2 3; do
	curl -s -N --max-time 60 -H 'Accept: text/event-stream' "$B/api/events" >"$T_TMP/follow$i" &
	eval "follower$i=\$!"
done
for _ in $(seq 200); do
	[ -s "$T_TMP/follow1" ] && [ -s "$T_TMP/follow2" ] && [ -s "$T_TMP/follow3" ] && break
	sleep 0.05
done
expect_contains "$(cat "$T_TMP/follow3")" "retry: 1000" "third follower streams"
code=$(curl -s -o "$T_TMP/f4.json" -D "$T_TMP/f4.h" -w '%{http_code}' --max-time 30 \
	-H 'Accept: text/event-stream' "$B/api/events")
expect_eq "$code" "503" "fourth follower refused"
expect_eq "$(cat "$T_TMP/f4.json")" '{"error":"too many event streams open (3): retry later"}' "503 JSON"
expect_contains "$(tr -d '\r' <"$T_TMP/f4.h")" "Retry-After: 5" "Retry-After"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$B/api/teams/dev")
expect_eq "$code" "200" "requests still served with the followers' budget full"
kill "$follower1"
wait "$follower1" 2>/dev/null
# a stream waiting for events notices its follower left (the server
# polls suspended streams about once a second): its place is free again
ok=0
for _ in $(seq 60); do
	curl -s -N --max-time 1 -H 'Accept: text/event-stream' "$B/api/events" >"$T_TMP/f5" 2>/dev/null
	grep -q "retry: 1000" "$T_TMP/f5" && { ok=1; break; }
	sleep 0.5
done
expect_eq "$ok" "1" "a follower gets in again once one left"
kill "$follower2" "$follower3"
wait "$follower2" "$follower3" 2>/dev/null

kill -TERM "$srv"
wait "$srv"
expect_eq "$?" 0 "serve exits 0 on SIGTERM"
run chat read dev --json
expect_contains "$OUT" "posted under attack" "the post under attack landed"
finish
