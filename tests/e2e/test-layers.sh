#!/usr/bin/env bash
# test-layers.sh -- the build refuses an upward dependency (cmake/layers.txt).
# A probe source is compiled with the very command the build uses for a
# file of a given layer (from compile_commands.json: its compiler, flags
# and build/layers/<layer>/ include path), -fsyntax-only: an include of a
# higher layer's public or private header fails with "No such file", and
# so does the store's private header from a surface; the same probe with
# a header of its own layer or a lower one compiles, so the refusals are
# the layers' doing. A call upward without its header is an implicit
# declaration, an error under -Werror; with a prototype written by hand,
# the check the build runs on each layer library refuses it. Inside the
# domain, the order check run on its objects refuses a call from src/board
# up to src/lifecycle and lets one down to src/presence through. Then
# scripts/checksrc.sh, run on a copy of the tree, passes it as it is and
# names file, line, header and both layers once an upward include is added.
. "$(dirname "$0")/lib.sh"

BUILD=${HUDDLE_BUILD:-$(dirname "$HUDDLE")}
DB="$BUILD/compile_commands.json"
if [ ! -f "$DB" ]; then
	fail "no $DB (CMAKE_EXPORT_COMPILE_COMMANDS is on in CMakeLists.txt)"
	finish
	exit
fi

# probe FILE TEXT [OBJ]: compile TEXT as if it were FILE (a source of the
# tree, e.g. src/board/board.c: its layer's command), into $OUT/$ERR/$RC;
# with OBJ, into that object rather than only checking it.
probe() {
	local entry dir cmd
	entry=$(jq -c --arg f "$HUDDLE_SRC/$1" '.[] | select(.file == $f)' "$DB")
	dir=$(jq -r '.directory' <<<"$entry")
	cmd=$(jq -r '.command' <<<"$entry")
	if [ -z "$cmd" ]; then
		RC=99 OUT="" ERR="no compile command for $1 in $DB"
		return
	fi
	printf '%s\n' "$2" >"$T_TMP/probe.c"
	# "cc FLAGS -o OBJ -c SRC": keep cc and FLAGS
	if [ $# -ge 3 ]; then
		cmd="${cmd% -o *} -c -o $3 $T_TMP/probe.c"
	else
		cmd="${cmd% -o *} -fsyntax-only $T_TMP/probe.c"
	fi
	OUT=""
	ERR=$(cd "$dir" && eval "$cmd" 2>&1)
	RC=$?
}

# refused FILE HEADER: including HEADER from FILE's layer does not compile.
refused() {
	probe "$1" "#include <$2>"
	if [ "$RC" -ne 0 ] && [ "$RC" -ne 99 ]; then pass; else
		fail "<$2> from $1: exit $RC, wanted a failed compile ($ERR)"
	fi
	expect_contains "$ERR" "$2" "<$2> from $1: the compiler names the header"
	case "$ERR" in
	*"No such file"* | *"file not found"*) pass ;;
	*) fail "<$2> from $1: not a missing file: $ERR" ;;
	esac
}

# allowed FILE HEADER: including HEADER from FILE's layer compiles.
allowed() {
	probe "$1" "#include <$2>
int hd_probe(void);
int
hd_probe(void)
{
	return 0;
}"
	expect_rc 0 "<$2> from $1 compiles"
}

# domain: its own and lower headers, public and private; not the engines'
allowed src/board/board.c huddle/board.h
allowed src/board/board.c huddle/store.h
allowed src/board/board.c huddle/util.h
allowed src/board/board.c store/store.h
refused src/board/board.c huddle/exchange.h
refused src/board/board.c huddle/runtime.h
refused src/board/board.c engine/owner.h
refused src/board/board.c mcp/mcp.h
# a domain module's private header is its layer's alone
allowed src/room/room.c board/board_int.h
refused src/engine/turn.c board/board_int.h
# store and util see nothing above them
allowed src/store/store.c huddle/util.h
refused src/store/store.c huddle/board.h
refused src/util/util.c huddle/store.h
# only the domain sees the store's SQL: engines and surfaces call domain
# functions (engines group them with <huddle/store.h>'s transactions)
refused src/engine/turn.c store/store.h
allowed src/engine/turn.c huddle/store.h
allowed src/engine/turn.c huddle/exchange.h
refused src/engine/turn.c http/http.h
allowed src/http/route.c huddle/exchange.h
allowed src/http/route.c mcp/mcp.h
refused src/http/route.c store/store.h
allowed src/cli/main.c http/http.h
refused src/cli/main.c store/store.h

