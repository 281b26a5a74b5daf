#!/usr/bin/env bash
# test-pg-cluster.sh -- tests/pg/cluster.sh, the throwaway PostgreSQL
# cluster of the unit-pg set, and tests/pg/run-with-pg.sh, its wrapper:
#  - start prints a URL on which psql answers `select 1`, over a Unix
#    socket only (no TCP listener of its postmaster; listen_addresses
#    empty), with the settings of a test cluster; a DIR with a space in it
#    is percent-encoded in the URL;
#  - a second start reuses the running cluster (same postmaster, same URL);
#  - status and url answer while it runs; halt stops its postmaster and
#    keeps its data (status says so, url fails), resume starts it again
#    on the same data with the same URL, restart does both;
#  - stop stops it and removes its data, a second stop succeeds with
#    nothing to stop, status then says so (exit 3), url and
#    run-with-pg.sh fail naming what to run;
#  - start after stop makes a new cluster; a cluster killed with -9 is
#    replaced by the next start;
#  - a DIR too long for a Unix socket's path puts the socket in a /tmp
#    directory that stop removes;
#  - run-with-pg.sh exports the URL as HUDDLE_TEST_PG to the command;
#  - missing server binaries are named with the package to install;
#  - as root: the server runs as the postgres user (initdb refuses root),
#    from a /tmp run directory when that user cannot reach DIR, and the
#    script also works as a normal user (nobody), running the server as
#    that user.
# Part of the PostgreSQL set (label pg; left out with HUDDLE_PG_TESTS=OFF).
. "$(dirname "$0")/lib.sh"

cluster=$HUDDLE_SRC/tests/pg/cluster.sh
wrapper=$HUDDLE_SRC/tests/pg/run-with-pg.sh
for tool in psql ss; do
	command -v "$tool" >/dev/null 2>&1 ||
		fail "$tool is missing (scripts/deps.sh test installs postgresql; ss is iproute2's)"
done
# as root, the server's user must reach the directories under T_TMP
chmod 711 "$T_TMP"
started=() # every DIR started here, stopped on exit
nobody_dir= # the normal user's (as root), stopped and removed on exit
cleanup_pg() {
	local d
	for d in "${started[@]}"; do
		bash "$cluster" stop "$d" >/dev/null 2>&1
	done
	if [ -n "$nobody_dir" ]; then
		(cd / && runuser -u nobody -- bash "$cluster" stop "$nobody_dir/pg") >/dev/null 2>&1
		rm -rf "$nobody_dir"
	fi
	t_cleanup
}
trap cleanup_pg EXIT
trap 'exit 1' INT TERM

# cl CMD DIR: cluster.sh, capturing as run() does
cl() {
	OUT=$(bash "$cluster" "$@" 2>"$T_TMP/stderr")
	RC=$?
	ERR=$(cat "$T_TMP/stderr")
}
state_get() { sed -n "s/^$2=//p" "$1/state"; }
postmaster() { head -n 1 "$(state_get "$1" rundir)/data/postmaster.pid" 2>/dev/null; }
# alive PID: runs (a zombie its reaper has not collected yet is gone)
alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
sql() { psql "$1" -XAtqc "$2" 2>&1; }

# ---- start, reuse, no TCP ---------------------------------------------
d="$T_TMP/a cluster"
started+=("$d")
cl start "$d"
expect_rc 0 "start"
url=$OUT
expect_eq "$(cat "$d/url" 2>/dev/null)" "$url" "start writes the URL it prints to DIR/url"
enc=$(printf '%s' "$d" | sed 's/ /%20/g')
expect_eq "$url" "postgresql:///postgres?host=$enc/run&port=$(state_get "$d" port)&user=postgres" \
	"the URL names the socket directory (percent-encoded), the port and the superuser"
expect_eq "$(sql "$url" 'select 1')" 1 "psql on the URL answers select 1"
pid=$(postmaster "$d")
[ -n "$pid" ] && alive "$pid" && pass || fail "no postmaster runs for $d (pid [$pid])"
cl start "$d"
expect_rc 0 "start again"
expect_eq "$OUT" "$url" "the second start prints the same URL"
expect_eq "$(postmaster "$d")" "$pid" "the second start reuses the running postmaster"
expect_eq "$(sql "$url" "select current_setting('listen_addresses') || '|' || current_setting('fsync') || '|' || current_setting('synchronous_commit') || '|' || current_setting('full_page_writes') || '|' || current_setting('max_connections') || '|' || current_setting('server_encoding')")" \
	"|off|off|off|200|UTF8" "listen_addresses empty, fsync/synchronous_commit/full_page_writes off, 200 connections, UTF8"
