/*
 * checkpoint.c -- WAL checkpoints off the writer's path.
 *
 * Why. SQLite copies the WAL back into the database (a checkpoint) from
 * inside the COMMIT that takes the WAL past 1000 pages, and that commit
 * then also waits for two fsyncs. The exchange benchmark measured it:
 * about 3 ms every ~80 turns, some 40 us of every turn's mean (16%), and
 * the same stall lands on whichever room post, claim or MCP call happens
 * to cross the mark. Here the WAL hook hands the checkpoint to a thread
 * of the store's own, which runs it on a connection of its own while the
 * writer goes on.
 *
 *  (1) The hook replaces SQLite's automatic checkpoint, with the same
 *      threshold (HD_CKPT_FRAMES) and the same kind (PASSIVE: it never
 *      waits for readers or writers, and never blocks them). Durability
 *      is unchanged: a commit is in the WAL when COMMIT returns, and the
 *      checkpoint still syncs the WAL before it writes the database.
 *  (2) The WAL stays bounded: a WAL past HD_CKPT_BEHIND frames (the thread
 *      fell behind, or cannot run) is checkpointed inline by the commit,
 *      as SQLite would have at HD_CKPT_FRAMES, once the thread's own
 *      checkpoint in flight (if any) is over.
 *  (3) The thread is started on the first checkpoint it is asked for and
 *      lives until hd_store_close, which stops and joins it before the
 *      store's own connection closes; its connection is its alone (an
 *      sqlite3 connection is never shared between threads here).
 *  (4) A forked child does not have its parent's thread: a hook or a close
 *      in another process than the one that started it checkpoints inline
 *      and leaves the thread's state alone.
 *  (5) HUDDLE_NO_BG_CHECKPOINT=1 (or a thread that cannot be created)
 *      keeps every checkpoint inline, as SQLite does by default.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/util.h>

#include "store.h"

#define HD_LOG_COMPONENT "store"
#include <huddle/log.h>

struct hd_store_ckpt {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int started;     /* the thread runs (in process pid) */
	int inline_only; /* (5) */
	int pending;     /* guarded by mu: a checkpoint was asked for */
	int running;     /* guarded by mu: the thread is checkpointing */
	int stop;        /* guarded by mu */
	pid_t pid;
	int asked; /* the hook's (one thread): WAL frames at the last ask */
	char *path;
	char *vfs; /* NULL: SQLite's default */
};

hd_store_ckpt *
hd_store__ckpt_new(const char *path, const char *vfs)
{
	hd_store_ckpt *c = calloc(1, sizeof(*c));
	const char *env = getenv("HUDDLE_NO_BG_CHECKPOINT");

	if (c == NULL)
		return NULL;
	if ((c->path = strdup(path)) == NULL ||
	    (vfs != NULL && (c->vfs = strdup(vfs)) == NULL)) {
		free(c->path);
		free(c);
		return NULL;
	}
	c->inline_only = env != NULL && strcmp(env, "1") == 0;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
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

/* The thread's connection. A new connection knows the file is in WAL mode
 * only once it has read it, and until then a checkpoint does nothing and
 * says it succeeded: one read first. */
static sqlite3 *
ckpt_open(const hd_store_ckpt *c, int *warned)
{
	sqlite3 *db = NULL;
	int src;

	src = sqlite3_open_v2(c->path, &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, c->vfs);
	if (src == SQLITE_OK)
		src = sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 1",
		    NULL, NULL, NULL);
	if (src == SQLITE_OK)
		return db;
	/* tried again at the next checkpoint; meanwhile (2) bounds the WAL */
	if (!*warned)
		hd_log_warn("checkpoint: cannot open %s: %s", c->path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
	*warned = 1;
	sqlite3_close(db);
	return NULL;
}

static void *
ckpt_main(void *arg)
{
	hd_store_ckpt *c = arg;
	sqlite3 *db = NULL;
	int warned = 0;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->pending && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop)
			break;
		c->pending = 0;
		c->running = 1;
		pthread_mutex_unlock(&c->mu);
		if (db == NULL)
			db = ckpt_open(c, &warned);
		if (db != NULL)
			ckpt_run(db);
		pthread_mutex_lock(&c->mu);
		c->running = 0;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	sqlite3_close(db);
	return NULL;
}

/* Ask the thread for a checkpoint, starting it if need be; 0 when it
 * cannot (the caller checkpoints inline). */
static int
ckpt_ask(hd_store_ckpt *c)
{
	int ok = 0;

	if (c->inline_only)
		return 0;
	pthread_mutex_lock(&c->mu);
	if (c->started && c->pid != getpid()) /* (4) */
		goto done;
	if (!c->started) {
		if (pthread_create(&c->thread, NULL, ckpt_main, c) != 0) {
			c->inline_only = 1;
			goto done;
		}
		c->started = 1;
		c->pid = getpid();
	}
	c->pending = 1;
	pthread_cond_signal(&c->cv);
	ok = 1;
done:
	pthread_mutex_unlock(&c->mu);
	return ok;
}

/* The WAL is past HD_CKPT_BEHIND (2): checkpoint here, once the thread's
 * checkpoint in flight is over, since two never run at once (the second
 * finds the checkpoint lock taken and does nothing). */
static void
ckpt_inline(hd_store_ckpt *c, sqlite3 *db)
{
	if (c != NULL && c->started && c->pid == getpid()) {
		pthread_mutex_lock(&c->mu);
		c->pending = 0;
		while (c->running)
			pthread_cond_wait(&c->cv, &c->mu);
		pthread_mutex_unlock(&c->mu);
	}
	ckpt_run(db);
}

int
hd_store__ckpt_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	hd_store_ckpt *c = arg;

	(void)name;
	if (c != NULL && frames < c->asked)
		c->asked = 0; /* the WAL started over */
	if (frames < HD_CKPT_FRAMES)
		return SQLITE_OK;
	if (c == NULL || frames >= HD_CKPT_BEHIND)
		ckpt_inline(c, db); /* (2) */
	else if (frames >= c->asked + HD_CKPT_FRAMES) {
		if (ckpt_ask(c))
			c->asked = frames;
		else
			ckpt_run(db);
	}
	return SQLITE_OK;
}

void
hd_store__ckpt_free(hd_store_ckpt *c)
{
	if (c == NULL)
		return;
	if (c->started && c->pid == getpid()) {
		pthread_mutex_lock(&c->mu);
		c->stop = 1;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thread, NULL);
	}
	if (!c->started || c->pid == getpid()) {
		pthread_mutex_destroy(&c->mu);
		pthread_cond_destroy(&c->cv);
	}
	free(c->path);
	free(c->vfs);
	free(c);
}
