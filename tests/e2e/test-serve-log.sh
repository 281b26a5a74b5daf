#!/usr/bin/env bash
# test-serve-log.sh -- what `huddle serve` logs on stderr (log.c,
# server.c (6), eventlog.c): one line per request (method, path, status,
# bytes, duration) and one per engine event (an exchange run by another
# process of the same home: turn_started, turn_completed, turn_bound_hit),
# in text and, with --log-format json, one JSON object per line; neither
# format carries the bearer token, a ?token= or a signed URL's sig, nor a
# colour escape (stderr here is a file). --quiet and --log-level warn
# leave the request and event lines out; bad values are usage errors.
. "$(dirname "$0")/lib.sh"

token=log-test-token-$$-secret
sig_url=
trap '[ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$T_TMP"' EXIT

run up "$HUDDLE_SRC/examples/dev-team.json"
expect_rc 0 "up the example team"

# usage errors, before anything serves
run serve --log-format yaml
expect_rc 2 "--log-format yaml"
expect_contains "$ERR" '--log-format must be text or json, not "yaml"' "the format refusal"
run serve --log-level loud
expect_rc 2 "--log-level loud"
expect_contains "$ERR" '--log-level must be debug, info, warn, error or off, not "loud"' "the level refusal"
run serve --quiet --log-level info
expect_rc 2 "--quiet with --log-level"

# traffic: an authorized REST read (the token in the header and in
# ?token=), one refused without it, a signed attach URL's MCP call, and
# an exchange run by the CLI on the same home
traffic() {
	curl -s -o /dev/null -H "Authorization: Bearer $token" "$url/api/teams?token=$token"
	curl -s -o /dev/null "$url/api/teams/dev"
	sig_url=$("$HUDDLE" attach dev coder --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])' 2>/dev/null)
	case "$sig_url" in
	*sig=*) pass ;;
	*) fail "attach gave no signed URL: [$sig_url]" ;;
	esac
	curl -s -o /dev/null -X POST -H "Authorization: Bearer $token" \
		-H 'Content-Type: application/json' \
		-d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$sig_url"
	"$HUDDLE" exchange dev --stimulus "status, please" --max-turns 1 >/dev/null 2>&1
	wait_for 10 grep -q turn_bound_hit "$T_TMP/serve.err" ||
		fail "no turn_bound_hit line: $(cat "$T_TMP/serve.err")"
	kill "$serve_pid"
	wait "$serve_pid"
	serve_pid=
}

# no secret and no colour in a log
clean_log() {
	local log=$1 what=$2 sig
	sig=${sig_url##*sig=}
	sig=${sig%%&*}
	expect_eq "$(grep -c -- "$token" "$log")" 0 "$what: no token"
	if [ -n "$sig" ]; then
		expect_eq "$(grep -c -- "$sig" "$log")" 0 "$what: no attach sig"
	fi
	expect_eq "$(grep -c $'\033' "$log")" 0 "$what: no colour escapes"
}

# ---- text ----
HUDDLE_LOG=info HUDDLE_TOKEN=$token serve_bg
traffic
log=$T_TMP/serve.err
grep ' http I: 127.0.0.1 "GET /api/teams" 200 ' "$log" >"$T_TMP/l1"
expect_eq "$(wc -l <"$T_TMP/l1")" 1 "one line for the authorized GET"
expect_eq "$(grep -cE '^[0-9T:.-]+Z [0-9]+ http I: 127\.0\.0\.1 "GET /api/teams" 200 [0-9]+B [0-9.]+ms$' "$T_TMP/l1")" 1 \
	"text request line: time, pid, peer, method, path, status, bytes, duration"
expect_eq "$(grep -c ' http I: 127.0.0.1 "GET /api/teams/dev" 401 ' "$log")" 1 "the refused GET is logged with its 401"
expect_eq "$(grep -c ' http I: 127.0.0.1 "POST /mcp" 200 ' "$log")" 1 "the MCP call, by its path only"
expect_eq "$(grep -cE ' event I: turn_started team=dev agent=[a-z-]+ room_id=team:dev turn=1$' "$log")" 1 \
	"text turn_started line"
expect_eq "$(grep -cE ' event I: turn_completed team=dev agent=[a-z-]+ room_id=team:dev turn=1 .*reason=success failed=false duration_ms=[0-9]+$' "$log")" 1 \
	"text turn_completed line"
expect_eq "$(grep -cE ' event I: turn_bound_hit team=dev room_id=team:dev reason=[a-z_]+ max_turns=1 turns_taken=1$' "$log")" 1 \
	"text turn_bound_hit line"
clean_log "$log" text
cp "$log" "$T_TMP/text.log"

# ---- json ----
HUDDLE_LOG=info HUDDLE_TOKEN=$token serve_bg --log-format json
traffic
log=$T_TMP/serve.err
python3 - "$log" >"$T_TMP/json.check" 2>&1 <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]  # every line is one JSON object
for o in objs:
    assert set(["ts", "pid", "component", "level", "msg"]) <= set(o), o
req = [o for o in objs if o["component"] == "http" and o.get("path") == "/api/teams"]
assert len(req) == 1, req
r = req[0]
assert (r["method"], r["status"], r["peer"], r["aborted"]) == ("GET", 200, "127.0.0.1", False), r
assert r["bytes"] > 0 and r["duration_ms"] >= 0 and r["level"] == "info", r
assert r["msg"] == "GET /api/teams 200", r
mcp = [o for o in objs if o.get("path") == "/mcp"]
assert len(mcp) == 1 and mcp[0]["status"] == 200, mcp
ev = [o["event"] for o in objs if o["component"] == "event"]
kinds = [e["kind"] for e in ev]
assert kinds == ["turn_started", "turn_completed", "turn_bound_hit"], kinds
assert ev[0]["team"] == "dev" and ev[0]["data"] == {"room_id": "team:dev", "turn": 1}, ev[0]
assert ev[1]["data"]["reason"] == "success" and ev[1]["seq"] > ev[0]["seq"], ev[1]
assert ev[2]["agent"] is None and ev[2]["data"]["turns_taken"] == 1, ev[2]
shut = [o for o in objs if o["component"] == "serve"]
assert len(shut) == 1 and shut[0]["msg"] == "SIGTERM received; shutting down", shut
print("ok")
EOF
expect_eq "$(cat "$T_TMP/json.check")" ok "json lines: request and event fields"
clean_log "$log" json

# ---- --quiet and --log-level warn: no request or event line ----
for quiet in --quiet "--log-level warn"; do
	# shellcheck disable=SC2086
	HUDDLE_LOG=info HUDDLE_TOKEN=$token serve_bg $quiet
	curl -s -o /dev/null -H "Authorization: Bearer $token" "$url/api/teams"
	"$HUDDLE" exchange dev --stimulus "again" --max-turns 1 >/dev/null 2>&1
	kill "$serve_pid"
	wait "$serve_pid"
	serve_pid=
	expect_eq "$(grep -cE ' (http|event) I: ' "$T_TMP/serve.err")" 0 \
		"$quiet: no request or event lines"
done

# ---- HUDDLE_LOG_FORMAT=json, for a unit's Environment= ----
HUDDLE_LOG=info HUDDLE_LOG_FORMAT=json HUDDLE_TOKEN=$token serve_bg
curl -s -o /dev/null -H "Authorization: Bearer $token" "$url/api/teams"
kill "$serve_pid"
wait "$serve_pid"
serve_pid=
expect_eq "$(python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("path") == "/api/teams"))' "$T_TMP/serve.err" 2>&1)" 1 \
	"HUDDLE_LOG_FORMAT=json"

finish
