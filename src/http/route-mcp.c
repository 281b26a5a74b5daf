/*
 * route-mcp.c -- /mcp: MCP over Streamable HTTP (SPEC 10.1, 10.4).
 *
 *  (1) 200 application/json for every request (JSON-RPC errors too), 202
 *      with an empty body for notifications and responses, but for the
 *      streams of (5). A request of
 *      MCP's 2026-07-28 era (src/mcp/era.c) is answered 400 or 404 where
 *      that revision says so; its MCP-Protocol-Version, Mcp-Method and
 *      Mcp-Name headers go to the dispatcher, which checks them against
 *      the body. A 2025-era client's replies do not change.
 *  (2) Content-Type must be application/json (415); an Accept header, when
 *      present, must allow application/json (406).
 *  (3) Identity comes from the URL: roomTeamId, postAuthorAgentId and a
 *      valid sig, and nothing else, bind the request to that agent. Any
 *      other query -- no sig, a wrong one, another agent's, an added
 *      parameter, a repeated one -- is served unbound and read-only.
 *  (4) Every method is answered on the worker that read the request, by
 *      one library call. team_chat_post's hd_room_post blocks it until
 *      the post committed, together with the posts other workers made
 *      meanwhile (room/batch.c): the reply goes out after the commit.
 *  (5) Live delivery (listen.c). 2025 era: a successful initialize gets
 *      an Mcp-Session-Id; a later request naming a session the server
 *      does not hold for this identity is 404 (a request naming none is
 *      served as before, sessionless); GET /mcp with a held session
 *      streams a bound agent's room posts and mail, resuming after
 *      Last-Event-ID; DELETE /mcp ends the session (204). A read-only
 *      URL's GET is 403, a GET without a session 400, a bad
 *      Last-Event-ID 400 -- each a JSON error, never a stream. 2026 era:
 *      a subscriptions/listen the dispatcher accepted (era.c (6))
 *      answers with its stream, resuming after the request's
 *      Last-Event-ID header.
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

static void
mcp_reply(hd_http_req *r, char *reply, int status)
{
	free(r->resp);
	r->resp = reply;
	r->resp_len = strlen(reply);
	r->status = status;
	r->content_type = "application/json";
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

/* (5) 404 for a session the server does not hold for this identity. */
static int
no_session(hd_http_req *r, const char *sid)
{
	hd_http_error(r, 404,
	    "no MCP session \"%.64s\" for this connection: it ended, or "
	    "was never opened here; initialize again",
	    sid);
	return 0;
}

static int
route_mcp_post(hd_http_req *r)
{
	const char *ctype = hd_http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
	const char *sid;
	char fresh[33];
	hd_mcp_session s;
	hd_mcp_headers h;
	char *reply = NULL;
	int status;

	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		hd_http_error(r, 415, "Content-Type must be application/json");
		return 0;
	}
	if (!accepts_json(hd_http_header(r, MHD_HTTP_HEADER_ACCEPT))) {
		hd_http_error(r, 406, "Accept must allow application/json");
		return 0;
	}
	hd_mcp_session_init(&s, hd_http_mcp(r->srv), r->st);
	bind_from_url(r, &s);
	s.can_listen = 1;
	if ((sid = hd_http_header(r, "Mcp-Session-Id")) != NULL &&
	    !hd_http_mcp_session_ok(r->srv, sid, &s))
		return no_session(r, sid);
	h.protocol_version = hd_http_header(r, "MCP-Protocol-Version");
	h.method = hd_http_header(r, "Mcp-Method");
	h.name = hd_http_header(r, "Mcp-Name");
	hd_mcp_handle_http(&reply, &status, &s, r->body, r->body_len, &h);
	if (s.listen.open) { /* (5) */
		int64_t last;
		hd_err err = HD_ERR_INIT;

		free(reply);
		if (hd_http_sse_last_id(&last,
			hd_http_header(r, "Last-Event-ID"), &err) < 0) {
			free(s.listen.id);
			hd_http_fail(r, &err);
			return 0;
		}
		hd_http_mcp_listen(r, &s, last);
		return 0;
	}
	if (reply == NULL)
		hd_http_raw(r, 202, NULL, "", 0);
	else
		mcp_reply(r, reply, status);
	if (s.handshake && reply != NULL &&
	    hd_http_mcp_session_new(r->srv, fresh, &s) == 0)
		hd_http_set_header_copy(r, "Mcp-Session-Id", fresh);
	return 0;
}

/* (5) GET /mcp: a bound agent's live stream in its session. */
static int
route_mcp_get(hd_http_req *r)
{
	const char *sid = hd_http_header(r, "Mcp-Session-Id");
	hd_mcp_session s;
	int64_t last;
	hd_err err = HD_ERR_INIT;

	hd_mcp_session_init(&s, hd_http_mcp(r->srv), r->st);
	bind_from_url(r, &s);
	if (!s.bound) {
		hd_http_error(r, 403,
		    "GET /mcp streams a bound agent's room posts and mail; "
		    "this URL is read-only (no valid sig): connect through "
		    "the signed URL `huddle attach` prints");
		return 0;
	}
	if (sid == NULL) {
		hd_http_error(r, 400,
		    "GET /mcp needs the Mcp-Session-Id header that "
		    "initialize (POST /mcp) answered with");
		return 0;
	}
	if (!hd_http_mcp_session_ok(r->srv, sid, &s))
		return no_session(r, sid);
	if (hd_http_sse_last_id(&last, hd_http_header(r, "Last-Event-ID"),
		&err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	hd_http_mcp_stream(r, &s, sid, last);
	return 0;
}

/* (5) DELETE /mcp: the client is done with its session. */
static int
route_mcp_delete(hd_http_req *r)
{
	const char *sid = hd_http_header(r, "Mcp-Session-Id");
	hd_mcp_session s;

	hd_mcp_session_init(&s, hd_http_mcp(r->srv), r->st);
	bind_from_url(r, &s);
	if (sid == NULL) {
		hd_http_error(r, 400,
		    "DELETE /mcp ends a session: name it in Mcp-Session-Id");
		return 0;
	}
	if (!hd_http_mcp_session_end(r->srv, sid, &s))
		return no_session(r, sid);
	hd_http_raw(r, 204, NULL, "", 0);
	return 0;
}

const hd_route hd_routes_mcp[] = {
	{"POST", "/mcp", route_mcp_post},
	{"GET", "/mcp", route_mcp_get},
	{"DELETE", "/mcp", route_mcp_delete},
	{NULL, NULL, NULL},
};
