# lib-nodes.sh -- what the tests of several `huddle serve` nodes on one
# PostgreSQL share: a database's URL, the nodes (each its own HUDDLE_HOME
# under T_TMP and its own port), the CLI on a node, and REST through it.
# Sourced after lib.sh; node_pid, node_url and node_store are the callers'
# view of the nodes. Callers: test-pg-nodes.sh, test-pg-routines.sh.

declare -A node_pid node_url node_store

# nodes_need_pg: skip the test (exit 77) without HUDDLE_TEST_PG, the
# fixture's cluster (ctest runs these tests through
# tests/pg/run-with-pg.sh); fail it without psql.
nodes_need_pg() {
	if [ -z "${HUDDLE_TEST_PG:-}" ]; then
		echo "$T_NAME: skipped: needs HUDDLE_TEST_PG, a PostgreSQL URL (ctest runs it through tests/pg/run-with-pg.sh with the fixture pg)"
		exit 77
	fi
	command -v psql >/dev/null 2>&1 || {
		fail "psql is missing (scripts/deps.sh test installs postgresql)"
		finish
		exit 1
	}
}

# nodes_stop_all: when the test failed, each node's last 20 stderr lines
# (on stderr); then every node still running is killed (-9).
nodes_stop_all() {
	local n
	if [ "$T_FAILS" -gt 0 ]; then
		for n in "${!node_url[@]}"; do
			[ -s "$T_TMP/$n.err" ] || continue
			echo "--- node $n's stderr, its last 20 lines:"
			tail -n 20 "$T_TMP/$n.err"
		done >&2
	fi
	for n in "${!node_pid[@]}"; do
		kill -9 "${node_pid[$n]}" 2>/dev/null && wait "${node_pid[$n]}" 2>/dev/null
	done
}

# db_url URL NAME: URL with its database NAME
db_url() {
	python3 -c 'import re, sys
print(re.sub(r"^(postgres(ql)?://[^/?]*)(/[^?]*)?", lambda m: m[1] + "/" + sys.argv[2], sys.argv[1]))' "$1" "$2"
}

# node_start NAME STORE [WRAPPER...]: `huddle serve --port 0` on
# HUDDLE_HOME $T_TMP/NAME and STORE, run through WRAPPER (env ...,
# unshare ...) when given, its stderr appended to $T_TMP/NAME.err (a node
# started again keeps its last life's lines); once it says it runs and
# its serve.json names its port (what attach reads), sets node_url[NAME].
# A node that does not start fails the test and ends it.
node_start() {
	local name=$1 port
	node_store[$name]=$2
	shift 2
	mkdir -p "$T_TMP/$name"
	# a node started again: its last life's "running at" must not be
	# read before the new one's redirection empties the file
	rm -f "$T_TMP/$name.out"
	HUDDLE_HOME=$T_TMP/$name "$@" "$HUDDLE" --store "${node_store[$name]}" \
		serve --port 0 >"$T_TMP/$name.out" 2>>"$T_TMP/$name.err" &
	node_pid[$name]=$!
	T_SERVERS="$T_SERVERS $!"
	for _ in $(seq 1 1000); do
		grep -q "huddle is running at" "$T_TMP/$name.out" 2>/dev/null && break
		kill -0 "${node_pid[$name]}" 2>/dev/null || break
		sleep 0.02
	done
	node_url[$name]=$(sed -n 's/^huddle is running at //p' "$T_TMP/$name.out")
	if [ -z "${node_url[$name]}" ]; then
		local how="it still runs"
		if ! kill -0 "${node_pid[$name]}" 2>/dev/null; then
			wait "${node_pid[$name]}"
			how="it exited $?"
		fi
		fail "node $name did not start ($how): $(cat "$T_TMP/$name.out"; tail -n 5 "$T_TMP/$name.err")"
		finish
		exit 1
	fi
	port=${node_url[$name]##*:}
	wait_for 20 grep -q "\"port\":$port" "$T_TMP/$name/serve.json" ||
		fail "node $name wrote no serve.json"
}

# hud NAME ARGS...: the CLI on node NAME's home and store
hud() {
	local name=$1
	shift
	HUDDLE_HOME=$T_TMP/$name "$HUDDLE" --store "${node_store[$name]}" "$@"
}

# rest NAME METHOD PATH [BODY] [curl args...]: through node NAME; sets
# CODE and BODY
rest() {
	local name=$1 m=$2 p=$3 data=${4-}
	shift 4 2>/dev/null || shift $#
	if [ -n "$data" ]; then
		CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -X "$m" "${node_url[$name]}$p" \
			-H 'Content-Type: application/json' --data-binary "$data" "$@")
	else
		CODE=$(curl -s -o "$T_TMP/body" -w '%{http_code}' -X "$m" "${node_url[$name]}$p" "$@")
	fi
	BODY=$(cat "$T_TMP/body")
}
