/*
 * test-watch.c -- the store's paced change wait
 * (hd_store_wait_change_paced, watch.c (7)): under a stream of commits
 * from another connection it reports at most one change per gap and the
 * last commit is not lost; a commit made in the gap is reported when the
 * gap ends, with a cursor that covers it; the timeout bounds the gap too.
 * No upper timing bounds: the assertions are on ordering and counts (the
 * gap is a lower bound the wait itself guarantees), and waits are bounded
 * generously only so a lost wake-up fails instead of hanging.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "testutil.h"

#define WAIT_MS 30000 /* a generous bound, never a timing claim */
#define STREAM_COMMITS 200
#define STREAM_GAP_MS 20

/* The value of kv key "seq" as a number (0 when absent). */
static long
read_seq(hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	char *v = NULL;
	long n;

	assert_hd_ok(hd_store_kv_get(&v, st, "seq", &err), &err);
	n = v != NULL ? strtol(v, NULL, 10) : 0;
	free(v);
	return n;
}

static void
put_seq(hd_store *st, long n)
{
	hd_err err = HD_ERR_INIT;
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", n);
	assert_hd_ok(hd_store_kv_put(st, "seq", buf, &err), &err);
}

struct writer {
	char home[256];
	int commits;          /* seq = 1..commits, one commit each */
	int pause_us;         /* between commits */
	int64_t last_done_us; /* hd_mono_us() once the last one committed */
	int failed;
};

static void *
writer_main(void *arg)
{
	struct writer *wr = arg;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	char buf[32];
	int i;

	if (hd_store_open(&st, wr->home, &err) < 0) {
		wr->failed = 1;
		return NULL;
	}
	for (i = 1; i <= wr->commits; i++) {
		snprintf(buf, sizeof(buf), "%d", i);
		if (hd_store_kv_put(st, "seq", buf, &err) < 0) {
			wr->failed = 1;
			break;
		}
		if (i < wr->commits)
			hd_sleep_us(wr->pause_us);
	}
	wr->last_done_us = hd_mono_us();
	hd_store_close(st);
	return NULL;
}

