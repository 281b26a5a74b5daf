/*
 * store.h (private) -- what domain modules use to reach the database: the
 * statement interface. Surfaces never include this file: they call domain
 * functions. Nothing here names the backend: no module outside src/store/
 * includes sqlite3.h (src/store/sqlite.h is the SQLite backend's own
 * header, for the store's files and for tests that inspect the file).
 *
 * A statement is prepared once per connection and cached; its SQL uses
 * positional placeholders (`?` or `?N`). The life of one use:
 *
 *	hd_store_prepare(st, &s, "SELECT ... WHERE id = ?", err);
 *	hd_stmt_bind_int(s, 1, id);		bind by position, from 1
 *	while ((rc = hd_stmt_step(s)) == HD_ROW)
 *		use hd_stmt_int(s, 0), hd_stmt_text(s, 1) ...
 *	hd_store_reset(s);			always, so no snapshot stays
 *	if (rc != HD_DONE)
 *		return hd_store_sqlerr(st, rc, err);
 */
#ifndef HD_STORE_PRIVATE_H
#define HD_STORE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <huddle/store.h>

/* A prepared statement of one connection (opaque). */
typedef struct hd_stmt hd_stmt;

/* hd_stmt_step's answers besides an error code: a row is ready / the
 * statement has run to completion. Any other value is a backend error
 * code for hd_store_sqlerr. */
#define HD_ROW 100
#define HD_DONE 101

/*
 * A cached prepared statement for sql (which must be a string literal or
 * otherwise outlive st). The statement comes back reset with bindings
 * cleared; the caller steps it and should hd_store_reset() it when done so
 * no read snapshot stays open. Never use one statement re-entrantly.
 */
int hd_store_prepare(hd_store *st, hd_stmt **out, const char *sql,
    hd_err *err);
void hd_store_reset(hd_stmt *stmt);

/*
 * Bind by position (the first placeholder is 1). Text and blobs are not
 * copied: they must stay valid until the statement is reset (the usual
 * case: a caller's argument). A NULL text or blob binds SQL NULL.
 * hd_stmt_bind_textn takes a byte length (-1: up to the NUL);
 * hd_stmt_bind_text_copy copies, for text that dies before the step.
 */
void hd_stmt_bind_text(hd_stmt *s, int idx, const char *v);
void hd_stmt_bind_textn(hd_stmt *s, int idx, const char *v, int n);
void hd_stmt_bind_text_copy(hd_stmt *s, int idx, const char *v);
void hd_stmt_bind_int(hd_stmt *s, int idx, int64_t v);
void hd_stmt_bind_null(hd_stmt *s, int idx);
void hd_stmt_bind_blob(hd_stmt *s, int idx, const void *p, size_t n);

/* Run to the next row: HD_ROW, HD_DONE, or an error code for
 * hd_store_sqlerr (the statement should then be reset). */
int hd_stmt_step(hd_stmt *s);

/*
 * Columns of the current row, from 0. hd_stmt_text and hd_stmt_blob lend
 * memory that lives until the next step or reset; text is NULL for SQL
 * NULL. hd_stmt_int is 0 for SQL NULL: tell the two apart with
 * hd_stmt_is_null.
 */
int64_t hd_stmt_int(hd_stmt *s, int col);
double hd_stmt_double(hd_stmt *s, int col); /* a REAL (bm25's rank) */
const char *hd_stmt_text(hd_stmt *s, int col);
const void *hd_stmt_blob(hd_stmt *s, int col, size_t *len);
int hd_stmt_is_null(hd_stmt *s, int col);

/* Rows changed by the last INSERT, UPDATE or DELETE run on st, and the id
 * of the row the last INSERT on st made (its INTEGER PRIMARY KEY). */
int64_t hd_store_changes(hd_store *st);
int64_t hd_store_last_id(hd_store *st);

/*
 * Map a backend result code to an hd code and set err: busy -> HD_EBUSY,
 * unique/primary-key violation -> HD_EEXISTS, read-only -> HD_EREFUSED,
 * anything else -> HD_ERR with the database's own message.
 */
int hd_store_sqlerr(hd_store *st, int src, hd_err *err);

/*
 * Where the two backends' SQL truly differs (full-text search: SQLite's
 * FTS5 against PostgreSQL's tsvector), the module writes both texts and
 * runs the one this returns: sqlite_sql on SQLite, pg_sql on PostgreSQL.
 * Both must be string literals (or outlive st), like any statement's
 * SQL. The module never learns which backend ran it.
 */
const char *hd_store_dialect(
    const hd_store *st, const char *sqlite_sql, const char *pg_sql);

/* A random version-4 UUID for a row id, like hd_uuid() but drawn from a
 * per-connection pool of OpenSSL random bytes (refilled in blocks, and
 * after a fork). Ids need to be unique, not secret; secrets still come
 * from hd_random_bytes. */
int hd_store_uuid(hd_store *st, char out[37], hd_err *err);


/*
 * Refuse the open write transaction: however its body returns,
 * hd_store_write rolls it back and returns err's code and message
 * (HD_EBUSY is retried like any busy write). For a statement whose
 * failure must refuse the whole write even where a caller in between
 * does not look: an event exists exactly when the change it describes
 * does (events.c). The first failure wins; outside a transaction this
 * does nothing (the caller has the error).
 */
void hd_store_fail_txn(hd_store *st, const hd_err *err);

/* The failure marked on the open transaction: its code with err set to
 * it, or 0 when none is marked. */
int hd_store_txn_failure(hd_store *st, hd_err *err);



