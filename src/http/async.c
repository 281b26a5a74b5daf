/*
 * async.c -- requests finished later (hd_http_defer): long work runs on a
 * thread of its own while MHD's workers stay free.
 *
 *  (1) The handler only records what to run (a deferral). dispatch() then
 *      suspends the connection and starts the job's thread while holding
 *      jobs_lock, and the job resumes the connection under the same lock
 *      when it is done: a resume can never come before its suspend.
 *  (2) After the resume MHD calls the access handler again; server.c
 *      queues the job's response then. The job is joined and freed when
 *      MHD reports the request complete (on_completed), whether the
 *      response was sent or the client was gone.
 *  (3) MHD does not watch a suspended connection, so a watcher thread
 *      polls the sockets of running jobs for POLLRDHUP/POLLHUP (the peer
 *      closed or reset it) and sets the job's cancel flag. Only the peer's
 *      close is read, never data: a socket with pipelined bytes pending is
 *      simply no longer watched.
 *  (4) Shutdown sets cancel and stopping on every job and waits for all
 *      of them to resume their connections before MHD is stopped, so no
 *      connection is left suspended (MHD must not stop with one).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "server_int.h"

#define HD_LOG_COMPONENT "http"
#include <huddle/log.h>
#include <huddle/util.h>

#define WATCH_MAX 256      /* sockets watched at once */
#define WATCH_SLICE_MS 200 /* a new job waits at most this to be watched */
#define STOP_WAIT_MS 60000 /* how long shutdown waits for jobs */

struct hd_http_deferral {
	hd_http_async_fn fn;
	void *payload;
	void (*free_payload)(void *payload);
};

struct hd_http_job {
	struct hd_http_job *next;
	hd_http_server *srv;
	struct MHD_Connection *conn;
	int fd; /* the connection's socket, or -1 */
	hd_http_req req;
	struct hd_http_deferral d;
	atomic_int cancel;
	atomic_int stopping;
	pthread_t thread;
	int done;      /* jobs_lock: fn returned and the connection resumed */
	int unwatched; /* jobs_lock: no longer polled (3) */
};

void
hd_http__deferral_free(struct hd_http_deferral *d)
{
	if (d == NULL)
		return;
	if (d->free_payload != NULL)
		d->free_payload(d->payload);
	free(d);
}

int
hd_http_defer(hd_http_req *r, hd_http_async_fn fn, void *payload,
    void (*free_payload)(void *payload))
{
	struct hd_http_deferral *d;
	int stopping;

	pthread_mutex_lock(&r->srv->jobs_lock);
	stopping = r->srv->jobs_stopping;
	pthread_mutex_unlock(&r->srv->jobs_lock);
	if (stopping || (d = calloc(1, sizeof(*d))) == NULL) {
		if (free_payload != NULL)
			free_payload(payload);
		hd_http_error(r, 503,
		    stopping ? "the server is shutting down" : "out of memory");
		return -1;
	}
	d->fn = fn;
	d->payload = payload;
	d->free_payload = free_payload;
	hd_http__deferral_free(r->deferred);
	r->deferred = d;
	return 0;
}

static void *
job_main(void *arg)
{
	struct hd_http_job *j = arg;
	hd_http_server *srv = j->srv;
	hd_err err = HD_ERR_INIT;

	if ((j->req.st = hd_http__pool_get(srv, &err)) == NULL)
		hd_http_error(&j->req, 503, "%s", err.msg);
	else {
		j->d.fn(&j->req, j->d.payload);
		hd_http__pool_put(srv, j->req.st);
		j->req.st = NULL;
	}
	if (j->d.free_payload != NULL)
		j->d.free_payload(j->d.payload);
	j->d.payload = NULL;
	j->d.free_payload = NULL;
	pthread_mutex_lock(&srv->jobs_lock);
	j->done = 1;
	MHD_resume_connection(j->conn); /* (1) */
	pthread_cond_broadcast(&srv->jobs_cond);
	pthread_mutex_unlock(&srv->jobs_lock);
	return NULL;
}

