/*
 * cancel.c -- cancelling a running conversation or exchange (cancel.h).
 * Owns table cancel_requests; ends cancelled conversations in tables
 * conversations and conversation_deliveries (conversation.c owns them
 * otherwise), and reads room_locks (room/lock.c's).
 *  (1) A request is a row (kind, target): written by whoever asks, in any
 *      process; read by the engine that runs the work, which alone stops
 *      it. For a conversation that engine is conversations.owner; a
 *      conversation with no live owner is ended by the request itself.
 *      For an exchange the target is the room lock's holder, so a request
 *      reaches that exchange only, and the watch of the process holding
 *      the lock (room_locks.pid) acts on it.
 *  (2) The watch is one thread per engine (or per running exchange) with
 *      its own connection: it waits for a commit by another connection
 *      (hd_store_wait_change, slices of WATCH_SLICE_MS) and then looks for
 *      requests, so a request is seen within a slice and an idle engine
 *      costs no query.
 *  (3) A cancelled conversation ends only once none of its messages is
 *      running: the watch aborts their turns (the runtime kills each
 *      process group: SIGTERM, then SIGKILL), each worker marks its
 *      message cancelled and its agent out of the turn (idle, not error:
 *      activity.h turn abort), then the conversation ends. Until then
 *      the claim takes no new message of it (conversation.c), and an
 *      agent never runs two messages at once (conv_engine.c (1)). Its
 *      replies so far are its response and its transcript; a reply that
 *      lands while the end is prepared makes it read again.
 * Callers: conv_engine.c (registry, watch, ending), the surfaces (the
 * requests), exchange callers (hd_exchange_watch_*).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/activity.h>
#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "cancel_int.h"
#include "owner.h"

#define HD_LOG_COMPONENT "cancel"
#include <huddle/log.h>

#define WATCH_SLICE_MS 250
#define WATCH_MAX_IDS 32
#define END_TRIES 5

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* A write transaction under the engine's lock, when there is one. */
static int
locked_write(hd_store *st, pthread_mutex_t *wl, hd_store_txn_fn fn,
    void *payload, hd_err *err)
{
	int rc;

	if (wl != NULL)
		pthread_mutex_lock(wl);
	rc = hd_store_write(st, fn, payload, err);
	if (wl != NULL)
		pthread_mutex_unlock(wl);
	return rc;
}

