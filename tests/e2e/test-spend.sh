#!/usr/bin/env bash
# test-spend.sh -- a team's spend over time through the real binary: two
# native agents (huddle's own agent loop) against tests/e2e/fake-model.mjs,
# priced by runtime_config.prices so each turn costs an exact amount (100
# tokens in and 20 out a call: lead $0.30, coder $0.60), run by `huddle
# exchange`; a second team's turn beside them. Then `huddle spend` (table
# and --json) and GET /api/teams/:team/spend agree on the buckets, the
# totals per agent, the budgets and the turns in order; a team never sees
# another's spend; every bad argument is refused with a clear error.
. "$(dirname "$0")/lib.sh"

fake_model_start
export FAKE_NATIVE_KEY=sk-spend-fake
cfg() { # cfg INPUT_PRICE OUTPUT_PRICE (USD per million tokens)
	printf '{"provider":"openai","model":"fake-model","base_url":"http://127.0.0.1:%s/v1","api_key_env":"FAKE_NATIVE_KEY","prices":{"input":%s,"output":%s},"timeout_s":60}' \
		"$FAKE_MODEL_PORT" "$1" "$2"
}

run team create dev
run agent add dev lead --leader --runtime native --config "$(cfg 1000 10000)"
expect_rc 0 "a native leader at \$1000/\$10000 per million"
run agent add dev coder --runtime native --config "$(cfg 2000 20000)"
expect_rc 0 "a native member at twice that"
run team create ops
run agent add ops boss --leader --runtime native --config "$(cfg 5000 50000)"

run_says 0 "team dev: no spend since $(date -d @$(($(date +%s) - 86400)) '+%Y-%m-%d %H:%M')" \
	"no turns yet" spend dev
for first in coder coder lead; do
	run exchange dev --stimulus "go" --first "$first" --max-turns 1
	expect_rc 0 "a turn of $first"
done
run exchange ops --stimulus "go" --max-turns 1
expect_rc 0 "a turn in the other team"
run budget set dev --limit-cents 500 --mode cap
run budget set dev --agent coder --limit-cents 100 --mode warn
expect_rc 0 "budgets"

run spend dev --json
expect_rc 0 "spend --json"
expect_eq "$(json_get "$OUT" '(j["team"], j["bucket"], j["bucket_ms"], j["until"] - j["since"])')" \
	"('dev', 'hour', 3600000, 86400000)" "the default window: 24 hours by hour"
expect_eq "$(json_get "$OUT" '(j["total"]["microcents"], j["total"]["turns"], j["total"]["input_tokens"], j["total"]["output_tokens"])')" \
	"(150000000, 3, 300, 60)" "the total: \$1.50 in three turns"
expect_eq "$(json_get "$OUT" '[(a["agent"], a["microcents"], a["turns"]) for a in j["agents"]]')" \
	"[('coder', 120000000, 2), ('lead', 30000000, 1)]" "per agent, by id"
expect_eq "$(json_get "$OUT" '[(b["microcents"], b["agents"]) for b in j["buckets"]]')" \
	"[(150000000, {'coder': 120000000, 'lead': 30000000})]" "one hour's bucket, split per agent"
expect_eq "$(json_get "$OUT" '[(t["agent"], t["microcents"], t["source"], t["room_id"], t["turn"]) for t in j["turns"]]')" \
	"[('lead', 30000000, 'exchange', 'team:dev', 1), ('coder', 60000000, 'exchange', 'team:dev', 1), ('coder', 60000000, 'exchange', 'team:dev', 1)]" \
	"the turns, newest first, each an exchange's"
expect_eq "$(json_get "$OUT" '[(t["agent"], t["microcents"]) for t in j["costliest"]]')" \
	"[('coder', 60000000), ('coder', 60000000), ('lead', 30000000)]" "the costliest first"
expect_eq "$(json_get "$OUT" '[t["seq"] for t in j["costliest"]][:2] == sorted([t["seq"] for t in j["costliest"]][:2], reverse=True)')" \
	"True" "equal costs: the newest first"
