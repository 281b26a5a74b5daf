#!/usr/bin/env bash
# test-mailbox.sh -- the mailbox commands end to end: send, broadcast,
# inbox, team state, team shutdown, shutdown-response and agent spawn;
# successes, refusals (`huddle: ...`, exit 1), usage errors (exit 2) and
# --json output that parses.
. "$(dirname "$0")/lib.sh"

run team create msg-team --name "Message team"
expect_rc 0 "team create"
run agent add msg-team lead --leader
run agent add msg-team worker-1
run agent add msg-team worker-2
expect_rc 0 "agent add"

# --- send ------------------------------------------------------------------
run send --team msg-team --from worker-1 --to lead "tests pass"
expect_rc 0 "send"
expect_eq "$OUT" "sent message #1 from worker-1 to lead" "send output"

run send --team msg-team --from worker-1 --to wrker-1 "hello"
expect_rc 1 "send to a phantom"
expect_eq "$ERR" 'huddle: no member "wrker-1" in team msg-team' "phantom text"

run send --team msg-team --from worker-1 --to lead "$(head -c 100001 /dev/zero | tr '\0' a)"
expect_rc 1 "send oversized"
expect_eq "$ERR" "huddle: message is 100001 bytes; the limit is 100000" \
	"oversized text"

run send --team msg-team --from worker-1 --to lead --type chat "x"
expect_rc 1 "send bad type"
expect_eq "$ERR" 'huddle: invalid message type "chat": use message, broadcast, shutdown_request, shutdown_response, idle, task_update or mention' "bad type text"

run send --team msg-team --from worker-1 "no recipient"
expect_rc 2 "send without --to"
expect_contains "$ERR" "huddle: 'send' needs a team, --as and --to" \
	"usage text"
run send --team msg-team --from worker-1 --to lead
expect_rc 2 "send without text"

run --json send --team msg-team --from worker-2 --to lead \
	"one two three four five six seven eight nine ten eleven"
expect_rc 0 "send --json"
expect_json "$OUT" "send --json"
expect_eq "$(json_get "$OUT" 'j["summary"]')" \
	"one two three four five six seven eight nine ten..." "auto summary"
expect_eq "$(json_get "$OUT" 'j["from_agent"]+">"+j["to_agent"]')" \
	"worker-2>lead" "json from/to"

# --- broadcast ----------------------------------------------------------------
run broadcast --team msg-team --from lead "standup <teammate-message> now"
expect_rc 0 "broadcast"
expect_eq "$OUT" "broadcast from lead to 2 members of team msg-team" \
	"broadcast output"
run --json broadcast --team msg-team --from lead "again"
expect_json "$OUT" "broadcast --json"
expect_eq "$(json_get "$OUT" 'j["sent"]')" "2" "broadcast count"
run broadcast --team msg-team "no sender"
expect_rc 2 "broadcast without --from"

# --- inbox ------------------------------------------------------------------
run --json inbox lead --peek
expect_rc 0 "inbox --peek --json"
expect_json "$OUT" "inbox --peek --json"
expect_eq "$(json_get "$OUT" 'len(j)')" "2" "two waiting"
expect_eq "$(json_get "$OUT" '[m["delivered_at"] for m in j]')" \
	"[None, None]" "peek does not deliver"

run inbox msg-team --as lead --limit 1
expect_rc 0 "inbox --limit 1"
expect_contains "$OUT" "from worker-1  [message]" "inbox line"
expect_contains "$OUT" "    tests pass" "inbox body"

run inbox msg-team --as worker-2 --render
expect_rc 0 "inbox --render"
expect_eq "$OUT" '<teammate-message teammate_id="lead" type="broadcast" summary="standup &lt;teammate-message&gt; now">
standup &lt;teammate-message> now
</teammate-message>

<teammate-message teammate_id="lead" type="broadcast" summary="again">
again
</teammate-message>' "rendered blocks"
run inbox worker-2
expect_eq "$OUT" "no new messages for worker-2" "delivered once"

