#!/usr/bin/env bash
# cluster.sh -- a throwaway PostgreSQL cluster for the tests, from Debian's
# postgresql package, on a Unix socket only (no TCP at all).
#
#   tests/pg/cluster.sh start DIR   start one in DIR (or reuse the one that
#                                   runs there), wait until pg_isready
#                                   answers, print its URL and write it to
#                                   DIR/url
#   tests/pg/cluster.sh stop DIR    stop it and remove its data; exit 0 when
#                                   none runs (the build is never failed by
#                                   a stop with nothing to stop)
#   tests/pg/cluster.sh url DIR     print the URL of the one that runs
#   tests/pg/cluster.sh status DIR  say whether one runs (exit 0) or not (3)
#   tests/pg/cluster.sh halt DIR    stop its postmaster (pg_ctl -m fast:
#                                   sessions are ended, as an operator's
#                                   restart does) and keep its data,
#                                   socket directory and port
#   tests/pg/cluster.sh resume DIR  start the halted one again on the same
#                                   data, socket and port (the same URL),
#                                   wait until pg_isready answers, print
#                                   the URL
#   tests/pg/cluster.sh restart DIR halt, then resume
#
# The server's binaries: $HUDDLE_PG_BINDIR when set, else pg_config
# --bindir, else the newest /usr/lib/postgresql/*/bin; none is an error
# naming the package (scripts/deps.sh test installs postgresql).
#
# Callers: tests/CMakeLists.txt (the ctest fixture `pg`: pg/start and
# pg/stop on ${CMAKE_BINARY_DIR}/pg, read by tests/pg/run-with-pg.sh for
# the unit-pg set), tests/e2e/test-pg-cluster.sh and
# tests/e2e/test-pg-nodes.sh (halt and resume on a cluster of its own:
# the fixture's is shared with the tests running beside it).
#
# The URL is libpq's, for the cluster's maintenance database:
#   postgresql:///postgres?host=SOCKDIR&port=PORT&user=postgres
# with SOCKDIR percent-encoded. The tests' fixture (tests/unit/testutil.c,
# HUDDLE_TEST_PG) makes a database of its own per test from there.
#
# Invariants:
#  - DIR holds the invoking user's files: `state` (what runs where: the
#    binaries, the server's user, its run directory, socket directory and
#    port), `url` (present only while a cluster runs), `lock` (flock: one
#    cluster.sh at a time per DIR) and `server.log` (the last stopped
#    cluster's log). A halted cluster keeps `state` and its data, has no
#    `url`, and is reported by status as halted (exit 3). The server's own files (data/, its log) are in the run
#    directory, DIR/run, owned by the server's user.
#  - initdb and postgres refuse to run as root: as root they run as the
#    `postgres` system user (Debian's postgresql package creates it) or,
#    without one, as `nobody`, through runuser (or setpriv); the run
#    directory is chowned to that user. When that user cannot reach DIR
#    (a parent directory it may not enter), the run directory is a
#    mktemp -d under /tmp instead, recorded in DIR/state. As anyone else
#    they run as the invoking user.
#  - The socket is SOCKDIR/.s.PGSQL.PORT, which must fit a Unix socket's
#    107 bytes: when DIR/run makes it longer, SOCKDIR is a mktemp -d under
#    /tmp, recorded in DIR/state and removed by stop. PORT names the
#    socket only (listen_addresses is empty); it is chosen free of TCP
#    listeners and other sockets in /tmp all the same, so a cluster of
#    ours is never mistaken for another in a message.
#  - The cluster is for tests: fsync, synchronous_commit and
#    full_page_writes off, trust authentication for the superuser
#    `postgres`, max_connections 200. `start` reuses a cluster that runs
#    and answers in DIR; anything else left in DIR (a crashed cluster, a
#    killed run, a halted one) is stopped and made afresh. `stop` removes
#    the data: the next start runs initdb again. `resume` is the only
#    command that starts on kept data.
set -u

me=cluster.sh
die() {
	echo "$me: $*" >&2
	exit 1
}
usage() {
	echo "usage: tests/pg/cluster.sh start|stop|url|status|halt|resume|restart DIR" >&2
	exit 2
}

[ $# -eq 2 ] || usage
cmd=$1
case "$cmd" in
start | stop | url | status | halt | resume | restart) ;;
*) usage ;;
esac
[ -n "$2" ] || die "DIR is empty"
case "$2" in
*$'\n'* | *"'"*) die "DIR may not hold a newline or a single quote: $2" ;;
esac
if [ "$cmd" != start ] && [ ! -d "$2" ]; then
	# nothing was ever started there
	case "$cmd" in
	stop) exit 0 ;;
	url | halt | resume | restart) die "no cluster runs in $2 (start one: tests/pg/cluster.sh start $2)" ;;
	status)
		echo "not running in $2"
		exit 3
		;;
	esac
