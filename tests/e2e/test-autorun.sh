#!/bin/bash
# test-autorun.sh -- huddle serve runs a team's agents between asks (the
# supervisor): exec agents whose commands use the CLI
# (agents/autorun-agent.sh), so every turn is deterministic. Each case has
# its own team, so their wakes never mix.
. "$(dirname "$0")/lib.sh"

AGENT=$HUDDLE_SRC/tests/e2e/agents/autorun-agent.sh
export AGENT_LOG=$T_TMP/agents HUDDLE
mkdir -p "$AGENT_LOG"

# agent_json ID MODE [SLEEP]: a team file's agent entry for the script.
agent_json() {
	printf '{"id":"%s","runtime":"exec","runtime_config":{"command":["%s"],"env":{"AGENT_MODE":"%s","AGENT_LOG":"%s","HUDDLE":"%s","AGENT_SLEEP":"%s"}}}' \
		"$1" "$AGENT" "$2" "$AGENT_LOG" "$HUDDLE" "${3:-}"
}
# team_up TEAM AUTORUN MEMBER...: a team with leader <team>-lead (leader
# mode) and the members given as ID:MODE[:SLEEP]; AUTORUN is the file's
# "autorun" value ("" for true).
team_up() {
	local team=$1 extra=$2 agents m id mode sleep
	shift 2
	agents=$(agent_json "$team-lead" leader | sed 's/^{/{"leader":true,/')
	for m in "$@"; do
		IFS=: read -r id mode sleep <<<"$m"
		agents="$agents,$(agent_json "$id" "$mode" "$sleep")"
	done
	printf '{"team":"%s","autorun":%s,"agents":[%s]}' "$team" "${extra:-true}" "$agents" >"$T_TMP/$team.json"
	run up "$T_TMP/$team.json"
	expect_rc 0 "up $team"
}
task_status() { "$HUDDLE" task show "$1" --json | python3 -c 'import json,sys; t=json.load(sys.stdin); print(t["status"], t["owner"])'; }
is_status() { [ "$(task_status "$1")" = "$2" ]; }
agent_status() { "$HUDDLE" agent show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }
is_agent() { [ "$(agent_status "$1")" = "$2" ]; }
state() { "$HUDDLE" team state "$1" --json; }
# sv TEAM AGENT EXPR: EXPR on agent's supervisor state `a`.
sv() {
	python3 -c 'import json,sys
j=json.loads(sys.argv[1]); a=[x for x in j["supervisor"] if x["agent"]==sys.argv[2]][0]
print(eval(sys.argv[3]))' "$(state "$1")" "$2" "$3"
}
turns_of() { grep -c '^start' "$AGENT_LOG/$1.log" 2>/dev/null || echo 0; }
has_turns() { [ "$(turns_of "$1")" -ge "$2" ]; }
last_turn_done() { [ "$(sv "$1" "$2" 'a["last_turn"] and a["last_turn"]["status"]')" = done ] && [ "$(sv "$1" "$2" 'a["running"]')" = None ]; }
start_serve() {
	HUDDLE_LOG=info "$HUDDLE" serve --port 0 >>"$T_TMP/serve.out" 2>>"$T_TMP/serve$1.err" &
	eval "SERVE$1=$!"
	wait_for 10 grep -q "running at" "$T_TMP/serve.out" || fail "serve $1 did not start"
}

# ---- off by default; settings and their errors -----------------------------
run team create quiet
run team show quiet --json
expect_eq "$(json_get "$OUT" 'j["autorun"], j["paused"]')" "(False, False)" "autorun off by default"
run team update quiet --autorun maybe
expect_rc 2 "--autorun maybe"
expect_contains "$ERR" '--autorun must be on or off, not "maybe"' "--autorun error"
run team update quiet --turns-per-hour 0
expect_rc 2 "--turns-per-hour 0"
printf '{"team":"quiet","autorun":{"on":true,"every":5}}' >"$T_TMP/bad.json"
run up "$T_TMP/bad.json"
expect_rc 1 "unknown autorun key"
expect_contains "$ERR" 'autorun: unknown key "every": use on, turns_per_hour or park_after' "autorun key error"
run team update quiet --autorun on --turns-per-hour 12 --park-after 4
expect_rc 0 "team update --autorun on"
run team state quiet
expect_contains "$OUT" "Autorun: on (12 turns/hour per agent, parked after 4 idle turns)" "settings shown"
run agent wake ghost
expect_rc 1 "wake an unknown agent"
expect_contains "$ERR" 'agent "ghost" not found' "wake error"

start_serve 1

# ---- a spawned teammate starts on its first task; the leader is told -------
team_up spawn ""
run task create spawn "survey the auth module"
expect_rc 0 "task for the spawn"
run agent spawn spawn surveyor --runtime exec \
	--config "$(agent_json x worker | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["runtime_config"]))')" \
	--task "Take task #1: survey the auth module"