static int
same(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	       (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* ---- the running turns -------------------------------------------------- */

void
hd_conv__turns_init(hd_conv_turns *t)
{
	pthread_mutex_init(&t->lock, NULL);
	t->head = NULL;
	t->closed = 0;
}

void
hd_conv__turns_destroy(hd_conv_turns *t)
{
	pthread_mutex_destroy(&t->lock);
}

void
hd_conv__turn_enter(hd_conv_turns *t, hd_conv_slot *s, const char *id)
{
	memset(s->conversation_id, 0, sizeof(s->conversation_id));
	snprintf(s->conversation_id, sizeof(s->conversation_id), "%s", id);
	s->cancelled = 0;
	pthread_mutex_lock(&t->lock);
	atomic_init(&s->abort, t->closed);
	s->next = t->head;
	t->head = s;
	pthread_mutex_unlock(&t->lock);
}

int
hd_conv__turn_leave(hd_conv_turns *t, hd_conv_slot *s)
{
	hd_conv_slot **p;
	int cancelled;

	pthread_mutex_lock(&t->lock);
	for (p = &t->head; *p != NULL; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	cancelled = s->cancelled;
	pthread_mutex_unlock(&t->lock);
	return cancelled;
}

void
hd_conv__turns_close(hd_conv_turns *t)
{
	hd_conv_slot *s;

	pthread_mutex_lock(&t->lock);
	t->closed = 1;
	for (s = t->head; s != NULL; s = s->next)
		atomic_store(&s->abort, 1);
	pthread_mutex_unlock(&t->lock);
}

/* Abort the turns of conversation id for a cancel; how many run. */
static int
turns_cancel(hd_conv_turns *t, const char *id)
{
	hd_conv_slot *s;
	int n = 0;

	pthread_mutex_lock(&t->lock);
	for (s = t->head; s != NULL; s = s->next)
		if (strcmp(s->conversation_id, id) == 0) {
			s->cancelled = 1;
			atomic_store(&s->abort, 1);
			n++;
		}
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* ---- ending a conversation (3) ------------------------------------------ */

struct end_txn {
	const char *id;
	const char *owner; /* the owner it must still have (NULL: none) */
	int force;         /* no live owner: its running messages end too */
	int64_t total;     /* replies, as read with the response */
	const char *response;
	const char *path;
	int done, running, stale;
};

static int
end_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct end_txn *t = payload;
	hd_stmt *s;
	char *team = NULL, *owner = NULL, *by = NULL, *status = NULL;
	int64_t total = 0, pending = 0, now = hd_now_ms();
	int rc = 0, src;

	t->done = t->running = t->stale = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT status, owner, team_id, total_messages, pending"
		 " FROM conversations WHERE id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		status = hd_store_col_dup(s, 0);
		owner = hd_store_col_dup(s, 1);
		team = hd_store_col_dup(s, 2);
		total = hd_stmt_int(s, 3);
		pending = hd_stmt_int(s, 4);
	}
	hd_store_reset(s);
	if (src != HD_ROW) {
		rc = src == HD_DONE ? hd_err_set(err, HD_ENOTFOUND,
					      "conversation \"%s\" not found",
					      t->id)
					: hd_store_sqlerr(st, src, err);
		goto done;
	}
	if (status == NULL || team == NULL) {
		rc = oom(err);
		goto done;
	}
	if (strcmp(status, "running") != 0) {
		t->done = 1;
		goto done;
	}
	if (!same(owner, t->owner)) /* taken over: the new owner ends it */
		goto done;
	if (total != t->total) {
		t->stale = 1;
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state = 'running'",
		 err)) < 0)
		goto done;
	hd_stmt_bind_text(s, 1, t->id);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if (!t->force) {
			t->running = 1;
			break;
		}
		/* the owner is gone: its turn ended with it */
		if ((rc = hd_activity_turn_abort(st, team,
			 hd_stmt_text(s, 0), err)) < 0)
			break;
	}
	hd_store_reset(s);
	if (rc < 0 || t->running)
		goto done;
	if (src != HD_ROW && src != HD_DONE) {
		rc = hd_store_sqlerr(st, src, err);
		goto done;
	}
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET state = 'cancelled',"
		 " finished_at = ?2 WHERE conversation_id = ?1"
		 " AND (state = 'queued' OR state = 'running')",
		 err)) < 0)
		goto done;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_int(s, 2, now);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		goto done;
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversations SET status = 'cancelled', response = ?2,"
		 " completed_at = ?3 WHERE id = ?1 AND status = 'running'",
		 err)) < 0)
		goto done;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_text(s, 2, t->response);
	hd_stmt_bind_int(s, 3, now);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		goto done;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT requested_by FROM cancel_requests"
		 " WHERE kind = 'conversation' AND target = ?1",
		 err)) < 0)
		goto done;
	hd_stmt_bind_text(s, 1, t->id);
	if (hd_stmt_step(s) == HD_ROW)
		by = hd_store_col_dup(s, 0);
	hd_store_reset(s);
	hd_events_append(st, "conversation_cancelled", team, 0, NULL,
	    json_pack("{s:s, s:s, s:s?, s:I, s:I, s:s, s:s?}",
		"conversation_id", t->id, "reason", HD_CANCEL_REASON, "by", by,
		"total_messages", (json_int_t)total, "pending",
		(json_int_t)pending, "response", t->response, "transcript",
		t->path[0] != '\0' ? t->path : NULL));
	t->done = 1;
done:
	free(status);
	free(owner);
	free(team);
	free(by);
	return rc;
}

/*
 * End conversation id as cancelled, as owner (NULL: nobody) with its
 * engine lock wl: the response and transcript from the replies so far,
 * then the transaction; read again when a reply landed meanwhile.
 */
