#!/usr/bin/env bash
# test-cli.sh -- the CLI contract through the real binary: --help everywhere,
# usage errors exit 2 with a hint, refusals exit 1 as `huddle: ...`,
# --json parses, team files apply idempotently, --store and HUDDLE_STORE
# take a postgres:// URL or sqlite and refuse anything else before the
# home is touched, and a URL's password is never shown.
. "$(dirname "$0")/lib.sh"

# --help on every command and subcommand, found from the help itself, so
# a new command is covered the day it is added.
run --help
expect_rc 0 "huddle --help"
cmds=$(printf '%s\n' "$OUT" | awk '/^commands:/{on=1; next} /^$/{on=0} on{print $1}')
[ -n "$cmds" ] || fail "no commands listed in --help"
for c in $cmds; do
	run "$c" --help
	expect_rc 0 "huddle $c --help"
	expect_contains "$OUT" "usage: huddle $c" "help of $c"
	subs=$(printf '%s\n' "$OUT" | awk '/^subcommands:/{on=1; next} /^$/{on=0} on{print $1}')
	for s in $subs; do
		run "$c" "$s" --help
		expect_rc 0 "huddle $c $s --help"
		expect_contains "$OUT" "usage: huddle $c $s" "help of $c $s"
	done
done
# the version from its one source (project VERSION in CMakeLists.txt) and
# the commit built: one of the checkout's (the binary may predate the
# last commit until it is rebuilt), or "unknown" outside git
version=$(sed -n 's/^project(huddle VERSION \([0-9.]*\) .*/\1/p' "$HUDDLE_SRC/CMakeLists.txt")
run --version
expect_rc 0 "--version"
commit=$(printf '%s' "$OUT" | sed -n "s/^huddle $version (\([0-9a-f]\{7,\}\(-dirty\)\{0,1\}\|unknown\))\$/\1/p")
[ -n "$commit" ] || fail "--version prints the version and the commit: got '$OUT'"
if [ "$commit" != unknown ] && git -C "$HUDDLE_SRC" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$HUDDLE_SRC" cat-file -e "${commit%-dirty}^{commit}" 2>/dev/null ||
		fail "--version names commit $commit, which this checkout does not have"
fi
run --json --version
expect_rc 0 "--json --version"
expect_eq "$OUT" "{\"version\":\"$version\",\"commit\":\"$commit\"}" "--json --version"

# Usage errors: exit 2 with a hint.
run frobnicate
expect_rc 2 "unknown command"
expect_eq "$ERR" $'huddle: unknown command "frobnicate"\nsee \'huddle --help\'' "unknown command text"
run team frob
expect_rc 2 "unknown subcommand"
expect_contains "$ERR" "see 'huddle team --help'" "subcommand hint"
run team create dev --bogus
expect_rc 2 "unknown option"
expect_eq "$ERR" $'huddle: unknown option --bogus for \'team create\'\nsee \'huddle team create --help\'' "unknown option text"
run team create
expect_rc 2 "missing argument"
expect_contains "$ERR" "huddle: 'team create' needs TEAM" "missing argument text"
run team show a b
expect_rc 2 "extra argument"
run events --limit abc
expect_rc 2 "bad integer"
expect_contains "$ERR" 'huddle: --limit must be an integer, not "abc"' "bad integer text"
run
expect_rc 2 "no command"

# Refusals: exit 1, `huddle: <message>` on stderr, nothing on stdout.
run team create 'test@team'
expect_rc 1 "bad team name"
expect_eq "$ERR" "huddle: invalid team name \"test@team\": use 1-50 lowercase letters, digits, '-' or '_'" "bad name text"
expect_eq "$OUT" "" "nothing on stdout for a refusal"
run team show ghost
expect_rc 1 "missing team"
expect_eq "$ERR" 'huddle: team "ghost" not found' "missing team text"

# init, then a team by hand.
run init
expect_rc 0 "init"
expect_contains "$OUT" "$HUDDLE_HOME" "init names the home"
[ "$(stat -c %a "$HUDDLE_HOME")" = 700 ] && pass || fail "home is not 0700"
run team create existing-team --name "Existing"
expect_rc 0 "team create"
run team create existing-team
expect_rc 1 "duplicate team"
expect_eq "$ERR" 'huddle: team "existing-team" already exists' "duplicate text"
run agent add existing-team lead --leader --role "team lead"
expect_rc 0 "agent add"
run agent add existing-team second --leader
expect_eq "$ERR" 'huddle: team existing-team already has a leader (lead)' "second leader"
run agent add existing-team bot --runtime exec --config '{"command": ["./bot"]}'
expect_rc 0 "agent add exec"
run agent add existing-team bot2 --config '{nope'
expect_rc 2 "bad --config JSON is a usage error"

# --json output parses, and says the right things.
run --json team list
expect_rc 0 "team list --json"
expect_json "$OUT" "team list --json"
expect_eq "$(json_get "$OUT" 'j[0]["agent_count"]')" 2 "agent_count"
run team show existing-team --json
expect_json "$OUT" "team show --json"
expect_eq "$(json_get "$OUT" 'j["leader_agent_id"]')" "lead" "leader in show"
run agent list --json
expect_json "$OUT" "agent list --json"
run agent show bot --json
expect_eq "$(json_get "$OUT" 'j["runtime_config"]["command"][0]')" "./bot" "runtime_config kept"
run events --json --team existing-team
expect_json "$OUT" "events --json"
expect_eq "$(json_get "$OUT" '[e["kind"] for e in j]')" "['team_created', 'agent_added', 'agent_added']" "events of the team"