expect_rc 0 "spawn"
wait_for 10 is_status 1 "completed surveyor" || fail "the spawned teammate did not complete its first task: $(task_status 1)"
wait_for 10 grep -q 'Task #1 "survey the auth module" completed by surveyor' "$AGENT_LOG/spawn-lead.told" 2>/dev/null ||
	fail "the leader was not told (told: $(cat "$AGENT_LOG/spawn-lead.told" 2>/dev/null))"
expect_contains "$(cat "$AGENT_LOG/surveyor.prompt.1")" "Take task #1: survey the auth module" "the spawn's task is in its first prompt"
expect_contains "$(cat "$AGENT_LOG/surveyor.prompt.1")" "there are messages for you" "the prompt says what woke it"
run chat read spawn
expect_contains "$OUT" "surveyor [peer]: completed task #1" "its narration is in the room"
wait_for 5 is_agent surveyor idle || fail "surveyor not idle after its turn: $(agent_status surveyor)"

# ---- an assigned task is done without any ask; pause and resume -------------
team_up assign "" "a1:worker"
run team pause assign
expect_rc 0 "team pause"
run task create assign "write the changelog"
tid=$(json_get "$("$HUDDLE" task list assign --json)" 'j[0]["id"]')
run task assign "$tid" a1 --as assign-lead
expect_rc 0 "assign"
sleep 1
expect_eq "$(turns_of a1)" 0 "a paused team wakes nobody"
expect_eq "$(task_status "$tid")" "claimed a1" "the task waits while paused"
run team resume assign
expect_rc 0 "team resume"
wait_for 10 is_status "$tid" "completed a1" || fail "the assigned task was not done: $(task_status "$tid")"
expect_contains "$(cat "$AGENT_LOG/a1.prompt.1")" "\"write the changelog\" is yours and not finished" "the assignment woke it"

# ---- two ready tasks, two idle members: in parallel, each once ---------------
team_up par "" "p1:worker:1" "p2:worker:1"
run task create par "task one"
run task create par "task two"
ids=$(json_get "$("$HUDDLE" task list par --json)" '" ".join(str(t["id"]) for t in j)')
for id in $ids; do
	wait_for 15 is_status "$id" "completed p1" || wait_for 1 is_status "$id" "completed p2" ||
		fail "task $id not completed: $(task_status "$id")"
