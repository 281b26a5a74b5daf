/*
 * stmt.c -- the statement interface of store.h on SQLite.
 *
 * Invariants:
 *  (1) An hd_stmt is the sqlite3_stmt (sqlite.h): each call here is the
 *      one SQLite call it names, so a module written against store.h runs
 *      exactly the SQLite calls it ran when it called SQLite itself.
 *  (2) Text and blobs bind without a copy (SQLITE_STATIC) except through
 *      hd_stmt_bind_text_copy: the caller keeps them alive until the
 *      reset, which is what every caller does with its own arguments.
 *  (3) hd_store_changes and hd_store_last_id answer for the connection's
 *      last statement, so callers read them right after the step, inside
 *      the same transaction.
 *  (4) On PostgreSQL (HUDDLE_STORE, pg.c) each call goes to pg.c's
 *      instead. A process runs one backend, so the test is one relaxed
 *      load of a process-wide value, marked unlikely (hd_store__is_pg):
 *      SQLite's path gains a predicted branch, not an indirect call, and
 *      its benchmarks do not move.
 *
 * Callers: every domain module with tables (board, room, mailbox, team,
 * events) and the engines' own tables, through store.h.
 */
#include <stdint.h>

#include "pg.h"
#include "sqlite.h"

void
hd_stmt_bind_text(hd_stmt *s, int idx, const char *v)
{
	if (hd_store__is_pg()) {
		hd_pg_bind_text(s, idx, v, -1, 0);
		return;
	}
	sqlite3_bind_text(hd_stmt_sqlite(s), idx, v, -1, SQLITE_STATIC);
}

void
hd_stmt_bind_textn(hd_stmt *s, int idx, const char *v, int n)
{
	if (hd_store__is_pg()) {
		hd_pg_bind_text(s, idx, v, n, 0);
		return;
	}
	sqlite3_bind_text(hd_stmt_sqlite(s), idx, v, n, SQLITE_STATIC);
}

void
hd_stmt_bind_text_copy(hd_stmt *s, int idx, const char *v)
{
	if (hd_store__is_pg()) {
		hd_pg_bind_text(s, idx, v, -1, 1);
		return;
	}
	sqlite3_bind_text(hd_stmt_sqlite(s), idx, v, -1, SQLITE_TRANSIENT);
}

void
hd_stmt_bind_int(hd_stmt *s, int idx, int64_t v)
{
	if (hd_store__is_pg()) {
		hd_pg_bind_int(s, idx, v);
		return;
	}
	sqlite3_bind_int64(hd_stmt_sqlite(s), idx, (sqlite3_int64)v);
}

void
hd_stmt_bind_null(hd_stmt *s, int idx)
{
	if (hd_store__is_pg()) {
		hd_pg_bind_null(s, idx);
		return;
	}
	sqlite3_bind_null(hd_stmt_sqlite(s), idx);
}

void
hd_stmt_bind_blob(hd_stmt *s, int idx, const void *p, size_t n)
{
	if (hd_store__is_pg()) {
		hd_pg_bind_blob(s, idx, p, n);
		return;
	}
	if (p == NULL)
		sqlite3_bind_null(hd_stmt_sqlite(s), idx);
	else
		sqlite3_bind_blob64(
		    hd_stmt_sqlite(s), idx, p, (sqlite3_uint64)n, SQLITE_STATIC);
}

int
hd_stmt_step(hd_stmt *s)
{
	if (hd_store__is_pg())
		return hd_pg_step(s);
	return sqlite3_step(hd_stmt_sqlite(s));
}

int64_t
hd_stmt_int(hd_stmt *s, int col)
{
	if (hd_store__is_pg())
		return hd_pg_int(s, col);
	return (int64_t)sqlite3_column_int64(hd_stmt_sqlite(s), col);
}

double
hd_stmt_double(hd_stmt *s, int col)
{
	if (hd_store__is_pg())
		return hd_pg_double(s, col);
	return sqlite3_column_double(hd_stmt_sqlite(s), col);
}

const char *
hd_stmt_text(hd_stmt *s, int col)
{
	if (hd_store__is_pg())
		return hd_pg_text(s, col);
	return (const char *)sqlite3_column_text(hd_stmt_sqlite(s), col);
}

const void *
hd_stmt_blob(hd_stmt *s, int col, size_t *len)
{
	const void *p;

	if (hd_store__is_pg())
		return hd_pg_blob(s, col, len);
	p = sqlite3_column_blob(hd_stmt_sqlite(s), col);
	*len = (size_t)sqlite3_column_bytes(hd_stmt_sqlite(s), col);
	return p;
}

int
hd_stmt_is_null(hd_stmt *s, int col)
{
	if (hd_store__is_pg())
		return hd_pg_is_null(s, col);
	return sqlite3_column_type(hd_stmt_sqlite(s), col) == SQLITE_NULL;
}

int64_t
hd_store_changes(hd_store *st)
{
	if (hd_store__is_pg())
		return hd_pg_changes(hd_store__pg(st));
	return (int64_t)sqlite3_changes64(hd_store_db(st));
}

int64_t
hd_store_last_id(hd_store *st)
{
	if (hd_store__is_pg())
		return hd_pg_last_id(hd_store__pg(st));
	return (int64_t)sqlite3_last_insert_rowid(hd_store_db(st));
}
