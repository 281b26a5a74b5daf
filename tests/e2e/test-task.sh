#!/usr/bin/env bash
# test-task.sh -- `huddle task ...` end to end: success paths, refusals
# (exit 1, `huddle: <message>` on stderr), usage errors (exit 2) and
# --json output that parses.
. "$(dirname "$0")/lib.sh"

run team create dev; expect_rc 0 "team create"
run agent add dev manager --leader; expect_rc 0 "add leader"
run agent add dev coder; expect_rc 0 "add coder"
run agent add dev tester; expect_rc 0 "add tester"
run team create ops; expect_rc 0 "team create ops"
run agent add ops boss; expect_rc 0 "add boss"

# create
run_says 0 'created task #1 "Write docs" in team dev' "create" task create dev "Write docs" --description "All of them" --meta area=docs --as coder
run --json task create dev "Ship" --depends-on 1 --priority 3 --meta area=release
expect_rc 0 "create --json"
expect_json "$OUT" "create --json parses"
expect_eq "$(json_get "$OUT" 'j["depends_on"]')" "[1]" "depends_on"
expect_eq "$(json_get "$OUT" 'j["blocked_by"]')" "[1]" "blocked_by"
expect_eq "$(json_get "$OUT" 'j["priority"]')" "3" "priority"
expect_eq "$(json_get "$OUT" 'j["created_by"]')" "user" "created_by"
run_says 1 "huddle: unknown dependency: task 9" "unknown dependency" task create dev "Ghost dep" --depends-on 9
run_says 1 "huddle: task subject must not be empty" "empty subject" task create dev ""
run_says 1 "huddle: task subject is 201 characters; the limit is 200" "long subject" task create dev "$(printf 'x%.0s' $(seq 201))"
run task create dev "Bad" --depends-on 1,x
expect_rc 2 "bad --depends-on"
expect_contains "$ERR" 'huddle: --depends-on must be an integer, not "x"' "bad --depends-on text"
run task create dev "Bad" --meta novalue
expect_rc 2 "bad --meta"
run task create dev
expect_rc 2 "missing subject"
run_says 1 'huddle: team "ghost" not found' "unknown team" task create ghost "X"

# list
run task list dev
expect_rc 0 "list"
expect_eq "$(echo "$OUT" | head -1 | tr -s ' ')" "ID STATUS OWNER PRI SUBJECT BLOCKED BY" "list header"
expect_eq "$(echo "$OUT" | sed -n 2p | tr -s ' ')" "2 pending - 3 Ship 1" "list row 1 (newest first)"
expect_eq "$(echo "$OUT" | sed -n 3p | tr -s ' ')" "1 pending - 0 Write docs -" "list row 2"
run --json task list dev --blocked
expect_json "$OUT" "list --json parses"
expect_eq "$(json_get "$OUT" '[t["id"] for t in j]')" "[2]" "--blocked"
run --json task list dev --ready
expect_eq "$(json_get "$OUT" '[t["id"] for t in j]')" "[1]" "--ready"
run --json task list dev --meta area=release
expect_eq "$(json_get "$OUT" '[t["id"] for t in j]')" "[2]" "--meta"
run --json task list dev --limit 1
expect_eq "$(json_get "$OUT" '[t["id"] for t in j]')" "[2]" "--limit"
run_says 1 'huddle: unknown task status "done": use pending, claimed, in_progress, completed, failed or cancelled' "bad status" task list dev --status done
run task list dev --limit zero
expect_rc 2 "bad --limit"
run task list
expect_rc 2 "list without team"

# claim: blocked, success, lost
run_says 1 "huddle: task 2 is blocked by 1" "claim blocked" task claim 2 --as coder
run task claim 1
expect_rc 2 "claim without --as"
run_says 1 'huddle: no member "boss" in team dev' "claim by non-member" task claim 1 --as boss
run_says 0 'task #1 "Write docs" claimed by coder' "claim" task claim 1 --as coder
run_says 1 "huddle: task 1 is already claimed by coder" "claim lost" task claim 1 --as tester
run_says 1 "huddle: task 99 not found" "claim missing" task claim 99 --as tester

# owner rule and transitions
run_says 1 "huddle: task 1 is owned by coder, not tester" "start by non-owner" task start 1 --as tester
run_says 0 'task #1 "Write docs" is now in_progress' "start" task start 1 --as coder
run_says 1 "huddle: task 1 cannot go from in_progress to in_progress" "start twice" task start 1 --as coder
run --json task complete 1 --as coder --result "Wrote them all"
expect_rc 0 "complete"
expect_json "$OUT" "complete --json parses"
expect_eq "$(json_get "$OUT" 'j["status"]')" "completed" "completed status"
expect_eq "$(json_get "$OUT" 'j["result"]')" "Wrote them all" "result"
expect_eq "$(json_get "$OUT" 'j["unblocked"]')" "[2]" "complete --json: what it made ready"
run_says 1 "huddle: task 1 cannot go from completed to in_progress" "completed cannot start" task start 1
run task show x
expect_rc 2 "show bad id"
run task show 0
expect_rc 2 "show zero id"