done
owners=$(for id in $ids; do task_status "$id"; done | sort | tr '\n' ' ')
expect_eq "$owners" "completed p1 completed p2 " "each member did one task"
expect_eq "$(turns_of p1) $(turns_of p2)" "1 1" "one turn each"
overlap=$(python3 -c 'import sys
def span(f):
    l=[float(x.split()[1]) for x in open(f)]
    return l[0], l[-1]
a=span(sys.argv[1]); b=span(sys.argv[2])
print(a[0] < b[1] and b[0] < a[1])' "$AGENT_LOG/p1.log" "$AGENT_LOG/p2.log")
expect_eq "$overlap" True "the two turns ran at the same time"

# ---- shutdown answered by the agents' own turns: approved, then refused -------
team_up sd "" "s1:worker" "s2:worker"
run team shutdown sd --wait --timeout 20
expect_rc 0 "team shutdown with autorun"
expect_contains "$OUT" "shut down" "approved by both"
expect_eq "$(agent_status s1) $(agent_status s2)" "shutdown shutdown" "approving members are shut down"
run send "are you there?" --team sd --from sd-lead --to s1
sleep 1
expect_eq "$(turns_of s1)" 1 "a shut-down member is never woken again"
team_up sdr "" "r1:refuse"
run team shutdown sdr --wait --timeout 20
expect_contains "$OUT$ERR" "still busy with the release" "the refusal and its reason"
run team show sdr --json
expect_eq "$(json_get "$OUT" 'j["status"]')" active "a refused shutdown leaves the team active"
wait_for 5 is_agent r1 idle || fail "r1 not back to idle: $(agent_status r1)"

# ---- the no-progress park, and what unparks --------------------------------
team_up park '{"park_after":2}' "k1:idle"
for i in 1 2; do
	run send "note $i" --team park --from park-lead --to k1
	wait_for 10 has_turns k1 "$i" || fail "k1 turn $i did not run"
	wait_for 5 last_turn_done park k1 || fail "k1 turn $i not recorded"
done
wait_for 5 eval '[ "$(sv park k1 "a[\"parked\"]")" != None ]' || fail "k1 not parked"
expect_eq "$(sv park k1 'a["parked"]')" "2 turns in a row changed nothing on the board or in a mailbox" "park reason"
run broadcast "standup in 5" --team park --from park-lead
sleep 1
expect_eq "$(turns_of k1)" 2 "a broadcast does not wake a parked agent"
run team state park
expect_contains "$OUT" "parked: 2 turns in a row changed nothing" "team state shows the park"
run send "k1, a direct question" --team park --from park-lead --to k1
wait_for 10 has_turns k1 3 || fail "a direct message did not unpark k1"
expect_contains "$(cat "$AGENT_LOG/k1.prompt.3")" "standup in 5" "the held broadcast comes with it"
run agent park k1 --reason "on holiday"
expect_eq "$OUT" "k1 parked" "park by hand"
run agent wake k1 --note "check the release notes"
wait_for 10 has_turns k1 4 || fail "a wake by hand did not run"
expect_contains "$(cat "$AGENT_LOG/k1.prompt.4")" "you were woken by hand: check the release notes" "the note is in the prompt"
wait_for 5 eval '[ "$(sv park k1 "a[\"parked\"]")" = None ]' || fail "a wake by hand did not unpark"

# ---- the turns-per-hour cap ------------------------------------------------
team_up cap '{"turns_per_hour":2,"park_after":100}' "c1:idle"
for i in 1 2 3; do
	run send "ping $i" --team cap --from cap-lead --to c1
	[ "$i" -lt 3 ] && { wait_for 10 has_turns c1 "$i" || fail "c1 turn $i"; wait_for 5 last_turn_done cap c1; }
done
sleep 1
expect_eq "$(turns_of c1)" 2 "the third turn waits for the hour"
expect_eq "$(sv cap c1 'a["turns_last_hour"], [w["reason"] for w in a["queue"]]')" "(2, ['message'])" "the wake waits in the queue"

# ---- a tripped budget holds the agent, a raised one lets it go --------------
team_up bud "" "b1:idle"
run budget set --agent b1 --limit-cents 0 --mode cap
run send "budget check" --team bud --from bud-lead --to b1
sleep 1
expect_eq "$(turns_of b1)" 0 "a tripped cap budget holds the agent"
run budget set --agent b1 --limit-cents 100 --mode cap
wait_for 10 has_turns b1 1 || fail "raising the budget did not let b1 run"

# ---- kill -9 mid-turn: the wake finishes once, after a restart --------------
team_up crash "" "x1:slow"
run send "the slow job" --team crash --from crash-lead --to x1
wait_for 10 test -e "$AGENT_LOG/x1.started" || fail "the slow turn did not start"
kill -9 "$SERVE1"
wait "$SERVE1" 2>/dev/null
expect_eq "$(sv crash x1 'a["running"]["status"]')" running "the turn is left running by the dead server"
touch "$AGENT_LOG/release"
start_serve 2
wait_for 10 has_turns x1 2 || fail "the wake did not run again after the restart"
wait_for 10 last_turn_done crash x1 || fail "the resumed turn was not recorded"
expect_contains "$(cat "$AGENT_LOG/x1.prompt.2")" "the slow job" "the message is shown again"
expect_contains "$(cat "$AGENT_LOG/x1.prompt.2")" "cut short" "the prompt says it resumes"
done_turns=$(db_query "SELECT status FROM autorun_turns WHERE agent_id = 'x1' ORDER BY id" | paste -sd,)
expect_eq "$done_turns" "aborted,done" "one turn aborted, one done: the wake finished once"
run chat read crash
expect_eq "$(grep -c 'x1 \[peer\]: finally done' <<<"$OUT")" 1 "one narration in the room"

# ---- two servers on one home: one turn at a time per agent -------------------
start_serve 3
team_up two '{"park_after":100}' "t1:idle:0.3"
for i in 1 2 3 4 5 6; do
	run send "message $i" --team two --from two-lead --to t1
	sleep 0.15
done
wait_for 20 eval '[ "$(sv two t1 "len(a[\"queue\"]) + (a[\"running\"] is not None)")" = 0 ]' || fail "t1's wakes did not drain"
overlaps=$(python3 -c 'import sys
l=[x.split() for x in open(sys.argv[1])]
spans=[]; s=None
for k,t in l:
    if k=="start": s=float(t)
    else: spans.append((s,float(t)))
print(sum(1 for i in range(1,len(spans)) if spans[i][0] < spans[i-1][1]))' "$AGENT_LOG/t1.log")
expect_eq "$overlaps" 0 "never two turns of one agent at once"
all=$(cat "$AGENT_LOG"/t1.prompt.* | grep -o 'message [0-9]' | sort -u | tr '\n' ' ')
expect_eq "$all" "message 1 message 2 message 3 message 4 message 5 message 6 " "every message reached a turn"

kill "$SERVE2" "$SERVE3"
wait "$SERVE2" "$SERVE3" 2>/dev/null
finish
