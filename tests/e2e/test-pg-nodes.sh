#!/usr/bin/env bash
# test-pg-nodes.sh -- several huddle nodes on one PostgreSQL (issue 16):
# two `huddle serve` processes, each with its own HUDDLE_HOME and port,
# on one database (--store URL), driven by real clients (the MCP SDK
# client and an SSE reader in pg-nodes.mjs, curl for REST):
#   1. a team, its agents and its board made through node A are seen
#      through node B, a task made on B through A, and mail sent through
#      A is in the inbox read through B;
#   2. 8 MCP clients, 4 on each node, each posting N messages to one
#      room: its seqs are then 1..8N, no gap and no duplicate, and every
#      acknowledged post is there with the seq it was acknowledged with;
#   3. 16 claimers, 8 on each node, racing on each of several tasks:
#      exactly one winner per task, the 15 others told who won, and both
#      nodes name the winner as the owner;
#   4. an SSE stream on node B receives node A's post (the latency is
#      printed, never judged: no timed tests);
#   5. an attach URL made through node A's home works against node B (and
#      a forged one is read-only there);
#   6. node A killed with -9 in the middle of a posting load on both
#      nodes: every post acknowledged before the kill is in the room read
#      through node B, the seqs still gapless; A started again on its home
#      serves the same room;
#   7. PostgreSQL stopped (pg_ctl -m fast) in the middle of a posting load
#      on two nodes: while it is down, MCP and REST calls fail saying the
#      database is unreachable; once it is back both nodes post again
#      without being restarted, an SSE stream wakes again across nodes,
#      and nothing acknowledged is lost, seqs gapless;
#   8. the two-node example of README.md and docs/configuration.md runs as
#      written (the same block in both; its URL and ports changed).
# 1-6 and 8 run on databases of their own made on the pg fixture's cluster
# (HUDDLE_TEST_PG: ctest runs this through tests/pg/run-with-pg.sh);
# 7 stops and starts PostgreSQL, so it runs on a cluster of its own
# (tests/pg/cluster.sh start/halt/resume in T_TMP): the fixture's serves
# the other PostgreSQL tests at the same time. Without HUDDLE_TEST_PG the
# test is skipped (exit 77). Label pg.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-nodes.sh"
E2E=$(cd "$(dirname "$0")" && pwd)
cluster=$HUDDLE_SRC/tests/pg/cluster.sh

nodes_need_pg
need_node_modules @modelcontextprotocol/sdk
unset HUDDLE_TOKEN HUDDLE_STORE

# ---- databases, nodes, and cleaning up ---------------------------------
db=hd_nodes_$$_$RANDOM
own_pg=$T_TMP/pg # item 7's cluster
pg_cleanup() {
	nodes_stop_all
	psql "$HUDDLE_TEST_PG" -XAtqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
	psql "$HUDDLE_TEST_PG" -XAtqc "DROP DATABASE IF EXISTS ${db}_ex WITH (FORCE)" >/dev/null 2>&1
	bash "$cluster" stop "$own_pg" >/dev/null 2>&1
	t_cleanup
}
trap pg_cleanup EXIT
trap 'exit 1' INT TERM
# the server's user (postgres, as root) must reach item 7's cluster
chmod 711 "$T_TMP"

# attach_url NAME TEAM AGENT: the MCP URL `huddle attach` makes on NAME's home
attach_url() {
	hud "$1" attach "$2" "$3" --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["url"])'
}
# rest_is CODE DESCRIPTION NAME METHOD PATH [BODY] [curl args...]
rest_is() {
	local code=$1 what=$2
	shift 2
	rest "$@"
	expect_eq "$CODE" "$code" "$what (status; body $BODY)"
}
# room_dump NAME TEAM FILE: every post of TEAM's room read through node
# NAME (REST, 500 at a time), as a JSON list in FILE
room_dump() {
	python3 - "${node_url[$1]}" "$2" >"$3" <<'EOF'
import json, sys, urllib.request
base, team = sys.argv[1], sys.argv[2]
posts, since = [], 0
while True:
    with urllib.request.urlopen(f"{base}/api/team-chat?teamId={team}&limit=500&sinceSeq={since}") as r:
        page = json.load(r)["posts"]
    if not page:
        break
    posts += page
    since = page[-1]["seq"]
print(json.dumps(posts))
EOF
}
# room_check ROOM ACKS: the room (room_dump's file) against the
# acknowledgements (pg-nodes.mjs's file): prints the problems, one a line
# -- seqs not exactly 1..max, a duplicate seq, an acknowledged post missing
# or stored under another seq or author -- or nothing.
room_check() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
posts = json.load(open(sys.argv[1]))
seqs = [p["seq"] for p in posts]
if len(set(seqs)) != len(seqs):
    dup = sorted({s for s in seqs if seqs.count(s) > 1})
    print(f"duplicate seqs: {dup[:10]}")
