/*
 * test-plan.c -- hd_runtime_resolve_integration (SPEC 9.2) over every
 * combination of declared capabilities, misdeclared ones included, plus
 * named rows that spell the rules out.
 */
#include <string.h>

#include <huddle/runtime.h>

#include "testutil.h"

static const hd_runtime_class classes[] = {HD_RUNTIME_WRAPPED_ONESHOT,
    HD_RUNTIME_NATIVE, HD_RUNTIME_CONNECTED_SUBSTRATE};
static const hd_home_scope scopes[] = {
    HD_HOME_SCOPE_NONE, HD_HOME_SCOPE_PER_IDENTITY, HD_HOME_SCOPE_PER_RUN};
static const hd_native_keep keeps[] = {HD_NATIVE_NONE, HD_NATIVE_PRESERVE};
static const hd_native_channels channels[] = {
    HD_CHANNELS_NONE, HD_CHANNELS_NATIVE, HD_CHANNELS_GATEWAY};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
check(const hd_runtime_caps *caps, hd_home_kind home, int skills, int memory,
    int gateway, int needs_dir)
{
	hd_runtime_plan p = hd_runtime_resolve_integration(caps);

	assert_int_equal(p.home, home);
	assert_int_equal(p.preserve_skills, skills);
	assert_int_equal(p.preserve_memory, memory);
	assert_int_equal(p.use_gateway_channels, gateway);
	assert_int_equal(p.co_run_scheduler, 0);
	assert_int_equal(p.needs_dir, needs_dir);
}

/* Every combination: 3 classes x 3 scopes x 2 persist x 2 memory x
 * 2 skills x 3 channels x 2 schedulers = 432 rows. The expected plan is
 * the spec's wording, transcribed rule by rule. */
static void
test_plan__every_combination(void **state)
{
	hd_runtime_caps c;
	size_t row, rows = 0;

	(void)state;
	for (row = 0; row < 432; row++) {
		size_t r = row, a, b, p, m, s, ch;
		int connected, persistent;

		/* row as a mixed-radix number, one digit per field */
		memset(&c, 0, sizeof(c));
		a = r % N(classes), r /= N(classes);
		b = r % N(scopes), r /= N(scopes);
		p = r % 2, r /= 2;
		m = r % N(keeps), r /= N(keeps);
		s = r % N(keeps), r /= N(keeps);
		ch = r % N(channels), r /= N(channels);
		c.runtime_class = classes[a];
		c.native_home.scope = scopes[b];
		c.native_home.persist = (int)p;
		c.native_memory = keeps[m];
		c.native_skills = keeps[s];
		c.native_channels = channels[ch];
		c.native_scheduler = (int)(r % 2);
		connected = classes[a] == HD_RUNTIME_CONNECTED_SUBSTRATE;
		persistent = !connected &&
			     scopes[b] == HD_HOME_SCOPE_PER_IDENTITY && p == 1;
		check(&c,
		    connected    ? HD_HOME_CONNECTED
		    : persistent ? HD_HOME_PERSISTENT
				 : HD_HOME_EPHEMERAL,
		    persistent && keeps[s] == HD_NATIVE_PRESERVE,
		    persistent && keeps[m] == HD_NATIVE_PRESERVE,
		    connected && channels[ch] == HD_CHANNELS_GATEWAY,
		    !connected && scopes[b] != HD_HOME_SCOPE_NONE);
		rows++;
	}
	assert_int_equal(rows, 432);
}

static void
test_plan__omitted_caps_are_wrapped_oneshot_ephemeral(void **state)
{
	hd_runtime_caps zero;

	(void)state;
	check(NULL, HD_HOME_EPHEMERAL, 0, 0, 0, 1);
	/* a zeroed struct is wrapped-oneshot with no home */
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(zero.runtime_class, HD_RUNTIME_WRAPPED_ONESHOT);
	check(&zero, HD_HOME_EPHEMERAL, 0, 0, 0, 0);
}

