/*
 * spend.c -- a team's spend over time (spend.h): the read behind `huddle
 * spend`, GET /api/teams/:team/spend and the dashboard's Spend panel. It
 * owns no table: it sums the team's cost events (the event log's, walked
 * by hd_events_costs) and reads the budgets (budget.c) of the team and
 * its members, in one read transaction so the two agree.
 *  (1) A team's spend is its own cost events only: the walk names the
 *      team, and the budgets shown are the team's and those of agents in
 *      it (agent ids are global, so an agent's budget is one row).
 *  (2) Amounts stay integer micro-cents from the event to the answer;
 *      "usd" beside each is derived, for display.
 *  (3) Buckets are ts floored to the hour or the UTC day; the events
 *      come oldest first, so buckets are built in order, one pass, and
 *      only those with a turn are listed (a client lays out the gaps
 *      from since, until and bucket_ms).
 *  (4) The turn lists keep at most q->turns entries while walking: the
 *      newest in a ring, the costliest in an array kept sorted (a later
 *      turn of equal cost goes first: newest first on ties).
 * Callers: src/ops/ops-spend.c; tests/unit/team/test-spend.c.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/budget.h>
#include <huddle/events.h>
#include <huddle/spend.h>
#include <huddle/team.h>
#include <huddle/util.h>

struct ranked {
	int64_t mc;
	json_t *turn;
};

struct walk {
	const hd_spend_query *q;
	int64_t bucket_ms;
	json_t *buckets;       /* array, oldest first (3) */
	json_t *cur;           /* its last bucket, or NULL */
	json_t *agents;        /* agent -> totals object */
	json_t *total;
	json_t **recent;       /* ring of q->turns (4) */
	size_t nrecent, head;
	struct ranked *top;    /* sorted, at most q->turns (4) */
	size_t ntop;
};

