#!/bin/bash
# test-activity.sh -- the leader's true view of its team through the CLI
# (issue 21 items 1-3; the MCP side is in mcp.test.mjs): statuses and last
# activity after every kind of act, the idle notice, a shutdown that
# completes because its members went idle, and a failing exec member put in
# error, skipped by selection, the leader told, and replaced.
. "$(dirname "$0")/lib.sh"

# state_line TEAM AGENT: the member's line of the TEAM STATE block
state_line() {
	"$HUDDLE" team state "$1" | grep "^  - $2 ("
}
# field AGENT EXPR: a field of `agent show --json`
field() {
	json_get "$("$HUDDLE" --json agent show "$1")" "$2"
}

run team create act
run agent add act lead --leader
run agent add act coder
run agent add act tester

# --- before anything: idle, never active -------------------------------------
expect_eq "$(state_line act coder)" "  - coder (Member): idle" "a new member: idle, no activity"
expect_eq "$(field coder 'j["last_active_at"]')" "None" "never active"

# --- each act stamps last_active_at; started work is working -------------------
T1=$(json_get "$("$HUDDLE" --json task create act "Parse the config" --as lead)" 'j["id"]')
T2=$(json_get "$("$HUDDLE" --json task create act "Ship it" --depends-on "$T1" --as lead)" 'j["id"]')
run task claim "$T1" --as coder
expect_rc 0 "claim"
expect_eq "$(field coder 'j["status"]+" "+str(j["last_active_at"] is not None)')" "idle True" \
	"a claim stamps the activity; claimed work is not started"
expect_eq "$(state_line act coder)" "  - coder (Member): idle; holds #$T1 \"Parse the config\" (claimed); last active just now" \
	"the block shows what it holds"
run task start "$T1" --as coder
expect_eq "$(state_line act coder)" "  - coder (Member): working; holds #$T1 \"Parse the config\" (in_progress); last active just now" \
	"starting makes it working"
run --json team state act
expect_eq "$(json_get "$OUT" '[(m["id"], m["status"], [t["id"] for t in m["tasks"]]) for m in j["members"] if m["id"] == "coder"][0]')" \
	"('coder', 'working', [$T1])" "team state --json: status and tasks"

expect_eq "$(field tester 'j["last_active_at"]')" "None" "tester has not acted"
run chat post act "looking at the tests" --as tester
expect_rc 0 "post"
expect_eq "$(field tester 'str(j["last_active_at"] is not None)')" "True" "a post stamps it"
expect_eq "$(field lead 'str(j["last_active_at"] is not None)')" "True" "creating tasks stamped the leader"
run send act --as tester --to coder "need a hand?"
expect_rc 0 "send, team first and --as"
run send "and the old spelling" --team act --from tester --to coder
expect_rc 0 "send, --team and --from"
run broadcast act --as tester "standup soon"
expect_rc 0 "broadcast, team first and --as"

# --- completing the last started task: idle, and the leader is told ---------------
run --json inbox lead
run task complete "$T1" --as coder --result "parsed"
expect_rc 0 "complete"
expect_eq "$(field coder 'j["status"]')" "idle" "finished work: idle"
run --json inbox lead
expect_eq "$(json_get "$OUT" '" | ".join(m["type"]+": "+m["content"] for m in j)')" \
	"task_update: Task #$T1 \"Parse the config\" completed by coder: parsed
Now ready: #$T2 \"Ship it\" | idle: coder is idle; last finished task #$T1 \"Parse the config\" (completed)" \
	"the leader gets the task update and the idle notice"
run --json events --team act --kind agent_status --limit 100
expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["from"], e["data"]["to"]) for e in j][-2:]')" \
	"[('coder', 'idle', 'working'), ('coder', 'working', 'idle')]" "the status events"

# the leader going idle tells nobody
run task claim "$T2" --as lead
run task start "$T2" --as lead
run task fail "$T2" --as lead --reason "blocked upstream"
expect_eq "$(field lead 'j["status"]')" "idle" "the leader is idle again"
run --json inbox lead
expect_eq "$OUT" "[]" "the leader is not told of itself"