tcp=$(ss -Hltnp 2>/dev/null | grep "pid=$pid,")
expect_eq "$tcp" "" "the postmaster listens on no TCP port"
if [ "$(id -u)" -eq 0 ]; then
	expect_eq "$(ps -o user= -p "$pid" | tr -d ' ')" postgres \
		"as root, the server runs as the postgres user"
fi
cl status "$d"
expect_rc 0 "status while it runs"
expect_contains "$OUT" "running: $url" "status names the URL"
cl url "$d"
expect_rc 0 "url while it runs"
expect_eq "$OUT" "$url" "url prints the URL"

# ---- run-with-pg.sh ---------------------------------------------------
out=$(env -u HUDDLE_TEST_PG bash "$wrapper" "$d" env 2>&1)
RC=$? OUT=$out ERR=
expect_rc 0 "run-with-pg.sh DIR env"
expect_eq "$(printf '%s\n' "$out" | grep '^HUDDLE_TEST_PG=')" "HUDDLE_TEST_PG=$url" \
	"run-with-pg.sh exports the URL as HUDDLE_TEST_PG"
out=$(bash "$wrapper" "$d" sh -c 'exit 7' 2>&1)
RC=$? OUT=$out ERR=
expect_rc 7 "run-with-pg.sh passes the command's exit status on"

# ---- halt, resume, restart: the same data, socket and URL ---------------
sql "$url" "create table kept (x int); insert into kept values (7)" >/dev/null
cl halt "$d"
expect_rc 0 "halt"
alive "$pid" && fail "the postmaster $pid still runs after halt" || pass
expect_eq "$([ -d "$d/run/data" ] && [ ! -e "$d/url" ] && echo kept)" kept \
	"halt keeps the data and removes DIR/url"
cl status "$d"
expect_rc 3 "status while halted"
expect_eq "$OUT" "not running in $d; its data is kept (halted, or crashed): resume starts it again, stop removes it" \
	"status says it is halted"
cl url "$d"
expect_rc 1 "url while halted"
cl resume "$d"
expect_rc 0 "resume"
expect_eq "$OUT" "$url" "resume prints the same URL"
expect_eq "$(cat "$d/url" 2>/dev/null)" "$url" "and writes it to DIR/url again"
expect_eq "$(sql "$url" 'select x from kept')" 7 "what was written before the halt is there"
pid=$(postmaster "$d")
cl resume "$d"
expect_rc 0 "resume while it runs"
expect_eq "$(postmaster "$d")" "$pid" "leaves the running postmaster be"
cl restart "$d"
expect_rc 0 "restart"
expect_eq "$OUT" "$url" "restart prints the same URL"
[ "$(postmaster "$d")" != "$pid" ] && ! alive "$pid" && pass ||
	fail "restart: postmaster [$(postmaster "$d")], the old one [$pid] (alive: $(alive "$pid" && echo yes))"
expect_eq "$(sql "$url" 'select x from kept')" 7 "the data survives the restart"
pid=$(postmaster "$d")
cl halt "$T_TMP/never started"
expect_rc 1 "halt where nothing was started"
expect_eq "$ERR" "cluster.sh: no cluster runs in $T_TMP/never started (start one: tests/pg/cluster.sh start $T_TMP/never started)" \
	"halt names what to run"

# ---- stop, twice; then nothing runs -----------------------------------
cl stop "$d"
expect_rc 0 "stop"
alive "$pid" && fail "the postmaster $pid still runs after stop" || pass
expect_eq "$([ -e "$d/run/data" ] || [ -e "$d/url" ] || echo gone)" gone \
	"stop removes the data and DIR/url"
cl stop "$d"
expect_rc 0 "stop with nothing running"
cl status "$d"
expect_rc 3 "status with nothing running"
expect_eq "$OUT" "not running in $d" "status says nothing runs"
cl url "$d"
expect_rc 1 "url with nothing running"
expect_eq "$ERR" "cluster.sh: no cluster runs in $d (start one: tests/pg/cluster.sh start $d)" \
	"url names what to run"
