#!/usr/bin/env bash
# test-progress.sh -- progress and cancel from the CLI: on a terminal (a
# pseudo-terminal made by script(1)) `huddle ask` shows who is working and
# for how long on stderr, erases it before its output and at the end, and
# honours NO_COLOR and TERM=dumb; piped (or --json, --quiet) it shows none
# of it. Ctrl-C (SIGINT) mid-turn cancels `ask` and `exchange`: exit 130,
# the turn's process group is gone, the work is recorded cancelled (status,
# event) and the agent is idle, not error. `huddle conversation cancel` and
# `huddle exchange cancel` from another process end a running one as
# cancelled; cancelling one that ended is refused.
. "$(dirname "$0")/lib.sh"

if ! command -v script >/dev/null 2>&1; then
	echo "$T_NAME: skipped: needs script(1) from util-linux"
	exit 77
fi
run init
expect_rc 0 "init"
slow_team short 3
slow_team slow 60
slow_team ex 60
slow_team ex2 60
slow_team rc 60

# field AGENT EXPR: a field of `agent show --json`
field() {
	json_get "$("$HUDDLE" --json agent show "$1")" "$2"
}
# wait_turns TEAM N: until the team's leader began its Nth turn
wait_turns() {
	for _ in $(seq 1 600); do
		[ "$(cat "$T_TMP/log/$1/$1-coder.pgid" 2>/dev/null | wc -l)" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "$1: turn $2 never began"
}
# group_gone TEAM: the last turn's process group has no process left
group_gone() {
	local pg
	pg=$(tail -1 "$T_TMP/log/$1/$1-coder.pgid")
	for _ in $(seq 1 100); do
		pgrep -g "$pg" >/dev/null || return 0
		sleep 0.05
	done
	return 1
}
# conv_id FILE: the conversation id from ask's note on stderr
conv_id() {
	sed -n 's/^note: conversation \([0-9a-f-]*\)$/\1/p' "$1" | head -1
}
# in_tty OUTFILE CMD...: CMD on a pseudo-terminal (stdout and stderr both
# go to it); the terminal's bytes in OUTFILE, the exit code in $RC
in_tty() {
	local out=$1
	shift
	script -qfec "$*" /dev/null >"$out" 2>&1 </dev/null
	RC=$?
}
# check_tty FILE WHAT...: python checks on the terminal's bytes
check_tty() {
	python3 - "$@" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
what = sys.argv[2]
resp = data.find('=== answered: ')
if what == 'redrawn':
    # the line is redrawn in place, shows the agent working with seconds,
    # and is erased before the response and never drawn after it
    ok = ('\r' in data and 'coder' in data and 'working' in data
          and resp > 0 and data.rfind('working') < resp
          and data[:resp].endswith('\r\x1b[K')
          and 'working 1s' in data.replace('\x1b[0m', '').replace('\x1b[33m', '').replace('\x1b[1m', ''))
elif what == 'colour':
    ok = '\x1b[1mshort-coder\x1b[0m' in data
elif what == 'no-colour':
    ok = 'coder working' in data and '\x1b[1m' not in data and '\x1b[33m' not in data
elif what == 'dumb':
    # no redraw: one line per change, nothing to erase
    ok = ('coder working' in data and '\x1b[K' not in data
          and data.count('coder working') == 1)
elif what == 'none':
    ok = 'working' not in data
else:
    ok = False
print('yes' if ok else 'no: ' + repr(data[-600:]))
PY
}

# ---- (a) a terminal sees who is working, for how long ----------------------
in_tty "$T_TMP/tty1" env TERM=xterm "$HUDDLE" ask short "'hello'"
expect_eq "$RC" "0" "ask on a terminal"
expect_eq "$(check_tty "$T_TMP/tty1" redrawn)" "yes" "status line redrawn, erased before the response"
expect_eq "$(check_tty "$T_TMP/tty1" colour)" "yes" "colour on a colour terminal"
expect_contains "$(cat "$T_TMP/tty1")" "@short-coder: short-coder done" "the reply is printed"
in_tty "$T_TMP/tty2" env TERM=xterm NO_COLOR=1 "$HUDDLE" ask short "'hello'"
expect_eq "$RC" "0" "ask with NO_COLOR"
expect_eq "$(check_tty "$T_TMP/tty2" no-colour)" "yes" "NO_COLOR: no colour codes"
in_tty "$T_TMP/tty3" env TERM=dumb "$HUDDLE" ask short "'hello'"
expect_eq "$RC" "0" "ask on a dumb terminal"
expect_eq "$(check_tty "$T_TMP/tty3" dumb)" "yes" "TERM=dumb: one line per change, no redraw"
in_tty "$T_TMP/tty4" env TERM=xterm "$HUDDLE" ask short "'hello'" --quiet
expect_eq "$(check_tty "$T_TMP/tty4" none)" "yes" "--quiet: no status line"
in_tty "$T_TMP/tty5" env TERM=xterm "$HUDDLE" --json ask short "'hello'"
expect_eq "$(check_tty "$T_TMP/tty5" none)" "yes" "--json: no status line"
in_tty "$T_TMP/tty6" env TERM=xterm "$HUDDLE" exchange short --stimulus go --max-turns 1
expect_eq "$RC" "0" "exchange on a terminal"
expect_contains "$(cat "$T_TMP/tty6")" "[turn 1/1]" "exchange status line names the turn"
expect_contains "$(cat "$T_TMP/tty6")" "working" "exchange status line: working"

# ---- (b) piped: none of it -------------------------------------------------
run ask short "hello"
expect_rc 0 "ask piped"
expect_eq "$(printf '%s' "$ERR" | grep -c working)" "0" "piped stderr has no status line"
expect_eq "$(printf '%s' "$ERR" | grep -c $'\r')" "0" "piped stderr has no carriage returns"

# ---- (c) Ctrl-C cancels an ask mid-turn ------------------------------------
"$HUDDLE" ask slow "hello" >"$T_TMP/c.out" 2>"$T_TMP/c.err" &
ASK=$!
wait_turns slow 1
expect_eq "$(field slow-coder 'j["status"]')" "working" "the agent works"
kill -INT $ASK
wait $ASK
expect_eq "$?" "130" "Ctrl-C: exit 130"
group_gone slow
expect_eq "$?" "0" "Ctrl-C: the turn's process group is gone"
ID=$(conv_id "$T_TMP/c.err")
run --json conversation show "$ID"
expect_rc 0 "conversation show"
expect_eq "$(json_get "$OUT" 'j["status"]')" "cancelled" "Ctrl-C: the conversation is cancelled"
expect_eq "$(json_get "$OUT" 'j["completedAt"] is not None')" "True" "cancelled conversations end"
run conversation show "$ID"
expect_contains "$OUT" "conversation $ID in slow: cancelled (0 replies, 1 pending)" "conversation show, human"
expect_contains "$(cat "$T_TMP/c.out")" "=== 0 replies (cancelled by the user) ===" "what was said so far is printed"
expect_contains "$(cat "$T_TMP/c.err")" "cancelling conversation $ID" "Ctrl-C says it cancels"
expect_eq "$(field slow-coder 'j["status"]')" "idle" "Ctrl-C: the agent is idle, not error"
run --json events --team slow --kind conversation_cancelled
expect_eq "$(json_get "$OUT" 'j[-1]["data"]["reason"]')" "cancelled by the user" "conversation_cancelled event"
expect_eq "$(json_get "$OUT" 'j[-1]["data"]["conversation_id"]')" "$ID" "the event names it"
[ -f "$(json_get "$OUT" 'j[-1]["data"]["transcript"]')" ]
expect_eq "$?" "0" "the transcript is kept"

# ---- (d) Ctrl-C cancels an exchange mid-turn -------------------------------
"$HUDDLE" exchange ex --stimulus "go" >"$T_TMP/d.out" 2>"$T_TMP/d.err" &
EXC=$!
wait_turns ex 1
kill -INT $EXC
wait $EXC
expect_eq "$?" "130" "exchange Ctrl-C: exit 130"
group_gone ex
expect_eq "$?" "0" "exchange Ctrl-C: the process group is gone"
expect_contains "$(cat "$T_TMP/d.out")" "ended: cancelled after 1 turn (ex-coder)" "exchange ends cancelled"
expect_contains "$(cat "$T_TMP/d.err")" "cancelling the exchange" "exchange Ctrl-C says it cancels"
run --json events --team ex --kind turn_bound_hit
expect_eq "$(json_get "$OUT" 'j[-1]["data"]["reason"]')" "cancelled" "turn_bound_hit: cancelled"
expect_eq "$(field ex-coder 'j["status"]')" "idle" "exchange Ctrl-C: the agent is idle, not error"

# ---- (e) cancel from another process ---------------------------------------
"$HUDDLE" ask rc "hello" >"$T_TMP/e.out" 2>"$T_TMP/e.err" &
ASK=$!
wait_turns rc 1
ID=$(conv_id "$T_TMP/e.err")
run conversation cancel rc "$ID"
expect_rc 0 "conversation cancel"
expect_eq "$OUT" "conversation $ID cancelled" "conversation cancel output"
wait $ASK
expect_eq "$?" "1" "the cancelled ask exits 1"
expect_contains "$(cat "$T_TMP/e.err")" "conversation $ID was cancelled" "the ask says why"
group_gone rc
expect_eq "$?" "0" "cancel: the process group is gone"
run --json conversation show "$ID"
expect_eq "$(json_get "$OUT" 'j["status"]')" "cancelled" "cancelled from elsewhere"
expect_eq "$(field rc-coder 'j["status"]')" "idle" "cancel: the agent is idle"
run conversation cancel "$ID"
expect_rc 1 "cancelling an ended conversation"
expect_eq "$ERR" "huddle: conversation $ID already ended (cancelled)" "ended: clear error"
run --json conversation cancel "$ID"
expect_rc 1 "cancelling an ended conversation, --json"
expect_eq "$(json_get "$ERR" 'j["code"]')" "conflict" "--json error on stderr"
run conversation cancel nosuch
expect_rc 1 "cancelling an unknown conversation"
expect_eq "$ERR" 'huddle: conversation "nosuch" not found' "unknown conversation"
run conversation cancel short "$ID"
expect_rc 1 "cancelling with the wrong team"
expect_eq "$ERR" "huddle: conversation $ID is not in team short" "wrong team"

"$HUDDLE" exchange ex2 --stimulus "go" >"$T_TMP/e2.out" 2>"$T_TMP/e2.err" &
EXC=$!
wait_turns ex2 1
run exchange cancel ex2
expect_rc 0 "exchange cancel"
expect_eq "$OUT" "exchange in team:ex2 cancelled" "exchange cancel output"
wait $EXC
expect_eq "$?" "1" "the cancelled exchange exits 1"
expect_contains "$(cat "$T_TMP/e2.out")" "ended: cancelled after 1 turn (ex2-coder)" "cancelled from elsewhere"
group_gone ex2
expect_eq "$?" "0" "exchange cancel: the process group is gone"
expect_eq "$(field ex2-coder 'j["status"]')" "idle" "exchange cancel: the agent is idle"
run exchange cancel ex2
expect_rc 1 "nothing to cancel"
expect_eq "$ERR" "huddle: no exchange is running in team ex2's room" "no exchange: clear error"
run exchange cancel nosuch
expect_rc 1 "exchange cancel, unknown team"
expect_eq "$ERR" 'huddle: team "nosuch" not found' "unknown team"

# A cancelled agent takes work again.
run ask short "again"
expect_rc 0 "the team answers after a cancel"

finish
