/*
 * worker.c -- a store's worker thread: WAL checkpoints off the writer's
 * path.
 *
 * Why checkpoints. SQLite copies the WAL back into the database (a
 * checkpoint) from inside the COMMIT that takes the WAL past 1000 pages,
 * and that commit then also waits for two fsyncs. The exchange benchmark
 * measured it: about 3 ms every ~80 turns, some 40 us of every turn's
 * mean (16%), and the same stall lands on whichever room post, claim or
 * MCP call happens to cross the mark. Here the WAL hook hands the
 * checkpoint to the worker, which runs it on a connection of its own while
 * the writer goes on.
 *
 *  (1) The hook replaces SQLite's automatic checkpoint, with the same
 *      threshold (HD_CKPT_FRAMES) and the same kind (PASSIVE: it never
 *      waits for readers or writers, and never blocks them). Durability
 *      is unchanged: a commit is in the WAL when COMMIT returns, and the
 *      checkpoint still syncs the WAL before it writes the database.
 *  (2) The WAL stays bounded: a WAL past HD_CKPT_BEHIND frames (the worker
 *      fell behind, or cannot run) is checkpointed inline by the commit,
 *      as SQLite would have at HD_CKPT_FRAMES, once the worker's own
 *      checkpoint in flight (if any) is over.
 *  (3) The worker is started on first need and lives until hd_store_close,
 *      which stops and joins it before the store's own connection closes.
 *      Its connection is its alone (a connection is never shared between
 *      threads), opened on first use.
 *  (4) A forked child does not have its parent's worker: a hook or a
 *      close in another process than the one that started it checkpoints
 *      inline and leaves the worker's state alone.
 *  (5) HUDDLE_NO_BG_CHECKPOINT=1 keeps every checkpoint inline, as SQLite
 *      does by default; a worker that cannot be started does the same.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <huddle/util.h>

#include "sqlite.h"

#define HD_LOG_COMPONENT "store"
#include <huddle/log.h>

struct hd_store_worker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int started;     /* the thread runs (in process pid) */
	int inline_only; /* (5): checkpoints inline */
	int pending;     /* guarded by mu: a checkpoint was asked for */
	int running;     /* guarded by mu: the thread is checkpointing */
	int stop;        /* guarded by mu */
	pid_t pid;
	int asked; /* the hook's (one thread): WAL frames at the last ask */
	char *path;
	char *vfs; /* NULL: SQLite's default */
};

hd_store_worker *
hd_store__worker_new(const char *path, const char *vfs)
{
	hd_store_worker *w = calloc(1, sizeof(*w));
	const char *env = getenv("HUDDLE_NO_BG_CHECKPOINT");

	if (w == NULL)
		return NULL;
	if ((w->path = strdup(path)) == NULL ||
	    (vfs != NULL && (w->vfs = strdup(vfs)) == NULL)) {
		free(w->path);
		free(w);
		return NULL;
	}
	w->inline_only = env != NULL && strcmp(env, "1") == 0;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	return w;
}

static void
ckpt_run(sqlite3 *db)
{
	int src = sqlite3_wal_checkpoint_v2(
	    db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);

	/* busy: another connection is checkpointing; it does the work */
	if (src != SQLITE_OK && src != SQLITE_BUSY)
		hd_log_warn("checkpoint: %s", sqlite3_errmsg(db));
}

/* The worker's checkpoint connection. A new connection knows the file is
 * in WAL mode only once it has read it, and until then a checkpoint does
 * nothing and says it succeeded: one read first. */
static sqlite3 *
ckpt_open(const hd_store_worker *w, int *warned)
{
	sqlite3 *db = NULL;
	int src;

	src = sqlite3_open_v2(
	    w->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, w->vfs);
	if (src == SQLITE_OK)
		src = sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1",
		    NULL, NULL, NULL);
	if (src == SQLITE_OK)
		return db;
	/* tried again at the next checkpoint; meanwhile (2) bounds the WAL */
	if (!*warned)
		hd_log_warn("checkpoint: cannot open %s: %s", w->path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
	*warned = 1;
	sqlite3_close(db);
	return NULL;
}

static void *
worker_main(void *arg)
{
	hd_store_worker *w = arg;
	sqlite3 *db = NULL;
	int warned = 0;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		if (w->stop)
			break;
		if (w->pending) {
			w->pending = 0;
			w->running = 1;
			pthread_mutex_unlock(&w->mu);
			if (db == NULL)
				db = ckpt_open(w, &warned);
			if (db != NULL)
				ckpt_run(db);
			pthread_mutex_lock(&w->mu);
			w->running = 0;
			pthread_cond_broadcast(&w->cv);
			continue;
		}
		pthread_cond_wait(&w->cv, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	sqlite3_close(db);
	return NULL;
}

/* Start the worker if need be; 0 when it cannot run here (the caller does
 * without it). Called with mu held. */
static int
worker_start(hd_store_worker *w)
{
	if (w->inline_only)
		return 0;
	if (w->started)
		return w->pid == getpid(); /* (4) */
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		w->inline_only = 1;
		return 0;
	}
	w->started = 1;
	w->pid = getpid();
	return 1;
}

/* Ask the worker for a checkpoint; 0 when it cannot (the caller
 * checkpoints inline). */
static int
ckpt_ask(hd_store_worker *w)
{
	int ok;

	pthread_mutex_lock(&w->mu);
	if ((ok = worker_start(w)) != 0) {
		w->pending = 1;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

/* The WAL is past HD_CKPT_BEHIND (2): checkpoint here, once the worker's
 * checkpoint in flight is over, since two never run at once (the second
 * finds the checkpoint lock taken and does nothing). */
static void
ckpt_inline(hd_store_worker *w, sqlite3 *db)
{
	if (w != NULL && w->started && w->pid == getpid()) {
		pthread_mutex_lock(&w->mu);
		w->pending = 0;
		while (w->running)
			pthread_cond_wait(&w->cv, &w->mu);
		pthread_mutex_unlock(&w->mu);
	}
	ckpt_run(db);
}

int
hd_store__ckpt_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	hd_store_worker *w = arg;

	(void)name;
	if (w != NULL && frames < w->asked)
		w->asked = 0; /* the WAL started over */
	if (frames < HD_CKPT_FRAMES)
		return SQLITE_OK;
	if (w == NULL || w->inline_only || frames >= HD_CKPT_BEHIND)
		ckpt_inline(w, db); /* (2) */
	else if (frames >= w->asked + HD_CKPT_FRAMES) {
		if (ckpt_ask(w))
			w->asked = frames;
		else
			ckpt_run(db);
	}
	return SQLITE_OK;
}

void
hd_store__worker_free(hd_store_worker *w)
{
	if (w == NULL)
		return;
	if (w->started && w->pid == getpid()) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	if (!w->started || w->pid == getpid()) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
	free(w->path);
	free(w->vfs);
	free(w);
}
