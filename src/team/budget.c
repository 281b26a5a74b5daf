/*
 * budget.c -- spend and budgets per agent and per team (SPEC 8.2). Owns
 * table budgets; nothing else writes it. It lives in the team module
 * because a row is a fact about a team or one of its agents (scope,
 * subject_id), both of which this module owns: setting a budget checks
 * its subject here. Deciding what a tripped cap stops (a turn, an
 * exchange) is the engines' (engine/exchange.c, turn.c, sv_turn.c).
 *  (1) Spend is an integer count of micro-cents, added in the same
 *      transaction as the turn it pays for, so it is exact and survives
 *      kill -9 exactly when the turn's post does.
 *  (2) A row with limit_cents NULL tracks spend only; setting a limit
 *      keeps the spend already recorded.
 *  (3) A cap budget pauses at or over its limit (spent >= limit x 10^6);
 *      a warn budget never pauses. Crossing a limit (spend below it
 *      before a charge, at or over it after) appends budget_exceeded once.
 * Callers: the engines (engine/exchange.c and turn.c: paused, charge with
 * the turn's save; engine/conversation.c and sv_turn.c: charge, paused),
 * the CLI (`huddle budget`), HTTP (route-teams.c: the spend per agent),
 * team/spend.c (the team's and its members' budgets beside the spend
 * over time), the tests.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/budget.h>
#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include <store/store.h>

#define BUDGET_COLS                                                            \
	"scope, subject_id, limit_cents, mode, spent_microcents, updated_at"

static int
budget_row(void *item, hd_stmt *s, void *ctx)
{
	hd_budget *b = item;

	(void)ctx;
	memset(b, 0, sizeof(*b));
	b->scope = hd_store_col_dup(s, 0);
	b->subject = hd_store_col_dup(s, 1);
	b->limit_cents = hd_stmt_is_null(s, 2)
			     ? -1
			     : hd_stmt_int(s, 2);
	b->mode = hd_store_col_dup(s, 3);
	b->spent_microcents = hd_stmt_int(s, 4);
	b->updated_at = hd_stmt_int(s, 5);
	return b->scope == NULL || b->subject == NULL || b->mode == NULL ? -1
									 : 0;
}

static void
budget_dispose(void *item)
{
	hd_budget *b = item;

	free(b->scope);
	free(b->subject);
	free(b->mode);
}

void
hd_budget_free(hd_budget *b)
{
	if (b == NULL)
		return;
	budget_dispose(b);
	free(b);
}

void
hd_budgets_dispose(hd_budgets *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), budget_dispose);
	l->items = NULL;
	l->n = 0;
}

/* The one rule for "at or over its limit" (-1: no limit). */
static int
limit_reached(int64_t limit_cents, int64_t spent_microcents)
{
	return limit_cents >= 0 &&
	       spent_microcents >= limit_cents * HD_BUDGET_MICROCENTS_PER_CENT;
}

int
hd_budget_over(const hd_budget *b)
{
	return limit_reached(b->limit_cents, b->spent_microcents);
}

int
hd_budget_tripped(const hd_budget *b)
{
	return strcmp(b->mode, "cap") == 0 && hd_budget_over(b);
}

json_t *
hd_budget_to_json(const hd_budget *b)
{
	return json_pack("{s:s, s:s, s:o, s:s, s:I, s:f, s:b, s:b, s:I}",
	    "scope", b->scope, "subject", b->subject, "limit_cents",
	    b->limit_cents >= 0 ? json_integer(b->limit_cents) : json_null(),
	    "mode", b->mode, "spent_microcents",
	    (json_int_t)b->spent_microcents, "spent_usd",
	    (double)b->spent_microcents / 1e8, "over", hd_budget_over(b),
	    "paused", hd_budget_tripped(b), "updated_at",
	    (json_int_t)b->updated_at);
}

static int
scope_check(const char *scope, hd_err *err)
{
	if (scope == NULL ||
	    (strcmp(scope, "team") != 0 && strcmp(scope, "agent") != 0))
		return hd_err_set(err, HD_EINVAL,
		    "invalid budget scope \"%.64s\": use team or agent",
		    scope ? scope : "");
	return 0;
}

/* Read one row; *found 0 when absent. */
static int
budget_read(hd_budget *out, int *found, hd_store *st, const char *scope,
    const char *subject, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*found = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " BUDGET_COLS " FROM budgets "
		 "WHERE scope = ? AND subject_id = ?",
		 HD_TEXT(scope), HD_TEXT(subject))) < 0 ||
	    (rc = hd_store_row(st, s, out, budget_row, budget_dispose, NULL,
		 err)) < 0)
		return rc;
	*found = rc;
	return 0;
}

/* What a charge and a pause check need of one row, read without copying
 * its text (they run on every exchange turn): *found 0 when absent. */
typedef struct budget_state {
	int found;
	int cap;             /* mode is cap */
	int64_t limit_cents; /* -1: none */
	int64_t spent_microcents;
} budget_state;