run inbox ghost
expect_rc 1 "inbox of an unknown agent"
expect_eq "$ERR" 'huddle: agent "ghost" not found' "unknown agent text"
run inbox msg-team --as ghost
expect_rc 1 "inbox of an unknown agent, the team first"
expect_eq "$ERR" 'huddle: agent "ghost" not found' "unknown agent text, the team first"
run team create other
run inbox other --as lead
expect_rc 1 "inbox of an agent in another team"
expect_eq "$ERR" 'huddle: agent "lead" is not in team other' "wrong team text"
run inbox lead --limit 0
expect_rc 2 "inbox --limit 0"

# --- team state -----------------------------------------------------------
run team state msg-team
expect_rc 0 "team state"
expect_eq "${OUT%%

Autorun:*}" "=== TEAM STATE ===
Team: Message team (msg-team)
Status: active
Description: N/A

Members (3):
  - lead (Lead): idle; last active just now
  - worker-1 (Member): idle; last active just now
  - worker-2 (Member): idle; last active just now

Task Counts:
  - Pending: 0
  - In Progress: 0
  - Completed: 0
====================" "team state block"
expect_contains "$OUT" "Autorun: off (30 turns/hour per agent, parked after 3 idle turns)
  lead (scripted, idle): 0 turns in the last hour" "team state: what autorun holds"
run --json team state msg-team
expect_json "$OUT" "team state --json"
expect_eq "$(json_get "$OUT" 'j["team"]["status"]')" "active" "json status"
run team state ghost
expect_rc 1 "team state of a missing team"
expect_eq "$ERR" 'huddle: team "ghost" not found' "missing team text"

# --- agent spawn ------------------------------------------------------------
run --json agent spawn msg-team helper --task "Review PR 42"
expect_rc 0 "agent spawn"
expect_json "$OUT" "agent spawn --json"
expect_eq "$(json_get "$OUT" 'j["spawned_by"]')" "lead" "spawned_by"
expect_eq "$(json_get "$OUT" 'j["session_key"].startswith("agent:helper:teammate:") and len(j["session_key"]) == 22 + 36')" \
	"True" "session key format"
run --json inbox helper
expect_eq "$(json_get "$OUT" 'j[0]["content"]')" "Review PR 42" "first message"
run agent spawn msg-team joiner --as worker-1
expect_rc 0 "agent spawn --as"
run --json inbox joiner
expect_eq "$(json_get "$OUT" 'j[0]["content"]+"|"+j[0]["from_agent"]')" \
	"Join team msg-team as joiner|worker-1" "default first message"
run agent spawn ghost x
expect_rc 1 "spawn into a missing team"
expect_eq "$ERR" 'huddle: team "ghost" not found' "spawn missing team text"
run agent spawn msg-team
expect_rc 2 "spawn without a name"

# the runtime, its config and the model, checked as agent add checks them
run --json agent spawn msg-team coder-ai --runtime claude-code \
	--config '{"workdir": "/src", "model": "haiku"}' --model sonnet --role coder
expect_rc 0 "spawn with runtime, config and model"
expect_eq "$(json_get "$OUT" 'j["runtime"]+" "+j["runtime_config"]["model"]+" "+j["runtime_config"]["workdir"]+" "+j["role"]')" \
	"claude-code sonnet /src coder" "spawned runtime, model over the config's, role"
run agent spawn msg-team bad-ai --model sonnet
expect_rc 1 "model for a runtime without one"
expect_eq "$ERR" 'huddle: runtime_config: unknown key "model" for runtime scripted' \
	"model refused by the scripted runtime"
run agent spawn msg-team bad-ai --runtime codex --config '{"modle": "x"}'
expect_rc 1 "misspelt config key"
expect_eq "$ERR" 'huddle: runtime_config: unknown key "modle" for runtime codex' \
	"config key refused"
run agent spawn msg-team bad-ai --config '{not json'
expect_rc 2 "config that is not JSON"
run agent show bad-ai
expect_rc 1 "no agent from the refusals"

# spawn depth: each spawn one deeper than its spawner, up to the team's limit
run agent show helper
expect_contains "$OUT" "  spawned:   by lead, depth 1 (lead -> helper)" "show: depth 1"
run agent spawn msg-team d2 --as helper
expect_contains "$OUT" "spawned by helper at depth 2" "spawn output names the depth"
run team update msg-team --max-spawn-depth 2
expect_rc 0 "team update --max-spawn-depth"
run team show msg-team
expect_contains "$OUT" "  spawn depth:  at most 2" "team show: the limit"
run --json team show msg-team
expect_eq "$(json_get "$OUT" 'j["max_spawn_depth"]')" "2" "team show --json: the limit"
run agent spawn msg-team d3 --as d2 --task "go deeper"
expect_rc 1 "spawn past the limit"
expect_eq "$ERR" "huddle: cannot spawn: depth 3 would exceed team msg-team's spawn depth limit of 2 (d2 is at depth 2)" \
	"depth refusal text"
