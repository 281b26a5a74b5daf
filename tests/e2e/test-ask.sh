#!/usr/bin/env bash
# test-ask.sh -- conversations from the outside (SPEC 7): `huddle ask`
# prints each reply as it arrives then the aggregate (exact lines for the
# example scripted team), --json, refusals and usage errors, the loop
# guard set with `team update --max-messages`; a `huddle ask` killed with
# SIGKILL in the middle of a turn is finished by `huddle serve`; and the
# REST routes (POST /api/teams/<team>/chat answers 202 at once, GET
# /api/conversations/<id>, progress over SSE).
. "$(dirname "$0")/lib.sh"

# The example team (a copy of examples/dev-team.json, so this test pins
# its own replies), plus a slow pair and a ping-pong pair.
cat >"$T_TMP/dev.json" <<'EOF'
{
  "team": "dev",
  "name": "Dev team",
  "agents": [
    {"id": "manager", "leader": true, "runtime": "scripted", "runtime_config": {
      "rules": [
        {"when": "all hands", "reply": "Hosting the all-hands now. [@coder: what did you ship this week?] [@reviewer: anything blocking review?] [@tester: how is the test suite?]"},
        {"when": "Message from teammate", "reply": "Thanks, noted. I'll fold that into the summary."}
      ],
      "default": "Understood. I'll put it on the board and assign it."}},
    {"id": "coder", "runtime": "scripted", "runtime_config": {
      "rules": [
        {"when": "reviewer", "reply": "Good catch from review; fixing the null check now."},
        {"when": "ship", "reply": "Shipped the claim path and the room follower; both have tests."}
      ],
      "default": "On it."}},
    {"id": "reviewer", "runtime": "scripted", "runtime_config": {
      "rules": [{"when": "blocking", "reply": "Nothing blocking. [@coder: the claim path misses a null check on owner.]"}],
      "default": "Reviewed; looks good."}},
    {"id": "tester", "runtime": "scripted", "runtime_config": {
      "rules": [{"when": "test", "reply": "All green: unit, end-to-end and the sanitizer run."}],
      "default": "I'll write a test for that."}}
  ]
}
EOF
cat >"$T_TMP/slow.json" <<'EOF'
{"team": "slow", "agents": [
  {"id": "lead", "leader": true, "runtime": "scripted", "runtime_config": {"default": "[@worker: do it]"}},
  {"id": "worker", "runtime": "scripted", "runtime_config": {"default": "done it", "delay_ms": 6000}}
]}
EOF
cat >"$T_TMP/pp.json" <<'EOF'
{"team": "pp", "max_messages": 5, "agents": [
  {"id": "ping", "leader": true, "runtime": "scripted", "runtime_config": {"default": "[@pong: ping]"}},
  {"id": "pong", "runtime": "scripted", "runtime_config": {"default": "[@ping: pong]"}}
]}
EOF
run init
expect_rc 0 "init"
for f in dev slow pp; do
	run up "$T_TMP/$f.json"
	expect_rc 0 "up $f"
done

# A chain, addressed to one agent: exact output.
run ask dev "@reviewer anything blocking?"
expect_rc 0 "ask a chain"
CHAIN=$OUT
expect_eq "$OUT" "@reviewer: Nothing blocking. → @coder: the claim path misses a null check on owner.
@coder: Good catch from review; fixing the null check now.
=== answered: 2 replies ===" "chain output: each reply once, tags shown as the aggregate shows them"
expect_contains "$ERR" "note: scripted agents (canned replies, not a model): manager, coder, reviewer, tester" "scripted note"
expect_contains "$ERR" "note: transcript: $HUDDLE_HOME/chats/dev/" "transcript note"

# One reply: returned as it is.
run ask dev "hello"
expect_rc 0 "ask one reply"
expect_eq "$OUT" "@manager: Understood. I'll put it on the board and assign it.
=== answered: 1 reply ===" "one reply output"

# The all-hands fan-out: the manager first; then the three members in
# whatever order they finish, and the coder again after the reviewer's
# note (backflow); the aggregate follows the order the replies came in.
run ask dev "please host the all hands"
expect_rc 0 "ask all hands"
ALL=$OUT
first=$(printf '%s\n' "$OUT" | sed -n 1p)
expect_eq "$first" "@manager: Hosting the all-hands now. → @coder: what did you ship this week? → @reviewer: anything blocking review? → @tester: how is the test suite?" "all hands: the manager first"
rest=$(printf '%s\n' "$OUT" | sed -n 2,5p | sort)
expect_eq "$rest" "@coder: Good catch from review; fixing the null check now.
@coder: Shipped the claim path and the room follower; both have tests.
@reviewer: Nothing blocking. → @coder: the claim path misses a null check on owner.
@tester: All green: unit, end-to-end and the sanitizer run." "all hands: every member's reply, once"
expect_eq "$(printf '%s\n' "$OUT" | sed -n '6,$p')" "=== answered: 5 replies ===" "all hands: the end line, and no second copy"
# The answer is shown once: every reply's text is in the output exactly
# once (the aggregate is these replies; the REST check below joins them).
for text in "Hosting the all-hands now." "what did you ship this week?" "Shipped the claim path" \
	"Nothing blocking." "the claim path misses a null check on owner." "fixing the null check now." \
	"All green: unit"; do
	n=$(printf '%s\n' "$ALL" | grep -o -F "$text" | wc -l)
	expect_eq "$n" "1" "all hands: [$text] is shown once"
