#!/usr/bin/env bash
# test-package.sh -- the Debian package, on this machine: `make package`
# builds huddle_<version>_<arch>.deb from this build directory; its Depends
# name the Debian package of every shared library the binary links (as
# dpkg-shlibdeps found them), libpq5 among them once the store has its
# PostgreSQL backend; `apt-get install ./huddle_*.deb` installs it;
# the installed /usr/bin/huddle is this build's, its systemd user unit
# verifies, and it serves a home under a temporary directory to a real MCP
# client (initialize, tools/list over POST /mcp) and to the REST API;
# `apt-get remove huddle` removes it again.
#
# It installs a package system-wide, so:
#  - it runs only as root with apt-get and dpkg (else skipped, exit 77);
#  - only in the plain build: the ASan+UBSan build skips it (exit 77), as
#    what is shipped is the plain binary, and two builds must not install
#    and remove one package under each other;
#  - it holds a lock (flock on /run/lock/huddle-package-test.lock) while
#    it runs, so two runs never meet (another checkout's, say);
#  - a machine that has huddle installed already is left alone (skipped);
#  - whatever happens once it installed the package, the exit trap
#    removes it.
. "$(dirname "$0")/lib.sh"

build=${HUDDLE_BUILD:?set HUDDLE_BUILD to the build directory}
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1 ||
	! command -v dpkg >/dev/null 2>&1; then
	echo "$T_NAME: skipped: needs root, apt-get and dpkg (it installs the .deb)"
	exit 77
fi
if grep -q '^HUDDLE_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
	echo "$T_NAME: skipped: the ASan+UBSan build; the package is the plain build's (its run of this test installs it)"
	exit 77
fi
for tool in flock make cpack dpkg-shlibdeps readelf curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$T_NAME: skipped: needs $tool (scripts/deps.sh test installs dpkg-dev)"
		exit 77
	fi
done

lock=/run/lock/huddle-package-test.lock
[ -d /run/lock ] || lock=/tmp/huddle-package-test.lock
exec 9>"$lock"
if ! flock -w 900 9; then
	echo "FAIL [$T_NAME]: another run held $lock for 15 minutes" >&2
	exit 1
fi
installed() { dpkg-query -W -f='${Status}' huddle 2>/dev/null | grep -q ' installed$'; }
if installed; then
	echo "$T_NAME: skipped: huddle is installed on this machine already; this test does not touch it"
	exit 77
fi

we_installed=
serve_pid=
cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
	if [ -n "$we_installed" ] && installed; then
		DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq huddle >/dev/null 2>&1 ||
			echo "FAIL [$T_NAME]: could not remove the huddle package: apt-get remove huddle" >&2
	fi
	rm -rf "$T_TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- make package ---------------------------------------------------
version=$(sed -n 's/^project(huddle VERSION \([0-9.]*\) .*/\1/p' "$HUDDLE_SRC/CMakeLists.txt")
deb=$build/huddle_${version}_$(dpkg --print-architecture).deb
rm -f "$deb"
out=$(make -C "$HUDDLE_SRC" --no-print-directory package BUILD="$build" 2>&1)
RC=$? OUT=$out ERR=
expect_rc 0 "make package"
expect_contains "$out" "$deb" "make package names the .deb"
if [ ! -f "$deb" ]; then
	fail "no $deb: $out"
	finish
	exit 1
fi
info=$(dpkg-deb -f "$deb" Package Version Architecture)
expect_eq "$info" "Package: huddle
Version: $version
Architecture: $(dpkg --print-architecture)" "the package's name, version and architecture"

# Depends: the package of every library the binary links itself (its
# NEEDED entries, found where ldd finds them, owned as dpkg -S says),
# found by dpkg-shlibdeps, nothing written by hand but tzdata
depends=$(dpkg-deb -f "$deb" Depends)
needed=$(LC_ALL=C readelf -d "$HUDDLE" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
[ -n "$needed" ] && pass || fail "readelf found no NEEDED library in $HUDDLE"
for soname in $needed; do
	lib=$(ldd "$HUDDLE" | awk -v s="$soname" '$1 == s && $3 ~ /^\// {print $3}')
	if [ -z "$lib" ]; then
		fail "ldd does not find $soname"
		continue
	fi
	real=$(readlink -f "$lib")
	pkg=$(dpkg -S "$real" 2>/dev/null || dpkg -S "$lib" 2>/dev/null)
	pkg=${pkg%%:*}
	if [ -z "$pkg" ]; then
		fail "no Debian package owns $lib"
		continue
	fi
	case ", $depends" in
	*", $pkg ("* | *", $pkg,"* | *", $pkg") pass ;;
	*) fail "Depends [$depends] lacks $pkg (for $lib)" ;;
	esac
