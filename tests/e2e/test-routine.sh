#!/usr/bin/env bash
# test-routine.sh -- routines end to end: `huddle routine add|list|show|
# enable|disable|rm|fire-now` (text and --json), their refusals, the REST
# routes, and `huddle serve` firing them on its own: once at the time,
# one catch-up after a jump over days of downtime, and one task per fire
# with two servers on one home. Time is a fake clock the test moves:
# HUDDLE_CLOCK_FILE (docs/routines.md), read by the CLI and the servers
# alike, never a sleep until a real fire time.
. "$(dirname "$0")/lib.sh"

export HUDDLE_CLOCK_FILE="$T_TMP/clock"
at() { python3 -c 'import calendar,sys,time; print(calendar.timegm(time.strptime(sys.argv[1], "%Y-%m-%dT%H:%M"))*1000)' "$1"; }
set_clock() { echo "$1" >"$HUDDLE_CLOCK_FILE"; }

set_clock "$(at 2026-01-15T10:00)"
run team create rt
run agent add rt lead --leader
run agent add rt coder
expect_rc 0 "agents"

# --- add, and its refusals ---------------------------------------------------
run routine add rt daily --agent coder --cron '0 9 * * *' --tz Europe/Berlin \
	--task "Daily report" --description "yesterday's numbers" --priority 2 --json
expect_rc 0 "add a cron routine"
expect_json "$OUT" "add --json"
expect_eq "$(json_get "$OUT" 'j["routine"]["next_fire_at"]')" "$(at 2026-01-16T08:00)" \
	"09:00 Berlin is 08:00 UTC in January"
expect_eq "$(json_get "$OUT" 'j["routine"]["tz"]')" "Europe/Berlin" "its zone"

run_says 1 'huddle: cron: bad hour "25": use 0-23' "a bad hour names the field" \
	routine add rt bad --agent coder --cron '0 25 * * *' --task x
run_says 1 'huddle: cron: bad day-of-week "funday": use 0-7 or sun-sat' "a bad weekday" \
	routine add rt bad --agent coder --cron '0 9 * * funday' --task x
run_says 1 'huddle: cron: needs 5 fields (minute hour day-of-month month day-of-week), got 3' \
	"too few fields" routine add rt bad --agent coder --cron '0 9 *' --task x
run routine add rt bad --agent coder --cron '0 9 * * *' --every 1h --task x
expect_rc 2 "cron and every together"
expect_contains "$ERR" "give --cron or --every, not both" "both: message"
run routine add rt bad --agent coder --task x
expect_rc 2 "no schedule"
expect_contains "$ERR" "give a schedule: --cron EXPR or --every DURATION" "neither: message"
run_says 1 'huddle: bad interval "10s": use N followed by s, m, h or d (at least 1m, at most 366d)' \
	"an interval under a minute" routine add rt bad --agent coder --every 10s --task x
run routine add rt bad --agent coder --cron '0 9 * * *' --tz Mars/Base --task x
expect_rc 1 "an unknown zone"
expect_contains "$ERR" 'unknown time zone "Mars/Base"' "zone: message"
run_says 1 'huddle: no member "ghost" in team rt' "a stranger" \
	routine add rt bad --agent ghost --every 1h --task x
run_says 1 'huddle: routine "daily" already exists in team rt' "a second daily" \
	routine add rt daily --agent coder --every 1h --task x
run routine add rt bad --agent coder --every 1h --task x --json
expect_eq "$(json_get "$OUT" 'j["routine"]["every_s"]')" "3600" "an interval"
run routine rm rt bad
expect_rc 0 "rm"
expect_eq "$OUT" "removed routine bad from team rt" "rm output"
run_says 1 'huddle: routine "bad" not found in team rt' "rm again" routine rm rt bad

# --- list, show, disable, enable, fire-now ------------------------------------
run routine list rt
expect_rc 0 "list"
expect_contains "$OUT" "daily" "list names it"
expect_contains "$OUT" "cron '0 9 * * *' Europe/Berlin" "list shows the schedule"
run routine show rt daily --json
expect_eq "$(json_get "$OUT" '"%s %s %s" % (j["routine"]["agent"], j["routine"]["title"], j["routine"]["enabled"])')" \
	"coder Daily report True" "show --json"
run routine disable rt daily --json
expect_eq "$(json_get "$OUT" '"%s %s" % (j["routine"]["enabled"], j["routine"]["next_fire_at"])')" \
	"False None" "disabled: no next fire"
