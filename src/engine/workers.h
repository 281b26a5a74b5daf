/*
 * workers.h (private) -- the per-agent worker threads the conversation
 * engine (conv_engine.c) and the supervisor (supervisor.c) both run: at
 * most one thread per agent in a process, started or woken by a kick,
 * each with its own store connection, lingering idle_ms for the next kick
 * before it ends. The engine that owns the pool keeps its lock and its
 * stop flag; the pool only borrows them. Nothing outside src/engine/
 * includes this.
 */
#ifndef HD_ENGINE_WORKERS_H
#define HD_ENGINE_WORKERS_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <huddle/store.h>

/* Longest pause between two tries of what may pass (hd_workers_retry). */
#define HD_WORKERS_RETRY_MAX_MS 2000

struct hd_worker;

typedef struct hd_workers {
	pthread_mutex_t *lock;    /* the engine's: guards list and *stopping */
	pthread_cond_t *stop_cond; /* broadcast by the engine when it stops */
	const int *stopping;      /* the engine's stop flag, set under *lock */
	const char *home;         /* where each worker opens its store */
	int idle_ms;              /* how long a worker lingers for a kick */
	/* run agent's work until there is none; called without the lock */
	void (*drain)(void *owner, const char *agent, hd_store *st);
	void *owner;
	struct hd_worker *list;
} hd_workers;

/* Wake agent's worker, or start one: its dirty flag is set under the lock,
 * and it clears the flag before it looks for work, so no kick is lost.
 * Workers that ended are joined first. Nothing once the engine stops. */
void hd_workers_kick(hd_workers *p, const char *agent);

/* 1 when agent has a worker here that has not ended (running or
 * lingering). */
int hd_workers_busy(hd_workers *p, const char *agent);

/* Join the workers that ended. Called with *p->lock held. */
void hd_workers_reap(hd_workers *p);

/* After the engine set its stop flag: wake every worker and join them
 * all. Called without the lock. */
void hd_workers_join(hd_workers *p);

/* The engine's stop flag, read under its lock. */
int hd_workers_stopping(hd_workers *p);

/* Sleep ms unless the engine stops first. */
void hd_workers_pause(hd_workers *p, int64_t ms);

/* Pause *backoff ms and double it, up to HD_WORKERS_RETRY_MAX_MS: the
 * wait between two tries of a write that may pass. */
void hd_workers_retry(hd_workers *p, int64_t *backoff);

#endif
