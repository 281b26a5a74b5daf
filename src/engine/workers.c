/*
 * workers.c -- the per-agent worker threads of the conversation engine
 * (conv_engine.c) and of the supervisor (supervisor.c), see workers.h.
 *  (1) At most one worker per agent in a pool: a kick finds the agent's
 *      worker that has not ended and sets its dirty flag, else starts
 *      one (after joining those that ended, which hold no lock).
 *  (2) No lost kick: the dirty flag is set and cleared under the engine's
 *      lock; a worker clears it before it drains and sleeps only while
 *      it is still clear.
 *  (3) A worker lingers idle_ms for a kick, then ends (marked done, joined
 *      by the next kick, reap or join); it ends at once when the engine
 *      stops. A store that cannot be opened is tried again every second
 *      until it opens or the engine stops.
 *  (4) The pool borrows the engine's lock, stop flag and stop condition,
 *      so the engine's own waits (pause, retry) end when it stops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers.h"

#define HD_LOG_COMPONENT "engine"
#include <huddle/log.h>
#include <huddle/util.h>

struct hd_worker {
	struct hd_worker *next;
	hd_workers *pool;
	char agent[64];
	pthread_t thread;
	pthread_cond_t cond; /* with *pool->lock */
	int dirty;           /* (2) work may be there to take */
	int done;            /* the thread ended: join it */
};

static void
worker_free(struct hd_worker *w)
{
	pthread_cond_destroy(&w->cond);
	free(w);
}

static void *
worker_main(void *arg)
{
	struct hd_worker *w = arg;
	hd_workers *p = w->pool;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	struct timespec ts;
	int rc;

	pthread_mutex_lock(p->lock);
	while (st == NULL && !*p->stopping) { /* (3) */
		pthread_mutex_unlock(p->lock);
		rc = hd_store_open(&st, p->home, &err);
		pthread_mutex_lock(p->lock);
		if (rc < 0) {
			hd_log_error("worker for %s cannot open the store: %s",
			    w->agent, err.msg);
			hd_timespec_in(&ts, 1000);
			if (!*p->stopping)
				pthread_cond_timedwait(&w->cond, p->lock, &ts);
		}
	}
	for (;;) {
		if (*p->stopping)
			break;
		if (w->dirty) {
			w->dirty = 0;
			pthread_mutex_unlock(p->lock);
			p->drain(p->owner, w->agent, st);
			pthread_mutex_lock(p->lock);
			continue;
		}
		/* (3) linger for a kick, then go */
		hd_timespec_in(&ts, p->idle_ms);
		if (pthread_cond_timedwait(&w->cond, p->lock, &ts) == ETIMEDOUT &&
		    !w->dirty)
			break;
	}
	w->done = 1;
	pthread_mutex_unlock(p->lock);
	hd_store_close(st);
	return NULL;
}

void
hd_workers_reap(hd_workers *p)
{
	struct hd_worker **pp = &p->list, *w;

	while ((w = *pp) != NULL) {
		if (!w->done) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		pthread_join(w->thread, NULL);
		worker_free(w);
	}
}

void
hd_workers_kick(hd_workers *p, const char *agent)
{
	struct hd_worker *w;
	pthread_attr_t attr;
	int rc;

	pthread_mutex_lock(p->lock);
	hd_workers_reap(p);
	if (*p->stopping)
		goto done;
	for (w = p->list; w != NULL; w = w->next)
		if (strcmp(w->agent, agent) == 0) {
			w->dirty = 1;
			pthread_cond_signal(&w->cond);
			goto done;
		}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		hd_log_error("no memory for a worker for %s", agent);
		goto done;
	}
	w->pool = p;
	snprintf(w->agent, sizeof(w->agent), "%s", agent);
	w->dirty = 1;
	pthread_cond_init(&w->cond, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	rc = pthread_create(&w->thread, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		/* the work stays queued; the next kick tries again */
		hd_log_error(
		    "cannot start a worker for %s: %s", agent, strerror(rc));
		worker_free(w);
		goto done;
	}
	w->next = p->list;
	p->list = w;
done:
	pthread_mutex_unlock(p->lock);
}

int
hd_workers_busy(hd_workers *p, const char *agent)
{
	struct hd_worker *w;
	int busy = 0;

	pthread_mutex_lock(p->lock);
	for (w = p->list; w != NULL; w = w->next)
		if (strcmp(w->agent, agent) == 0 && !w->done)
			busy = 1;
	pthread_mutex_unlock(p->lock);
	return busy;
}

void
hd_workers_join(hd_workers *p)
{
	struct hd_worker *w, *next;

	pthread_mutex_lock(p->lock);
	for (w = p->list; w != NULL; w = w->next)
		pthread_cond_signal(&w->cond);
	w = p->list;
	p->list = NULL;
	pthread_mutex_unlock(p->lock);
	for (; w != NULL; w = next) {
		next = w->next;
		pthread_join(w->thread, NULL);
		worker_free(w);
	}
}

int
hd_workers_stopping(hd_workers *p)
{
	int s;

	pthread_mutex_lock(p->lock);
	s = *p->stopping;
	pthread_mutex_unlock(p->lock);
	return s;
}

void
hd_workers_pause(hd_workers *p, int64_t ms)
{
	struct timespec ts;

	hd_timespec_in(&ts, ms);
	pthread_mutex_lock(p->lock);
	if (!*p->stopping)
		pthread_cond_timedwait(p->stop_cond, p->lock, &ts);
	pthread_mutex_unlock(p->lock);
}

void
hd_workers_retry(hd_workers *p, int64_t *backoff)
{
	hd_workers_pause(p, *backoff);
	*backoff = *backoff * 2 > HD_WORKERS_RETRY_MAX_MS
		       ? HD_WORKERS_RETRY_MAX_MS
		       : *backoff * 2;
}
