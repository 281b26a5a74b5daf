#!/bin/sh
# effect-agent.sh -- an exec agent for test-crash-turn.sh whose side effect
# comes after a wait, so a huddle killed while it waits shows whether the
# effect still happens. Each turn reads its prompt, then:
#   - when $CRASH_DIR/hold.<agent> exists (the turn the test kills), it
#     removes it, touches $CRASH_DIR/started.<agent> and waits
#     $CRASH_SLEEP seconds before the effect; other turns do not wait;
#   - appends "<agent>" to $CRASH_DIR/effects (the side effect): with
#     CRASH_MODE=leader the command itself does it after the wait; with
#     CRASH_MODE=group a child process it starts (and waits for) does the
#     wait and the append, so only a kill of the whole process group stops
#     it once the command is dead;
#   - replies $CRASH_REPLY (a mention, say), else "<agent> done".
set -u
me=$HUDDLE_AGENT
cat >/dev/null
delay=0
if [ -e "$CRASH_DIR/hold.$me" ]; then
	rm -f "$CRASH_DIR/hold.$me"
	: >"$CRASH_DIR/started.$me"
	delay=$CRASH_SLEEP
fi
if [ "${CRASH_MODE:-leader}" = group ]; then
	(
		sleep "$delay"
		echo "$me" >>"$CRASH_DIR/effects"
	) &
	wait $!
else
	sleep "$delay"
	echo "$me" >>"$CRASH_DIR/effects"
fi
echo "${CRASH_REPLY:-$me done}"
