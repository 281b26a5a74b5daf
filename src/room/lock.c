/*
 * lock.c -- the room lock (room_lock.h): one holder per room at a time,
 * across processes (SPEC 8: one exchange per room). A domain module of the
 * room: the lock is a row per room with an owner and an expiry, whoever
 * holds it. Owns table room_locks; nothing else writes it (the team's
 * removal deletes its room's row through hd_room_team_purge). A cancel request for an exchange is
 * addressed to the holder read here (hd_room_lock_cancel*): the rows are
 * conversation/cancel_requests.c's.
 *  (1) A lock is a lease row (room_id, holder, pid, expires_at, and where
 *      the holder runs: host, boot_id, start, its process's start time).
 *      Taking it is one BEGIN IMMEDIATE transaction that reads the row and
 *      writes its own, so of two processes racing for a free room exactly
 *      one wins; the other sees a live lease and is refused.
 *  (2) A lease whose expires_at has passed belongs to nobody: its holder
 *      died (kill -9 leaves the row behind) or stalled past its lease, and
 *      the next acquirer takes it over. A live lease is taken over only
 *      when its holder is known dead: it ran on this host in this boot
 *      and its pid is gone (or a zombie) or now names a process with
 *      another start time. Then it is taken at once, not after the
 *      lease. A holder on another host (or in another boot, or a row
 *      from before migration 15, without host) is only judged by its
 *      lease; a live holder is never taken over, this process included.
 *  (4) The row also records the process group of the turn the holder is
 *      running (run_pid, run_start; hd_room_lock_running) and the
 *      exchange's progress as of its last commit (hd_room_lock_progress).
 *      Taking over a dead holder on this host first kills that group
 *      (hd_proc_group_kill: only while the recording still names it), so
 *      nothing the dead holder's turn started can act after the room
 *      changed hands; the progress (opaque text here) is handed to the
 *      new holder, which may resume the exchange from it
 *      (engine/exchange.c).
 *  (3) holder is random per acquisition, so renew and release touch the
 *      row only while this acquisition still owns it: a holder that
 *      stalled and lost its lease cannot extend or delete its successor's.
 * Callers: the exchange engine (engine/exchange.c: take, renew from its
 * renewal thread, save the progress, release; engine/turn.c: renew before
 * each turn, record the running turn; engine/cancel.c: cancel requests
 * and their watch), the tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/cancel_requests.h>
#include <huddle/room_lock.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include <store/store.h>

#include "room_int.h"

/* its holder is an exchange: its lines read with the exchange's */
#define HD_LOG_COMPONENT "exchange"
#include <huddle/log.h>

typedef struct lock_txn {
	hd_room_lock *lk;
	int64_t lease_ms;
	int found;
	int dead; /* the old holder is known dead (2) */
	hd_room_lock old;
	char *progress; /* the old row's, malloc'd */
	int64_t run_pid, run_start;
	int want_progress;
} lock_txn;

/* The row of room; with tx, also what a takeover needs (4). */
static int
lock_read(hd_room_lock *out, int *found, hd_store *st, const char *room,
    lock_txn *tx, hd_err *err)
{
	hd_stmt *s;
	const char *v;
	int rc, src;

	*found = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT holder, pid, expires_at, host, boot_id, start, "
		 "run_pid, run_start, progress FROM room_locks "
		 "WHERE room_id = ?",
		 HD_TEXT(room))) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src == HD_ROW) {
		memset(out, 0, sizeof(*out));
		snprintf(out->room_id, sizeof(out->room_id), "%s", room);
		snprintf(out->holder, sizeof(out->holder), "%s",
		    hd_stmt_text(s, 0));
		out->pid = hd_stmt_int(s, 1);
		out->expires_at = hd_stmt_int(s, 2);
		if ((v = hd_stmt_text(s, 3)) != NULL)
			snprintf(out->host, sizeof(out->host), "%s", v);
		if ((v = hd_stmt_text(s, 4)) != NULL)
			snprintf(out->boot_id, sizeof(out->boot_id), "%s", v);
		out->start = hd_stmt_int(s, 5);
		if (tx != NULL) {
			tx->run_pid = hd_stmt_int(s, 6);
			tx->run_start = hd_stmt_int(s, 7);
			free(tx->progress);
			tx->progress = tx->want_progress
					   ? hd_store_col_dup(s, 8)
					   : NULL;
		}
		*found = 1;
	} else if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* (2) On this host: the holder's pid is gone, a zombie, or another
 * process now (its start time differs). */
