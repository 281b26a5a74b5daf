/*
 * ticker.c -- callbacks run every period on a thread of their own, with a
 * store connection of their own: what keeps an exchange's room lease
 * alive while a long turn runs (exchange.c (3)).
 *
 * Why one thread per home, shared. An exchange renews its lease every
 * lease/3 while a turn runs. A thread of its own per exchange was a
 * visible share of an exchange's fixed cost (bench-exchange), for a renewal
 * that a short exchange never makes; the thread of a home is started once
 * and serves every exchange of that home in the process.
 *  (1) A ticker runs first one period after it starts, then every period
 *      after its last tick ended. Ticks of one home run one at a time, in
 *      the order they fall due.
 *  (2) hd_ticker_stop waits for a tick in flight, and after it returns
 *      no tick of that ticker runs, ever: the caller's ctx may go with it.
 *  (3) The thread's connection is its alone (a connection is never
 *      shared between threads), opened on the first tick that falls due:
 *      an exchange that never renews costs no connection. One that cannot
 *      be opened is tried again at the next tick; its ticks are skipped
 *      meanwhile.
 *  (4) A home's thread starts with its first ticker and ends once it has
 *      had none for IDLE_MS, closing its connection; a ticker started
 *      after that starts a new one. Starting a ticker wakes the thread
 *      only when the ticker falls due before the thread would wake
 *      anyway (an exchange after another, the usual case, wakes no one).
 *  (5) A forked child has none of its parent's threads: it starts with no
 *      homes, and leaves its parent's (inherited) state alone.
 * Callers: engine/exchange.c, engine/supervisor.c (the routine ticker).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <huddle/util.h>

#include "ticker.h"

#define HD_LOG_COMPONENT "ticker"
#include <huddle/log.h>

#define IDLE_MS 10000 /* (4) */

struct tick_home;

struct hd_ticker {
	hd_tick_fn fn;
	void *ctx;
	int64_t period_us;
	int64_t due_us; /* hd_mono_us() of the next tick */
	int running;    /* a tick is in flight */
	struct tick_home *home;
	pid_t pid;
	hd_ticker *next;
};

/* The thread of one home and its tickers; everything guarded by tick_mu
 * but own, which is the thread's. */
struct tick_home {
	char *home;
	pthread_cond_t cv; /* the thread waits here; so does a stop */
	hd_ticker *tickers;
	int64_t wake_us; /* when the waiting thread wakes (4) */
	hd_store *own;   /* (3) */
	struct tick_home *next;
};

static pthread_mutex_t tick_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tick_home *homes;    /* guarded by tick_mu */
static struct tick_home *orphaned; /* a parent's, after a fork (5) */
static pthread_once_t tick_once = PTHREAD_ONCE_INIT;

/* (5): the parent's homes stay reachable and untouched. */
static void
tick_atfork_child(void)
{
	struct tick_home *h;

	pthread_mutex_init(&tick_mu, NULL);
	if (homes != NULL) {
		for (h = homes; h->next != NULL; h = h->next)
			;
		h->next = orphaned;
		orphaned = homes;
		homes = NULL;
	}
}

static void
tick_init(void)
{
	pthread_atfork(NULL, NULL, tick_atfork_child);
}

/* The ticker due first, or NULL; *wait_us: how long until it is. */
static hd_ticker *
tick_due(struct tick_home *h, int64_t now, int64_t *wait_us)
{
	hd_ticker *t, *first = NULL;

	for (t = h->tickers; t != NULL; t = t->next)
		if (first == NULL || t->due_us < first->due_us)
			first = t;
	*wait_us = first != NULL ? first->due_us - now : IDLE_MS * 1000LL;
	return first;
}

/* Wait on h->cv (CLOCK_MONOTONIC) for at most wait_us; 1 when the time
 * ran out. Called with tick_mu held. */
