/*
 * server_int.h -- the server's private state, shared by server.c and
 * sse.c only.
 */
#ifndef HD_SERVER_INT_H
#define HD_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "commit.h"
#include "http.h"

struct MHD_Daemon;
struct hd_sse;

struct hd_http_server {
	struct MHD_Daemon *daemon;
	char *bind;
	char *home;
	char *token;
	_Atomic int port; /* set once MHD reports it; read by its threads */
	hd_mcp_server *mcp;
	hd_committer *committer; /* group commit of room posts */
	unsigned char attach_key[HD_ATTACH_KEY_LEN]; /* loaded once */
	hd_conversation_engine *conv; /* conversations (route-conversation.c) */

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
};

int hd_http__sse_init(hd_http_server *srv, hd_err *err);
void hd_http__sse_shutdown(hd_http_server *srv);
void hd_http__sse_free(hd_http_server *srv);

#endif