if sorted(set(seqs)) != list(range(1, len(set(seqs)) + 1)):
    missing = sorted(set(range(1, max(seqs) + 1)) - set(seqs))
    print(f"seqs are not 1..{max(seqs)}: missing {missing[:10]} ({len(missing)} in all)")
stored = {p["seq"]: p for p in posts}
for line in open(sys.argv[2]):
    a = json.loads(line)
    if "seq" not in a:
        continue
    p = stored.get(a["seq"])
    if p is None or p["body"] != a["text"] or p["authorAgentId"] != a["agent"]:
        print(f"acknowledged post {a} is not in the room as acknowledged (seq {a['seq']} holds {p})")
EOF
}
# acks FILE [AGENT_REGEX]: how many acknowledged posts FILE holds (of the
# agents matching the regex); errs FILE [AGENT_REGEX]: how many failures
acks() { cat "$1" 2>/dev/null | grep -c "\"agent\":\"${2:-[^\"]*}\",\"text\":\"[^\"]*\",\"seq\""; }
errs() { cat "$1" 2>/dev/null | grep -c "\"agent\":\"${2:-[^\"]*}\",\"text\":\"[^\"]*\",\"error\""; }
at_least() { [ "$(acks "$1" "$3")" -ge "$2" ]; }
errs_at_least() { [ "$(errs "$1" "$3")" -ge "$2" ]; }

if ! out=$(psql "$HUDDLE_TEST_PG" -XAtqc "CREATE DATABASE $db" 2>&1); then
	fail "CREATE DATABASE $db on the fixture's cluster: $out"
	finish
	exit 1
fi
store=$(db_url "$HUDDLE_TEST_PG" "$db")
node_start a "$store"
node_start b "$store"
expect_eq "$(sed -n 2p "$T_TMP/a.out")" "store: $store" "node A says which store it serves"
expect_eq "$(sed -n 2p "$T_TMP/b.out")" "store: $store" "node B serves the same one"

# ---- 1. teams, agents, board and mail through either node ---------------
rest_is 201 "team dev created through node A" a POST /api/teams '{"id": "dev", "name": "Dev"}'
for ag in coder tester; do
	rest_is 201 "agent $ag added through node A" a POST /api/teams/dev/agents "{\"id\": \"$ag\"}"
done
rest_is 201 "a task created through node A" a POST /api/teams/dev/tasks '{"subject": "Made on A"}'
task_a=$(json_get "$BODY" 'j["task"]["id"]')
rest_is 200 "team dev read through node B" b GET /api/teams/dev
expect_eq "$(json_get "$BODY" '[j["team"]["name"], sorted(a["id"] for a in j["team"]["agents"])]')" \
	"['Dev', ['coder', 'tester']]" "node B sees node A's team and its agents"
rest_is 200 "dev's board read through node B" b GET /api/teams/dev/tasks
expect_eq "$(json_get "$BODY" '[(t["id"], t["subject"], t["status"]) for t in j["tasks"]]')" \
	"[($task_a, 'Made on A', 'pending')]" "node B sees node A's task"
rest_is 201 "a task created through node B" b POST /api/teams/dev/tasks '{"subject": "Made on B"}'
task_b=$(json_get "$BODY" 'j["task"]["id"]')
rest_is 200 "task $task_b read through node A" a GET "/api/tasks/$task_b"
expect_eq "$(json_get "$BODY" 'j["task"]["subject"]')" "Made on B" "node A sees node B's task"
run team list --json --store "$store"
expect_rc 0 "huddle team list --store URL, with no node's home"
expect_eq "$(json_get "$OUT" '[t["id"] for t in j]')" "['dev']" "the CLI sees the team too"
sig_coder=$(attach_url a dev coder | sed 's/.*sig=//')
rest_is 201 "mail from coder sent through node A" a POST /api/teams/dev/messages \
	'{"to": "tester", "content": "mail across nodes"}' -H 'Huddle-Agent: dev/coder' -H "Huddle-Signature: $sig_coder"
