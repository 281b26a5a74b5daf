/*
 * server.c -- the HTTP server under `huddle serve`, on GNU libmicrohttpd.
 *
 * Design:
 *  (1) MHD runs its own epoll threads, 8 by default (--threads), and
 *      handlers run there; our acceptor (11) deals the connections out
 *      round the workers. A room post (MCP or REST) blocks its worker
 *      until it committed, in one transaction with the posts the other
 *      workers made meanwhile (hd_room_post's group commit, room/batch.c):
 *      as many posts can meet in a commit as there are workers.
 *  (2) Each request borrows an hd_store from a small pool (an hd_store is
 *      one SQLite connection and is never shared by two threads at once)
 *      and returns it when the handler is done.
 *  (3) Bodies are accumulated up to 2 MiB; a declared or actual size over
 *      that is answered 413 without buffering the rest.
 *  (4) With a token configured (always when bound beyond loopback) every
 *      request but a GET of the dashboard's static files (which hold no
 *      data; the page then sends the token itself) must carry
 *      `Authorization: Bearer <token>` (or ?token= for
 *      EventSource), compared in constant time.
 *  (5) A present Origin or Host must name this server (loopback names,
 *      the bind address, or the host of --public-url, which is what
 *      remote agents' clients send): a web page elsewhere cannot drive a
 *      local server by DNS rebinding or cross-site requests.
 *  (6) One access-log line per request on stderr (level info), written
 *      when MHD reports the request complete: peer, method, path, status,
 *      bytes, duration. The path is MHD's, without its query, so a
 *      ?token= or a signed attach URL's sig never reaches the log. In
 *      JSON (--log-format json) the same as fields; built only when the
 *      line is written, and written with one write(2), no lock (log.c).
 *      The engine's events get their lines from eventlog.c.
 *  (7) A handler may finish its request later (async.c): with
 *      hd_http_defer the connection is suspended while a thread of its own
 *      does the work, and the response is queued when MHD calls us again
 *      after the resume.
 *  (8) Each distinct signed attach URL is verified (an HMAC) once: the
 *      last HD_HTTP_ATTACH_SEEN (team, agent, sig) triples that verified
 *      are remembered, and only the same team and agent with the same
 *      sig skip the check -- the key does not change while we run, so
 *      they would verify the same way. The binding rules themselves
 *      (route-mcp.c) are unchanged.
 *  (9) Every error answer is JSON: a path that is not UTF-8 once
 *      percent-decoded is answered 400 before routing (route.c, which
 *      holds the pure routing and decoding), and an error message quoting
 *      client bytes that are not UTF-8 has them replaced, never an empty
 *      500.
 *  (10) Connections are a guarded resource (guard.c: per-address and
 *       overall limits, room held back for loopback and token holders,
 *       deadlines bytes do not reset). Besides installing its callbacks,
 *       the handler tells it how each request goes: its headers are in
 *       (a connection let in on the reserve without the token is answered
 *       503 and closed), the whole request is in (a response is queued or
 *       it is dispatched: its deadline stops), and it is complete (the
 *       connection is idle until its next request).
 *  (11) One thread of ours accepts every connection and hands it to MHD
 *       (MHD_add_connection), which deals a pool's connections out by
 *       descriptor, so consecutive connections land on different
 *       workers (see acceptor_main). Stopping closes the listening
 *       socket first: nothing new is let in while requests finish.
 *  (12) With --tls-cert and --tls-key the daemon speaks HTTPS (tls.c:
 *       the files are checked before anything listens); everything above
 *       holds unchanged over it. The server's own engines then attach
 *       their turns over stdio, not to this port (hd_http_local_mcp_port).
 *       Without TLS the daemon starts exactly as before.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <openssl/crypto.h>

#include "guard.h"
#include "http.h"
#include "server_int.h"

#define HD_LOG_COMPONENT "http"
#include <huddle/log.h>
#include <huddle/buf.h>
#include <huddle/util.h>

#define STORE_POOL_MAX 16

struct req_ctx {
	hd_buf body;
	int too_big;
	int64_t start_us;
	int status;
	size_t bytes;
	char method[12];
	char path[160];
	char peer[64];
	struct hd_http_job *job; /* a deferred request (7) */
};

/* ---- store pool ------------------------------------------------------- */