/*
 * One-call statements. A value to bind, written where the call is:
 *
 *	hd_store_run(st, err, "UPDATE t SET a = ?2 WHERE id = ?1",
 *	    HD_INT(id), HD_TEXT(name));
 *
 * binds each value by position (the first is ?1) and runs the statement
 * for its effect, as hd_store_step_done. hd_store_query binds the same
 * way and hands back the statement for the caller to step and reset;
 * hd_store_get_int reads the first column of the first row. Text and
 * blobs are not copied (they must live until the statement is reset);
 * HD_TEXT(NULL) and HD_BLOB(NULL, 0) bind SQL NULL. At least one value is
 * required: a statement with none is hd_store_step1.
 */
typedef struct hd_val {
	enum { HD_VAL_NULL, HD_VAL_INT, HD_VAL_TEXT, HD_VAL_BLOB } kind;
	int64_t i;
	const void *p;
	int64_t n; /* text: byte length, -1 up to the NUL; blob: its size */
} hd_val;

#define HD_INT(v) ((hd_val){ .kind = HD_VAL_INT, .i = (int64_t)(v) })
#define HD_TEXT(v) ((hd_val){ .kind = HD_VAL_TEXT, .p = (v), .n = -1 })
#define HD_TEXTN(v, len)                                              \
	((hd_val){ .kind = HD_VAL_TEXT, .p = (v), .n = (int64_t)(len) })
#define HD_BLOB(v, len)                                               \
	((hd_val){ .kind = HD_VAL_BLOB, .p = (v), .n = (int64_t)(len) })
#define HD_NULL ((hd_val){ .kind = HD_VAL_NULL })
/* An integer when present is true, else SQL NULL (optional columns). */
#define HD_INT_OR_NULL(present, v)                                    \
	((present) ? HD_INT(v) : HD_NULL)

#define HD_VALS(...) (const hd_val[]){ __VA_ARGS__ }
#define HD_NVALS(...) (sizeof(HD_VALS(__VA_ARGS__)) / sizeof(hd_val))

int hd_store_run_(hd_store *st, hd_err *err, const char *sql,
    const hd_val *v, size_t n);
int hd_store_query_(hd_store *st, hd_stmt **out, hd_err *err,
    const char *sql, const hd_val *v, size_t n);
int hd_store_get_int_(hd_store *st, int64_t *out, hd_err *err,
    const char *sql, const hd_val *v, size_t n);
void hd_stmt_bind_vals(hd_stmt *s, const hd_val *v, size_t n);

/* 0, or the database's error in err. */
#define hd_store_run(st, err, sql, ...)                               \
	hd_store_run_((st), (err), (sql), HD_VALS(__VA_ARGS__),       \
	    HD_NVALS(__VA_ARGS__))
/* 0 with *out prepared, bound and ready to step; or the error. */
#define hd_store_query(st, out, err, sql, ...)                        \
	hd_store_query_((st), (out), (err), (sql), HD_VALS(__VA_ARGS__), \
	    HD_NVALS(__VA_ARGS__))
/* 1 with *out the first row's first column (0 for SQL NULL), 0 when there
 * is no row (*out untouched), or the error. */
#define hd_store_get_int(st, out, err, sql, ...)                      \
	hd_store_get_int_((st), (out), (err), (sql), HD_VALS(__VA_ARGS__), \
	    HD_NVALS(__VA_ARGS__))

/*
 * Rows into a module's structs (rows.c). fill sets one element from the
 * current row, every field it owns first (so dispose can run on it
 * whatever it got to): 0, <0 when memory ran out, or (hd_store_rows
 * only) 1 to skip the row, having kept nothing of it. dispose frees what
 * an element holds, not the element. s comes from hd_store_query (or
 * prepare and bind) and is reset before these return.
 */
typedef int (*hd_row_fill_fn)(void *item, hd_stmt *s, void *ctx);
typedef void (*hd_row_dispose_fn)(void *item);

/* The first row into item: 1, 0 when there is none (item untouched), or
 * the error (`out of memory` when fill failed; item is then disposed). */
int hd_store_row(hd_store *st, hd_stmt *s, void *item, hd_row_fill_fn fill,
    hd_row_dispose_fn dispose, void *ctx, hd_err *err);

/* Every row, an element of size bytes each, into a malloc'd array: 0
 * with *items (NULL when no row was kept) and *n, or the error with
 * nothing kept (what was filled is disposed). */
int hd_store_rows(hd_store *st, hd_stmt *s, size_t size, hd_row_fill_fn fill,
    hd_row_dispose_fn dispose, void *ctx, void **items, size_t *n,
    hd_err *err);

/* Dispose n elements of size bytes and free the array (NULL: nothing). */
void hd_store_rows_free(
    void *items, size_t n, size_t size, hd_row_dispose_fn dispose);

/* Run a statement with no result rows, for small fixed SQL. */
int hd_store_exec(hd_store *st, const char *sql, hd_err *err);

/* Run one statement (no bound parameters) through the statement cache:
 * for small SQL run often, like SAVEPOINT and RELEASE. */
int hd_store_step1(hd_store *st, const char *sql, hd_err *err);

/* Step a prepared statement run for its effect (a first row, if any, is
 * not read) and reset it: 0, or the database's error in err. */
int hd_store_step_done(hd_store *st, hd_stmt *s, hd_err *err);

/* A malloc'd copy of a text column, or NULL for SQL NULL (and when out
 * of memory: callers that must tell the two apart check is_null). */
char *hd_store_col_dup(hd_stmt *stmt, int col);

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
void hd_store__worker_free(hd_store_worker *w);

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
/* The same migrations for PostgreSQL (schema_pg.c), entry for entry. */
extern const char *const hd_store_pg_migrations[];
extern const int hd_store_pg_nmigrations;

#endif