# huddle up: create, then nothing to change, then an edit.
cp "$HUDDLE_SRC/examples/dev-team.json" "$T_TMP/dev.json"
run up "$T_TMP/dev.json"
expect_rc 0 "up"
expect_contains "$OUT" "team dev: created" "up creates"
expect_contains "$OUT" "agent manager: created (leader)" "up names the leader"
run up "$T_TMP/dev.json"
expect_rc 0 "up again"
expect_contains "$OUT" "nothing to change" "up is idempotent"
sed -i 's/"Dev team"/"Development"/' "$T_TMP/dev.json"
run up "$T_TMP/dev.json" --json
expect_eq "$(json_get "$OUT" 'j["action"]')" "updated" "edit is applied"
run team show dev --json
expect_eq "$(json_get "$OUT" 'j["name"]')" "Development" "new name"
expect_eq "$(json_get "$OUT" 'len(j["agents"])')" 4 "four agents"

# A malformed file: file, line and column, nothing written.
printf '{"team": "broken",\n "agents": [\n   {"id": "a",}\n]}\n' >"$T_TMP/bad.json"
run up "$T_TMP/bad.json"
expect_rc 1 "malformed file"
expect_eq "$ERR" "huddle: $T_TMP/bad.json:3:15: string or '}' expected near '}'" "malformed file text"
run team show broken
expect_rc 1 "nothing written for a malformed file"
run up "$T_TMP/missing.json"
expect_rc 1 "missing file"
expect_contains "$ERR" "cannot read $T_TMP/missing.json: No such file or directory" "missing file text"

# Several leaders: the first is kept, with a warning on stderr.
printf '{"team": "two", "agents": [{"id": "x1", "leader": true}, {"id": "x2", "leader": true}]}' >"$T_TMP/two.json"
run up "$T_TMP/two.json"
expect_rc 0 "two leaders"
expect_eq "$ERR" "huddle: warning: multiple leaders flagged for team two; keeping the first (x1)" "leader warning"

# rm: refused with rows, fine when empty; --home wins over HUDDLE_HOME.
run team rm two
expect_rc 0 "rm empty team"
# (on PostgreSQL every home shares the one database: the other home is
# seen through its own SQLite store)
other=()
on_pg && other=(--store sqlite)
run --home "$T_TMP/other" "${other[@]}" team list --json
expect_eq "$OUT" "[]" "--home points elsewhere"
# --store URL / HUDDLE_STORE: a postgres:// or postgresql:// URL, or sqlite;
# anything else is a usage error naming the value and where it came from,
# found before anything is created.
want_store='must be a postgres:// or postgresql:// URL (PostgreSQL) or sqlite (the embedded default), not'
run --home "$T_TMP/fresh" --store ftp://db.example/huddle init
expect_rc 2 "--store with another scheme"
expect_eq "$ERR" "huddle: --store $want_store \"ftp://db.example/huddle\"
see 'huddle init --help'" "names the value"
[ ! -e "$T_TMP/fresh" ] && pass || fail "a refused --store created the home"
run team list --store ""
expect_rc 2 "an empty --store"
expect_contains "$ERR" "huddle: --store $want_store \"\"" "names the empty value"
run --store=mysql://localhost/db team list
expect_rc 2 "--store=VALUE is checked the same way"
expect_contains "$ERR" "\"mysql://localhost/db\"" "and named"
run team list --store "postgresql://u@127.0.0.1/db name"
expect_rc 2 "a URL with a space"
run --store
expect_rc 2 "--store without a value"
expect_eq "$ERR" $'huddle: option --store needs a value\nsee \'huddle --help\'' "says it needs one"
run --json --store pg team list
expect_rc 2 "under --json"
expect_eq "$(json_get "$ERR" 'j["code"]')" "usage" "a usage error in JSON"
HUDDLE_STORE=bogus run team list
expect_rc 2 "HUDDLE_STORE gets the same check"
expect_contains "$ERR" "huddle: HUDDLE_STORE $want_store \"bogus\"" "naming the variable"
# the home's SQLite database, whatever this run's store
run --json "${other[@]}" team list
listed=$OUT
if on_pg; then
	run --json team list
	[ "$OUT" != "$listed" ] && pass ||
		fail "--store sqlite lists the same teams as PostgreSQL: $OUT"
fi
HUDDLE_STORE=bogus run --store sqlite --json team list
expect_rc 0 "--store sqlite wins over HUDDLE_STORE"
expect_eq "$OUT" "$listed" "and is the home's database"
HUDDLE_STORE= run --json team list
expect_eq "$OUT" "$listed" "an empty HUDDLE_STORE is sqlite"
HUDDLE_STORE=sqlite run doctor
expect_contains "$OUT" "store: sqlite $HUDDLE_HOME/huddle.db" "doctor names the store"
run doctor --json --store sqlite
expect_eq "$(json_get "$OUT" 'j["store"]')" "sqlite $HUDDLE_HOME/huddle.db" "and under --json"
# a URL is shown with its password masked (nothing listens on port 1: a
# PostgreSQL build of the store then fails to connect, after naming it)
run --store 'postgresql://u:sekret1@127.0.0.1:1/db?sslmode=disable&password=sekret2' doctor
expect_contains "$OUT" "store: postgresql://u:***@127.0.0.1:1/db?sslmode=disable&password=***" \
	"doctor names a PostgreSQL store, the passwords masked"
case "$OUT$ERR" in *sekret*) fail "a password was printed: $OUT $ERR" ;; *) pass ;; esac
finish
