#!/usr/bin/env bash
# test-cli-convention.sh -- issue 20's one CLI convention: the team first
# and --as on every command (old spellings kept as aliases), --json errors
# as JSON on stderr, "did you mean" for a mistyped name, out-of-range values
# refused with the range, JSON options that say where they broke.
. "$(dirname "$0")/lib.sh"

# ---- did you mean ---------------------------------------------------------
run tsk
expect_rc 2 "mistyped command"
expect_eq "$ERR" $'huddle: unknown command "tsk": did you mean "task"?\nsee \'huddle --help\'' "command suggestion"
run task clam 1
expect_rc 2 "mistyped subcommand"
expect_contains "$ERR" "huddle: unknown subcommand \"clam\" for 'task': did you mean \"claim\"?" "subcommand suggestion"
run task list dev --stauts open
expect_rc 2 "mistyped option"
expect_contains "$ERR" "huddle: unknown option --stauts for 'task list': did you mean \"--status\"?" "option suggestion"
run team update dev --laeder=x
expect_rc 2 "mistyped option with a value"
expect_contains "$ERR" 'did you mean "--leader"?' "option=value suggestion"
run --jsno team list
expect_rc 2 "mistyped global option"
expect_contains "$ERR" 'huddle: unknown option --jsno: did you mean "--json"?' "global option suggestion"
run xyzzy
expect_rc 2 "nothing close"
expect_eq "$ERR" $'huddle: unknown command "xyzzy"\nsee \'huddle --help\'' "no suggestion when nothing is close"
run task list dev --qq
expect_rc 2 "short unknown option"
expect_eq "$(printf '%s\n' "$ERR" | head -1)" "huddle: unknown option --qq for 'task list'" "no option suggestion when nothing is close"

# ---- --json errors ----------------------------------------------------------
run --json tsk
expect_rc 2 "--json usage error exit"
expect_eq "$ERR" '{"error":"unknown command \"tsk\": did you mean \"task\"?","code":"usage"}' "--json usage error"
expect_eq "$OUT" "" "--json usage error: nothing on stdout"
run team show ghost --json
expect_rc 1 "--json not found exit"
expect_eq "$(json_get "$ERR" 'j["code"]')" "not_found" "--json not_found code"
expect_eq "$(json_get "$ERR" 'j["error"]')" 'team "ghost" not found' "--json not_found message"
run team create dev --json
expect_rc 0 "team create"
run team create dev --json
expect_rc 1 "--json exists exit"
expect_eq "$(json_get "$ERR" 'j["code"]')" "exists" "--json exists code"
run task create dev --json
expect_rc 2 "--json missing argument"
expect_eq "$(json_get "$ERR" 'j["code"]')" "usage" "--json usage code after the command"
run team show --json ghost
expect_rc 1 "--json anywhere"
expect_json "$ERR" "--json error before the positional"

# ---- the team first, --as for the acting agent; old spellings still work ----
run team create ops
run agent add ops lead --leader
run agent add ops coder
run send ops "review #1" --as lead --to coder
expect_rc 0 "send, the team first"
run --json inbox ops --as coder --peek
expect_rc 0 "inbox TEAM --as AGENT"
expect_eq "$(json_get "$OUT" '[m["content"] for m in j]')" "['review #1']" "inbox, the team first"
run --json inbox coder --peek
expect_rc 0 "inbox AGENT (the older spelling)"
expect_eq "$(json_get "$OUT" '[m["content"] for m in j]')" "['review #1']" "inbox, the older spelling"
run inbox dev --as coder
expect_rc 1 "inbox of an agent in another team"
run --json events ops --kind message_sent
expect_rc 0 "events TEAM"
A=$OUT
run --json events --team ops --kind message_sent
expect_rc 0 "events --team TEAM (the older spelling)"
expect_eq "$OUT" "$A" "events: both spellings agree"
expect_eq "$(json_get "$OUT" 'len(j)')" "1" "events of one team"
run events ops --team dev
expect_rc 2 "events with two teams"
run budget set ops --limit-cents 100 --mode warn
expect_rc 0 "budget set TEAM"
run budget set --team ops --limit-cents 200 --mode warn
expect_rc 0 "budget set --team TEAM (the older spelling)"
expect_contains "$OUT" "team ops: warn at 200 cents" "budget set, the older spelling"
run budget set ops --agent coder --limit-cents 50 --mode cap
expect_rc 0 "budget set TEAM --agent AGENT"
run --json budget show ops --agent coder
expect_eq "$(json_get "$OUT" '[(b["scope"], b["subject"]) for b in j["budgets"]]')" "[('agent', 'coder')]" "budget show TEAM --agent AGENT"
run --json doctor ops --team ops
expect_rc 0 "doctor: the same team twice is fine"
run doctor ops --team dev
expect_rc 2 "doctor with two teams"

# send and broadcast: TEAM first and --as, or the older TEXT --team --from
run_says 0 "sent message #2 from lead to coder" "send, the older spelling" send "review #2" --team ops --from lead --to coder
run_says 0 "broadcast from lead to 1 member of team ops" "broadcast, the team first" broadcast ops "standup" --as lead
run_says 0 "broadcast from lead to 1 member of team ops" "broadcast, the older spelling" broadcast "standup" --team ops --from lead
run broadcast ops "x" --as lead --from coder
expect_rc 2 "broadcast: --as and --from disagree"
expect_contains "$ERR" "huddle: --as lead and --from coder name two senders; give one (--as)" "two senders text"
run send ops "x" --team dev --as lead --to coder
expect_rc 2 "send: two teams"
expect_contains "$ERR" "huddle: the team is ops or dev? give it once, as the first argument" "two teams text"
run --json inbox ops --as coder
expect_eq "$(json_get "$OUT" '[m["content"] for m in j]')" "['review #1', 'review #2', 'standup', 'standup']" "each spelling delivered once"

# ---- JSON options say where they broke ----------------------------------------
run agent add ops x --config '{bad'
expect_rc 2 "--config not JSON"
expect_contains "$ERR" "huddle: --config: line 1, column 4: string or '}' expected near 'bad'" "--config error names line and column"
run agent add ops x --config '{"a": 1,
 "b": }'
expect_rc 2 "--config broken on line 2"
expect_contains "$ERR" "huddle: --config: line 2, column 7: unexpected token near '}'" "--config error on line 2"
run --json agent add ops x --config '{bad'
expect_eq "$(json_get "$ERR" 'j["code"]')" "usage" "--config error under --json"
printf '{"team": "t2",\n "agents": [}\n' >"$T_TMP/bad.json"
run up "$T_TMP/bad.json"
expect_rc 1 "team file not JSON"
expect_contains "$ERR" "$T_TMP/bad.json:2:" "team file error names the line"

finish
