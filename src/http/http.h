/*
 * http.h -- `huddle serve`: the HTTP surface (SPEC 10.1 HTTP transport,
 * SPEC 11 REST + SSE) on GNU libmicrohttpd.
 *
 * Routes are tables (route-<group>.c); a handler reads the request and
 * sets the response through the helpers below, calling one domain function
 * per route. Handlers run on MHD's pool threads and must not block for
 * long: anything slow runs in a thread of its own with the connection
 * suspended.
 */
#ifndef HD_HTTP_H
#define HD_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <huddle/conversation.h>

#include <mcp/mcp.h>

#define HD_HTTP_BODY_MAX (2 * 1024 * 1024)
#define HD_HTTP_DEFAULT_PORT 7340
#define HD_HTTP_HEADERS_MAX 6
#define HD_ROUTE_PARAMS 4 /* :name captures a pattern may have */

typedef struct hd_http_server hd_http_server;
typedef struct hd_http_req hd_http_req;

typedef struct hd_http_config {
	const char *home;  /* resolved HUDDLE_HOME */
	const char *bind;  /* default 127.0.0.1 */
	int port;          /* default 7340; 0 picks a free port */
	const char *token; /* bearer token, or NULL */
	int threads;       /* MHD pool threads; default 8 (see server.c) */
	/* the connection guard (guard.c); 0 takes the default */
	unsigned int max_connections; /* default 8192 (fitted to ulimit -n) */
	unsigned int max_per_address; /* default 256 */
	unsigned int max_followers;   /* default max_connections / 2 */
	unsigned int header_timeout;  /* seconds; default 10 */
	/* HTTPS (tls.c): PEM files of the certificate (chain) and its key,
	 * both or neither; NULL serves plain HTTP */
	const char *tls_cert;
	const char *tls_key;
	/* --public-url (no trailing /), or NULL: a Host header may name its
	 * host as well as the loopback names and the bind address */
	const char *public_url;
} hd_http_config;

typedef int (*hd_route_fn)(hd_http_req *r);

typedef struct hd_route {
	const char *method;  /* "GET", "POST", ... */
	const char *pattern; /* "/api/teams/:team/tasks/:id" */
	hd_route_fn fn;
} hd_route;

/* Start serving (returns once listening); *out belongs to the caller. */
int hd_http_start(hd_http_server **out, const hd_http_config *cfg, hd_err *err);

/* The port actually bound (useful with port 0). */
int hd_http_port(const hd_http_server *srv);

/* 1 when the server speaks HTTPS (--tls-cert). */
int hd_http_tls(const hd_http_server *srv);

/* The port the server's own engines attach their agents' turns to over
 * plain HTTP on loopback, or 0 under TLS, where turns attach over stdio
 * (`huddle mcp`) instead: a local child need not trust the certificate. */
int hd_http_local_mcp_port(const hd_http_server *srv);

/* 1 when bind (an address as --bind takes it) is loopback only. */
int hd_http_is_loopback(const char *bind);

/* Stop accepting, let in-flight requests finish (bounded), end every SSE
 * stream with a final event, and free the server. NULL-safe. */
void hd_http_stop(hd_http_server *srv);

/* HUDDLE_HOME/serve.json (presence.c): a running server says where it
 * listens (write when it starts, remove when it stops), so the CLI's
 * engines attach agents over HTTP and `huddle attach` prints the URL the
 * server really answers on. */
typedef struct hd_http_presence {
	long pid;
	char host[256];	       /* where a local client connects */
	char bind[256];	       /* the listen address, as given */
	int port;
	char public_url[1024]; /* --public-url (no trailing /), or "" */
	int token;	       /* 1 when a bearer token is required */
	int tls;	       /* 1 when it speaks HTTPS (--tls-cert) */
} hd_http_presence;

/* Write p (pid and process start time are this process's). The token
 * itself is never written: only whether one is required. */
int hd_http_presence_write(
    const char *home, const hd_http_presence *p, hd_err *err);
void hd_http_presence_remove(const char *home);
/* 1 with *p filled when a live server serves home (token or not), 0 when
 * none does (no record, or a stale one: its pid gone or reused). */
int hd_http_presence_read(const char *home, hd_http_presence *p);
/* 1 with host and port when a live server without a token serves home,
 * else 0 (the CLI's engines know no token). */
int hd_http_presence_find(
    const char *home, char *host, size_t hostlen, int *port);
/* The pid of a live server on home (any, with a token or not), or 0. */
long hd_http_presence_alive(const char *home);

