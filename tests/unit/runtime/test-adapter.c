/*
 * test-adapter.c -- adding a runtime is one adapter and one row of the
 * adapter table (runtime.c (6)): an adapter defined here, put in the
 * table's row by the test hook (hd_runtime__test_adapter), is refused
 * before and, once in the table, named in the refusals' list of runtimes,
 * accepted by agent creation (the domain, through the check the surfaces
 * hand it), its runtime_config checked by its own callback with nothing
 * written on a refusal, and its own price list used for the cost of its
 * turn (price.c). The default runtime of an agent added without one has an
 * adapter in this build.
 */
#include <string.h>

#include "testutil.h"

#include "runtime/runtime_int.h"

/* ---- the adapter: all it is, in one place ---- */

extern const hd_runtime_adapter probe_adapter;

/* Its list prices: "probe-large" and every other "probe" model. */
static const hd_price_row probe_prices[] = {
    {"probe-large", {2.0, 1.0, 8.0}},
    {"probe", {1.0, 0.5, 4.0}},
    {NULL, {0, 0, 0}},
};

static void
probe_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_WRAPPED_ONESHOT;
	out->native_home.scope = HD_HOME_SCOPE_NONE; /* no directory */
}

static int
probe_check(const json_t *cfg, hd_err *err)
{
	static const char *const keys[] = {"model", "prices", "words", NULL};
	hd_price p;
	int rc;

	if ((rc = hd_runtime__check_keys(cfg, keys, "probe", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "model", err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "words", 1, 100, err)) < 0)
		return rc;
	return hd_runtime__price(
	    &p, NULL, NULL, json_object_get(cfg, "prices"), err);
}

/* A turn of 1,000 input tokens (400 of them cached) and 500 output
 * tokens, priced as a runtime that reports no cost prices them. */
static int
probe_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config;
	hd_runtime_cost c;
	hd_price p;
	int rc;

	if ((rc = hd_runtime__price(&p, &probe_adapter,
		 hd_runtime__cfg_str(cfg, "model", NULL),
		 json_object_get(cfg, "prices"), err)) < 0)
		return rc;
	hd_runtime_emit_text(em, "probed", 6);
	hd_runtime__price_cost(&c, &p, 1000, 400, 500);
	hd_runtime_emit_cost(em, &c);
	hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
	return 0;
}

const hd_runtime_adapter probe_adapter = {
    .name = "probe",
    .label = "probe",
    .capabilities = probe_caps,
    .check_config = probe_check,
    .prices = probe_prices,
    .run = probe_run,
};

/* ---- the tests ---- */

static int
setup(void **state)
{
	int rc = hd_fixture_setup(state);

	hd_runtime__test_adapter(NULL);
	return rc;
}

static int
teardown(void **state)
{
	hd_runtime__test_adapter(NULL);
	return hd_fixture_teardown(state);
}

/* Add agent id of runtime probe with config (JSON text, or NULL) to dev,
 * checked as every surface checks it. */
static int
add_probe(hd_fixture *fx, const char *id, const char *config, hd_err *err)
{
	hd_agent_spec as = {0};
	json_t *cfg = config != NULL ? json_loads(config, 0, NULL) : NULL;
	int rc;

	as.team = "dev";
	as.id = id;
	as.runtime = "probe";
	as.runtime_config = cfg;
	as.check = hd_runtime_check_config;
	rc = hd_agent_add(NULL, fx->st, &as, err);
	json_decref(cfg);
	return rc;
}

static void
test_adapter__a_row_makes_a_runtime(void **state)
{
	hd_fixture *fx = *state;
	const hd_runtime_adapter *const *all, *rt;
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	size_t n = 0;

	hd_fixture_team(fx, "dev", "lead", NULL);
	/* without its row, no such runtime */
	assert_hd_err(add_probe(fx, "p1", NULL, &err), HD_EINVAL,
	    "runtime \"probe\" is not available in this build: use scripted, "
	    "exec, claude-code, codex, native, hermes or openclaw",
	    &err);
	hd_runtime__test_adapter(&probe_adapter);
	for (all = hd_runtime_adapters(); all[n] != NULL; n++)
		;
	assert_int_equal(n, 8);
	assert_ptr_equal(all[7], &probe_adapter);
	/* the refusals' list of runtimes is read from the table */
	assert_hd_err(hd_runtime_find(&rt, "bogus", &err), HD_EINVAL,
	    "unknown runtime \"bogus\": use scripted, exec, claude-code, "
	    "codex, native, hermes, openclaw or probe",
	    &err);
	/* its name is accepted by agent creation, its config by its check */
	assert_hd_ok(add_probe(fx, "p1", NULL, &err), &err);
	assert_hd_ok(add_probe(fx, "p2",
			 "{\"model\": \"probe-large\", \"words\": 3}", &err),
	    &err);
	assert_hd_ok(hd_agent_get(&a, fx->st, "p2", &err), &err);
	assert_string_equal(a->runtime, "probe");
	assert_string_equal(
	    json_string_value(json_object_get(a->runtime_config, "model")),
	    "probe-large");
	hd_agent_free(a);
	/* and its row out again: refused as before */
	hd_runtime__test_adapter(NULL);
	assert_hd_err(add_probe(fx, "p3", NULL, &err), HD_EINVAL,
	    "runtime \"probe\" is not available in this build: use scripted, "
	    "exec, claude-code, codex, native, hermes or openclaw",
	    &err);
}

