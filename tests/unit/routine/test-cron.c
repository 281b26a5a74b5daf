/*
 * test-cron.c -- a routine's schedule (routine.h, routine/cron.c) against
 * a fake clock: every "now" is a fixed instant the test names, never the
 * time the test runs. The parser (valid expressions' bitsets; each
 * field's error naming the field and the token), intervals, and the next
 * fire: daily and weekday, the day-of-month/day-of-week OR rule, and DST
 * in America/New_York and Europe/Berlin (a skipped time fires once at the
 * first valid time after the gap; a repeated one fires once, at its
 * first occurrence).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <huddle/routine.h>

#include "testutil.h"

/* ms since the epoch of a UTC wall time */
static int64_t
utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	return (int64_t)timegm(&tm) * 1000;
}

static int64_t
next(const char *expr, const char *zone, int64_t after)
{
	hd_cron c;
	hd_err err = HD_ERR_INIT;
	int64_t out = 0;

	assert_hd_ok(hd_cron_parse(&c, expr, &err), &err);
	assert_int_equal(hd_cron_next(&out, &c, zone, after, &err), 1);
	return out;
}

static void
expect_next(const char *expr, const char *zone, int64_t after, int64_t want)
{
	int64_t got = next(expr, zone, after);

	if (got != want)
		fail_msg("%s in %s after %lld: got %lld, want %lld", expr,
		    zone != NULL ? zone : "UTC", (long long)after,
		    (long long)got, (long long)want);
}

static void
expect_error(const char *expr, const char *want)
{
	hd_cron c;
	hd_err err = HD_ERR_INIT;

	assert_int_equal(hd_cron_parse(&c, expr, &err), HD_EINVAL);
	if (strstr(err.msg, want) == NULL)
		fail_msg("%s: got \"%s\", want it to say \"%s\"", expr, err.msg,
		    want);
}

static void
test_parse_valid(void **state)
{
	hd_cron c;
	hd_err err = HD_ERR_INIT;

	(void)state;
	assert_hd_ok(hd_cron_parse(&c, "*/15 9-17 1,15 jan-mar mon-fri", &err),
	    &err);
	assert_true(c.minute == ((1ULL << 0) | (1ULL << 15) | (1ULL << 30) |
				    (1ULL << 45)));
	assert_int_equal(c.hour, 0x3fe00u); /* 9..17 */
	assert_int_equal(c.dom, (1u << 1) | (1u << 15));
	assert_int_equal(c.month, (1u << 1) | (1u << 2) | (1u << 3));
	assert_int_equal(c.dow, 0x3eu); /* 1..5 */
	assert_false(c.dom_any);
	assert_false(c.dow_any);
	/* 7 is Sunday; a step on a start value runs to the field's end;
	 * names in any case */
	assert_hd_ok(hd_cron_parse(&c, "5/20 0 * DEC 7,SAT", &err), &err);
	assert_true(c.minute == ((1ULL << 5) | (1ULL << 25) | (1ULL << 45)));
	assert_int_equal(c.month, 1u << 12);
	assert_int_equal(c.dow, (1u << 0) | (1u << 6));
	assert_true(c.dom_any);
	assert_false(c.dow_any);
	assert_hd_ok(hd_cron_parse(&c, "  0   0  *  *  *  ", &err), &err);
	assert_true(c.dom_any && c.dow_any);
}

static void
test_parse_errors(void **state)
{
	(void)state;
	expect_error("61 * * * *", "bad minute \"61\": use 0-59");
	expect_error("* 25 * * *", "bad hour \"25\": use 0-23");
	expect_error("* * 0 * *", "bad day-of-month \"0\": use 1-31");
	expect_error("* * 32 * *", "bad day-of-month \"32\"");
	expect_error("* * * 13 *", "bad month \"13\": use 1-12 or jan-dec");
	expect_error("* * * foo *", "bad month \"foo\"");
	expect_error("* * * * 8", "bad day-of-week \"8\": use 0-7 or sun-sat");
	expect_error("* * * * funday", "bad day-of-week \"funday\"");
	expect_error("*/0 * * * *", "bad minute \"*/0\"");
	expect_error("1,,2 * * * *", "bad minute \"1,,2\"");
	expect_error("1, * * * *", "bad minute \"1,\"");
	expect_error("5-3 * * * *", "bad minute \"5-3\"");
	expect_error("* * * *", "needs 5 fields (minute hour day-of-month "
				"month day-of-week), got 4");
	expect_error("* * * * * *", "got more than 5");
	expect_error("", "got 0");
}

