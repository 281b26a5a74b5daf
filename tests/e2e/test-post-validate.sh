#!/usr/bin/env bash
# test-post-validate.sh -- one validation rule for room posts on every
# surface: the same bad posts through the CLI (`huddle chat post`) and REST
# (POST /api/teams/TEAM/posts) get the same error text. The table mirrors
# the ones in tests/unit/room/test-validate.c (the library) and
# tests/e2e/mcp.test.mjs (team_chat_post); keep the three in step. The
# same holds for mailbox messages and task subjects, checked after it.
. "$(dirname "$0")/lib.sh"
"$HUDDLE" up "$HUDDLE_SRC/examples/dev-team.json" >/dev/null
"$HUDDLE" team create ops >/dev/null
"$HUDDLE" agent add ops sre --leader >/dev/null

too_long=$(head -c 100001 /dev/zero | tr '\0' a)

# name, team, author, body, REST status, error text. Invalid UTF-8 is only
# carried by the CLI: JSON (REST, MCP) cannot hold it.
names=("empty" "spaces" "whitespace mix" "newlines" "too long" "invalid utf-8" "unknown team" "non-member author")
teams=(dev dev dev dev dev dev ghost dev)
authors=(coder coder coder coder coder coder coder sre)
bodies=("" "   " $' \t\r\n\v\f' $'\n\n' "$too_long" $'bad \xff byte' "hello" "hello")
codes=(400 400 400 400 413 - 404 422)
wants=("post body must not be empty" "post body must not be empty"
	"post body must not be empty" "post body must not be empty"
	"post body is 100001 bytes; the limit is 100000"
	"post body must be valid UTF-8" 'team "ghost" not found'
	'no member "sre" in team dev')

# --- the CLI
for i in "${!names[@]}"; do
	run chat post "${teams[$i]}" "${bodies[$i]}" --as "${authors[$i]}"
	expect_rc 1 "cli: ${names[$i]}"
	expect_eq "$ERR" "huddle: ${wants[$i]}" "cli: ${names[$i]}"
done

# --- REST
serve_bg
B=$url

# rest_post PATH JSON AGENT: sets CODE and BODY; the request proves AGENT
# (its attach sig as the REST credential), as only an agent may post as
# itself
rest_post() {
	local team sig
	team=$("$HUDDLE" --json agent show "$3" | json_get "$(cat)" 'j["team_id"]')
	sig=$("$HUDDLE" attach "$3" --format json --port "$port" | python3 -c '
import json, sys, urllib.parse as u
print(u.parse_qs(u.urlparse(json.load(sys.stdin)["url"]).query)["sig"][0])')
	printf '%s' "$2" >"$T_TMP/req"
	CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -X POST "$B$1" \
		-H 'Content-Type: application/json' --data-binary @"$T_TMP/req" \
		-H "Huddle-Agent: $team/$3" -H "Huddle-Signature: $sig")
	BODY=$(cat "$T_TMP/body")
}
for i in "${!names[@]}"; do
	[ "${codes[$i]}" = - ] && continue
	req=$(python3 -c 'import json,sys; print(json.dumps({"text": sys.argv[1], "as": sys.argv[2]}))' \
		"${bodies[$i]}" "${authors[$i]}")
	rest_post "/api/teams/${teams[$i]}/posts" "$req" "${authors[$i]}"
	expect_eq "$CODE" "${codes[$i]}" "rest: ${names[$i]} (status; body $BODY)"
	expect_eq "$(json_get "$BODY" 'j["error"]')" "${wants[$i]}" "rest: ${names[$i]}"
done
expect_eq "$("$HUDDLE" chat read dev --json | json_get "$(cat)" 'len(j["posts"])')" 0 \
	"no refused post was stored"

# --- the same rule for messages and task subjects
run send dev $' \t\n' --as coder --to reviewer
expect_eq "$RC:$ERR" "1:huddle: message must not be empty" "cli: blank message"
rest_post /api/teams/dev/messages '{"from": "coder", "to": "reviewer", "content": " \n\t "}' coder
expect_eq "$CODE:$(json_get "$BODY" 'j["error"]')" "400:message must not be empty" "rest: blank message"
run task create dev $'  \t'
expect_eq "$RC:$ERR" "1:huddle: task subject must not be empty" "cli: blank subject"
rest_post /api/teams/dev/tasks '{"subject": "   "}' coder
expect_eq "$CODE:$(json_get "$BODY" 'j["error"]')" "400:task subject must not be empty" "rest: blank subject"

kill -TERM "$serve_pid"
wait "$serve_pid"
finish