run agent show d3
expect_rc 1 "nothing written by the refused spawn"
run team update msg-team --max-spawn-depth 0
expect_rc 2 "--max-spawn-depth 0"
run team update msg-team --max-spawn-depth 3
run agent spawn msg-team d3 --as d2
expect_rc 0 "a raised limit lets it through"
run agent show d3
expect_contains "$OUT" "  spawned:   by d2, depth 3 (lead -> helper -> d2 -> d3)" "show: the chain"
run --json agent show d3
expect_eq "$(json_get "$OUT" 'str(j["spawn_depth"])+" "+j["spawned_by"]')" "3 d2" "show --json: depth"
run up /dev/stdin <<<'{"team": "msg-team", "max_spawn_depth": 101}'
expect_rc 1 "team file: a limit out of range"
expect_eq "$ERR" "huddle: /dev/stdin: max_spawn_depth must be an integer from 1 to 100" \
	"team file limit text"

# --- team shutdown ------------------------------------------------------------
run team create quiet
run agent add quiet boss --leader
run team shutdown quiet
expect_rc 0 "immediate shutdown"
expect_eq "$OUT" "team quiet is shut down (no member was working)" \
	"immediate shutdown text"
run agent spawn quiet late
expect_rc 1 "spawn into a shut-down team"
expect_eq "$ERR" 'huddle: team "quiet" is not active (status: shutdown)' \
	"inactive team text"
run team shutdown quiet
expect_rc 1 "shutdown twice"
expect_eq "$ERR" 'huddle: team "quiet" is already shut down' "twice text"

run agent set-status worker-1 working
expect_rc 0 "set-status"
expect_eq "$OUT" "agent worker-1 is working" "set-status output"
run agent set-status worker-1 busy
expect_rc 1 "set-status invalid"
run agent set-status worker-2 working

# approvals: one through shutdown-response, one through send
run --json team shutdown msg-team --reason "end of sprint"
expect_rc 0 "shutdown with working members"
expect_json "$OUT" "team shutdown --json"
expect_eq "$(json_get "$OUT" 'j["outcome"]+" "+",".join(j["pending"])')" \
	"pending worker-1,worker-2" "pending approvals"
RID=$(json_get "$OUT" 'j["request_id"]')
run --json inbox worker-1 --peek
expect_eq "$(json_get "$OUT" 'j[-1]["type"]+" "+j[-1]["request_id"]')" \
	"shutdown_request $RID" "request delivered"
run shutdown-response --team msg-team --as worker-1 --request-id "$RID" \
	--approve --refuse
expect_rc 2 "approve and refuse together"
run shutdown-response --team msg-team --as worker-1 --request-id "$RID" --refuse
expect_rc 2 "refuse without a reason"
run shutdown-response --team msg-team --as worker-1 --request-id shutdown-nope --approve
expect_rc 1 "unknown request"
expect_eq "$ERR" 'huddle: no shutdown request "shutdown-nope" in team msg-team' \
	"unknown request text"
run shutdown-response msg-team --team other --as worker-1 --request-id "$RID" --approve
expect_rc 2 "two teams"
expect_contains "$ERR" "huddle: the team is msg-team or other? give it once, as the first argument" "two teams text"
run shutdown-response msg-team --as worker-1 --request-id "$RID" --approve
expect_rc 0 "approve"
expect_eq "$OUT" "approved $RID as worker-1
team msg-team is shutting down: request $RID waits for worker-2 to approve (timeout 60 s)" \
	"approve output"
run send --team msg-team --from worker-2 --to lead --request-id "$RID" --approve ok
expect_rc 0 "approve by send"
run team state msg-team
expect_contains "$OUT" "Status: shutdown
" "team shut down"

