/*
 * pg.h -- the PostgreSQL backend's own header (pg.c, watch_pg.c): what
 * store.c, stmt.c and watch.c call when the store is on PostgreSQL, and
 * what tests of the backend itself need (the SQL translator). No module
 * outside src/store/ includes it; nothing here names libpq, so its
 * includers need not see libpq-fe.h.
 *
 * A process runs one backend (see hd_store__backend): the first store
 * opened decides, and the statement calls of stmt.c test that one
 * process-wide value, so SQLite's path gains one predictable branch and
 * no indirect call.
 */
#ifndef HD_STORE_PG_H
#define HD_STORE_PG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* hd_store__backend: which backend this process runs, set by the first
 * hd_store_open and never changed after. */
#define HD_STORE_BACKEND_NONE 0
#define HD_STORE_BACKEND_SQLITE 1
#define HD_STORE_BACKEND_PG 2
extern atomic_int hd_store__backend;

/* 1 when this process runs PostgreSQL: the test every statement call of
 * stmt.c makes before its SQLite call (expected false). */
static inline int
hd_store__is_pg(void)
{
	return __builtin_expect(atomic_load_explicit(&hd_store__backend,
				    memory_order_relaxed) ==
		HD_STORE_BACKEND_PG,
	    0);
}

/* Claim the process for one backend: 0, or HD_EREFUSED when the other
 * one already runs here. */
int hd_store__backend_claim(int backend, hd_err *err);

/*
 * Which backend the environment asks for: HUDDLE_STORE unset or empty ->
 * 0 (SQLite under the home); a postgres:// or postgresql:// URL -> 1
 * with *url pointing at it; anything else -> HD_EINVAL, "HUDDLE_STORE:
 * not a postgres:// URL: ...".
 */
int hd_pg_selected(const char **url, hd_err *err);

/* One PostgreSQL connection with its statement cache (opaque). */
typedef struct hd_pg hd_pg;

/* st's PostgreSQL connection, NULL on SQLite (store.c). */
hd_pg *hd_store__pg(hd_store *st);

/* Connect to url, migrate (hd_store_pg_migrations, under an advisory
 * lock) and learn the tables' generated keys. */
int hd_pg_open(hd_pg **out, const char *url, hd_err *err);
void hd_pg_close(hd_pg *pg);
int hd_pg_prepare(hd_pg *pg, hd_stmt **out, const char *sql, hd_err *err);
void hd_pg_reset(hd_stmt *s);
void hd_pg_reset_all(hd_pg *pg);
void hd_pg_bind_text(hd_stmt *s, int idx, const char *v, int n, int copy);
void hd_pg_bind_int(hd_stmt *s, int idx, int64_t v);
void hd_pg_bind_null(hd_stmt *s, int idx);
void hd_pg_bind_blob(hd_stmt *s, int idx, const void *p, size_t n);
int hd_pg_step(hd_stmt *s);
int64_t hd_pg_int(hd_stmt *s, int col);
double hd_pg_double(hd_stmt *s, int col);
const char *hd_pg_text(hd_stmt *s, int col);
const void *hd_pg_blob(hd_stmt *s, int col, size_t *len);
int hd_pg_is_null(hd_stmt *s, int col);
int64_t hd_pg_changes(hd_pg *pg);
int64_t hd_pg_last_id(hd_pg *pg);

/* The last failure on pg as an hd code and message (hd_store_sqlerr). */
int hd_pg_sqlerr(hd_pg *pg, int budget_ms, hd_err *err);
int hd_pg_exec(hd_pg *pg, const char *sql, hd_err *err);

/* A transaction: begin (write: serialized with every other writer by an
 * advisory lock, waiting at most lock_ms, what is left of the caller's
 * busy budget; a refusal names budget_ms, the whole of it), commit
 * (write: the data version bumped and the change announced in the same
 * round trip), and roll back whatever is open. */
int hd_pg_begin(
    hd_pg *pg, int write, int lock_ms, int budget_ms, hd_err *err);
int hd_pg_commit(hd_pg *pg, int write, hd_err *err);
void hd_pg_rollback(hd_pg *pg);

int hd_pg_data_version(hd_pg *pg, uint32_t *out);
int hd_pg_schema_version(hd_pg *pg, hd_err *err);

/* watch_pg.c: the change cursor and wait of store.h on PostgreSQL. */
typedef struct hd_pg_watch hd_pg_watch;
int hd_pg_change_cursor(hd_pg *pg, uint64_t *out, hd_err *err);
int hd_pg_wait_change(
    hd_pg *pg, uint64_t *cursor, int timeout_ms, hd_err *err);
void hd_pg__watch_free(hd_pg_watch *w);
/* What watch_pg.c needs of the connection: the URL to open its own
 * listening connection, the slot for it, and the backend pid whose
 * notifications are this connection's own commits. */
const char *hd_pg__url(hd_pg *pg);
hd_pg_watch **hd_pg__watch_slot(hd_pg *pg);
int hd_pg__own_pid(hd_pg *pg);

/*
 * The translator (pg_sql.c): the module's SQLite-dialect SQL as PostgreSQL
 * runs it. `?N` -> `$N`, a bare `?` -> the next `$k`; `INSERT OR IGNORE
 * INTO` -> `INSERT INTO ... ON CONFLICT DO NOTHING`; `IS ?` and `IS NOT
 * ?` -> `IS [NOT] DISTINCT FROM $n`; `INDEXED BY name` dropped; the words
 * of pg_words[] (instr -> strpos, rowid -> ctid); an INSERT into a table
 * with a generated key (tables[i] -> keys[i]) and no RETURNING of its own
 * gets ` RETURNING key` (*returning = 1) so hd_store_last_id costs no
 * round trip. A malloc'd string (NULL: out of memory) and in *nparams
 * the highest parameter number.
 */
char *hd_pg_translate(const char *sql, const char *const *tables,
    const char *const *keys, size_t nkeys, int *nparams, int *returning);

#endif
