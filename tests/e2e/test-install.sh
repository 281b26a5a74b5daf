#!/usr/bin/env bash
# test-install.sh -- `make install DESTDIR=... PREFIX=/usr` from this
# test's own build directory installs exactly the expected files (the
# binary, the example teams, the systemd user unit naming the installed
# binary, and the man page and completions when the source has them),
# the installed binary runs, and `make uninstall` removes every one of
# them again. Runs in both builds: each installs into a temporary DESTDIR
# of its own, so they never meet.
. "$(dirname "$0")/lib.sh"

if ! command -v make >/dev/null 2>&1; then
	echo "$T_NAME: skipped: needs make"
	exit 77
fi
build=${HUDDLE_BUILD:?set HUDDLE_BUILD to the build directory}
dest=$T_TMP/dest

# make install: built as configured (nothing to rebuild), installed
out=$(make -C "$HUDDLE_SRC" --no-print-directory install BUILD="$build" \
	DESTDIR="$dest" PREFIX=/usr 2>&1)
RC=$?
OUT=$out ERR=
expect_rc 0 "make install DESTDIR PREFIX=/usr"
expect_contains "$out" "installed $dest/usr/bin/huddle" "make install says where"

want="usr/bin/huddle
usr/lib/systemd/user/huddle.service"
for f in "$HUDDLE_SRC"/examples/*.json; do
	want="$want
usr/share/doc/huddle/examples/$(basename "$f")"
done
[ -f "$HUDDLE_SRC/man/huddle.1" ] && want="$want
usr/share/man/man1/huddle.1"
[ -f "$HUDDLE_SRC/completions/huddle.bash" ] && want="$want
usr/share/bash-completion/completions/huddle"
[ -f "$HUDDLE_SRC/completions/_huddle" ] && want="$want
usr/share/zsh/vendor-completions/_huddle"
got=$(cd "$dest" && find . -type f -o -type l | sed 's|^\./||' | sort)
expect_eq "$got" "$(echo "$want" | sort)" "exactly the expected files"

# the installed binary is this build's
"$dest/usr/bin/huddle" --version >"$T_TMP/v.out" 2>&1
expect_eq "$(cat "$T_TMP/v.out")" "$("$HUDDLE" --version)" "installed binary runs"
expect_eq "$(cmp -s "$HUDDLE" "$dest/usr/bin/huddle" && echo same)" same \
	"the binary installed is the one built"

# the unit: a user service running the installed binary, home in the
# state directory, restarted on failure
unit=$dest/usr/lib/systemd/user/huddle.service
for line in "ExecStart=/usr/bin/huddle serve" "Environment=HUDDLE_HOME=%S/huddle" \
	"StateDirectory=huddle" "Restart=on-failure" "WantedBy=default.target"; do
	expect_eq "$(grep -cx "$line" "$unit")" 1 "unit has $line"
done

# make uninstall removes them all, and huddle's own directories: it kept
# the list with the DESTDIR, so none is given again
out=$(make -C "$HUDDLE_SRC" --no-print-directory uninstall BUILD="$build" 2>&1)
RC=$?
OUT=$out
expect_rc 0 "make uninstall"
expect_eq "$(cd "$dest" && find . -type f -o -type l)" "" "no file left"
expect_eq "$([ -d "$dest/usr/share/doc/huddle" ] && echo left)" "" \
	"share/doc/huddle removed"

# a second uninstall has nothing to remove, and says so
out=$(make -C "$HUDDLE_SRC" --no-print-directory uninstall BUILD="$build" 2>&1)
RC=$?
OUT=$out
expect_rc 2 "second make uninstall fails"
expect_contains "$out" "nothing to uninstall" "and says why"

finish