# auto-claim, fail, retry, release, cancel, assign
run_says 0 'task #2 "Ship" claimed by tester' "auto-claim" task auto-claim dev --as tester
run_says 1 "huddle: no ready task in team dev" "auto-claim none" task auto-claim dev --as tester
run task fail 2 --as tester --reason "disk full"
expect_rc 0 "fail"
run --json task show 2
expect_eq "$(json_get "$OUT" 'j["reason"]')" "disk full" "reason"
run_says 0 'task #2 "Ship" is now pending' "retry" task retry 2 --as manager
run_says 1 "huddle: only the team leader or a user may assign task 2, not coder" "assign by member" task assign 2 tester --as coder
run_says 0 'task #2 "Ship" assigned to tester' "assign" task assign 2 tester --as manager
run task release 2 --as tester
expect_rc 0 "release"
run_says 0 'task #2 "Ship" is now cancelled' "cancel" task cancel 2

# link and comment
run task create dev "A"; run task create dev "B"
run_says 0 'task #4 "B" depends on #3' "link" task link 4 --depends-on 3
run_says 1 "huddle: linking task 3 to task 4 would create a circular dependency" "cycle" task link 3 --depends-on 4
run task link 3
expect_rc 2 "link without --depends-on"
run task comment 3 "looks good" --as tester
expect_rc 0 "comment"
run --json task show 3
expect_eq "$(json_get "$OUT" 'j["comments"][0]["body"]')" "looks good" "comment stored"
expect_eq "$(json_get "$OUT" 'j["comments"][0]["author"]')" "tester" "comment author"
# the room heard every committed change, in order, and no refusal
run --json chat read dev --limit 500
expect_rc 0 "chat read"
expect_eq "$(json_get "$OUT" '"|".join(p["body"] for p in j["posts"][:7])')" \
	'Task #1 "Write docs" created.|Task #2 "Ship" created.|Task #1 "Write docs" claimed by coder.|Task #1 "Write docs" → in_progress.|Task #1 "Write docs" completed by coder; now ready: #2 "Ship".|Task #2 "Ship" claimed by tester.|Task #2 "Ship" failed: disk full.' \
	"room lines"
expect_eq "$(json_get "$OUT" 'sorted(set((p["authorAgentId"], p["kind"]) for p in j["posts"]))')" \
	"[('huddle', 'system')]" "room lines are system posts by huddle"
run --json inbox manager
expect_rc 0 "leader inbox"
expect_contains "$OUT" 'Task #1 \"Write docs\" completed by coder: Wrote them all\nNow ready: #2 \"Ship\"' "leader told of completion and what it made ready"