hd_store *
hd_http__pool_get(hd_http_server *srv, hd_err *err)
{
	hd_store *st = NULL;

	pthread_mutex_lock(&srv->pool_lock);
	if (srv->npool > 0)
		st = srv->pool[--srv->npool];
	pthread_mutex_unlock(&srv->pool_lock);
	if (st == NULL && hd_store_open(&st, srv->home, err) < 0)
		return NULL;
	return st;
}

void
hd_http__pool_put(hd_http_server *srv, hd_store *st)
{
	pthread_mutex_lock(&srv->pool_lock);
	if (srv->npool < STORE_POOL_MAX) {
		srv->pool[srv->npool++] = st;
		st = NULL;
	}
	pthread_mutex_unlock(&srv->pool_lock);
	hd_store_close(st);
}

hd_conversation_engine *
hd_http_conversations(hd_http_server *srv)
{
	hd_conversation_engine *e;

	pthread_mutex_lock(&srv->pool_lock);
	e = srv->conv;
	pthread_mutex_unlock(&srv->pool_lock);
	return e;
}

const hd_mcp_server *
hd_http_mcp(hd_http_server *srv)
{
	return srv->mcp;
}

/* 1 when (team, agent, sig) was verified before (8). team and agent are
 * not secret; sig is compared in constant time, like the check itself,
 * so timing tells nothing about the valid one. */
static int
attach_seen(
    hd_http_server *srv, const char *team, const char *agent, const char *sig)
{
	const struct hd_attach_seen *e;
	int i, ok = 0;

	pthread_mutex_lock(&srv->attach_lock);
	for (i = 0; i < srv->nseen; i++) {
		e = &srv->attach_seen[i];
		if (strcmp(e->team, team) == 0 &&
		    strcmp(e->agent, agent) == 0) {
			ok = CRYPTO_memcmp(e->sig, sig, HD_ATTACH_SIG_HEX) == 0;
			break; /* one valid sig per (team, agent) */
		}
	}
	pthread_mutex_unlock(&srv->attach_lock);
	return ok;
}

int
hd_http_attach_ok(hd_http_server *srv, const char *team, const char *agent,
    const char *sig)
{
	struct hd_attach_seen *e;

	if (team == NULL || agent == NULL || sig == NULL ||
	    strlen(team) >= sizeof(e->team) ||
	    strlen(agent) >= sizeof(e->agent) ||
	    strlen(sig) != HD_ATTACH_SIG_HEX)
		return hd_attach_verify_key(srv->attach_key, team, agent, sig);
	if (attach_seen(srv, team, agent, sig))
		return 1;
	if (!hd_attach_verify_key(srv->attach_key, team, agent, sig))
		return 0;
	pthread_mutex_lock(&srv->attach_lock);
	e = &srv->attach_seen[srv->next_seen];
	snprintf(e->team, sizeof(e->team), "%s", team);
	snprintf(e->agent, sizeof(e->agent), "%s", agent);
	memcpy(e->sig, sig, HD_ATTACH_SIG_HEX + 1);
	srv->next_seen = (srv->next_seen + 1) % HD_HTTP_ATTACH_SEEN;
	if (srv->nseen < HD_HTTP_ATTACH_SEEN)
		srv->nseen++;
	pthread_mutex_unlock(&srv->attach_lock);
	return 1;
}

int
hd_http_port(const hd_http_server *srv)
{
	return srv->port;
}

int
hd_http_tls(const hd_http_server *srv)
{
	return srv->tls_cert != NULL;
}

int
hd_http_local_mcp_port(const hd_http_server *srv)
{
	return srv->tls_cert != NULL ? 0 : srv->port; /* (12) */
}

/* ---- checks ------------------------------------------------------------- */

static int
token_ok(hd_http_server *srv, struct MHD_Connection *conn)
{
	const char *auth, *q;
	size_t n = strlen(srv->token);

	auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION);
	if (auth != NULL && strncasecmp(auth, "Bearer ", 7) == 0 &&
	    strlen(auth + 7) == n && CRYPTO_memcmp(auth + 7, srv->token, n) == 0)
		return 1;
	q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
	return q != NULL && strlen(q) == n && CRYPTO_memcmp(q, srv->token, n) == 0;
}

static int
path_under(const char *url, const char *dir)
{
	size_t len = strlen(dir);

	return strncmp(url, dir, len) == 0 &&
	    (url[len] == '\0' || url[len] == '/');
}

/* 1 for a GET of the dashboard's own files (route-web.c): the page and
 * its assets are the same for everyone and hold no data, so they are
 * served without the token. Everything under /api and /mcp is not. */
