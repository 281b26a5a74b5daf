/*
 * sqlite.h -- the SQLite backend's own header: what the store's files (and
 * tests or benchmarks that inspect the database file itself) need beyond
 * the backend-neutral statement interface of store.h. No module outside
 * src/store/ includes it.
 *
 * With SQLite, an hd_stmt is the sqlite3_stmt itself and the result codes
 * are SQLite's (HD_ROW == SQLITE_ROW, HD_DONE == SQLITE_DONE), so the
 * interface adds a call and nothing else to a statement's path.
 */
#ifndef HD_STORE_SQLITE_H
#define HD_STORE_SQLITE_H

#include <sqlite3.h>

#include "store.h"

#if SQLITE_ROW != HD_ROW || SQLITE_DONE != HD_DONE
#error "HD_ROW/HD_DONE must be SQLite's codes"
#endif

/* The raw connection. */
sqlite3 *hd_store_db(hd_store *st);

/* The statement behind an hd_stmt, and back. */
static inline sqlite3_stmt *
hd_stmt_sqlite(hd_stmt *s)
{
	return (sqlite3_stmt *)(void *)s;
}

static inline hd_stmt *
hd_stmt_of(sqlite3_stmt *s)
{
	return (hd_stmt *)(void *)s;
}

/* The WAL hook that hands checkpoints to the store's worker (worker.c). */
int hd_store__ckpt_hook(void *arg, sqlite3 *db, const char *name, int frames);

#endif
