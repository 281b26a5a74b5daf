/*
 * watch.c -- change notification across processes: block until another
 * connection commits to huddle.db, without busy polling (SPEC 5 "Follow";
 * the room's follow, SSE streams and event followers wait here).
 *
 * Why inotify on the WAL. In WAL mode every commit appends its frames to
 * huddle.db-wal with write(2) before COMMIT returns, whoever the writer is
 * (any huddle process, the sqlite3 shell, ...), and each write raises
 * IN_MODIFY. So the WAL file is the one place every commit passes through,
 * and no writer has to cooperate or pay anything. What an event cannot
 * say is whether the commit is visible yet: SQLite publishes a commit by
 * updating the wal-index header in the -shm mapping *after* its last write,
 * and stores into a mapping raise no event. PRAGMA data_version answers
 * that: it changes when another connection's commit has become visible.
 *
 *  (1) Check -> arm -> re-check -> wait. The caller takes a cursor (the
 *      data_version) before reading; every wait re-checks it after the
 *      watch is armed and drained. A commit before the re-check is seen by
 *      it; a commit after it raises an event that ends the wait.
 *  (2) Written but not yet published: an event whose commit is not visible
 *      at the re-check is followed by re-checks at short, doubling
 *      intervals (50 us up to 25 ms, for at most 250 ms after the last
 *      event). These happen only while a write is in flight, so an idle
 *      waiter sleeps in ppoll and costs nothing.
 *  (3) WAL replaced: the directory is watched too (huddle.db-wal created,
 *      moved in or deleted) and the file watch is re-armed when the file
 *      reappears; a checkpoint that truncates the WAL raises IN_MODIFY
 *      itself, and the next commit writes to the same, watched file.
 *  (4) Safety net only: with no event at all the waiter still re-checks
 *      every 250 ms, so a lost notification (queue overflow, a file system
 *      without inotify, no inotify instance left) costs at most 250 ms,
 *      never a hang. Without inotify the waiter falls back to that bounded
 *      wait alone, and says so once in the log.
 *  (5) One watcher per connection (so per thread, since a connection is
 *      never shared): no locks, nothing global but the log-once flag.
 *  (6) Commits made through the waiting connection itself do not change
 *      data_version; the caller made them and knows.
 *  (7) Paced waits (hd_store_wait_change_paced: the supervisor's
 *      dispatcher and verifier, the cancel watch): a change seen less
 *      than the caller's gap after its last look is held, without taking
 *      the cursor, until the gap ends; the cursor is then taken again, so
 *      the look that follows reads every commit of the gap (1 still
 *      holds: the cursor comes before the read). A stream of commits
 *      costs one look per gap, and the caller's timeout bounds the gap
 *      too (returning 0 leaves the cursor, so the change is not lost).
 */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <huddle/util.h>

#include "pg.h"
#include "sqlite.h"

#define HD_LOG_COMPONENT "store"
#include <huddle/log.h>

#define WATCH_NET_US 250000      /* (4) re-check with no event */
#define WATCH_SETTLE_FIRST_US 50 /* (2) first re-check after an event */
#define WATCH_SETTLE_MAX_US 25000
#define WATCH_SETTLE_SPAN_US 250000

struct hd_store_watch {
	int fd; /* inotify, or -1: bounded waits only (4) */
	int dir_wd;
	int wal_wd;           /* -1 while huddle.db-wal is not watched */
	char *wal_path;       /* HUDDLE_HOME/huddle.db-wal */
	const char *wal_name; /* its last component, inside wal_path */
};

static atomic_int watch_warned;

void
hd_store__watch_free(hd_store_watch *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->wal_path);
	free(w);
}

/* Watch the WAL file itself when it exists; ENOENT is fine (3). */
static void
watch_arm_wal(hd_store_watch *w)
{
	if (w->fd < 0 || w->wal_wd >= 0)
		return;
	w->wal_wd = inotify_add_watch(w->fd, w->wal_path, IN_MODIFY);
}

static int
watch_new(hd_store_watch **out, hd_store *st, hd_err *err)
{
	hd_store_watch *w;
	const char *path = hd_store_path(st), *slash;
	size_t n;
	char *dir = NULL;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	w->fd = w->dir_wd = w->wal_wd = -1;
	n = strlen(path) + sizeof("-wal");
	if ((w->wal_path = malloc(n)) == NULL ||
	    (dir = strdup(hd_store_home(st))) == NULL) {
		hd_store__watch_free(w);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	snprintf(w->wal_path, n, "%s-wal", path);
	slash = strrchr(w->wal_path, '/');
	w->wal_name = slash != NULL ? slash + 1 : w->wal_path;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd >= 0)
		w->dir_wd = inotify_add_watch(w->fd, dir,
		    IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_ONLYDIR);
	if (w->fd < 0 || w->dir_wd < 0) {
		if (atomic_exchange(&watch_warned, 1) == 0)
			hd_log_warn("cannot watch %s for changes (%s); "
				    "followers re-check every %d ms instead",
			    dir, strerror(errno), WATCH_NET_US / 1000);
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
	}
	free(dir);
	watch_arm_wal(w);
	*out = w;
	return 0;
}