struct hd_http_job *
hd_http__job_start(
    hd_http_server *srv, struct MHD_Connection *conn, hd_http_req *r)
{
	struct hd_http_job *j;
	const union MHD_ConnectionInfo *ci;

	if ((j = calloc(1, sizeof(*j))) == NULL) {
		hd_http__deferral_free(r->deferred);
		r->deferred = NULL;
		hd_http_error(r, 500, "out of memory");
		return NULL;
	}
	j->srv = srv;
	j->conn = conn;
	j->d = *r->deferred;
	free(r->deferred);
	r->deferred = NULL;
	atomic_init(&j->cancel, 0);
	atomic_init(&j->stopping, 0);
	j->req.srv = srv;
	j->req.conn = conn;
	j->req.cancel = &j->cancel;
	j->req.stopping = &j->stopping;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	j->fd = ci != NULL ? (int)ci->connect_fd : -1;

	pthread_mutex_lock(&srv->jobs_lock);
	if (srv->jobs_stopping ||
	    pthread_create(&j->thread, NULL, job_main, j) != 0) {
		pthread_mutex_unlock(&srv->jobs_lock);
		if (j->d.free_payload != NULL)
			j->d.free_payload(j->d.payload);
		hd_http_error(r, 503, "cannot run this request now");
		free(j);
		return NULL;
	}
	MHD_suspend_connection(conn); /* before the job can resume it (1) */
	j->next = srv->jobs;
	srv->jobs = j;
	pthread_cond_broadcast(&srv->jobs_cond); /* wake the watcher */
	pthread_mutex_unlock(&srv->jobs_lock);
	return j;
}

hd_http_req *
hd_http__job_req(struct hd_http_job *j)
{
	return &j->req;
}

void
hd_http__job_free(struct hd_http_job *j)
{
	hd_http_server *srv;
	struct hd_http_job **pp;

	if (j == NULL)
		return;
	srv = j->srv;
	atomic_store(&j->cancel, 1); /* in case it is somehow still running */
	pthread_join(j->thread, NULL);
	pthread_mutex_lock(&srv->jobs_lock);
	for (pp = &srv->jobs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	pthread_cond_broadcast(&srv->jobs_cond);
	pthread_mutex_unlock(&srv->jobs_lock);
	free(j->req.resp);
	free(j);
}

/* ---- the watcher (3) ---- */

static void *
watch_main(void *arg)
{
	hd_http_server *srv = arg;
	struct pollfd pfd[WATCH_MAX];
	struct hd_http_job *jobs[WATCH_MAX], *j;
	nfds_t n, i;

	pthread_mutex_lock(&srv->jobs_lock);
	while (!srv->jobs_stopping) {
		n = 0;
		for (j = srv->jobs; j != NULL && n < WATCH_MAX; j = j->next) {
			if (j->done || j->unwatched || j->fd < 0 ||
			    atomic_load(&j->cancel))
				continue;
			pfd[n].fd = j->fd;
			pfd[n].events = POLLRDHUP;
			pfd[n].revents = 0;
			jobs[n++] = j;
		}
		if (n == 0) {
			pthread_cond_wait(&srv->jobs_cond, &srv->jobs_lock);
			continue;
		}
		pthread_mutex_unlock(&srv->jobs_lock);
		if (poll(pfd, n, WATCH_SLICE_MS) < 0 && errno != EINTR)
			hd_log_warn(
			    "watching deferred requests: %s", strerror(errno));
		pthread_mutex_lock(&srv->jobs_lock);
		for (i = 0; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			/* the job may be gone since: only act on one still
			 * listed, running, with the same socket */
			for (j = srv->jobs; j != NULL && j != jobs[i];
			     j = j->next)
				;
			if (j == NULL || j->done || j->fd != pfd[i].fd)
				continue;
			if (pfd[i].revents &
			    (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
				hd_log_info("a client waiting for a deferred "
					    "request went away; cancelling it");
				atomic_store(&j->cancel, 1);
			} else
				j->unwatched = 1; /* data, not a close */
		}
	}
	pthread_mutex_unlock(&srv->jobs_lock);
	return NULL;
}

int
hd_http__jobs_init(hd_http_server *srv, hd_err *err)
{
	if (pthread_create(&srv->watch_thread, NULL, watch_main, srv) != 0)
		return hd_err_set(
		    err, HD_ERR, "cannot start the request watcher thread");
	srv->watch_started = 1;
	return 0;
}

void
hd_http__jobs_shutdown(hd_http_server *srv)
{
	struct hd_http_job *j;
	struct timespec ts;
	int busy;

	pthread_mutex_lock(&srv->jobs_lock);
	srv->jobs_stopping = 1;
	for (j = srv->jobs; j != NULL; j = j->next) {
		atomic_store(&j->stopping, 1);
		atomic_store(&j->cancel, 1);
	}
	pthread_cond_broadcast(&srv->jobs_cond);
	hd_timespec_in(&ts, STOP_WAIT_MS);
	for (;;) { /* (4) */
		busy = 0;
		for (j = srv->jobs; j != NULL; j = j->next)
			busy += !j->done;
		if (busy == 0 || pthread_cond_timedwait(&srv->jobs_cond,
				     &srv->jobs_lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&srv->jobs_lock);
	if (busy > 0)
		hd_log_warn(
		    "%d deferred request(s) still running at shutdown", busy);
	if (srv->watch_started) {
		pthread_join(srv->watch_thread, NULL);
		srv->watch_started = 0;
	}
}