# Completion names the tasks it made ready: #B and #D waited on #A alone;
# #E still waits on #C, #F was claimed before it was linked to #A.
run team create rel; expect_rc 0 "team create rel"
for a in "lead --leader" dev1 dev2; do run agent add rel $a; expect_rc 0 "add $a"; done
new_task() { # new_task SUBJECT [options] -> the new task's id
	"$HUDDLE" --json task create rel "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}
A=$(new_task "Build"); B=$(new_task "Deploy" --depends-on "$A")
C=$(new_task "Gate"); D=$(new_task "Docs" --depends-on "$A")
E=$(new_task "Announce" --depends-on "$A,$C"); F=$(new_task "Hotfix")
run task claim "$F" --as dev2; expect_rc 0 "claim F"
run task link "$F" --depends-on "$A" --as lead; expect_rc 0 "link F to A"
run task claim "$A" --as dev1; expect_rc 0 "claim A"
run_says 0 "task #$A \"Build\" is now completed; now ready: #$B, #$D" "complete A" task complete "$A" --as dev1 --result "built it"
run --json chat read rel --limit 500
expect_eq "$(json_get "$OUT" 'j["posts"][-1]["body"]')" \
	"Task #$A \"Build\" completed by dev1; now ready: #$B \"Deploy\", #$D \"Docs\"." "room line names what became ready"
run --json inbox lead
expect_eq "$(json_get "$OUT" '[m["content"] for m in j]')" \
	"['Task #$A \"Build\" completed by dev1: built it\\nNow ready: #$B \"Deploy\", #$D \"Docs\"']" \
	"leader's task_update names what became ready"
run --json events --team rel --kind status_changed --limit 1
expect_eq "$(json_get "$OUT" 'j[-1]["data"]["unblocked"]')" "[$B, $D]" "the completion event lists what it made ready"
run task complete "$F" --as dev2
expect_eq "$OUT" "task #$F \"Hotfix\" is now completed" "a completion that frees nothing says nothing more"
run --json chat read rel --limit 500
expect_eq "$(json_get "$OUT" 'j["posts"][-1]["body"]')" "Task #$F \"Hotfix\" completed by dev2." "room line unchanged when nothing became ready"

# assign --auto: the idle member with the fewest open tasks, ties to the
# lowest id; never one working, in error or shut down; nothing written
# when nobody is idle. dev1 and dev2 have no open task now.
run_says 0 "task #$B \"Deploy\" assigned to dev1 (auto: idle, 0 open tasks, lowest id of 2 tied)" "assign --auto" task assign "$B" --auto --as lead
run --json task assign "$D" --auto --as lead
expect_rc 0 "assign --auto --json"
expect_json "$OUT" "assign --auto --json parses"
expect_eq "$(json_get "$OUT" '(j["owner"], j["assignee"], j["picked_because"])')" \
	"('dev2', 'dev2', 'idle, 0 open tasks')" "auto: fewer open tasks wins"
run task assign "$C" --auto
expect_eq "$OUT" "task #$C \"Gate\" assigned to dev1 (auto: idle, 1 open task, lowest id of 2 tied)" "auto as the user"
run agent add rel dev0; run agent add rel dev3
run agent set-status dev0 shutdown; expect_rc 0 "dev0 shut down"
run agent set-status dev3 error; expect_rc 0 "dev3 in error"
G=$(new_task "Polish")
run task assign "$G" --auto --as lead
expect_eq "$OUT" "task #$G \"Polish\" assigned to dev2 (auto: idle, 1 open task)" "auto skips error and shutdown members"
run agent set-status dev1 working; run agent set-status dev2 working
H=$(new_task "Release notes")
run --json chat read rel --limit 500; posts_before=$(json_get "$OUT" 'len(j["posts"])')
run_says 1 "huddle: no idle member in team rel to assign task $H to (dev0: shutdown, dev1: working, dev2: working, dev3: error)" "auto with nobody idle" task assign "$H" --auto --as lead
run --json task show "$H"
expect_eq "$(json_get "$OUT" '(j["status"], j["owner"])')" "('pending', None)" "a refused auto-assign writes nothing"
run --json chat read rel --limit 500
expect_eq "$(json_get "$OUT" 'len(j["posts"])')" "$posts_before" "a refused auto-assign posts nothing"
run_says 1 "huddle: only the team leader or a user may assign task $H, not dev1" "auto by a member" task assign "$H" --auto --as dev1
run task assign "$H"
expect_rc 2 "assign without AGENT or --auto"
expect_eq "$(echo "$ERR" | head -1)" "huddle: 'task assign' needs AGENT or --auto" "assign usage text"
run task assign "$H" dev1 --auto
expect_rc 2 "assign with AGENT and --auto"
run_says 0 "task #$H \"Release notes\" assigned to dev3" "explicit assign still works" task assign "$H" dev3 --as lead

# delegate: one act (task, owner, message); a refusal writes nothing
run team create sub; run agent add sub sl --leader; run agent add sub sw1
run agent add sub sw2; run agent add sub sw3
run task delegate sub --to sw1 "Fix the parser" -d "tests in tests/parse" -p 2 --as sl
expect_rc 0 "delegate"
delegated=$OUT
run --json task list sub
P=$(json_get "$OUT" 'j[0]["id"]')
expect_eq "$(json_get "$OUT" 'len(j)')" "1" "delegate: one task"
expect_eq "$delegated" "task #$P \"Fix the parser\" delegated to sw1" "delegate output"
expect_eq "$(json_get "$OUT" '(j[0]["status"], j[0]["owner"], j[0]["priority"], j[0]["created_by"])')" \
	"('claimed', 'sw1', 2, 'sl')" "delegated: claimed by the assignee"
run --json inbox sw1
expect_eq "$(json_get "$OUT" '[(m["type"], m["from_agent"], m["content"]) for m in j]')" \
	"[('task_update', 'sl', 'You were delegated task #$P \"Fix the parser\" by sl: tests in tests/parse')]" \
	"delegated: the assignee's message"
run --json chat read sub --limit 500
expect_eq "$(json_get "$OUT" 'j["posts"][-1]["body"]')" "Task #$P \"Fix the parser\" delegated to sw1 by sl." "delegated: one room line"
sub_posts=$(json_get "$OUT" 'len(j["posts"])')
sub_state() { # tasks, posts and sw2's waiting messages in team sub
	printf '%s %s %s' \
	    "$("$HUDDLE" --json task list sub | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" \
	    "$("$HUDDLE" --json chat read sub --limit 500 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["posts"]))')" \
	    "$("$HUDDLE" --json agent show sw2 | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status"))')"
}
before=$(sub_state)
run_says 1 "huddle: only the team leader or a user may delegate, not sw1" "delegate by a member" task delegate sub --to sw2 "Nope" --as sw1
run_says 1 'huddle: no member "boss" in team sub' "delegate outside the team" task delegate sub --to boss "Nope" --as sl
run agent set-status sw2 error
run_says 1 "huddle: cannot delegate to sw2: it is in error" "delegate to a member in error" task delegate sub --to sw2 "Nope" --as sl
run agent set-status sw3 shutdown
run_says 1 "huddle: cannot delegate to sw3: it is in shutdown" "delegate to a member shut down" task delegate sub --to sw3 "Nope"
run agent set-status sw2 idle
expect_eq "$(sub_state)" "$before" "refused delegations wrote nothing"
run --json inbox sw2
expect_eq "$OUT" "[]" "refused delegations sent nothing"
run task delegate sub "No assignee" --as sl
expect_rc 2 "delegate without --to"
expect_eq "$(echo "$ERR" | head -1)" "huddle: 'task delegate' needs --to AGENT" "delegate usage text"

