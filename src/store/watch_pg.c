/*
 * watch_pg.c -- change notification on PostgreSQL: hd_store_change_cursor
 * and hd_store_wait_change of store.h when the store is on PostgreSQL
 * (watch.c hands over).
 *
 * Every write transaction commits with `NOTIFY huddle_change, '<pid>'`,
 * pid being the committing connection's backend (pg.c (5)); PostgreSQL
 * delivers a notification only when its transaction commits, to every
 * listener, on any node.
 *
 *  (1) One listening connection per watching hd_store, opened lazily by
 *      the first cursor (LISTEN huddle_change): a notification is queued
 *      for it from the moment LISTEN returns, so a commit after the cursor
 *      is never missed (check -> read -> wait, as store.h says).
 *  (2) The cursor counts the notifications from OTHER connections: one
 *      whose payload is this store's own backend pid is its own commit,
 *      which store.h says does not count. A notification may arrive
 *      after a read already saw its commit (delivery follows the commit's
 *      visibility, not the other way round): the wait then wakes once
 *      more for it, a look that finds nothing new (store.h).
 *  (3) The wait is poll() on the listening socket with the timeout,
 *      PQconsumeInput, PQnotifies: no polling of the database, and a
 *      commit anywhere wakes the waiter within a round trip. A signal
 *      (EINTR) ends the wait with 0, as on SQLite.
 *  (4) A listening connection that breaks is reopened on the next call
 *      and the cursor moves on (a wake-up: whatever was missed while it
 *      was down must be read again).
 *  (5) While the database cannot be reached, the wait still lasts its
 *      timeout: it tries to reopen the connection every
 *      PG_WATCH_RETRY_MS, wakes (1) when that succeeds, and returns the
 *      last "database unreachable" error only once the timeout has
 *      passed. Callers loop on the wait (the supervisor's and the cancel
 *      watch's threads, taking no error), so a wait failing at once would
 *      spin them on connection attempts for as long as PostgreSQL is
 *      down.
 *
 * Callers: watch.c (hd_store_change_cursor, hd_store_wait_change).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include <huddle/util.h>

#include "pg.h"

#define PG_WATCH_RETRY_MS 100 /* (5) */

struct hd_pg_watch {
	PGconn *conn;
	uint64_t seen; /* (2) notifications from other connections */
};

void
hd_pg__watch_free(hd_pg_watch *w)
{
	if (w == NULL)
		return;
	if (w->conn != NULL)
		PQfinish(w->conn);
	free(w);
}

/* (1), (4): a listening connection, opened or reopened. */
static int
watch_listen(hd_pg *pg, hd_pg_watch *w, hd_err *err)
{
	PGresult *res;
	const char *h;

	if (w->conn != NULL && PQstatus(w->conn) == CONNECTION_OK)
		return 0;
	if (w->conn != NULL) {
		PQfinish(w->conn);
		w->seen++; /* (4) */
	}
	w->conn = PQconnectdb(hd_pg__url(pg));
	if (w->conn == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if (PQstatus(w->conn) == CONNECTION_OK) {
		res = PQexec(w->conn, "LISTEN huddle_change");
		if (PQresultStatus(res) == PGRES_COMMAND_OK) {
			PQclear(res);
			return 0;
		}
		PQclear(res);
	}
	h = PQhost(w->conn);
	hd_err_set(err, HD_EBUSY, "database unreachable: %s: %s",
	    h != NULL ? h : "?", PQerrorMessage(w->conn));
	PQfinish(w->conn);
	w->conn = NULL;
	return err != NULL ? err->code : HD_EBUSY;
}

/* Take in what arrived: count the notifications of others (2). */
static int
watch_drain(hd_pg *pg, hd_pg_watch *w, hd_err *err)
{
	PGnotify *n;
	int own = hd_pg__own_pid(pg);

	if (!PQconsumeInput(w->conn))
		return watch_listen(pg, w, err); /* (4) */
	while ((n = PQnotifies(w->conn)) != NULL) {
		if (n->extra == NULL || atoi(n->extra) != own)
			w->seen++;
		PQfreemem(n);
	}
	return 0;
}

static int
watch_get(hd_pg *pg, hd_pg_watch **out, hd_err *err)
{
	hd_pg_watch **slot = hd_pg__watch_slot(pg);
	int rc;

	if (*slot == NULL && (*slot = calloc(1, sizeof(**slot))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	if ((rc = watch_listen(pg, *slot, err)) < 0)
		return rc;
	*out = *slot;
	return 0;
}

int
hd_pg_change_cursor(hd_pg *pg, uint64_t *out, hd_err *err)
{
	hd_pg_watch *w = NULL; /* -O2 cannot see watch_get set it */
	int rc;

	if ((rc = watch_get(pg, &w, err)) < 0 ||
	    (rc = watch_drain(pg, w, err)) < 0)
		return rc;
	*out = w->seen;
	return 0;
}

int
hd_pg_wait_change(hd_pg *pg, uint64_t *cursor, int timeout_ms, hd_err *err)
{
	hd_pg_watch *w = NULL; /* -O2 cannot see watch_get set it */
	int64_t deadline = -1, now;
	struct pollfd pfd;
	int rc, ms;

	if (timeout_ms >= 0)
		deadline = hd_mono_us() + (int64_t)timeout_ms * 1000;
	for (;;) {
		rc = watch_get(pg, &w, err);
		if (rc == 0)
			rc = watch_drain(pg, w, err);
		if (rc == 0 && w->seen != *cursor) {
			*cursor = w->seen;
			return 1;
		}
		ms = -1;
		if (deadline >= 0) {
			now = hd_mono_us();
			if (now >= deadline)
				return rc < 0 ? rc : 0;
			ms = (int)((deadline - now + 999) / 1000);
		}
		if (rc < 0) { /* (5) unreachable: try again in a while */
			if (ms < 0 || ms > PG_WATCH_RETRY_MS)
				ms = PG_WATCH_RETRY_MS;
			if (poll(NULL, 0, ms) < 0 && errno == EINTR)
				return 0;
			continue;
		}
		pfd.fd = PQsocket(w->conn);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, ms) < 0 && errno == EINTR)
			return 0;
	}
}
