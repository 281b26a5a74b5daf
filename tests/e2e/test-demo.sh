#!/usr/bin/env bash
# test-demo.sh -- `huddle demo`: in a fresh temporary home the scripted
# example team plays the all-hands (a conversation: fan-out to three
# members, the reviewer's note to the coder, the aggregate) and the
# follow-up (an exchange driven by the board); the transcript, the board
# and the home are printed; the home is kept and holds what was shown.
. "$(dirname "$0")/lib.sh"

# the demo's home goes under TMPDIR, inside this test's directory
export TMPDIR="$T_TMP"

run demo --home "$T_TMP/elsewhere"
expect_rc 2 "the demo makes its own home"
expect_contains "$ERR" "huddle: the demo makes a fresh home of its own; run it without --home" "--home refused"

run demo
expect_rc 0 "demo runs"
HOME_DIR=$(printf '%s\n' "$OUT" | sed -n 's/^home: //p')
case "$HOME_DIR" in
"$T_TMP"/huddle-demo-*) pass ;;
*) fail "home is a fresh directory under TMPDIR: [$HOME_DIR]" ;;
esac
[ -d "$HOME_DIR" ] && pass || fail "the home is kept"
expect_contains "$OUT" "scripted team (canned replies, not a model)" "labelled as scripted"

# 1. the all-hands: every reply, in whatever order the agents finished
expect_contains "$OUT" "== 1. The all-hands stand-up (a conversation) ==" "section 1"
expect_contains "$OUT" "@manager: Hosting the all-hands now. → @coder: what did you ship this week? → @reviewer: anything blocking review? → @tester: how is the test suite?" "the manager fans out"
expect_contains "$OUT" "@coder: Shipped the claim path and the room follower; both have tests." "coder answers"
expect_contains "$OUT" "@reviewer: Nothing blocking. → @coder: the claim path misses a null check on owner." "reviewer's note to coder"
expect_contains "$OUT" "@coder: Good catch from review; fixing the null check now." "coder answers the reviewer (backflow)"
expect_contains "$OUT" "@tester: All green: unit, end-to-end and the sanitizer run." "tester answers"
expect_contains "$OUT" "-- what the user receives: 5 messages, aggregated --" "the aggregate"
TRANSCRIPT=$(printf '%s\n' "$OUT" | sed -n 's/^transcript: //p')
[ -f "$TRANSCRIPT" ] && pass || fail "the transcript file exists: [$TRANSCRIPT]"
expect_contains "$(head -1 "$TRANSCRIPT")" "# Team Conversation: Dev team (@dev)" "transcript title"

# 2. the exchange: who speaks comes from the board
expect_contains "$OUT" "== 2. The follow-up (an exchange driven by the board) ==" "section 2"
expect_contains "$OUT" "[1] manager (round-robin, scripted)
    Coder takes the null-check fix (#1) and tester the regression test (#2). Report on the board when done.
    board: manager assigns #1 to coder
    board: manager assigns #2 to tester
[2] coder (round-robin, scripted)
    Fixed the null check on owner in the claim path (#1), as review asked. Marking it done.
    board: coder completes #1
[3] tester (round-robin, scripted)
    Added a regression test for a null owner (#2); unit, end-to-end and sanitizer runs are green.
    board: tester completes #2
[4] manager (round-robin, scripted)
    Both follow-ups are in: coder fixed the null check (#1) and tester added the regression test (#2). Closing the loop; thanks, team.
ended: no_pending_obligation after 4 turns (manager, coder, tester, manager): nobody owes a turn on the board
  (an exchange follows the board, not @mentions; to have the team answer
  by @mentions, ask it: huddle ask dev MESSAGE)" "the exchange transcript"

# 3. the board and where it all is
expect_contains "$OUT" "== 3. The board ==" "section 3"
if printf '%s\n' "$OUT" | grep -q '^  #1  completed  coder   Fix the null check on owner in the claim path  null check added$'; then pass; else fail "board row 1: $OUT"; fi
if printf '%s\n' "$OUT" | grep -q '^  #2  completed  tester  Add a regression test for a null owner  *regression test added$'; then pass; else fail "board row 2: $OUT"; fi
expect_contains "$OUT" "The demo's home is $HOME_DIR (kept; remove it when done)." "where the home is"

# the home holds what was shown
run --home "$HOME_DIR" --json task list dev
expect_rc 0 "task list in the demo's home"
expect_eq "$(json_get "$OUT" 'sorted(t["status"] for t in (j["tasks"] if isinstance(j, dict) else j))')" "['completed', 'completed']" "both tasks completed"
run --home "$HOME_DIR" --json events --kind turn_bound_hit
expect_eq "$(json_get "$OUT" 'j[-1]["data"]["reason"]')" "no_pending_obligation" "the exchange's end is in the log"
run --home "$HOME_DIR" chat read dev
expect_contains "$OUT" "manager [peer]: Both follow-ups are in" "the room has the exchange"

# a second run makes another fresh home
run demo
expect_rc 0 "demo runs again"
HOME2=$(printf '%s\n' "$OUT" | sed -n 's/^home: //p')
[ "$HOME2" != "$HOME_DIR" ] && [ -d "$HOME2" ] && pass || fail "a second fresh home"
finish
