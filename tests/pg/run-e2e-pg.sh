#!/usr/bin/env bash
# run-e2e-pg.sh -- run an end-to-end test with PostgreSQL as its store:
#
#   tests/pg/run-e2e-pg.sh DIR SCRIPT [ARG...]
#
# reads the maintenance-db URL tests/pg/cluster.sh start DIR wrote to
# DIR/url, creates a database of the test's own there (hd_e2e_<script>_
# <pid>_<random>: unique among tests running at once on one cluster),
# exports HUDDLE_STORE as that database's URL, so every huddle process the
# script starts (each of its homes) stores there, runs `bash SCRIPT
# ARG...` and drops the database (WITH (FORCE): a server the script left
# running loses its connections) whatever the script's outcome, on
# SIGINT/SIGTERM too. Exits with the script's code (77, a skip, included).
# A database that cannot be created fails the run before the script runs;
# one that cannot be dropped is said on stderr and fails a run that
# passed, naming it (a leak on a cluster the fixture's pg/stop removes
# anyway, yet a sign of a server still running).
#
# Caller: the e2e-pg set of tests/CMakeLists.txt, whose ctest fixture `pg`
# starts the cluster first (pg/start). The URL is libpq's:
#   postgresql:///postgres?host=SOCKDIR&port=PORT&user=postgres
# whose database, the path between the authority and the `?`, is replaced
# by the test's own. psql (Debian's postgresql-client) runs the CREATE and
# the DROP.
set -u
me=run-e2e-pg.sh
if [ $# -lt 2 ]; then
	echo "usage: tests/pg/run-e2e-pg.sh DIR SCRIPT [ARG...]" >&2
	exit 2
fi
dir=$1
script=$2
shift 2
if [ ! -s "$dir/url" ]; then
	echo "$me: no PostgreSQL cluster runs in $dir ($dir/url is missing): start one with tests/pg/cluster.sh start $dir (ctest's fixture pg/start does)" >&2
	exit 1
fi
if [ ! -f "$script" ]; then
	echo "$me: no such test script: $script" >&2
	exit 1
fi
command -v psql >/dev/null 2>&1 ||
	{
		echo "$me: psql is not found: install postgresql-client (scripts/deps.sh test)" >&2
		exit 1
	}
admin=$(head -n 1 "$dir/url")
case "$admin" in
postgresql://*/* | postgres://*/*) ;;
*)
	echo "$me: $dir/url holds no postgresql:// URL with a database: [$admin]" >&2
	exit 1
	;;
esac

# the database's name: lower-case letters, digits and _ only, so it needs
# no quoting; PostgreSQL's names hold 63 bytes
base=$(basename "$script" .sh)
base=$(printf '%s' "${base#test-}" | tr -c 'a-z0-9' '_' | cut -c 1-30)
db=hd_e2e_${base}_$$_$RANDOM
# the URL with its database replaced: scheme://authority/DB[?query]
scheme=${admin%%://*}
rest=${admin#*://}
authority=${rest%%/*}
path=${rest#*/}
query=
case "$path" in
*\?*) query="?${path#*\?}" ;;
esac
url=$scheme://$authority/$db$query

psql_admin() {
	psql "$admin" -X -q -At -v ON_ERROR_STOP=1 -c "$1" 2>&1
}
if ! out=$(psql_admin "CREATE DATABASE $db"); then
	echo "$me: cannot create the test's database $db on $admin: $out" >&2
	exit 1
fi

child=
rc=1
dropped=0
drop_db() {
	[ "$dropped" -eq 1 ] && return 0
	dropped=1
	if ! out=$(psql_admin "DROP DATABASE IF EXISTS $db WITH (FORCE)"); then
		echo "$me: cannot drop the test's database $db: $out" >&2
		[ "$rc" -eq 0 ] && rc=1
	fi
}
on_signal() {
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child"
	rc=$1
	drop_db
	exit "$rc"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

export HUDDLE_STORE=$url
bash "$script" "$@" &
child=$!
wait "$child"
rc=$?
child=
drop_db
exit "$rc"
