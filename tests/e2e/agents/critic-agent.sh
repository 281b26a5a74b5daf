#!/bin/sh
# critic-agent.sh -- an exec agent that acts as a task's critic for
# test-verify.sh. It reads its prompt, finds the task ("the critic of
# task #N"), copies the prompt to $CRITIC_DIR/prompt.<N>, then does what
# $CRITIC_DIR/mode says:
#   approve      huddle task verdict N --verdict approve --as <itself>
#   mcp          the verify_verdict tool, over `huddle mcp` bound to itself
#                (the answer kept in $CRITIC_DIR/mcp.out)
#   reject       the same with --verdict reject and $CRITIC_DIR/reasons
#   silent       answers without a verdict
#   sleep        sleeps 60 s (a critic that never answers in time)
#   owner        gives the verdict as $CRITIC_OWNER (must be refused)
# and replies with what it did. With $CRITIC_DIR/record present it
# first records its home ($CRITIC_DIR/home.<agent>, ls.<agent>) and
# plants a file there. $HUDDLE_BIN is the huddle binary; the
# verdict goes through the CLI as this agent, the way an MCP client's
# verify_verdict call goes through the same library function.
set -u
prompt=$(cat)
id=$(printf '%s\n' "$prompt" | sed -n 's/.*the critic of task #\([0-9]*\).*/\1/p' | head -n 1)
printf '%s\n' "$prompt" >"$CRITIC_DIR/prompt.$id"
# with $CRITIC_DIR/record: where its home is and what it holds, then a
# file planted there (a later critic must not find it)
if [ -e "$CRITIC_DIR/record" ]; then
	printf '%s\n' "${HUDDLE_AGENT_HOME:-}" >"$CRITIC_DIR/home.$HUDDLE_AGENT"
	ls -A "${HUDDLE_AGENT_HOME:-/nonexistent}" >"$CRITIC_DIR/ls.$HUDDLE_AGENT" 2>&1
	[ -n "${HUDDLE_AGENT_HOME:-}" ] && echo "$HUDDLE_AGENT" >"$HUDDLE_AGENT_HOME/planted"
fi
mode=$(cat "$CRITIC_DIR/mode" 2>/dev/null || echo approve)
case $mode in
approve)
	"$HUDDLE_BIN" task verdict "$id" --verdict approve \
		-r "looks right" --as "$HUDDLE_AGENT" >/dev/null ||
		echo "verdict refused" ;;
reject)
	"$HUDDLE_BIN" task verdict "$id" --verdict reject \
		-r "$(cat "$CRITIC_DIR/reasons")" --as "$HUDDLE_AGENT" >/dev/null ||
		echo "verdict refused" ;;
mcp)
	printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"verify_verdict\",\"arguments\":{\"task_id\":$id,\"verdict\":\"approve\",\"reasons\":\"checked over MCP\"}}}" |
		"$HUDDLE_BIN" mcp --team "$HUDDLE_TEAM" --agent "$HUDDLE_AGENT" \
			>"$CRITIC_DIR/mcp.out" 2>/dev/null ;;
owner)
	"$HUDDLE_BIN" task verdict "$id" --verdict approve \
		--as "$CRITIC_OWNER" 2>"$CRITIC_DIR/owner.err" >/dev/null ;;
sleep) sleep 60 ;;
esac
echo "critic $HUDDLE_AGENT: $mode on task $id"