static int
budget_state_read(budget_state *out, hd_store *st, const char *scope,
    const char *subject, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT limit_cents, mode = 'cap', spent_microcents "
		 "FROM budgets WHERE scope = ? AND subject_id = ?",
		 HD_TEXT(scope), HD_TEXT(subject))) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src == HD_ROW) {
		out->found = 1;
		out->limit_cents = hd_stmt_is_null(s, 0)
				       ? -1
				       : hd_stmt_int(s, 0);
		out->cap = hd_stmt_int(s, 1);
		out->spent_microcents = hd_stmt_int(s, 2);
	} else if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* hd_budget_tripped for a budget_state. */
static int
state_tripped(const budget_state *b)
{
	return b->found && b->cap &&
	       limit_reached(b->limit_cents, b->spent_microcents);
}

typedef struct set_txn {
	const char *scope;
	const char *subject;
	int64_t limit_cents;
	const char *mode;
} set_txn;

static int
set_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	set_txn *tx = payload;
	hd_agent *a = NULL;
	hd_team *t = NULL;
	const char *team;
	int rc;

	if (strcmp(tx->scope, "team") == 0)
		rc = hd_team_get(&t, st, tx->subject, err);
	else
		rc = hd_agent_get(&a, st, tx->subject, err);
	if (rc < 0)
		goto done;
	team = t != NULL ? t->id : a->team_id;
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO budgets(scope, subject_id, limit_cents, mode, "
		 "spent_microcents, updated_at) VALUES (?, ?, ?, ?, 0, ?) "
		 "ON CONFLICT(scope, subject_id) DO UPDATE SET "
		 "limit_cents = excluded.limit_cents, mode = excluded.mode, "
		 "updated_at = excluded.updated_at",
		 HD_TEXT(tx->scope), HD_TEXT(tx->subject),
		 HD_INT(tx->limit_cents), HD_TEXT(tx->mode),
		 HD_INT(hd_now_ms()))) < 0)
		goto done;
	hd_events_append(st, "budget_set", team, 0, a != NULL ? a->id : NULL,
	    json_pack("{s:s, s:s, s:I, s:s}", "scope", tx->scope, "subject",
		tx->subject, "limit_cents", (json_int_t)tx->limit_cents, "mode",
		tx->mode));
done:
	hd_agent_free(a);
	hd_team_free(t);
	return rc;
}

int
hd_budget_set(hd_budget **out, hd_store *st, const char *scope,
    const char *subject, int64_t limit_cents, const char *mode, hd_err *err)
{
	set_txn tx = {scope, subject, limit_cents, mode};
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = scope_check(scope, err)) < 0)
		return rc;
	if (mode == NULL ||
	    (strcmp(mode, "warn") != 0 && strcmp(mode, "cap") != 0))
		return hd_err_set(err, HD_EINVAL,
		    "invalid budget mode \"%.64s\": use warn or cap",
		    mode ? mode : "");
	if (limit_cents < 0 || limit_cents > HD_BUDGET_LIMIT_MAX_CENTS)
		return hd_err_set(err, HD_EINVAL,
		    "budget limit must be between 0 and %lld cents",
		    (long long)HD_BUDGET_LIMIT_MAX_CENTS);
	if ((rc = hd_slug_check(scope, subject, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, set_txn_fn, &tx, err)) < 0)
		return rc;
	return out != NULL ? hd_budget_get(out, st, scope, subject, err) : 0;
}

int
hd_budget_get(hd_budget **out, hd_store *st, const char *scope,
    const char *subject, hd_err *err)
{
	hd_budget *b;
	int rc, found;

	*out = NULL;
	if ((rc = scope_check(scope, err)) < 0 ||
	    (rc = hd_slug_check(scope, subject, err)) < 0)
		return rc;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if ((rc = budget_read(b, &found, st, scope, subject, err)) < 0) {
		free(b);
		return rc;
	}
	if (!found) {
		free(b);
		return hd_err_set(
		    err, HD_ENOTFOUND, "no budget for %s %s", scope, subject);
	}
	*out = b;
	return 0;
}

int
hd_budget_list(hd_budgets *out, hd_store *st, const char *scope,
    const char *subject, hd_err *err)
{
	hd_stmt *s;
	void *items;
	int rc;

	memset(out, 0, sizeof(*out));
	if (scope != NULL && (rc = scope_check(scope, err)) < 0)
		return rc;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " BUDGET_COLS " FROM budgets "
		 "WHERE (?1 IS NULL OR scope = ?1) "
		 "AND (?2 IS NULL OR subject_id = ?2) "
		 "ORDER BY scope, subject_id",
		 HD_TEXT(scope), HD_TEXT(subject))) < 0 ||
	    (rc = hd_store_rows(st, s, sizeof(hd_budget), budget_row,
		 budget_dispose, NULL, &items, &out->n, err)) < 0)
		return rc;
	out->items = items;
	return 0;
}

