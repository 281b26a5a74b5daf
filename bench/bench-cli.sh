#!/usr/bin/env bash
# bench-cli.sh -- what huddle costs a turn of a real agent CLI.
#
# runtime_claude, runtime_codex: turns per second through huddle
#   (`huddle agent run AGENT PROMPT`: a whole huddle process per turn --
#   the store opened, the agent read, its home and MCP config prepared,
#   the CLI spawned and its JSON stream parsed into events) against the
#   very command huddle runs (argv, work directory and environment, read
#   from huddle's own debug log) run directly by this shell loop, both
#   against tests/e2e/fake-model.mjs on 127.0.0.1, in the same run, turn
#   for turn alternately. Each turn is timed; turns/s come from the median
#   turn (the CLIs' own start-up varies by tens of milliseconds from run
#   to run, which a mean of a few turns would read as huddle's). Higher is
#   better; the ratio is huddle / direct (target >= 0.95: at most 5%
#   overhead per turn).
#
# usage: bench/bench-cli.sh [BUILD_DIR] [TURNS]   (default build-release, 30)
# Needs node and tests/e2e/node_modules (make bench installs them).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-release}
turns=${2:-30}
huddle=$(cd "$build" && pwd)/huddle
claude=$src/tests/e2e/node_modules/.bin/claude
codex=$src/tests/e2e/node_modules/.bin/codex
if [ ! -x "$claude" ] || [ ! -x "$codex" ] || ! command -v node >/dev/null; then
	echo "runtime_claude: skipped (needs node and tests/e2e/node_modules: npm ci in tests/e2e)"
	echo "runtime_codex: skipped (likewise)"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/huddle-bench-cli-XXXXXX")
fake=
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null && wait "$fake" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
node "$src/tests/e2e/fake-model.mjs" --port-file "$tmp/port" --log "$tmp/log.jsonl" &
fake=$!
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
export HUDDLE_HOME=$tmp/home HOME=$tmp/user
mkdir -p "$HOME"

url=http://127.0.0.1:$port
"$huddle" team create bench >/dev/null
"$huddle" agent add bench lead --leader --runtime claude-code --config "$(python3 - "$claude" "$url" <<'EOF'
import json, sys
print(json.dumps({"bin": sys.argv[1], "home": "private", "timeout_s": 60,
  "env": {"ANTHROPIC_BASE_URL": sys.argv[2], "ANTHROPIC_API_KEY": "sk-ant-fake",
          "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
          "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
          "CLAUDE_CODE_MAX_RETRIES": "0"}}))
EOF
)" >/dev/null
"$huddle" agent add bench builder --runtime codex --config "$(python3 - "$codex" "$url" <<'EOF'
import json, sys
print(json.dumps({"bin": sys.argv[1], "model": "fake-model", "timeout_s": 60,
  "env": {"FAKE_OPENAI_API_KEY": "sk-fake"},
  "overrides": {"model_provider": "fake",
    "model_providers.fake": {"name": "fake", "base_url": sys.argv[2] + "/v1",
      "wire_api": "responses", "env_key": "FAKE_OPENAI_API_KEY",
      "request_max_retries": 0, "stream_max_retries": 0},
    "approval_policy": "never", "check_for_update_on_startup": False,
    "analytics.enabled": False, "feedback.enabled": False, "otel.exporter": "none"}}))
EOF
)" >/dev/null

prompt='Say hi. FAKE_SCRIPT:{"turns":[{"text":"hi"}]}'

# The command huddle runs for AGENT, as a bash array declaration: one turn
# with HUDDLE_LOG=debug, whose "run" line gives cwd, huddle's own env and
# argv; the config's env and huddle's identity variables are added as
# huddle adds them (src/runtime/proc.c).
direct_cmd() {
	HUDDLE_LOG=debug "$huddle" agent run "$1" "$prompt" 2>"$tmp/$1.log" >/dev/null
	python3 - "$tmp/$1.log" "$1" "$huddle" "$prompt" <<'EOF'
import json, shlex, subprocess, sys
log, agent, huddle, prompt = sys.argv[1:5]
run = None
for line in open(log):
    if " D: run {" in line:
        run = json.loads(line.split(" D: run ", 1)[1])
a = json.loads(subprocess.check_output([huddle, "agent", "show", agent, "--json"]))
env = dict(a["runtime_config"].get("env", {}))
env.update(run["env"])
env.update({"HUDDLE_AGENT": agent, "HUDDLE_TEAM": a["team_id"]})
argv = [prompt if x == "{PROMPT}" else x for x in run["argv"]]
print("cwd=" + shlex.quote(run["cwd"]))
print("cmd=(env " + " ".join(shlex.quote(k + "=" + v) for k, v in env.items()) +
      " " + " ".join(shlex.quote(x) for x in argv) + ")")
EOF
}

now() { date +%s.%N; }

# bench NAME AGENT: TURNS turns each way, alternating, each one timed.
bench() {
	local name=$1 agent=$2 cwd cmd t0 t1 i
	eval "$(direct_cmd "$agent")"
	# warm both paths once (page cache, the CLI's first start)
	"$huddle" agent run "$agent" "$prompt" >/dev/null 2>&1
	(cd "$cwd" && "${cmd[@]}" </dev/null >/dev/null 2>&1)
	: >"$tmp/$name.times"
	for i in $(seq 1 "$turns"); do
		t0=$(now)
		"$huddle" agent run "$agent" "$prompt" >/dev/null 2>&1 ||
			{ echo "bench: huddle agent run $agent failed" >&2; exit 1; }
		t1=$(now)
		echo "huddle $t0 $t1" >>"$tmp/$name.times"
		t0=$(now)
		(cd "$cwd" && "${cmd[@]}" </dev/null >/dev/null 2>&1) ||
			{ echo "bench: the direct $name command failed" >&2; exit 1; }
		t1=$(now)
		echo "direct $t0 $t1" >>"$tmp/$name.times"
	done
	python3 - "$name" "$tmp/$name.times" <<'EOF'
import statistics, sys
name, path = sys.argv[1], sys.argv[2]
t = {"huddle": [], "direct": []}
for line in open(path):
    k, a, b = line.split()
    t[k].append(float(b) - float(a))
h, d = statistics.median(t["huddle"]), statistics.median(t["direct"])
print(f"{name}: {1/h:.2f} turns/s through huddle ({1000*h:.0f} ms median turn) | "
      f"baseline {1/d:.2f} turns/s, the same command run directly ({1000*d:.0f} ms) | "
      f"ratio {d/h:.3f} (overhead {1000*(h-d):+.1f} ms a turn; {len(t['huddle'])} turns each, "
      f"means {1000*statistics.mean(t['huddle']):.0f} / {1000*statistics.mean(t['direct']):.0f} ms)")
EOF
}

bench runtime_claude lead
bench runtime_codex builder