static int
holder_dead(const hd_room_lock *old)
{
	int64_t now = hd_proc_start(old->pid);

	if (now < 0)
		return 0; /* cannot be told: the lease decides */
	return now == 0 || (old->start > 0 && now != old->start);
}

/* The holder's process still runs (on this host): its group, if any, is
 * its own business even once its lease expired (4). */
static int
holder_alive(const hd_room_lock *old)
{
	return !holder_dead(old);
}

static int
acquire_txn(hd_store *st, void *payload, hd_err *err)
{
	lock_txn *tx = payload;
	hd_room_lock *lk = tx->lk;
	int64_t now = hd_now_ms();
	int rc, here;

	if ((rc = lock_read(
		 &tx->old, &tx->found, st, lk->room_id, tx, err)) < 0)
		return rc;
	here = tx->found && hd_proc_here(tx->old.host, tx->old.boot_id);
	tx->dead = here && holder_dead(&tx->old);
	if (tx->found && tx->old.expires_at > now && !tx->dead) /* (2) */
		return hd_err_set(err, HD_ECONFLICT, HD_ROOM_LOCK_HELD);
	if (here && tx->run_pid > 0 && !holder_alive(&tx->old) &&
	    hd_proc_group_kill(tx->run_pid, tx->run_start)) /* (4) */
		hd_log_info("%s: killed process group %lld of the dead "
			    "holder's turn",
		    lk->room_id, (long long)tx->run_pid);
	lk->expires_at = now + tx->lease_ms;
	return hd_store_run(st, err,
	    "INSERT INTO room_locks(room_id, holder, pid, expires_at, "
	    "host, boot_id, start, run_pid, run_start, progress) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL) "
	    "ON CONFLICT(room_id) DO UPDATE SET "
	    "holder = excluded.holder, pid = excluded.pid, "
	    "expires_at = excluded.expires_at, host = excluded.host, "
	    "boot_id = excluded.boot_id, start = excluded.start, "
	    "run_pid = NULL, run_start = NULL, progress = NULL",
	    HD_TEXT(lk->room_id), HD_TEXT(lk->holder), HD_INT(lk->pid),
	    HD_INT(lk->expires_at), HD_TEXT(lk->host[0] ? lk->host : NULL),
	    HD_TEXT(lk->boot_id[0] ? lk->boot_id : NULL), HD_INT(lk->start));
}

int
hd_room_lock_acquire(hd_room_lock *out, hd_store *st, const char *team,
    int64_t lease_ms, hd_err *err)
{
	return hd_room_lock_take(out, NULL, st, team, lease_ms, err);
}

int
hd_room_lock_take(hd_room_lock *out, char **progress, hd_store *st,
    const char *team, int64_t lease_ms, hd_err *err)
{
	lock_txn tx;
	int rc;

	if (progress != NULL)
		*progress = NULL;
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
	out->start = hd_proc_start(out->pid);
	if (out->start < 0)
		out->start = 0;
	hd_host_name(out->host, sizeof(out->host));
	hd_boot_id(out->boot_id, sizeof(out->boot_id));
	memset(&tx, 0, sizeof(tx));
	tx.lk = out;
	tx.lease_ms = lease_ms;
	tx.want_progress = progress != NULL;
	/* the store may run the transaction more than once: each run reads
	 * the row again, and only the committed one's progress is kept */
	if ((rc = hd_store_write(st, acquire_txn, &tx, err)) < 0) {
		free(tx.progress);
		return rc;
	}
	if (tx.found)
		hd_log_info("took over the lock of %s from pid %lld: %s",
		    out->room_id, (long long)tx.old.pid,
		    tx.dead ? "its process is gone" : "its lease expired");
	if (progress != NULL)
		*progress = tx.progress;
	else
		free(tx.progress);
	return 0;
}

/* What an UPDATE of this acquisition's row (3) returned, or HD_ECONFLICT
 * when it matched nothing: the row was lost. */
static int
lock_kept(hd_store *st, int rc, hd_err *err)
{
	if (rc == 0 && hd_store_changes(st) == 0)
		return hd_err_set(
		    err, HD_ECONFLICT, "the exchange lost its room lock");
	return rc;
}