/* ---- for route handlers ---------------------------------------------- */

struct hd_http_req {
	hd_http_server *srv;
	void *conn; /* struct MHD_Connection * */
	const char *method;
	const char *path;
	const char *params[HD_ROUTE_PARAMS]; /* :name captures of the route */
	int nparams;
	const char *body; /* NUL-terminated; body_len bytes */
	size_t body_len;
	hd_store *st; /* this request's connection from the pool */
	/* response, set by the handler */
	int status;
	char *resp; /* malloc'd body */
	size_t resp_len;
	const char *content_type;
	const char *cache_control;                   /* or NULL */
	const char *headers[HD_HTTP_HEADERS_MAX][2]; /* more headers, below */
	int nheaders;
	char header_copy[768]; /* what hd_http_keep keeps */
	size_t header_copy_len;
	void *stream; /* set by hd_http_sse_start: an SSE response */
	/* a request finished later (hd_http_defer) */
	struct hd_http_deferral *deferred; /* set by hd_http_defer */
	atomic_int *cancel;   /* in fn: set when the client went away or the
				 server is stopping (stop between steps) */
	atomic_int *stopping; /* in fn: set when the server is stopping (stop
				 what is running now) */
};

/* A query parameter, or NULL. */
const char *hd_http_query(hd_http_req *r, const char *key);
/* A request header, or NULL. */
const char *hd_http_header(hd_http_req *r, const char *key);

/* Respond with JSON (stolen). */
void hd_http_json(hd_http_req *r, int status, json_t *body);
/* Respond {"error": msg} with status. */
void hd_http_error(hd_http_req *r, int status, const char *fmt, ...)
    HD_PRINTFLIKE(3, 4);
/* Respond with the error in err, its status from its code: 400 invalid,
 * 404 not found, 409 exists/conflict, 413 too big, 422 refused,
 * 503 busy, else 500. */
void hd_http_fail(hd_http_req *r, const hd_err *err);
/* Respond with raw bytes (copied). */
void hd_http_raw(hd_http_req *r, int status, const char *content_type,
    const void *data, size_t len);

/* Add a response header; name and value must outlive the request (string
 * literals, or the embedded assets' table). Past HD_HTTP_HEADERS_MAX the
 * header is dropped. */
void hd_http_set_header(hd_http_req *r, const char *name, const char *value);
/* A copy of s that lives as long as r (for a header or content type
 * built for this answer), or NULL when r has no room left for it. */
const char *hd_http_keep(hd_http_req *r, const char *s);
/* hd_http_set_header with value kept (hd_http_keep); dropped, and -1
 * returned, when r has no room left for it. */
int hd_http_set_header_copy(
    hd_http_req *r, const char *name, const char *value);

/*
 * Finishing a request later, for work that takes long (an exchange runs
 * for minutes). A handler that calls hd_http_defer() returns at once
 * without a response: MHD's worker thread is free again, the connection
 * is suspended, and fn(r', payload) runs on a thread of its own with r'
 * a fresh request whose st comes from the pool; fn sets the response as a
 * handler would, and it is sent when fn returns. In fn, only srv, st and
 * the response fields are valid (method, path, params, body and the
 * query are not): a handler parses what it needs into payload first.
 * r'->cancel is set when the client disconnects (watched while the
 * connection is suspended) or the server stops; r'->stopping only when
 * the server stops, which also waits for fn to return. free_payload (when
 * non-NULL) is called after fn, or at once if the job cannot start.
 * Returns 0, or -1 with a response already set (503 while stopping).
 */
typedef void (*hd_http_async_fn)(hd_http_req *r, void *payload);
int hd_http_defer(hd_http_req *r, hd_http_async_fn fn, void *payload,
    void (*free_payload)(void *payload));

/* Parse the body as a JSON object, or answer 400 and return NULL. */
json_t *hd_http_body_object(hd_http_req *r);

/* The server's conversation engine (SPEC 7): started with the server,
 * after resuming the conversations a previous process left running;
 * stopped (turns in progress put back) when the server stops. NULL
 * until it has started. */
hd_conversation_engine *hd_http_conversations(hd_http_server *srv);

/* The MCP server shared by every /mcp request. */
const hd_mcp_server *hd_http_mcp(hd_http_server *srv);

/* 1 when sig is the valid attach signature for (team, agent). */
int hd_http_attach_ok(
    hd_http_server *srv, const char *team, const char *agent, const char *sig);