static int
is_public(const char *method, const char *url)
{
	return strcmp(method, "GET") == 0 && !path_under(url, "/api") &&
	    !path_under(url, "/mcp");
}

/* 1 when host (a Host header value, or an Origin's host part, len bytes)
 * names this server: a loopback name or the bind address, with or
 * without our port. */
static int
host_is_ours(hd_http_server *srv, const char *host, size_t len)
{
	const char *names[] = {"127.0.0.1", "localhost", "[::1]", srv->bind,
	    srv->public_host};
	char port[16];
	size_t plen, i, nl;

	plen = (size_t)snprintf(port, sizeof(port), ":%d", srv->port);
	if (srv->public_host != NULL && len == strlen(srv->public_host) &&
	    strncasecmp(host, srv->public_host, len) == 0)
		return 1; /* --public-url's host:port, its port not ours */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i] == NULL)
			continue;
		nl = strlen(names[i]);
		if (len < nl || strncasecmp(host, names[i], nl) != 0)
			continue;
		if (len == nl ||
		    (len == nl + plen && memcmp(host + nl, port, plen) == 0))
			return 1;
	}
	return 0;
}

static int
origin_ok(hd_http_server *srv, struct MHD_Connection *conn)
{
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_HOST);
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "Origin");

	if (host != NULL && !host_is_ours(srv, host, strlen(host)))
		return 0;
	if (origin != NULL && strcmp(origin, "null") != 0) {
		const char *h = strstr(origin, "://");

		if (h == NULL)
			return 0;
		h += 3;
		if (!host_is_ours(srv, h, strcspn(h, "/")))
			return 0;
	} else if (origin != NULL)
		return 0; /* "null": a sandboxed or file: page */
	return 1;
}

/* ---- MHD callbacks ---------------------------------------------------- */

