/*
 * listen.c -- live delivery to MCP clients (SPEC 10.1): a bound agent's
 * team's room posts and its mail as JSON-RPC notifications as they
 * happen, over the 2025 era's GET /mcp (with the sessions initialize
 * opens) and the 2026-07-28 era's subscriptions/listen. Called by
 * route-mcp.c (sessions, streams) and sse.c (what a listener hears).
 *
 *  (1) The streams are sse.c's (its (9)): one broadcaster, the same
 *      backlog, caps, keep-alives and reaping as GET /api/events. Every
 *      notification's SSE id is the event log's seq of the post or
 *      message, so Last-Event-ID resumes either stream exactly after the
 *      last one a client saw: nothing lost, nothing twice. The first
 *      event of a stream names its resume point (2025: an empty priming
 *      event; 2026: the acknowledgement), so a client that heard nothing
 *      else still has an id to resume from.
 *  (2) A listener hears, of its own team only: every room post but its
 *      own peer posts (the echo guard hd_room_subscribe keeps), as
 *      HD_MCP_NOTE_ROOM with params {seq, roomId, authorAgentId, kind,
 *      wrapped} -- wrapped made by hd_envelope_wrap exactly as
 *      team_chat_subscribe makes it (isUser=false); and every message
 *      sent to it, as HD_MCP_NOTE_MAIL with params {id, fromAgentId,
 *      type, summary, wrapped}, wrapped the <teammate-message> block the
 *      piggyback gives. A notification tells; it marks no mail delivered
 *      (a read, or the piggyback, still does, once).
 *  (3) The post or message is read through the room and mailbox
 *      libraries, once per event for all listeners (sse.c reads it with
 *      its own store); a post or message gone by then (its team removed)
 *      is skipped, as the event's team is.
 *  (4) 2026: each notification carries params._meta's
 *      io.modelcontextprotocol/subscriptionId, the listen request's id;
 *      the first is notifications/subscriptions/acknowledged with the
 *      filter keys honoured; at shutdown the stream ends with the listen
 *      request's result, as the revision says a server tears one down.
 *  (5) Sessions (2025 Streamable HTTP): initialize over HTTP gets an
 *      Mcp-Session-Id, 128 random bits as hex, bound to the identity the
 *      URL gave (route-mcp.c (3)). A request naming a session the server
 *      does not hold, or one held for another identity, is 404; DELETE
 *      ends it, and its GET streams with it. At most MCP_SESS_MAX are
 *      held, the least recently used dropped first (a client of a
 *      dropped one gets 404 and initializes again, as the transport
 *      says). Guarded by mcp_lock, never taken with sse_lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/envelope.h>
#include <huddle/mailbox.h>
#include <huddle/room.h>
#include <huddle/util.h>

#include "server_int.h"

#define MCP_SESS_MAX 4096

struct hd_mcp_sess {
	char id[33];
	char team[HD_MCP_NAME_MAX], agent[HD_MCP_NAME_MAX];
	int bound;
	int64_t used; /* hd_mono_ms of its last request */
};

/* ---- sessions (5) ---- */

static int
sess_same(const struct hd_mcp_sess *x, const hd_mcp_session *s)
{
	return x->bound == s->bound && strcmp(x->team, s->team) == 0 &&
	       strcmp(x->agent, s->agent) == 0;
}

/* Under mcp_lock: the live session sid of s's identity, or NULL. */
static struct hd_mcp_sess *
sess_find(hd_http_server *srv, const char *sid, const hd_mcp_session *s)
{
	size_t i;

	for (i = 0; i < srv->nmcp_sessions; i++)
		if (strcmp(srv->mcp_sessions[i].id, sid) == 0)
			return sess_same(&srv->mcp_sessions[i], s)
				   ? &srv->mcp_sessions[i]
				   : NULL;
	return NULL;
}

int
hd_http_mcp_session_new(
    hd_http_server *srv, char sid[33], const hd_mcp_session *s)
{
	struct hd_mcp_sess *x = NULL;
	hd_err err = HD_ERR_INIT;
	size_t i;

	if (hd_random_hex(sid, 16, &err) < 0)
		return -1;
	pthread_mutex_lock(&srv->mcp_lock);
	if (srv->mcp_sessions == NULL &&
	    (srv->mcp_sessions = calloc(
		 MCP_SESS_MAX, sizeof(*srv->mcp_sessions))) == NULL) {
		pthread_mutex_unlock(&srv->mcp_lock);
		return -1;
	}
	if (srv->nmcp_sessions < MCP_SESS_MAX)
		x = &srv->mcp_sessions[srv->nmcp_sessions++];
	else /* the least recently used goes */
		for (x = &srv->mcp_sessions[0], i = 1; i < MCP_SESS_MAX; i++)
			if (srv->mcp_sessions[i].used < x->used)
				x = &srv->mcp_sessions[i];
	snprintf(x->id, sizeof(x->id), "%s", sid);
	snprintf(x->team, sizeof(x->team), "%s", s->team);
	snprintf(x->agent, sizeof(x->agent), "%s", s->agent);
	x->bound = s->bound;
	x->used = hd_mono_ms();
	pthread_mutex_unlock(&srv->mcp_lock);
	return 0;
}

