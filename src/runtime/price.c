/*
 * price.c -- what a model's tokens cost: SPEC 8.2's estimate
 * (hd_runtime_cost_estimate), and for runtimes that report tokens but no
 * cost (codex) runtime_config.prices when given, else the runtime's own
 * price list (its adapter's `prices` row, in its own file), else SPEC
 * 8.2's default. Owns no table and no state.
 *  (1) Prices are USD per million tokens; a cost is kept in micro-cents
 *      (1 USD = 1e8), so $1 per million tokens is 100 micro-cents a
 *      token and whole-cent prices cost exact integers.
 *  (2) The longest matching prefix of the adapter's list wins
 *      ("gpt-5-mini" over "gpt-5"); a model no row names that is a
 *      router's vendor/model id (OpenRouter's "openai/gpt-5-mini") is
 *      looked up by the name after its last '/'. A list holds public
 *      list prices and
 *      is a fallback only: prices in runtime_config always win, and a
 *      cost priced here is flagged estimated.
 *  (3) Cached input tokens are part of the input count: the uncached ones
 *      are priced at input, the cached at cached (input when unset).
 *  (4) SPEC 8.2's default price is written here once: the estimate of a
 *      turn whose runtime reports no cost, and the price of a model no
 *      list names. No runtime's price is known outside its adapter.
 * Callers: runtime.c (the estimate before done), scripted.c, codex.c.
 */
#include <math.h>
#include <string.h>

#include "runtime_int.h"

/* SPEC 8.2: $3 per million input tokens, $15 per million output. */
static const hd_price default_price = {3.0, 3.0, 15.0};

static int
price_field(double *out, const json_t *prices, const char *key, int required,
    hd_err *err)
{
	const json_t *v = json_object_get(prices, key);

	if (v == NULL && !required)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0 ||
	    !isfinite(json_number_value(v)) || json_number_value(v) > 1e6)
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.prices.%s must be a number >= 0 (USD per "
		    "million tokens)",
		    key);
	*out = json_number_value(v);
	return 1;
}

/* (2): the row of the longest prefix of model into *best; 0: none */
static int
price_row(size_t *best, const hd_price_row *table, const char *model)
{
	size_t i, n;
	int found = 0;

	for (i = 0; model != NULL && table != NULL && table[i].prefix != NULL;
	     i++) {
		n = strlen(table[i].prefix);
		if (strncmp(model, table[i].prefix, n) == 0 &&
		    (!found || n > strlen(table[*best].prefix))) {
			*best = i;
			found = 1;
		}
	}
	return found;
}

int
hd_runtime__price(hd_price *out, const hd_runtime_adapter *rt,
    const char *model, const json_t *prices, hd_err *err)
{
	const hd_price_row *table = rt != NULL ? rt->prices : NULL;
	const char *key;
	json_t *v;
	size_t best = 0;
	int rc, found;

	*out = default_price;
	if (prices != NULL) {
		if (!json_is_object(prices))
			return hd_err_set(err, HD_EINVAL,
			    "runtime_config.prices must be an object: "
			    "{\"input\", \"cached\", \"output\"} in USD per "
			    "million tokens");
		json_object_foreach ((json_t *)prices, key, v)
			if (strcmp(key, "input") != 0 &&
			    strcmp(key, "cached") != 0 &&
			    strcmp(key, "output") != 0)
				return hd_err_set(err, HD_EINVAL,
				    "runtime_config.prices: unknown key "
				    "\"%.64s\": use input, cached and output",
				    key);
		if ((rc = price_field(&out->input, prices, "input", 1, err)) <
			0 ||
		    (rc = price_field(&out->output, prices, "output", 1, err)) <
			0)
			return rc;
		out->cached = out->input;
		if ((rc = price_field(&out->cached, prices, "cached", 0, err)) <
		    0)
			return rc;
		return 0;
	}
	if ((found = price_row(&best, table, model)) == 0 && model != NULL &&
	    (key = strrchr(model, '/')) != NULL)
		found = price_row(&best, table, key + 1);
	if (found)
		*out = table[best].price;
	return 0;
}

void
hd_runtime__price_cost(hd_runtime_cost *out, const hd_price *p, int64_t input,
    int64_t cached, int64_t output)
{
	double mc;

	memset(out, 0, sizeof(*out));
	if (input < 0)
		input = 0;
	if (output < 0)
		output = 0;
	if (cached < 0)
		cached = 0;
	if (cached > input)
		cached = input;
	/* (1): USD per million tokens x 100 = micro-cents per token */
	mc = ((double)(input - cached) * p->input + (double)cached * p->cached +
		 (double)output * p->output) *
	     100.0;
	out->microcents = (int64_t)llround(mc);
	out->usd = (double)out->microcents / 1e8;
	out->input_tokens = input;
	out->output_tokens = output;
	out->estimated = 1;
}

/* ---- the estimate (SPEC 8.2) ---- */

static int64_t
count_chars(const char *s, size_t len)
{
	int64_t n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

void
hd_runtime_cost_estimate(hd_runtime_cost *out, const char *prompt,
    size_t prompt_len, const char *reply, size_t reply_len)
{
	int64_t in_chars = prompt ? count_chars(prompt, prompt_len) : 0;
	int64_t out_chars = reply ? count_chars(reply, reply_len) : 0;

	/* ceil(chars / 4) tokens each way, at the default price (4): $3 per
	 * million tokens is 300 micro-cents a token, $15 is 1500 */
	hd_runtime__price_cost(
	    out, &default_price, (in_chars + 3) / 4, 0, (out_chars + 3) / 4);
}
