#!/usr/bin/env bash
# test-man.sh -- man/huddle.1 renders cleanly and agrees with --help, and
# the shell completions (completions/huddle.bash, completions/_huddle)
# complete what the binary and the store say.
#
#  (1) `man --warnings` (else groff -ww) renders the page without a word
#      on stderr;
#  (2) tests/e2e/check-man.py walks `huddle --help` recursively and finds
#      every command and option in the page and nothing more; then it must
#      fail, naming what changed, on copies of the page with one option
#      deleted, one option added that --help does not know, and one
#      command's section deleted, an environment variable and an exit
#      code dropped: the check bites;
#  (3) bash: the completion function called as bash calls it (COMP_WORDS,
#      COMP_CWORD, COMP_LINE set in `bash -c`, COMPREPLY read back) for a
#      command, a subcommand, an option, a team id, the agent ids of the
#      team typed after --as, --home, --store and --team on the line, a
#      file; then
#      a real interactive bash on a pseudo-terminal presses TAB
#      (pty-complete.py);
#  (4) zsh, when installed (scripts/deps.sh test installs it): a real
#      interactive zsh with compinit presses TAB on the same lines.
. "$(dirname "$0")/lib.sh"

man_page=$HUDDLE_SRC/man/huddle.1
check=$HUDDLE_SRC/tests/e2e/check-man.py
ptyc=$HUDDLE_SRC/tests/e2e/pty-complete.py

# (1) renders without warnings
if command -v man >/dev/null 2>&1; then
	render_err=$(LC_ALL=C.UTF-8 man --warnings -l "$man_page" 2>&1 >/dev/null)
	RC=$?
else
	render_err=$(groff -man -ww -z "$man_page" 2>&1)
	RC=$?
fi
OUT=; ERR=$render_err
expect_rc 0 "the man page renders"
expect_eq "$render_err" "" "the man page renders without warnings"

# (2) the check passes on the page, and bites on broken copies
OUT=$(python3 "$check" "$HUDDLE" "$man_page" "$HUDDLE_SRC" 2>"$T_TMP/check.err")
RC=$?
ERR=$(cat "$T_TMP/check.err")
expect_rc 0 "check-man on man/huddle.1"
expect_contains "$OUT" "matches --help" "check-man says what it checked"

# mutate < PYTHON: $T_TMP/broken.1, the page as the Python script on stdin
# writes it (sys.argv[1]: the page, sys.argv[2]: the copy)
mutate() {
	python3 - "$man_page" "$T_TMP/broken.1" "$@"
}
check_broken() { # DESCRIPTION: run the check on broken.1, wanting exit 1
	OUT=$(python3 "$check" "$HUDDLE" "$T_TMP/broken.1" "$HUDDLE_SRC" 2>"$T_TMP/check.err")
	RC=$?
	ERR=$(cat "$T_TMP/check.err")
	expect_rc 1 "$1"
}

# one option deleted: task list's --ready, tag and description
mutate <<'EOF'
import sys
s = open(sys.argv[1]).read()
tag = ".TP\n\\fB\\-\\-ready\\fR\n"
i = s.index(tag)
j = s.index("\n", i + len(tag)) + 1
open(sys.argv[2], "w").write(s[:i] + s[j:])
EOF
check_broken "check-man on the page without task list --ready"
expect_contains "$ERR" "huddle task list: option --ready (huddle task list --help) is missing from $T_TMP/broken.1; add under .SS \"huddle task list TEAM\"" \
	"the failure names the deleted option and where it goes"
expect_contains "$ERR" '\fB\-\-ready\fR' "the failure gives the tag to paste"
expect_contains "$ERR" "1 difference(s)" "only the deleted option differs"

# an option --help does not know, added to serve
mutate <<'EOF'
import sys
s = open(sys.argv[1]).read()
i = s.index('.SS "huddle serve"')
j = s.index(".TP", i)
s = s[:j] + ".TP\n\\fB\\-\\-made\\-up\\fR \\fIFILE\\fR\nno such option\n" + s[j:]
open(sys.argv[2], "w").write(s)
EOF
check_broken "check-man on the page with a made-up serve option"
expect_contains "$ERR" "option --made-up is documented for huddle serve, but huddle serve --help does not know it" \
	"the failure names the option --help lacks"