run routine enable rt daily --json
expect_eq "$(json_get "$OUT" 'j["routine"]["next_fire_at"]')" "$(at 2026-01-16T08:00)" \
	"enabled: next fire again"
run routine fire-now rt daily
expect_rc 0 "fire-now"
expect_eq "$OUT" "routine daily fired: task #1" "fire-now output"
run task show 1 --json
expect_eq "$(json_get "$OUT" '"%s %s %s %s" % (j["owner"], j["status"], j["subject"], j["metadata"]["routine"])')" \
	"coder claimed Daily report daily" "the fire's task is delegated to coder"

# --- REST ---------------------------------------------------------------------
serve_bg
pid1=$serve_pid
url1=$url
code=$(curl -s -o "$T_TMP/list.json" -w '%{http_code}' "$url1/api/teams/rt/routines")
expect_eq "$code $(json_get "$(cat "$T_TMP/list.json")" '[r["name"] for r in j["routines"]]')" \
	"200 ['daily']" "REST list"
expect_curl "400 {\"error\":\"cron: bad minute \\\"61\\\": use 0-59\"}" "REST bad cron" \
	-X POST -H 'Content-Type: application/json' \
	-d '{"name":"r2","agent":"coder","cron":"61 * * * *","title":"x"}' \
	"$url1/api/teams/rt/routines"
code=$(curl -s -o "$T_TMP/r2.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"name":"hourly","agent":"lead","every":"1h","title":"Check the queue"}' \
	"$url1/api/teams/rt/routines")
expect_eq "$code" "201" "REST add"
expect_eq "$(json_get "$(cat "$T_TMP/r2.json")" 'j["routine"]["next_fire_at"]')" \
	"$(at 2026-01-15T11:00)" "REST add: an hour from the clock's now"
code=$(curl -s -o "$T_TMP/show.json" -w '%{http_code}' "$url1/api/teams/rt/routines/hourly")
expect_eq "$code $(json_get "$(cat "$T_TMP/show.json")" 'j["routine"]["agent"]')" "200 lead" "REST show"
expect_curl '404 {"error":"routine \"nope\" not found in team rt"}' "REST show unknown" \
	"$url1/api/teams/rt/routines/nope"

# --- the server fires at the time -------------------------------------------
tasks_of() { "$HUDDLE" task list rt --json | python3 -c 'import json,sys; j=json.load(sys.stdin); t=j["tasks"] if isinstance(j,dict) else j; print(sum(1 for x in t if x["subject"]==sys.argv[1]))' "$1"; }
count_is() { [ "$(tasks_of "$1")" = "$2" ]; }
set_clock "$(at 2026-01-16T07:59)"
sleep 2 # two ticks: nothing is due yet
expect_eq "$(tasks_of "Daily report")" "1" "nothing before the time"
set_clock $(($(at 2026-01-16T08:00) + 2000))
wait_for 20 count_is "Daily report" 2 || fail "the server did not fire daily at 08:00 UTC"
expect_eq "$(tasks_of "Check the queue")" "1" "hourly fired too (due at 11:00 the day before)"
run events rt --json
expect_contains "$OUT" "routine_fired" "the fire is an event"

# --- two servers, one fire ------------------------------------------------------
serve_bg
pid2=$serve_pid
set_clock $(($(at 2026-01-17T08:00) + 1000))
wait_for 20 count_is "Daily report" 3 || fail "two servers: no fire"
sleep 3 # several ticks of both servers
expect_eq "$(tasks_of "Daily report")" "3" "two servers made one task for one fire"
kill "$pid2"
wait "$pid2" 2>/dev/null

# --- downtime: one catch-up -------------------------------------------------
kill "$pid1"
wait "$pid1" 2>/dev/null
set_clock "$(at 2026-01-21T12:00)"
serve_bg
pid1=$serve_pid
wait_for 20 count_is "Daily report" 4 || fail "no catch-up fire after downtime"
sleep 2
expect_eq "$(tasks_of "Daily report")" "4" "four days missed: one catch-up fire"
run chat read rt --json
expect_contains "$OUT" "Routine daily: catch-up fire" "the catch-up is said in the room"
run routine show rt daily --json
expect_eq "$(json_get "$OUT" 'j["routine"]["next_fire_at"]')" "$(at 2026-01-22T08:00)" \
	"scheduled on from now"
kill "$pid1"
wait "$pid1" 2>/dev/null
finish
