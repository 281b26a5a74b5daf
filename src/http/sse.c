/*
 * sse.c -- GET /api/events as Server-Sent Events (SPEC 11).
 *
 * One broadcaster thread owns a store connection and sleeps in
 * hd_store_wait_change() until any process commits; it then reads the new
 * rows of the event log once and appends them to every open stream whose
 * team filter matches, resuming the connections MHD had suspended.
 *  (1) Every event goes out as `id: <seq>`, `event: <kind>`, `data: <json>`;
 *      seq is the event log's AUTOINCREMENT key, so Last-Event-ID resumes
 *      exactly after the last event the client saw: nothing lost, nothing
 *      twice.
 *  (2) sse_delivered is the highest seq handed to every registered stream.
 *      A new stream registers under sse_lock and, in the same critical
 *      section, reads its backlog (its resume point, sse_delivered], so no
 *      event falls between the backlog and the broadcast.
 *  (3) A stream with nothing to send is suspended by its content reader
 *      (MHD's prescribed way to have no data yet without busy looping) and
 *      resumed when data arrives, at each 15 s keep-alive comment, and at
 *      shutdown, when it gets a final `event: shutdown` and ends.
 *  (4) With no stream open the broadcaster reads nothing: it sleeps on
 *      sse_wake until a stream registers (or shutdown), so a server
 *      nobody follows pays nothing per commit. The first stream to
 *      register brings sse_delivered up to the log's head first.
 *  (5) Buffers are capped: a client that stops reading while events keep
 *      coming is cut off rather than growing the server without bound; it
 *      reconnects with Last-Event-ID and loses nothing.
 *  (6) Last-Event-ID is an event id, 0 or more (hd_http_sse_last_id; 400
 *      otherwise). One beyond the log's head (a client of another home, or
 *      of a log restored from an older backup) is answered from the head,
 *      with a comment line saying so -- not by silently waiting for the
 *      log to catch up with it. Both are pure, for
 *      tests/fuzz/fuzz-last-event-id.c.
 *  (7) Followers have their own budget, srv->max_followers streams at
 *      once (guard.c (6)): one more is answered 503 JSON with
 *      Retry-After before anything is read for it, so followers can
 *      never take the connections requests need. The check and the
 *      registration are one critical section under sse_lock.
 *  (8) MHD does not watch a suspended connection, so a follower that left
 *      would hold its place until the next write (a keep-alive, up to
 *      15 s): about once a second the broadcaster polls the sockets of
 *      the suspended streams for POLLRDHUP (without waiting; under
 *      sse_lock, so none is freed meanwhile) and ends those whose peer
 *      is gone. A suspended connection is one MHD is not closing.
 *  (9) A stream may be an MCP listener (listen.c: GET /mcp and
 *      subscriptions/listen): the same registration, backlog, cursor,
 *      wakes, caps and reaping, but each event goes out as the JSON-RPC
 *      notification hd_http__listen_text makes for that one bound agent,
 *      or not at all. Its id is still the event's seq, so Last-Event-ID
 *      resumes a listener exactly as it does /api/events. What a
 *      notification says beyond the event (a post's body, a message's
 *      content) the broadcaster reads once per event with its own store,
 *      outside sse_lock, and only while a listener is registered; a
 *      backlog reads it with the request's store. At shutdown a
 *      listener's last words are hd_http__listen_final's.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "server_int.h"

#define HD_LOG_COMPONENT "sse"
#include <huddle/log.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/util.h>

#define SSE_KEEPALIVE_MS 15000
#define SSE_BATCH 1000
#define SSE_BUF_MAX (8 * 1024 * 1024)
#define SSE_BACKLOG_MAX 10000
#define SSE_REAP_MS 1000

struct hd_sse {
	struct hd_sse *next;
	struct MHD_Connection *conn;
	int fd; /* the connection's socket, polled while suspended (8) */
	hd_http_server *srv;
	char team[64]; /* "" = every team */
	int64_t cursor; /* last seq appended */
	hd_buf buf;
	size_t off;    /* bytes of buf already sent */
	int suspended;
	int ended;     /* no more events: end after the buffer drains */
	hd_listen *listen; /* (9) an MCP listener's filter, or NULL */
};

