#!/usr/bin/env bash
# test-pg-routines.sh -- routines and the exchange's room lock across
# nodes on one PostgreSQL database (issue 16: "Routines fire exactly once
# across nodes; the exchange's room lock holds across nodes"). Two
# `huddle serve` nodes, each with its own HUDDLE_HOME and port, on one
# database (--store URL); time for routines is the fake clock of
# HUDDLE_CLOCK_FILE (docs/routines.md), which the test moves, so nothing
# waits for a real fire time; every wait polls a condition with a deadline.
#   1. 12 routines (an interval and a cron schedule each minute, in two
#      teams) come due at 8 clock steps while both nodes' routine tickers
#      scan the same rows: each step is fired once. Each node alone (the
#      other stopped) fires a whole step, so both scan. In the end, with
#      both nodes stopped (no fire in flight): each routine's fire count
#      equals its routine_fired events, the distinct tasks those name and
#      the tasks on the board made by it, the scheduled times are exactly
#      the 8 steps (no two fires of one time, none a catch-up), no fire
#      failed, and the fires the nodes' logs report add up to 8 x 12;
#   2. `fire-now` by hand from both nodes at once (8 requests on one
#      routine): 8 manual fires, 8 tasks, none lost, the schedule kept;
#   3. 6 exchanges started at once in one room, 3 through each node:
#      exactly one runs, the 5 others are refused with the room lock's
#      HD_ROOM_LOCK_HELD text (409), as is the CLI on a node's store; the
#      runner, cancelled through the other node, ends, and then an
#      exchange through the other node runs;
#   4. the node holding the room killed with -9 mid-exchange: refused
#      before, the other node's exchange runs at once after (its holder
#      ran on this host and its process is gone: room_lock.h (2)), and
#      says it took the lock over;
#   5. a holder on another host (a node started in a UTS namespace of its
#      own, with another host name, and HUDDLE_EXCHANGE_LEASE_MS=5000;
#      without unshare, a node here whose lock row is then given another
#      host name) killed with -9 mid-exchange: the other node is refused
#      while the lease lasts and takes the lock over once it expired,
#      never before, saying so.
# It runs on a database of its own made on the pg fixture's cluster
# (HUDDLE_TEST_PG: ctest runs this through tests/pg/run-with-pg.sh);
# without HUDDLE_TEST_PG it is skipped (exit 77). Label pg; the plain
# build only, as the e2e-pg set.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-nodes.sh"

nodes_need_pg
unset HUDDLE_TOKEN HUDDLE_STORE HUDDLE_EXCHANGE_LEASE_MS
export HUDDLE_CLOCK_FILE=$T_TMP/clock

# ---- the database, the nodes, and cleaning up ----------------------------
db=hd_routines_$$_$RANDOM
pg_cleanup() {
	nodes_stop_all
	psql "$HUDDLE_TEST_PG" -XAtqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
	t_cleanup
}
trap pg_cleanup EXIT
trap 'exit 1' INT TERM

if ! out=$(psql "$HUDDLE_TEST_PG" -XAtqc "CREATE DATABASE $db" 2>&1); then
	fail "CREATE DATABASE $db on the fixture's cluster: $out"
	finish
	exit 1
fi
store=$(db_url "$HUDDLE_TEST_PG" "$db")
# every node is on it, the CLI on a node's home too before it serves
node_store=([a]=$store [b]=$store [c]=$store)
sql() { psql "$store" -XAtqc "$1"; }

