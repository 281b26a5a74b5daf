#!/usr/bin/env bash
# test-hermes.sh -- the hermes runtime across three runs of one agent,
# against tests/e2e/agents/hermes-standin.py: Hermes Agent is a Python
# program that cannot be installed here (no network), so a stand-in plays
# its documented CLI (`hermes [--resume S] --usage-file F -z PROMPT`) and
# checks the home huddle gave it (its checks are listed in its header):
# modes, huddle's MCP block in config.yaml naming this agent, the seed
# copied once and never again, its memory, skill and state untouched
# between runs, each later run resuming the session the one before
# reported. It really connects to huddle's MCP server from that config and
# posts to the room. Here, each run:
#   - `huddle ask` gets the stand-in's reply back under the agent's name;
#   - the room holds the post it made over MCP, as the agent;
#   - its cost event is the usage report's estimated_cost_usd, estimated;
#   - the home keeps everything the stand-in left (memory grows by one);
# then a run while `huddle serve` runs (MCP over HTTP, the signed URL and
# its token), a failed run as a clear [error: ...] that touches nothing,
# a top-level mcp_servers of the user's in the agent's config.yaml
# refused with a message and the file left as it was, and huddle doctor.
. "$(dirname "$0")/lib.sh"

standin=$HUDDLE_SRC/tests/e2e/agents/hermes-standin.py
python3 -c 'import yaml' 2>/dev/null || {
	echo "$T_NAME: skipped: python3-yaml (PyYAML, what Hermes reads config.yaml with) is missing"
	exit 77
}
# the user's own Hermes home, seeded into the agent's
export HOME=$T_TMP/user
unset HERMES_HOME
mkdir -p "$HOME/.hermes"
cat >"$HOME/.hermes/config.yaml" <<'EOF'
# my Hermes settings
model:
  default: "anthropic/claude-sonnet-4"
  provider: openrouter
agent:
  max_turns: 60
EOF
printf 'OPENROUTER_API_KEY=sk-or-fake\n' >"$HOME/.hermes/.env"
chmod 644 "$HOME/.hermes/config.yaml" "$HOME/.hermes/.env"
ahome=$HUDDLE_HOME/homes/hermes/scout

run team create crew --name "Crew"
expect_rc 0 "create the team"
run agent add crew scout --leader --runtime hermes \
	--config "{\"bin\": \"$standin\", \"model\": \"standin-model\", \"timeout_s\": 60}"
expect_rc 0 "add a Hermes leader"
run agent add crew bad --runtime hermes --config '{"toolsets": "web"}'
expect_rc 1 "an unknown runtime_config key is refused"
expect_contains "$ERR" 'unknown key "toolsets" for runtime hermes' "and named"

# ---- doctor ---------------------------------------------------------------
run doctor crew --json
expect_rc 0 "doctor: the runtime could run"
expect_eq "$(json_get "$OUT" '[(a["runtime"], a["home_kind"], a["binary"]["version"], a["problems"]) for a in j["agents"]]')" \
	"[('hermes', 'persistent', 'Hermes Agent v0.0.0 (hermes-standin, a test stand-in)', [])]" \
	"doctor: a persistent home, the binary's version, no problem"
case "$OUT" in *sk-or-fake*) fail "doctor printed a secret: $OUT" ;; *) pass ;; esac

# ---- three runs -------------------------------------------------------------
# after_run N: what huddle recorded of run N
after_run() {
	local n=$1
	expect_rc 0 "run $n: ask"
	expect_eq "${OUT%%$'\n'*}" "@scout: hermes run $n: posted to the room" "run $n: the reply, under the agent's name"
	run chat read crew --json --limit 500
	expect_eq "$(json_get "$OUT" '[(p["authorAgentId"], p["body"]) for p in j["posts"] if p["body"].startswith("hermes run '"$n"' from")]')" \
		"[('scout', 'hermes run $n from scout')]" "run $n: the post it made over MCP, as the agent"
	run events --team crew --kind cost --json
	expect_eq "$(json_get "$OUT" '[(e["agent_id"], e["data"]["estimated"], e["data"]["microcents"]) for e in j][-1]')" \
		"('scout', True, 120000)" "run $n: the usage report's cost, estimated"
	expect_eq "$(json_get "$OUT" 'len(j)')" "$n" "run $n: one cost event a run"
	expect_eq "$(grep -c '^run ' "$ahome/memories/MEMORY.md")" "$n" "run $n: its memory kept, one entry more"
	expect_eq "$(stat -c %a "$ahome" "$ahome/config.yaml" "$ahome/.env" | tr '\n' ' ')" "700 600 600 " \
		"run $n: the home 0700, config.yaml and .env 0600"
}
run ask crew "Look around."
after_run 1
# the user changes their own config: the agent's copy is not re-seeded
echo "agent: {max_turns: 5}" >>"$HOME/.hermes/config.yaml"
run ask crew "Again."
after_run 2
run ask crew "Once more."
after_run 3
expect_eq "$(grep -c '^# hermes-standin run' "$ahome/config.yaml")" "3" \
	"the stand-in's own edits to config.yaml all kept"
expect_eq "$(grep -c '^mcp_servers:' "$ahome/config.yaml")" "1" "one huddle block, rewritten in place"
expect_eq "$(python3 -c 'import sys,yaml; c=yaml.safe_load(open(sys.argv[1])); print(c["model"]["default"], c["agent"]["max_turns"])' "$ahome/config.yaml")" \
	"anthropic/claude-sonnet-4 60" "the seed as it was, not the user's later edit"

# ---- over HTTP: huddle serve runs, the block carries the signed URL ---------
serve_bg
run ask crew "Over HTTP."
after_run 4
expect_eq "$(python3 -c 'import sys,yaml; h=yaml.safe_load(open(sys.argv[1]))["mcp_servers"]["huddle"]; print(h["url"].split("?")[0], "command" in h)' "$ahome/config.yaml")" \
	"$url/mcp False" "the block names the server's URL now, not the stdio command"
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null

# ---- a failed run -----------------------------------------------------------
before=$(cd "$ahome" && sha256sum memories/MEMORY.md skills/standin-notes/SKILL.md sessions/standin-state.json)
run ask crew "STANDIN_FAIL please."
expect_eq "${OUT%%$'\n'*}" "@scout: [error: hermes: exit status 1: hermes-standin: API call failed after 3 retries: HTTP 503: upstream down]" \
	"a failed run: a clear error, the stand-in's own words"
expect_eq "$(cd "$ahome" && sha256sum memories/MEMORY.md skills/standin-notes/SKILL.md sessions/standin-state.json)" \
	"$before" "nothing of Hermes's touched by a failed run"

# ---- a top-level mcp_servers of the user's: refused, nothing lost -----------
printf 'mcp_servers:\n  mine: {command: "true"}\n' >"$T_TMP/theirs"
{ cat "$T_TMP/theirs"; cat "$ahome/config.yaml"; } >"$T_TMP/cfg" && cat "$T_TMP/cfg" >"$ahome/config.yaml"
sum=$(sha256sum <"$ahome/config.yaml")
run ask crew "Clash."
expect_contains "$OUT" "@scout: [error: hermes: $ahome/config.yaml has a top-level mcp_servers of its own" \
	"a clashing mcp_servers: refused, saying where"
expect_eq "$(sha256sum <"$ahome/config.yaml")" "$sum" "and config.yaml left as it was"

finish
