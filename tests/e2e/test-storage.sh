#!/usr/bin/env bash
# test-storage.sh -- damaged or protected storage: a 0-byte or non-SQLite
# huddle.db is refused and left alone, zeroed pages are named as damage,
# a read-only database reads but refuses writes, a full disk names the
# file and ENOSPC, and `huddle backup|restore` (while writing; restore
# refused under a running server). On PostgreSQL (HUDDLE_STORE), backup
# and restore are refused with a message naming pg_dump instead.
. "$(dirname "$0")/lib.sh"

# home DIR: HUDDLE_HOME for the next calls.
home() { export HUDDLE_HOME="$1"; }

# On PostgreSQL (the e2e-pg set) the store is no file under the home:
# what follows here is SQLite's (a file's damage, mode and disk, and
# backup/restore, which copy and swap that file). There, backup, restore
# and their checks are refused, naming PostgreSQL's own tool, and nothing
# is written; a database that is not there is named as unreachable.
if on_pg; then
	not_here='is for the SQLite store;'
	run team create dev
	expect_rc 0 "a new home on PostgreSQL"
	[ ! -e "$HUDDLE_HOME/huddle.db" ] && pass ||
		fail "a PostgreSQL store wrote $HUDDLE_HOME/huddle.db"
	run chat post dev "kept"
	run_says 1 "huddle: huddle backup $not_here back PostgreSQL up with pg_dump" \
		"backup on PostgreSQL" \
		backup "$T_TMP/b.db"
	[ ! -e "$T_TMP/b.db" ] && pass || fail "a refused backup wrote $T_TMP/b.db"
	run --json backup "$T_TMP/b.db"
	expect_rc 1 "backup --json on PostgreSQL"
	expect_eq "$(json_get "$ERR" 'j["code"]')" "refused" "a refusal in JSON"
	# a SQLite backup made elsewhere is no PostgreSQL restore either
	HUDDLE_STORE= run --home "$T_TMP/lite" team create lite
	HUDDLE_STORE= run --home "$T_TMP/lite" backup "$T_TMP/lite.db"
	expect_rc 0 "a SQLite backup to offer"
	run_says 1 "huddle: huddle restore $not_here restore a pg_dump archive with pg_restore (or a plain dump with psql)" \
		"restore on PostgreSQL" \
		restore "$T_TMP/lite.db"
	run chat read dev
	expect_contains "$OUT" "kept" "the PostgreSQL store is as it was"
	run team list --json
	case "$OUT" in *lite*) fail "restore brought the SQLite backup's team in: $OUT" ;; *) pass ;; esac
	# doctor's integrity check is SQLite's: on PostgreSQL it names the
	# store and passes
	run doctor
	expect_rc 0 "doctor on PostgreSQL"
	expect_contains "$OUT" "store: $(store_says)" "doctor names the store"
	# a database that is not there
	missing=${HUDDLE_STORE/\/hd_e2e_/\/hd_none_}
	run --store "$missing" team list
	expect_rc 1 "a store whose database does not exist"
	expect_contains "$ERR" "huddle: database unreachable: " "is unreachable"
	missing_db=${missing#*:///}
	expect_contains "$ERR" "database \"${missing_db%%\?*}\" does not exist" \
		"naming the database"
	finish
	exit
fi

run team create dev
expect_rc 0 "a new home creates the store"
expect_eq "$(stat -c %a "$HUDDLE_HOME/huddle.db")" "600" "a new store is 0600"
run chat post dev "first"
MAIN=$HUDDLE_HOME

# an existing database keeps its mode
chmod 0640 "$MAIN/huddle.db"
run chat post dev "second"
expect_rc 0 "post to a 0640 store"
expect_eq "$(stat -c %a "$MAIN/huddle.db")" "640" "an existing store keeps its mode"
chmod 0600 "$MAIN/huddle.db"

# a 0-byte file is refused, not replaced by an empty store
mkdir -p "$T_TMP/zero"
: >"$T_TMP/zero/huddle.db"
home "$T_TMP/zero"
run team list
expect_rc 1 "0-byte store"
expect_eq "$ERR" "huddle: not a huddle database: $T_TMP/zero/huddle.db (0 bytes)" \
	"0-byte store message"
expect_eq "$(stat -c %s "$T_TMP/zero/huddle.db")" "0" "0-byte store left alone"

# a text file
mkdir -p "$T_TMP/text"
echo "my notes, not a database" >"$T_TMP/text/huddle.db"
home "$T_TMP/text"
run team create x
expect_rc 1 "text store"
expect_eq "$ERR" "huddle: not a huddle database: $T_TMP/text/huddle.db (file is not a database)" \
	"text store message"
expect_eq "$(cat "$T_TMP/text/huddle.db")" "my notes, not a database" "text store left alone"

# backup while another process writes; the copy is whole and restorable
home "$MAIN"
(for i in $(seq 1 40); do "$HUDDLE" chat post dev "busy $i" >/dev/null; done) &
WRITER=$!
sleep 0.1
run backup "$T_TMP/during.db"
expect_rc 0 "backup while writing"
expect_eq "$OUT" "backed up $MAIN/huddle.db to $T_TMP/during.db" "backup output"
wait $WRITER
expect_eq "$(stat -c %a "$T_TMP/during.db")" "600" "a backup is 0600"
run backup "$T_TMP/during.db"
expect_rc 1 "backup onto an existing file"
expect_eq "$ERR" "huddle: $T_TMP/during.db already exists; choose a new file" \
	"backup refuses to overwrite"
run backup
expect_rc 2 "backup without FILE is a usage error"

# restore: the backup's content comes back, the old store is kept
run chat post dev "before backup"
run --json backup "$T_TMP/b1.db"
expect_rc 0 "backup --json"
expect_json "$OUT" "backup --json parses"
run chat post dev "after backup"
run restore "$T_TMP/b1.db"
expect_rc 0 "restore"
expect_eq "$OUT" "restored $T_TMP/b1.db into $MAIN (the old database is huddle.db.before-restore)" \
	"restore output"
run chat read dev
expect_contains "$OUT" "before backup" "restored content"
case "$OUT" in *"after backup"*) fail "restore kept a post made after the backup" ;; *) pass ;; esac
mkdir -p "$T_TMP/old"
cp "$MAIN/huddle.db.before-restore" "$T_TMP/old/huddle.db"
home "$T_TMP/old"
run chat read dev
expect_contains "$OUT" "after backup" "huddle.db.before-restore is the old store, whole"
home "$MAIN"
run chat post dev "after restore"
expect_rc 0 "the restored store takes writes"

