/*
 * ops-spend.c -- a team's spend over time (ops.h; spend.h): GET
 * /api/teams/:team/spend and `huddle spend TEAM`, what the dashboard's
 * Spend panel draws.
 *
 * Not an MCP tool: the budgets already stop an agent that spends too
 * much (SPEC 8.2), and what the team spent per member is the user's
 * view of the team, not something a turn acts on. The user's: no --as.
 * The window is a duration back from now (hd_spend_parse_since); the
 * CLI's renderer is cmd-spend.c's.
 */
#include <huddle/spend.h>
#include <huddle/util.h>

#include "ops.h"

#define SINCE_DEFAULT "24h"
#define TURNS_DEFAULT 10

static int
op_spend(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_spend_query q = {0};
	const char *since = hd_op_str(c, "since");
	int64_t span, turns;
	int rc;

	if ((rc = hd_spend_parse_since(&span,
		 since != NULL ? since : SINCE_DEFAULT, err)) < 0)
		return rc;
	hd_op_int(c, "turns", TURNS_DEFAULT, &turns);
	q.team = c->team;
	q.until_ms = hd_now_ms();
	q.since_ms = q.until_ms - span;
	q.bucket = hd_op_str(c, "bucket");
	q.turns = (int)turns;
	return hd_spend_read(result, c->st, &q, err);
}

/* The CLI refuses a bad --since as a usage error, as it does a bad
 * --bucket; REST and the handler say the same words (HD_EINVAL). */
static int
cli_check(const json_t *args, const char *as, hd_err *err)
{
	const char *since = json_string_value(json_object_get(args, "since"));
	int64_t span;

	(void)as;
	return since != NULL ? hd_spend_parse_since(&span, since, err) : 0;
}

#define ARGS_END {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL}

static const char *const bucket_values[] = {"hour", "day", NULL};

static const hd_op_arg spend_args[] = {
    {"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL, NULL,
	":team", "TEAM", 0, NULL, NULL, "team"},
    {"since", HD_OPT_STR, HD_OPA_NO_MCP, 0, 64, NULL, NULL, NULL, "--since",
	0, "the window: a duration back from now, 1m to 366d (default 24h)",
	"DUR", NULL},
    {"bucket", HD_OPT_ENUM, HD_OPA_NO_MCP, 0, 0, bucket_values, NULL, NULL,
	"--bucket", 0,
	"sum by hour or day (default: hour for up to 2 days, else day)",
	"hour|day", NULL},
    {"turns", HD_OPT_INT, HD_OPA_NO_MCP, 0, HD_SPEND_TURNS_MAX, NULL, NULL,
	NULL, "--turns", 'n',
	"list the N newest and N costliest turns, 0-100 (default 10)", "N",
	NULL},
    ARGS_END,
};

const hd_op hd_ops_spend[] = {
    {.name = "team.spend", .args = spend_args, .fn = op_spend,
	.method = "GET", .path = "/api/teams/:team/spend", .status = 200,
	.cli = "spend",
	.cli_summary = "Show a team's spend over time, its budgets and its "
		       "costliest turns",
	.cli_details =
	    "Spend is summed per agent into hour or day buckets (UTC) from "
	    "the cost each\nruntime turn recorded; budgets are shown against "
	    "their limits (spend all-time).\nExample: huddle spend dev "
	    "--since 7d --bucket day",
	.cli_check = cli_check},
    {.name = NULL},
};