/* The wire text of e (1), or NULL when out of memory. */
static char *
sse_format(const hd_event *e)
{
	json_t *j = hd_event_to_json(e);
	char *data = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER), *text;
	int n;

	json_decref(j);
	if (data == NULL)
		return NULL;
	n = snprintf(NULL, 0, "id: %lld\nevent: %s\ndata: %s\n\n",
	    (long long)e->seq, e->kind, data);
	if (n < 0 || (text = malloc((size_t)n + 1)) == NULL) {
		free(data);
		return NULL;
	}
	snprintf(text, (size_t)n + 1, "id: %lld\nevent: %s\ndata: %s\n\n",
	    (long long)e->seq, e->kind, data);
	free(data);
	return text;
}

/* Append e to s unless s has it or filters it out. *text is e's wire
 * text, formatted on first use and kept by the caller for the next
 * stream: with thousands of followers an event is serialized once, not
 * once per follower (free it after the last stream). */
static void
sse_append_event(
    struct hd_sse *s, const hd_event *e, char **text, const json_t *params)
{
	if (s->cursor >= e->seq)
		return;
	s->cursor = e->seq;
	if (s->team[0] != '\0' &&
	    (e->team_id == NULL || strcmp(e->team_id, s->team) != 0))
		return;
	if (s->listen != NULL) { /* (9) */
		char *note = hd_http__listen_text(s->listen, e, params);

		if (note == NULL)
			return;
		hd_buf_puts(&s->buf, note);
		free(note);
	} else {
		if (*text == NULL && (*text = sse_format(e)) == NULL)
			return;
		hd_buf_puts(&s->buf, *text);
	}
	if (hd_buf_failed(&s->buf)) {
		/* (4) a client this far behind reconnects and resumes */
		hd_log_warn("closing an SSE stream more than %d bytes behind",
		    SSE_BUF_MAX);
		s->ended = 1;
	}
}

static void
sse_wake(struct hd_sse *s)
{
	if (s->suspended) {
		s->suspended = 0;
		MHD_resume_connection(s->conn);
	}
}

static ssize_t
sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct hd_sse *s = cls;
	hd_http_server *srv = s->srv;
	ssize_t n = 0;

	(void)pos;
	pthread_mutex_lock(&srv->sse_lock);
	if (s->buf.len > s->off) {
		size_t avail = s->buf.len - s->off;

		n = (ssize_t)(avail < max ? avail : max);
		memcpy(out, s->buf.ptr + s->off, (size_t)n);
		s->off += (size_t)n;
		if (s->off == s->buf.len) {
			hd_buf_reset(&s->buf);
			s->off = 0;
		}
	} else if (s->ended)
		n = MHD_CONTENT_READER_END_OF_STREAM;
	else {
		s->suspended = 1;
		MHD_suspend_connection(s->conn);
	}
	pthread_mutex_unlock(&srv->sse_lock);
	return n;
}

static void
sse_free(void *cls)
{
	struct hd_sse *s = cls, **pp;
	hd_http_server *srv = s->srv;

	pthread_mutex_lock(&srv->sse_lock);
	for (pp = &srv->streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			srv->nstreams--;
			srv->nlisteners -= s->listen != NULL;
			break;
		}
	pthread_mutex_unlock(&srv->sse_lock);
	hd_http__listen_free(s->listen);
	hd_buf_dispose(&s->buf);
	free(s);
}

