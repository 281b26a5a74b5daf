/*
 * lock.c -- one exchange per room at a time, across processes (SPEC 8).
 * Owns table room_locks; nothing else writes it.
 *  (1) A lock is a lease row (room_id, holder, pid, expires_at). Taking it
 *      is one BEGIN IMMEDIATE transaction that reads the row and writes
 *      its own, so of two processes racing for a free room exactly one
 *      wins; the other sees a live lease and is refused.
 *  (2) A lease whose expires_at has passed belongs to nobody: its holder
 *      died (kill -9 leaves the row behind) or stalled past its lease, and
 *      the next acquirer takes it over. A live lease is never taken over,
 *      whoever holds it.
 *  (3) holder is random per acquisition, so renew and release touch the
 *      row only while this acquisition still owns it: a holder that
 *      stalled and lost its lease cannot extend or delete its successor's.
 * Callers: exchange.c (acquire, renew before each turn and from its
 * renewal thread, release), the tests.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <huddle/exchange.h>
#include <huddle/util.h>

#include "../store/store.h"

#define HD_LOG_COMPONENT "exchange"
#include <huddle/log.h>

typedef struct lock_txn {
	hd_room_lock *lk;
	int64_t lease_ms;
	int found;
	hd_room_lock old;
} lock_txn;

static int
lock_read(
    hd_room_lock *out, int *found, hd_store *st, const char *room, hd_err *err)
{
	sqlite3_stmt *s;
	int rc, src;

	*found = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT holder, pid, expires_at FROM room_locks "
		 "WHERE room_id = ?",
		 err)) < 0)
		return rc;
	sqlite3_bind_text(s, 1, room, -1, SQLITE_STATIC);
	src = sqlite3_step(s);
	if (src == SQLITE_ROW) {
		memset(out, 0, sizeof(*out));
		snprintf(out->room_id, sizeof(out->room_id), "%s", room);
		snprintf(out->holder, sizeof(out->holder), "%s",
		    (const char *)sqlite3_column_text(s, 0));
		out->pid = sqlite3_column_int64(s, 1);
		out->expires_at = sqlite3_column_int64(s, 2);
		*found = 1;
	} else if (src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

static int
acquire_txn(hd_store *st, void *payload, hd_err *err)
{
	lock_txn *tx = payload;
	hd_room_lock *lk = tx->lk;
	sqlite3_stmt *s;
	int64_t now = hd_now_ms();
	int rc, src;

	if ((rc = lock_read(&tx->old, &tx->found, st, lk->room_id, err)) < 0)
		return rc;
	if (tx->found && tx->old.expires_at > now) /* (2) */
		return hd_err_set(err, HD_ECONFLICT, HD_EXCHANGE_LOCK_HELD);
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO room_locks(room_id, holder, pid, expires_at) "
		 "VALUES (?, ?, ?, ?) ON CONFLICT(room_id) DO UPDATE SET "
		 "holder = excluded.holder, pid = excluded.pid, "
		 "expires_at = excluded.expires_at",
		 err)) < 0)
		return rc;
	lk->expires_at = now + tx->lease_ms;
	sqlite3_bind_text(s, 1, lk->room_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, lk->holder, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, lk->pid);
	sqlite3_bind_int64(s, 4, lk->expires_at);
	if ((src = sqlite3_step(s)) != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_room_lock_acquire(hd_room_lock *out, hd_store *st, const char *team,
    int64_t lease_ms, hd_err *err)
{
	lock_txn tx;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (lease_ms < 1)
		return hd_err_set(
		    err, HD_EINVAL, "a room lock lease must be at least 1 ms");
	hd_room_id(out->room_id, sizeof(out->room_id), team);
	if ((rc = hd_random_hex(out->holder, 16, err)) < 0)
		return rc;
	out->pid = (int64_t)getpid();
	memset(&tx, 0, sizeof(tx));
	tx.lk = out;
	tx.lease_ms = lease_ms;
	if ((rc = hd_store_write(st, acquire_txn, &tx, err)) < 0)
		return rc;
	if (tx.found)
		hd_log_info("took over the lock of %s from pid %lld: its lease "
			    "expired",
		    out->room_id, (long long)tx.old.pid);
	return 0;
}

int
hd_room_lock_renew(
    hd_store *st, hd_room_lock *lk, int64_t lease_ms, hd_err *err)
{
	sqlite3_stmt *s;
	int64_t until = hd_now_ms() + lease_ms;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE room_locks SET expires_at = ? "
		 "WHERE room_id = ? AND holder = ?",
		 err)) < 0)
		return rc;
	sqlite3_bind_int64(s, 1, until);
	sqlite3_bind_text(s, 2, lk->room_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, lk->holder, -1, SQLITE_STATIC);
	src = sqlite3_step(s);
	if (src != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	else if (sqlite3_changes(hd_store_db(st)) == 0) /* (3) */
		rc = hd_err_set(
		    err, HD_ECONFLICT, "the exchange lost its room lock");
	else
		lk->expires_at = until;
	hd_store_reset(s);
	return rc;
}

static int
release_txn(hd_store *st, void *payload, hd_err *err)
{
	const hd_room_lock *lk = payload;
	sqlite3_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "DELETE FROM room_locks WHERE room_id = ? AND holder = ?",
		 err)) < 0)
		return rc;
	sqlite3_bind_text(s, 1, lk->room_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, lk->holder, -1, SQLITE_STATIC);
	if ((src = sqlite3_step(s)) != SQLITE_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_room_lock_release(hd_store *st, const hd_room_lock *lk, hd_err *err)
{
	return hd_store_write(st, release_txn, (void *)lk, err);
}

int
hd_room_lock_get(
    hd_room_lock *out, int *found, hd_store *st, const char *team, hd_err *err)
{
	char room[HD_ROOM_ID_MAX];
	int rc;

	*found = 0;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	hd_room_id(room, sizeof(room), team);
	return lock_read(out, found, st, room, err);
}