static void
test_every(void **state)
{
	hd_err err = HD_ERR_INIT;
	int64_t s = 0;

	(void)state;
	assert_hd_ok(hd_routine_parse_every(&s, "15m", &err), &err);
	assert_int_equal(s, 900);
	assert_hd_ok(hd_routine_parse_every(&s, "2h", &err), &err);
	assert_int_equal(s, 7200);
	assert_hd_ok(hd_routine_parse_every(&s, "1d", &err), &err);
	assert_int_equal(s, 86400);
	assert_int_equal(hd_routine_parse_every(&s, "30s", &err), HD_EINVAL);
	assert_non_null(strstr(err.msg, "bad interval \"30s\""));
	assert_int_equal(hd_routine_parse_every(&s, "5x", &err), HD_EINVAL);
	assert_int_equal(hd_routine_parse_every(&s, "m", &err), HD_EINVAL);
	assert_int_equal(hd_routine_parse_every(&s, "400d", &err), HD_EINVAL);
}

static void
test_zones(void **state)
{
	hd_err err = HD_ERR_INIT;

	(void)state;
	assert_hd_ok(hd_tz_check("UTC", &err), &err);
	assert_hd_ok(hd_tz_check("Europe/Berlin", &err), &err);
	assert_hd_ok(hd_tz_check("America/New_York", &err), &err);
	assert_int_equal(hd_tz_check("Mars/Olympus", &err), HD_EINVAL);
	assert_non_null(strstr(err.msg, "unknown time zone \"Mars/Olympus\""));
	assert_int_equal(hd_tz_check("../../etc/passwd", &err), HD_EINVAL);
}

/* daily and weekday, in UTC and in a zone */
static void
test_daily_weekday(void **state)
{
	(void)state;
	/* 09:00 Berlin is 08:00 UTC in winter, 07:00 in summer */
	expect_next("0 9 * * *", "Europe/Berlin", utc(2026, 1, 15, 10, 0),
	    utc(2026, 1, 16, 8, 0));
	expect_next("0 9 * * *", "Europe/Berlin", utc(2026, 7, 15, 6, 0),
	    utc(2026, 7, 15, 7, 0));
	/* at the fire time itself: the next one, a day later */
	expect_next("0 9 * * *", NULL, utc(2026, 1, 15, 9, 0),
	    utc(2026, 1, 16, 9, 0));
	/* Friday 2026-01-16 after 08:30: Monday */
	expect_next("30 8 * * mon-fri", NULL, utc(2026, 1, 16, 9, 0),
	    utc(2026, 1, 19, 8, 30));
	expect_next("30 8 * * 1-5", NULL, utc(2026, 1, 17, 9, 0),
	    utc(2026, 1, 19, 8, 30));
	/* both day fields restricted: either matches (Friday Jan 2) */
	expect_next("0 0 13 * fri", NULL, utc(2026, 1, 1, 0, 0),
	    utc(2026, 1, 2, 0, 0));
	/* one restricted: only it decides */
	expect_next("0 0 13 * *", NULL, utc(2026, 1, 1, 0, 0),
	    utc(2026, 1, 13, 0, 0));
	/* a leap day */
	expect_next("0 12 29 feb *", NULL, utc(2026, 1, 1, 0, 0),
	    utc(2028, 2, 29, 12, 0));
}

