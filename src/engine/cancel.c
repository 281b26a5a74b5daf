/*
 * cancel.c -- cancelling a running conversation or exchange (cancel.h).
 * The requests are rows of the domain module (cancel_requests.h); this
 * file makes and reads them, stops the turns, and ends a cancelled
 * conversation in one transaction of conversation_store.h's calls.
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
 *      costs no query. It looks at most once per WATCH_MIN_MS however
 *      busy the store (hd_store_wait_change_paced): a commit that soon
 *      after the last look waits out the rest of it, and that look sees
 *      every request made meanwhile (a burst of room posts is not a query
 *      per commit).
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
#include <huddle/cancel_requests.h>
#include <huddle/events.h>
#include <huddle/room_lock.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "cancel_int.h"
#include "owner.h"

#define HD_LOG_COMPONENT "cancel"
#include <huddle/log.h>

#define WATCH_SLICE_MS 250
#define WATCH_MIN_MS 50 /* (2) */
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
	hd_convstore_head h;
	char *by = NULL, **running = NULL;
	int64_t now = hd_now_ms();
	size_t nrunning = 0, i;
	int rc = 0;

	t->done = t->running = t->stale = 0;
	if ((rc = hd_convstore_head_get(&h, st, t->id, err)) < 0)
		goto done;
	if (strcmp(h.status, "running") != 0) {
		t->done = 1;
		goto done;
	}
	if (!same(h.owner, t->owner)) /* taken over: the new owner ends it */
		goto done;
	if (h.total_messages != t->total) {
		t->stale = 1;
		goto done;
	}
	if ((rc = hd_convstore_running_agents(
		 &running, &nrunning, st, t->id, err)) < 0)
		goto done;
	if (nrunning > 0 && !t->force) {
		t->running = 1;
		goto done;
	}
	/* the owner is gone: its turns ended with it */
	for (i = 0; i < nrunning; i++)
		if ((rc = hd_activity_turn_abort(
			 st, h.team, running[i], err)) < 0)
			goto done;
	if ((rc = hd_convstore_cancel_deliveries(st, t->id, now, err)) < 0 ||
	    (rc = hd_convstore_cancelled(st, t->id, t->response, now, err)) <
		0 ||
	    (rc = hd_cancel_request_by(&by, st, t->id, err)) < 0)
		goto done;
	hd_events_append(st, "conversation_cancelled", h.team, 0, NULL,
	    json_pack("{s:s, s:s, s:s?, s:I, s:I, s:s, s:s?}",
		"conversation_id", t->id, "reason", HD_CANCEL_REASON, "by", by,
		"total_messages", (json_int_t)h.total_messages, "pending",
		(json_int_t)h.pending, "response", t->response, "transcript",
		t->path[0] != '\0' ? t->path : NULL));
	t->done = 1;
done:
	hd_strv_free(running, nrunning);
	free(h.owner);
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
	int rc;

	if ((rc = hd_convstore_cancel_delivery(
		 st, t->c->delivery_id, hd_now_ms(), err)) < 0)
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
	hd_convstore_head h;
	int rc;

	free(t->owner);
	t->owner = NULL;
	rc = hd_cancel_request_conversation(&h, st, t->id, t->by, err);
	t->owner = h.owner;
	t->pid = h.owner_pid;
	t->start = h.owner_start;
	return rc;
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

/* Wait until running(...) says *still 0, looking again at each change of
 * the store; HD_ETIMEOUT ("<what> is still stopping") after timeout_ms. */
static int
wait_stopped(hd_store *st, int timeout_ms,
    int (*running)(int *still, hd_store *st, const char *key, hd_err *err),
    const char *key, const char *what, hd_err *err)
{
	int64_t deadline = hd_mono_ms() + timeout_ms, left;
	uint64_t cursor = 0;
	int rc, still;

	for (;;) {
		hd_store_change_cursor(st, &cursor, NULL);
		if ((rc = running(&still, st, key, err)) < 0)
			return rc;
		if (!still)
			return 0;
		if ((left = deadline - hd_mono_ms()) <= 0)
			return hd_err_set(
			    err, HD_ETIMEOUT, "%s is still stopping", what);
		hd_store_wait_change(st, &cursor,
		    left < WATCH_SLICE_MS ? (int)left : WATCH_SLICE_MS, NULL);
	}
}

