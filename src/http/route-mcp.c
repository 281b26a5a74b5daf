/*
 * route-mcp.c -- POST /mcp: MCP over Streamable HTTP (SPEC 10.1, 10.4).
 *
 *  (1) 200 application/json for every request (JSON-RPC errors too), 202
 *      with an empty body for notifications and responses; GET and DELETE
 *      are 405 (no server-initiated streams, no sessions).
 *  (2) Content-Type must be application/json (415); an Accept header, when
 *      present, must allow application/json (406).
 *  (3) Identity comes from the URL: roomTeamId, postAuthorAgentId and a
 *      valid sig, and nothing else, bind the request to that agent. Any
 *      other query -- no sig, a wrong one, another agent's, an added
 *      parameter, a repeated one -- is served unbound and read-only.
 *  (4) team_chat_post does not block a worker thread: the request is held
 *      (its connection suspended), the post goes to the group committer,
 *      and the reply is made and sent once that post committed. Every
 *      other method, and a post while the server is stopping, is answered
 *      at once. A request that could post announces itself to the
 *      committer before it is parsed, so a batch being formed waits for
 *      it (commit.c, wait policy).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "http.h"

struct qcount {
	int n;
	int dup;
	int seen[3];
};

static enum MHD_Result
count_arg(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	static const char *const keys[] = {"roomTeamId", "postAuthorAgentId",
	    "sig"};
	struct qcount *q = cls;
	int i;

	(void)kind;
	(void)value;
	q->n++;
	for (i = 0; i < 3; i++)
		if (strcmp(key, keys[i]) == 0 && q->seen[i]++)
			q->dup = 1;
	return MHD_YES;
}

static int
bind_from_url(hd_http_req *r, hd_mcp_session *s)
{
	const char *team = hd_http_query(r, "roomTeamId");
	const char *agent = hd_http_query(r, "postAuthorAgentId");
	const char *sig = hd_http_query(r, "sig");
	struct qcount q = {0, 0, {0, 0, 0}};
	hd_err err = HD_ERR_INIT;

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, count_arg, &q);
	if (q.n == 3 && !q.dup && team != NULL && agent != NULL &&
	    hd_http_attach_ok(r->srv, team, agent, sig))
		return hd_mcp_session_bind(s, team, agent, &err);
	s->read_only = 1;
	return 0;
}

/* One POST /mcp. The item comes first: the committer hands it back. */
struct mcp_req {
	hd_commit_item item;
	hd_mcp_session s;
	hd_http_req *r; /* only while the handler runs */
	hd_http_held *held;
	int announced; /* a post announced and not yet queued (4) */
};

static void
mcp_req_free(void *payload)
{
	struct mcp_req *m = payload;

	hd_mcp_session_dispose(&m->s);
	hd_post_free(m->item.req.out);
	free(m);
}

static void
mcp_reply(hd_http_req *r, char *reply)
{
	free(r->resp);
	r->resp = reply;
	r->resp_len = strlen(reply);
	r->status = 200;
	r->content_type = "application/json";
}

/* On an MHD worker, once the post is settled (4). The store the session
 * was made with went back to the pool with its request, and another
 * worker may be using it now: the reply (and the mail it carries) reads
 * through a store taken here. */
static void
mcp_finish(hd_http_req *r, void *payload)
{
	struct mcp_req *m = payload;
	hd_err perr = HD_ERR_INIT;
	char *reply = NULL;

	m->s.st = hd_http_store_take(r->srv, &perr); /* NULL: no mail */
	hd_mcp_finish_post(
	    &reply, &m->s, m->item.req.rc, m->item.req.out, &m->item.req.err);
	if (m->s.st != NULL)
		hd_http_store_give(r->srv, m->s.st);
	m->s.st = NULL;
	if (reply == NULL)
		hd_http_error(r, 500, "out of memory");
	else
		mcp_reply(r, reply);
}

/* On the committer's writer thread: the post is settled; m is not ours
 * to touch after the release. */
static void
mcp_post_done(hd_commit_item *it)
{
	hd_http_release(((struct mcp_req *)it)->held);
}

static int
mcp_defer_post(
    void *ctx, const char *team, const char *author, const char *text)
{
	struct mcp_req *m = ctx;
	hd_err err = HD_ERR_INIT;

	if ((m->held = hd_http_hold(m->r, mcp_finish, m, mcp_req_free)) == NULL)
		return 0; /* stopping: written at once instead */
	m->item.req.team = team;
	m->item.req.kind = "peer";
	m->item.req.author = author;
	m->item.req.body = text;
	m->item.done = mcp_post_done;
	m->announced = 0; /* taken back by the queue, whatever happens */
	if (hd_http_post_queue(m->r->srv, &m->item, &err) < 0) {
		m->item.req.rc = err.code;
		m->item.req.err = err;
		hd_http_release(m->held);
	}
	return 1;
}

static int
mcp_post_now(void *ctx, hd_post **out, const char *team, const char *author,
    const char *text, hd_err *err)
{
	struct mcp_req *m = ctx;

	if (m->announced) { /* the writer must not hold a batch for us */
		hd_http_post_withdraw(m->r->srv);
		m->announced = 0;
	}
	return hd_http_post(m->r->srv, out, team, "peer", author, text, err);
}

static int
accepts_json(const char *accept)
{
	if (accept == NULL || accept[0] == '\0')
		return 1;
	return strstr(accept, "application/json") != NULL ||
	    strstr(accept, "*/*") != NULL ||
	    strstr(accept, "application/*") != NULL;
}

static int
route_mcp_post(hd_http_req *r)
{
	const char *ctype = hd_http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
	struct mcp_req *m;
	char *reply = NULL;

	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		hd_http_error(r, 415, "Content-Type must be application/json");
		return 0;
	}
	if (!accepts_json(hd_http_header(r, MHD_HTTP_HEADER_ACCEPT))) {
		hd_http_error(r, 406, "Accept must allow application/json");
		return 0;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		hd_http_error(r, 500, "out of memory");
		return 0;
	}
	m->r = r;
	hd_mcp_session_init(&m->s, hd_http_mcp(r->srv), r->st);
	m->s.post = mcp_post_now;
	m->s.defer_post = mcp_defer_post;
	m->s.post_ctx = m;
	bind_from_url(r, &m->s);
	if (!m->s.read_only) { /* only a bound session can post */
		hd_http_post_announce(r->srv);
		m->announced = 1;
	}
	hd_mcp_handle(&reply, &m->s, r->body, r->body_len);
	if (m->announced)
		hd_http_post_withdraw(r->srv);
	if (hd_mcp_pending(&m->s)) { /* held: m belongs to the hold (4) */
		m->r = NULL;
		return 0;
	}
	mcp_req_free(m);
	if (reply == NULL)
		hd_http_raw(r, 202, NULL, "", 0);
	else
		mcp_reply(r, reply);
	return 0;
}

static int
route_mcp_other(hd_http_req *r)
{
	hd_http_set_header(r, "Allow", "POST");
	hd_http_error(r, 405, "use POST for MCP requests; this server opens no "
			      "streams and keeps no sessions");
	return 0;
}

const hd_route hd_routes_mcp[] = {
	{"POST", "/mcp", route_mcp_post},
	{"GET", "/mcp", route_mcp_other},
	{"DELETE", "/mcp", route_mcp_other},
	{NULL, NULL, NULL},
};