# a call upward without the header: an implicit declaration, an error
probe src/board/board.c "#include <huddle/err.h>
int hd_probe(void);
int
hd_probe(void)
{
	return hd_exchange_run(0, 0, 0, 0);
}"
if [ "$RC" -ne 0 ] && [ "$RC" -ne 99 ]; then pass; else
	fail "an upward call compiled: exit $RC ($ERR)"
fi
expect_contains "$ERR" "implicit declaration of function" \
	"an upward call is an implicit declaration"

# ... and through a prototype written by hand it compiles, but the build's
# check of each layer library (cmake/layer-link-check.cmake) refuses it;
# the same probe calling a domain function passes that check
NM=${HUDDLE_NM:-nm}
below="$BUILD/libhd_util.a|$BUILD/libhd_store.a|$BUILD/libhd_domain.a"
linkcheck() {
	OUT=""
	ERR=$(cmake -DNM="$NM" -DLAYER=domain -DLIB="$1" -DBELOW="$below" \
		-P "$HUDDLE_SRC/cmake/layer-link-check.cmake" 2>&1)
	RC=$?
}
probe src/board/board.c "#include <huddle/board.h>
int hd_probe(void);
int
hd_probe(void)
{
	return hd_task_status_ok(\"done\");
}" "$T_TMP/down.o"
expect_rc 0 "a domain probe calling the domain compiles"
linkcheck "$T_TMP/down.o"
expect_rc 0 "the layer check passes a call downward"
probe src/board/board.c "#include <huddle/err.h>
int hd_exchange_run(void);
int hd_probe(void);
int
hd_probe(void)
{
	return hd_exchange_run();
}" "$T_TMP/up.o"
expect_rc 0 "a hand-written prototype compiles"
linkcheck "$T_TMP/up.o"
if [ "$RC" -ne 0 ]; then pass; else fail "the layer check passed an upward call"; fi
expect_contains "$ERR" "up.o calls hd_exchange_run" \
	"the layer check names the object and the function"

# inside the domain, the order of cmake/layers.txt (`domain-order`), which
# names no exception: the check the build runs on the domain's objects
# (cmake/domain-order-check.cmake) passes them as they are and a probe of
# src/board calling down into src/presence, and refuses a probe of
# src/board calling src/lifecycle (above the board) -- the call the
# board's reflection once made to settle a member's status
order=$(awk '$1 == "domain-order" { $1 = ""; print }' \
	"$HUDDLE_SRC/cmake/layers.txt" | xargs | tr ' ' '|')
objs=$(jq -r --arg src "$HUDDLE_SRC/src/" --arg dirs "^($order)/" '.[]
	| select((.file | startswith($src)) and
		(.file | ltrimstr($src) | test($dirs)))
	| .directory + "/" + (.command | capture(" -o (?<o>[^ ]+) ").o)' "$DB" |
	paste -sd'|')
expect_contains "$objs" "/src/board/reflect.c.o" "the domain's objects are found"
expect_contains "$objs" "/src/presence/activity.c.o" \
	"src/presence is in the domain"
ordercheck() {
	OUT=""
	ERR=$(cmake -DNM="$NM" "-DORDER=$order" "-DOBJS=$1" \
		-P "$HUDDLE_SRC/cmake/domain-order-check.cmake" 2>&1)
	RC=$?
}
ordercheck "$objs"
expect_rc 0 "the domain's objects keep its order ($ERR)"
case "$(cat "$HUDDLE_SRC/cmake/layers.txt")" in
*domain-upcall*) fail "cmake/layers.txt names an exception to the order" ;;
*) pass ;;
esac
mkdir -p "$T_TMP/src/board"
probe src/board/reflect.c "#include <huddle/activity.h>
int hd_probe(void);
int
hd_probe(void)
{
	return hd_activity_turn_begin(0, 0, \"dev\", \"coder\", 0);
}" "$T_TMP/src/board/down.c.o"
expect_rc 0 "a board probe calling src/presence compiles"
ordercheck "$objs|$T_TMP/src/board/down.c.o"
expect_rc 0 "the order check passes the board calling src/presence ($ERR)"
probe src/board/reflect.c "#include <huddle/activity.h>
int hd_probe(void);
int
hd_probe(void)
{
	return hd_activity_turn_end(0, \"dev\", \"coder\", 0, 0);
}" "$T_TMP/src/board/up.c.o"
expect_rc 0 "a board probe calling src/lifecycle compiles"
ordercheck "$objs|$T_TMP/src/board/up.c.o"
if [ "$RC" -ne 0 ]; then pass; else
	fail "the order check passed the board calling src/lifecycle"
fi
expect_contains "$ERR" "the domain calls against its order" \
	"the order check says what is wrong"
expect_contains "$ERR" \
	"src/board/up.c calls hd_activity_turn_end (src/lifecycle/)" \
	"the order check names the object, the function and its directory"

# checksrc on a copy of the tree: clean as it is, then each kind of
# upward include named with file, line, header and both layers
TREE="$T_TMP/tree"
mkdir -p "$TREE/scripts" "$TREE/cmake"
cp -R "$HUDDLE_SRC/src" "$HUDDLE_SRC/include" "$TREE/"
cp "$HUDDLE_SRC/scripts/checksrc.sh" "$TREE/scripts/"
cp "$HUDDLE_SRC/cmake/layers.txt" "$TREE/cmake/"
OUT=$("$TREE/scripts/checksrc.sh" 2>"$T_TMP/stderr")
RC=$?
ERR=$(cat "$T_TMP/stderr")
expect_rc 0 "checksrc passes the tree as it is"

printf '%s\n' '/* probe */' '#include <huddle/board.h>' \
	'#include <huddle/exchange.h>' '#include "../engine/owner.h"' \
	'#include <engine/owner.h>' >"$TREE/src/board/probe.c"
printf '%s\n' '#include <store/store.h>' >"$TREE/src/http/probe.c"
OUT=$("$TREE/scripts/checksrc.sh" 2>"$T_TMP/stderr")
RC=$?
ERR=$(cat "$T_TMP/stderr")
expect_rc 1 "checksrc refuses upward includes"
expect_contains "$ERR" \
	"src/board/probe.c:3: <huddle/exchange.h> is in the engine layer, above this file in the domain layer" \
	"checksrc: an engine header from the domain"
expect_contains "$ERR" 'src/board/probe.c:4: "../engine/owner.h": only a header of the same directory' \
	"checksrc: a relative path out of the directory"
expect_contains "$ERR" \
	"src/board/probe.c:5: <engine/owner.h> is a private header of the engine layer, above this file in the domain layer" \
	"checksrc: an engine private header from the domain"
expect_contains "$ERR" \
	"src/http/probe.c:1: <store/store.h> is a private header of the store layer (seen up to domain), not by this file in the surface layer" \
	"checksrc: the store's SQL from a surface"
case "$ERR" in
*"probe.c:2:"*) fail "checksrc flagged the allowed <huddle/board.h>: $ERR" ;;
*) pass ;;
esac

# a directory or header missing from the table is named
rm "$TREE/src/board/probe.c" "$TREE/src/http/probe.c"
mkdir "$TREE/src/ledger"
: >"$TREE/include/huddle/ledger.h"
OUT=$("$TREE/scripts/checksrc.sh" 2>"$T_TMP/stderr")
RC=$?
ERR=$(cat "$T_TMP/stderr")
expect_rc 1 "checksrc refuses what the table leaves out"
expect_contains "$ERR" "src/ledger is in no layer" "checksrc: a new directory"
expect_contains "$ERR" "include/huddle/ledger.h is in no layer" \
	"checksrc: a new public header"

finish
