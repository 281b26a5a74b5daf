/*
 * test-buf.c -- the capped string builder: formatted appends that fit the
 * room there is, that need the buffer to grow, that cross the cap, and
 * the sticky failure that leaves the contents as they were.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>

#include "testutil.h"

static void
test_buf__printf_appends_short_and_long_texts(void **state)
{
	hd_buf b = HD_BUF_INIT(0);
	char *big, *want;
	size_t i;

	(void)state;
	hd_buf_printf(&b, "%s=%d", "turn", 7);
	assert_string_equal(hd_buf_cstr(&b), "turn=7");
	assert_int_equal(b.len, 6);
	/* longer than any room kept ahead: grows, then prints again */
	big = malloc(5001);
	want = malloc(5009);
	assert_non_null(big);
	assert_non_null(want);
	for (i = 0; i < 5000; i++)
		big[i] = (char)('a' + i % 26);
	big[5000] = '\0';
	hd_buf_printf(&b, "[%s]", big);
	memcpy(want, "turn=7[", 7);
	memcpy(want + 7, big, 5000);
	memcpy(want + 5007, "]", 2);
	assert_int_equal(b.len, 5008);
	assert_string_equal(hd_buf_cstr(&b), want);
	hd_buf_printf(&b, "%s", "");
	assert_int_equal(b.len, 5008);
	assert_false(hd_buf_failed(&b));
	free(big);
	free(want);
	hd_buf_dispose(&b);
}

static void
test_buf__printf_over_the_cap_fails_and_keeps_the_contents(void **state)
{
	hd_buf b = HD_BUF_INIT(10);
	hd_err err = HD_ERR_INIT;

	(void)state;
	hd_buf_printf(&b, "%d", 12345);
	assert_string_equal(hd_buf_cstr(&b), "12345");
	/* fits the room allocated, not the cap: refused, contents intact */
	hd_buf_printf(&b, "%s", "abcdef");
	assert_true(hd_buf_failed(&b));
	assert_int_equal(b.len, 5);
	assert_string_equal(hd_buf_cstr(&b), "12345");
	/* sticky: later appends change nothing */
	hd_buf_printf(&b, "%s", "x");
	hd_buf_puts(&b, "y");
	assert_string_equal(hd_buf_cstr(&b), "12345");
	assert_int_equal(hd_buf_error(&b, "reply", &err), HD_ETOOBIG);
	assert_string_equal(err.msg, "reply is over the limit of 10 bytes");
	assert_null(hd_buf_detach(&b));
	/* exactly at the cap is accepted */
	hd_buf_printf(&b, "%s", "0123456789");
	assert_false(hd_buf_failed(&b));
	assert_string_equal(hd_buf_cstr(&b), "0123456789");
	hd_buf_dispose(&b);
}

static void
test_buf__detach_hands_over_what_printf_wrote(void **state)
{
	hd_buf b = HD_BUF_INIT(0);
	char *s;

	(void)state;
	hd_buf_puts(&b, "a");
	hd_buf_printf(&b, "%c%lld", 'b', (long long)-42);
	s = hd_buf_detach(&b);
	assert_string_equal(s, "ab-42");
	free(s);
	assert_null(b.ptr);
	s = hd_buf_detach(&b); /* nothing appended: an empty string */
	assert_string_equal(s, "");
	free(s);
}

/* put_i64 prints what %lld prints, the extremes included. */
static void
test_buf__put_i64_prints_as_printf(void **state)
{
	static const int64_t v[] = {0, 1, -1, 9, 10, -10, 99, 100, 1234567890,
	    -987654321012LL, INT64_MAX, INT64_MIN, INT64_MIN + 1};
	hd_buf b = HD_BUF_INIT(0), want = HD_BUF_INIT(0);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hd_buf_reset(&b);
		hd_buf_reset(&want);
		hd_buf_puts(&b, "n=");
		hd_buf_put_i64(&b, v[i]);
		hd_buf_printf(&want, "n=%lld", (long long)v[i]);
		assert_string_equal(hd_buf_cstr(&b), hd_buf_cstr(&want));
	}
	hd_buf_dispose(&want);
	hd_buf_dispose(&b);
	/* over the cap: refused whole, as any append */
	b.max = 3;
	hd_buf_puts(&b, "ab");
	hd_buf_put_i64(&b, 42);
	assert_true(hd_buf_failed(&b));
	assert_string_equal(hd_buf_cstr(&b), "ab");
	hd_buf_dispose(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf__printf_appends_short_and_long_texts),
		cmocka_unit_test(
		    test_buf__printf_over_the_cap_fails_and_keeps_the_contents),
		cmocka_unit_test(test_buf__detach_hands_over_what_printf_wrote),
		cmocka_unit_test(test_buf__put_i64_prints_as_printf),
	};
	return cmocka_run_group_tests_name("unit/util/buf", tests, NULL, NULL);
}