int
hd_http_mcp_session_ok(
    hd_http_server *srv, const char *sid, const hd_mcp_session *s)
{
	struct hd_mcp_sess *x;

	pthread_mutex_lock(&srv->mcp_lock);
	if ((x = sess_find(srv, sid, s)) != NULL)
		x->used = hd_mono_ms();
	pthread_mutex_unlock(&srv->mcp_lock);
	return x != NULL;
}

int
hd_http_mcp_session_end(
    hd_http_server *srv, const char *sid, const hd_mcp_session *s)
{
	struct hd_mcp_sess *x;

	pthread_mutex_lock(&srv->mcp_lock);
	if ((x = sess_find(srv, sid, s)) != NULL)
		*x = srv->mcp_sessions[--srv->nmcp_sessions];
	pthread_mutex_unlock(&srv->mcp_lock);
	if (x == NULL)
		return 0;
	hd_http__sse_end_session(srv, sid);
	return 1;
}

void
hd_http__mcp_sessions_free(hd_http_server *srv)
{
	free(srv->mcp_sessions);
	srv->mcp_sessions = NULL;
	srv->nmcp_sessions = 0;
}

/* ---- the streams (1) ---- */

void
hd_http__listen_free(hd_listen *L)
{
	if (L == NULL)
		return;
	json_decref(L->sub);
	free(L);
}

static hd_listen *
listen_new(const hd_mcp_session *s, int room, int mail)
{
	hd_listen *L = calloc(1, sizeof(*L));

	if (L == NULL)
		return NULL;
	snprintf(L->agent, sizeof(L->agent), "%s", s->agent);
	L->room = room;
	L->mail = mail;
	return L;
}

int
hd_http_mcp_stream(hd_http_req *r, const hd_mcp_session *s, const char *sid,
    int64_t last_id)
{
	hd_listen *L = listen_new(s, 1, 1);

	if (L == NULL) {
		hd_http_error(r, 500, "out of memory");
		return -1;
	}
	snprintf(L->session, sizeof(L->session), "%s", sid);
	return hd_http__sse_listen(r, s->team, last_id, L);
}

int
hd_http_mcp_listen(hd_http_req *r, hd_mcp_session *s, int64_t last_id)
{
	hd_listen *L = listen_new(s, s->listen.room, s->listen.mail);
	char *id = s->listen.id;

	s->listen.id = NULL;
	s->listen.open = 0;
	if (L == NULL || (L->sub = json_loads(id, JSON_DECODE_ANY, NULL)) ==
			     NULL) {
		free(id);
		hd_http__listen_free(L);
		hd_http_error(r, 500, "out of memory");
		return -1;
	}
	free(id);
	return hd_http__sse_listen(r, s->team, last_id, L);
}

/* ---- what a listener hears (2)(3) ---- */

static json_t *
post_params(hd_store *st, const hd_event *e)
{
	json_int_t seq =
	    json_integer_value(json_object_get(e->data, "seq"));
	hd_posts l;
	hd_err err = HD_ERR_INIT;
	json_t *p = NULL;
	char *wrapped = NULL;

	if (seq < 1 || hd_room_read(&l, st, e->team_id, seq - 1, 1, NULL,
			   &err) < 0)
		return NULL;
	if (l.n == 1 && l.items[0].seq == seq &&
	    hd_envelope_wrap(&wrapped, l.items[0].author, l.items[0].kind, seq,
		l.items[0].body, strlen(l.items[0].body), &err) == 0)
		p = json_pack("{s:I, s:s, s:s, s:s, s:s}", "seq", seq,
		    "roomId", l.items[0].room_id, "authorAgentId",
		    l.items[0].author, "kind", l.items[0].kind, "wrapped",
		    wrapped);
	free(wrapped);
	hd_posts_dispose(&l);
	return p;
}

static json_t *
mail_params(hd_store *st, const hd_event *e)
{
	json_int_t id = json_integer_value(json_object_get(e->data, "id"));
	const char *to = json_string_value(json_object_get(e->data, "to"));
	hd_messages l;
	hd_err err = HD_ERR_INIT;
	json_t *p = NULL;
	char *wrapped = NULL;

	if (id < 1 || to == NULL ||
	    hd_mailbox_range(&l, st, to, id, id, &err) < 0)
		return NULL;
	if (l.n == 1 && hd_mailbox_render(&wrapped, &l, &err) == 0)
		p = json_pack("{s:I, s:s, s:s, s:s, s:s}", "id", id,
		    "fromAgentId", l.items[0].from_agent, "type",
		    l.items[0].type, "summary", l.items[0].summary, "wrapped",
		    wrapped);
	free(wrapped);
	hd_messages_dispose(&l);
	return p;
}

