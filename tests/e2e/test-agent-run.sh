#!/usr/bin/env bash
# test-agent-run.sh -- `huddle agent run AGENT PROMPT`: one turn of an
# agent's runtime by hand. Scripted replies are exact and labelled as
# scripted; exec agents stream their stdout; a failing agent exits 1 with
# `huddle: <message>`; --json parses; usage errors exit 2.
. "$(dirname "$0")/lib.sh"

run init
expect_rc 0 "init"
run team create dev
expect_rc 0 "team create"

# A scripted agent: exact reply on stdout, a note and a summary on stderr.
run agent add dev manager --leader --config \
	'{"rules": [{"when": "all hands", "reply": "On my way."}], "default": "Noted."}'
expect_rc 0 "add scripted agent"
run agent run manager "all hands, please"
expect_rc 0 "scripted run"
expect_eq "$OUT" "On my way." "scripted reply"
expect_contains "$ERR" "note: manager runs the scripted runtime: canned replies, not a model" "scripted note"
expect_contains "$ERR" "[scripted: success in " "summary line"
expect_contains "$ERR" "estimated (5 in / 3 out tokens)]" "estimated cost in the summary"
run agent run manager "anything else"
expect_eq "$OUT" "Noted." "scripted default"

# --json: the collected result.
run --json agent run manager "all hands"
expect_rc 0 "scripted --json"
expect_json "$OUT" "scripted --json parses"
expect_eq "$(json_get "$OUT" 'j["text"]')" "On my way." "json text"
expect_eq "$(json_get "$OUT" 'j["reason"]')" "success" "json reason"
expect_eq "$(json_get "$OUT" 'j["scripted"]')" "True" "json scripted flag"
expect_eq "$(json_get "$OUT" 'j["cost"]["microcents"]')" "5400" "json cost: 3 tokens in x 300 + 3 out x 1500"
expect_eq "$(json_get "$OUT" 'j["cost"]["estimated"]')" "True" "json estimated"

# An exec agent: a script in $T_TMP that uppercases its stdin and shows
# its identity.
cat >"$T_TMP/agent.sh" <<'EOF'
#!/bin/sh
tr a-z A-Z
echo
echo "from $HUDDLE_AGENT of $HUDDLE_TEAM"
EOF
chmod +x "$T_TMP/agent.sh"
run agent add dev coder --runtime exec --config "{\"command\": [\"$T_TMP/agent.sh\"]}"
expect_rc 0 "add exec agent"
run agent run coder "ship it"
expect_rc 0 "exec run"
expect_eq "$OUT" $'SHIP IT\nfrom coder of dev' "exec reply"
expect_contains "$ERR" "[exec: success in " "exec summary"
case "$ERR" in *scripted*) fail "exec run labelled scripted: $ERR" ;; *) pass ;; esac
[ -d "$HUDDLE_HOME/homes/exec/coder" ] && pass || fail "no persistent home for coder"
expect_eq "$(stat -c %a "$HUDDLE_HOME/homes/exec/coder")" "700" "home mode"

# The prompt from stdin.
OUT=$(printf 'from stdin' | "$HUDDLE" agent run coder - 2>/dev/null)
expect_eq "$OUT" $'FROM STDIN\nfrom coder of dev' "prompt from stdin"

# A failing exec agent: exit 1, `huddle: exit status 3: <stderr tail>`.
cat >"$T_TMP/broken.sh" <<'EOF'
#!/bin/sh
echo "half an answer"
echo "model unavailable" >&2
exit 3
EOF
chmod +x "$T_TMP/broken.sh"
run agent add dev broken --runtime exec --config "{\"command\": [\"$T_TMP/broken.sh\"]}"
run agent run broken "try"
expect_rc 1 "failing exec agent"
expect_eq "$OUT" "half an answer" "partial output still shown"
expect_contains "$ERR" "huddle: exit status 3: model unavailable" "failure message"
run --json agent run broken "try"
expect_rc 1 "failing exec agent --json"
expect_json "$OUT" "failure --json parses"
expect_eq "$(json_get "$OUT" 'j["reason"]')" "error" "json error reason"
expect_eq "$(json_get "$OUT" 'j["error"]')" "exit status 3: model unavailable" "json error"

# A timeout: exit 1 with the spec's message.
run agent add dev sleepy --runtime exec --config '{"command": ["sleep", "30"]}'
run agent run sleepy "wake up" --timeout 1
expect_rc 1 "timeout"
expect_contains "$ERR" "huddle: timed out after 1 s" "timeout message"

# A runtime this build does not have is refused when the agent is added,
# not at its first turn.
run agent add dev future --runtime openai
expect_rc 1 "add an openai agent"
expect_eq "$ERR" 'huddle: runtime "openai" is not available in this build: use scripted, exec, claude-code, codex, native, hermes or openclaw' "unbuilt runtime message"
# So is any other name, on every way in: add, spawn and a team file.
unbuilt='runtime "x" is not available in this build: use scripted, exec, claude-code, codex, native, hermes or openclaw'
run agent add dev future --runtime x
expect_rc 1 "add an x agent"
expect_eq "$ERR" "huddle: $unbuilt" "unknown runtime on add"
run agent spawn dev future --runtime x
expect_rc 1 "spawn an x agent"
expect_eq "$ERR" "huddle: $unbuilt" "unknown runtime on spawn"
printf '{"team": "xt", "agents": [{"id": "xa", "runtime": "x"}]}\n' >"$T_TMP/xt.json"
run up "$T_TMP/xt.json"
expect_rc 1 "a team file with an x agent"
expect_eq "$ERR" "huddle: $T_TMP/xt.json: agents[0].$unbuilt" "unknown runtime in a team file"
run team show xt
expect_rc 1 "nothing applied"
run agent add dev future --runtime claude-code --config '{"home": "mine"}'
expect_rc 1 "a claude-code config of the wrong shape"
expect_eq "$ERR" 'huddle: runtime_config.home must be "user" or "private"' "the field is named"
run agent add dev future --runtime codex --config '{"prices": {"input": 1}}'
expect_rc 1 "codex prices without output"
expect_eq "$ERR" 'huddle: runtime_config.prices.output must be a number >= 0 (USD per million tokens)' "the price is named"

# A real runtime whose binary is missing says which and where to set it.
run agent add dev cc --runtime claude-code --config '{"bin": "huddle-test-no-such-claude"}'
expect_rc 0 "add a claude-code agent"
run agent run cc "hello"
expect_rc 1 "missing claude binary"
expect_contains "$ERR" "huddle: claude-code: 'huddle-test-no-such-claude' not found on PATH (runtime_config.bin)" "missing binary message"

# Refusals and usage errors.
run agent run ghost "hello"
expect_rc 1 "unknown agent"
expect_eq "$ERR" 'huddle: agent "ghost" not found' "unknown agent message"
run agent run manager
expect_rc 2 "missing prompt"
expect_contains "$ERR" "huddle: 'agent run' needs AGENT PROMPT" "missing prompt text"
run agent run manager hi --timeout 0
expect_rc 2 "bad timeout"
expect_contains "$ERR" "huddle: --timeout must be between 1 and 86400" "bad timeout text"

finish