rest_is 200 "tester's inbox read through node B" b GET /api/agents/tester/inbox
expect_eq "$(json_get "$BODY" '[(m["from_agent"], m["content"]) for m in j["messages"] if m["type"] == "message"]')" \
	"[('coder', 'mail across nodes')]" "node B's inbox holds node A's mail"

# ---- 2. 8 MCP clients, 4 on each node, one room -------------------------
N=25
rest_is 201 "team chat" a POST /api/teams '{"id": "chat"}'
urls=()
for i in 1 2 3 4 5 6 7 8; do
	hud a agent add chat "m$i" >/dev/null || fail "agent add chat m$i"
	if [ "$i" -le 4 ]; then u=$(attach_url a chat "m$i"); else u=$(attach_url b chat "m$i"); fi
	urls+=("$u")
done
expect_eq "$(printf '%s\n' "${urls[@]}" | sed 's|/mcp?.*||' | sort | uniq -c | tr -s ' ')" \
	"$(printf ' 4 %s\n' "${node_url[a]}" "${node_url[b]}" | sort)" "4 attach URLs on each node"
out=$(node "$E2E/pg-nodes.mjs" post --out "$T_TMP/chat.acks" --count "$N" --tag chat "${urls[@]}" 2>&1)
expect_eq "$out" "{\"acked\":$((8 * N)),\"errors\":0}" "8 clients x $N posts, all acknowledged"
room_dump b chat "$T_TMP/chat.json"
expect_eq "$(python3 -c 'import json,sys; print(sorted(p["seq"] for p in json.load(open(sys.argv[1]))) == list(range(1, int(sys.argv[2]) + 1)))' \
	"$T_TMP/chat.json" "$((8 * N))")" True "the room read through node B holds seqs 1..$((8 * N)), no gap, no duplicate"
expect_eq "$(room_check "$T_TMP/chat.json" "$T_TMP/chat.acks")" "" "every acknowledged post is there as acknowledged"
room_dump a chat "$T_TMP/chat-a.json"
expect_eq "$(cmp -s "$T_TMP/chat.json" "$T_TMP/chat-a.json" && echo same)" same "node A reads the same room"

# ---- 3. 16 claimers, 8 on each node, racing on each task ------------------
rest_is 201 "team race" a POST /api/teams '{"id": "race"}'
claimers=()
for i in $(seq 1 16); do
	hud b agent add race "c$i" >/dev/null || fail "agent add race c$i"
	if [ $((i % 2)) -eq 1 ]; then u=$(attach_url a race "c$i"); else u=$(attach_url b race "c$i"); fi
	claimers+=("$u")
done
tasks=()
for t in 1 2 3 4 5 6; do
	if [ $((t % 2)) -eq 1 ]; then n=a; else n=b; fi
	rest_is 201 "race task $t made through node $n" "$n" POST /api/teams/race/tasks "{\"subject\": \"race $t\"}"
	tasks+=("$(json_get "$BODY" 'j["task"]["id"]')")
done
out=$(node "$E2E/pg-nodes.mjs" claim --tasks "$(IFS=,; echo "${tasks[*]}")" "${claimers[@]}" 2>&1)
expect_json "$out" "the claim race's report"
verdict=$(python3 - "$out" <<'EOF'
import json, sys
for r in json.loads(sys.argv[1]):
    w = r["winners"]
    if len(w) != 1:
        print(f"task {r['task']}: {len(w)} winners {w}")
        continue
    if r["owners"] != w:
        print(f"task {r['task']}: won by {w[0]}, owner {r['owners']}")
    want = f"task {r['task']} is already claimed by {w[0]}"
    bad = [l for l in r["losers"] if l["text"] != want]
    if len(r["losers"]) != 15 or bad:
        print(f"task {r['task']}: losers {len(r['losers'])}, told otherwise than [{want}]: {bad[:3]}")
EOF
)
expect_eq "$verdict" "" "each of ${#tasks[@]} tasks: one winner of 16, the 15 others told who won"
for t in "${tasks[@]}"; do
	winner=$(json_get "$out" "[r['winners'][0] for r in j if r['task'] == $t][0]" 2>/dev/null)
	for n in a b; do
		rest "$n" GET "/api/tasks/$t"
		expect_eq "$(json_get "$BODY" '[j["task"]["status"], j["task"]["owner"]]')" "['claimed', '$winner']" \
			"task $t read through node $n: claimed by the one winner"
	done
