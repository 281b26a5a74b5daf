#!/usr/bin/env bash
# test-exchange.sh -- bounded exchanges end to end (SPEC 8, 11, 14):
# `huddle exchange` prints each turn and the end reason; refusals exit 1
# with `huddle: <message>`, usage errors exit 2; --json parses; `huddle
# budget` sets a cap that pauses; a second exchange on a room is refused
# from another process, over the CLI and over REST (409); the REST route's
# shapes and codes; a client that disconnects aborts the exchange between
# turns.
. "$(dirname "$0")/lib.sh"

SERVE_PID=
trap '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T_TMP"' EXIT

run up "$HUDDLE_SRC/examples/dev-team.json"
expect_rc 0 "up the example team"

# ---- usage errors and refusals ----
run exchange
expect_rc 2 "no team: usage error"
run exchange dev
expect_rc 2 "no stimulus: usage error"
expect_contains "$ERR" "huddle: 'exchange' needs --stimulus TEXT" "usage text"
run exchange dev --stimulus hi --max-turns lots
expect_rc 2 "max-turns not a number"
run exchange dev --stimulus hi --max-turns 0
expect_rc 2 "max-turns 0 refused, not clamped"
expect_contains "$ERR" "huddle: --max-turns must be between 1 and 5 x the participants (5 each), not 0" "max-turns range"
run exchange dev --stimulus hi --max-turns -3
expect_rc 2 "negative max-turns refused"
run exchange ghost --stimulus hi
expect_rc 1 "missing team"
expect_eq "$ERR" 'huddle: team "ghost" not found' "missing team error"
run exchange dev --stimulus hi --first coder,ghost
expect_rc 1 "unknown first speaker"
expect_eq "$ERR" "huddle: unknown first speaker: ghost" "unknown speaker error"