# node_up NAME [WRAPPER...]: lib-nodes.sh's node_start on the store,
# logging at info (its fires, its takeovers) to $T_TMP/NAME.err
node_up() {
	local name=$1
	shift
	node_start "$name" "$store" env HUDDLE_LOG=info "$@"
}
# node_stop NAME: SIGTERM, and it exits 0 (a fire in flight ends first)
node_stop() {
	kill -TERM "${node_pid[$1]}"
	wait "${node_pid[$1]}"
	expect_eq "$?" 0 "node $1 exits 0 on SIGTERM"
	unset "node_pid[$1]"
}
# node_kill NAME: kill -9
node_kill() {
	kill -9 "${node_pid[$1]}"
	wait "${node_pid[$1]}" 2>/dev/null
	unset "node_pid[$1]"
}
# fired_in NAME: the routine fires node NAME's log reports
fired_in() {
	grep -o 'fired [0-9]* routine(s)' "$T_TMP/$1.err" 2>/dev/null |
		awk '{ n += $2 } END { print n + 0 }'
}
now_ms() { date +%s%3N; }

# ---- 1. scheduled fires, both nodes scanning ---------------------------
T0=1772323200000 # 2026-03-01T00:00Z
echo "$T0" >"$HUDDLE_CLOCK_FILE"
teams="ra rb"
for t in $teams; do
	hud a team create "$t" >/dev/null || fail "team create $t"
	hud b agent add "$t" "$t-coder" >/dev/null || fail "agent add $t $t-coder"
	for i in 1 2 3; do
		# through node A's CLI an interval, through node B's a cron:
		# both first due one minute after T0, then every minute
		hud a routine add "$t" "e$i" --agent "$t-coder" --every 1m --task "$t every $i" >/dev/null ||
			fail "routine add $t e$i"
		hud b routine add "$t" "c$i" --agent "$t-coder" --cron '* * * * *' --task "$t cron $i" >/dev/null ||
			fail "routine add $t c$i"
	done
done
K=12
node_up a
node_up b

# fires_of: each routine's fire count, "team/name=N" space-separated
# (read through the CLI, whichever node fired and whichever runs);
# fires_reach N: every routine fired at least N times
fires_of() {
	local t
	for t in $teams; do
		hud a routine list "$t" --json | python3 -c 'import json, sys
print(" ".join("%s/%s=%d" % (sys.argv[1], r["name"], r["fires"]) for r in json.load(sys.stdin)["routines"]))' "$t"
	done | tr '\n' ' '
}
fires_reach() {
	fires_of | python3 -c 'import sys
sys.exit(0 if all(int(f.split("=")[1]) >= int(sys.argv[1]) for f in sys.stdin.read().split()) else 1)' "$1"
}
# step S: the clock half a second past the S-th due minute; once every
# routine fired S times, none fired more. Counts the steps whose fires
# both nodes' logs share (split: printed, not judged: which node's tick
# comes first is chance)
split=0
step() {
	local got a0 b0
	a0=$(fired_in a) b0=$(fired_in b)
	echo $((T0 + $1 * 60000 + 500)) >"$HUDDLE_CLOCK_FILE"
	wait_for 60 fires_reach "$1" || fail "step $1: not every routine fired $1 times: $(fires_of)"
	got=$(fires_of)
	expect_eq "$(tr ' ' '\n' <<<"$got" | grep -c "=$1\$")" "$K" "step $1: each of the $K routines fired exactly $1 times ($got)"
	# a node logs its fires once they committed
	wait_for 20 logged $((a0 + b0 + K)) || fail "step $1: the nodes' logs report $(($(fired_in a) + $(fired_in b) - a0 - b0)) fires, not $K"
	if [ "$(fired_in a)" -gt "$a0" ] && [ "$(fired_in b)" -gt "$b0" ]; then split=$((split + 1)); fi
}
logged() { [ $(($(fired_in a) + $(fired_in b))) -ge "$1" ]; }
for s in 1 2 3 4; do step "$s"; done
# node A alone fires a whole step, then node B alone: both scan
node_stop b
a_then=$(fired_in a)
step 5
expect_eq "$(($(fired_in a) - a_then))" "$K" "node A alone fired the $K routines of step 5"
node_up b
node_stop a
b_then=$(fired_in b)
step 6
expect_eq "$(($(fired_in b) - b_then))" "$K" "node B alone fired the $K routines of step 6"
node_up a
for s in 7 8; do step "$s"; done
S=8
echo "$T_NAME: of the 6 steps with both nodes up, $split had fires made by both"

