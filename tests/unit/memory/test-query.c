/*
 * test-query.c -- the user's words as an FTS5 query (src/memory/query.c)
 * and the expiry's forms. The query is checked as text for known inputs,
 * then fuzzed: thousands of random texts built from FTS5's own syntax
 * (quotes, parentheses, NEAR, AND/OR/NOT, '*', '^', ':', '+', '-',
 * column names) and UTF-8 run as real searches must never fail but with
 * "no words".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/memory.h>
#include <huddle/util.h>

#include "testutil.h"

static void
want_query(const char *text, const char *want)
{
	hd_err err = HD_ERR_INIT;
	char *got = NULL;

	assert_hd_ok(hd_memory_fts_query(&got, text, &err), &err);
	if (strcmp(got, want) != 0)
		fail_msg("[%s]: got [%s], want [%s]", text, got, want);
	free(got);
}

static void
test_query__words_are_quoted_and_syntax_is_dropped(void **state)
{
	hd_err err = HD_ERR_INIT;
	char *got = NULL, big[4096];
	size_t i;

	(void)state;
	want_query("deploy friday", "\"deploy\" OR \"friday\"");
	want_query("\"deploy\" AND (friday OR NOT monday)",
	    "\"deploy\" OR \"AND\" OR \"friday\" OR \"OR\" OR \"NOT\" OR "
	    "\"monday\"");
	want_query("NEAR(a b, 3)", "\"NEAR\" OR \"a\" OR \"b\" OR \"3\"");
	want_query("text:secret* ^start -x +y",
	    "\"text\" OR \"secret\" OR \"start\" OR \"x\" OR \"y\"");
	want_query("Deploy deploy DEPLOY", "\"Deploy\"");
	want_query("caf\xc3\xa9 na\xc3\xafve", "\"caf\xc3\xa9\" OR \"na\xc3\xafve\"");
	/* at most HD_MEMORY_TERMS_MAX words */
	big[0] = '\0';
	for (i = 0; i < 40; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "w%zu ", i);
	assert_hd_ok(hd_memory_fts_query(&got, big, &err), &err);
	assert_non_null(strstr(got, "\"w31\""));
	assert_null(strstr(got, "\"w32\""));
	free(got);
	got = NULL;
	assert_hd_err(hd_memory_fts_query(&got, "\"()*:^ -- +", &err),
	    HD_EINVAL, "the query has no words to search for", &err);
	assert_null(got);
	assert_hd_err(hd_memory_fts_query(&got, "", &err), HD_EINVAL,
	    "the query has no words to search for", &err);
}

/* Random texts of FTS5 syntax searched for real: never an error but "no
 * words", and a fact that holds a word of the text is found. */
static void
test_query__fuzzed_syntax_never_breaks_a_search(void **state)
{
	static const char *const bits[] = {"\"", "'", "(", ")", "*", "^", ":",
	    "+", "-", "NEAR", "NEAR(", "AND", "OR", "NOT", "text", "tags",
	    "{text tags}", ",", " ", "  ", "\t", "\n", " zebra ", " deploy ",
	    "\xc3\xa9t\xc3\xa9", "\xe2\x80\x9c", "\xf0\x9f\x90\x8d", "0",
	    "42", "\\", ";", "%", "_", "rowid", "rank", "MATCH", "--", "/*",
	    NULL};
	hd_fixture *fx = *state;
	hd_fact_spec fs = {.team = "dev", .text = "a zebra can deploy"};
	hd_memory_query q = {.team = "dev", .limit = 5};
	hd_err err = HD_ERR_INIT;
	size_t nbits = 0, i, k, n;
	char text[512];
	unsigned seed = 12345;
	hd_facts l;
	int rc;

	while (bits[nbits] != NULL)
		nbits++;
	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err);
	for (i = 0; i < 3000; i++) {
		size_t used = 0;

		text[0] = '\0';
		n = 1 + (seed = seed * 1103515245u + 12345u) % 12;
		for (k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			used += (size_t)snprintf(text + used,
			    sizeof(text) - used, "%s", bits[(seed >> 8) % nbits]);
		}
		q.text = text;
		rc = hd_memory_search(&l, fx->st, &q, &err);
		if (rc == HD_EINVAL &&
		    strcmp(err.msg, "the query has no words to search for") == 0)
			continue;
		if (rc != 0)
			fail_msg("[%s]: %d %s", text, rc, err.msg);
		if ((strstr(text, " zebra ") != NULL ||
			strstr(text, " deploy ") != NULL) &&
		    l.n != 1)
			fail_msg("[%s]: %zu facts, want the zebra", text, l.n);
		hd_facts_dispose(&l);
	}
}

static void
test_query__an_expiry_is_a_duration_or_a_utc_time(void **state)
{
	hd_err err = HD_ERR_INIT;
	int64_t now = 1700000000000, t = 0;

	(void)state;
	assert_hd_ok(hd_memory_parse_expires(&t, "90s", now, &err), &err);
	assert_int_equal(t, now + 90000);
	assert_hd_ok(hd_memory_parse_expires(&t, "30m", now, &err), &err);
	assert_int_equal(t, now + 1800000);
	assert_hd_ok(hd_memory_parse_expires(&t, "12h", now, &err), &err);
	assert_int_equal(t, now + 12 * 3600000LL);
	assert_hd_ok(hd_memory_parse_expires(&t, "7d", now, &err), &err);
	assert_int_equal(t, now + 7 * 86400000LL);
	assert_hd_ok(hd_memory_parse_expires(&t, "2w", now, &err), &err);
	assert_int_equal(t, now + 14 * 86400000LL);
	assert_hd_ok(hd_memory_parse_expires(&t, "2027-01-31", now, &err),
	    &err);
	assert_int_equal(t, 1801353600000LL);
	assert_hd_ok(hd_memory_parse_expires(
			 &t, "2027-01-31T12:30:00Z", now, &err),
	    &err);
	assert_int_equal(t, 1801353600000LL + 45000000LL);
	assert_hd_err(hd_memory_parse_expires(&t, "soon", now, &err),
	    HD_EINVAL,
	    "expires must be a duration like 7d (s, m, h, d or w) or a UTC "
	    "time like 2027-01-31T12:00:00Z, not \"soon\"",
	    &err);
	assert_int_equal(hd_memory_parse_expires(&t, "0d", now, &err),
	    HD_EINVAL);
	assert_int_equal(hd_memory_parse_expires(&t, "7y", now, &err),
	    HD_EINVAL);
	assert_int_equal(hd_memory_parse_expires(&t, "-1d", now, &err),
	    HD_EINVAL);
	assert_int_equal(hd_memory_parse_expires(&t, "99999999999d", now, &err),
	    HD_EINVAL);
	assert_int_equal(hd_memory_parse_expires(&t, "2027-13-01", now, &err),
	    HD_EINVAL);
	assert_int_equal(
	    hd_memory_parse_expires(&t, "2027-01-31T12:30", now, &err),
	    HD_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query__words_are_quoted_and_syntax_is_dropped),
	    hd_fixture_test(test_query__fuzzed_syntax_never_breaks_a_search),
	    cmocka_unit_test(test_query__an_expiry_is_a_duration_or_a_utc_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
