/*
 * cmd-budget.c -- `huddle budget set|show`: spend limits per team and per
 * agent (SPEC 8.2).
 *
 * show prints one row per budget: SCOPE SUBJECT MODE LIMIT SPENT STATE,
 * where STATE is `paused` (a cap at or over its limit), `over` (a warn
 * budget past its limit), `ok`, or `tracking` (spend only, no limit).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/budget.h>

#include "cli.h"

/* The budget named: TEAM (first argument, or the older --team) for the
 * team's, --agent AGENT for an agent's (checked to be in TEAM when both
 * are given). Non-zero: exit with it. */
static int
budget_subject(
    hd_cli *c, const char **scope, const char **subject, int required)
{
	const char *team, *agent = hd_cli_opt_str(c, "agent");
	int rc;

	*scope = NULL;
	*subject = NULL;
	if ((rc = hd_cli_team_arg(c, 0, &team)) != 0)
		return rc;
	if (team == NULL && agent == NULL) {
		if (required)
			return hd_cli_usage(c, "give TEAM, or TEAM --agent "
					       "AGENT");
		return 0;
	}
	if (team != NULL && agent != NULL &&
	    (rc = hd_cli_agent_in(c, team, agent)) != 0)
		return rc;
	*scope = agent != NULL ? "agent" : "team";
	*subject = agent != NULL ? agent : team;
	return 0;
}

static const char *
budget_state(const hd_budget *b)
{
	if (b->limit_cents < 0)
		return "tracking";
	if (hd_budget_tripped(b))
		return "paused";
	return hd_budget_over(b) ? "over" : "ok";
}

static void
print_budget_line(const hd_budget *b)
{
	printf("%s %s: ", b->scope, b->subject);
	if (b->limit_cents >= 0)
		printf("%s at %lld cents ($%.2f)", b->mode,
		    (long long)b->limit_cents, (double)b->limit_cents / 100.0);
	else
		printf("no limit");
	printf("; spent $%.6f (%s)\n", (double)b->spent_microcents / 1e8,
	    budget_state(b));
}

static int
cmd_budget_set(hd_cli *c)
{
	const char *scope, *subject, *mode = hd_cli_opt_str(c, "mode");
	hd_budget *b = NULL;
	hd_store *st;
	int64_t limit = -1;
	int rc;

	if ((rc = budget_subject(c, &scope, &subject, 1)) != 0)
		return rc;
	if ((rc = hd_cli_opt_int(
		 c, "limit-cents", 0, HD_BUDGET_LIMIT_MAX_CENTS, &limit)) != 0)
		return rc;
	if (limit < 0 || mode == NULL)
		return hd_cli_usage(c, "'budget set' needs --limit-cents N and "
				       "--mode warn|cap");
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_budget_set(&b, st, scope, subject, limit, mode, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_budget_to_json(b));
	else
		print_budget_line(b);
	hd_budget_free(b);
	return HD_EXIT_OK;
}

static int
cmd_budget_show(hd_cli *c)
{
	const char *scope, *subject;
	hd_budgets l;
	hd_table *t;
	hd_store *st;
	json_t *arr;
	char lim[48], spent[48];
	size_t i;
	int rc;

	if ((rc = budget_subject(c, &scope, &subject, 0)) != 0)
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (subject != NULL) {
		/* naming one that does not exist is an error, not "none" */
		hd_budget *b = NULL;

		if (hd_budget_get(&b, st, scope, subject, &c->err) < 0)
			return hd_cli_fail(c);
		hd_budget_free(b);
	}
	if (hd_budget_list(&l, st, scope, subject, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(
			    arr, hd_budget_to_json(&l.items[i]));
		hd_cli_json(json_pack("{s:o}", "budgets", arr));
	} else if (l.n == 0)
		printf("no budgets and no spend yet\n");
	else {
		t = hd_table_new(
		    6, "SCOPE", "SUBJECT", "MODE", "LIMIT", "SPENT", "STATE");
		for (i = 0; i < l.n; i++) {
			const hd_budget *b = &l.items[i];

			if (b->limit_cents >= 0)
				snprintf(lim, sizeof(lim), "$%.2f",
				    (double)b->limit_cents / 100.0);
			else
				snprintf(lim, sizeof(lim), "-");
			snprintf(spent, sizeof(spent), "$%.6f",
			    (double)b->spent_microcents / 1e8);
			hd_table_row(t, b->scope, b->subject,
			    b->limit_cents >= 0 ? b->mode : "-", lim, spent,
			    budget_state(b));
		}
		hd_table_print(t, stdout, "");
		hd_table_free(t);
	}
	hd_budgets_dispose(&l);
	return HD_EXIT_OK;
}

static const hd_cli_opt budget_set_opts[] = {
    {"agent", 'a', "AGENT", "this agent's budget, not the team's", 0},
    {"team", 't', "TEAM", "the team (older spelling of the first argument)",
	0},
    {"limit-cents", 0, "N", "the limit in cents (0 or more)", 0},
    {"mode", 0, "MODE", "warn (log when over) or cap (pause exchanges)", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt budget_show_opts[] = {
    {"agent", 'a', "AGENT", "only this agent's budget", 0},
    {"team", 't', "TEAM", "the team (older spelling of the first argument)",
	0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_cmd budget_subs[] = {
    {"set", "TEAM", "Set the limit and mode of a team's or an agent's budget",
	0, 1, budget_set_opts, cmd_budget_set, NULL,
	"Spend so far is kept. A cap budget at or over its limit pauses "
	"exchanges\n(they refuse to start, or stop after the turn that "
	"crossed it); warn never\npauses. Without TEAM, --agent AGENT alone "
	"names an agent's budget too.\nExample: huddle budget set dev "
	"--limit-cents 500 --mode cap"},
    {"show", "[TEAM]", "Show budgets and spend", 0, 1, budget_show_opts,
	cmd_budget_show, NULL,
	"Spend is recorded for every agent and team that ran a turn, with "
	"or without\na limit; STATE is paused, over, ok or tracking (no "
	"limit)."},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_budget = {
    .name = "budget",
    .summary = "Set and show spend limits for teams and agents",
    .subs = budget_subs,
};
