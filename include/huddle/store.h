/*
 * store.h -- the one database: SQLite under HUDDLE_HOME, or PostgreSQL
 * when HUDDLE_STORE names one (see "The backend" below).
 *
 * An hd_store is one connection; it is not shared between threads (open one
 * per thread). Opening creates the home (0700) and huddle.db, sets the
 * pragmas every connection uses (WAL, foreign keys, synchronous=NORMAL, a
 * busy handler) and applies pending schema migrations. Surfaces see only
 * this header; domain modules use the private src/store/store.h for SQL.
 */
#ifndef HUDDLE_STORE_H
#define HUDDLE_STORE_H

#include <stdint.h>

#include "err.h"

typedef struct hd_store hd_store;

/* Default wall-clock budget for retrying a busy database. */
#define HD_STORE_BUSY_BUDGET_MS 2000

/*
 * The backend. With the environment variable HUDDLE_STORE unset or empty
 * the store is SQLite, HUDDLE_HOME/huddle.db, as everything below
 * describes. When HUDDLE_STORE holds a libpq URL, postgres://... or
 * postgresql://... (e.g. postgresql:///huddle?host=/run/postgresql), the
 * store is that PostgreSQL database: hd_store_open connects and migrates
 * it (the home is still made: it holds what is not in the database), and
 * hd_store_path is the URL with any password masked. Anything else in
 * HUDDLE_STORE is refused, HD_EINVAL "HUDDLE_STORE: not a postgres://
 * URL: ...". A process runs one backend: the first store opened decides,
 * and opening the other kind later is refused (HD_EREFUSED). On
 * PostgreSQL hd_store_integrity, hd_store_quick_check, hd_store_backup
 * and hd_store_restore are refused (HD_EREFUSED): pg_dump backs it up.
 */

/*
 * Open (creating when needed) HUDDLE_HOME/huddle.db. home must be a resolved
 * path (see hd_home_resolve). Refuses a database whose schema is newer than
 * this binary, and a file that is not a database (0 bytes, other data):
 * "not a huddle database: PATH (0 bytes)"; it is never replaced. A file
 * we may not write (its mode, a read-only mount) opens read-only: reads
 * work, writes return HD_EREFUSED "database is read-only: PATH". An
 * existing file's mode is never changed. On success *out belongs to the
 * caller: hd_store_close() it. Returns 0, HD_EREFUSED (newer schema, not a
 * database, read-only and needing migration), HD_EBUSY or HD_ERR.
 */
int hd_store_open(hd_store **out, const char *home, hd_err *err);

/* Close and free. NULL-safe. */
void hd_store_close(hd_store *st);

/* "sqlite" or "postgresql" (for doctor and status). */
const char *hd_store_backend_name(const hd_store *st);

/* A store URL fit to show: the userinfo's password and any password=
 * parameter as ***. malloc'd (free it); NULL when out of memory. */
char *hd_store_mask_url(const char *url);

/* The home directory and database path. Borrowed; live with st. */
const char *hd_store_home(const hd_store *st);
const char *hd_store_path(const hd_store *st);

/*
 * One unit of work for a surface that composes library calls: every call
 * fn makes on st (each of which would otherwise commit on its own) runs
 * in one write transaction, committed when fn returns >= 0 and rolled
 * back otherwise. fn may run more than once (a busy database is retried),
 * so it must only call the library and fill its own payload; it must not
 * wait on another connection's writes. The MCP piggyback uses it: a
 * tool's write and the mail its result carries commit together.
 */
typedef int (*hd_store_unit_fn)(hd_store *st, void *payload, hd_err *err);
int hd_store_atomic(
    hd_store *st, hd_store_unit_fn fn, void *payload, hd_err *err);

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
 * Savepoints inside a write transaction, strictly nested: open one,
 * then end it keeping its work (keep = 1) or rolling it back (keep = 0).
 * Rolling back also forgets a failure hd_store_fail_txn marked inside
 * it: the work it refused is gone. 0, or an error code with err set.
 */
#define HD_STORE_SAVEPOINT_MAX 16
int hd_store_savepoint(hd_store *st, hd_err *err);
int hd_store_savepoint_end(hd_store *st, int keep, hd_err *err);

/*
 * The store's data version into *out: it changes with every commit of a
 * write, by this connection or any other. Taken right after a write
 * committed and again inside a later transaction, the two are equal
 * exactly when nothing was written to the store in between. -1 when
 * SQLite cannot say (then nothing can be assumed).
 */
int hd_store_data_version(hd_store *st, uint32_t *out);

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