/* Append events after s->cursor up to `upto` from the log (backlog). */
static int
sse_backlog(struct hd_sse *s, hd_store *st, int64_t upto, hd_err *err)
{
	hd_event_filter f = {0};
	hd_event_list l;
	size_t i, total = 0;
	int rc;

	f.team = s->team[0] ? s->team : NULL;
	f.limit = SSE_BATCH;
	while (s->cursor < upto && total < SSE_BACKLOG_MAX) {
		f.after_seq = s->cursor;
		if ((rc = hd_events_list(&l, st, &f, err)) < 0)
			return rc;
		for (i = 0; i < l.n && l.items[i].seq <= upto; i++) {
			char *text = NULL;
			json_t *p = s->listen != NULL
					? hd_http__listen_params(st, &l.items[i])
					: NULL;

			sse_append_event(s, &l.items[i], &text, p);
			json_decref(p);
			free(text);
		}
		total += l.n;
		if (l.n < SSE_BATCH || i < l.n) {
			hd_event_list_dispose(&l);
			break;
		}
		hd_event_list_dispose(&l);
	}
	/* Filtered-out events still advance the cursor to what we checked. */
	if (s->cursor < upto && total < SSE_BACKLOG_MAX)
		s->cursor = upto;
	return 0;
}

int
hd_http_sse_last_id(int64_t *out, const char *value, hd_err *err)
{
	int rc;

	*out = -1;
	if (value == NULL || value[0] == '\0')
		return 0;
	if ((rc = hd_parse_i64(out, value, "Last-Event-ID", err)) < 0) {
		*out = -1;
		return rc;
	}
	if (*out < 0) {
		*out = -1;
		return hd_err_set(err, HD_EINVAL,
		    "Last-Event-ID must be an event id (0 or more), not "
		    "\"%.64s\"",
		    value);
	}
	return 0;
}

int64_t
hd_http_sse_resume(char *note, size_t notelen, int64_t last_id, int64_t head)
{
	if (notelen > 0)
		note[0] = '\0';
	if (last_id <= head)
		return last_id;
	snprintf(note, notelen,
	    ": last-event-id %lld is beyond the head %lld; resuming from the "
	    "head\n\n",
	    (long long)last_id, (long long)head);
	return head;
}

static int
sse_open(hd_http_req *r, const char *team, int64_t last_id, hd_listen *L)
{
	hd_http_server *srv = r->srv;
	struct MHD_Response *resp;
	struct hd_sse *s;
	hd_err err = HD_ERR_INIT;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		hd_http__listen_free(L);
		hd_http_error(r, 500, "out of memory");
		return -1;
	}
	s->listen = L;
	s->srv = srv;
	s->conn = r->conn;
	{
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		    r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		s->fd = ci != NULL ? ci->connect_fd : -1;
	}
	s->buf.max = SSE_BUF_MAX;
	snprintf(s->team, sizeof(s->team), "%s", team ? team : "");
	/* Tell the browser how long to wait before reconnecting. */
	hd_buf_puts(&s->buf, "retry: 1000\n\n");
	pthread_mutex_lock(&srv->sse_lock);
	if (srv->nstreams >= srv->max_followers) { /* (7) */
		size_t open = srv->nstreams;

		pthread_mutex_unlock(&srv->sse_lock);
		hd_http__listen_free(L);
		hd_buf_dispose(&s->buf);
		free(s);
		hd_http_error(r, 503,
		    "too many event streams open (%zu): retry later", open);
		hd_http_set_header(r, "Retry-After", "5");
		return -1;
	}
	if (srv->nstreams == 0) {
		/* (4) nobody was following: catch up with the head without
		 * reading what nobody will receive */
		int64_t head = 0;

		if (hd_events_head(&head, r->st, &err) == 0 &&
		    head > srv->sse_delivered)
			srv->sse_delivered = head;
	}
	if (last_id >= 0) { /* (6) */
		char note[160];
		int64_t head = 0;

		if (hd_events_head(&head, r->st, &err) == 0) {
			last_id = hd_http_sse_resume(
			    note, sizeof(note), last_id, head);
			hd_buf_puts(&s->buf, note);
		}
	}
	s->cursor = last_id >= 0 ? last_id : srv->sse_delivered;
	if (L != NULL) { /* (9) its first words, naming where it resumes */
		char *first = hd_http__listen_prelude(L, s->cursor);

		hd_buf_puts(&s->buf, first != NULL ? first : "");
		free(first);
	}
	if (s->cursor < srv->sse_delivered &&
	    sse_backlog(s, r->st, srv->sse_delivered, &err) < 0) {
		pthread_mutex_unlock(&srv->sse_lock);
		hd_http__listen_free(L);
		hd_buf_dispose(&s->buf);
		free(s);
		hd_http_fail(r, &err);
		return -1;
	}
	if (srv->sse_stopping)
		s->ended = 1;
	s->next = srv->streams;
	srv->streams = s;
	srv->nstreams++;
	srv->nlisteners += L != NULL;
	pthread_cond_signal(&srv->sse_cond);
	pthread_mutex_unlock(&srv->sse_lock);

	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4 * 1024,
	    sse_read, s, sse_free);
	if (resp == NULL) {
		sse_free(s);
		hd_http_error(r, 500, "cannot create the event stream");
		return -1;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "text/event-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	r->stream = resp;
	return 0;
}