static enum MHD_Result
queue_json_error(struct MHD_Connection *conn, struct req_ctx *ctx, int status,
    const char *msg)
{
	struct MHD_Response *resp;
	char *text;
	json_t *j = json_pack("{s:s}", "error", msg);
	enum MHD_Result ret;

	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	resp = MHD_create_response_from_buffer(strlen(text), text,
	    MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/json");
	ctx->status = status;
	ctx->bytes = strlen(text);
	hd_http__guard_answering(conn);
	ret = MHD_queue_response(conn, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* 503 for a connection let in on the reserve without a right to it (10):
 * JSON, Retry-After, and the connection closed after it. */
static enum MHD_Result
queue_reserve_refused(struct MHD_Connection *conn, struct req_ctx *ctx)
{
	static const char msg[] =
	    "{\"error\":\"the server is at its connection limit: retry "
	    "later\"}";
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg,
	    MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/json");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ctx->status = 503;
	ctx->bytes = sizeof(msg) - 1;
	hd_http__guard_answering(conn);
	ret = MHD_queue_response(conn, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Queue the response a handler set in r (taking r->resp). */
static enum MHD_Result
queue_req(struct MHD_Connection *conn, struct req_ctx *ctx, hd_http_req *r)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int i;

	if (r->status == 0) {
		free(r->resp);
		r->resp = NULL;
		return queue_json_error(conn, ctx, 500, "the route gave no answer");
	}
	resp = MHD_create_response_from_buffer(r->resp_len,
	    r->resp != NULL ? r->resp : (void *)"", r->resp != NULL
		? MHD_RESPMEM_MUST_FREE
		: MHD_RESPMEM_PERSISTENT);
	r->resp = NULL; /* MHD owns it now */
	if (r->content_type != NULL)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    r->content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
	    r->cache_control != NULL ? r->cache_control : "no-store");
	for (i = 0; i < r->nheaders; i++)
		MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
	ctx->status = r->status;
	ctx->bytes = r->resp_len;
	ret = MHD_queue_response(conn, (unsigned int)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
dispatch(hd_http_server *srv, struct MHD_Connection *conn, struct req_ctx *ctx,
    const char *method, const char *url)
{
	struct MHD_Response *resp;
	hd_http_req r;
	const hd_route *rt;
	char buf[1024], msg[160];
	hd_err err = HD_ERR_INIT;
	enum MHD_Result ret;
	int known;

	hd_http__guard_answering(conn); /* the whole request is in (10) */
	memset(&r, 0, sizeof(r));
	r.srv = srv;
	r.conn = conn;
	r.method = method;
	r.path = url;
	r.body = hd_buf_cstr(&ctx->body);
	r.body_len = ctx->body.len;
	if (hd_http_path_check(url, msg, sizeof(msg)) < 0)
		return queue_json_error(conn, ctx, 400, msg);
	if ((rt = hd_http_route_find(method, url, r.params, &r.nparams, buf,
		 sizeof(buf), &known)) == NULL) {
		if (known)
			return queue_json_error(conn, ctx, 405,
			    "method not allowed");
		return queue_json_error(conn, ctx, 404, "no such route");
	}
	if ((r.st = hd_http__pool_get(srv, &err)) == NULL)
		return queue_json_error(conn, ctx, 503, err.msg);
	rt->fn(&r);
	hd_http__pool_put(srv, r.st);
	r.st = NULL;
	if (r.stream != NULL) {
		resp = r.stream;
		ctx->status = 200;
		ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	if (r.deferred != NULL) { /* (7): answered when the job is done */
		free(r.resp);
		r.resp = NULL;
		r.status = 0;
		if ((ctx->job = hd_http__job_start(srv, conn, &r)) != NULL)
			return MHD_YES;
	}
	return queue_req(conn, ctx, &r);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **con_cls)
{
	hd_http_server *srv = cls;
	struct req_ctx *ctx = *con_cls;
	const char *clen;
	const union MHD_ConnectionInfo *ci;
	int authed;

	(void)version;
	if (ctx == NULL) {
		if ((ctx = calloc(1, sizeof(*ctx))) == NULL)
			return MHD_NO;
		ctx->body.max = HD_HTTP_BODY_MAX;
		ctx->start_us = hd_mono_us();
		snprintf(ctx->method, sizeof(ctx->method), "%s", method);
		snprintf(ctx->path, sizeof(ctx->path), "%s", url);
		ci = MHD_get_connection_info(conn,
		    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci != NULL && ci->client_addr != NULL &&
		    ci->client_addr->sa_family == AF_INET)
			inet_ntop(AF_INET,
			    &((const struct sockaddr_in *)ci->client_addr)->sin_addr,
			    ctx->peer, sizeof(ctx->peer));
		else if (ci != NULL && ci->client_addr != NULL &&
		    ci->client_addr->sa_family == AF_INET6)
			inet_ntop(AF_INET6,
			    &((const struct sockaddr_in6 *)ci->client_addr)
				 ->sin6_addr,
			    ctx->peer, sizeof(ctx->peer));
		*con_cls = ctx;
		authed = srv->token != NULL && token_ok(srv, conn);
		if (!hd_http__guard_headers(conn, authed))
			return queue_reserve_refused(conn, ctx);
		if (srv->token != NULL && !is_public(method, url) && !authed)
			return queue_json_error(conn, ctx, 401,
			    "missing or wrong bearer token");
		if (!origin_ok(srv, conn))
			return queue_json_error(conn, ctx, 403,
			    "Origin or Host is not this server");
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (clen != NULL && strtoull(clen, NULL, 10) > HD_HTTP_BODY_MAX)
			return queue_json_error(conn, ctx, 413,
			    "request body over the limit of 2097152 bytes");
		return MHD_YES;
	}
	if (ctx->job != NULL) /* resumed: the deferred work is done (7) */
		return queue_req(conn, ctx, hd_http__job_req(ctx->job));
	if (*upload_data_size > 0) {
		if (!ctx->too_big) {
			hd_buf_put(&ctx->body, upload_data, *upload_data_size);
			if (hd_buf_failed(&ctx->body))
				ctx->too_big = 1;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (ctx->too_big)
		return queue_json_error(conn, ctx, 413,
		    "request body over the limit of 2097152 bytes");
	return dispatch(srv, conn, ctx, method, url);
}

/* The access-log line of a finished request (6). */
static void
log_request(const struct req_ctx *ctx, int aborted)
{
	double ms = (double)(hd_mono_us() - ctx->start_us) / 1000.0;

	if (hd_log_json())
		hd_log_with(HD_LOG_INFO, HD_LOG_COMPONENT,
		    json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:b}", "peer",
			ctx->peer, "method", ctx->method, "path", ctx->path,
			"status", ctx->status, "bytes", (json_int_t)ctx->bytes,
			"duration_ms", ms, "aborted", aborted),
		    "%s %.120s %d", ctx->method, ctx->path, ctx->status);
	else
		hd_log_info("%s \"%s %.120s\" %d %zuB %.1fms%s", ctx->peer,
		    ctx->method, ctx->path, ctx->status, ctx->bytes, ms,
		    aborted ? " (aborted)" : "");
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req_ctx *ctx = *con_cls;

	(void)cls;
	hd_http__guard_done(conn); /* (10) the next request's clock */
	if (ctx == NULL)
		return;
	if (hd_log_enabled(HD_LOG_INFO))
		log_request(ctx, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
	hd_http__job_free(ctx->job);
	hd_buf_dispose(&ctx->body);
	free(ctx);
	*con_cls = NULL;
}

/* Percent-decoding for paths and query values (route.c (1)). */
static size_t
on_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return hd_http_unescape(s);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
    HD_PRINTFLIKE(2, 0);

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	/* MHD reports mostly what peers did (closed early, sent garbage); the
	 * access log already shows each request, so this is for debugging */
	hd_log_debug("libmicrohttpd: %s", msg);
}

int
hd_http_is_loopback(const char *bind)
{
	return strcmp(bind, "127.0.0.1") == 0 || strcmp(bind, "localhost") == 0 ||
	    strcmp(bind, "::1") == 0 || strncmp(bind, "127.", 4) == 0;
}

/*
 * The conversation engine: started once the port is known (agents get
 * attach URLs on it), then every conversation a process that is gone left
 * running is resumed. MHD already runs: a request that comes before the
 * engine is published (under the pool lock) finds none and is answered
 * 503.
 */
static int
conversations_start(hd_http_server *srv, hd_err *err)
{
	hd_conversation_engine_config cfg;
	hd_conversation_engine *e = NULL;
	hd_store *st;
	size_t adopted = 0;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.home = srv->home;
	cfg.mcp_host = strcmp(srv->bind, "0.0.0.0") == 0 ? "127.0.0.1"
							  : srv->bind;
	cfg.mcp_port = hd_http_local_mcp_port(srv); /* (12) */
	cfg.mcp_token = srv->token;
	if ((rc = hd_conversation_engine_start(&e, &cfg, err)) < 0)
		return rc;
	pthread_mutex_lock(&srv->pool_lock);
	srv->conv = e;
	pthread_mutex_unlock(&srv->pool_lock);
	if ((st = hd_http__pool_get(srv, err)) == NULL)
		return err->code;
	rc = hd_conversation_resume_all(&adopted, e, st, err);
	hd_http__pool_put(srv, st);
	if (rc < 0)
		return rc;
	if (adopted > 0)
		hd_log_info("resumed %zu conversation(s) left running", adopted);
	return 0;
}

/*
 * The supervisor (autorun): started once the port is known, so the turns
 * it runs get attach URLs on it. It takes back, on its own thread, the
 * turns a server that is gone left running.
 */
static int
supervisor_start(hd_http_server *srv, hd_err *err)
{
	hd_supervisor_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.home = srv->home;
	cfg.mcp_host = strcmp(srv->bind, "0.0.0.0") == 0 ? "127.0.0.1"
							  : srv->bind;
	cfg.mcp_port = hd_http_local_mcp_port(srv); /* (12) */
	cfg.mcp_token = srv->token;
	return hd_supervisor_start(&srv->sv, &cfg, err);
}

/*
 * (11) The acceptor: one thread accepts every connection and hands it to
 * MHD, which gives it to a worker by its descriptor (MHD_add_connection
 * spreads a pool's connections round the workers). Left to themselves,
 * MHD's workers race for each connection on the shared listening socket,
 * and on a busy machine a few of them win most: a handler that blocks
 * (a room post waits for its group commit) then holds up every other
 * connection of its worker, and posts from different connections stop
 * meeting in one commit.
 */
static void *
acceptor_main(void *arg)
{
	hd_http_server *srv = arg;

	while (atomic_load(&srv->accepting)) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(srv->listen_fd, (struct sockaddr *)&ss, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (!atomic_load(&srv->accepting))
				break;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				hd_sleep_us(10000); /* out of descriptors: let
						       some close */
			else if (errno != EINTR && errno != ECONNABORTED &&
			    errno != EAGAIN && errno != EPROTO)
				hd_log_warn("accept: %s", strerror(errno));
			continue;
		}
		/* refused or failed: MHD closed fd (and counted nothing) */
		(void)MHD_add_connection(
		    srv->daemon, fd, (struct sockaddr *)&ss, len);
	}
	return NULL;
}

/* Listen on sin for the acceptor; the port bound, or an error. */
static int
acceptor_listen(hd_http_server *srv, struct sockaddr_in *sin, hd_err *err)
{
	socklen_t len = sizeof(*sin);
	int one = 1;

	srv->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0 ||
	    setsockopt(srv->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
		sizeof(one)) != 0 ||
	    bind(srv->listen_fd, (struct sockaddr *)sin, sizeof(*sin)) != 0 ||
	    listen(srv->listen_fd, 511) != 0 ||
	    getsockname(srv->listen_fd, (struct sockaddr *)sin, &len) != 0)
		return hd_err_set(err, HD_ERR,
		    "cannot listen on %s:%d: %s (is the port taken? pick "
		    "another with --port)",
		    srv->bind, ntohs(sin->sin_port), strerror(errno));
	return ntohs(sin->sin_port);
}

/* Stop accepting: the thread leaves its accept, the socket closes. */
static void
acceptor_stop(hd_http_server *srv)
{
	atomic_store(&srv->accepting, 0);
	if (srv->listen_fd >= 0)
		shutdown(srv->listen_fd, SHUT_RDWR); /* wakes accept4 */
	if (srv->acceptor_started)
		pthread_join(srv->acceptor, NULL);
	srv->acceptor_started = 0;
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	srv->listen_fd = -1;
}

/* --public-url's host[:port] (after the scheme, up to the path), which
 * a Host header may name (5); NULL without one. */
static char *
public_host_of(const char *url)
{
	const char *h = url != NULL ? strstr(url, "://") : NULL;

	if (h == NULL || h[3] == '\0')
		return NULL;
	h += 3;
	return strndup(h, strcspn(h, "/"));
}

int
hd_http_start(hd_http_server **out, const hd_http_config *cfg, hd_err *err)
{
	hd_http_server *srv;
	struct sockaddr_in sin;
	struct MHD_OptionItem tls_opts[4];
	unsigned int flags;
	int rc;

	*out = NULL;
	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	srv->listen_fd = -1;
	pthread_mutex_init(&srv->pool_lock, NULL);
	pthread_mutex_init(&srv->attach_lock, NULL);
	pthread_mutex_init(&srv->sse_lock, NULL);
	pthread_cond_init(&srv->sse_cond, NULL);
	pthread_mutex_init(&srv->mcp_lock, NULL);
	pthread_mutex_init(&srv->jobs_lock, NULL);
	pthread_cond_init(&srv->jobs_cond, NULL);
	srv->bind = strdup(cfg->bind != NULL ? cfg->bind : "127.0.0.1");
	srv->home = strdup(cfg->home);
	srv->token = cfg->token != NULL && cfg->token[0] != '\0'
	    ? strdup(cfg->token)
	    : NULL;
	if (srv->bind == NULL || srv->home == NULL) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto fail;
	}
	if (cfg->public_url != NULL &&
	    (srv->public_host = public_host_of(cfg->public_url)) == NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "the public URL \"%.200s\" names no host", cfg->public_url);
		goto fail;
	}
	if ((rc = hd_http__tls_load(srv, cfg, err)) < 0) /* (12) */
		goto fail;
	if (!hd_http_is_loopback(srv->bind) && srv->token == NULL) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "binding %s (beyond loopback) needs a bearer token: pass "
		    "--token or set HUDDLE_TOKEN",
		    srv->bind);
		goto fail;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)cfg->port);
	if (inet_pton(AF_INET, strcmp(srv->bind, "localhost") == 0
		    ? "127.0.0.1"
		    : srv->bind,
		&sin.sin_addr) != 1) {
		rc = hd_err_set(err, HD_EINVAL,
		    "--bind must be an IPv4 address, not \"%.64s\"", srv->bind);
		goto fail;
	}
	if ((rc = hd_mcp_server_new(&srv->mcp, err)) < 0)
		goto fail;
	{
		hd_store *st = NULL;

		if ((rc = hd_store_open(&st, srv->home, err)) == 0)
			rc = hd_attach_key(srv->attach_key, st, err);
		hd_store_close(st);
		if (rc < 0)
			goto fail;
	}
	if ((rc = hd_http__guard_start(srv, cfg, err)) < 0 ||
	    (rc = hd_http__sse_init(srv, err)) < 0 ||
	    (rc = hd_http__jobs_init(srv, err)) < 0)
		goto fail;
	if ((rc = acceptor_listen(srv, &sin, err)) < 0)
		goto fail;
	srv->port = rc; /* before any request can read it */
	flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
	    MHD_USE_ERROR_LOG | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET;
	if (srv->tls_cert != NULL)
		flags |= MHD_USE_TLS; /* (12) */
	hd_http__tls_options(srv, tls_opts);
	srv->daemon = MHD_start_daemon(flags, 0,
	    hd_http__guard_accept, srv, on_request, srv,
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
	    MHD_OPTION_UNESCAPE_CALLBACK, on_unescape, NULL,
	    MHD_OPTION_THREAD_POOL_SIZE,
	    (unsigned int)(cfg->threads > 0 ? cfg->threads : 8),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	    MHD_OPTION_NOTIFY_CONNECTION, hd_http__guard_notify, srv,
	    MHD_OPTION_URI_LOG_CALLBACK, hd_http__guard_uri, srv,
	    MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)HD_GUARD_IDLE_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
	    MHD_OPTION_CONNECTION_LIMIT, hd_http__guard_max(srv),
	    MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
	if (srv->daemon == NULL) {
		rc = hd_err_set(err, HD_ERR,
		    srv->tls_cert != NULL
			? "cannot start the HTTPS server (GnuTLS refused the "
			  "certificate or key? run with HUDDLE_LOG=debug to see "
			  "why)"
			: "cannot start the HTTP server");
		goto fail;
	}
	atomic_store(&srv->accepting, 1);
	if (pthread_create(&srv->acceptor, NULL, acceptor_main, srv) != 0) {
		rc = hd_err_set(err, HD_ERR, "cannot start the acceptor thread");
		goto fail;
	}
	srv->acceptor_started = 1;
	if ((rc = hd_http__evlog_start(srv, err)) < 0 ||
	    (rc = conversations_start(srv, err)) < 0 ||
	    (rc = supervisor_start(srv, err)) < 0)
		goto fail;
	*out = srv;
	return 0;