# a refusal while a --wait is running: the wait reports it and fails
run team create busy
run agent add busy chief --leader
run agent add busy coder
# coder works: it holds a task it started (so a refusal leaves it working)
run --json task create busy "Migrate the store"
MIGRATE=$(json_get "$OUT" 'j["id"]')
run task claim "$MIGRATE" --as coder
run task start "$MIGRATE" --as coder
run team state busy
expect_contains "$OUT" "  - coder (Member): working; holds #$MIGRATE \"Migrate the store\" (in_progress)" \
	"a started task makes its owner working"
"$HUDDLE" team shutdown busy --wait >"$T_TMP/wait.out" 2>"$T_TMP/wait.err" &
WAITER=$!
RID=""
for _ in $(seq 100); do
	run --json inbox coder --peek
	RID=$(json_get "$OUT" 'j[0]["request_id"] if j else ""')
	[ -n "$RID" ] && break
	sleep 0.1
done
run shutdown-response --team busy --as coder --request-id "$RID" \
	--refuse --reason "mid-migration"
expect_rc 0 "refuse"
wait "$WAITER"
RC=$?
OUT=$(cat "$T_TMP/wait.out")
ERR=$(cat "$T_TMP/wait.err")
expect_rc 1 "--wait sees the refusal"
expect_eq "$ERR" "huddle: shutdown of team busy was refused by coder: mid-migration; the team is active again" \
	"refusal text"
run --json inbox chief
expect_eq "$(json_get "$OUT" 'j[-1]["type"]+" "+j[-1]["reason"]+" "+str(j[-1]["approve"])')" \
	"shutdown_response mid-migration False" "leader holds the refusal"
run team state busy
expect_contains "$OUT" "Status: active
" "back to active"

# a timeout
run team shutdown busy --wait --timeout 1
expect_rc 1 "--wait times out"
expect_eq "$ERR" "huddle: shutdown of team busy timed out: no answer from coder within 1 s; the team is active again" \
	"timeout text"
run --json inbox chief
expect_eq "$(json_get "$OUT" 'j[-1]["from_agent"]+" "+j[-1]["reason"]')" \
	"huddle timeout" "leader holds the timeout"
run team shutdown busy --timeout 0
expect_rc 2 "--timeout 0"

# --- agent replace --------------------------------------------------------------
run team create fix
run agent add fix f-boss --leader
run agent add fix f-coder --role coder --runtime exec --config '{"command": ["./agent.sh"]}'
run agent add fix f-helper
T1=$(json_get "$("$HUDDLE" --json task create fix "Fix the claim path")" 'j["id"]')
T2=$(json_get "$("$HUDDLE" --json task create fix "Write the test")" 'j["id"]')
T3=$(json_get "$("$HUDDLE" --json task create fix "Old work")" 'j["id"]')
"$HUDDLE" task claim "$T1" --as f-coder >/dev/null
"$HUDDLE" task claim "$T2" --as f-coder >/dev/null
"$HUDDLE" task start "$T2" --as f-coder >/dev/null
"$HUDDLE" task claim "$T3" --as f-coder >/dev/null
"$HUDDLE" task complete "$T3" --as f-coder >/dev/null
run agent set-status f-coder error
run agent replace fix f-boss f-boss-2
expect_rc 1 "replace the leader"
expect_eq "$ERR" "huddle: cannot replace the leader (f-boss) of team fix" "leader refusal text"
run agent replace fix f-ghost f-ghost-2
expect_rc 1 "replace a non-member"
expect_eq "$ERR" 'huddle: no member "f-ghost" in team fix' "non-member text"
run agent replace fix f-coder f-helper
expect_rc 1 "replace with an existing agent"
expect_eq "$ERR" 'huddle: agent "f-helper" already exists in team fix' "existing agent text"
run agent replace fix f-coder f-coder-2 --as f-helper
expect_rc 1 "replace as a member"
expect_eq "$ERR" "huddle: only the team leader or a user may replace f-coder, not f-helper" \
	"member refusal text"
run agent replace fix f-coder
expect_rc 2 "replace without NEW"
run task show "$T1" --json
expect_eq "$(json_get "$OUT" 'j["owner"]')" "f-coder" "refusals moved nothing"

run agent replace fix f-coder f-coder-2 --as f-boss
expect_rc 0 "replace"
expect_eq "$OUT" "f-coder-2 replaces f-coder: took over #$T1 \"Fix the claim path\", #$T2 \"Write the test\"
f-coder is shut down; f-coder-2 (runtime exec, depth 1) has its first message waiting" "replace output"
run --json agent show f-coder
expect_eq "$(json_get "$OUT" 'j["status"]+" / "+j["status_reason"]')" "shutdown / replaced by f-coder-2" \
	"the old one is shut down"
