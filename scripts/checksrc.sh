#!/usr/bin/env bash
# checksrc.sh -- the rules a machine can check, run by `make test`:
#  (1) no banned string functions (sprintf, vsprintf, strcpy, strcat,
#      strncat, gets): use snprintf or hd_buf;
#  (2) nothing below the surfaces writes to stdout (stdout belongs to MCP
#      stdio and --json output);
#  (3) layering: a file includes headers of its own layer or a lower one,
#      and surfaces never reach SQLite (they call domain functions).
set -u
cd "$(dirname "$0")/.."
status=0
complain() {
	echo "checksrc: $*" >&2
	status=1
}

files=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'bench/*.c' 2>/dev/null)
[ -n "$files" ] || files=$(find src include tests bench -name '*.[ch]')

banned='(^|[^A-Za-z0-9_])(sprintf|vsprintf|strcpy|strcat|strncat|gets)[[:space:]]*\('
if out=$(grep -nE "$banned" $files); then
	complain "banned functions:"
	echo "$out" >&2
fi

lower=$(printf '%s\n' $files | grep -E '^src/(util|store|team|events|room|mailbox|board|memory|engine|runtime)/')
stdout_re='(^|[^A-Za-z0-9_])(printf|puts|putchar)[[:space:]]*\(|stdout'
if [ -n "$lower" ] && out=$(grep -nE "$stdout_re" $lower); then
	complain "stdout used below the surfaces:"
	echo "$out" >&2
fi

# layer rank of a src/ directory
rank() {
	case "$1" in
	util) echo 0 ;;
	store) echo 1 ;;
	team | events | room | mailbox | board | memory) echo 2 ;;
	engine | runtime) echo 3 ;;
	cli | ops | mcp | http | web) echo 4 ;;
	*) echo 9 ;;
	esac
}
for f in $(printf '%s\n' $files | grep -E '^src/'); do
	dir=$(echo "$f" | cut -d/ -f2)
	mine=$(rank "$dir")
	for inc in $(grep -oE '#include "\.\./[a-z]+/' "$f" | sed -E 's|#include "\.\./||; s|/||'); do
		theirs=$(rank "$inc")
		if [ "$theirs" -gt "$mine" ]; then
			complain "$f includes from the higher layer src/$inc"
		fi
		if [ "$mine" -eq 4 ] && [ "$inc" = store ]; then
			complain "$f is a surface and includes the store's private header"
		fi
	done
	if [ "$mine" -eq 4 ] && grep -q '#include <sqlite3.h>' "$f"; then
		complain "$f is a surface and includes sqlite3.h"
	fi
done
exit $status
