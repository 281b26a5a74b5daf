/*
 * server_int.h -- the server's private state, shared by server.c,
 * sse.c, listen.c, async.c, guard.c, eventlog.c and tls.c only.
 */
#ifndef HD_SERVER_INT_H
#define HD_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <huddle/attach.h>
#include <huddle/events.h>
#include <huddle/supervisor.h>
#include "http.h"

#define HD_HTTP_ATTACH_SEEN 64 /* verified attach URLs remembered */

struct MHD_Daemon;
struct MHD_Connection;
struct hd_sse;
struct hd_mcp_sess;
struct hd_http_job;
struct hd_guard;
struct MHD_OptionItem;

struct hd_http_server {
	struct MHD_Daemon *daemon;
	char *bind;
	char *home;
	char *token;
	_Atomic int port; /* set once MHD reports it; read by its threads */
	hd_mcp_server *mcp;
	unsigned char attach_key[HD_ATTACH_KEY_LEN]; /* loaded once */
	/* signed identities already verified (server.c (8)), guarded by
	 * attach_lock; round robin once full */
	pthread_mutex_t attach_lock;
	struct hd_attach_seen {
		char team[51], agent[51]; /* slugs: at most 50 bytes */
		char sig[HD_ATTACH_SIG_HEX + 1];
	} attach_seen[HD_HTTP_ATTACH_SEEN];
	int nseen, next_seen;
	hd_conversation_engine *conv; /* conversations (route-conversation.c) */
	hd_supervisor *sv;	      /* autorun (supervisor.h) */
	struct hd_guard *guard;	      /* connection limits (guard.c) */
	unsigned int max_followers;   /* event streams at once (sse.c) */

	pthread_mutex_t pool_lock; /* guards pool/npool */
	hd_store *pool[16];
	int npool;

	/* SSE: guarded by sse_lock */
	pthread_mutex_t sse_lock;
	pthread_cond_t sse_cond; /* the broadcaster waits here for streams */
	pthread_t sse_thread;
	int sse_started;
	int sse_stopping;
	int64_t sse_delivered; /* every event <= this went to every stream */
	struct hd_sse *streams;
	size_t nstreams;
	size_t nlisteners; /* of streams, the MCP listeners (listen.c) */

	/* MCP sessions of the 2025 era (listen.c): guarded by mcp_lock */
	pthread_mutex_t mcp_lock;
	struct hd_mcp_sess *mcp_sessions;
	size_t nmcp_sessions;

	/* deferred requests (async.c): guarded by jobs_lock */
	pthread_mutex_t jobs_lock;
	pthread_cond_t jobs_cond;
	/* the acceptor (server.c (11)): our listening socket, the thread
	 * that accepts on it, and whether it is still wanted */
	int listen_fd;
	pthread_t acceptor;
	int acceptor_started;
	_Atomic int accepting;
	struct hd_http_job *jobs;
	int jobs_stopping;
	pthread_t watch_thread;
	int watch_started;
	/* the engine event log (eventlog.c) */
	pthread_t evlog_thread;
	int evlog_started;
	_Atomic int evlog_stopping;
	/* HTTPS (tls.c): the PEM certificate and key, or NULL for plain
	 * HTTP; and --public-url's host[:port], which a Host header may
	 * name (server.c (5)), or NULL */
	char *tls_cert, *tls_key;
	size_t tls_key_len;
	char *public_host;
};

/* The store pool (server.c): a connection for one thread at a time. */
hd_store *hd_http__pool_get(hd_http_server *srv, hd_err *err);
void hd_http__pool_put(hd_http_server *srv, hd_store *st);

/* Deferred requests (async.c). */
int hd_http__jobs_init(hd_http_server *srv, hd_err *err);
/* Cancel every job, wait for them to finish (bounded), stop watching. */
void hd_http__jobs_shutdown(hd_http_server *srv);
/* Take over r (deferred by its handler) on conn: suspend the connection
 * and start the job. On failure r holds an error response. */
struct hd_http_job *hd_http__job_start(hd_http_server *srv,
    struct MHD_Connection *conn, hd_http_req *r);
/* The finished job's request, whose response is to be queued. */
hd_http_req *hd_http__job_req(struct hd_http_job *j);
/* Join and free a job whose connection is done. NULL-safe. */
void hd_http__job_free(struct hd_http_job *j);
/* Drop a deferral that never became a job. */
void hd_http__deferral_free(struct hd_http_deferral *d);

/* The engine event log (eventlog.c): started only when info lines are
 * written; stop is NULL-safe and joins the thread. */
int hd_http__evlog_start(hd_http_server *srv, hd_err *err);
void hd_http__evlog_stop(hd_http_server *srv);

int hd_http__sse_init(hd_http_server *srv, hd_err *err);

/*
 * An MCP listener (listen.c): what an event stream delivers to one bound
 * agent instead of the event log's own lines. Owned by its stream.
 */
typedef struct hd_listen {
	char agent[64];
	int room, mail;	  /* which notifications it asked for */
	json_t *sub;	  /* 2026 listen: the request's id (its
			     subscription id); NULL for a 2025 GET stream */
	char session[40]; /* 2025: the Mcp-Session-Id it belongs to */
} hd_listen;

/* Start a stream as hd_http_sse_start does, delivering to listener L
 * (taken, also on failure) instead: sse.c (9). */
int hd_http__sse_listen(
    hd_http_req *r, const char *team, int64_t last_id, hd_listen *L);
/* End every listener stream of session sid (DELETE /mcp). */
void hd_http__sse_end_session(hd_http_server *srv, const char *sid);

/* listen.c, for sse.c: each event's notification params (a new object,
 * or NULL for events no listener hears) read through the room and
 * mailbox libraries; the wire text of event e (with its params p) for
 * listener L (malloc'd), or NULL when L does not hear it; the first
 * text of a stream resuming after cursor; the last one at shutdown
 * (or NULL). */
json_t *hd_http__listen_params(hd_store *st, const hd_event *e);
char *hd_http__listen_text(
    const hd_listen *L, const hd_event *e, const json_t *p);
char *hd_http__listen_prelude(const hd_listen *L, int64_t cursor);
char *hd_http__listen_final(const hd_listen *L);
void hd_http__listen_free(hd_listen *L);
void hd_http__mcp_sessions_free(hd_http_server *srv);
void hd_http__sse_shutdown(hd_http_server *srv);
void hd_http__sse_free(hd_http_server *srv);

/* HTTPS (tls.c): read and check cfg's certificate and key (nothing
 * without them); the daemon's TLS options, an MHD_OPTION_ARRAY of at
 * most 4 items (only the end without TLS); wipe and free them. */
int hd_http__tls_load(
    hd_http_server *srv, const hd_http_config *cfg, hd_err *err);
void hd_http__tls_options(
    const hd_http_server *srv, struct MHD_OptionItem *opts);
void hd_http__tls_free(hd_http_server *srv);

#endif