# restore refuses what is not a huddle database, and a damaged backup
run restore "$T_TMP/text/huddle.db"
expect_rc 1 "restore a text file"
expect_eq "$ERR" "huddle: not a huddle database: $T_TMP/text/huddle.db (file is not a database)" \
	"restore a text file: message"
run restore "$T_TMP/nothing.db"
expect_rc 1 "restore a missing file"
expect_eq "$ERR" "huddle: no such file: $T_TMP/nothing.db" "restore a missing file: message"

# zeroed pages: a page in the middle of a copy, written over with zeros
for i in $(seq 1 30); do "$HUDDLE" chat post dev "$(printf 'padding %.0s' $(seq 1 60)) $i" >/dev/null; done
run backup "$T_TMP/whole.db"
cp "$T_TMP/whole.db" "$T_TMP/zeroed.db"
PAGES=$(($(stat -c %s "$T_TMP/zeroed.db") / 2048))
dd if=/dev/zero of="$T_TMP/zeroed.db" bs=2048 seek=$((PAGES / 2)) count=1 conv=notrunc 2>/dev/null
run restore "$T_TMP/zeroed.db"
expect_rc 1 "restore a damaged backup"
expect_contains "$ERR" "huddle: database is damaged: $T_TMP/zeroed.db: " "damaged backup named"
expect_contains "$ERR" "; restore it from a backup (huddle restore)" "damaged backup: what to do"
mkdir -p "$T_TMP/zeroed"
cp "$T_TMP/zeroed.db" "$T_TMP/zeroed/huddle.db"
home "$T_TMP/zeroed"
run serve --port 0
expect_rc 1 "serve refuses a damaged store"
expect_contains "$ERR" "huddle: database is damaged: $T_TMP/zeroed/huddle.db: " \
	"serve names the damage"
run doctor
expect_rc 1 "doctor finds the damage"
expect_contains "$ERR" "huddle: database is damaged: $T_TMP/zeroed/huddle.db: " \
	"doctor names the damage"
run restore "$T_TMP/whole.db"
expect_rc 0 "restore repairs a damaged home"
run doctor
expect_rc 0 "doctor on the repaired home"
run chat read dev
expect_contains "$OUT" "padding" "repaired home reads"
expect_eq "$(stat -c %s "$T_TMP/zeroed/huddle.db.before-restore")" \
	"$(stat -c %s "$T_TMP/zeroed.db")" "the damaged store is kept aside"

# restore is refused while a server runs for the home
home "$MAIN"
"$HUDDLE" serve --port 0 >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" &
SERVER=$!
for _ in $(seq 1 100); do [ -s "$MAIN/serve.json" ] && break; sleep 0.05; done
run restore "$T_TMP/b1.db"
expect_rc 1 "restore under a running server"
expect_eq "$ERR" "huddle: huddle serve (pid $SERVER) is running for $MAIN; stop it before restoring" \
	"restore under a running server: message"