# ---- 2. fire-now by hand, through both nodes at once ---------------------
rest b GET /api/teams/ra/routines/e1
next_before=$(json_get "$BODY" 'j["routine"]["next_fire_at"]')
wait_all() { local p; for p in "$@"; do wait "$p"; done; }
pids=()
for i in 1 2 3 4 5 6 7 8; do
	if [ $((i % 2)) -eq 1 ]; then n=a; else n=b; fi
	curl -s -o "$T_TMP/manual.$i" -w '%{http_code}' -X POST \
		"${node_url[$n]}/api/teams/ra/routines/e1/fire" >"$T_TMP/manual.$i.code" &
	pids+=($!)
done
wait_all "${pids[@]}"
manual_tasks=$(python3 - "$T_TMP" <<'EOF'
import json, sys
ids = []
for i in range(1, 9):
    code = open(f"{sys.argv[1]}/manual.{i}.code").read()
    body = json.load(open(f"{sys.argv[1]}/manual.{i}"))
    if code != "201":
        print(f"request {i}: {code} {body}")
        continue
    if body.get("manual") is not True:
        print(f"request {i}: not a manual fire: {body}")
    ids.append(body["task"])
print(len(set(ids)))
EOF
)
expect_eq "$manual_tasks" 8 "8 fire-now requests through both nodes at once: 8 distinct tasks"
rest a GET /api/teams/ra/routines/e1
expect_eq "$(json_get "$BODY" '[j["routine"]["fires"], j["routine"]["next_fire_at"]]')" \
	"[$((S + 8)), $next_before]" "routine e1: $S scheduled and 8 manual fires, its schedule kept"

# ---- the verdict on 1 and 2, with no fire in flight -------------------------
node_stop a
node_stop b
for t in $teams; do
	hud a routine list "$t" --json >"$T_TMP/$t.routines" || fail "routine list $t"
	hud a events "$t" --kind routine_fired --json --limit 10000 >"$T_TMP/$t.fired" || fail "events $t"
	hud a events "$t" --kind routine_fire_failed --json --limit 10000 >"$T_TMP/$t.failed" || fail "events $t"
	hud a task list "$t" --json --limit 10000 >"$T_TMP/$t.tasks" || fail "task list $t"
	verdict=$(python3 - "$T_TMP/$t" "$T0" "$S" <<'EOF'
import json, sys
base, t0, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
routines = json.load(open(base + ".routines"))["routines"]
fired = json.load(open(base + ".fired"))
failed = json.load(open(base + ".failed"))
tasks = json.load(open(base + ".tasks"))
tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
want = [t0 + k * 60000 for k in range(1, steps + 1)]
if failed:
    print(f"fires failed: {failed[:3]}")
for r in routines:
    name = r["name"]
    ev = [e["data"] for e in fired if e["data"]["routine"] == name]
    ids = [e["task"] for e in ev]
    made = sorted(x["id"] for x in tasks if (x.get("metadata") or {}).get("routine") == name)
    sched = sorted(e["scheduled_at"] for e in ev if not e["manual"])
    manual = sum(1 for e in ev if e["manual"])
    if not (r["fires"] == len(ev) == len(set(ids)) == len(made)) or sorted(ids) != made:
        print(f"{name}: fires {r['fires']}, events {len(ev)}, distinct tasks {len(set(ids))}, tasks on the board {len(made)}")
    if sched != want:
        print(f"{name}: scheduled fires at {sched}, wanted one at each of {want}")
    if any(e["catch_up"] for e in ev):
        print(f"{name}: a catch-up fire")
    if manual != (8 if name == "e1" and base.endswith("/ra") else 0):
        print(f"{name}: {manual} manual fires")
EOF
)
	expect_eq "$verdict" "" "team $t: one task and one fire record per due fire, $S steps"