out=$(bash "$wrapper" "$d" true 2>&1)
RC=$? OUT= ERR=$out
expect_rc 1 "run-with-pg.sh with nothing running"
expect_contains "$out" "no PostgreSQL cluster runs in $d" "run-with-pg.sh says why"

# ---- start after stop; after a kill -9 --------------------------------
cl start "$d"
expect_rc 0 "start after stop"
url2=$OUT
expect_eq "$(sql "$url2" 'select 2')" 2 "the new cluster answers"
pid2=$(postmaster "$d")
[ -n "$pid2" ] && [ "$pid2" != "$pid" ] && pass || fail "start after stop: postmaster [$pid2], the old one was [$pid]"
kill -9 "$pid2"
for _ in $(seq 50); do alive "$pid2" || break; sleep 0.1; done
cl start "$d"
expect_rc 0 "start after the postmaster was killed with -9"
expect_eq "$(sql "$OUT" 'select 3')" 3 "the cluster made afresh answers"
cl stop "$d"
expect_rc 0 "stop after the restart"

# ---- a DIR too long for a socket's path -------------------------------
long="$T_TMP/$(printf 'long%.0s' $(seq 30))/pg"
started+=("$long")
cl start "$long"
expect_rc 0 "start in a DIR of ${#long} bytes"
sockdir=$(state_get "$long" sockdir)
case "$sockdir" in
/tmp/huddle-pg-*) pass ;;
*) fail "the socket directory of a long DIR is [$sockdir], not under /tmp" ;;
esac
expect_eq "$(sql "$OUT" 'select 4')" 4 "the cluster with its socket in /tmp answers"
cl stop "$long"
expect_rc 0 "stop the long DIR's cluster"
expect_eq "$([ -e "$sockdir" ] || echo gone)" gone "stop removes the /tmp socket directory"

# ---- missing binaries -------------------------------------------------
OUT=$(HUDDLE_PG_BINDIR=$T_TMP/nowhere bash "$cluster" start "$T_TMP/nobin" 2>"$T_TMP/stderr")
RC=$? ERR=$(cat "$T_TMP/stderr")
expect_rc 1 "start without the server's binaries"
expect_contains "$ERR" "install postgresql: scripts/deps.sh test" \
	"the message names the package to install"

# ---- as root: an unreachable DIR; a normal user ------------------------
if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 700 "$T_TMP/closed"
	c="$T_TMP/closed/pg"
	started+=("$c")
	cl start "$c"
	expect_rc 0 "start in a DIR the postgres user cannot reach"
	rundir=$(state_get "$c" rundir)
	case "$rundir" in
	/tmp/huddle-pg-run-*) pass ;;
	*) fail "the run directory for an unreachable DIR is [$rundir], not under /tmp" ;;
	esac
	expect_eq "$(sql "$OUT" 'select 5')" 5 "that cluster answers"
	cl stop "$c"
	expect_rc 0 "stop it"
	expect_eq "$([ -e "$rundir" ] || echo gone)" gone "stop removes the /tmp run directory"

	if command -v runuser >/dev/null 2>&1 && id -u nobody >/dev/null 2>&1 &&
		runuser -u nobody -- test -r "$cluster"; then
		n=$(mktemp -d /tmp/huddle-pg-test-XXXXXX)
		nobody_dir=$n
		chown nobody "$n"
		asnobody() { (cd / && runuser -u nobody -- bash "$cluster" "$@" 2>&1); }
		out=$(asnobody start "$n/pg")
		RC=$? OUT=$out ERR=
		expect_rc 0 "start as a normal user (nobody)"
		npid=$(postmaster "$n/pg")
		expect_eq "$(ps -o user= -p "$npid" 2>/dev/null | tr -d ' ')" nobody \
			"a normal user's cluster runs as that user"
		expect_eq "$(sql "$out" 'select 6')" 6 "the normal user's cluster answers"
		out=$(asnobody stop "$n/pg")
		RC=$? OUT=$out ERR=
		expect_rc 0 "stop as nobody"
		alive "$npid" && fail "nobody's postmaster $npid still runs" || pass
	else
		echo "$T_NAME: runuser, the nobody user or a source tree nobody can read is missing: the normal-user run is not tested"
	fi
fi

finish