# --- a shutdown completes because its members went idle ----------------------------
T3=$(json_get "$("$HUDDLE" --json task create act "Migrate" --as lead)" 'j["id"]')
run task claim "$T3" --as coder
run task start "$T3" --as coder
run team shutdown act --timeout 60
expect_rc 0 "shutdown asked"
expect_contains "$OUT" "coder" "coder, who works, is asked"
run team show act --json
expect_eq "$(json_get "$OUT" 'j["status"]')" "shutting_down" "the team waits"
run task complete "$T3" --as coder
expect_rc 0 "coder finishes"
run team show act --json
expect_eq "$(json_get "$OUT" 'j["status"]')" "shutdown" "going idle approved: the team is shut down at once"
expect_eq "$(field coder 'j["status"]')" "shutdown" "coder is shut down"

# --- a failing member: error, the leader told, skipped, reset, replaced -------------
run team create fl
run agent add fl boss --leader --runtime exec --config '{"command": ["sh", "-c", "cat >/dev/null; echo noted"]}'
run agent add fl broken --runtime exec --config '{"command": ["sh", "-c", "cat >/dev/null; echo disk full >&2; exit 3"]}'
run agent add fl spare
T4=$(json_get "$("$HUDDLE" --json task create fl "Index the repo" --as boss)" 'j["id"]')
run task claim "$T4" --as broken
run task start "$T4" --as broken
run --json exchange fl --stimulus "go" --first broken
expect_rc 1 "an exchange with a failed turn exits 1"
expect_eq "$(json_get "$OUT" 'str(j["result"]["turnsFailed"])+" "+j["result"]["speakers"][0]')" "1 broken" \
	"the result counts the failed turn"
expect_eq "$(field broken 'j["status"]')" "error" "a failed turn: error"
expect_contains "$(field broken 'j["status_reason"]')" "exit" "with the reason"
expect_contains "$(state_line fl broken)" "  - broken (Member): error: " "the block shows the error"
run --json events --team fl --kind turn_failed --limit 10
expect_eq "$(json_get "$OUT" 'j[-1]["agent_id"]')" "broken" "turn_failed is recorded"
run --json inbox boss
expect_eq "$(json_get "$OUT" 'j[-1]["from_agent"]+" | "+j[-1]["summary"]')" "huddle | broken's turn failed" \
	"the leader is told"
expect_contains "$(json_get "$OUT" 'j[-1]["content"]')" "huddle agent replace fl broken NEW" \
	"and what it can do"

# skipped by selection: alone it is refused; beside the leader only the
# leader speaks
run exchange fl --stimulus "again" --first broken
expect_rc 1 "an exchange of members in error only"
expect_contains "$ERR" "every first speaker is in error: broken (" "refused, naming it"
run --json exchange fl --stimulus "again" --first boss,broken
expect_rc 0 "the leader speaks"
expect_eq "$(json_get "$OUT" '",".join(j["result"]["speakers"])')" "boss" "broken is skipped"
# auto-assignment skips it too
T5=$(json_get "$("$HUDDLE" --json task create fl "Write docs" --as boss)" 'j["id"]')
run task assign "$T5" --auto --as boss
expect_contains "$OUT" "assigned to spare" "auto-assignment skips the member in error"

# a reset brings it back; a replacement takes over its work
run agent set-status broken idle
expect_eq "$(field broken 'j["status"]+" "+str(j["status_reason"])')" "working None" \
	"a reset clears the error; it still holds a started task"
run agent set-status broken error
run agent replace fl broken fixed --config '{"command": ["sh", "-c", "cat >/dev/null; echo ok"]}' --as boss
expect_rc 0 "replace"
run task show "$T4" --json
expect_eq "$(json_get "$OUT" 'j["owner"]+" "+j["status"]')" "fixed in_progress" "its task moved"
expect_eq "$(state_line fl fixed)" "  - fixed (Member): working; holds #$T4 \"Index the repo\" (in_progress); last active just now" \
	"the replacement is working on it"
expect_eq "$(field broken 'j["status"]')" "shutdown" "the failed member is retired"

finish