static int64_t
data_int(const json_t *data, const char *key)
{
	const json_t *v = json_object_get(data, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static void
add_int(json_t *o, const char *key, int64_t n)
{
	json_t *v = json_object_get(o, key);

	if (v != NULL)
		json_integer_set(v, json_integer_value(v) + n);
	else
		json_object_set_new(o, key, json_integer(n));
}

/* The five sums of a total; usd is set when the walk is done. */
static json_t *
sums_new(void)
{
	return json_pack("{s:i, s:f, s:i, s:i, s:i}", "microcents", 0, "usd",
	    0.0, "turns", 0, "input_tokens", 0, "output_tokens", 0);
}

static void
sums_add(json_t *o, int64_t mc, int64_t in, int64_t out)
{
	add_int(o, "microcents", mc);
	add_int(o, "turns", 1);
	add_int(o, "input_tokens", in);
	add_int(o, "output_tokens", out);
}

static void
sums_usd(json_t *o)
{
	json_object_set_new(o, "usd",
	    json_real((double)data_int(o, "microcents") / 1e8));
}

/* What the turn was, as its cost event names it (spend.h). */
static json_t *
turn_json(const hd_event *e, int64_t mc)
{
	const json_t *d = e->data, *v;
	json_t *t = json_pack("{s:I, s:I, s:s, s:I, s:f, s:I, s:I, s:b}",
	    "seq", (json_int_t)e->seq, "ts", (json_int_t)e->ts, "agent",
	    e->agent_id != NULL ? e->agent_id : "", "microcents",
	    (json_int_t)mc, "usd", (double)mc / 1e8, "input_tokens",
	    (json_int_t)data_int(d, "input_tokens"), "output_tokens",
	    (json_int_t)data_int(d, "output_tokens"), "estimated",
	    json_is_true(json_object_get(d, "estimated")));

	if (t == NULL)
		return NULL;
	if ((v = json_object_get(d, "room_id")) != NULL && json_is_string(v)) {
		json_object_set_new(t, "source", json_string("exchange"));
		json_object_set(t, "room_id", (json_t *)v);
		json_object_set_new(
		    t, "turn", json_integer(data_int(d, "turn")));
	} else if ((v = json_object_get(d, "conversation_id")) != NULL &&
		   json_is_string(v)) {
		json_object_set_new(t, "source", json_string("conversation"));
		json_object_set(t, "conversation_id", (json_t *)v);
	} else if (json_is_integer(json_object_get(d, "turn"))) {
		json_object_set_new(t, "source", json_string("autorun"));
		json_object_set_new(
		    t, "autorun_turn", json_integer(data_int(d, "turn")));
	} else
		json_object_set_new(t, "source", json_string("unknown"));
	return t;
}

/* (4) */
static void
keep_turn(struct walk *w, const hd_event *e, int64_t mc)
{
	size_t n = (size_t)w->q->turns, i;

	if (n == 0)
		return;
	json_decref(w->recent[w->head]);
	w->recent[w->head] = turn_json(e, mc);
	w->head = (w->head + 1) % n;
	if (w->nrecent < n)
		w->nrecent++;
	for (i = 0; i < w->ntop; i++)
		if (w->top[i].mc <= mc)
			break;
	if (i == n)
		return;
	if (w->ntop == n)
		json_decref(w->top[--w->ntop].turn);
	memmove(&w->top[i + 1], &w->top[i], (w->ntop - i) * sizeof(*w->top));
	w->top[i].mc = mc;
	w->top[i].turn = turn_json(e, mc);
	w->ntop++;
}

static int
walk_cost(void *ctx, const hd_event *e)
{
	struct walk *w = ctx;
	int64_t mc = data_int(e->data, "microcents");
	int64_t in = data_int(e->data, "input_tokens");
	int64_t out = data_int(e->data, "output_tokens");
	int64_t start = e->ts - e->ts % w->bucket_ms;
	const char *agent = e->agent_id != NULL ? e->agent_id : "";
	json_t *a;

	if (w->cur == NULL || data_int(w->cur, "start") != start) {
		w->cur = json_pack("{s:I, s:i, s:f, s:i, s:{}}", "start",
		    (json_int_t)start, "microcents", 0, "usd", 0.0, "turns", 0,
		    "agents");
		if (w->cur == NULL || json_array_append_new(w->buckets,
					  w->cur) < 0)
			return HD_ENOMEM;
	}
	add_int(w->cur, "microcents", mc);
	add_int(w->cur, "turns", 1);
	add_int(json_object_get(w->cur, "agents"), agent, mc);
	if ((a = json_object_get(w->agents, agent)) == NULL) {
		if ((a = sums_new()) == NULL ||
		    json_object_set_new(w->agents, agent, a) < 0)
			return HD_ENOMEM;
	}
	sums_add(a, mc, in, out);
	sums_add(w->total, mc, in, out);
	keep_turn(w, e, mc);
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The per-agent totals as an array by agent id. */
static json_t *
agents_array(json_t *agents)
{
	json_t *arr = json_array(), *v;
	const char **keys, *k;
	size_t n = json_object_size(agents), i = 0;

	if (arr == NULL || (keys = calloc(n + 1, sizeof(*keys))) == NULL) {
		json_decref(arr);
		return NULL;
	}
	json_object_foreach (agents, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n; i++) {
		v = json_pack("{s:s}", "agent", keys[i]);
		json_object_update(v, json_object_get(agents, keys[i]));
		sums_usd(v);
		json_array_append_new(arr, v);
	}
	free(keys);
	return arr;
}

/* The team's budget, then its members' (1). */
static int
budgets_json(json_t **out, hd_store *st, const char *team, hd_err *err)
{
	hd_budgets mine, all;
	hd_agents members;
	size_t i, k;
	int rc;

	*out = json_array();
	if ((rc = hd_budget_list(&mine, st, "team", team, err)) < 0)
		return rc;
	for (i = 0; i < mine.n; i++)
		json_array_append_new(*out, hd_budget_to_json(&mine.items[i]));
	hd_budgets_dispose(&mine);
	if ((rc = hd_agent_list(&members, st, team, err)) < 0)
		return rc;
	if ((rc = hd_budget_list(&all, st, "agent", NULL, err)) < 0) {
		hd_agents_dispose(&members);
		return rc;
	}
	/* both by id: the budgets' order */
	for (i = 0; i < all.n; i++)
		for (k = 0; k < members.n; k++)
			if (strcmp(all.items[i].subject, members.items[k].id) ==
			    0) {
				json_array_append_new(
				    *out, hd_budget_to_json(&all.items[i]));
				break;
			}
	hd_budgets_dispose(&all);
	hd_agents_dispose(&members);
	return 0;
}

struct read {
	const hd_spend_query *q;
	int64_t bucket_ms;
	json_t *out;
};

static int
read_txn(hd_store *st, void *payload, hd_err *err)
{
	struct read *r = payload;
	const hd_spend_query *q = r->q;
	struct walk w;
	json_t *turns, *costliest, *budgets = NULL, *agents;
	size_t i, n = (size_t)q->turns;
	int rc;

	if ((rc = hd_team_exists(st, q->team, err)) < 0)
		return rc;
	memset(&w, 0, sizeof(w));
	w.q = q;
	w.bucket_ms = r->bucket_ms;
	w.buckets = json_array();
	w.agents = json_object();
	w.total = sums_new();
	w.recent = calloc(n + 1, sizeof(*w.recent));
	w.top = calloc(n + 1, sizeof(*w.top));
	if (w.buckets == NULL || w.agents == NULL || w.total == NULL ||
	    w.recent == NULL || w.top == NULL)
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	else if ((rc = hd_events_costs(st, q->team, q->since_ms,
		      q->until_ms + 1, walk_cost, &w, err)) < 0 &&
		 rc == HD_ENOMEM)
		hd_err_set(err, HD_ENOMEM, "out of memory");
	if (rc >= 0)
		rc = budgets_json(&budgets, st, q->team, err);
	if (rc >= 0) {
		turns = json_array();
		for (i = 0; i < w.nrecent; i++) /* newest first */
			json_array_append(turns,
			    w.recent[(w.head + n - 1 - i) % n]);
		costliest = json_array();
		for (i = 0; i < w.ntop; i++)
			json_array_append(costliest, w.top[i].turn);
		json_array_foreach (w.buckets, i, w.cur)
			sums_usd(w.cur);
		sums_usd(w.total);
		agents = agents_array(w.agents);
		r->out = json_pack("{s:s, s:I, s:I, s:s, s:I, s:O, s:o, s:O, "
				   "s:O, s:o, s:o}",
		    "team", q->team, "since", (json_int_t)q->since_ms, "until",
		    (json_int_t)q->until_ms, "bucket",
		    r->bucket_ms == HD_SPEND_HOUR_MS ? "hour" : "day",
		    "bucket_ms", (json_int_t)r->bucket_ms, "total", w.total,
		    "agents", agents, "buckets", w.buckets, "budgets", budgets,
		    "turns", turns, "costliest", costliest);
		if (r->out == NULL)
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	json_decref(budgets);
	json_decref(w.buckets);
	json_decref(w.agents);
	json_decref(w.total);
	for (i = 0; i < n && w.recent != NULL; i++)
		json_decref(w.recent[i]);
	for (i = 0; i < w.ntop; i++)
		json_decref(w.top[i].turn);
	free(w.recent);
	free(w.top);
	return rc;
}

int
hd_spend_read(json_t **out, hd_store *st, const hd_spend_query *q, hd_err *err)
{
	struct read r = {q, HD_SPEND_DAY_MS, NULL};
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", q->team, err)) < 0)
		return rc;
	if (q->bucket == NULL)
		r.bucket_ms = q->until_ms - q->since_ms <= HD_SPEND_HOURLY_MAX_MS
				  ? HD_SPEND_HOUR_MS
				  : HD_SPEND_DAY_MS;
	else if (strcmp(q->bucket, "hour") == 0)
		r.bucket_ms = HD_SPEND_HOUR_MS;
	else if (strcmp(q->bucket, "day") != 0)
		return hd_err_set(err, HD_EINVAL,
		    "bucket must be hour or day, not \"%.32s\"", q->bucket);
	if (q->turns < 0 || q->turns > HD_SPEND_TURNS_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "turns must be between 0 and %d, not %d",
		    HD_SPEND_TURNS_MAX, q->turns);
	if (q->until_ms < q->since_ms || q->since_ms < 0)
		return hd_err_set(
		    err, HD_EINVAL, "the window ends before it starts");
	if ((rc = hd_store_read(st, read_txn, &r, err)) < 0)
		return rc;
	*out = r.out;
	return 0;
}

int
hd_spend_parse_since(int64_t *out, const char *s, hd_err *err)
{
	if (hd_parse_duration(out, s, "mhdw", HD_SPEND_SINCE_MAX_MS))
		return 0;
	return hd_err_set(err, HD_EINVAL,
	    "since must be a duration like 24h or 7d (m, h, d or w), up to "
	    "366d, not \"%.64s\"",
	    s);
}
