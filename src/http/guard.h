/*
 * guard.h -- the connection guard (guard.c): who may hold a connection
 * to `huddle serve`, and for how long a request may take to arrive.
 * Private to src/http (server.c installs it into MHD; sse.c reads the
 * followers' budget from the server).
 */
#ifndef HD_HTTP_GUARD_H
#define HD_HTTP_GUARD_H

#include <sys/socket.h>

#include <microhttpd.h>

#include "server_int.h"

/* Defaults of `huddle serve` (README "Connections"). */
#define HD_GUARD_MAX_CONNECTIONS 8192
#define HD_GUARD_MAX_PER_ADDRESS 256
#define HD_GUARD_HEADER_TIMEOUT_S 10
#define HD_GUARD_IDLE_TIMEOUT_S 30 /* a kept-alive connection between
				      requests; MHD's own idle timeout too */

/* Check cfg's limits against each other and the open-file limit (raised
 * to its hard limit first), start the sweeper and set srv->guard and
 * srv->max_followers. The effective limits go to the log. */
int hd_http__guard_start(
    hd_http_server *srv, const hd_http_config *cfg, hd_err *err);
/* Stop the sweeper and free the guard; after MHD has stopped. NULL-safe. */
void hd_http__guard_stop(hd_http_server *srv);
/* The connection limit MHD is given (the guard's own). */
unsigned int hd_http__guard_max(const hd_http_server *srv);

/* MHD callbacks (cls is the server). */
enum MHD_Result hd_http__guard_accept(
    void *cls, const struct sockaddr *addr, socklen_t addrlen);
void hd_http__guard_notify(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode code);
void *hd_http__guard_uri(void *cls, const char *uri, struct MHD_Connection *conn);

/* The request's headers are in (the handler's first call). 1 to go on;
 * 0 when the connection was let in on the reserve and this request has
 * no right to it (not loopback, no valid token): answer 503 and close. */
int hd_http__guard_headers(struct MHD_Connection *conn, int authenticated);
/* The whole request is in (a response is queued, or will be): its
 * deadline no longer runs. */
void hd_http__guard_answering(struct MHD_Connection *conn);
/* The response went out; the connection waits for its next request. */
void hd_http__guard_done(struct MHD_Connection *conn);

#endif
