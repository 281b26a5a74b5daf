/*
 * budget.h -- spend and budgets per agent and per team (SPEC 8.2).
 *
 * A budget has a limit in cents, a mode (`warn` or `cap`) and the spend so
 * far in micro-cents (1 cent = 1,000,000 micro-cents; 1 USD = 100,000,000,
 * the unit hd_runtime_cost reports). Spend is recorded for every agent and
 * team that runs turns, with or without a limit, so a limit set later
 * counts what was already spent.
 *  (1) A `cap` budget at or over its limit is tripped: an exchange refuses
 *      to start (`budget_paused:team`, `budget_paused:agent`), or ends
 *      `budget_paused` after the turn that crossed it.
 *  (2) A `warn` budget never pauses anything; crossing its limit logs a
 *      warning and appends a budget_exceeded event, once.
 */
#ifndef HUDDLE_BUDGET_H
#define HUDDLE_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_BUDGET_MICROCENTS_PER_CENT INT64_C(1000000)

/* The largest limit accepted: $10 million, far from int64 overflow in
 * micro-cents. */
#define HD_BUDGET_LIMIT_MAX_CENTS INT64_C(1000000000)

typedef struct hd_budget {
	char *scope;         /* "team" | "agent" */
	char *subject;       /* the team or agent id */
	int64_t limit_cents; /* -1: no limit set (spend is tracked only) */
	char *mode;          /* "warn" | "cap" */
	int64_t spent_microcents;
	int64_t updated_at;
} hd_budget;

typedef struct hd_budgets {
	hd_budget *items; /* by scope ("agent" first), then subject */
	size_t n;
} hd_budgets;

/*
 * Set the limit and mode of the budget of a team or an agent, keeping
 * what it has spent (emits budget_set). Refusals, before any write:
 * `invalid budget scope "x": use team or agent`, `invalid budget mode
 * "x": use warn or cap` (HD_EINVAL), `budget limit must be between 0 and
 * 1000000000 cents` (HD_EINVAL); then `team "x" not found` or `agent "x"
 * not found`. *out (when non-NULL): hd_budget_free() it.
 */
int hd_budget_set(hd_budget **out, hd_store *st, const char *scope,
    const char *subject, int64_t limit_cents, const char *mode, hd_err *err);

/* One budget; `no budget for agent coder` (HD_ENOTFOUND) when that
 * subject has neither a limit nor any recorded spend. */
int hd_budget_get(hd_budget **out, hd_store *st, const char *scope,
    const char *subject, hd_err *err);

/* Budgets filtered by scope and subject (NULL: any). Dispose with
 * hd_budgets_dispose(). */
int hd_budget_list(hd_budgets *out, hd_store *st, const char *scope,
    const char *subject, hd_err *err);

/* What a charge crossed (bits of *crossed). */
#define HD_BUDGET_CROSSED_CAP 1  /* it tripped a cap budget */
#define HD_BUDGET_CROSSED_WARN 2 /* it took a warn budget over its limit */

/*
 * Add microcents of spend to agent's budget and to team's (either may be
 * NULL), creating rows without a limit where none exist, and append a
 * budget_exceeded event for each limit this charge crossed. Works inside
 * a caller's transaction (it logs nothing, so a retried transaction says
 * nothing twice); *crossed (when non-NULL) gets the HD_BUDGET_CROSSED_*
 * bits for the caller to report after its commit.
 */
int hd_budget_charge(int *crossed, hd_store *st, const char *team,
    const char *agent, int64_t microcents, hd_err *err);

/*
 * hd_budget_charge, and *paused as hd_budget_paused(team, agent) would
 * read it right after the charge, from the rows the charge already read:
 * the exchange's save needs both, in one transaction.
 */
int hd_budget_charge_paused(int *crossed, const char **paused, hd_store *st,
    const char *team, const char *agent, int64_t microcents, hd_err *err);

/*
 * Which cap budget is tripped: *out is "team" when team's is, else
 * "agent" when agent's is (agent may be NULL), else NULL. Read-only.
 */
int hd_budget_paused(const char **out, hd_store *st, const char *team,
    const char *agent, hd_err *err);

/* 1 when b has a limit and its spend is at or over it (either mode). */
int hd_budget_over(const hd_budget *b);

/* 1 when b is a cap budget at or over its limit (it pauses). */
int hd_budget_tripped(const hd_budget *b);

/* {"scope","subject","limit_cents" (null: none),"mode",
 *  "spent_microcents","spent_usd","over","paused","updated_at"}. */
json_t *hd_budget_to_json(const hd_budget *b);

void hd_budget_free(hd_budget *b);
void hd_budgets_dispose(hd_budgets *l);

#endif