static void
test_never(void **state)
{
	hd_cron c;
	hd_err err = HD_ERR_INIT;
	int64_t out = 0;

	(void)state;
	assert_hd_ok(hd_cron_parse(&c, "0 0 31 feb *", &err), &err);
	assert_int_equal(hd_cron_next(&out, &c, NULL, utc(2026, 1, 1, 0, 0),
			     &err),
	    0);
	assert_int_equal(hd_cron_next(&out, &c, "Nowhere/City",
			     utc(2026, 1, 1, 0, 0), &err),
	    HD_EINVAL);
}

/* spring forward: America/New_York 2026-03-08 02:00 EST -> 03:00 EDT
 * (07:00 UTC); Europe/Berlin 2026-03-29 02:00 CET -> 03:00 CEST (01:00
 * UTC). 02:30 does not exist: it fires once, at 03:00. */
static void
test_dst_spring(void **state)
{
	int64_t t;

	(void)state;
	t = next("30 2 * * *", "America/New_York", utc(2026, 3, 7, 12, 0));
	assert_int_equal(t, utc(2026, 3, 8, 7, 0));
	t = next("30 2 * * *", "America/New_York", t);
	assert_int_equal(t, utc(2026, 3, 9, 6, 30)); /* 02:30 EDT */
	t = next("30 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12, 0));
	assert_int_equal(t, utc(2026, 3, 29, 1, 0));
	t = next("30 2 * * *", "Europe/Berlin", t);
	assert_int_equal(t, utc(2026, 3, 30, 0, 30)); /* 02:30 CEST */
	/* every 15 minutes: 02:00-02:45 are one fire at 03:00, then 03:15 */
	t = next("*/15 * * * *", "America/New_York", utc(2026, 3, 8, 6, 45));
	assert_int_equal(t, utc(2026, 3, 8, 7, 0));
	t = next("*/15 * * * *", "America/New_York", t);
	assert_int_equal(t, utc(2026, 3, 8, 7, 15));
	/* weekday routine across the change: Monday 09:00 EDT */
	expect_next("0 9 * * mon-fri", "America/New_York",
	    utc(2026, 3, 6, 15, 0), utc(2026, 3, 9, 13, 0));
}

/* fall back: America/New_York 2026-11-01 02:00 EDT -> 01:00 EST (06:00
 * UTC); Europe/Berlin 2026-10-25 03:00 CEST -> 02:00 CET (01:00 UTC).
 * 01:30 New York (02:30 Berlin) happens twice: it fires once, the first
 * time. */
static void
test_dst_fall(void **state)
{
	int64_t t;

	(void)state;
	t = next("30 1 * * *", "America/New_York", utc(2026, 10, 31, 12, 0));
	assert_int_equal(t, utc(2026, 11, 1, 5, 30)); /* 01:30 EDT */
	t = next("30 1 * * *", "America/New_York", t);
	assert_int_equal(t, utc(2026, 11, 2, 6, 30)); /* not 06:30 Nov 1 */
	/* a server that starts during the repeated hour does not fire it
	 * again */
	expect_next("30 1 * * *", "America/New_York", utc(2026, 11, 1, 6, 10),
	    utc(2026, 11, 2, 6, 30));
	t = next("30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12, 0));
	assert_int_equal(t, utc(2026, 10, 25, 0, 30)); /* 02:30 CEST */
	t = next("30 2 * * *", "Europe/Berlin", t);
	assert_int_equal(t, utc(2026, 10, 26, 1, 30)); /* 02:30 CET */
	/* hourly: each wall hour once, so the repeated 01:00 hour is one */
	t = next("0 * * * *", "America/New_York", utc(2026, 11, 1, 4, 30));
	assert_int_equal(t, utc(2026, 11, 1, 5, 0)); /* 01:00 EDT */
	t = next("0 * * * *", "America/New_York", t);
	assert_int_equal(t, utc(2026, 11, 1, 7, 0)); /* 02:00 EST */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_valid),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_every),
	    cmocka_unit_test(test_zones),
	    cmocka_unit_test(test_daily_weekday),
	    cmocka_unit_test(test_never),
	    cmocka_unit_test(test_dst_spring),
	    cmocka_unit_test(test_dst_fall),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
