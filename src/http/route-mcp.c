/*
 * route-mcp.c -- POST /mcp: MCP over Streamable HTTP (SPEC 10.1, 10.4).
 *
 *  (1) 200 application/json for every request (JSON-RPC errors too), 202
 *      with an empty body for notifications and responses; GET and DELETE
 *      are 405 (no server-initiated streams, no sessions). A request of
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

static int
route_mcp_post(hd_http_req *r)
{
	const char *ctype = hd_http_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
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
	h.protocol_version = hd_http_header(r, "MCP-Protocol-Version");
	h.method = hd_http_header(r, "Mcp-Method");
	h.name = hd_http_header(r, "Mcp-Name");
	hd_mcp_handle_http(&reply, &status, &s, r->body, r->body_len, &h);
	if (reply == NULL)
		hd_http_raw(r, 202, NULL, "", 0);
	else
		mcp_reply(r, reply, status);
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