/*
 * Who a REST write acts as (identity.c): the user, or the agent proven by
 * the headers `Huddle-Agent: TEAM/AGENT` and `Huddle-Signature: SIG` (its
 * attach signature). named is the agent the body names as the actor
 * (from, as, agent, ...) or NULL. Sets actor to HD_HTTP_USER or the
 * proven agent and returns 0, or answers 403 and returns -1: naming an
 * agent without its proof, naming another than the proven one, a proof
 * that does not verify or whose agent left its team. Membership of the
 * team written to is the domain's check.
 */
#define HD_HTTP_USER "user"
#define HD_HTTP_ACTOR_MAX 64
int hd_http_acting(
    hd_http_req *r, const char *named, char actor[HD_HTTP_ACTOR_MAX]);
/* A Huddle-Agent value "TEAM/AGENT" into team and agent: 0, or -1 (both
 * "") unless both are valid names. */
int hd_http_credential_parse(const char *who, char team[HD_HTTP_ACTOR_MAX],
    char agent[HD_HTTP_ACTOR_MAX]);

/* Start an SSE stream of events (filtered by team when non-NULL),
 * resuming after last_id (-1: from now on), or from the head when
 * last_id is beyond it (sse.c (6)). */
int hd_http_sse_start(hd_http_req *r, const char *team, int64_t last_id);

/* A Last-Event-ID header value (or NULL) as the id to resume after: -1
 * when absent or empty; HD_EINVAL for anything but an integer >= 0. */
int hd_http_sse_last_id(int64_t *out, const char *value, hd_err *err);
/* Where a stream resumes: last_id, or head when last_id is beyond it --
 * then note (else "") is the SSE comment saying so, "\n\n"-ended. */
int64_t hd_http_sse_resume(
    char *note, size_t notelen, int64_t last_id, int64_t head);

/* MCP sessions and live delivery (listen.c). A 2025 session for s's
 * identity: its id into sid; 0, or -1 when out of memory. */
int hd_http_mcp_session_new(
    hd_http_server *srv, char sid[33], const hd_mcp_session *s);
/* 1 when sid is a session held for s's identity (and touch it), else 0. */
int hd_http_mcp_session_ok(
    hd_http_server *srv, const char *sid, const hd_mcp_session *s);
/* End session sid of s's identity and its streams: 1, or 0 when none. */
int hd_http_mcp_session_end(
    hd_http_server *srv, const char *sid, const hd_mcp_session *s);
/* GET /mcp's stream for bound s in session sid, resuming after last_id
 * (-1: from now on). */
int hd_http_mcp_stream(hd_http_req *r, const hd_mcp_session *s,
    const char *sid, int64_t last_id);
/* The stream of the subscriptions/listen s->listen holds (taken). */
int hd_http_mcp_listen(hd_http_req *r, hd_mcp_session *s, int64_t last_id);

/* Route tables, NULL-method terminated. A pattern may end in "*", which
 * matches the rest of the path (captured as the next param); such a
 * catch-all never turns a 404 into a 405. */
extern const hd_route hd_routes_mcp[];
extern const hd_route hd_routes_teams[];
extern const hd_route hd_routes_chat[];
extern const hd_route hd_routes_web[];

extern const hd_route hd_routes_exchange[];
extern const hd_route hd_routes_conversation[];
/* The hand-written tables above, NULL terminated, in the order routing
 * tries them (route.c); tests/tools/docs-dump.c lists them for the docs. */
const hd_route *const *hd_http_route_tables(void);

/* The operation table's routes (route.c; NULL-method terminated) and
 * their one handler (route-ops.c), which finds its entry again with
 * hd_http_route_op: NULL when no operation has method and path. */
const hd_route *hd_http_routes_ops(void);
int hd_http_route_ops(hd_http_req *r);
const hd_op *hd_http_route_op(const char *method, const char *path);

/* ---- routing, pure (route.c) ------------------------------------------ */

/* Percent-decode s in place (MHD's unescape, but %00 stays "%00"); the
 * new length. */
size_t hd_http_unescape(char *s);
/* 0 when a decoded path is valid UTF-8, else -1 with msg set. */
int hd_http_path_check(const char *path, char *msg, size_t msglen);
/* The route for method and path, its captures in params (pointers into
 * buf, which gets a copy of path), or NULL; *path_known is set when an
 * exact pattern has this path (405 rather than 404). */
const hd_route *hd_http_route_find(const char *method, const char *path,
    const char *params[HD_ROUTE_PARAMS], int *nparams, char *buf,
    size_t buflen, int *path_known);

#endif
