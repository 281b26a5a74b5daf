#!/usr/bin/env bash
# test-vendor.sh -- the dashboard's vendored libraries (web/vendor) are the
# pinned npm packages, byte for byte: each file equals its source in
# tests/e2e/node_modules, the installed version is the exact pin of
# tests/e2e/package.json, and web/vendor/README.md names that version.
# Skipped (77) when node_modules is missing (make test installs it).
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
vendor=$HUDDLE_SRC/web/vendor

if [ ! -d "$here/node_modules/marked" ] || [ ! -d "$here/node_modules/dompurify" ]; then
	echo "vendor: skipped: needs tests/e2e/node_modules with marked and dompurify" \
		"(make test installs them: npm ci in tests/e2e)"
	exit 77
fi

# check PACKAGE FILE-IN-PACKAGE VENDORED-NAME
check() {
	local pkg=$1 src=$here/node_modules/$1/$2 dst=$vendor/$3 pinned installed
	pinned=$(json_get "$(cat "$here/package.json")" "j['dependencies'].get('$pkg', 'none')")
	installed=$(json_get "$(cat "$here/node_modules/$pkg/package.json")" "j['version']")
	expect_eq "$installed" "$pinned" "$pkg: node_modules holds the pinned version"
	case "$pinned" in
	[0-9]*.[0-9]*.[0-9]*) pass ;;
	*) fail "$pkg: pinned as [$pinned], wanted an exact version" ;;
	esac
	if cmp -s "$src" "$dst"; then pass; else
		fail "$pkg: web/vendor/$3 differs from node_modules/$pkg/$2 (copy it again)"
	fi
	OUT=$(grep -F "$3" "$vendor/README.md")
	expect_contains "$OUT" "$pinned" "$pkg: web/vendor/README.md names version $pinned"
}
check marked lib/marked.umd.js marked.umd.js
check dompurify dist/purify.min.js purify.min.js
if cmp -s "$here/node_modules/marked/LICENSE" "$vendor/LICENSE-marked.txt" &&
	cmp -s "$here/node_modules/dompurify/LICENSE" "$vendor/LICENSE-dompurify.txt"; then
	pass
else
	fail "the licenses in web/vendor differ from the packages'"
fi
finish