/* Change the busy budget (milliseconds) for this connection. */
void hd_store_set_busy_budget(hd_store *st, int ms);

/* The schema version this binary writes, and the one the file has. */
int hd_store_schema_version(void);
int hd_store_file_version(hd_store *st, hd_err *err);

/* Run PRAGMA integrity_check (O(database), every index entry checked) or
 * PRAGMA quick_check (no index cross-checks); 0 when the answer is "ok",
 * else HD_ERR: "database is damaged: PATH: FIRST PROBLEM; restore it from
 * a backup (huddle restore)". */
int hd_store_integrity(hd_store *st, hd_err *err);
int hd_store_quick_check(hd_store *st, hd_err *err);

/*
 * Copy the database, one consistent snapshot, to the new file `file`
 * (SQLite's online backup: writers elsewhere carry on meanwhile). The copy
 * is one self-contained file, 0600. Returns 0, HD_EEXISTS (file exists)
 * or HD_ERR.
 */
int hd_store_backup(hd_store *st, const char *file, hd_err *err);

/*
 * Replace HUDDLE_HOME/huddle.db with a copy of the backup `file`, keeping
 * the old database (its WAL folded in when it can be) as
 * huddle.db.before-restore. file must be a huddle database: SQLite's
 * magic, a schema version this binary knows, a clean quick_check. The
 * caller makes sure no server uses home (the swap is not seen by open
 * connections). Returns 0, HD_ENOTFOUND, HD_EREFUSED (not a huddle
 * database), HD_ERR (damaged, or the swap failed).
 */
int hd_store_restore(const char *home, const char *file, hd_err *err);

/*
 * kv: small shared state (per-agent turn state and the like).
 * hd_store_kv_get sets *out to a malloc'd copy of the value, or NULL when
 * the key is absent (returning 0 either way).
 */
int hd_store_kv_get(char **out, hd_store *st, const char *key, hd_err *err);
int hd_store_kv_put(
    hd_store *st, const char *key, const char *value, hd_err *err);
/* Delete key, or with prefix set every key that starts with it (a
 * module's per-team or per-room keys when the team goes). */
int hd_store_kv_delete(hd_store *st, const char *key, int prefix, hd_err *err);

/*
 * Change notification (watch.c): wait, without busy polling, until another
 * connection -- in this process or any other -- commits to the database.
 * A cursor is an opaque token of what this connection has seen. The
 * pattern that never loses a wake-up:
 *
 *	hd_store_change_cursor(st, &cur, err);	(1) take the cursor
 *	read what you follow; if it is there, done;	(2) then read
 *	hd_store_wait_change(st, &cur, ms, err);	(3) then wait
 *
 * A commit after (1) makes (3) return at once. Commits made through st
 * itself do not count (the caller made them).
 */
int hd_store_change_cursor(hd_store *st, uint64_t *out, hd_err *err);

/*
 * Block until the database differs from *cursor, then store the new cursor
 * and return 1. Return 0 when timeout_ms (-1: no limit) passes first or a
 * signal interrupts the wait (so a caller can check its flags). A commit by
 * another process wakes the waiter within milliseconds. A wake-up means
 * "look again", not "something unseen is certainly there": on PostgreSQL
 * a commit's notification can arrive after the read of step (2) already
 * saw the commit, and then wakes the wait once more.
 */
int hd_store_wait_change(
    hd_store *st, uint64_t *cursor, int timeout_ms, hd_err *err);

/*
 * The same wait, paced: "at most one look per min_gap_ms however busy the
 * store". last_look_us is the hd_mono_us() of the caller's last look (the
 * cursor taken, then the read); a change is reported no sooner than
 * min_gap_ms after it. A change seen sooner is held until the gap ends,
 * and the cursor is then taken again, so the look that follows reads
 * every commit made in the gap: one look per gap under a stream of
 * commits, none lost, and a commit in the gap is reported as it ends.
 * min_gap_ms 0 (after a look that found work: look again at once) is
 * hd_store_wait_change. timeout_ms (-1: no limit) bounds the whole call,
 * the gap included: when it passes first, or a signal interrupts, return
 * 0 with *cursor as it was, and the next call reports the change.
 *
 *	last = hd_mono_us(); hd_store_change_cursor(st, &cur, err);
 *	read; found = ...;
 *	hd_store_wait_change_paced(st, &cur, ms, found ? 0 : GAP_MS, last,
 *	    err);
 */
int hd_store_wait_change_paced(hd_store *st, uint64_t *cursor, int timeout_ms,
    int min_gap_ms, int64_t last_look_us, hd_err *err);

#endif