done

# ---- 4. SSE on node B, a post through node A -------------------------------
out=$(timeout 120 node "$E2E/pg-nodes.mjs" sse --stream "${node_url[b]}/api/events?team=dev" \
	--post "${node_url[a]}/api/teams/dev/posts" --text "live across nodes" 2>&1)
expect_json "$out" "node B's stream got node A's post ($out)"
expect_eq "$(json_get "$out" '[j["event"]["kind"], j["event"]["team_id"], j["event"]["data"]["roomId"], j["event"]["data"]["author"], j["event"]["data"]["seq"] == j["posted"]["seq"]]' 2>/dev/null)" \
	"['team_chat_post', 'dev', 'team:dev', 'user', True]" "the event is the post's"
echo "$T_NAME: node B's SSE stream got node A's post $(json_get "$out" 'j["latency_ms"]' 2>/dev/null) ms after it was sent (recorded, not judged)"

# ---- 5. an attach URL made through node A, used on node B -------------------
url_a=$(attach_url a dev tester)
case "$url_a" in
"${node_url[a]}/mcp?"*) pass ;;
*) fail "node A's home attaches to node A: [$url_a]" ;;
esac
url_on_b="${node_url[b]}/mcp?${url_a#*\?}"
expect_eq "$(attach_url b dev tester)" "$url_on_b" "node B's home signs the same URL (the key is in the store)"
out=$(node "$E2E/pg-nodes.mjs" post --out "$T_TMP/attach.acks" --count 1 --tag "signed on A" "$url_on_b" 2>&1)
expect_eq "$out" '{"acked":1,"errors":0}' "node A's attach URL posts through node B"
rest b GET "/api/team-chat?teamId=dev&limit=500"
expect_eq "$(json_get "$BODY" '[p["authorAgentId"] for p in j["posts"] if p["body"] == "signed on A tester 1"]')" \
	"['tester']" "as tester"