static int
end_conv(int *done, hd_store *st, const char *id, const char *owner,
    pthread_mutex_t *wl, int force, hd_err *err)
{
	hd_conversation *c = NULL;
	hd_team *tm = NULL;
	char *response = NULL, *text = NULL, path[4096], dir[4096];
	hd_err werr = HD_ERR_INIT;
	struct end_txn t;
	size_t i;
	int rc = 0, tries;

	*done = 0;
	for (tries = 0; tries < END_TRIES; tries++) {
		hd_conversation_free(c);
		hd_team_free(tm);
		free(response);
		free(text);
		c = NULL;
		tm = NULL;
		response = text = NULL;
		if ((rc = hd_conversation_get(&c, st, id, err)) < 0)
			break;
		if (strcmp(c->status, "running") != 0) {
			*done = 1;
			break;
		}
		for (i = 0; !force && i < c->ndeliveries; i++)
			if (strcmp(c->deliveries[i].state, "running") == 0)
				break;
		if (!force && i < c->ndeliveries)
			break; /* its turns are still stopping */
		if ((rc = hd_conversation_aggregate(&response, c, err)) < 0)
			break;
		if (hd_team_get(&tm, st, c->team_id, NULL) < 0)
			tm = NULL;
		if ((rc = hd_conversation_transcript(&text, c,
			 tm != NULL ? tm->name : c->team_id, err)) < 0 ||
		    (rc = hd_conversation_transcript_path(
			 path, sizeof(path), hd_store_home(st), c, err)) < 0)
			break;
		snprintf(dir, sizeof(dir), "%s/chats/%s", hd_store_home(st),
		    c->team_id);
		if (hd_mkdir_p(dir, 0700, &werr) < 0 ||
		    hd_conv__write_file(path, text, &werr) < 0) {
			hd_log_error("conversation %s: no transcript: %s", id,
			    werr.msg);
			path[0] = '\0';
		}
		memset(&t, 0, sizeof(t));
		t.id = id;
		t.owner = owner;
		t.force = force;
		t.total = c->total_messages;
		t.response = response;
		t.path = path;
		if ((rc = locked_write(st, wl, end_txn_fn, &t, err)) < 0)
			break;
		*done = t.done;
		if (!t.stale)
			break;
	}
	hd_conversation_free(c);
	hd_team_free(tm);
	free(response);
	free(text);
	return rc;
}

int
hd_conv__cancel_end(int *done, hd_store *st, const char *id,
    const hd_conv_owner *me, hd_err *err)
{
	return end_conv(done, st, id, me->token, me->wl, 0, err);
}

struct delivery_txn {
	const hd_conv_claim *c;
};

static int
delivery_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct delivery_txn *t = payload;
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET state = 'cancelled',"
		 " finished_at = ?2 WHERE id = ?1 AND state = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, t->c->delivery_id);
	hd_stmt_bind_int(s, 2, hd_now_ms());
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	return hd_activity_turn_abort(st, t->c->team, t->c->agent, err);
}

int
hd_conv__cancel_delivery(hd_store *st, const hd_conv_claim *c,
    const hd_conv_owner *me, hd_err *err)
{
	struct delivery_txn t = {c};

	return locked_write(st, me->wl, delivery_txn_fn, &t, err);
}

/* ---- asking: conversations (1) ------------------------------------------ */

struct request_txn {
	const char *id;
	const char *by;
	char *owner;
	int64_t pid, start;
};

