#!/bin/sh
# slow-agent.sh -- an exec agent whose turn takes a while, for
# test-progress.sh and the dashboard's progress test: it records its
# process group in $AGENT_LOG/<agent>.pgid (one line per turn), starts a
# child in that group, and answers "<agent> done" once the child ends
# ($AGENT_SLEEP seconds, default 30). A cancel must kill the whole group.
set -u
me=$HUDDLE_AGENT
cat >/dev/null
ps -o pgid= -p $$ | tr -d ' ' >>"$AGENT_LOG/$me.pgid"
sleep "${AGENT_SLEEP:-30}" &
wait $!
echo "$me done"