int
hd_http_sse_start(hd_http_req *r, const char *team, int64_t last_id)
{
	return sse_open(r, team, last_id, NULL);
}

int
hd_http__sse_listen(
    hd_http_req *r, const char *team, int64_t last_id, hd_listen *L)
{
	return sse_open(r, team, last_id, L);
}

void
hd_http__sse_end_session(hd_http_server *srv, const char *sid)
{
	struct hd_sse *s;

	pthread_mutex_lock(&srv->sse_lock);
	for (s = srv->streams; s != NULL; s = s->next)
		if (s->listen != NULL && strcmp(s->listen->session, sid) == 0) {
			s->ended = 1;
			sse_wake(s);
		}
	pthread_mutex_unlock(&srv->sse_lock);
}

/* (8) Under sse_lock: end the suspended streams whose follower left. */
static void
sse_reap(hd_http_server *srv)
{
	struct pollfd *pfd;
	struct hd_sse *s, **who;
	size_t n = 0, i;

	if (srv->nstreams == 0)
		return;
	pfd = malloc(srv->nstreams * sizeof(*pfd));
	who = malloc(srv->nstreams * sizeof(*who));
	if (pfd != NULL && who != NULL) {
		for (s = srv->streams; s != NULL && n < srv->nstreams;
		    s = s->next)
			if (s->suspended && !s->ended && s->fd >= 0) {
				pfd[n].fd = s->fd;
				pfd[n].events = POLLRDHUP;
				pfd[n].revents = 0;
				who[n++] = s;
			}
		if (n > 0 && poll(pfd, n, 0) > 0)
			for (i = 0; i < n; i++)
				if (pfd[i].revents &
				    (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
					who[i]->ended = 1;
					sse_wake(who[i]);
				}
	}
	free(pfd);
	free(who);
}

static void *
sse_main(void *arg)
{
	hd_http_server *srv = arg;
	hd_store *st = NULL;
	hd_event_filter f = {0};
	hd_event_list l;
	struct hd_sse *s;
	uint64_t cursor = 0;
	int64_t last_keepalive = hd_mono_ms(), last_reap = last_keepalive;
	hd_err err = HD_ERR_INIT;
	char **texts = NULL; /* each event's wire text, formatted once */
	json_t **params = NULL; /* (9) each event's notification params */
	size_t i, nlisteners;

	if (hd_store_open(&st, srv->home, &err) < 0) {
		hd_log_error("event stream disabled: %s", err.msg);
		return NULL;
	}
	f.limit = SSE_BATCH;
	for (;;) {
		pthread_mutex_lock(&srv->sse_lock);
		while (srv->nstreams == 0 && !srv->sse_stopping)
			pthread_cond_wait(&srv->sse_cond, &srv->sse_lock);
		if (srv->sse_stopping) {
			pthread_mutex_unlock(&srv->sse_lock);
			break;
		}
		f.after_seq = srv->sse_delivered;
		nlisteners = srv->nlisteners;
		pthread_mutex_unlock(&srv->sse_lock);

		/* Read only; sse_lock is not held while touching the db. */
		if (hd_store_change_cursor(st, &cursor, &err) < 0 ||
		    hd_events_list(&l, st, &f, &err) < 0) {
			hd_log_warn("event stream: %s", err.msg);
			hd_sleep_us(200000);
			continue;
		}
		if (l.n > 0 && ((texts = calloc(l.n, sizeof(*texts))) == NULL ||
				   (params = calloc(l.n, sizeof(*params))) ==
				       NULL)) {
			free(texts);
			texts = NULL;
			hd_event_list_dispose(&l);
			hd_sleep_us(200000);
			continue; /* the same events again, with memory */
		}
		for (i = 0; nlisteners > 0 && i < l.n; i++) /* (9) */
			params[i] = hd_http__listen_params(st, &l.items[i]);
		pthread_mutex_lock(&srv->sse_lock);
		if (nlisteners == 0 && srv->nlisteners > 0) {
			/* one registered meanwhile: it hears these too */
			pthread_mutex_unlock(&srv->sse_lock);
			for (i = 0; i < l.n; i++)
				params[i] = hd_http__listen_params(
				    st, &l.items[i]);
			pthread_mutex_lock(&srv->sse_lock);
		}
		for (s = srv->streams; s != NULL; s = s->next) {
			for (i = 0; i < l.n; i++)
				sse_append_event(
				    s, &l.items[i], &texts[i], params[i]);
			if (s->buf.len > s->off || s->ended)
				sse_wake(s);
		}
		for (i = 0; i < l.n; i++) {
			free(texts[i]);
			json_decref(params[i]);
		}
		free(texts);
		free(params);
		texts = NULL;
		params = NULL;
		if (l.n > 0)
			srv->sse_delivered = l.items[l.n - 1].seq;
		if (hd_mono_ms() - last_keepalive >= SSE_KEEPALIVE_MS) {
			last_keepalive = hd_mono_ms();
			for (s = srv->streams; s != NULL; s = s->next) {
				hd_buf_puts(&s->buf, ": keep-alive\n\n");
				sse_wake(s);
			}
		}
		if (hd_mono_ms() - last_reap >= SSE_REAP_MS) {
			last_reap = hd_mono_ms();
			sse_reap(srv);
		}
		pthread_mutex_unlock(&srv->sse_lock);
		if (l.n == SSE_BATCH) {
			hd_event_list_dispose(&l);
			continue; /* more to read right away */
		}
		hd_event_list_dispose(&l);
		/* Sleep until a commit anywhere, or a slice passes so keep-alives
		 * and shutdown are noticed. */
		if (hd_store_wait_change(st, &cursor, 500, &err) < 0) {
			hd_log_warn("event stream: %s", err.msg);
			hd_sleep_us(200000);
		}
	}
	hd_store_close(st);
	return NULL;
}

int
hd_http__sse_init(hd_http_server *srv, hd_err *err)
{
	hd_store *st = NULL;
	int rc;

	if ((rc = hd_store_open(&st, srv->home, err)) < 0)
		return rc;
	rc = hd_events_head(&srv->sse_delivered, st, err);
	hd_store_close(st);
	if (rc < 0)
		return rc;
	if (pthread_create(&srv->sse_thread, NULL, sse_main, srv) != 0)
		return hd_err_set(err, HD_ERR, "cannot start the event thread");
	srv->sse_started = 1;
	return 0;
}

void
hd_http__sse_shutdown(hd_http_server *srv)
{
	struct hd_sse *s;

	if (!srv->sse_started)
		return;
	pthread_mutex_lock(&srv->sse_lock);
	srv->sse_stopping = 1;
	pthread_cond_signal(&srv->sse_cond);
	for (s = srv->streams; s != NULL; s = s->next) {
		if (s->listen != NULL) { /* (9) */
			char *last = hd_http__listen_final(s->listen);

			hd_buf_puts(&s->buf, last != NULL ? last : "");
			free(last);
		} else
			hd_buf_puts(&s->buf, "event: shutdown\ndata: {}\n\n");
		s->ended = 1;
		sse_wake(s);
	}
	pthread_mutex_unlock(&srv->sse_lock);
	pthread_join(srv->sse_thread, NULL);
	srv->sse_started = 0;
}

void
hd_http__sse_free(hd_http_server *srv)
{
	(void)srv; /* streams are freed by MHD as their connections close */
}