done
# libpq5 among them once the store has its PostgreSQL backend (a file of
# src/store/ includes libpq-fe.h): the binary links libpq.so.5 and the
# loop above found its package; the linker's --as-needed drops libpq while
# nothing calls it
if grep -qsE '^#[[:space:]]*include[[:space:]]*[<"]libpq-fe\.h[>"]' \
	"$HUDDLE_SRC"/src/store/*.[ch]; then
	case " $(echo $needed) " in
	*" libpq.so.5 "*) pass ;;
	*) fail "the store includes libpq-fe.h, yet the binary does not link libpq.so.5 (NEEDED: $(echo $needed))" ;;
	esac
	case ", $depends" in
	*", libpq5 ("* | *", libpq5,"* | *", libpq5") pass ;;
	*) fail "Depends [$depends] lacks libpq5 (the store's PostgreSQL backend)" ;;
	esac
fi
# and tzdata, which no library pulls in: routines read their zones
case ", $depends," in
*", tzdata,"*) pass ;;
*) fail "Depends [$depends] lacks tzdata (routines' time zones)" ;;
esac
dpkg -I "$deb" >"$T_TMP/info" 2>&1
expect_contains "$(cat "$T_TMP/info")" " Depends: $depends" "dpkg -I shows the Depends"

# ---- apt-get install ./huddle_*.deb ---------------------------------
we_installed=1
out=$(cd "$build" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends "./$(basename "$deb")" 2>&1)
RC=$? OUT=$out
expect_rc 0 "apt-get install the .deb"
installed && pass || fail "huddle is not installed after apt-get install: $out"
expect_eq "$(dpkg-query -W -f='${Version}' huddle)" "$version" "installed version"
expect_eq "$(/usr/bin/huddle --version)" "$("$HUDDLE" --version)" \
	"/usr/bin/huddle is this build's (version and commit)"
files=$(dpkg -L huddle | sort)
for f in /usr/bin/huddle /usr/lib/systemd/user/huddle.service \
	/usr/share/doc/huddle/examples/dev-team.json; do
	expect_contains "$files" "$f" "the package holds $f"
done
unit=/usr/lib/systemd/user/huddle.service
expect_eq "$(grep -x 'ExecStart=/usr/bin/huddle serve' "$unit")" \
	"ExecStart=/usr/bin/huddle serve" "the unit runs the installed binary"
if command -v systemd-analyze >/dev/null 2>&1; then
	out=$(systemd-analyze verify --man=no "$unit" 2>&1)
	RC=$? OUT=$out
	expect_rc 0 "systemd-analyze verify the unit"
	expect_eq "$out" "" "the unit verifies without a complaint"
else
	echo "$T_NAME: systemd-analyze missing: the unit is not verified"
fi

# ---- the installed binary serves; a real client attaches -------------
home=$T_TMP/installed-home
HUDDLE_HOME=$home /usr/bin/huddle up /usr/share/doc/huddle/examples/dev-team.json \
	>"$T_TMP/up.out" 2>&1
RC=$? OUT=$(cat "$T_TMP/up.out")
expect_rc 0 "installed huddle applies the installed example team"
/usr/bin/huddle --home "$home" serve --port 0 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
serve_pid=$!
wait_for 10 grep -q "huddle is running at" "$T_TMP/serve.out" ||
	fail "the installed huddle did not start: $(cat "$T_TMP/serve.err")"
url=$(sed -n 's/^huddle is running at //p' "$T_TMP/serve.out")
mcp() {
	curl -s -X POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -d "$1" "$url/mcp"
}
init=$(mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test-package","version":"1"}}}')
expect_eq "$(json_get "$init" 'j["result"]["serverInfo"]["name"] + " " + j["result"]["serverInfo"]["version"]')" \
	"huddle $version" "MCP initialize answered by the installed server"
mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
tools=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
expect_eq "$(json_get "$tools" '"task_list" in [t["name"] for t in j["result"]["tools"]]')" \
	True "tools/list names task_list"
teams=$(curl -s "$url/api/teams")
expect_eq "$(json_get "$teams" '[t["id"] for t in (j["teams"] if isinstance(j, dict) else j)]')" \
	"['dev']" "GET /api/teams from the installed server"
kill "$serve_pid"
wait "$serve_pid"
RC=$? OUT= ERR=$(cat "$T_TMP/serve.err")
serve_pid=
expect_rc 0 "the installed server stops cleanly"

# ---- apt-get remove huddle ------------------------------------------
out=$(DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq huddle 2>&1)
RC=$? OUT=$out
expect_rc 0 "apt-get remove huddle"
installed && fail "huddle still installed after apt-get remove" || pass
expect_eq "$([ -e /usr/bin/huddle ] || [ -e "$unit" ] || echo gone)" gone \
	"the binary and the unit are gone"

finish