done
fa=$(fired_in a) fb=$(fired_in b)
expect_eq "$((fa + fb))" "$((S * K))" "the nodes' logs report $((S * K)) fires in all"
echo "$T_NAME: scheduled fires made by node A: $fa, by node B: $fb ($((2 * K)) of them alone)"

# ---- 3. six exchanges at once in one room, through both nodes -----------
node_up a
node_up b
hud a team create ex >/dev/null || fail "team create ex"
# sa's turn runs until stopped (cancelled, or its node killed); sb's is quick
hud a agent add ex sa --leader --config '{"delay_ms": 600000, "default": "holding the room"}' >/dev/null ||
	fail "agent add ex sa"
hud b agent add ex sb --config '{"default": "quick turn"}' >/dev/null || fail "agent add ex sb"
HELD='{"error":"an exchange is already running for this room"}'

# exchange NAME SPEAKER STIMULUS FILE: POST /api/team-chat/exchange on
# node NAME, one turn by SPEAKER; "CODE BODY" lands in FILE once answered
# (given up after 90 s: an sa turn that was never cancelled)
exchange() {
	local out
	out=$(curl -s --max-time 90 -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data "{\"teamId\": \"ex\", \"stimulus\": \"$3\", \"firstSpeakers\": [\"$2\"], \"maxExchangeTurns\": 1}" \
		"${node_url[$1]}/api/team-chat/exchange")
	printf '%s %s\n' "${out##*$'\n'}" "${out%$'\n'*}" >"$4.tmp"
	mv "$4.tmp" "$4"
}
answered() { local n=0 f; for f in "$@"; do [ -e "$f" ] && n=$((n + 1)); done; echo "$n"; }
answered_are() { [ "$(answered "${@:2}")" -ge "$1" ]; }
selected() { hud a events ex --kind speaker_selected --json --limit 10000 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
selected_are() { [ "$(selected)" = "$1" ]; }

files=() pids=()
for i in 1 2 3 4 5 6; do
	if [ $((i % 2)) -eq 1 ]; then n=a; else n=b; fi
	exchange "$n" sa "race $i" "$T_TMP/race.$i" &
	pids+=($!) files+=("$T_TMP/race.$i")
done
wait_for 60 answered_are 5 "${files[@]}" || fail "the refused exchanges were not all answered"
runner=
for i in 1 2 3 4 5 6; do
	if [ -e "$T_TMP/race.$i" ]; then
		expect_eq "$(cat "$T_TMP/race.$i")" "409 $HELD" "exchange $i of 6 refused by the room lock"
	else
		runner="$runner$i"
	fi
done
expect_eq "${#runner}" 1 "one exchange of 6 runs (still running: [$runner])"
runner=${runner:0:1}
if [ $((runner % 2)) -eq 1 ]; then holder=a other=b; else holder=b other=a; fi
expect_eq "$(selected)" 1 "one speaker selected in the room"
for n in a b; do
	HUDDLE_HOME=$T_TMP/$n run --store "$store" exchange ex --stimulus "from the CLI" --first sb
	expect_rc 1 "the CLI on node $n's home, the room held through node $holder"
	expect_eq "$ERR" "huddle: an exchange is already running for this room" "and its message"
done
rest "$other" POST /api/teams/ex/exchange/cancel '{}'
case "$CODE" in
200 | 202) pass ;;
*) fail "the running exchange cancelled through node $other: $CODE $BODY" ;;
esac
wait_for 60 test -e "$T_TMP/race.$runner" || fail "the cancelled exchange was not answered"
wait_all "${pids[@]}"
expect_eq "$(cut -d' ' -f1 "$T_TMP/race.$runner") $(json_get "$(cut -d' ' -f2- "$T_TMP/race.$runner")" 'j["result"]["endedReason"]')" \
	"200 cancelled" "the runner ended cancelled"
exchange "$other" sb "after the runner" "$T_TMP/after"
expect_eq "$(json_get "$(cut -d' ' -f2- "$T_TMP/after")" '[j["result"]["speakers"], j["result"]["turnsFailed"]]')" \
	"[['sb'], 0]" "then an exchange through node $other runs ($(cat "$T_TMP/after"))"

