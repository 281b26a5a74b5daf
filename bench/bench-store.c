/*
 * bench-store.c -- the cost of the store's write path.
 *
 * store_write: single-row commits per second through hd_store_write (BEGIN
 * IMMEDIATE, busy handler, statement cache, kv upsert, COMMIT) against raw
 * SQLite doing the same upsert in its own BEGIN IMMEDIATE/COMMIT on a
 * connection with the same pragmas, in the same run, on the same disk.
 * The raw connection uses SQLite's own VFS: part of what huddle gains is
 * its WAL-batching VFS (src/store/vfs.c), one write per commit instead of
 * two per page.
 *
 * usage: bench_store [N]   (default 20000 commits each)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <huddle/util.h>

#include "bench-raw.h"
#include "bench.h"

struct put {
	const char *key;
	char value[32];
};

static int
put_txn(hd_store *st, void *payload, hd_err *err)
{
	struct put *p = payload;

	return hd_store_kv_put(st, p->key, p->value, err);
}

static double
run_library(const char *home, int n)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	struct put p = {"bench:key", ""};
	int64_t t0;
	int i;

	if (hd_store_open(&st, home, &err) != 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		snprintf(p.value, sizeof(p.value), "%d", i);
		if (hd_store_write(st, put_txn, &p, &err) != 0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			exit(1);
		}
	}
	t0 = hd_mono_us() - t0;
	hd_store_close(st);
	return n / (t0 / 1e6);
}

static double
run_raw(const char *home, int n)
{
	char path[512], value[32];
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t t0;
	int i;

	snprintf(path, sizeof(path), "%s/raw.db", home);
	db = bench_raw_open(path,
	    "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY,"
	    " value TEXT NOT NULL, updated_at INTEGER NOT NULL);",
	    "INSERT INTO kv(key, value, updated_at) VALUES (?, ?, ?) "
	    "ON CONFLICT(key) DO UPDATE SET value=excluded.value, "
	    "updated_at=excluded.updated_at",
	    &s);
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		snprintf(value, sizeof(value), "%d", i);
		sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		sqlite3_bind_text(s, 1, "bench:key", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, hd_now_ms());
		if (sqlite3_step(s) != SQLITE_DONE) {
			fprintf(stderr, "bench: raw: %s\n", sqlite3_errmsg(db));
			exit(1);
		}
		sqlite3_reset(s);
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	}
	t0 = hd_mono_us() - t0;
	sqlite3_finalize(s);
	sqlite3_close(db);
	return n / (t0 / 1e6);
}

int
main(int argc, char **argv)
{
	char home[] = "/tmp/huddle-bench-XXXXXX";
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	double lib, raw;

	if (n <= 0 || mkdtemp(home) == NULL)
		return 2;
	/* Alternate so neither side always runs on a warmer cache. */
	raw = run_raw(home, n / 2);
	lib = run_library(home, n / 2);
	raw = (raw + run_raw(home, n / 2)) / 2;
	lib = (lib + run_library(home, n / 2)) / 2;
	printf("store_write: %.0f commits/s | baseline raw sqlite %.0f "
	       "commits/s | ratio %.2fx\n",
	    lib, raw, lib / raw);
	return bench_rm_rf(home) == 0 ? 0 : 1;
}