json_t *
hd_http__listen_params(hd_store *st, const hd_event *e)
{
	if (e->team_id == NULL)
		return NULL;
	if (strcmp(e->kind, "team_chat_post") == 0)
		return post_params(st, e);
	if (strcmp(e->kind, "message_sent") == 0)
		return mail_params(st, e);
	return NULL;
}

/* One SSE event: `id: <seq>` when seq >= 0, and data: the notification
 * {"jsonrpc":"2.0","method":method,"params":p}, p with L's subscription
 * id added to its _meta in the 2026 era (4). */
static char *
note_text(const hd_listen *L, int64_t seq, const char *method, const json_t *p)
{
	char *body = json_dumps(p, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *sub = L->sub != NULL ? json_dumps(L->sub, JSON_COMPACT |
							     JSON_ENCODE_ANY)
				   : NULL;
	hd_buf b = HD_BUF_INIT(0);
	size_t len = body != NULL ? strlen(body) : 0;
	int bad = body == NULL || len < 2 || (L->sub != NULL && sub == NULL);

	if (seq >= 0)
		hd_buf_printf(&b, "id: %lld\n", (long long)seq);
	hd_buf_printf(&b, "data: {\"jsonrpc\":\"2.0\",\"method\":\"%s\","
			  "\"params\":",
	    method);
	if (bad)
		;
	else if (sub == NULL)
		hd_buf_puts(&b, body);
	else {
		hd_buf_put(&b, body, len - 1);
		hd_buf_puts(&b, len > 2 ? "," : "");
		hd_buf_printf(&b, "\"_meta\":{\"" HD_MCP_META_SUB "\":%s}}",
		    sub);
	}
	hd_buf_puts(&b, "}\n\n");
	free(body);
	free(sub);
	if (bad || hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return NULL;
	}
	return hd_buf_detach(&b);
}

char *
hd_http__listen_text(const hd_listen *L, const hd_event *e, const json_t *p)
{
	const char *author, *kind, *to;

	if (p == NULL)
		return NULL;
	if (strcmp(e->kind, "team_chat_post") == 0) {
		author = json_string_value(json_object_get(p, "authorAgentId"));
		kind = json_string_value(json_object_get(p, "kind"));
		if (!L->room || author == NULL || kind == NULL ||
		    (strcmp(kind, "peer") == 0 && strcmp(author, L->agent) == 0))
			return NULL;
		return note_text(L, e->seq, HD_MCP_NOTE_ROOM, p);
	}
	to = json_string_value(json_object_get(e->data, "to"));
	if (!L->mail || to == NULL || strcmp(to, L->agent) != 0)
		return NULL;
	return note_text(L, e->seq, HD_MCP_NOTE_MAIL, p);
}

char *
hd_http__listen_prelude(const hd_listen *L, int64_t cursor)
{
	json_t *p;
	char *text;

	if (L->sub == NULL) { /* 2025: an empty priming event */
		hd_buf b = HD_BUF_INIT(0);

		hd_buf_printf(&b, "id: %lld\ndata: \n\n", (long long)cursor);
		if (hd_buf_failed(&b)) {
			hd_buf_dispose(&b);
			return NULL;
		}
		return hd_buf_detach(&b);
	}
	p = json_pack("{s:{}}", "notifications");
	if (L->room)
		json_object_set_new(json_object_get(p, "notifications"),
		    HD_MCP_FILTER_ROOM, json_true());
	if (L->mail)
		json_object_set_new(json_object_get(p, "notifications"),
		    HD_MCP_FILTER_MAIL, json_true());
	text = note_text(
	    L, cursor, "notifications/subscriptions/acknowledged", p);
	json_decref(p);
	return text;
}

char *
hd_http__listen_final(const hd_listen *L)
{
	json_t *reply;
	char *body;
	hd_buf b = HD_BUF_INIT(0);

	if (L->sub == NULL)
		return NULL;
	reply = json_pack("{s:s, s:O, s:{s:s, s:{s:O}}}", "jsonrpc", "2.0",
	    "id", L->sub, "result", "resultType", "complete", "_meta",
	    HD_MCP_META_SUB, L->sub);
	body = reply != NULL
		   ? json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER)
		   : NULL;
	json_decref(reply);
	if (body == NULL)
		return NULL;
	hd_buf_printf(&b, "data: %s\n\n", body);
	free(body);
	if (hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return NULL;
	}
	return hd_buf_detach(&b);
}