/* Read every pending event; the number that may mean a commit. */
static int
watch_drain(hd_store_watch *w)
{
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t len;
	char *p;
	int n = 0;

	if (w->fd < 0)
		return 0;
	while ((len = read(w->fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW)
				n++; /* events were lost: assume the worst */
			else if (ev->wd == w->wal_wd) {
				if (ev->mask & IN_IGNORED)
					w->wal_wd = -1; /* file gone (3) */
				else
					n++;
			} else if (ev->wd == w->dir_wd && ev->len > 0 &&
				   strcmp(ev->name, w->wal_name) == 0) {
				if (ev->mask & IN_DELETE)
					w->wal_wd = -1;
				n++;
			}
		}
	}
	watch_arm_wal(w); /* re-arm after (3), and before the re-check (1) */
	return n;
}

/* Sleep up to us microseconds or until an event; -1 on a signal. */
static int
watch_sleep(hd_store_watch *w, int64_t us)
{
	struct pollfd pfd = {w->fd, POLLIN, 0};
	struct timespec ts;
	nfds_t nfds = w->fd >= 0 ? 1 : 0; /* none: a plain bounded sleep */

	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	if (ppoll(&pfd, nfds, &ts, NULL) < 0 && errno == EINTR)
		return -1;
	return 0;
}

int
hd_store_change_cursor(hd_store *st, uint64_t *out, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if (hd_store__is_pg()) /* watch_pg.c */
		return hd_pg_change_cursor(hd_store__pg(st), out, err);
	if ((rc = hd_store_prepare(st, &s, "PRAGMA data_version", err)) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW)
		*out = (uint64_t)hd_stmt_int(s, 0);
	else
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s); /* no snapshot may outlive the check */
	return rc;
}

int
hd_store_wait_change(
    hd_store *st, uint64_t *cursor, int timeout_ms, hd_err *err)
{
	hd_store_watch **slot = hd_store__watch_slot(st), *w;
	int64_t now, deadline = -1, last_event = 0, settle = 0, wait;
	uint64_t v = 0;
	int rc, n;

	/* in a transaction the snapshot never changes: a programmer error */
	assert(!hd_store_in_txn(st));
	if (hd_store__is_pg()) /* watch_pg.c */
		return hd_pg_wait_change(hd_store__pg(st), cursor, timeout_ms, err);
	if (*slot == NULL && (rc = watch_new(slot, st, err)) < 0)
		return rc;
	w = *slot;
	if (timeout_ms >= 0)
		deadline = hd_mono_us() + (int64_t)timeout_ms * 1000;
	for (;;) {
		n = watch_drain(w);
		if ((rc = hd_store_change_cursor(st, &v, err)) < 0)
			return rc;
		if (v != *cursor) {
			*cursor = v;
			return 1;
		}
		now = hd_mono_us();
		if (n > 0) { /* (2) a write is in flight: look again soon */
			last_event = now;
			settle = WATCH_SETTLE_FIRST_US;
		} else if (settle > 0) {
			settle *= 2;
			if (settle > WATCH_SETTLE_MAX_US)
				settle = WATCH_SETTLE_MAX_US;
			if (now - last_event > WATCH_SETTLE_SPAN_US)
				settle = 0;
		}
		wait = settle > 0 ? settle : WATCH_NET_US;
		if (deadline >= 0) {
			if (now >= deadline)
				return 0;
			if (deadline - now < wait)
				wait = deadline - now;
		}
		if (watch_sleep(w, wait) < 0)
			return 0;
	}
}

/* Sleep until the monotonic time end_us (7); -1 when a signal came first. */
static int
sleep_until(int64_t end_us)
{
	struct timespec ts;
	int64_t us;

	while ((us = end_us - hd_mono_us()) > 0) {
		ts.tv_sec = (time_t)(us / 1000000);
		ts.tv_nsec = (long)(us % 1000000) * 1000;
		if (ppoll(NULL, 0, &ts, NULL) < 0 && errno == EINTR)
			return -1;
	}
	return 0;
}

int
hd_store_wait_change_paced(hd_store *st, uint64_t *cursor, int timeout_ms,
    int min_gap_ms, int64_t last_look_us, hd_err *err)
{
	int64_t deadline = -1, gap_end;
	uint64_t seen = *cursor;
	int rc;

	if (min_gap_ms <= 0)
		return hd_store_wait_change(st, cursor, timeout_ms, err);
	if (timeout_ms >= 0)
		deadline = hd_mono_us() + (int64_t)timeout_ms * 1000;
	if ((rc = hd_store_wait_change(st, &seen, timeout_ms, err)) <= 0)
		return rc;
	gap_end = last_look_us + (int64_t)min_gap_ms * 1000;
	if (gap_end > hd_mono_us()) { /* (7) too soon: wait out the gap */
		if (deadline >= 0 && deadline < gap_end) {
			sleep_until(deadline);
			return 0; /* *cursor untouched: the next call sees it */
		}
		if (sleep_until(gap_end) < 0)
			return 0;
		if ((rc = hd_store_change_cursor(st, &seen, err)) < 0)
			return rc;
	}
	*cursor = seen;
	return 1;
}