# a command's section deleted, and a metavariable changed
mutate <<'EOF'
import sys
s = open(sys.argv[1]).read()
i = s.index('.SS "huddle chat post TEAM TEXT"')
j = s.index(".SS", i + 3)
s = s[:i] + s[j:]
s = s.replace("\\fB\\-n\\fR, \\fB\\-\\-limit\\fR \\fIN\\fR", "\\fB\\-\\-limit\\fR \\fICOUNT\\fR", 1)
open(sys.argv[2], "w").write(s)
EOF
check_broken "check-man on the page without chat post"
expect_contains "$ERR" "command 'huddle chat post' (in \`huddle chat --help\`) is missing" \
	"the failure names the missing command"
expect_contains "$ERR" ".SS \"huddle chat post TEAM TEXT\"" \
	"the failure gives the section line to paste"
expect_contains "$ERR" "--help says '-n, --limit N', the man page '--limit COUNT'" \
	"the failure names a changed short name and metavariable"

# an environment variable and an exit code the sources have, dropped
mutate <<'EOF'
import sys
s = open(sys.argv[1]).read()
s = s.replace(".TP\n.B HUDDLE_EXE\n", ".TP\n.B HUDDLE_EXECUTABLE\n", 1)
s = s.replace(".TP\n.B 130\n", ".TP\n.B 131\n", 1)
open(sys.argv[2], "w").write(s)
EOF
check_broken "check-man on the page without HUDDLE_EXE and exit code 130"
expect_contains "$ERR" "environment variable HUDDLE_EXE (read or set in src/runtime/runtime.c) is missing" \
	"the failure names the environment variable and where it is read"
expect_contains "$ERR" "exit code 130 (" "the failure names the exit code"

# ---- completions --------------------------------------------------------
run up "$HUDDLE_SRC/examples/dev-team.json"
expect_rc 0 "up the example team"
run team create ops
expect_rc 0 "team create ops"
run agent add ops solo
expect_rc 0 "agent add ops solo"
other=$T_TMP/other-home
"$HUDDLE" --home "$other" team create elsewhere >/dev/null
mkdir -p "$T_TMP/files" && : >"$T_TMP/files/backup-1.db"

# the helper itself: one candidate a line, nothing on stderr (an ASan
# report would land there), exit 0 whatever was typed
run complete -- task list ""
expect_rc 0 "complete: team ids"
expect_eq "$OUT" "$(printf 'dev\nops')" "complete: team ids, one a line"
expect_eq "$ERR" "" "complete: nothing on stderr"
run complete -- exchange cancel dev --as ""
expect_eq "$OUT" "$(printf 'manager\ncoder\nreviewer\ntester')" \
	"complete: the team of the alternative typed (exchange cancel TEAM)"
expect_eq "$ERR" "" "complete: nothing on stderr (agents)"
run complete -- restore ""
expect_eq "$OUT" ":file" "complete: a FILE asks the shell for a path"
run complete -- --home ""
expect_eq "$OUT" ":dir" "complete: --home asks the shell for a directory"
run complete -- task claim --nosuch "" extra --as
expect_rc 0 "complete: a line that would be a usage error exits 0"
expect_eq "$ERR" "" "complete: ... and says nothing on stderr"
run complete -- --st
expect_eq "$OUT" "--store" "complete: --store is a global option"
run complete -- --store ""
expect_eq "$OUT" "sqlite" "complete: --store offers the one word it takes"
run complete -- --store sqlite task list ""
expect_eq "$OUT" "$(printf 'dev\nops')" "complete: --store sqlite reads the home's database"
run complete -- --store ftp://x task list ""
expect_eq "$OUT$ERR" "" "complete: a --store the command would refuse offers no ids, silently"
HUDDLE_STORE=bogus run complete -- task list ""
expect_eq "$OUT$ERR" "" "complete: so does an unusable HUDDLE_STORE"