static int
request_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct request_txn *t = payload;
	hd_stmt *s;
	char status[16] = "", team[64] = "";
	int rc, src;

	free(t->owner);
	t->owner = NULL;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT status, team_id, owner, owner_pid, owner_start"
		 " FROM conversations WHERE id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		snprintf(status, sizeof(status), "%s",
		    hd_stmt_text(s, 0));
		snprintf(team, sizeof(team), "%s",
		    hd_stmt_text(s, 1));
		t->owner = hd_store_col_dup(s, 2);
		t->pid = hd_stmt_int(s, 3);
		t->start = hd_stmt_int(s, 4);
	}
	hd_store_reset(s);
	if (src == HD_DONE)
		return hd_err_set(
		    err, HD_ENOTFOUND, "conversation \"%s\" not found", t->id);
	if (src != HD_ROW)
		return hd_store_sqlerr(st, src, err);
	if (strcmp(status, "running") != 0)
		return hd_err_set(err, HD_ECONFLICT,
		    "conversation %s already ended (%s)", t->id, status);
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT OR IGNORE INTO cancel_requests (kind, target,"
		 " team_id, requested_by, requested_at)"
		 " VALUES ('conversation', ?1, ?2, ?3, ?4)",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_text(s, 2, team);
	if (t->by != NULL)
		hd_stmt_bind_text(s, 3, t->by);
	hd_stmt_bind_int(s, 4, hd_now_ms());
	return hd_store_step_done(st, s, err);
}

int
hd_conversation_cancel(
    int *ended, hd_store *st, const char *id, const char *by, hd_err *err)
{
	struct request_txn t;
	int rc, done = 0;

	if (ended != NULL)
		*ended = 0;
	memset(&t, 0, sizeof(t));
	t.id = id;
	t.by = by;
	if ((rc = hd_store_write(st, request_txn_fn, &t, err)) < 0)
		goto done;
	/* nobody runs it: nobody else will end it */
	if (!hd_owner_alive(t.owner, t.pid, t.start)) {
		if ((rc = end_conv(&done, st, id, t.owner, NULL, 1, err)) < 0)
			goto done;
		if (ended != NULL)
			*ended = done;
	}
done:
	free(t.owner);
	return rc;
}

int
hd_conversation_cancel_wait(
    hd_store *st, const char *id, int timeout_ms, hd_err *err)
{
	int64_t deadline = hd_mono_ms() + timeout_ms, left;
	hd_conversation *c = NULL;
	uint64_t cursor = 0;
	int rc, running;

	for (;;) {
		hd_store_change_cursor(st, &cursor, NULL);
		if ((rc = hd_conversation_get(&c, st, id, err)) < 0)
			return rc;
		running = strcmp(c->status, "running") == 0;
		hd_conversation_free(c);
		c = NULL;
		if (!running)
			return 0;
		if ((left = deadline - hd_mono_ms()) <= 0)
			return hd_err_set(err, HD_ETIMEOUT,
			    "conversation %s is still stopping", id);
		hd_store_wait_change(st, &cursor,
		    left < WATCH_SLICE_MS ? (int)left : WATCH_SLICE_MS, NULL);
	}
}

/* ---- asking: exchanges (1) ---------------------------------------------- */

struct exch_txn {
	const char *team;
	const char *by;
	char room[HD_ROOM_ID_MAX];
};

static int
exch_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct exch_txn *t = payload;
	hd_stmt *s;
	char holder[64] = "";
	int rc, src;

	if ((rc = hd_store_prepare(
		 st, &s, "SELECT 1 FROM teams WHERE id = ?1", err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->team);
	src = hd_stmt_step(s);
	hd_store_reset(s);
	if (src == HD_DONE)
		return hd_err_set(
		    err, HD_ENOTFOUND, "team \"%s\" not found", t->team);
	if (src != HD_ROW)
		return hd_store_sqlerr(st, src, err);
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT holder FROM room_locks WHERE room_id = ?1"
		 " AND expires_at > ?2",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->room);
	hd_stmt_bind_int(s, 2, hd_now_ms());
	if ((src = hd_stmt_step(s)) == HD_ROW)
		snprintf(holder, sizeof(holder), "%s",
		    hd_stmt_text(s, 0));
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	if (holder[0] == '\0')
		return hd_err_set(err, HD_ECONFLICT,
		    "no exchange is running in team %s's room", t->team);
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT OR IGNORE INTO cancel_requests (kind, target,"
		 " team_id, requested_by, requested_at)"
		 " VALUES ('exchange', ?1, ?2, ?3, ?4)",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, holder);
	hd_stmt_bind_text(s, 2, t->team);
	if (t->by != NULL)
		hd_stmt_bind_text(s, 3, t->by);
	hd_stmt_bind_int(s, 4, hd_now_ms());
	return hd_store_step_done(st, s, err);
}

