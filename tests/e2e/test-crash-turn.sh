#!/usr/bin/env bash
# test-crash-turn.sh -- a crash mid-turn costs one turn, never a duplicate
# (issue 24): `huddle exchange` and `huddle ask` are killed with kill -9
# while an exec agent's turn waits before its side effect (appending its
# name to a file). The agent dies with huddle (PR_SET_PDEATHSIG), so the
# effect never happens; a child it left in its process group is killed by
# the rerun before the turn runs again. The same command run again is not
# refused by the room lock (its holder is gone, on this host, so it is
# taken at once, long before its lease), resumes from the last committed
# turn, and finishes: every side effect appears exactly once.
. "$(dirname "$0")/lib.sh"

AGENT=$HUDDLE_SRC/tests/e2e/agents/effect-agent.sh
export CRASH_DIR=$T_TMP/crash
mkdir -p "$CRASH_DIR"
BG=
trap '[ -n "$BG" ] && kill -9 "$BG" 2>/dev/null; wait 2>/dev/null; rm -rf "$T_TMP"' EXIT

# agent_json ID MODE SLEEP [REPLY]: a team file's entry for the agent.
agent_json() {
	printf '{"id":"%s","runtime":"exec","runtime_config":{"command":["%s"],"env":{"CRASH_DIR":"%s","CRASH_MODE":"%s","CRASH_SLEEP":"%s","CRASH_REPLY":"%s"}}}' \
		"$1" "$AGENT" "$CRASH_DIR" "$2" "$3" "${4:-}"
}
# kill_when_started AGENT: once AGENT's held turn waits, kill -9 huddle.
kill_when_started() {
	if wait_for 120 test -e "$CRASH_DIR/started.$1"; then pass; else
		fail "$1's turn never started"
	fi
	kill -9 "$BG"
	wait "$BG" 2>/dev/null
	BG=
}
effects() { sort "$CRASH_DIR/effects" 2>/dev/null | tr '\n' ' '; }

# ---- huddle exchange: three turns, killed in the second ----
printf '{"team":"cx","agents":[%s,%s,%s]}' \
	"$(agent_json a leader 3 | sed 's/^{/{"leader":true,/')" \
	"$(agent_json b leader 3)" "$(agent_json c leader 3)" >"$T_TMP/cx.json"
run up "$T_TMP/cx.json"
expect_rc 0 "up cx"
: >"$CRASH_DIR/hold.b"
"$HUDDLE" exchange cx --stimulus "ship it" --first a,b,c --max-turns 3 \
	>"$T_TMP/x1.out" 2>"$T_TMP/x1.err" &
BG=$!
kill_when_started b
expect_eq "$(effects)" "a " "the first turn's effect happened before the crash"
# b waited 3 s before its effect: well past that, it never happened, since
# b died with the huddle that ran it
sleep 4
expect_eq "$(effects)" "a " "the killed turn's agent did not act after huddle died"
run exchange cx --stimulus "ship it" --first a,b,c --max-turns 3
expect_rc 0 "the rerun is not refused and finishes"
expect_contains "$OUT" "exchange in team:cx (up to 3 turns), resumed after 1 turn
[2] b (round-robin, exec)" "the rerun resumes at the turn cut short"
expect_contains "$OUT" "ended: no_pending_obligation after 3 turns (a, b, c)" "the rerun ends the one exchange, counting the turn before the crash"
case "$OUT" in *"[1] a"*) fail "the committed turn ran again: $OUT" ;; *) pass ;; esac
expect_eq "$(effects)" "a b c " "each exchange side effect exactly once"
run events cx --kind turn_bound_hit --json
expect_eq "$(json_get "$OUT" 'len(j)')" "1" "one exchange ended, once"
run events cx --kind exchange_resumed --json
expect_eq "$(json_get "$OUT" 'j[0]["data"]["turns_taken"]')" "1" "the resume is an event"
# the room holds each turn's reply once
run chat read cx --json
expect_eq "$(json_get "$OUT" '" ".join(p["authorAgentId"] for p in j["posts"] if p["kind"] == "peer")')" "a b c" "one post per turn"

# ---- huddle ask: the leader mentions a mate, killed in the mate's turn;
# the mate's effect is made by a child left in its process group ----
: >"$CRASH_DIR/effects"
printf '{"team":"cv","agents":[%s,%s]}' \
	"$(agent_json lead group 6 '[@mate: do the thing]' | sed 's/^{/{"leader":true,/')" \
	"$(agent_json mate group 6)" >"$T_TMP/cv.json"
run up "$T_TMP/cv.json"
expect_rc 0 "up cv"
: >"$CRASH_DIR/hold.mate"
"$HUDDLE" ask cv "start the thing" >"$T_TMP/a1.out" 2>"$T_TMP/a1.err" &
BG=$!
kill_when_started mate
T0=$(date +%s)
expect_eq "$(effects)" "lead " "the leader's effect happened before the crash"
run ask cv "start the thing"
expect_rc 0 "the ask rerun finishes"
expect_contains "$ERR" "(resumed: it was interrupted" "the rerun resumes the conversation"
expect_contains "$OUT" "@lead: → @mate: do the thing" "the recorded reply is shown, not asked again"
expect_contains "$OUT" "@mate: mate done" "the interrupted message ran again"
# the child the killed turn left would append 6 s after it started: wait
# past that to prove the rerun killed its group
while [ $(($(date +%s) - T0)) -lt 8 ]; do sleep 0.5; done
expect_eq "$(effects)" "lead mate " "each ask side effect exactly once"
run events cv --kind conversation_started --json
expect_eq "$(json_get "$OUT" 'len(j)')" "1" "one conversation, not a second"
run events cv --kind conversation_completed --json
expect_eq "$(json_get "$OUT" 'len(j)')" "1" "and it completed"

finish
