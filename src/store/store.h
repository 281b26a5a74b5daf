/*
 * store.h (private) -- what domain modules use to reach SQLite. Surfaces
 * never include this file: they call domain functions.
 */
#ifndef HD_STORE_PRIVATE_H
#define HD_STORE_PRIVATE_H

#include <stdint.h>

#include <sqlite3.h>

#include <huddle/store.h>

/* The raw connection, for the domain modules that own tables. */
sqlite3 *hd_store_db(hd_store *st);

/*
 * A cached prepared statement for sql (which must be a string literal or
 * otherwise outlive st). The statement comes back reset with bindings
 * cleared; the caller steps it and should hd_store_reset() it when done so
 * no read snapshot stays open. Never use one statement re-entrantly.
 */
int hd_store_prepare(hd_store *st, sqlite3_stmt **out, const char *sql,
    hd_err *err);
void hd_store_reset(sqlite3_stmt *stmt);

/*
 * Map a SQLite result code to an hd code and set err: busy -> HD_EBUSY,
 * unique/primary-key violation -> HD_EEXISTS, anything else -> HD_ERR with
 * sqlite3_errmsg().
 */
int hd_store_sqlerr(hd_store *st, int src, hd_err *err);

/* A random version-4 UUID for a row id, like hd_uuid() but drawn from a
 * per-connection pool of OpenSSL random bytes (refilled in blocks, and
 * after a fork). Ids need to be unique, not secret; secrets still come
 * from hd_random_bytes. */
int hd_store_uuid(hd_store *st, char out[37], hd_err *err);

/* A transaction body; may run more than once (on busy retry), so it must
 * only touch the database and its own payload. */
typedef int (*hd_store_txn_fn)(hd_store *st, void *payload, hd_err *err);

/*
 * Run fn inside BEGIN IMMEDIATE; commit when it returns >= 0, roll back
 * otherwise. SQLITE_BUSY anywhere is retried with jittered backoff until the
 * busy budget is spent, then HD_EBUSY `database is busy: gave up after N ms`.
 * Called inside an open transaction, fn simply runs in it (no nesting).
 */
int hd_store_write(hd_store *st, hd_store_txn_fn fn, void *payload,
    hd_err *err);

/* Like hd_store_write but a deferred (read) transaction: one snapshot. */
int hd_store_read(hd_store *st, hd_store_txn_fn fn, void *payload,
    hd_err *err);

/* 1 while a transaction opened by hd_store_write/read is running. */
int hd_store_in_txn(const hd_store *st);

/*
 * The store's data version into *out: it changes with every commit of a
 * write, by this connection or any other. Taken right after a write
 * committed and again inside a later transaction, the two are equal
 * exactly when nothing was written to the store in between. -1 when
 * SQLite cannot say (then nothing can be assumed).
 */
int hd_store_data_version(hd_store *st, uint32_t *out);

/* Run a statement with no result rows, for small fixed SQL. */
int hd_store_exec(hd_store *st, const char *sql, hd_err *err);

/* Run one statement (no bound parameters) through the statement cache:
 * for small SQL run often, like SAVEPOINT and RELEASE. */
int hd_store_step1(hd_store *st, const char *sql, hd_err *err);

/* Step a prepared statement run for its effect (a first row, if any, is
 * not read) and reset it: 0, or the SQLite error in err. */
int hd_store_step_done(hd_store *st, sqlite3_stmt *s, hd_err *err);

/* 1 when a table of that name exists. */
int hd_store_table_exists(hd_store *st, const char *name);

/* Helpers for binding optional text: NULL binds SQL NULL. */
int hd_store_bind_text(sqlite3_stmt *stmt, int idx, const char *s);

/* A malloc'd copy of a text column, or NULL for SQL NULL. */
char *hd_store_col_dup(sqlite3_stmt *stmt, int col);

/* The "huddle" VFS (vfs.c): the unix VFS with each commit's WAL frames
 * written in one call. Registered once before the first open; the name to
 * open stores with, or NULL for SQLite's default (not registered, or
 * HUDDLE_NO_WAL_BATCH set). */
void hd_store__vfs_register(void);
const char *hd_store__vfs_name(void);
/* The errno of this thread's last failed write, 0 if none; clears it. */
int hd_store__vfs_take_errno(void);

/* The change watcher of one connection (watch.c): created on first wait,
 * freed by hd_store_close. */
typedef struct hd_store_watch hd_store_watch;
hd_store_watch **hd_store__watch_slot(hd_store *st);
void hd_store__watch_free(hd_store_watch *w);

/* The writers' queue (queue.c): a process-shared mutex that hd_store_write
 * holds around each write transaction so waiting writers are handed the
 * lock at once. NULL (no queue) is a valid handle for every call. */
typedef struct hd_store_queue hd_store_queue;
hd_store_queue *hd_store__queue_open(const char *home);
void hd_store__queue_close(hd_store_queue *q);
/* 0 once the mutex is held; -1 when it was not taken by deadline_us (a
 * CLOCK_MONOTONIC time in microseconds, as hd_mono_us) or there is no
 * queue: the writer then goes on without it. */
int hd_store__queue_enter(hd_store_queue *q, int64_t deadline_us);
void hd_store__queue_leave(hd_store_queue *q);

/* The store's worker thread (worker.c): checkpoints off the writer's
 * path, handed over by the WAL hook at HD_CKPT_FRAMES (inline past
 * HD_CKPT_BEHIND). NULL (no worker) is a valid handle: every checkpoint
 * is then inline. */
#define HD_CKPT_FRAMES 1000 /* SQLite's own automatic threshold */
#define HD_CKPT_BEHIND (10 * HD_CKPT_FRAMES)
typedef struct hd_store_worker hd_store_worker;
hd_store_worker *hd_store__worker_new(const char *path, const char *vfs);
int hd_store__ckpt_hook(void *arg, sqlite3 *db, const char *name, int frames);
void hd_store__worker_free(hd_store_worker *w);

/*
 * Values derived from stored text, kept per connection (memo.c): a value
 * put under key with the text it was derived from comes back from get only
 * while the text given is byte for byte that text, so a hit is what
 * deriving again would give. The memo owns its values (freed with free_fn)
 * and lends one until the next call on the same store. Bounded at
 * HD_STORE_MEMO_MAX entries. Never shared between connections.
 */
#define HD_STORE_MEMO_MAX 1024
typedef void (*hd_store_memo_free_fn)(void *value);
const void *hd_store_memo_get(hd_store *st, const char *key, const char *text);
void hd_store_memo_put(hd_store *st, const char *key, const char *text,
    void *value, hd_store_memo_free_fn free_fn);
typedef struct hd_store_memo hd_store_memo;
hd_store_memo *hd_store__memo_new(void);
const void *hd_store__memo_get(
    hd_store_memo *m, const char *key, const char *text);
void hd_store__memo_put(hd_store_memo *m, const char *key, const char *text,
    void *value, hd_store_memo_free_fn free_fn);
void hd_store__memo_free(hd_store_memo *m);

/* The migrations, oldest first: migration i takes user_version i to i+1. */
extern const char *const hd_store_migrations[];
extern const int hd_store_nmigrations;

#endif