done
coder_then=$(printf '%s\n' "$OUT" | sed -n 2,5p | grep -n '^@' | sed -E 's/^([0-9]+):(@[a-z]+):.*/\2/' | tr '\n' ' ')
case "$coder_then" in
*"@reviewer"*"@coder"*) pass ;;
*) fail "the coder answers the reviewer's note after the reviewer: $coder_then" ;;
esac

# --json: the finished conversation, and its transcript on disk.
run --json ask dev "@tester how is the test suite?"
expect_rc 0 "ask --json"
expect_json "$OUT" "ask --json parses"
expect_eq "$(json_get "$OUT" 'j["status"]')" "completed" "json status"
expect_eq "$(json_get "$OUT" 'j["totalMessages"]')" "1" "json totalMessages"
expect_eq "$(json_get "$OUT" 'j["replies"][0]["agent"]')" "tester" "json reply agent"
expect_eq "$(json_get "$OUT" 'j["response"]')" "All green: unit, end-to-end and the sanitizer run." "json response"
transcript=$(json_get "$OUT" 'j["transcript"]')
expect_eq "$(head -1 "$transcript")" "# Team Conversation: Dev team (@dev)" "transcript title"
expect_eq "$(sed '3s/^Date: [0-9T:.-]*Z$/Date: D/' "$transcript")" "# Team Conversation: Dev team (@dev)

Date: D
Messages: 1

## User

@tester how is the test suite?

## tester

All green: unit, end-to-end and the sanitizer run." "transcript content"

# The loop guard, per team: the team file set 5; update sets 3.
run --json team show pp
expect_eq "$(json_get "$OUT" 'j["max_messages"]')" "5" "max_messages from the team file"
run team update pp --max-messages 3
expect_rc 0 "team update --max-messages"
run ask pp "start"
expect_rc 0 "ask ping-pong"
expect_eq "$(printf '%s\n' "$OUT" | sed -n 1,4p)" "@ping: → @pong: ping
@pong: → @ping: pong
@ping: → @pong: ping
=== answered: 3 replies ===" "ping-pong stops after 3 replies"
run team update pp --max-messages 0
expect_rc 2 "max-messages 0 is a usage error"
run team show pp
expect_contains "$OUT" "  max messages: 3 per conversation" "team show: the loop guard"

# Refusals and usage errors.
run ask ghost "hi"
expect_rc 1 "unknown team"
expect_eq "$ERR" 'huddle: team "ghost" not found' "unknown team message"
run ask dev ""
expect_rc 1 "empty message"
expect_eq "$ERR" "huddle: message must not be empty" "empty message text"
run ask dev
expect_rc 2 "ask without a message"

# Killed mid-turn: the worker is running when `huddle ask` dies. Its turn
# lasts 6 s so that the status poll below sees it even on a loaded
# machine (each poll is two processes).
"$HUDDLE" ask slow "go" >"$T_TMP/ask.out" 2>"$T_TMP/ask.err" &
ask_pid=$!
for _ in $(seq 1 500); do
	st=$("$HUDDLE" --json agent show worker 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)
	[ "$st" = "working" ] && break
	sleep 0.02
done
expect_eq "$st" "working" "the worker is mid-turn"
kill -9 "$ask_pid"
wait "$ask_pid" 2>/dev/null
conv=$(sed -n 's/^note: conversation //p' "$T_TMP/ask.err")
expect_eq "$(cat "$T_TMP/ask.out")" "@lead: → @worker: do it" "only the lead answered before the kill"

# `huddle serve` resumes it, and serves the REST routes.
serve_bg
expect_contains "$url" "http://127.0.0.1:" "serve prints its URL"

# wait_done ID: poll GET /api/conversations/ID until it completes (bounded;
# the slow worker's resumed turn alone takes 6 s)
wait_done() {
	local body
	for _ in $(seq 1 1500); do
		body=$(curl -s "$url/api/conversations/$1")
		case "$body" in *'"status":"completed"'*) break ;; esac
		sleep 0.02
	done
	printf '%s' "$body"
}
body=$(wait_done "$conv")
expect_eq "$(json_get "$body" 'j["status"]')" "completed" "resumed conversation completed"
expect_eq "$(json_get "$body" '" | ".join(r["agent"] + ": " + r["body"] for r in j["replies"])')" "lead: [@worker: do it] | worker: done it" "one reply per message after the resume"
expect_eq "$(json_get "$body" 'j["response"]')" "@lead: → @worker: do it