fi
mkdir -p "$2" || die "cannot create $2"
dir=$(cd "$2" && pwd -P) || die "cannot enter $2"
state=$dir/state

# ---- the state file: key=value lines ---------------------------------
st_bindir= st_user= st_rundir= st_sockdir= st_port= st_tmp_rundir= st_tmp_sockdir=
read_state() {
	st_bindir= st_user= st_rundir= st_sockdir= st_port= st_tmp_rundir= st_tmp_sockdir=
	[ -f "$state" ] || return 1
	local k v
	while IFS='=' read -r k v; do
		case "$k" in
		bindir) st_bindir=$v ;;
		user) st_user=$v ;;
		rundir) st_rundir=$v ;;
		sockdir) st_sockdir=$v ;;
		port) st_port=$v ;;
		tmp_rundir) st_tmp_rundir=$v ;;
		tmp_sockdir) st_tmp_sockdir=$v ;;
		esac
	done <"$state"
	[ -n "$st_bindir" ] && [ -n "$st_rundir" ] && [ -n "$st_sockdir" ] &&
		[ -n "$st_port" ]
}
write_state() {
	printf '%s\n' "bindir=$st_bindir" "user=$st_user" "rundir=$st_rundir" \
		"sockdir=$st_sockdir" "port=$st_port" "tmp_rundir=$st_tmp_rundir" \
		"tmp_sockdir=$st_tmp_sockdir" >"$state.new" &&
		mv "$state.new" "$state"
}

# ---- the server's binaries -------------------------------------------
# $HUDDLE_PG_BINDIR when set (another server version, say); else
# pg_config --bindir when it has initdb and pg_ctl (Debian's pg_config,
# from libpq-dev, names the newest installed server's), else the newest
# /usr/lib/postgresql/*/bin.
find_bindir() {
	local b
	if [ -n "${HUDDLE_PG_BINDIR:-}" ]; then
		if [ -x "$HUDDLE_PG_BINDIR/initdb" ] && [ -x "$HUDDLE_PG_BINDIR/pg_ctl" ]; then
			echo "$HUDDLE_PG_BINDIR"
			return 0
		fi
		echo "$me: HUDDLE_PG_BINDIR=$HUDDLE_PG_BINDIR has no initdb and pg_ctl" >&2
		return 1
	fi
	if command -v pg_config >/dev/null 2>&1; then
		b=$(pg_config --bindir 2>/dev/null)
		if [ -n "$b" ] && [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ]; then
			echo "$b"
			return 0
		fi
	fi
	b=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	if [ -n "$b" ] && [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ]; then
		echo "$b"
		return 0
	fi
	return 1
}

# ---- who runs the server ---------------------------------------------
server_user() {
	if [ "$(id -u)" -ne 0 ]; then
		id -un
	elif id -u postgres >/dev/null 2>&1; then
		echo postgres
	elif id -u nobody >/dev/null 2>&1; then
		echo nobody
	else
		return 1
	fi
}
# as_server CMD...: CMD as the server's user ($st_user), from /, with none
# of our descriptors above 2 (the postmaster must not inherit DIR/lock).
as_server() {
	if [ "$(id -u)" -ne 0 ]; then
		(cd / && exec "$@" 9>&-)
	elif command -v runuser >/dev/null 2>&1; then
		(cd / && exec runuser -u "$st_user" -- "$@" 9>&-)
	elif command -v setpriv >/dev/null 2>&1; then
		(cd / && exec setpriv --reuid="$st_user" \
			--regid="$(id -g "$st_user")" --init-groups -- "$@" 9>&-)
	else
		echo "$me: running as root, and neither runuser nor setpriv (util-linux) is there to run PostgreSQL as $st_user" >&2
		return 1
	fi
}
# give PATH...: hand PATH over to the server's user (root only).
give() {
	[ "$(id -u)" -eq 0 ] || return 0
	chown -R "$st_user:$(id -g "$st_user")" "$@"
}