static int
tick_wait(struct tick_home *h, int64_t wait_us)
{
	struct timespec ts;

	h->wake_us = hd_mono_us() + wait_us;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(wait_us / 1000000);
	ts.tv_nsec += (long)(wait_us % 1000000) * 1000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(&h->cv, &tick_mu, &ts) != 0;
}

/* The thread's connection (3). */
static hd_store *
tick_store(struct tick_home *h, int *warned)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;

	if (hd_store_open(&st, h->home, &err) == 0)
		return st;
	if (!*warned)
		hd_log_warn("cannot open %s: %s", h->home, err.msg);
	*warned = 1;
	return NULL;
}

static void
home_unlink(struct tick_home *h)
{
	struct tick_home **p;

	for (p = &homes; *p != NULL; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			break;
		}
}

static void *
tick_main(void *arg)
{
	struct tick_home *h = arg;
	hd_ticker *t;
	int64_t wait_us;
	int warned = 0, idle = 0;

	pthread_mutex_lock(&tick_mu);
	for (;;) {
		t = tick_due(h, hd_mono_us(), &wait_us);
		if (t == NULL && idle)
			break; /* (4) */
		if (t == NULL || wait_us > 0) {
			idle = tick_wait(h, wait_us) && t == NULL;
			continue;
		}
		idle = 0;
		t->running = 1;
		pthread_mutex_unlock(&tick_mu);
		if (h->own == NULL)
			h->own = tick_store(h, &warned);
		if (h->own != NULL)
			t->fn(t->ctx, h->own);
		pthread_mutex_lock(&tick_mu);
		t->running = 0;
		t->due_us = hd_mono_us() + t->period_us;
		pthread_cond_broadcast(&h->cv);
	}
	home_unlink(h); /* a start from now on makes a new home */
	pthread_mutex_unlock(&tick_mu);
	hd_store_close(h->own);
	pthread_cond_destroy(&h->cv);
	free(h->home);
	free(h);
	return NULL;
}

/* home's entry with its thread running, made if need be; NULL when it
 * cannot be. Called with tick_mu held. */
static struct tick_home *
home_get(const char *home)
{
	struct tick_home *h;
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t th;
	int rc;

	for (h = homes; h != NULL; h = h->next)
		if (strcmp(h->home, home) == 0)
			return h;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if ((h->home = strdup(home)) == NULL) {
		free(h);
		return NULL;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	h->wake_us = 0; /* not waiting yet: it reads the list first */
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &ta, tick_main, h);
	pthread_attr_destroy(&ta);
	if (rc != 0) {
		pthread_cond_destroy(&h->cv);
		free(h->home);
		free(h);
		return NULL;
	}
	h->next = homes;
	homes = h;
	return h;
}

hd_ticker *
hd_ticker_start(
    const char *home, int64_t period_ms, hd_tick_fn fn, void *ctx)
{
	struct tick_home *h;
	hd_ticker *t;

	pthread_once(&tick_once, tick_init);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->fn = fn;
	t->ctx = ctx;
	t->period_us = (period_ms > 0 ? period_ms : 1) * 1000;
	t->due_us = hd_mono_us() + t->period_us;
	t->pid = getpid();
	pthread_mutex_lock(&tick_mu);
	if ((h = home_get(home)) == NULL) {
		pthread_mutex_unlock(&tick_mu);
		free(t);
		return NULL;
	}
	t->home = h;
	t->next = h->tickers;
	h->tickers = t;
	if (t->due_us < h->wake_us) /* (4) */
		pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&tick_mu);
	return t;
}

void
hd_ticker_stop(hd_ticker *t)
{
	struct tick_home *h;
	hd_ticker **p;

	if (t == NULL)
		return;
	if (t->pid != getpid()) { /* a parent's ticker (5) */
		free(t);
		return;
	}
	h = t->home;
	pthread_mutex_lock(&tick_mu);
	while (t->running)
		pthread_cond_wait(&h->cv, &tick_mu);
	for (p = &h->tickers; *p != NULL; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	pthread_mutex_unlock(&tick_mu);
	free(t);
}
