/*
 * test-utf8.c -- UTF-8 at the edges where text is cut or carried into
 * JSON: the longest valid prefix, a cut under a byte limit that never
 * splits a character, the scrub that makes any bytes valid, the one line
 * made of any bytes (errors, runtime statuses), and the two
 * places found by fuzzing that relied on them: an error message built
 * with "%.Ns" of a name (hd_err_set) and MCP's "Method not found" for a
 * long method name with a character across the limit (a reply with no
 * error member at all, fuzz-jsonrpc).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <huddle/err.h>
#include <huddle/util.h>
#include <mcp/mcp.h>

#include "testutil.h"

static void
test_utf8__prefix_stops_where_the_first_bad_character_starts(void **state)
{
	(void)state;
	assert_int_equal(hd_utf8_prefix("abc", 3), 3);
	assert_int_equal(hd_utf8_prefix("a\xc3\xa9z", 4), 4);      /* é */
	assert_int_equal(hd_utf8_prefix("ab\xc3", 3), 2);          /* cut */
	assert_int_equal(hd_utf8_prefix("ab\xe2\x80", 4), 2);      /* cut */
	assert_int_equal(hd_utf8_prefix("a\xffz", 3), 1);          /* stray */
	assert_int_equal(hd_utf8_prefix("a\xc0\xafz", 4), 1);      /* overlong */
	assert_int_equal(hd_utf8_prefix("a\xed\xa0\x80z", 5), 1);  /* surrogate */
	assert_int_equal(hd_utf8_prefix("\xf0\x9f\x98\x80", 4), 4); /* emoji */
	assert_int_equal(hd_utf8_prefix("", 0), 0);
	assert_true(hd_utf8_ok("a\xc3\xa9", 3));
	assert_false(hd_utf8_ok("a\xc3", 2));
}

static void
test_utf8__cut_never_splits_a_character(void **state)
{
	/* "é" is 2 bytes, "€" 3: the limit falls inside each in turn */
	const char *s = "ab\xc3\xa9\xe2\x82\xac";

	(void)state;
	assert_int_equal(hd_utf8_cut(s, 2), 2);
	assert_int_equal(hd_utf8_cut(s, 3), 2);
	assert_int_equal(hd_utf8_cut(s, 4), 4);
	assert_int_equal(hd_utf8_cut(s, 5), 4);
	assert_int_equal(hd_utf8_cut(s, 6), 4);
	assert_int_equal(hd_utf8_cut(s, 7), 7);
	assert_int_equal(hd_utf8_cut(s, 100), 7); /* shorter than the limit */
	assert_int_equal(hd_utf8_cut(s, 0), 0);
}

static void
test_utf8__scrub_replaces_each_bad_byte_and_keeps_the_rest(void **state)
{
	char a[] = "ok \xc3\xa9 \xff x \xe2\x82";
	char b[] = "plain";

	(void)state;
	hd_utf8_scrub(a);
	assert_string_equal(a, "ok \xc3\xa9 ? x ??");
	assert_true(hd_utf8_ok(a, strlen(a)));
	hd_utf8_scrub(b);
	assert_string_equal(b, "plain");
}

static void
test_utf8__line_is_scrubbed_and_has_no_control_character(void **state)
{
	char a[] = "two\nlines\x7f\t\xff \xc3\xa9";

	(void)state;
	hd_utf8_line(a);
	assert_string_equal(a, "two lines  ? \xc3\xa9");
	assert_int_equal(strlen(a), sizeof(a) - 1);
	assert_true(hd_utf8_ok(a, strlen(a)));
}

static void
test_utf8__an_error_message_is_always_valid_utf8(void **state)
{
	hd_err err = HD_ERR_INIT;
	char name[300];
	json_t *j;
	size_t i;

	(void)state;
	/* "%.9s" cuts the third "é" in two; a stray byte comes through */
	hd_err_set(&err, HD_EINVAL, "bad name \"%.9s\" or \"%s\"",
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "x\xffy");
	assert_string_equal(
	    err.msg, "bad name \"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9?\" or \"x?y\"");
	assert_non_null(j = json_string(err.msg));
	json_decref(j);
	/* a message cut by hd_err's own size, inside a character */
	for (i = 0; i + 2 < sizeof(name); i += 2)
		memcpy(name + i, "\xc3\xa9", 2);
	name[i] = '\0';
	for (i = 0; i < 2; i++) {
		hd_err_set(&err, HD_EINVAL, "%.*s%s", (int)i, "x", name);
		assert_true(hd_utf8_ok(err.msg, strlen(err.msg)));
	}
}

static void
test_utf8__method_not_found_keeps_its_error_for_any_name(void **state)
{
	hd_mcp_server *srv = NULL;
	hd_mcp_session s;
	hd_err err = HD_ERR_INIT;
	char msg[600], method[400], *reply = NULL;
	json_t *j, *e;
	size_t i, off;

	(void)state;
	assert_hd_ok(hd_mcp_server_new(&srv, &err), &err);
	/* every offset of a 3-byte character across the 100-byte limit */
	for (off = 0; off < 3; off++) {
		memset(method, 'H', off);
		for (i = off; i + 3 < 200; i += 3)
			memcpy(method + i, "\xee\x98\x95", 3);
		method[i] = '\0';
		snprintf(msg, sizeof(msg),
		    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"%s\"}", method);
		hd_mcp_session_init(&s, srv, NULL);
		hd_mcp_handle(&reply, &s, msg, strlen(msg));
		assert_non_null(reply);
		assert_non_null(j = json_loads(reply, 0, NULL));
		assert_null(json_object_get(j, "result"));
		assert_non_null(e = json_object_get(j, "error"));
		assert_int_equal(
		    json_integer_value(json_object_get(e, "code")), -32601);
		assert_non_null(strstr(json_string_value(json_object_get(
					   e, "message")),
		    "Method not found: "));
		json_decref(j);
		free(reply);
		reply = NULL;
	}
	hd_mcp_server_free(srv);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_utf8__prefix_stops_where_the_first_bad_character_starts),
		cmocka_unit_test(test_utf8__cut_never_splits_a_character),
		cmocka_unit_test(
		    test_utf8__scrub_replaces_each_bad_byte_and_keeps_the_rest),
		cmocka_unit_test(
		    test_utf8__line_is_scrubbed_and_has_no_control_character),
		cmocka_unit_test(
		    test_utf8__an_error_message_is_always_valid_utf8),
		cmocka_unit_test(
		    test_utf8__method_not_found_keeps_its_error_for_any_name),
	};
	return cmocka_run_group_tests_name("unit/util/utf8", tests, NULL, NULL);
}