forged="${url_on_b%sig=*}sig=$(printf '%s' "${url_on_b##*sig=}" | tr '0-9a-f' '1-9a-f0')"
out=$(node "$E2E/pg-nodes.mjs" post --out "$T_TMP/forged.acks" --count 1 --tag forged "$forged" 2>&1)
expect_eq "$out" '{"acked":0,"errors":1}' "a forged sig posts nothing through node B"
expect_contains "$(cat "$T_TMP/forged.acks")" "read-only" "and is told the URL is read-only"

# ---- 6. node A killed with -9 mid-load --------------------------------------
load_urls=()
for i in 1 2 3 4; do load_urls+=("$(attach_url a chat "m$i")"); done
for i in 5 6 7 8; do load_urls+=("$(attach_url b chat "m$i")"); done
stop=$T_TMP/kill.stop
node "$E2E/pg-nodes.mjs" load --out "$T_TMP/kill.acks" --stop "$stop" --tag kill "${load_urls[@]}" \
	>"$T_TMP/kill.sum" 2>&1 &
loader=$!
wait_for 120 at_least "$T_TMP/kill.acks" 40 'm[1-4]' || fail "node A acknowledged no 40 posts under load"
kill -9 "${node_pid[a]}"
wait "${node_pid[a]}" 2>/dev/null
unset 'node_pid[a]'
b_then=$(acks "$T_TMP/kill.acks" 'm[5-8]')
wait_for 120 at_least "$T_TMP/kill.acks" $((b_then + 40)) 'm[5-8]' ||
	fail "node B's clients stopped posting after node A was killed"
wait_for 60 errs_at_least "$T_TMP/kill.acks" 4 'm[1-4]' || fail "node A's clients got no errors once it was killed"
touch "$stop"
wait "$loader"
expect_eq "$(errs "$T_TMP/kill.acks" 'm[5-8]')" 0 "node B's clients never failed"
room_dump b chat "$T_TMP/kill.json"
expect_eq "$(room_check "$T_TMP/kill.json" "$T_TMP/kill.acks")" "" \
	"after the kill, through node B: seqs gapless, all $(acks "$T_TMP/kill.acks") acknowledged posts there ($(acks "$T_TMP/kill.acks" 'm[1-4]') through A)"
node_start a "$store"
room_dump a chat "$T_TMP/kill-a.json"
expect_eq "$(cmp -s "$T_TMP/kill.json" "$T_TMP/kill-a.json" && echo same)" same \
	"node A, started again on its home, serves the same room"
out=$(node "$E2E/pg-nodes.mjs" post --out "$T_TMP/again.acks" --count 3 --tag again "$(attach_url a chat m1)" 2>&1)
expect_eq "$out" '{"acked":3,"errors":0}' "and takes posts again"

# ---- 7. PostgreSQL stopped and started mid-load -----------------------------
if ! own_url=$(bash "$cluster" start "$own_pg" 2>"$T_TMP/cluster.err"); then
	fail "a cluster of its own: $(cat "$T_TMP/cluster.err")"
	finish
	exit 1
fi
psql "$own_url" -XAtqc "CREATE DATABASE huddle" >/dev/null || fail "CREATE DATABASE huddle on the own cluster"
own_store=$(db_url "$own_url" huddle)
node_start c "$own_store"
node_start d "$own_store"
rest_is 201 "team ops through node C" c POST /api/teams '{"id": "ops"}'
ops_urls=()
for i in 1 2 3 4; do
	hud c agent add ops "o$i" >/dev/null || fail "agent add ops o$i"
	if [ "$i" -le 2 ]; then ops_urls+=("$(attach_url c ops "o$i")"); else ops_urls+=("$(attach_url d ops "o$i")"); fi
done
stop=$T_TMP/pg.stop
node "$E2E/pg-nodes.mjs" load --out "$T_TMP/pg.acks" --stop "$stop" --tag pg "${ops_urls[@]}" \
	>"$T_TMP/pg.sum" 2>&1 &
loader=$!
wait_for 120 at_least "$T_TMP/pg.acks" 20 'o[12]' || fail "node C acknowledged no 20 posts under load"
wait_for 120 at_least "$T_TMP/pg.acks" 20 'o[34]' || fail "node D acknowledged no 20 posts under load"
expect_eq "$(errs "$T_TMP/pg.acks")" 0 "no call failed with PostgreSQL up"
bash "$cluster" halt "$own_pg" || fail "cluster.sh halt"
halted_at=$(wc -l <"$T_TMP/pg.acks")
# while it is down: every call fails, naming the database. Once each
# client has failed, none has a post in flight from before the halt.
for a in o1 o2 o3 o4; do
	wait_for 120 errs_at_least "$T_TMP/pg.acks" 1 "$a" || fail "$a got no error with PostgreSQL down"
done
acked_before=$(acks "$T_TMP/pg.acks")
for n in c d; do
	rest "$n" POST /api/teams/ops/posts '{"text": "while the database is down"}'
	expect_eq "$CODE" 503 "a REST post through node $n while PostgreSQL is down (body $BODY)"
	expect_contains "$BODY" '{"error":"database unreachable: ' "and its error names the database unreachable"
done
down_errors=$(tail -n +"$((halted_at + 1))" "$T_TMP/pg.acks" | grep '"error"')
expect_eq "$(grep -vc 'database unreachable: ' <<<"$down_errors")" 0 \
	"every MCP call failed with PostgreSQL down says the database is unreachable"
expect_eq "$(acks "$T_TMP/pg.acks")" "$acked_before" "nothing acknowledged while PostgreSQL is down"
bash "$cluster" resume "$own_pg" >/dev/null || fail "cluster.sh resume"
c_then=$(acks "$T_TMP/pg.acks" 'o[12]')
d_then=$(acks "$T_TMP/pg.acks" 'o[34]')
wait_for 120 at_least "$T_TMP/pg.acks" $((c_then + 10)) 'o[12]' || fail "node C's clients do not post again once PostgreSQL is back"
wait_for 120 at_least "$T_TMP/pg.acks" $((d_then + 10)) 'o[34]' || fail "node D's clients do not post again once PostgreSQL is back"
for n in c d; do
	rest_is 201 "a REST post through node $n once PostgreSQL is back" "$n" POST /api/teams/ops/posts '{"text": "back"}'
done
touch "$stop"
wait "$loader"
out=$(timeout 120 node "$E2E/pg-nodes.mjs" sse --stream "${node_url[d]}/api/events?team=ops" \
	--post "${node_url[c]}/api/teams/ops/posts" --text "live after the restart" 2>&1)
expect_eq "$(json_get "$out" 'j["event"]["data"]["seq"] == j["posted"]["seq"]' 2>/dev/null)" True \
	"after the restart, node D's stream gets node C's post ($out)"
room_dump d ops "$T_TMP/pg.json"
expect_eq "$(room_check "$T_TMP/pg.json" "$T_TMP/pg.acks")" "" \
	"after the restart: seqs gapless, all $(acks "$T_TMP/pg.acks") acknowledged posts there"
for n in c d; do
	kill -0 "${node_pid[$n]}" 2>/dev/null && pass || fail "node $n died with PostgreSQL: $(tail -5 "$T_TMP/$n.err")"
done

# ---- 8. the example of README.md and docs/configuration.md, as written ------
# the same block in both; run by bash -e with huddle on PATH, a HOME of its
# own, and only its database URL and its two ports changed
example() {
	python3 - "$1" <<'EOF'
import re, sys
m = re.search(r"<!-- pg-nodes-example:begin -->\s*```sh\n(.*?)```\s*<!-- pg-nodes-example:end -->",
              open(sys.argv[1]).read(), re.S)
print(m.group(1) if m else "", end="")
EOF
}
ex=$(example "$HUDDLE_SRC/README.md")
[ -n "$ex" ] && pass || fail "README.md has no pg-nodes-example block"
expect_eq "$(example "$HUDDLE_SRC/docs/configuration.md")" "$ex" "docs/configuration.md shows the README's example"
psql "$HUDDLE_TEST_PG" -XAtqc "CREATE DATABASE ${db}_ex" >/dev/null || fail "CREATE DATABASE ${db}_ex"
ex_store=$(db_url "$HUDDLE_TEST_PG" "${db}_ex")
ex=$(python3 - "$ex" "$ex_store" "$(free_port)" "$(free_port)" <<'EOF'
import re, sys
block, url, p1, p2 = sys.argv[1:]
lines = block.splitlines()
setters = [i for i, l in enumerate(lines) if re.fullmatch(r"db='[^']*'", l)]
if len(setters) != 1 or "7341" not in block or "7342" not in block:
    sys.exit("the example must set db='URL' on a line of its own, once, and use ports 7341 and 7342")
lines[setters[0]] = "db='" + url + "'"
print("\n".join(lines).replace("7341", p1).replace("7342", p2))
EOF
)
mkdir -p "$T_TMP/ex"
huddle_on_path
(cd "$HUDDLE_SRC" && env -u HUDDLE_HOME -u HUDDLE_STORE HOME="$T_TMP/ex" \
	timeout 120 bash -e -c "trap 'jobs -p >\"$T_TMP/ex.pids\"' EXIT
$ex") >"$T_TMP/ex.out" 2>"$T_TMP/ex.err"
RC=$? OUT=$(cat "$T_TMP/ex.out") ERR=$(cat "$T_TMP/ex.err")
expect_rc 0 "the example runs as written"
expect_eq "$(python3 - "$T_TMP/ex.out" <<'EOF'
import json, re, sys
text, dec, got = open(sys.argv[1]).read(), json.JSONDecoder(), []
for m in re.finditer(r'\{"team":', text):
    t = dec.raw_decode(text[m.start():])[0]["team"]
    got.append((t["id"], t["name"], [a["id"] for a in t["agents"]] if "agents" in t else None))
print(got)
EOF
)" "[('dev', 'Dev', None), ('dev', 'Dev', [])]" \
	"the first node made the team, the second shows it (with its members)"
for p in $(cat "$T_TMP/ex.pids" 2>/dev/null); do
	kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
done
ex_stopped() { ! ls "$T_TMP"/ex/.huddle-*/serve.json >/dev/null 2>&1; }
wait_for 20 ex_stopped || fail "the example's nodes did not stop"

for n in a b c d; do
	kill -TERM "${node_pid[$n]}"
	wait "${node_pid[$n]}"
	expect_eq "$?" 0 "node $n exits 0 on SIGTERM"
	unset "node_pid[$n]"
done
finish