# bash_complete LINE: COMPREPLY (sorted, space-separated) after calling
# _huddle as bash would with the cursor at the end of LINE.
bash_complete() {
	bash -c '
		. "$1"
		COMP_LINE=$2
		COMP_POINT=${#2}
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_WORDS[0]=$3
		_huddle
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"
	' bash "$HUDDLE_SRC/completions/huddle.bash" "$1" "$HUDDLE"
}
# expect_bash LINE WANTED DESCRIPTION
expect_bash() {
	expect_eq "$(bash_complete "$1")" "$2" "bash: $3"
}

expect_bash "huddle ta" "task" "a command"
expect_bash "huddle t" "task team" "commands by prefix"
expect_bash "huddle help ex" "exchange" "a command after help"
expect_bash "huddle task cl" "claim" "a subcommand"
expect_bash "huddle agent re" "replace reset-session" "subcommands by prefix"
expect_bash "huddle task list --re" "--ready" "an option"
expect_bash "huddle task list --ready --re" "" "an option not offered twice"
expect_bash "huddle task create dev x --meta a=b --me" "--meta" \
	"a repeatable option offered again"
expect_bash "huddle --js" "--json" "a global option"
expect_bash "huddle task list " "dev ops" "a team id"
expect_bash "huddle task list o" "ops" "a team id by prefix"
expect_bash "huddle task create dev x --as " "coder manager reviewer tester" \
	"the agent ids of the team typed, after --as"
expect_bash "huddle task create ops x --as " "solo" \
	"the agent ids of another team, after --as"
expect_bash "huddle task claim 3 --as " "coder manager reviewer solo tester" \
	"every agent id when no team is typed"
expect_bash "huddle events --team ops --kind x" "" "no ids for an option's free value"
expect_bash "huddle budget set -t ops --agent " "solo" "the team from -t"
expect_bash "huddle attach dev " "coder manager reviewer tester" \
	"an AGENT positional, of the team typed"
expect_bash "huddle exchange " "cancel dev ops" \
	"the words of a synopsis with alternatives"
expect_bash "huddle exchange cancel ops --as " "solo" \
	"the team of the alternative typed"
expect_bash "huddle team update dev --autorun " "off on" "a value list"
expect_bash "huddle --home $other task list " "elsewhere" "--home on the line"
expect_bash "huddle task list --home $other " "elsewhere" \
	"--home after the command"
expect_bash "huddle --home $T_TMP/nowhere task list " "" \
	"a home without a database offers nothing"
[ ! -e "$T_TMP/nowhere" ] && pass || fail "completing created a home"
expect_bash "huddle backup $T_TMP/files/back" "$T_TMP/files/backup-1.db" \
	"a FILE argument completes a path"
expect_bash "huddle nosuch " "" "nothing after an unknown command"

# bash --home=DIR, as bash splits it at '='
OUT=$(bash -c '
	. "$1"
	COMP_WORDS=("$2" --home = "$3" task list "")
	COMP_CWORD=6
	COMP_LINE="huddle --home=$3 task list "
	COMP_POINT=${#COMP_LINE}
	_huddle
	echo "${COMPREPLY[*]}"
' bash "$HUDDLE_SRC/completions/huddle.bash" "$HUDDLE" "$other")
expect_eq "$OUT" "elsewhere" "bash: --home=DIR, split by COMP_WORDBREAKS"

# a real interactive shell: type, press TAB, print the line as left
huddle_on_path
# expect_tab SHELL SETUP TYPED WANTED DESCRIPTION
expect_tab() {
	OUT=$(python3 "$ptyc" "$1" "$2" "$3" 2>"$T_TMP/pty.err")
	RC=$?
	ERR=$(cat "$T_TMP/pty.err")
	expect_rc 0 "$1: $5 (a line came back)"
	expect_eq "$OUT" "$4" "$1: $5"
}
bash_setup=". $HUDDLE_SRC/completions/huddle.bash"
expect_tab bash "$bash_setup" "huddle task list o" "huddle task list ops" \
	"TAB completes a team id"
expect_tab bash "$bash_setup" "huddle task create ops x --as " \
	"huddle task create ops x --as solo" "TAB completes the agent after --as"
expect_tab bash "$bash_setup" "huddle task au" "huddle task auto-claim" \
	"TAB completes a subcommand"

# (4) zsh
if command -v zsh >/dev/null 2>&1; then
	zsh_setup="fpath=($HUDDLE_SRC/completions \$fpath); autoload -Uz compinit; compinit -u -D"
	expect_tab zsh "$zsh_setup" "huddle task list o" "huddle task list ops" \
		"TAB completes a team id"
	expect_tab zsh "$zsh_setup" "huddle task create ops x --as " \
		"huddle task create ops x --as solo" "TAB completes the agent after --as"
	expect_tab zsh "$zsh_setup" "huddle task au" "huddle task auto-claim" \
		"TAB completes a subcommand"
	expect_tab zsh "$zsh_setup" "huddle task list --rea" "huddle task list --ready" \
		"TAB completes an option"
	expect_tab zsh "$zsh_setup" "HUDDLE_HOME=$other huddle task list e" \
		"HUDDLE_HOME=$other huddle task list elsewhere" \
		"HUDDLE_HOME=DIR on the line"
	expect_tab zsh "$zsh_setup" "huddle backup $T_TMP/files/back" \
		"huddle backup $T_TMP/files/backup-1.db" "TAB completes a FILE"
else
	echo "$T_NAME: zsh not installed (scripts/deps.sh test installs it): zsh completion not tested"
fi

finish