int
hd_room_lock_running(hd_store *st, const hd_room_lock *lk, int64_t pgid,
    int64_t start, hd_err *err)
{
	return lock_kept(st,
	    hd_store_run(st, err,
		"UPDATE room_locks SET run_pid = ?3, run_start = ?4 "
		"WHERE room_id = ?1 AND holder = ?2",
		HD_TEXT(lk->room_id), HD_TEXT(lk->holder),
		HD_INT_OR_NULL(pgid > 0, pgid), HD_INT_OR_NULL(pgid > 0, start)),
	    err);
}

int
hd_room_lock_progress(
    hd_store *st, const hd_room_lock *lk, const char *progress, hd_err *err)
{
	return lock_kept(st,
	    hd_store_run(st, err,
		"UPDATE room_locks SET progress = ?3, run_pid = NULL, "
		"run_start = NULL WHERE room_id = ?1 AND holder = ?2",
		HD_TEXT(lk->room_id), HD_TEXT(lk->holder), HD_TEXT(progress)),
	    err);
}

int
hd_room_lock_renew(
    hd_store *st, hd_room_lock *lk, int64_t lease_ms, hd_err *err)
{
	int64_t until = hd_now_ms() + lease_ms;
	int rc;

	if ((rc = lock_kept(st,
		 hd_store_run(st, err,
		     "UPDATE room_locks SET expires_at = ?3 "
		     "WHERE room_id = ?1 AND holder = ?2",
		     HD_TEXT(lk->room_id), HD_TEXT(lk->holder), HD_INT(until)),
		 err)) == 0)
		lk->expires_at = until;
	return rc;
}

static int
release_txn(hd_store *st, void *payload, hd_err *err)
{
	const hd_room_lock *lk = payload;

	return hd_store_run(st, err,
	    "DELETE FROM room_locks WHERE room_id = ? AND holder = ?",
	    HD_TEXT(lk->room_id), HD_TEXT(lk->holder));
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
	return lock_read(out, found, st, room, NULL, err);
}

/* ---- cancel requests addressed to the holder -------------------------- */

/* The holder of room's lock that sql (?1 room, ?2 value) finds, into
 * holder ("" when none). */
static int
holder_where(char *holder, size_t len, hd_store *st, const char *sql,
    const char *room, int64_t v, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	holder[0] = '\0';
	if ((rc = hd_store_query(st, &s, err, sql, HD_TEXT(room), HD_INT(v))) <
	    0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW)
		snprintf(holder, len, "%s", hd_stmt_text(s, 0));
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

#define LIVE_HOLDER                                                            \
	"SELECT holder FROM room_locks WHERE room_id = ?1 AND expires_at > ?2"
#define PID_HOLDER "SELECT holder FROM room_locks WHERE room_id = ?1 AND pid = ?2"

int
hd_room_lock_cancel(hd_store *st, const char *team, const char *room,
    const char *by, hd_err *err)
{
	char holder[64];
	int rc;

	if ((rc = hd_team_exists(st, team, err)) < 0 ||
	    (rc = holder_where(holder, sizeof(holder), st, LIVE_HOLDER, room,
		 hd_now_ms(), err)) < 0)
		return rc;
	if (holder[0] == '\0')
		return hd_err_set(err, HD_ECONFLICT,
		    "no exchange is running in team %s's room", team);
	return hd_cancel_request_add(st, "exchange", holder, team, by, err);
}

/* *out: whether a request names the holder sql finds. */
static int
holder_cancelled(int *out, hd_store *st, const char *sql, const char *room,
    int64_t v, hd_err *err)
{
	char holder[64];
	int rc;

	*out = 0;
	if ((rc = holder_where(holder, sizeof(holder), st, sql, room, v, err)) <
		0 ||
	    holder[0] == '\0')
		return rc;
	return hd_cancel_request_exists(out, st, "exchange", holder, err);
}

int
hd_room_lock_cancelled(
    int *out, hd_store *st, const char *room, int64_t now, hd_err *err)
{
	return holder_cancelled(out, st, LIVE_HOLDER, room, now, err);
}

int
hd_room_lock_cancelled_mine(
    int *out, hd_store *st, const char *room, int64_t pid, hd_err *err)
{
	return holder_cancelled(out, st, PID_HOLDER, room, pid, err);
}

int
hd_room__lock_purge(hd_store *st, const char *room, hd_err *err)
{
	return hd_store_run(st, err, "DELETE FROM room_locks WHERE room_id = ?1",
	    HD_TEXT(room));
}
