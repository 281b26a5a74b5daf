#!/bin/sh
# autorun-agent.sh -- a deterministic exec agent for test-autorun.sh: it
# reads its turn's prompt on stdin and acts through the huddle CLI, as a
# model would through its tools. What it does is set by AGENT_MODE (from
# its runtime_config env); every turn appends "start <t>" and "end <t>"
# lines to $AGENT_LOG/<agent>.log and keeps its prompt as
# $AGENT_LOG/<agent>.prompt.<n>.
#   worker  (default) finish the tasks it owns, else the task its mail or
#           the wake names, else the team's best ready task
#   refuse  like worker, but refuses a shutdown request
#   idle    does nothing
#   slow    touches $AGENT_LOG/<agent>.started and waits for
#           $AGENT_LOG/release before it answers
#   leader  only notes what it was told
set -u
h() { "$HUDDLE" --home "$HUDDLE_HOME" "$@"; }
me=$HUDDLE_AGENT
team=$HUDDLE_TEAM
log=$AGENT_LOG/$me.log
n=$(($(ls "$AGENT_LOG/$me".prompt.* 2>/dev/null | wc -l) + 1))
prompt=$AGENT_LOG/$me.prompt.$n
cat >"$prompt"
echo "start $(date +%s.%N)" >>"$log"
[ -n "${AGENT_SLEEP:-}" ] && sleep "$AGENT_SLEEP"

# a shutdown request is answered first, from this turn
req=$(grep -o 'request_id="shutdown-[0-9a-f]*"' "$prompt" | head -1 | cut -d'"' -f2)
if [ -n "$req" ] && [ "${AGENT_MODE:-worker}" != idle ]; then
	if [ "${AGENT_MODE:-worker}" = refuse ]; then
		h shutdown-response --team "$team" --as "$me" --request-id "$req" \
			--refuse --reason "still busy with the release" >/dev/null
		echo "end $(date +%s.%N)" >>"$log"
		echo "$me refused the shutdown"
	else
		h shutdown-response --team "$team" --as "$me" --request-id "$req" \
			--approve >/dev/null
		echo "end $(date +%s.%N)" >>"$log"
		echo "$me approved the shutdown"
	fi
	exit 0
fi

case "${AGENT_MODE:-worker}" in
idle)
	echo "end $(date +%s.%N)" >>"$log"
	echo "nothing for me to do"
	exit 0 ;;
leader)
	grep -o 'Task #[0-9]* "[^"]*" [a-z]* by [a-z0-9-]*' "$prompt" >>"$AGENT_LOG/$me.told"
	echo "end $(date +%s.%N)" >>"$log"
	echo "noted"
	exit 0 ;;
slow)
	touch "$AGENT_LOG/$me.started"
	while [ ! -e "$AGENT_LOG/release" ]; do sleep 0.1; done
	echo "end $(date +%s.%N)" >>"$log"
	echo "finally done"
	exit 0 ;;
esac

# worker: the tasks it owns, else the one named, else the best ready one
id=$(h task list "$team" --owner "$me" --status claimed --json |
	python3 -c 'import json,sys; l=json.load(sys.stdin); print(l[0]["id"] if l else "")')
[ -z "$id" ] && id=$(h task list "$team" --owner "$me" --status in_progress --json |
	python3 -c 'import json,sys; l=json.load(sys.stdin); print(l[0]["id"] if l else "")')
if [ -z "$id" ]; then
	named=$(grep -o 'task #[0-9]*' "$prompt" | head -1 | tr -dc 0-9)
	if [ -n "$named" ] && h task claim "$named" --as "$me" >/dev/null 2>&1; then
		id=$named
	else
		id=$(h task auto-claim "$team" --as "$me" --json 2>/dev/null |
			python3 -c 'import json,sys
try: print(json.load(sys.stdin)["id"])
except Exception: print("")')
	fi
fi
if [ -n "$id" ]; then
	h task complete "$id" --as "$me" --result "done by $me" >/dev/null
	echo "end $(date +%s.%N)" >>"$log"
	echo "completed task #$id"
else
	echo "end $(date +%s.%N)" >>"$log"
	echo "found no task to do"
fi