static int
conversation_running(int *still, hd_store *st, const char *id, hd_err *err)
{
	hd_conversation *c = NULL;
	int rc;

	if ((rc = hd_conversation_get(&c, st, id, err)) < 0)
		return rc;
	*still = strcmp(c->status, "running") == 0;
	hd_conversation_free(c);
	return 0;
}

int
hd_conversation_cancel_wait(
    hd_store *st, const char *id, int timeout_ms, hd_err *err)
{
	char what[160];

	snprintf(what, sizeof(what), "conversation %s", id);
	return wait_stopped(
	    st, timeout_ms, conversation_running, id, what, err);
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

	return hd_room_lock_cancel(st, t->team, t->room, t->by, err);
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

static int
exchange_held(int *still, hd_store *st, const char *room, hd_err *err)
{
	return hd_room_lock_cancelled(still, st, room, hd_now_ms(), err);
}

int
hd_exchange_cancel_wait(
    hd_store *st, const char *team, int timeout_ms, hd_err *err)
{
	char room[HD_ROOM_ID_MAX], what[HD_ROOM_ID_MAX + 24];

	hd_room_id(room, sizeof(room), team);
	snprintf(what, sizeof(what), "the exchange in %s", room);
	return wait_stopped(st, timeout_ms, exchange_held, room, what, err);
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
	int64_t last = 0;
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
		if (again) {
			last = hd_mono_us();
			again = w->check(w, st);
		}
		/* (2): not more than one look per WATCH_MIN_MS, unless the
		 * last one found something still going on; a failed wait
		 * looks too */
		changed = hd_store_wait_change_paced(st, &cursor,
		    WATCH_SLICE_MS, again ? 0 : WATCH_MIN_MS, last, NULL);
		again = again || changed != 0;
	}
	hd_store_close(st);
	return NULL;
}

static void
watch_free(hd_cancel_watch *w)
{
	if (w == NULL)
		return;
	free(w->home);
	free(w);
}

/* A watch of home's store that check looks with, not started yet; NULL
 * when memory ran out. */
static hd_cancel_watch *
watch_new(const char *home, int (*check)(hd_cancel_watch *, hd_store *))
{
	hd_cancel_watch *w;

	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->home = strdup(home)) == NULL) {
		watch_free(w);
		return NULL;
	}
	w->check = check;
	return w;
}

/* Start w's thread; w is freed when it cannot start. */
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
	if (rc != 0) {
		watch_free(w);
		return hd_err_set(err, HD_ERR,
		    "cannot start the cancel watch: %s", strerror(rc));
	}
	return 0;
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
	size_t n = 0, i;
	int again = 0, done;

	if (hd_cancel_requests_owned(
		ids, WATCH_MAX_IDS, &n, &again, st, w->me->token, &err) < 0) {
		hd_log_warn("cannot look for cancels: %s", err.msg);
		return 1;
	}
	/* again: more than fit, the rest next time */
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
	if ((w = watch_new(home, conv_check)) == NULL)
		return oom(err);
	w->me = me;
	w->turns = turns;
	if ((rc = watch_start(w, err)) < 0)
		return rc;
	*out = w;
	return 0;
}

/* A request for the room lock this process holds (1). */
static int
exch_check(hd_cancel_watch *w, hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	int mine;

	if (atomic_load(w->cancel))
		return 0;
	if (hd_room_lock_cancelled_mine(
		&mine, st, w->room, getpid(), &err) < 0) {
		hd_log_warn("cannot look for cancels: %s", err.msg);
		return 1;
	}
	if (mine) {
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
	if ((w = watch_new(home, exch_check)) == NULL)
		return oom(err);
	hd_room_id(w->room, sizeof(w->room), team);
	w->cancel = cancel;
	w->turn_abort = turn_abort;
	w->mirror = mirror;
	if ((rc = watch_start(w, err)) < 0)
		return rc;
	*out = (hd_exchange_watch *)w;
	return 0;
}

void
hd_exchange_watch_stop(hd_exchange_watch *w)
{
	hd_cancel_watch_stop((hd_cancel_watch *)w);
}