# subtasks: parent and children, --tree, the caps, completion waits
run --json task create sub "Parser: lexer" --parent "$P" --as sw1
expect_rc 0 "create a subtask"
C1=$(json_get "$OUT" 'j["id"]')
expect_eq "$(json_get "$OUT" 'j["parent_id"]')" "$P" "subtask parent_id"
run --json task delegate sub --to sw2 "Parser: grammar" --parent "$P" --as sl
expect_rc 0 "delegate a subtask"
C2=$(json_get "$OUT" 'j["id"]')
run --json task show "$P"
expect_eq "$(json_get "$OUT" '(j["parent_id"], j["children"])')" "(None, [$C1, $C2])" "parent's children"
run task list sub --tree
expect_rc 0 "list --tree"
expect_eq "$OUT" "#$P [claimed] Fix the parser (sw1)
  ↳ #$C1 [pending] Parser: lexer
  ↳ #$C2 [claimed] Parser: grammar (sw2)" "list --tree output"
run_says 1 "huddle: task $P cannot complete: its subtasks #$C1, #$C2 are still open" "parent with open subtasks" task complete "$P" --as sw1
run team update sub --max-children 2 --max-task-depth 1 --max-new-roots 1 --new-roots-window 60
expect_rc 0 "team update caps"
run --json team show sub
expect_eq "$(json_get "$OUT" '(j["max_children"], j["max_task_depth"], j["max_new_roots"], j["new_roots_window_s"])')" \
	"(2, 1, 1, 60)" "team show --json: the caps"
run team show sub
expect_contains "$OUT" "subtasks:     at most 2 per task, nested at most 1 deep" "team show: subtask caps"
run_says 1 "huddle: task $P already has 2 subtasks (the team's max_children); finish or cancel some, or raise it with huddle team update sub --max-children N" "children cap" task create sub "Parser: third" --parent "$P" --as sw1
run_says 1 "huddle: a subtask of task $C1 would be at depth 2, deeper than the team's max_task_depth 1 (a root task is at depth 0); add it under a shallower task, or raise it with huddle team update sub --max-task-depth N" "depth cap" task create sub "Too deep" --parent "$C1"
run task create sub "Root one" --as sw2
expect_rc 0 "first root in the window"
run_says 1 "huddle: sw2 already created 1 root task in the last 60 s (the team's max_new_roots); make this a subtask of one of them, wait, or raise it with huddle team update sub --max-new-roots N" "roots cap" task create sub "Root two" --as sw2
run task create sub "Root by a user"
expect_rc 0 "a user is not capped"
run team update sub --max-children 0
expect_rc 2 "caps are at least 1"
run task create sub "Bad parent" --parent x
expect_rc 2 "bad --parent"
run task cancel "$C1"; run task complete "$C2" --as sw2
run task complete "$P" --as sw1
expect_rc 0 "parent completes once its subtasks are done"

# comments reach the room
run task comment "$P" "shipped in $(printf 'y%.0s' $(seq 250))" --as sw1
expect_rc 0 "comment"
run --json chat read sub --limit 500
expect_eq "$(json_get "$OUT" 'j["posts"][-1]["body"]')" \
	"Comment on task #$P \"Fix the parser\" by sw1: shipped in $(printf 'y%.0s' $(seq 189))" "comment line"

run task bogus
expect_rc 2 "unknown subcommand"
run task create --help
expect_rc 0 "help"
expect_contains "$OUT" "--depends-on" "help lists options"

finish
