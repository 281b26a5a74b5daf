/*
 * bench-raw.h -- what the raw-SQLite baselines share: a connection set up
 * as huddle's store sets its own, and the ids a room post needs.
 *
 * bench_raw_open gives the baseline the store's pragmas (WAL,
 * synchronous=NORMAL, foreign keys, a busy timeout, 2 KiB pages) on
 * SQLite's own VFS, so what it measures against is the same durability
 * with nothing of huddle around it.
 *
 * A room post's id is a random version-4 UUID (SPEC 2), so a raw poster
 * doing "the same insert" mints one too, and as cheaply as huddle does
 * (hd_store_uuid): OpenSSL random bytes drawn 4096 at a time, formatted by
 * hand. Sequential ids would be cheaper than the schema allows: they
 * append to the id index instead of landing on a random leaf.
 */
#ifndef HD_BENCH_RAW_H
#define HD_BENCH_RAW_H

#include <stdio.h>
#include <stdlib.h>

#include <huddle/util.h>

#include "store/sqlite.h"

#define BENCH_RAW_POOL 4096

/* The database at path with the store's pragmas, schema run on it and sql
 * prepared in *s; on failure, SQLite's reason on stderr and exit 1. */
static inline sqlite3 *
bench_raw_open(
    const char *path, const char *schema, const char *sql, sqlite3_stmt **s)
{
	sqlite3 *db;

	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db,
		"PRAGMA page_size=2048; PRAGMA journal_mode=WAL;"
		"PRAGMA synchronous=NORMAL;"
		"PRAGMA foreign_keys=ON; PRAGMA busy_timeout=2000;",
		NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, sql, -1, s, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench: raw: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	return db;
}

/* The next id from pool; *used starts at BENCH_RAW_POOL (empty). */
static inline void
bench_raw_uuid(char out[37], unsigned char pool[BENCH_RAW_POOL], size_t *used)
{
	if (*used + 16 > BENCH_RAW_POOL) {
		if (hd_random_bytes(pool, BENCH_RAW_POOL, NULL) < 0) {
			fprintf(stderr, "bench: raw: no random bytes\n");
			exit(1);
		}
		*used = 0;
	}
	hd_uuid_format(out, pool + *used);
	*used += 16;
}

#endif