static void
test_adapter__its_check_refuses_and_nothing_is_written(void **state)
{
	static const struct {
		const char *cfg, *want;
	} cases[] = {
	    {"{\"colour\": 1}",
		"runtime_config: unknown key \"colour\" for runtime probe"},
	    {"{\"words\": 0}",
		"runtime_config.words must be an integer from 1 to 100"},
	    {"{\"model\": \"\"}",
		"runtime_config.model must be a non-empty string"},
	    {"{\"prices\": {\"input\": -1, \"output\": 1}}",
		"runtime_config.prices.input must be a number >= 0 (USD per "
		"million tokens)"},
	    {"[1]", "runtime_config must be a JSON object"},
	};
	hd_fixture *fx = *state;
	hd_agents l;
	hd_err err = HD_ERR_INIT;
	size_t i;

	hd_fixture_team(fx, "dev", "lead", NULL);
	hd_runtime__test_adapter(&probe_adapter);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_hd_err(add_probe(fx, "p1", cases[i].cfg, &err),
		    HD_EINVAL, cases[i].want, &err);
	assert_hd_ok(hd_agent_list(&l, fx->st, "dev", &err), &err);
	assert_int_equal(l.n, 1); /* the leader only */
	hd_agents_dispose(&l);
}

/* The cost of one turn of agent id, run as an engine runs it. */
static int64_t
turn_cost(hd_fixture *fx, const char *id, int *estimated)
{
	hd_runtime_result res;
	hd_runtime_turn t = {0};
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t mc;

	assert_hd_ok(hd_agent_get(&a, fx->st, id, &err), &err);
	t.agent = a;
	t.prompt = "probe it";
	assert_hd_ok(hd_runtime_run(&res, &t, NULL, NULL, &err), &err);
	assert_int_equal(res.reason, HD_DONE_SUCCESS);
	assert_string_equal(res.text, "probed");
	mc = res.cost.microcents;
	*estimated = res.cost.estimated;
	hd_runtime_result_dispose(&res);
	hd_agent_free(a);
	return mc;
}

static void
test_adapter__its_prices_are_used(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int est = 0;

	hd_fixture_team(fx, "dev", "lead", NULL);
	hd_runtime__test_adapter(&probe_adapter);
	assert_hd_ok(
	    add_probe(fx, "big", "{\"model\": \"probe-large-2\"}", &err), &err);
	assert_hd_ok(
	    add_probe(fx, "small", "{\"model\": \"probe-mini\"}", &err), &err);
	assert_hd_ok(add_probe(fx, "other", "{\"model\": \"gpt-5\"}", &err),
	    &err);
	assert_hd_ok(add_probe(fx, "own",
			 "{\"model\": \"probe-large\", \"prices\": {\"input\": "
			 "10, \"output\": 20}}",
			 &err),
	    &err);
	/* 600 uncached + 400 cached in, 500 out, USD per million tokens x
	 * 100 micro-cents: its own list, longest prefix first */
	assert_int_equal(turn_cost(fx, "big", &est),
	    (600 * 2 + 400 * 1 + 500 * 8) * 100);
	assert_int_equal(est, 1);
	assert_int_equal(turn_cost(fx, "small", &est),
	    (600 * 1 + 200 + 500 * 4) * 100); /* 400 cached at 0.5 */
	/* a model it does not list (codex's, say): SPEC 8.2's default */
	assert_int_equal(
	    turn_cost(fx, "other", &est), (1000 * 3 + 500 * 15) * 100);
	/* the config's prices win over the list (cached at input) */
	assert_int_equal(
	    turn_cost(fx, "own", &est), (1000 * 10 + 500 * 20) * 100);
}

static void
test_adapter__the_default_runtime_has_an_adapter(void **state)
{
	const hd_runtime_adapter *rt;
	hd_err err = HD_ERR_INIT;

	(void)state;
	assert_hd_ok(
	    hd_runtime_find(&rt, HD_AGENT_RUNTIME_DEFAULT, &err), &err);
	assert_string_equal(rt->name, HD_AGENT_RUNTIME_DEFAULT);
	assert_hd_ok(hd_runtime_check_config(NULL, NULL, &err), &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_adapter__a_row_makes_a_runtime, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_adapter__its_check_refuses_and_nothing_is_written, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_adapter__its_prices_are_used, setup, teardown),
	    cmocka_unit_test(test_adapter__the_default_runtime_has_an_adapter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