static void
test_watch__paced_wait_looks_once_per_gap_under_a_stream_of_commits(
    void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	struct writer wr = {.commits = STREAM_COMMITS, .pause_us = 1000};
	int64_t look_us[STREAM_COMMITS + 1], last;
	long seen[STREAM_COMMITS + 1];
	uint64_t cur;
	pthread_t t;
	int looks = 0, i,
	    exact = strcmp(hd_store_backend_name(fx->st), "sqlite") == 0;

	snprintf(wr.home, sizeof(wr.home), "%s", fx->home);
	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
	assert_int_equal(pthread_create(&t, NULL, writer_main, &wr), 0);
	for (;;) {
		/* a look: the time, the cursor, then the read */
		last = hd_mono_us();
		assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
		assert_true(looks <= STREAM_COMMITS);
		look_us[looks] = last;
		seen[looks] = read_seq(fx->st);
		looks++;
		if (seen[looks - 1] == STREAM_COMMITS)
			break;
		/* nothing may be lost: every wait ends in a change */
		assert_int_equal(hd_store_wait_change_paced(fx->st, &cur,
				     WAIT_MS, STREAM_GAP_MS, last, &err),
		    1);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(wr.failed);
	for (i = 1; i < looks; i++) {
		/* each look after a change saw something new (on SQLite; on
		 * PostgreSQL a commit's notification may come after the read
		 * already saw it, one harmless extra look, store.h)... */
		if (exact)
			assert_true(seen[i] > seen[i - 1]);
		else
			assert_true(seen[i] >= seen[i - 1]);
		/* ...and none came sooner than the gap after the one before */
		assert_true(look_us[i] - look_us[i - 1] >=
			    (int64_t)STREAM_GAP_MS * 1000);
	}
	/* so the count: one look per gap over the stream, plus the first */
	assert_true(looks <= 1 + (look_us[looks - 1] - look_us[0]) /
				     ((int64_t)STREAM_GAP_MS * 1000));
	/* and the last commit was reported, not left for a later one */
	assert_int_equal(seen[looks - 1], STREAM_COMMITS);
	if (exact)
		assert_int_equal(hd_store_wait_change(fx->st, &cur, 0, &err), 0);
	else {
		/* on PostgreSQL the last commit's notification may still come
		 * after the read that saw it (store.h): a wake-up or so, then
		 * none, and nothing new to see */
		for (i = 0; i < STREAM_COMMITS &&
			    hd_store_wait_change(fx->st, &cur, 0, &err) == 1;
		     i++)
			;
		assert_true(i < STREAM_COMMITS);
		assert_int_equal(read_seq(fx->st), STREAM_COMMITS);
	}
}

static void
test_watch__a_commit_in_the_gap_is_reported_when_it_ends(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	struct writer wr = {.commits = 2, .pause_us = 50000};
	hd_store *other = NULL;
	int64_t last, gap_end;
	uint64_t cur, before;
	pthread_t t;
	int reports = 0;
	const int gap_ms = 200;

	/* a commit before the wait, inside the gap: held until it ends */
	assert_hd_ok(hd_store_open(&other, fx->home, &err), &err);
	last = hd_mono_us();
	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
	put_seq(other, 7);
	assert_int_equal(hd_store_wait_change_paced(
			     fx->st, &cur, WAIT_MS, gap_ms, last, &err),
	    1);
	assert_true(hd_mono_us() - last >= (int64_t)gap_ms * 1000);
	assert_int_equal(read_seq(fx->st), 7);
	before = cur;
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 0, &err), 0);
	assert_true(cur == before);
	hd_store_close(other);

	/* commits while the waiter already sits in the gap: the cursor it
	 * returns is taken when the gap ends, so it covers them */
	snprintf(wr.home, sizeof(wr.home), "%s", fx->home);
	put_seq(fx->st, 0);
	last = hd_mono_us();
	gap_end = last + (int64_t)gap_ms * 1000;
	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
	assert_int_equal(pthread_create(&t, NULL, writer_main, &wr), 0);
	while (read_seq(fx->st) < 2) {
		assert_int_equal(hd_store_wait_change_paced(
				     fx->st, &cur, WAIT_MS, gap_ms, last, &err),
		    1);
		reports++;
		last = hd_mono_us();
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(wr.failed);
	/* both commits done before the gap ended (the usual case): the one
	 * report covers both; else a later one may have been needed */
	if (wr.last_done_us < gap_end)
		assert_int_equal(reports, 1);
	else
		assert_true(reports >= 1 && reports <= 2);
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 0, &err), 0);
}

static void
test_watch__the_timeout_bounds_the_gap_and_loses_nothing(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_store *other = NULL;
	int64_t last;
	uint64_t cur, before;

	/* nothing committed: the wait times out */
	last = hd_mono_us();
	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
	before = cur;
	assert_int_equal(
	    hd_store_wait_change_paced(fx->st, &cur, 50, 20, last, &err), 0);
	assert_true(cur == before);

	/* a change inside a gap longer than the timeout: 0, cursor kept
	 * (a wait that ignored the timeout would take a minute and say 1) */
	assert_hd_ok(hd_store_open(&other, fx->home, &err), &err);
	last = hd_mono_us();
	put_seq(other, 1);
	assert_int_equal(
	    hd_store_wait_change_paced(fx->st, &cur, 0, 60000, last, &err), 0);
	assert_true(cur == before);
	assert_int_equal(
	    hd_store_wait_change_paced(fx->st, &cur, 50, 60000, last, &err), 0);
	assert_true(cur == before);
	/* not lost: with no gap (the last look found work) it is reported
	 * at once */
	assert_int_equal(
	    hd_store_wait_change_paced(fx->st, &cur, WAIT_MS, 0, last, &err),
	    1);
	assert_true(cur != before);
	assert_int_equal(read_seq(fx->st), 1);
	/* and a gap already over when the change comes holds nothing */
	last = hd_mono_us() - 60000 * (int64_t)1000;
	put_seq(other, 2);
	assert_int_equal(hd_store_wait_change_paced(
			     fx->st, &cur, WAIT_MS, 60000, last, &err),
	    1);
	assert_int_equal(read_seq(fx->st), 2);
	hd_store_close(other);
}

#define T(f)                                                                   \
	cmocka_unit_test_setup_teardown(                                       \
	    f, hd_fixture_setup, hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_watch__paced_wait_looks_once_per_gap_under_a_stream_of_commits),
	    T(test_watch__a_commit_in_the_gap_is_reported_when_it_ends),
	    T(test_watch__the_timeout_bounds_the_gap_and_loses_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