------

@worker: done it" "resumed response"
resumed=$(curl -s "$url/api/events?kind=conversation_resumed")
expect_eq "$(json_get "$resumed" '[(e["data"]["conversation_id"], e["data"]["requeued"]) for e in j["events"]]')" "[('$conv', 1)]" "serve took it over, the worker's turn put back"

# POST answers 202 at once with the id; the result comes over GET.
head=$(json_get "$(curl -s "$url/api/events?limit=1")" 'j["events"][-1]["seq"] if j["events"] else 0')
code=$(curl -s -o "$T_TMP/post.json" -w '%{http_code}' -X POST \
	-H 'Content-Type: application/json' \
	-d '{"message": "@reviewer anything blocking?"}' "$url/api/teams/dev/chat")
expect_eq "$code" "202" "POST chat is 202"
id=$(json_get "$(cat "$T_TMP/post.json")" 'j["conversationId"]')
expect_eq "${#id}" "36" "POST chat gives the conversation id"
body=$(wait_done "$id")
expect_json "$body" "GET conversation parses"
expect_eq "$(json_get "$body" 'list(j.keys())')" "['id', 'teamId', 'status', 'pending', 'totalMessages', 'replies', 'files', 'response', 'createdAt', 'completedAt', 'message', 'waitingFor']" "GET conversation keys"
expect_eq "$(json_get "$body" 'j["message"]')" "@reviewer anything blocking?" "GET message: the user's"
expect_eq "$(json_get "$body" 'j["waitingFor"]')" "[]" "GET waitingFor: nobody, once completed"
# what \`huddle ask\` printed for the same question is this aggregate,
# reply by reply: the replies are the answer, not a copy of it
joined=$(printf '%s\n' "$CHAIN" | sed '$d' | sed ':a;N;$!ba;s/\n/\n\n------\n\n/g')
expect_eq "$(json_get "$body" 'j["response"]')" "$joined" "the printed replies, joined, are the response"
expect_eq "$(json_get "$body" 'j["teamId"]')" "dev" "GET teamId"
expect_eq "$(json_get "$body" 'j["pending"]')" "0" "GET pending"
expect_eq "$(json_get "$body" 'j["totalMessages"]')" "2" "GET totalMessages"
expect_eq "$(json_get "$body" 'j["response"]')" "@reviewer: Nothing blocking. → @coder: the claim path misses a null check on owner.

------

@coder: Good catch from review; fixing the null check now." "GET response"
expect_eq "$(json_get "$body" 'sorted(j["replies"][0].keys())')" "['agent', 'at', 'body', 'isError', 'seq']" "GET reply keys"
# seq numbers the replies in the order they came in, as the events do
expect_eq "$(json_get "$body" '[r["seq"] for r in j["replies"]] == list(range(1, len(j["replies"]) + 1))')" "True" "GET reply seqs"

# Progress over SSE: every event since the POST, from the stream.
curl -s -N --max-time 2 -H 'Accept: text/event-stream' \
	-H "Last-Event-ID: $head" "$url/api/events?team=dev" >"$T_TMP/sse.txt" 2>/dev/null
sse=$(grep -E '^event: (conversation_|agent_status|team_chat_post|mention)' "$T_TMP/sse.txt" | sed 's/^event: //' | tr '\n' ' ')
expect_eq "$sse" "team_chat_post conversation_started agent_status agent_status team_chat_post conversation_reply agent_status agent_status team_chat_post conversation_reply conversation_completed " "SSE carries the conversation as it happens"
expect_eq "$(grep -c "\"conversation_id\":\"$id\"" "$T_TMP/sse.txt")" "6" "SSE: the four conversation events and each reply's cost name it"
expect_eq "$(grep -A1 '^event: cost' "$T_TMP/sse.txt" | grep -c "\"conversation_id\":\"$id\".*\"estimated\":true")" "2" "SSE: each scripted reply's cost is an estimate on the conversation"

# Refusals over REST.
expect_curl '404 {"error":"conversation \"nope\" not found"}' "GET unknown conversation" "$url/api/conversations/nope"
expect_curl '404 {"error":"team \"ghost\" not found"}' "POST to an unknown team" -X POST -d '{"message": "hi"}' "$url/api/teams/ghost/chat"
expect_curl '400 {"error":"\"message\" (a string) is required"}' "POST without a message" -X POST -d '{"text": "hi"}' "$url/api/teams/dev/chat"
expect_curl '400 {"error":"message must not be empty"}' "POST an empty message" -X POST -d '{"message": ""}' "$url/api/teams/dev/chat"

kill -INT "$serve_pid"
wait "$serve_pid"
RC=$?
expect_rc 0 "serve stops cleanly"
finish