fail:
	hd_http_stop(srv);
	return rc;
}

void
hd_http_stop(hd_http_server *srv)
{
	if (srv == NULL)
		return;
	if (srv->daemon != NULL) {
		/* Stop accepting; let requests in flight finish (bounded). */
		int64_t until = hd_mono_ms() + 3000;
		const union MHD_DaemonInfo *di;

		acceptor_stop(srv);
		/* long requests first: they resume their connections (7) */
		hd_http__jobs_shutdown(srv);
		hd_http__sse_shutdown(srv);
		while (hd_mono_ms() < until) {
			di = MHD_get_daemon_info(srv->daemon,
			    MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
			if (di == NULL || di->num_connections == 0)
				break;
			hd_sleep_us(20000);
		}
		MHD_stop_daemon(srv->daemon);
		hd_http__guard_stop(srv); /* every connection is closed */
	} else {
		acceptor_stop(srv);
		hd_http__jobs_shutdown(srv);
		hd_http__sse_shutdown(srv);
	}
	/* no handler runs now: stop the engine (turns in progress go back
	 * in the queue for the next server) */
	hd_supervisor_stop(srv->sv);
	srv->sv = NULL;
	hd_conversation_engine_stop(srv->conv);
	srv->conv = NULL;
	hd_http__evlog_stop(srv); /* after the engines' last events */
	hd_http__guard_stop(srv); /* NULL-safe: when MHD never started */
	hd_http__sse_free(srv);
	hd_http__mcp_sessions_free(srv);
	while (srv->npool > 0)
		hd_store_close(srv->pool[--srv->npool]);
	hd_mcp_server_free(srv->mcp);
	pthread_mutex_destroy(&srv->pool_lock);
	pthread_mutex_destroy(&srv->attach_lock);
	pthread_mutex_destroy(&srv->sse_lock);
	pthread_cond_destroy(&srv->sse_cond);
	pthread_mutex_destroy(&srv->mcp_lock);
	pthread_mutex_destroy(&srv->jobs_lock);
	pthread_cond_destroy(&srv->jobs_cond);
	free(srv->bind);
	free(srv->home);
	free(srv->token);
	free(srv->public_host);
	hd_http__tls_free(srv);
	OPENSSL_cleanse(srv->attach_key, sizeof(srv->attach_key));
	free(srv);
}
