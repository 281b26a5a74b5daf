/*
 * spend.h -- what a team has spent, over time (issue 15: spend you can
 * see): its cost events summed per agent into hour or day buckets, its
 * budgets against their limits, and which turns cost what. Read-only.
 *
 * Amounts are integer micro-cents (1 USD = 100,000,000, as budget.h and
 * hd_runtime_cost count them); each also carries "usd", the same amount
 * as a number, for display only.
 */
#ifndef HUDDLE_SPEND_H
#define HUDDLE_SPEND_H

#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_SPEND_HOUR_MS INT64_C(3600000)
#define HD_SPEND_DAY_MS INT64_C(86400000)
/* The widest window: 366 days. */
#define HD_SPEND_SINCE_MAX_MS (366 * HD_SPEND_DAY_MS)
/* Without a bucket, a window up to this long is bucketed by hour. */
#define HD_SPEND_HOURLY_MAX_MS (2 * HD_SPEND_DAY_MS)
/* The most turns a list shows. */
#define HD_SPEND_TURNS_MAX 100

typedef struct hd_spend_query {
	const char *team;
	int64_t since_ms, until_ms; /* the window: since <= ts <= until */
	/* "hour", "day", or NULL: hour for a window of up to
	 * HD_SPEND_HOURLY_MAX_MS, else day */
	const char *bucket;
	int turns; /* how many turns each list holds: 0..HD_SPEND_TURNS_MAX */
} hd_spend_query;

/*
 * A duration back from now ("90m", "24h", "7d", "2w"; 1m to 366d) into
 * *out (ms). `since must be a duration like 24h or 7d (m, h, d or w), up
 * to 366d, not "x"` (HD_EINVAL).
 */
int hd_spend_parse_since(int64_t *out, const char *s, hd_err *err);

/*
 * Team's spend in the window, in one read snapshot, as a new object:
 *   {"team", "since", "until", "bucket": "hour"|"day", "bucket_ms",
 *    "total":  {"microcents", "usd", "turns", "input_tokens",
 *               "output_tokens"},
 *    "agents": [{"agent", the same five}, ...] by agent id,
 *    "buckets": [{"start", "microcents", "usd", "turns",
 *                 "agents": {"<agent>": microcents, ...}}, ...]
 *               oldest first, only buckets with a turn in them (start is
 *               ts floored to the bucket, in UTC),
 *    "budgets": [hd_budget_to_json, ...]: the team's, then its members'
 *               by id (spend all-time, as budgets count it),
 *    "turns":   the newest q->turns costed turns, newest first,
 *    "costliest": the q->turns costliest, costliest first (ties: newest
 *               first)}
 * A turn is {"seq", "ts", "agent", "microcents", "usd", "input_tokens",
 * "output_tokens", "estimated", "source"} and what its cost event names
 * it by: source "exchange" with "room_id" and "turn" (its number in the
 * exchange), "conversation" with "conversation_id", "autorun" with
 * "autorun_turn" (the supervisor's turn id), else "unknown".
 * Refusals: `team "x" not found`; `bucket must be hour or day, not "x"`,
 * `turns must be between 0 and 100, not N`, `the window ends before it
 * starts` (HD_EINVAL). Another team's spend is never counted.
 */
int hd_spend_read(
    json_t **out, hd_store *st, const hd_spend_query *q, hd_err *err);

#endif
