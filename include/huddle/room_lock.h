/*
 * room_lock.h -- the room lock (SPEC 8, table room_locks): at most one
 * holder per room at a time, across processes. The exchange engine
 * (exchange.h) holds it while an exchange runs in a room; nothing else
 * takes it.
 *
 * A lock is a lease: one row per room naming its holder (a random id per
 * acquisition), the holder's process and where it runs (host, boot, the
 * process's start time), and when the lease expires.
 *  (1) Of two processes racing for a free room exactly one wins; the other
 *      is refused with HD_ROOM_LOCK_HELD (HD_ECONFLICT).
 *  (2) A lease past its expiry belongs to nobody and is taken over. A live
 *      lease is taken over only when its holder is known dead: it ran on
 *      this host in this boot and its pid is gone (or names a process with
 *      another start time). A live holder is never taken over, this
 *      process included.
 *  (3) Renewing, recording and releasing touch the row only while this
 *      acquisition still owns it: a holder that lost its lease cannot
 *      extend or delete its successor's (`the exchange lost its room
 *      lock`, HD_ECONFLICT).
 *  (4) The row also keeps the process group of the turn the holder runs
 *      and the holder's progress as of its last commit (opaque text): a
 *      takeover of a dead holder on this host kills that group first and
 *      hands the progress to the new holder.
 */
#ifndef HUDDLE_ROOM_LOCK_H
#define HUDDLE_ROOM_LOCK_H

#include <stdint.h>

#include "err.h"
#include "room.h"
#include "store.h"

#define HD_ROOM_LOCK_HELD "an exchange is already running for this room"

typedef struct hd_room_lock {
	char room_id[HD_ROOM_ID_MAX];
	char holder[33]; /* random hex, this acquisition's identity */
	int64_t pid;
	int64_t expires_at; /* ms since the epoch */
	char host[256];     /* where the holder runs ("": unknown) */
	char boot_id[40];   /* in which boot ("": unknown) */
	int64_t start;      /* its process's start time (hd_proc_start) */
} hd_room_lock;

/*
 * Take team's room lock for lease_ms. A live lease held by anyone, this
 * process included, is refused: HD_ROOM_LOCK_HELD (HD_ECONFLICT),
 * unless its holder ran on this host in this boot and is gone (its pid
 * is gone, or names a process with another start time): that one is
 * taken over at once. An expired lease (its holder died or stalled) is
 * taken over; a dead holder's running process group is killed first.
 */
int hd_room_lock_acquire(hd_room_lock *out, hd_store *st, const char *team,
    int64_t lease_ms, hd_err *err);

/* hd_room_lock_acquire, and *progress (malloc'd, or NULL) is what the
 * holder taken over last saved with hd_room_lock_progress. */
int hd_room_lock_take(hd_room_lock *out, char **progress, hd_store *st,
    const char *team, int64_t lease_ms, hd_err *err);

/* Record (pgid > 0) or clear (0) the process group of the turn lk's
 * holder runs. HD_ECONFLICT when the lock was lost. Works inside a
 * caller's transaction. */
int hd_room_lock_running(hd_store *st, const hd_room_lock *lk, int64_t pgid,
    int64_t start, hd_err *err);

/* Save the holder's progress (text, or NULL) with lk's row, for a
 * successor that takes over a dead holder; saved between two turns, so
 * it also clears the running turn's process group. Works inside a
 * caller's transaction. */
int hd_room_lock_progress(
    hd_store *st, const hd_room_lock *lk, const char *progress, hd_err *err);

/* Push the lease to now + lease_ms. `the exchange lost its room lock`
 * (HD_ECONFLICT) when another holder took it over. Works inside a
 * caller's transaction. */
int hd_room_lock_renew(
    hd_store *st, hd_room_lock *lk, int64_t lease_ms, hd_err *err);

/* Drop the lock if lk still holds it. */
int hd_room_lock_release(hd_store *st, const hd_room_lock *lk, hd_err *err);

/* The current row for team's room: *found is 0 when there is none. */
int hd_room_lock_get(
    hd_room_lock *out, int *found, hd_store *st, const char *team, hd_err *err);

/*
 * Ask for the exchange holding room (team's) to be cancelled, in a
 * write: a cancel request addressed to the live holder
 * (cancel_requests.h): `team "x" not found` (HD_ENOTFOUND), `no exchange
 * is running in team x's room` (HD_ECONFLICT).
 */
int hd_room_lock_cancel(hd_store *st, const char *team, const char *room,
    const char *by, hd_err *err);

/* *out 1 while room is held (lease live at now) by a holder a cancel
 * request names. */
int hd_room_lock_cancelled(
    int *out, hd_store *st, const char *room, int64_t now, hd_err *err);

/* *out 1 when a cancel request names the holder of room's lock that
 * process pid holds. */
int hd_room_lock_cancelled_mine(
    int *out, hd_store *st, const char *room, int64_t pid, hd_err *err);

#endif