# ---- the URL ---------------------------------------------------------
urlencode() {
	local LC_ALL=C s=$1 out= c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case "$c" in
		[A-Za-z0-9/._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s' "$out"
}
make_url() {
	printf 'postgresql:///postgres?host=%s&port=%s&user=postgres\n' \
		"$(urlencode "$st_sockdir")" "$st_port"
}
write_url() {
	make_url >"$dir/url.new" && mv "$dir/url.new" "$dir/url" && cat "$dir/url"
}

# ---- is it up --------------------------------------------------------
# running: the recorded cluster's postmaster is alive (pg_ctl status).
running() {
	[ -d "$st_rundir/data" ] || return 1
	as_server "$st_bindir/pg_ctl" status -D "$st_rundir/data" >/dev/null 2>&1
}
answers() {
	"$st_bindir/pg_isready" -q -h "$st_sockdir" -p "$st_port" -U postgres \
		-d postgres >/dev/null 2>&1
}

# ---- stop ------------------------------------------------------------
# alive PID: the process runs (a zombie left unreaped counts as gone).
alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
	[ "${st%% *}" != Z ]
}
# stop_postmaster: stop the recorded cluster's postmaster, when it runs
# (pg_ctl -m fast, else -m immediate), and wait until it has exited; the
# data stays. 1 when it does not stop.
stop_postmaster() {
	local pid= i
	[ -n "$st_rundir" ] && running || return 0
	pid=$(head -n 1 "$st_rundir/data/postmaster.pid" 2>/dev/null)
	if ! as_server "$st_bindir/pg_ctl" stop -D "$st_rundir/data" -m fast \
		-w -t 60 >/dev/null 2>&1; then
		as_server "$st_bindir/pg_ctl" stop -D "$st_rundir/data" \
			-m immediate -w -t 30 >/dev/null 2>&1
		if running; then
			echo "$me: the cluster in $st_rundir/data does not stop (pg_ctl stop -m immediate failed; its log: $st_rundir/server.log)" >&2
			return 1
		fi
	fi
	# pg_ctl returns once the pid file is gone; the postmaster
	# exits a moment later
	for ((i = 0; i < 100; i++)); do
		if [ -z "$pid" ] || ! alive "$pid"; then
			break
		fi
		sleep 0.1
	done
	return 0
}
# stop_recorded: stop what DIR/state records and remove it all; 0 when
# nothing was left running.
stop_recorded() {
	local rc=0
	stop_postmaster || return 1
	if [ -n "$st_rundir" ] && [ -f "$st_rundir/server.log" ]; then
		cp "$st_rundir/server.log" "$dir/server.log" 2>/dev/null
	fi
	rm -f "$dir/url"
	[ -n "$st_rundir" ] && rm -rf "$st_rundir/data" "$st_rundir/server.log"
	[ "$st_rundir" = "$dir/run" ] && rmdir "$st_rundir" 2>/dev/null
	[ -n "$st_tmp_sockdir" ] && rm -rf "$st_tmp_sockdir"
	[ -n "$st_tmp_rundir" ] && rm -rf "$st_tmp_rundir"
	rm -f "$state"
	return $rc
}