int
hd_exchange_cancel(char *room, hd_store *st, const char *team, const char *by,
    hd_err *err)
{
	struct exch_txn t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.team = team;
	t.by = by;
	hd_room_id(t.room, sizeof(t.room), team);
	if ((rc = hd_store_write(st, exch_txn_fn, &t, err)) < 0)
		return rc;
	if (room != NULL)
		memcpy(room, t.room, sizeof(t.room));
	return 0;
}

/* 1 while team's room is held by an exchange a request cancels. */
static int
exch_cancelling(int *out, hd_store *st, const char *room, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT 1 FROM room_locks l JOIN cancel_requests r"
		 " ON r.kind = 'exchange' AND r.target = l.holder"
		 " WHERE l.room_id = ?1 AND l.expires_at > ?2",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, room);
	hd_stmt_bind_int(s, 2, hd_now_ms());
	src = hd_stmt_step(s);
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	*out = src == HD_ROW;
	return 0;
}

int
hd_exchange_cancel_wait(
    hd_store *st, const char *team, int timeout_ms, hd_err *err)
{
	int64_t deadline = hd_mono_ms() + timeout_ms, left;
	char room[HD_ROOM_ID_MAX];
	uint64_t cursor = 0;
	int rc, held;

	hd_room_id(room, sizeof(room), team);
	for (;;) {
		hd_store_change_cursor(st, &cursor, NULL);
		if ((rc = exch_cancelling(&held, st, room, err)) < 0)
			return rc;
		if (!held)
			return 0;
		if ((left = deadline - hd_mono_ms()) <= 0)
			return hd_err_set(err, HD_ETIMEOUT,
			    "the exchange in %s is still stopping", room);
		hd_store_wait_change(st, &cursor,
		    left < WATCH_SLICE_MS ? (int)left : WATCH_SLICE_MS, NULL);
	}
}

/* ---- the watch (2) ------------------------------------------------------ */

struct hd_cancel_watch {
	pthread_t thread;
	atomic_int stop;
	char *home;
	/* returns 1 while something it found is not over: look again */
	int (*check)(hd_cancel_watch *w, hd_store *st);
	/* a conversation engine's */
	const hd_conv_owner *me;
	hd_conv_turns *turns;
	/* an exchange's */
	char room[HD_ROOM_ID_MAX];
	atomic_int *cancel;
	atomic_int *turn_abort;
	const atomic_int *mirror;
};

static void *
watch_main(void *arg)
{
	hd_cancel_watch *w = arg;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	uint64_t cursor = 0;
	int again = 1, changed;

	while (!atomic_load(&w->stop) &&
	       hd_store_open(&st, w->home, &err) < 0) {
		hd_log_error("the cancel watch cannot open the store: %s",
		    err.msg);
		usleep(WATCH_SLICE_MS * 1000);
	}
	if (st != NULL)
		hd_store_change_cursor(st, &cursor, NULL);
	while (st != NULL && !atomic_load(&w->stop)) {
		if (w->mirror != NULL && atomic_load(w->mirror))
			atomic_store(w->turn_abort, 1);
		if (again)
			again = w->check(w, st);
		changed = hd_store_wait_change(
		    st, &cursor, WATCH_SLICE_MS, NULL);
		again = again || changed;
	}
	hd_store_close(st);
	return NULL;
}