static void
test_plan__named_rows(void **state)
{
	hd_runtime_caps c;

	(void)state;
	/* a native runtime with a persistent per-identity home keeps both */
	memset(&c, 0, sizeof(c));
	c.runtime_class = HD_RUNTIME_NATIVE;
	c.native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	c.native_home.persist = 1;
	c.native_memory = HD_NATIVE_PRESERVE;
	c.native_skills = HD_NATIVE_PRESERVE;
	c.native_channels = HD_CHANNELS_GATEWAY; /* not connected: ignored */
	c.native_scheduler = 1;                  /* never co-run */
	check(&c, HD_HOME_PERSISTENT, 1, 1, 0, 1);

	/* misdeclared: preserve with a per-run home degrades to nothing */
	c.native_home.scope = HD_HOME_SCOPE_PER_RUN;
	check(&c, HD_HOME_EPHEMERAL, 0, 0, 0, 1);

	/* misdeclared: per-identity but not persisted is ephemeral too */
	c.native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	c.native_home.persist = 0;
	check(&c, HD_HOME_EPHEMERAL, 0, 0, 0, 1);

	/* persist on a per-run home is still ephemeral */
	c.native_home.scope = HD_HOME_SCOPE_PER_RUN;
	c.native_home.persist = 1;
	check(&c, HD_HOME_EPHEMERAL, 0, 0, 0, 1);

	/* preserve with no home at all: nothing kept, no directory */
	c.native_home.scope = HD_HOME_SCOPE_NONE;
	check(&c, HD_HOME_EPHEMERAL, 0, 0, 0, 0);

	/* connected substrate: home connected, nothing preserved even when
	 * declared, gateway channels only when declared gateway */
	c.runtime_class = HD_RUNTIME_CONNECTED_SUBSTRATE;
	c.native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	c.native_home.persist = 1;
	check(&c, HD_HOME_CONNECTED, 0, 0, 1, 0);
	c.native_channels = HD_CHANNELS_NATIVE;
	check(&c, HD_HOME_CONNECTED, 0, 0, 0, 0);
}

/* huddle's tools: every plan has them unless the caps say none, whatever
 * else they declare; omitted caps have them. */
static void
test_plan__huddle_tools(void **state)
{
	hd_runtime_caps c;
	size_t a;

	(void)state;
	assert_int_equal(hd_runtime_resolve_integration(NULL).huddle_tools, 1);
	for (a = 0; a < N(classes); a++) {
		memset(&c, 0, sizeof(c));
		c.runtime_class = classes[a];
		assert_int_equal(
		    hd_runtime_resolve_integration(&c).huddle_tools, 1);
		c.huddle_tools = HD_TOOLS_NONE;
		assert_int_equal(
		    hd_runtime_resolve_integration(&c).huddle_tools, 0);
	}
}

static void
test_plan__builtin_adapters(void **state)
{
	const hd_runtime_adapter *rt;
	hd_runtime_caps c;
	hd_err err = HD_ERR_INIT;

	(void)state;
	assert_hd_ok(hd_runtime_find(&rt, "scripted", &err), &err);
	rt->capabilities(&c);
	check(&c, HD_HOME_EPHEMERAL, 0, 0, 0, 0); /* no directory */
	assert_hd_ok(hd_runtime_find(&rt, "exec", &err), &err);
	rt->capabilities(&c);
	check(&c, HD_HOME_PERSISTENT, 0, 0, 0, 1);
	assert_string_equal(
	    hd_runtime_home_kind_name(HD_HOME_PERSISTENT), "persistent");
	assert_string_equal(
	    hd_runtime_home_kind_name(HD_HOME_EPHEMERAL), "ephemeral");
	assert_string_equal(
	    hd_runtime_home_kind_name(HD_HOME_CONNECTED), "connected");
	/* openclaw: a connected substrate on the Gateway's channels, with no
	 * huddle tools (openclaw.c (4)) */
	assert_hd_ok(hd_runtime_find(&rt, "openclaw", &err), &err);
	rt->capabilities(&c);
	check(&c, HD_HOME_CONNECTED, 0, 0, 1, 0);
	assert_int_equal(hd_runtime_resolve_integration(&c).huddle_tools, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan__every_combination),
	    cmocka_unit_test(
		test_plan__omitted_caps_are_wrapped_oneshot_ephemeral),
	    cmocka_unit_test(test_plan__named_rows),
	    cmocka_unit_test(test_plan__huddle_tools),
	    cmocka_unit_test(test_plan__builtin_adapters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