/* Charge one row; sets bits in *crossed, and *tripped to whether the row
 * is a tripped cap once charged. A row without a limit (spend tracking,
 * the usual case) can cross nothing and trip nothing, so it is charged by
 * one update that matches only such a row; any other row (a limit, or
 * none yet) is read first for the crossing test (3), then updated in
 * place by its key (cheaper than the upsert's failed insert first). */
/* Run one of the charge's statements: ?1 scope, ?2 subject, ?3 the
 * micro-cents, ?4 now. */
static int
charge_step(hd_store *st, const char *sql, const char *scope,
    const char *subject, int64_t microcents, hd_err *err)
{
	return hd_store_run(st, err, sql, HD_TEXT(scope), HD_TEXT(subject),
	    HD_INT(microcents), HD_INT(hd_now_ms()));
}

static int
charge_one(int *crossed, int *tripped, hd_store *st, const char *scope,
    const char *subject, const char *team, int64_t microcents, hd_err *err)
{
	budget_state b;
	int64_t before;
	int rc;

	*tripped = 0;
	if ((rc = charge_step(st,
		 "UPDATE budgets SET spent_microcents = spent_microcents + ?3,"
		 " updated_at = ?4 WHERE scope = ?1 AND subject_id = ?2"
		 " AND limit_cents IS NULL",
		 scope, subject, microcents, err)) < 0)
		return rc;
	if (hd_store_changes(st) > 0)
		return 0;
	if ((rc = budget_state_read(&b, st, scope, subject, err)) < 0)
		return rc;
	before = b.spent_microcents;
	rc = charge_step(st,
	    b.found ? "UPDATE budgets SET spent_microcents = "
		      "spent_microcents + ?3, updated_at = ?4 "
		      "WHERE scope = ?1 AND subject_id = ?2"
		    : "INSERT INTO budgets(scope, subject_id, "
		      "spent_microcents, updated_at) VALUES (?, ?, ?, ?) "
		      "ON CONFLICT(scope, subject_id) DO UPDATE SET "
		      "spent_microcents = budgets.spent_microcents + "
		      "excluded.spent_microcents, "
		      "updated_at = excluded.updated_at",
	    scope, subject, microcents, err);
	if (rc < 0 || !b.found || b.limit_cents < 0)
		return rc;
	*tripped = b.cap && limit_reached(b.limit_cents, before + microcents);
	if (!limit_reached(b.limit_cents, before) &&
	    limit_reached(b.limit_cents, before + microcents)) { /* (3) */
		*crossed |=
		    b.cap ? HD_BUDGET_CROSSED_CAP : HD_BUDGET_CROSSED_WARN;
		hd_events_append(st, "budget_exceeded", team, 0,
		    strcmp(scope, "agent") == 0 ? subject : NULL,
		    json_pack("{s:s, s:s, s:s, s:I, s:I}", "scope", scope,
			"subject", subject, "mode", b.cap ? "cap" : "warn",
			"limit_cents", (json_int_t)b.limit_cents,
			"spent_microcents", (json_int_t)(before + microcents)));
	}
	return 0;
}

int
hd_budget_charge_paused(int *crossed, const char **paused, hd_store *st,
    const char *team, const char *agent, int64_t microcents, hd_err *err)
{
	int rc, bits = 0, team_cap = 0, agent_cap = 0;

	if (crossed != NULL)
		*crossed = 0;
	if (paused != NULL)
		*paused = NULL;
	if (microcents < 0)
		return hd_err_set(err, HD_EINVAL, "spend cannot be negative");
	if (agent != NULL && (rc = charge_one(&bits, &agent_cap, st, "agent",
				  agent, team, microcents, err)) < 0)
		return rc;
	if (team != NULL && (rc = charge_one(&bits, &team_cap, st, "team",
				 team, team, microcents, err)) < 0)
		return rc;
	if (crossed != NULL)
		*crossed = bits;
	if (paused != NULL)
		*paused = team_cap ? "team" : agent_cap ? "agent" : NULL;
	return 0;
}

int
hd_budget_charge(int *crossed, hd_store *st, const char *team,
    const char *agent, int64_t microcents, hd_err *err)
{
	return hd_budget_charge_paused(
	    crossed, NULL, st, team, agent, microcents, err);
}

int
hd_budget_paused(const char **out, hd_store *st, const char *team,
    const char *agent, hd_err *err)
{
	budget_state b;
	int rc;

	*out = NULL;
	if (team != NULL) {
		if ((rc = budget_state_read(&b, st, "team", team, err)) < 0)
			return rc;
		if (state_tripped(&b)) {
			*out = "team";
			return 0;
		}
	}
	if (agent != NULL) {
		if ((rc = budget_state_read(&b, st, "agent", agent, err)) < 0)
			return rc;
		if (state_tripped(&b))
			*out = "agent";
	}
	return 0;
}