static int
watch_start(hd_cancel_watch *w, hd_err *err)
{
	pthread_attr_t attr;
	int rc;

	atomic_init(&w->stop, 0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	rc = pthread_create(&w->thread, &attr, watch_main, w);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return hd_err_set(err, HD_ERR,
		    "cannot start the cancel watch: %s", strerror(rc));
	return 0;
}

static void
watch_free(hd_cancel_watch *w)
{
	if (w == NULL)
		return;
	free(w->home);
	free(w);
}

void
hd_cancel_watch_stop(hd_cancel_watch *w)
{
	if (w == NULL)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	watch_free(w);
}

/* The conversations me runs that a request cancels: stop their turns,
 * end those with none running (3). */
static int
conv_check(hd_cancel_watch *w, hd_store *st)
{
	char ids[WATCH_MAX_IDS][HD_CONVERSATION_ID_LEN + 1];
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	size_t n = 0, i;
	int again = 0, done, src;

	if (hd_store_prepare(st, &s,
		"SELECT c.id FROM cancel_requests r JOIN conversations c"
		" ON c.id = r.target WHERE r.kind = 'conversation'"
		" AND c.status = 'running' AND c.owner = ?1",
		&err) < 0) {
		hd_log_warn("cannot look for cancels: %s", err.msg);
		return 1;
	}
	hd_stmt_bind_text(s, 1, w->me->token);
	while ((src = hd_stmt_step(s)) == HD_ROW && n < WATCH_MAX_IDS)
		snprintf(ids[n++], sizeof(ids[0]), "%s",
		    hd_stmt_text(s, 0));
	hd_store_reset(s);
	if (src == HD_ROW)
		again = 1; /* more than fit: the rest next time */
	for (i = 0; i < n; i++) {
		if (turns_cancel(w->turns, ids[i]) > 0) {
			again = 1; /* their workers end it, or next time */
			continue;
		}
		if (hd_conv__cancel_end(&done, st, ids[i], w->me, &err) < 0) {
			hd_log_warn("conversation %s: not cancelled yet: %s",
			    ids[i], err.msg);
			done = 0;
		}
		again |= !done;
	}
	return again;
}

int
hd_conv__watch_start(hd_cancel_watch **out, const char *home,
    const hd_conv_owner *me, hd_conv_turns *turns, hd_err *err)
{
	hd_cancel_watch *w;
	int rc;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->home = strdup(home)) == NULL) {
		watch_free(w);
		return oom(err);
	}
	w->check = conv_check;
	w->me = me;
	w->turns = turns;
	if ((rc = watch_start(w, err)) < 0) {
		watch_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* A request for the room lock this process holds (1). */
static int
exch_check(hd_cancel_watch *w, hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	int src;

	if (atomic_load(w->cancel))
		return 0;
	if (hd_store_prepare(st, &s,
		"SELECT 1 FROM room_locks l JOIN cancel_requests r"
		" ON r.kind = 'exchange' AND r.target = l.holder"
		" WHERE l.room_id = ?1 AND l.pid = ?2",
		&err) < 0) {
		hd_log_warn("cannot look for cancels: %s", err.msg);
		return 1;
	}
	hd_stmt_bind_text(s, 1, w->room);
	hd_stmt_bind_int(s, 2, getpid());
	src = hd_stmt_step(s);
	hd_store_reset(s);
	if (src == HD_ROW) {
		hd_log_info("%s: the exchange is cancelled", w->room);
		atomic_store(w->cancel, 1);
		atomic_store(w->turn_abort, 1);
	}
	return 0;
}

int
hd_exchange_watch_start(hd_exchange_watch **out, const char *home,
    const char *team, atomic_int *cancel, atomic_int *turn_abort,
    const atomic_int *mirror, hd_err *err)
{
	hd_cancel_watch *w;
	int rc;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->home = strdup(home)) == NULL) {
		watch_free(w);
		return oom(err);
	}
	w->check = exch_check;
	hd_room_id(w->room, sizeof(w->room), team);
	w->cancel = cancel;
	w->turn_abort = turn_abort;
	w->mirror = mirror;
	if ((rc = watch_start(w, err)) < 0) {
		watch_free(w);
		return rc;
	}
	*out = (hd_exchange_watch *)w;
	return 0;
}

void
hd_exchange_watch_stop(hd_exchange_watch *w)
{
	hd_cancel_watch_stop((hd_cancel_watch *)w);
}
