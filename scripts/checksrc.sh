#!/usr/bin/env bash
# checksrc.sh -- the rules a machine can check, run by `make test`:
#  (1) no banned string functions (sprintf, vsprintf, strcpy, strcat,
#      strncat, gets): use snprintf or hd_buf;
#  (2) nothing below the surfaces writes to stdout (stdout belongs to MCP
#      stdio and --json output);
#  (3) layering, against the layer table cmake/layers.txt (the one the
#      build reads too): every src/ directory and public header is in a
#      layer; a file includes public headers <huddle/X.h> of its own layer
#      or a lower one, and private headers only of its own directory ("x.h")
#      or as <DIR/x.h> where the table lets its layer see them (a quoted
#      path with a slash, "../DIR/x.h", is refused: it would get past the
#      build's per-layer include path); surfaces never reach SQLite (they
#      call domain functions);
#  (4) only the store knows its backend: no file outside src/store/ names
#      SQLite (sqlite3.h, sqlite3_*, SQLITE_*, the store's sqlite.h); the
#      rest use the statement interface of src/store/store.h.
set -u
cd "$(dirname "$0")/.."
status=0
complain() {
	echo "checksrc: $*" >&2
	status=1
}

files=$(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'bench/*.c' 2>/dev/null)
[ -n "$files" ] || files=$(find src include tests bench -name '*.[ch]' 2>/dev/null)

banned='(^|[^A-Za-z0-9_])(sprintf|vsprintf|strcpy|strcat|strncat|gets)[[:space:]]*\('
if out=$(grep -nE "$banned" $files); then
	complain "banned functions:"
	echo "$out" >&2
fi

table=cmake/layers.txt
# the layers, lowest first; the source directories below the surfaces,
# where nothing writes to stdout
layers=$(awk '$1 == "layers" { $1 = ""; print; exit }' $table)
[ -n "$layers" ] || complain "$table: no layers line"
lower_dirs=$(awk -v L="$layers" '
	BEGIN { n = split(L, a, " "); for (i = 1; i <= n; i++) r[a[i]] = i }
	/^[ \t]*(#|$)/ || $1 ~ /^(layers|domain-order)$/ { next }
	$2 ~ /^src\// && r[$1] < r["surface"] { sub(/^src\//, "", $2); print $2 }
' $table | paste -sd'|')
lower=$(printf '%s\n' $files | grep -E "^src/($lower_dirs)/")
stdout_re='(^|[^A-Za-z0-9_])(printf|puts|putchar)[[:space:]]*\(|stdout'
if [ -n "$lower" ] && out=$(grep -nE "$stdout_re" $lower); then
	complain "stdout used below the surfaces:"
	echo "$out" >&2
fi

# Every include of src/ and include/huddle/ against the table.
layered=$(printf '%s\n' $files | grep -E '^(src/|include/huddle/)')
dirs_in_tree=$(find src -mindepth 1 -maxdepth 1 -type d | sort)
hdrs_in_tree=$(find include/huddle -maxdepth 1 -name '*.h' | sort)
if ! out=$(awk -v L="$layers" -v T="$table" -v DIRS="$dirs_in_tree" \
	-v HDRS="$hdrs_in_tree" '
BEGIN {
	n = split(L, a, " ")
	for (i = 1; i <= n; i++) rank[a[i]] = i
	bad = 0
}
# the table, first
FILENAME == T {
	sub(/#.*/, "")
	if (NF == 0 || $1 ~ /^(layers|domain-order)$/) next
	if (!($1 in rank)) {
		printf "%s:%d: %s is not a layer (%s)\n", T, FNR, $1, L
		bad = 1
		next
	}
	if ($2 ~ /^src\/[^\/]+$/) {
		d = substr($2, 5)
		dir[d] = $1
		upto[d] = $1
		if ($3 ~ /^upto=/) upto[d] = substr($3, 6)
	} else if ($2 ~ /^include\/huddle\/[^\/]+\.h$/) {
		hdr[substr($2, 16)] = $1
	} else {
		printf "%s:%d: %s is neither src/DIR nor include/huddle/X.h\n", T, FNR, $2
		bad = 1
	}
	next
}
FNR == 1 {
	if (!checked_tree) {
		checked_tree = 1
		m = split(DIRS, t, "\n")
		for (i = 1; i <= m; i++) {
			d = substr(t[i], 5)
			if (!(d in dir)) {
				printf "%s is in no layer: add `LAYER %s` to %s\n", t[i], t[i], T
				bad = 1
			}
		}
		m = split(HDRS, t, "\n")
		for (i = 1; i <= m; i++) {
			h = substr(t[i], 16)
			if (!(h in hdr)) {
				printf "%s is in no layer: add `LAYER %s` to %s\n", t[i], t[i], T
				bad = 1
			}
		}
	}
	split(FILENAME, p, "/")
	public = (p[1] == "include")
	if (public) {
		mine = hdr[p[3]]
		what = "public header"
	} else {
		mine = dir[p[2]]
		what = "file"
	}
}
/^[ \t]*#[ \t]*include[ \t]*[<"]/ {
	if (mine == "") next
	inc = $0
	sub(/^[ \t]*#[ \t]*include[ \t]*/, "", inc)
	q = substr(inc, 1, 1)
	inc = substr(inc, 2)
	sub(/[>"].*/, "", inc)
	where = FILENAME ":" FNR ": "
	if (public && q == "\"") {
		if (inc ~ /\//) {
			printf "%s\"%s\": a public header includes another as <huddle/X.h> or \"X.h\"\n", where, inc
			bad = 1
			next
		}
		inc = "huddle/" inc
		q = "<"
	}
	if (q == "\"") {
		if (inc ~ /\//) {
			printf "%s\"%s\": only a header of the same directory is included with quotes; another directory'"'"'s as <DIR/x.h>, which the build checks against the layers\n", where, inc
			bad = 1
		}
		next
	}
	split(inc, c, "/")
	if (c[1] == "huddle") {
		if (c[2] == "huddle.h") {
			printf "%s<huddle/huddle.h> is gone: include the headers this file uses\n", where
			bad = 1
		} else if (!(c[2] in hdr)) {
			printf "%s<%s> is in no layer of %s\n", where, inc, T
			bad = 1
		} else if (rank[hdr[c[2]]] > rank[mine]) {
			printf "%s<%s> is in the %s layer, above this %s in the %s layer\n", where, inc, hdr[c[2]], what, mine
			bad = 1
		}
	} else if (c[1] in dir) {
		d = c[1]
		if (rank[dir[d]] > rank[mine]) {
			printf "%s<%s> is a private header of the %s layer, above this file in the %s layer\n", where, inc, dir[d], mine
			bad = 1
		} else if (rank[upto[d]] < rank[mine]) {
			printf "%s<%s> is a private header of the %s layer (seen up to %s), not by this file in the %s layer\n", where, inc, dir[d], upto[d], mine
			bad = 1
		}
	}
}
END { exit bad }
' $table $layered); then
	complain "includes against the layer table ($table):"
	echo "$out" >&2
fi

for f in $(printf '%s\n' $files | grep -E '^src/' | grep -v '^src/store/'); do
	if out=$(grep -nE 'sqlite3|SQLITE_|store/sqlite\.h' "$f" |
		grep -vE '^[0-9]+:[[:space:]]*(/?\*|//)'); then
		complain "$f names the SQLite backend outside src/store/ (use src/store/store.h):"
		echo "$out" >&2
	fi
done
exit $status
