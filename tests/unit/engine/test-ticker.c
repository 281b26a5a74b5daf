/*
 * test-ticker.c -- the engines' ticker (engine/ticker.c): callbacks run
 * every period on the home's ticker thread with a connection of its own,
 * stopped for good by hd_ticker_stop; one thread serves every ticker of a
 * home, and ends once it has had none for a while.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "engine/ticker.h"
#include "testutil.h"

typedef struct tick_log {
	hd_store *main;    /* the caller's store */
	atomic_int ticks;  /* ticks begun */
	atomic_int inside; /* a tick is running now */
	atomic_int after;  /* ticks begun after the stop returned */
	atomic_int stopped;
	atomic_int own_ok; /* every tick had a store of its own */
	int sleep_us;
	const char *key; /* written through own on every tick */
} tick_log;

static void
tick_count(void *ctx, hd_store *own)
{
	tick_log *lg = ctx;
	hd_err err = HD_ERR_INIT;

	if (atomic_load(&lg->stopped))
		atomic_fetch_add(&lg->after, 1);
	atomic_fetch_add(&lg->ticks, 1);
	atomic_store(&lg->inside, 1);
	if (own == NULL || own == lg->main ||
	    hd_store_kv_put(own, lg->key, "1", &err) != 0)
		atomic_store(&lg->own_ok, 0);
	hd_sleep_us(lg->sleep_us);
	atomic_store(&lg->inside, 0);
}

static void
log_init(tick_log *lg, hd_fixture *fx, const char *key, int sleep_us)
{
	memset(lg, 0, sizeof(*lg));
	lg->main = fx->st;
	lg->key = key;
	lg->sleep_us = sleep_us;
	atomic_store(&lg->own_ok, 1);
}

/* Wait up to 5 s for at least n ticks. */
static void
wait_ticks(tick_log *lg, int n)
{
	int waited;

	for (waited = 0; waited < 500 && atomic_load(&lg->ticks) < n; waited++)
		hd_sleep_us(10000);
	assert_true(atomic_load(&lg->ticks) >= n);
}

static void
assert_kv(hd_fixture *fx, const char *key)
{
	hd_err err = HD_ERR_INIT;
	char *v = NULL;

	assert_hd_ok(hd_store_kv_get(&v, fx->st, key, &err), &err);
	assert_string_equal(v, "1");
	free(v);
}

/* A ticker runs on a thread of its own, every period, with a connection
 * of that thread's; its stop waits for a tick in flight, and no tick
 * begins after it. A second ticker of the same home needs no new thread;
 * one started while the thread idles wakes it, and ticks. */
static void
test_ticker__ticks_on_its_thread_until_stopped(void **state)
{
	hd_fixture *fx = *state;
	hd_ticker *t, *u;
	tick_log lg;
	int threads0 = hd_thread_count();

	log_init(&lg, fx, "tick", 20000);
	assert_non_null(
	    t = hd_ticker_start(fx->home, 10, tick_count, &lg));
	wait_ticks(&lg, 3);
	assert_true(hd_thread_count() >= threads0 + 1);
	/* stopped mid-tick: the stop returns once the tick is over */
	while (!atomic_load(&lg.inside))
		hd_sleep_us(1000);
	hd_ticker_stop(t);
	assert_int_equal(atomic_load(&lg.inside), 0);
	atomic_store(&lg.stopped, 1);
	hd_sleep_us(100000);
	assert_int_equal(atomic_load(&lg.after), 0);
	assert_int_equal(atomic_load(&lg.own_ok), 1);
	assert_kv(fx, "tick");
	/* the same thread serves the next one */
	threads0 = hd_thread_count();
	hd_sleep_us(50000);
	atomic_store(&lg.stopped, 0);
	atomic_store(&lg.ticks, 0);
	assert_non_null(
	    u = hd_ticker_start(fx->home, 10, tick_count, &lg));
	assert_true(hd_thread_count() <= threads0);
	wait_ticks(&lg, 2);
	hd_ticker_stop(u);
	hd_ticker_stop(NULL); /* NULL-safe */
}

/* Two tickers at once both tick; stopping one leaves the other ticking. */
static void
test_ticker__tickers_of_one_home_share_the_thread(void **state)
{
	hd_fixture *fx = *state;
	hd_ticker *a, *b;
	tick_log la, lb;
	int threads0 = hd_thread_count(), seen;

	log_init(&la, fx, "tick-a", 0);
	log_init(&lb, fx, "tick-b", 0);
	assert_non_null(a = hd_ticker_start(fx->home, 10, tick_count, &la));
	assert_non_null(b = hd_ticker_start(fx->home, 15, tick_count, &lb));
	wait_ticks(&la, 3);
	wait_ticks(&lb, 3);
	/* one thread (and whatever its connection's store starts) */
	assert_true(hd_thread_count() <= threads0 + 2);
	hd_ticker_stop(a);
	atomic_store(&la.stopped, 1);
	seen = atomic_load(&lb.ticks);
	wait_ticks(&lb, seen + 3);
	hd_ticker_stop(b);
	assert_int_equal(atomic_load(&la.after), 0);
	assert_int_equal(atomic_load(&la.own_ok), 1);
	assert_int_equal(atomic_load(&lb.own_ok), 1);
	assert_kv(fx, "tick-a");
	assert_kv(fx, "tick-b");
}

/* A home's thread ends once it has had no ticker for a while (10 s), and
 * a ticker after that starts a new one, which ticks. */
static void
test_ticker__an_idle_thread_ends_and_a_new_one_starts(void **state)
{
	hd_fixture *fx = *state;
	hd_ticker *t;
	tick_log lg;
	int threads0 = hd_thread_count(), waited;

	log_init(&lg, fx, "tick", 0);
	assert_non_null(t = hd_ticker_start(fx->home, 10, tick_count, &lg));
	wait_ticks(&lg, 1);
	assert_true(hd_thread_count() > threads0);
	hd_ticker_stop(t);
	for (waited = 0; waited < 300 && hd_thread_count() > threads0;
	     waited++)
		hd_sleep_us(100000);
	assert_int_equal(hd_thread_count(), threads0);
	atomic_store(&lg.ticks, 0);
	assert_non_null(t = hd_ticker_start(fx->home, 10, tick_count, &lg));
	wait_ticks(&lg, 2);
	hd_ticker_stop(t);
	assert_int_equal(atomic_load(&lg.own_ok), 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, hd_fixture_setup, \
    hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    /* first: no other home's thread may end while it counts */
	    T(test_ticker__an_idle_thread_ends_and_a_new_one_starts),
	    T(test_ticker__ticks_on_its_thread_until_stopped),
	    T(test_ticker__tickers_of_one_home_share_the_thread),
	};
	return cmocka_run_group_tests_name(
	    "unit/engine/ticker", tests, NULL, NULL);
}
