#!/usr/bin/env bash
# run-with-pg.sh -- run a test against the throwaway PostgreSQL cluster:
#
#   tests/pg/run-with-pg.sh DIR EXE [ARG...]
#
# reads the URL tests/pg/cluster.sh start DIR wrote to DIR/url, exports it
# as HUDDLE_TEST_PG (the unit tests' fixture, tests/unit/testutil.c, then
# makes a fresh database per test there and points HUDDLE_STORE at it) and
# execs EXE. Caller: the unit-pg set of tests/CMakeLists.txt, whose ctest
# fixture `pg` starts the cluster first (pg/start); ctest learns the URL
# only once that ran, hence this wrapper rather than ENVIRONMENT.
# Fails, naming the file, when no cluster was started in DIR.
set -u
if [ $# -lt 2 ]; then
	echo "usage: tests/pg/run-with-pg.sh DIR EXE [ARG...]" >&2
	exit 2
fi
dir=$1
shift
if [ ! -s "$dir/url" ]; then
	echo "run-with-pg.sh: no PostgreSQL cluster runs in $dir ($dir/url is missing): start one with tests/pg/cluster.sh start $dir (ctest's fixture pg/start does)" >&2
	exit 1
fi
url=$(head -n 1 "$dir/url")
case "$url" in
postgresql://* | postgres://*) ;;
*)
	echo "run-with-pg.sh: $dir/url holds no postgresql:// URL: [$url]" >&2
	exit 1
	;;
esac
export HUDDLE_TEST_PG=$url
exec "$@"