# ---- start -----------------------------------------------------------
# free_port: a port number no TCP listener and no socket in /tmp uses.
free_port() {
	local p listening=
	if command -v ss >/dev/null 2>&1; then
		listening=$(ss -Hltn 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
	fi
	for ((p = 5433 + RANDOM % 500; p < 65000; p++)); do
		[ -e "/tmp/.s.PGSQL.$p" ] && continue
		printf '%s\n' $listening | grep -qx "$p" && continue
		echo "$p"
		return 0
	done
	return 1
}
# sqlq VALUE: VALUE as a postgresql.conf string.
sqlq() { printf "'%s'" "${1//\'/\'\'}"; }

start() {
	if read_state; then
		if running && answers; then
			write_url
			return 0
		fi
		# left over: a crashed or unanswering cluster, a killed run
		stop_recorded || return 1
	elif [ -d "$dir/run" ]; then
		# no state, yet a run directory (its state file removed by hand,
		# say): stop a postmaster that may still run there, as the owner
		# of its data, and start afresh
		if [ -f "$dir/run/data/postmaster.pid" ] &&
			st_bindir=$(find_bindir); then
			st_user=$(stat -c %U "$dir/run/data")
			as_server "$st_bindir/pg_ctl" stop -D "$dir/run/data" \
				-m immediate -w -t 30 >/dev/null 2>&1
		fi
		rm -rf "$dir/run" 2>/dev/null ||
			die "cannot remove $dir/run (made by another user? remove it as that user or root)"
	fi

	st_bindir=$(find_bindir) || die "PostgreSQL's server binaries (initdb, pg_ctl) are not found (looked at \$HUDDLE_PG_BINDIR, pg_config --bindir and /usr/lib/postgresql/*/bin): install postgresql: scripts/deps.sh test"
	for b in initdb pg_ctl postgres pg_isready; do
		[ -x "$st_bindir/$b" ] || die "$st_bindir/$b is missing: install postgresql: scripts/deps.sh test"
	done
	st_user=$(server_user) || die "running as root, and neither the postgres nor the nobody user exists to run PostgreSQL as (initdb refuses root)"
	st_tmp_rundir= st_tmp_sockdir=

	st_rundir=$dir/run
	mkdir -p "$st_rundir" || die "cannot create $st_rundir"
	chmod 700 "$st_rundir"
	give "$st_rundir" || die "cannot chown $st_rundir to $st_user"
	if ! as_server test -w "$st_rundir" -a -x "$st_rundir"; then
		# the server's user cannot reach DIR: run from /tmp
		rmdir "$st_rundir" 2>/dev/null
		st_tmp_rundir=$(mktemp -d /tmp/huddle-pg-run-XXXXXX) ||
			die "cannot create a run directory under /tmp"
		st_rundir=$st_tmp_rundir
		give "$st_rundir" || die "cannot chown $st_rundir to $st_user"
		as_server test -w "$st_rundir" ||
			die "$st_user cannot write $st_rundir (nor reach $dir)"
	fi
	st_port=$(free_port) || die "no free port number for the socket's name"
	st_sockdir=$st_rundir
	local sock="$st_sockdir/.s.PGSQL.$st_port"
	if [ ${#sock} -gt 107 ]; then
		# a Unix socket's path holds 107 bytes: the socket goes to /tmp
		st_tmp_sockdir=$(mktemp -d /tmp/huddle-pg-XXXXXX) ||
			die "cannot create a socket directory under /tmp"
		st_sockdir=$st_tmp_sockdir
		give "$st_sockdir" || die "cannot chown $st_sockdir to $st_user"
	fi
	write_state || die "cannot write $state"

	if ! out=$(as_server "$st_bindir/initdb" -D "$st_rundir/data" -A trust \
		-U postgres -E UTF8 --locale=C --no-sync 2>&1); then
		echo "$out" >&2
		stop_recorded
		die "initdb failed (as $st_user, in $st_rundir/data)"
	fi
	cat >>"$st_rundir/data/postgresql.conf" <<EOF

# tests/pg/cluster.sh: a throwaway cluster for the tests, Unix socket only
listen_addresses = ''
unix_socket_directories = $(sqlq "$st_sockdir")
port = $st_port
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
	if ! launch; then
		stop_recorded
		exit 1
	fi
	write_url
}

# launch: start the postmaster on the recorded data and wait until
# pg_isready answers; 1, saying why with the log's last lines, when it
# does not.
launch() {
	local log=$st_rundir/server.log i
	if ! as_server "$st_bindir/pg_ctl" start -D "$st_rundir/data" -l "$log" \
		-w -t 60 >/dev/null 2>&1; then
		echo "$me: the server did not start; its log ($log):" >&2
		tail -n 20 "$log" >&2 2>/dev/null
		return 1
	fi
	for ((i = 0; i < 300; i++)); do
		answers && break
		sleep 0.1
	done
	if ! answers; then
		echo "$me: the server started but pg_isready gets no answer on $st_sockdir port $st_port; its log ($log):" >&2
		tail -n 20 "$log" >&2 2>/dev/null
		return 1
	fi
	return 0
}

# ---- halt and resume: the same cluster, down and up again --------------
halt() {
	read_state || die "no cluster runs in $dir (start one: tests/pg/cluster.sh start $dir)"
	[ -d "$st_rundir/data" ] || die "the cluster in $dir has no data in $st_rundir/data (start one: tests/pg/cluster.sh start $dir)"
	rm -f "$dir/url"
	stop_postmaster || exit 1
}
resume() {
	read_state || die "no cluster is halted in $dir (start one: tests/pg/cluster.sh start $dir)"
	[ -d "$st_rundir/data" ] || die "the cluster in $dir has no data in $st_rundir/data to resume (start one: tests/pg/cluster.sh start $dir)"
	if ! running; then
		launch || die "resume failed: the cluster in $dir stays halted (stop removes it)"
	elif ! answers; then
		die "the cluster in $dir runs but pg_isready gets no answer on $st_sockdir port $st_port"
	fi
	write_url
}

# ---- one cluster.sh at a time per DIR --------------------------------
exec 9>"$dir/lock" || die "cannot write $dir/lock"
command -v flock >/dev/null 2>&1 && { flock -w 300 9 || die "another cluster.sh held $dir/lock for 5 minutes"; }

case "$cmd" in
start)
	start
	;;
stop)
	if read_state; then
		stop_recorded || exit 1
	else
		rm -f "$dir/url"
	fi
	exit 0
	;;
url)
	if read_state && running && [ -f "$dir/url" ]; then
		cat "$dir/url"
	else
		die "no cluster runs in $dir (start one: tests/pg/cluster.sh start $dir)"
	fi
	;;
halt)
	halt
	;;
resume)
	resume
	;;
restart)
	halt
	resume
	;;
status)
	if read_state && running; then
		if answers; then
			echo "running: $(make_url | tr -d '\n') (as $st_user, data in $st_rundir/data)"
		else
			echo "running but not answering on $st_sockdir port $st_port (as $st_user, data in $st_rundir/data)"
		fi
		exit 0
	fi
	if read_state && [ -d "$st_rundir/data" ]; then
		echo "not running in $dir; its data is kept (halted, or crashed): resume starts it again, stop removes it"
		exit 3
	fi
	echo "not running in $dir"
	exit 3
	;;
esac