# ---- 4. the holder killed with -9, on this host -----------------------------
seen=$(selected)
exchange a sa "held by node A" "$T_TMP/held-a" &
bg=$!
wait_for 60 selected_are $((seen + 1)) || fail "node A's exchange selected no speaker"
exchange b sb "while A holds" "$T_TMP/while-a"
expect_eq "$(cat "$T_TMP/while-a")" "409 $HELD" "node B refused while node A holds the room"
pid_a=${node_pid[a]}
node_kill a
wait "$bg" 2>/dev/null
exchange b sb "after A died" "$T_TMP/after-a"
expect_eq "$(json_get "$(cut -d' ' -f2- "$T_TMP/after-a")" '[j["result"]["speakers"], j["result"]["turnsFailed"]]')" \
	"[['sb'], 0]" "node A killed: node B's exchange runs at once ($(cat "$T_TMP/after-a"))"
expect_contains "$(cat "$T_TMP/b.err")" "took over the lock of team:ex from pid $pid_a: its process is gone" \
	"node B says it took the lock of the dead node over"

# ---- 5. a holder on another host killed with -9: the lease decides ----------
lease=5000
other_host=huddle-other-$$
if unshare -u sh -c 'printf %s x >/proc/sys/kernel/hostname' 2>/dev/null; then
	# exec'd in turn by unshare and sh: node_pid[c] is the node itself
	node_up c env HUDDLE_EXCHANGE_LEASE_MS=$lease unshare -u sh -c \
		'printf %s "$0" >/proc/sys/kernel/hostname && exec "$@"' "$other_host"
	relabel=
else
	echo "$T_NAME: unshare -u is not permitted here: node C runs on this host, and its lock row is given another host name once it is dead"
	node_up c env HUDDLE_EXCHANGE_LEASE_MS=$lease
	relabel=1
fi
seen=$(selected)
exchange c sa "held by node C" "$T_TMP/held-c" &
bg=$!
wait_for 60 selected_are $((seen + 1)) || fail "node C's exchange selected no speaker"
[ -z "$relabel" ] && expect_eq "$(sql "SELECT host FROM room_locks WHERE room_id = 'team:ex'")" \
	"$other_host" "node C holds the room from another host"
pid_c=${node_pid[c]}
node_kill c
wait "$bg" 2>/dev/null
[ -n "$relabel" ] && sql "UPDATE room_locks SET host = '$other_host' WHERE room_id = 'team:ex'" >/dev/null
expires=$(sql "SELECT expires_at FROM room_locks WHERE room_id = 'team:ex'")
exchange b sb "while C's lease lasts" "$T_TMP/during-c"
ended=$(now_ms)
if [ "$ended" -lt "$expires" ]; then
	expect_eq "$(cat "$T_TMP/during-c")" "409 $HELD" "node C dead elsewhere: node B refused while its lease lasts"
else
	echo "$T_NAME: node B's first try ended after node C's lease expired (a loaded machine): its answer is not judged"
fi
takeover() {
	exchange b sb "after C's lease" "$T_TMP/after-c"
	case "$(cat "$T_TMP/after-c")" in
	"409 $HELD") return 1 ;;
	esac
	took=$(now_ms)
}
took=
wait_for 60 takeover || fail "node B never took node C's room over"
expect_eq "$(json_get "$(cut -d' ' -f2- "$T_TMP/after-c")" '[j["result"]["speakers"], j["result"]["turnsFailed"]]')" \
	"[['sb'], 0]" "once the lease expired, node B's exchange runs ($(cat "$T_TMP/after-c"))"
if [ -n "$took" ] && [ "$took" -ge "$expires" ]; then pass; else
	fail "node B took the room over at $took, before node C's lease expired at $expires"
fi
expect_contains "$(cat "$T_TMP/b.err")" "took over the lock of team:ex from pid $pid_c: its lease expired" \
	"node B says the lease expired"
node_stop b
finish
