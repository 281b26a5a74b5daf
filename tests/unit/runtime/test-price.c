/*
 * test-price.c -- what tokens cost (src/runtime/price.c): prices from
 * runtime_config and their refusals, the adapter's own price list (codex's)
 * by longest prefix, SPEC 8.2's default (also for a runtime without a
 * list), and the arithmetic in micro-cents.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "runtime/runtime_int.h"

static void
assert_price(const hd_price *p, double in, double cached, double out)
{
	assert_true(p->input == in);
	assert_true(p->cached == cached);
	assert_true(p->output == out);
}

/* A price on codex, whose adapter has a list. */
static int
codex_price(hd_price *p, const char *model, const json_t *cfg, hd_err *err)
{
	return hd_runtime__price(p, &hd_runtime__codex, model, cfg, err);
}

static void
test_price__from_the_config(void **state)
{
	hd_price p;
	hd_err err = HD_ERR_INIT;
	json_t *cfg;

	(void)state;
	cfg = json_loads(
	    "{\"input\": 2, \"cached\": 0.5, \"output\": 8}", 0, NULL);
	assert_hd_ok(codex_price(&p, "gpt-5", cfg, &err), &err);
	assert_price(&p, 2, 0.5, 8); /* the config wins over the table */
	json_decref(cfg);
	/* cached defaults to input */
	cfg = json_loads("{\"input\": 0.4, \"output\": 1.6}", 0, NULL);
	assert_hd_ok(codex_price(&p, NULL, cfg, &err), &err);
	assert_price(&p, 0.4, 0.4, 1.6);
	json_decref(cfg);
}

static void
test_price__bad_config_is_refused(void **state)
{
	static const struct {
		const char *cfg;
		const char *msg;
	} bad[] = {
	    {"[]", "runtime_config.prices must be an object: {\"input\", "
		   "\"cached\", \"output\"} in USD per million tokens"},
	    {"{\"input\": 1, \"output\": 2, \"extra\": 3}",
		"runtime_config.prices: unknown key \"extra\": use input, "
		"cached and output"},
	    {"{\"output\": 2}", "runtime_config.prices.input must be a "
				"number >= 0 (USD per million tokens)"},
	    {"{\"input\": 1}", "runtime_config.prices.output must be a "
			       "number >= 0 (USD per million tokens)"},
	    {"{\"input\": -1, \"output\": 2}",
		"runtime_config.prices.input must be a number >= 0 (USD per "
		"million tokens)"},
	    {"{\"input\": 1, \"output\": \"2\"}",
		"runtime_config.prices.output must be a number >= 0 (USD per "
		"million tokens)"},
	    {"{\"input\": 1, \"output\": 2, \"cached\": null}",
		"runtime_config.prices.cached must be a number >= 0 (USD per "
		"million tokens)"},
	};
	hd_price p;
	hd_err err = HD_ERR_INIT;
	json_t *cfg;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg = json_loads(bad[i].cfg, JSON_DECODE_ANY, NULL);
		assert_non_null(cfg);
		assert_hd_err(codex_price(&p, "gpt-5", cfg, &err),
		    HD_EINVAL, bad[i].msg, &err);
		json_decref(cfg);
	}
}

static void
test_price__the_table_and_the_default(void **state)
{
	hd_price p;
	hd_err err = HD_ERR_INIT;

	(void)state;
	/* the longest prefix wins */
	assert_hd_ok(
	    codex_price(&p, "gpt-5-mini-2026-08", NULL, &err), &err);
	assert_price(&p, 0.25, 0.025, 2.00);
	assert_hd_ok(codex_price(&p, "gpt-5.1-codex", NULL, &err), &err);
	assert_price(&p, 1.25, 0.125, 10.00);
	assert_hd_ok(codex_price(&p, "o4-mini", NULL, &err), &err);
	assert_price(&p, 1.10, 0.275, 4.40);
	/* an unknown model, or none: SPEC 8.2's $3 / $15 */
	assert_hd_ok(codex_price(&p, "fake-model", NULL, &err), &err);
	assert_price(&p, 3, 3, 15);
	assert_hd_ok(codex_price(&p, NULL, NULL, &err), &err);
	assert_price(&p, 3, 3, 15);
	/* a router's vendor/model id: the model after the last '/' */
	assert_hd_ok(codex_price(&p, "openai/gpt-5-mini", NULL, &err), &err);
	assert_price(&p, 0.25, 0.025, 2.00);
	assert_hd_ok(codex_price(&p, "openrouter/openai/o4-mini", NULL, &err),
	    &err);
	assert_price(&p, 1.10, 0.275, 4.40);
	assert_hd_ok(codex_price(&p, "acme/fake-model", NULL, &err), &err);
	assert_price(&p, 3, 3, 15);
	assert_hd_ok(codex_price(&p, "openai/", NULL, &err), &err);
	assert_price(&p, 3, 3, 15);
	/* a prefix is a prefix: "gpt-" alone is no model */
	assert_hd_ok(codex_price(&p, "gpt-", NULL, &err), &err);
	assert_price(&p, 3, 3, 15);
	/* the list is the adapter's: a runtime without one (claude-code,
	 * which reports its cost), or none, prices every model at it */
	assert_hd_ok(hd_runtime__price(
			 &p, &hd_runtime__claude, "gpt-5", NULL, &err),
	    &err);
	assert_price(&p, 3, 3, 15);
	assert_hd_ok(hd_runtime__price(&p, NULL, "gpt-5", NULL, &err), &err);
	assert_price(&p, 3, 3, 15);
}

static void
test_price__cost_in_microcents(void **state)
{
	hd_price p = {3, 0.3, 15};
	hd_runtime_cost c;

	(void)state;
	/* a million tokens in at $3 is $3: 300,000,000 micro-cents */
	hd_runtime__price_cost(&c, &p, 1000000, 0, 0);
	assert_int_equal(c.microcents, 300000000);
	assert_true(c.usd == 3.0);
	assert_int_equal(c.estimated, 1);
	/* 1000 in of which 400 cached, 200 out */
	hd_runtime__price_cost(&c, &p, 1000, 400, 200);
	assert_int_equal(c.microcents, 600 * 300 + 400 * 30 + 200 * 1500);
	assert_int_equal(c.input_tokens, 1000);
	assert_int_equal(c.output_tokens, 200);
	/* more cached than input is all cached; negatives are none */
	hd_runtime__price_cost(&c, &p, 100, 500, -7);
	assert_int_equal(c.microcents, 100 * 30);
	assert_int_equal(c.output_tokens, 0);
	hd_runtime__price_cost(&c, &p, -1, -1, 0);
	assert_int_equal(c.microcents, 0);
	assert_int_equal(c.input_tokens, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_price__from_the_config),
	    cmocka_unit_test(test_price__bad_config_is_refused),
	    cmocka_unit_test(test_price__the_table_and_the_default),
	    cmocka_unit_test(test_price__cost_in_microcents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