# ---- one turn by the leader, printed as it happens ----
run exchange dev --stimulus "Follow-up from the all-hands: go"
expect_rc 0 "leader's exchange"
expect_eq "$OUT" "exchange in team:dev (up to 5 turns)
[1] manager (round-robin, scripted)
    Coder takes the null-check fix (#1) and tester the regression test (#2). Report on the board when done.
ended: no_pending_obligation after 1 turn (manager): nobody owes a turn on the board
  (an exchange follows the board, not @mentions; to have the team answer
  by @mentions, ask it: huddle ask dev MESSAGE)" "leader's exchange output: the end says why and points to ask"

# first speakers, the clamp, and max_turns as the end reason
run exchange dev --stimulus "Status?" --first tester,coder --max-turns 1
expect_rc 0 "first speakers, one turn"
expect_eq "$OUT" "exchange in team:dev (up to 1 turn)
[1] coder (round-robin, scripted)
    Fixed the null check on owner in the claim path (#1), as review asked. Marking it done.
ended: max_turns after 1 turn (coder)" "max_turns output"
run exchange dev --stimulus "Status?" --first tester,coder --max-turns 1000
expect_rc 0 "clamped max turns"
expect_contains "$OUT" "exchange in team:dev (up to 20 turns)" "clamped to 5 x 4"
expect_eq "$ERR" "huddle: warning: --max-turns 1000 lowered to 20 (at most 5 turns per participant)" "the lowered bound is reported"
expect_contains "$OUT" "ended: no_pending_obligation after 2 turns (coder, tester): nobody owes a turn on the board" "both first speakers"

# --json
run --json exchange dev --stimulus "Status?" --first reviewer
expect_rc 0 "json exchange"
expect_json "$OUT" "json parses"
expect_eq "$(json_get "$OUT" 'j["roomId"]')" "team:dev" "json roomId"
expect_eq "$(json_get "$OUT" 'j["result"]["endedReason"]')" "no_pending_obligation" "json endedReason"
expect_eq "$(json_get "$OUT" 'j["result"]["turnsTaken"]')" "1" "json turnsTaken"
expect_eq "$(json_get "$OUT" 'j["result"]["speakers"]')" "['reviewer']" "json speakers"
expect_eq "$(json_get "$OUT" 'j["turns"][0]["policy"]')" "round-robin" "json turn policy"

# the room shows the stimulus as the user and each reply as its agent
run chat read dev --json
expect_eq "$(json_get "$OUT" '[p["authorAgentId"] for p in j["posts"]][-2:]')" "['user', 'reviewer']" "room: stimulus then reply"

# ---- budgets ----
run budget set --limit-cents 5 --mode cap
expect_rc 2 "budget set without a subject"
run budget set dev --team other --limit-cents 5 --mode cap
expect_rc 2 "budget set with two teams"
expect_contains "$ERR" "huddle: the team is dev or other? give it once, as the first argument" "two teams text"
run budget set other --agent coder --limit-cents 5 --mode cap
expect_rc 1 "an agent's budget in the wrong team"
expect_eq "$ERR" 'huddle: agent "coder" is not in team other' "wrong team text"
run budget set dev --limit-cents 5 --mode stop
expect_rc 1 "bad mode"
expect_eq "$ERR" 'huddle: invalid budget mode "stop": use warn or cap' "bad mode error"
run budget set --team dev --limit-cents 0 --mode cap
expect_rc 0 "cap the team at 0"
expect_contains "$OUT" "team dev: cap at 0 cents (\$0.00); spent \$" "budget set output"
expect_contains "$OUT" "(paused)" "a spent cap is paused"
run exchange dev --stimulus "Status?"
expect_rc 1 "paused team refuses"
expect_eq "$ERR" "huddle: budget_paused:team" "budget_paused:team"
run budget set dev --limit-cents 0 --mode warn
expect_rc 0 "warn instead, the team first"
run exchange dev --stimulus "Status?"
expect_rc 0 "warn never pauses"
run budget set dev --agent manager --limit-cents 0 --mode cap
expect_rc 0 "an agent's budget, the team first"
run exchange dev --stimulus "Status?"
expect_rc 1 "paused first speaker refuses"
expect_eq "$ERR" "huddle: budget_paused:agent" "budget_paused:agent"
run --json budget show --agent manager
expect_rc 0 "budget show one"
expect_eq "$(json_get "$OUT" 'j["budgets"][0]["paused"]')" "True" "json paused"
run budget show
expect_rc 0 "budget show all"
if echo "$OUT" | grep -q '^agent  *manager  *cap  *\$0\.00  *\$0\.[0-9]*  *paused$'; then pass; else
	fail "budget table row: $OUT"
fi
run budget show --agent nobody
expect_rc 1 "budget show unknown"
run --json budget show dev
expect_rc 0 "budget show TEAM"
expect_eq "$(json_get "$OUT" '[b["scope"] for b in j["budgets"]]')" "['team']" "only the team's budget"
run budget set --agent manager --limit-cents 100000 --mode cap
expect_rc 0 "lift the cap"

# ---- the REST route ----
"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
SERVE_PID=$!
PORT=
for i in $(seq 1 200); do
	PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$T_TMP/serve.out")
	[ -n "$PORT" ] && break
	sleep 0.05
done
[ -n "$PORT" ] || fail "the server did not start"
URL="http://127.0.0.1:$PORT/api/team-chat/exchange"

# post BODY: sets CODE and BODY_OUT
post() {
	BODY_OUT=$(curl -s -o - -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' --data "$1" "$URL")
	CODE=${BODY_OUT##*$'\n'}
	BODY_OUT=${BODY_OUT%$'\n'*}
}

post '{"teamId": "dev", "stimulus": "Follow-up from the all-hands: go"}'
expect_eq "$CODE" "200" "REST 200"
expect_eq "$BODY_OUT" '{"ok":true,"roomId":"team:dev","result":{"turnsTaken":1,"turnsFailed":0,"endedReason":"no_pending_obligation","speakers":["manager"]}}' "REST 200 shape"
post '{"teamId": "dev", "firstSpeakers": ["coder", "tester"], "maxExchangeTurns": 1}'
expect_eq "$CODE" "200" "REST first speakers"
expect_eq "$BODY_OUT" '{"ok":true,"roomId":"team:dev","result":{"turnsTaken":1,"turnsFailed":0,"endedReason":"max_turns","speakers":["coder"]}}' "REST max turns shape"
post '{"stimulus": "x"}'
expect_eq "$CODE" "400" "REST no teamId"
expect_eq "$BODY_OUT" '{"error":"teamId is required"}' "REST 400 text"
post '{"teamId": "ghost"}'
expect_eq "$CODE" "404" "REST missing team"
expect_eq "$BODY_OUT" '{"error":"team not found"}' "REST 404 text"
post '{"teamId": "dev", "firstSpeakers": ["ghost"]}'
expect_eq "$CODE" "422" "REST unknown first speaker"
expect_eq "$BODY_OUT" '{"error":"unknown first speaker: ghost"}' "REST 422 text"
post '{"teamId": "dev", "firstSpeakers": "coder"}'
expect_eq "$CODE" "400" "REST firstSpeakers not an array"
post '{"teamId": "dev", "maxExchangeTurns": "5"}'
expect_eq "$CODE" "400" "REST maxExchangeTurns not an integer"
run budget set --team dev --limit-cents 0 --mode cap
post '{"teamId": "dev"}'
expect_eq "$CODE" "422" "REST budget paused"
expect_eq "$BODY_OUT" '{"error":"budget_paused:team"}' "REST budget text"
run budget set --team dev --limit-cents 0 --mode warn

# ---- concurrency: a slow team ----
run team create slow
# sa's turns run until stopped; sb's and sc's take a second
run agent add slow sa --leader --config '{"delay_ms": 60000, "default": "slow a"}'
run agent add slow sb --config '{"delay_ms": 1000, "default": "slow b"}'
run agent add slow sc --config '{"delay_ms": 1000, "default": "slow c"}'

# count_events TEAM KIND: how many events of KIND TEAM has
count_events() {
	run --json events --team "$1" --kind "$2" --limit 10000
	json_get "$OUT" 'len(j)'
}

# A CLI process holds the room for as long as sa's turn runs: another
# CLI process and the server are refused.
"$HUDDLE" exchange slow --stimulus "hold the room" --first sa,sb >"$T_TMP/holder.out" 2>"$T_TMP/holder.err" &
HOLDER=$!
for i in $(seq 1 400); do
	[ "$(count_events slow speaker_selected)" = "1" ] && break
	sleep 0.05
done
run exchange slow --stimulus "me too"
expect_rc 1 "second CLI exchange refused"
expect_eq "$ERR" "huddle: an exchange is already running for this room" "lock held error"
post '{"teamId": "slow"}'
expect_eq "$CODE" "409" "REST 409 while the CLI holds the room"
expect_eq "$BODY_OUT" '{"error":"an exchange is already running for this room"}' "REST 409 text"
# SIGTERM once stops after the running turn; twice stops the turn itself;
# sb, who owed the next turn, never speaks. (Ctrl-C cancels instead:
# test-progress.sh.)
kill -TERM $HOLDER
sleep 0.3
kill -TERM $HOLDER
wait $HOLDER
expect_eq "$?" "1" "an aborted exchange exits 1"
expect_contains "$(cat "$T_TMP/holder.out")" "[1] sa (round-robin, scripted)
    [error: the turn was aborted]
ended: aborted after 1 turn (sa)" "holder output"
expect_contains "$(cat "$T_TMP/holder.err")" "huddle: stopping after this turn (SIGTERM again to stop it now)" "first SIGTERM message"

# A long exchange does not hold up other requests, and a client that
# disconnects aborts it between turns.
WANT=$(( $(count_events slow turn_bound_hit) + 1 ))
curl -s --max-time 0.5 -X POST --data '{"teamId": "slow", "firstSpeakers": ["sb", "sc"]}' "$URL" >/dev/null
expect_eq "$?" "28" "the client gave up"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/team-chat?teamId=slow")
expect_eq "$code" "200" "other requests are served meanwhile"
for i in $(seq 1 400); do
	[ "$(count_events slow turn_bound_hit)" = "$WANT" ] && break
	sleep 0.05
done
run --json events --team slow --kind turn_bound_hit --limit 10000
expect_eq "$(json_get "$OUT" 'j[-1]["data"]')" "{'room_id': 'team:slow', 'reason': 'aborted', 'max_turns': 5, 'turns_taken': 1}" "disconnect aborts after the running turn"
run --json events --team slow --kind speaker_selected --limit 10000
expect_eq "$(json_get "$OUT" 'j[-1]["data"]["speaker"]')" "sb" "only sb spoke"

# A server that stops aborts its running exchanges (the running turn
# too), answers their clients, and exits 0.
WANT=$(( $(count_events slow speaker_selected) + 1 ))
curl -s -X POST --data '{"teamId": "slow", "firstSpeakers": ["sa", "sb"]}' "$URL" >"$T_TMP/stopped.out" &
CURL=$!
for i in $(seq 1 400); do
	[ "$(count_events slow speaker_selected)" = "$WANT" ] && break
	sleep 0.05
done
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
expect_eq "$?" "0" "serve exits 0"
SERVE_PID=
wait $CURL
expect_eq "$(cat "$T_TMP/stopped.out")" '{"ok":true,"roomId":"team:slow","result":{"turnsTaken":1,"turnsFailed":0,"endedReason":"aborted","speakers":["sa"]}}' "the client of a stopped server gets its answer"
run chat read slow --json
expect_eq "$(json_get "$OUT" 'j["posts"][-1]["body"]')" "[error: the turn was aborted]" "the running turn was stopped"
finish
