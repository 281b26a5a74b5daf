/*
 * cmd-spend.c -- how `huddle spend TEAM` reads (the operation table's
 * team.spend, src/ops/ops-spend.c, made a command by cli-ops.c): a
 * summary line, the spend per agent, per bucket, the budgets against
 * their limits and the costliest turns, each an aligned table. Amounts
 * are the answer's integer micro-cents shown as dollars to four places
 * (truncated, never rounded up); times in this machine's local time
 * (hd_cli_time). Under --json the answer as REST gives it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

static long long
num(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* micro-cents as "$1.2345" (1 USD = 10^8 micro-cents) */
static void
usd(char *out, size_t len, long long mc)
{
	snprintf(out, len, "%s$%lld.%04lld", mc < 0 ? "-" : "",
	    (mc < 0 ? -mc : mc) / 100000000LL,
	    (mc < 0 ? -mc : mc) % 100000000LL / 10000LL);
}

/* "2026-11-22 10:00" for a bucket or a turn */
static void
when(char *out, size_t len, long long ms)
{
	hd_cli_time(out, len, ms);
	if (strlen(out) > 16)
		out[16] = '\0';
}

static void
print_agents(const json_t *agents)
{
	hd_table *t = hd_table_new(
	    5, "AGENT", "TURNS", "IN TOKENS", "OUT TOKENS", "SPENT");
	char turns[24], in[24], outk[24], spent[32];
	const json_t *a;
	size_t i;

	json_array_foreach (agents, i, a) {
		snprintf(turns, sizeof(turns), "%lld", num(a, "turns"));
		snprintf(in, sizeof(in), "%lld", num(a, "input_tokens"));
		snprintf(outk, sizeof(outk), "%lld", num(a, "output_tokens"));
		usd(spent, sizeof(spent), num(a, "microcents"));
		hd_table_row(t, str(a, "agent"), turns, in, outk, spent);
	}
	hd_table_print(t, stdout, "  ");
	hd_table_free(t);
}

static void
print_buckets(const json_t *buckets)
{
	hd_table *t = hd_table_new(4, "BUCKET", "TURNS", "SPENT", "BY AGENT");
	char start[32], turns[24], spent[32], one[32], by[512];
	const json_t *b, *v;
	const char *agent;
	size_t i, at;

	json_array_foreach (buckets, i, b) {
		when(start, sizeof(start), num(b, "start"));
		snprintf(turns, sizeof(turns), "%lld", num(b, "turns"));
		usd(spent, sizeof(spent), num(b, "microcents"));
		by[0] = '\0';
		at = 0;
		json_object_foreach ((json_t *)json_object_get(b, "agents"),
		    agent, v) {
			usd(one, sizeof(one), (long long)json_integer_value(v));
			if (at < sizeof(by))
				at += (size_t)snprintf(by + at, sizeof(by) - at,
				    "%s%s %s", at > 0 ? ", " : "", agent, one);
		}
		hd_table_row(t, start, turns, spent, by);
	}
	hd_table_print(t, stdout, "  ");
	hd_table_free(t);
}

static const char *
budget_state(const json_t *b)
{
	if (!json_is_integer(json_object_get(b, "limit_cents")))
		return "tracking";
	if (json_is_true(json_object_get(b, "paused")))
		return "paused";
	return json_is_true(json_object_get(b, "over")) ? "over" : "ok";
}

static void
print_budgets(const json_t *budgets)
{
	hd_table *t = hd_table_new(
	    6, "SCOPE", "SUBJECT", "MODE", "LIMIT", "SPENT", "STATE");
	char lim[32], spent[32];
	const json_t *b;
	size_t i;
	int limited;

	json_array_foreach (budgets, i, b) {
		limited = json_is_integer(json_object_get(b, "limit_cents"));
		if (limited)
			usd(lim, sizeof(lim), num(b, "limit_cents") * 1000000LL);
		usd(spent, sizeof(spent), num(b, "spent_microcents"));
		hd_table_row(t, str(b, "scope"), str(b, "subject"),
		    limited ? str(b, "mode") : "-", limited ? lim : "-", spent,
		    budget_state(b));
	}
	hd_table_print(t, stdout, "  ");
	hd_table_free(t);
}

/* "exchange dev-room turn 3", "conversation <id>", "autorun turn 7" */
static void
what(char *out, size_t len, const json_t *t)
{
	const char *src = str(t, "source");

	if (strcmp(src, "exchange") == 0)
		snprintf(out, len, "exchange %s turn %lld", str(t, "room_id"),
		    num(t, "turn"));
	else if (strcmp(src, "conversation") == 0)
		snprintf(out, len, "conversation %s", str(t, "conversation_id"));
	else if (strcmp(src, "autorun") == 0)
		snprintf(out, len, "autorun turn %lld", num(t, "autorun_turn"));
	else
		snprintf(out, len, "%s", src);
}

static void
print_turns(const json_t *turns)
{
	hd_table *t =
	    hd_table_new(5, "WHEN", "AGENT", "SPENT", "TOKENS IN/OUT", "TURN");
	char at[32], spent[32], tokens[48], w[160];
	const json_t *x;
	size_t i;

	json_array_foreach (turns, i, x) {
		when(at, sizeof(at), num(x, "ts"));
		usd(spent, sizeof(spent), num(x, "microcents"));
		snprintf(tokens, sizeof(tokens), "%lld/%lld%s",
		    num(x, "input_tokens"), num(x, "output_tokens"),
		    json_is_true(json_object_get(x, "estimated")) ? " (est.)"
								  : "");
		what(w, sizeof(w), x);
		hd_table_row(t, at, str(x, "agent"), spent, tokens, w);
	}
	hd_table_print(t, stdout, "  ");
	hd_table_free(t);
}

static int
render_spend(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *total = json_object_get(result, "total");
	char since[32], spent[32];

	(void)args;
	if (c->json) {
		hd_cli_json(json_incref((json_t *)result));
		return HD_EXIT_OK;
	}
	when(since, sizeof(since), num(result, "since"));
	usd(spent, sizeof(spent), num(total, "microcents"));
	if (num(total, "turns") == 0)
		printf("team %s: no spend since %s\n", str(result, "team"),
		    since);
	else {
		printf("team %s: %s in %lld turns since %s (by %s)\n",
		    str(result, "team"), spent, num(total, "turns"), since,
		    str(result, "bucket"));
		print_agents(json_object_get(result, "agents"));
		printf("\n");
		print_buckets(json_object_get(result, "buckets"));
	}
	if (json_array_size(json_object_get(result, "budgets")) > 0) {
		printf("\nbudgets (spend all-time):\n");
		print_budgets(json_object_get(result, "budgets"));
	}
	if (json_array_size(json_object_get(result, "costliest")) > 0) {
		printf("\ncostliest turns:\n");
		print_turns(json_object_get(result, "costliest"));
	}
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_spend[] = {
    {"team.spend", render_spend},
    {NULL, NULL},
};