run backup "$T_TMP/served.db"
expect_rc 0 "backup while the server runs"
kill -TERM "$SERVER"
wait "$SERVER"

# A read-only database: its mode stops us unless we are root; then a
# read-only bind mount in a private mount namespace does.
mkdir -p "$T_TMP/ro"
cp "$T_TMP/whole.db" "$T_TMP/ro/huddle.db"
home "$T_TMP/ro"
run team list # migrate and settle while writable
if [ "$(id -u)" != 0 ]; then
	chmod 0444 "$T_TMP/ro/huddle.db"
	run team list
	expect_rc 0 "read-only store: reads work"
	expect_contains "$OUT" "dev" "read-only store: team list"
	run team create other
	expect_rc 1 "read-only store: writes fail"
	expect_eq "$ERR" "huddle: database is read-only: $T_TMP/ro/huddle.db" \
		"read-only store: message"
	expect_eq "$(stat -c %a "$T_TMP/ro/huddle.db")" "444" "read-only store keeps its mode"
	chmod 0600 "$T_TMP/ro/huddle.db"
elif unshare -m true 2>/dev/null; then
	# a second copy one schema version behind: it would need a migration
	run --json init
	V=$(json_get "$OUT" 'j["schema_version"]')
	mkdir -p "$T_TMP/ro/old"
	cp "$T_TMP/ro/huddle.db" "$T_TMP/ro/old/huddle.db"
	python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=%d" % (int(sys.argv[2]) - 1)); c.close()' \
		"$T_TMP/ro/old/huddle.db" "$V"
	unshare -m bash -c '
		mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 99
		"$HUDDLE" team list >"$2/ro.out1" 2>"$2/ro.err1"; echo $? >"$2/ro.rc1"
		"$HUDDLE" team create other >"$2/ro.out2" 2>"$2/ro.err2"; echo $? >"$2/ro.rc2"
		"$HUDDLE" --home "$1/old" team list >/dev/null 2>"$2/ro.err3"; echo $? >"$2/ro.rc3"
	' _ "$T_TMP/ro" "$T_TMP"
	if [ $? -eq 99 ]; then
		echo "skip [$T_NAME]: read-only case: cannot bind-mount read-only here" >&2
	else
		expect_eq "$(cat "$T_TMP/ro.rc1")" "0" "read-only mount: reads work ($(cat "$T_TMP/ro.err1"))"
		expect_contains "$(cat "$T_TMP/ro.out1")" "dev" "read-only mount: team list"
		expect_eq "$(cat "$T_TMP/ro.rc2")" "1" "read-only mount: writes fail"
		expect_eq "$(cat "$T_TMP/ro.err2")" "huddle: database is read-only: $T_TMP/ro/huddle.db" \
			"read-only mount: message"
		expect_eq "$(cat "$T_TMP/ro.rc3")" "1" "read-only mount: a store needing migration"
		expect_eq "$(cat "$T_TMP/ro.err3")" \
			"huddle: database is read-only: $T_TMP/ro/old/huddle.db: it has schema version $((V - 1)) and needs $V; open it once with write access to upgrade it" \
			"read-only mount: migration refused with a message"
	fi
else
	echo "skip [$T_NAME]: read-only case: running as root and unshare -m is not permitted" >&2
fi

# A full disk: a 1 MiB tmpfs in a private mount namespace (root only).
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	mkdir -p "$T_TMP/full"
	unshare -m bash -c '
		mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
		export HUDDLE_HOME="$1/home"
		"$HUDDLE" team create dev >/dev/null 2>&1 || exit 98
		body=$(head -c 60000 /dev/zero | tr "\0" x)
		for i in $(seq 1 40); do
			"$HUDDLE" chat post dev "$body" >/dev/null 2>"$2/full.err" || break
		done
		"$HUDDLE" team list >"$2/full.out" 2>/dev/null; echo $? >"$2/full.rc"
	' _ "$T_TMP/full" "$T_TMP"
	case $? in
	99) echo "skip [$T_NAME]: full-disk case: cannot mount a tmpfs here" >&2 ;;
	*)
		expect_eq "$(cat "$T_TMP/full.err")" \
			"huddle: database or disk is full: $T_TMP/full/home/huddle.db (ENOSPC)" \
			"full disk: message names the file and ENOSPC"
		expect_eq "$(cat "$T_TMP/full.rc")" "0" "full disk: reads still work"
		;;
	esac
else
	echo "skip [$T_NAME]: full-disk case: needs root and unshare -m for a private tmpfs" >&2
fi

finish