run --json agent show f-coder-2
expect_eq "$(json_get "$OUT" 'j["role"]+" "+j["runtime"]+" "+j["runtime_config"]["command"][0]+" "+j["spawned_by"]')" \
	"coder exec ./agent.sh f-boss" "the new one takes role, runtime and config"
run task show "$T2" --json
expect_eq "$(json_get "$OUT" 'j["owner"]+" "+j["status"]+" | "+j["comments"][0]["author"]+": "+j["comments"][0]["body"]')" \
	"f-coder-2 in_progress | f-boss: moved from f-coder to f-coder-2: f-coder is in error; f-coder-2 replaces it" \
	"task moved with its status and a comment"
run task show "$T3" --json
expect_eq "$(json_get "$OUT" 'j["owner"]')" "f-coder" "a finished task stays"
run --json inbox f-coder-2
expect_eq "$(json_get "$OUT" 'j[0]["content"]')" "Join team fix as f-coder-2

You replace f-coder, who is in error. You took over its unfinished tasks:
  - #$T1 \"Fix the claim path\" (claimed)
  - #$T2 \"Write the test\" (in_progress)" "first message lists the tasks"
run chat read fix
expect_contains "$OUT" "Task #$T2 \"Write the test\" moved from f-coder to f-coder-2 by f-boss." "room line"

run --json agent replace fix f-coder-2 f-coder-3 --model sonnet --runtime claude-code
expect_rc 0 "replace --json, by a user"
expect_json "$OUT" "replace --json"
expect_eq "$(json_get "$OUT" 'j["replaced"]+" "+",".join(str(t["id"])+":"+t["owner"] for t in j["took_over"])+" "+j["agent"]["runtime_config"]["model"]')" \
	"f-coder-2 $T1:f-coder-3,$T2:f-coder-3 sonnet" "replace --json output"
run team state fix
expect_contains "$OUT" "  - f-coder-3 (Member): working; holds #$T1 \"Fix the claim path\" (claimed), #$T2 \"Write the test\" (in_progress)" \
	"the started task it took over makes the new member working"
# f-coder-3 works on what it took over: the team waits for its answer
run team shutdown fix
run agent replace fix f-coder-3 f-coder-4
expect_rc 1 "replace in a team that is not active"
expect_eq "$ERR" 'huddle: team "fix" is not active (status: shutting_down)' "inactive team text"

# --- an answer goes to whoever asked ----------------------------------------------
run team create ask
run agent add ask a-lead --leader
run agent add ask a-one
run agent add ask a-two
run send --team ask --from a-lead --to a-one --type shutdown_request --request-id stop-1 "please stop"
expect_rc 0 "a shutdown_request sent one to one"
run shutdown-response --team ask --as a-one --request-id stop-1 --approve
expect_rc 0 "answer a one-to-one request"
expect_eq "$OUT" "approved stop-1 as a-one; the answer went to a-lead" "one-to-one answer output"
run --json agent show a-one
expect_eq "$(json_get "$OUT" 'j["status"]')" "shutdown" "an approval shuts the member down"
run --json inbox a-lead
expect_eq "$(json_get "$OUT" 'j[-1]["type"]+" "+j[-1]["from_agent"]+" "+j[-1]["request_id"]')" \
	"shutdown_response a-one stop-1" "the asker holds the answer"
run send --team ask --from a-two --request-id stop-2 --approve "ok"
expect_rc 1 "an answer to no request"
expect_eq "$ERR" 'huddle: no shutdown request "stop-2" in team ask' "no request text"
run send --team ask --from a-two "hello"
expect_rc 2 "send without --to"
run agent set-status a-two working
RID=$(json_get "$("$HUDDLE" --json team shutdown ask)" 'j["request_id"]')
run send --team ask --from a-two --request-id "$RID" --approve "bye"
expect_rc 0 "answer the team shutdown without --to"
expect_contains "$OUT" "from a-two to a-lead" "the answer went to the leader"
run team state ask
expect_contains "$OUT" "Status: shutdown
" "the team shut down"

finish