expect_eq "$(json_get "$OUT" '[(b["scope"], b["subject"], b["limit_cents"], b["mode"], b["spent_microcents"], b["over"], b["paused"]) for b in j["budgets"]]')" \
	"[('team', 'dev', 500, 'cap', 150000000, False, False), ('agent', 'coder', 100, 'warn', 120000000, True, False), ('agent', 'lead', None, 'warn', 30000000, False, False)]" \
	"the team's budget, then its members'"
expect_eq "$(json_get "$OUT" '"boss" in json.dumps(j)')" "False" "nothing of the other team's"

run spend ops --json --turns 0
expect_eq "$(json_get "$OUT" '(j["total"]["microcents"], [a["agent"] for a in j["agents"]], j["turns"], j["costliest"])')" \
	"(150000000, ['boss'], [], [])" "the other team sees its own turn only; --turns 0 lists none"

run spend dev --since 7d -n 1
expect_rc 0 "spend, as a table"
expect_contains "$OUT" "team dev: \$1.5000 in 3 turns since " "the summary line"
expect_contains "$OUT" "(by day)" "a week is bucketed by day"
expect_contains "$OUT" "  coder  2      200        40          \$1.2000" "coder's row"
expect_contains "$OUT" "  team   dev      cap   \$5.0000  \$1.5000  ok" "the team's budget"
expect_contains "$OUT" "  agent  coder    warn  \$1.0000  \$1.2000  over" "coder's budget, over"
expect_contains "$OUT" "costliest turns:" "the costliest turns"
expect_eq "$(grep -c 'exchange team:dev turn 1' <<<"$OUT")" "1" "-n 1: one turn listed"

serve_bg
body=$(curl -s "$url/api/teams/dev/spend?since=2h&bucket=day&turns=2")
expect_eq "$(json_get "$body" '(j["bucket"], j["total"]["microcents"], len(j["turns"]), [a["agent"] for a in j["agents"]])')" \
	"('day', 150000000, 2, ['coder', 'lead'])" "REST: the same figures, by day, two turns"
expect_eq "$(json_get "$body" '[t["microcents"] for t in j["costliest"]]')" "[60000000, 60000000]" \
	"REST: the two costliest"

# refusals
expect_curl '400 {"error":"since must be a duration like 24h or 7d (m, h, d or w), up to 366d, not \"5x\""}' \
	"REST: a bad since" "$url/api/teams/dev/spend?since=5x"
expect_curl '400 {"error":"since must be a duration like 24h or 7d (m, h, d or w), up to 366d, not \"400d\""}' \
	"REST: since past a year" "$url/api/teams/dev/spend?since=400d"
expect_curl '400 {"error":"\"bucket\" must be one of hour, day, not \"week\""}' \
	"REST: a bad bucket" "$url/api/teams/dev/spend?bucket=week"
expect_curl '400 {"error":"turns must be between 0 and 100"}' \
	"REST: too many turns" "$url/api/teams/dev/spend?turns=101"
expect_curl '404 {"error":"team \"ghost\" not found"}' \
	"REST: an unknown team" "$url/api/teams/ghost/spend"
run_says 2 "huddle: since must be a duration like 24h or 7d (m, h, d or w), up to 366d, not \"5x\"
see 'huddle spend --help'" "CLI: a bad --since" spend dev --since 5x
run_says 2 "huddle: --bucket must be one of hour, day, not \"week\"
see 'huddle spend --help'" "CLI: a bad --bucket" spend dev --bucket week
run_says 2 "huddle: --turns must be between 0 and 100
see 'huddle spend --help'" "CLI: too many turns" spend dev --turns 101
run_says 1 'huddle: team "ghost" not found' "CLI: an unknown team" spend ghost
run spend ghost --json
expect_eq "$ERR" '{"error":"team \"ghost\" not found","code":"not_found"}' "CLI --json: the error as JSON"
finish
