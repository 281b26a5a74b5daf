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

finish
