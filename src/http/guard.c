/*
 * guard.c -- the connection guard of `huddle serve`: connections are a
 * guarded resource, so one client cannot leave every other unanswered.
 *
 * Callers: server.c installs the MHD callbacks below (accept policy,
 * connection notify, URI log) and reports each request's progress
 * (hd_http__guard_headers / _answering / _done); sse.c keeps its own
 * budget of event streams (srv->max_followers, set here).
 *
 * Design and invariants:
 *  (1) Every connection MHD starts is tracked from its STARTED notify to
 *      its CLOSED notify (its socket context), in one list under
 *      g->lock, with its phase: RECEIVING a request (from accept, or
 *      from the request line of a kept-alive connection's next request,
 *      until the whole body is in), ANSWERING (a response is queued or
 *      the request is deferred or an event stream), or IDLE
 *      (kept alive between requests).
 *  (2) Deadlines that bytes do not reset: a request must arrive whole,
 *      headers and body, within header_timeout of its start, and an idle
 *      connection must start its next request within the idle timeout.
 *      MHD's own timeout is reset by every byte, so a client trickling a
 *      byte a second would hold its connection forever; the sweeper
 *      thread closes, every SWEEP_MS, the connections past their
 *      deadline. It closes with shutdown(2) on the socket, which MHD sees
 *      as the peer going away: the fd is valid while the connection is
 *      in the list, since MHD reports CLOSED (which unlinks it, under
 *      g->lock) before it closes the socket. An ANSWERING connection has
 *      no deadline here (an event stream is one for as long as it is
 *      followed; MHD's idle timeout still covers a stalled reader).
 *  (3) Per address, at most per_address connections RECEIVING or IDLE:
 *      a new one past that is refused at accept (and, exactly, at
 *      STARTED, since MHD's threads accept concurrently). Connections
 *      being answered do not count: many followers behind one address
 *      (loopback, a NAT) are governed by the followers' budget (6).
 *  (4) At most max connections in all. The last `reserve` (max / 8) of
 *      them are held back for loopback clients and token holders: a
 *      connection from another address let in there must carry the
 *      bearer token on its first request, else it is answered 503 and
 *      closed; without a token configured, such connections are refused
 *      at once.
 *  (5) The open-file limit is raised to its hard limit at start, and max
 *      must fit in it with FD_MARGIN to spare (the store pool, the
 *      engines' pipes): an explicit --max-connections that does not fit
 *      is refused, the default is lowered to fit. The effective limits
 *      are logged.
 *  (6) Event streams (sse.c) have their own budget, max_followers
 *      (default max / 2, always below max), so followers cannot take the
 *      room requests need; past it a follower is answered 503.
 *  (7) Memory goes back after a burst: when the connection count falls
 *      to a quarter of a peak of at least TRIM_PEAK_MIN, the sweeper
 *      calls malloc_trim(0) once (glibc), not per request.
 *  (8) Refusals and expiries are counted and logged as one line per
 *      REPORT_MS at most (the first at once), not per connection: a
 *      flood must not flood the log.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "guard.h"

#define HD_LOG_COMPONENT "http"
#include <huddle/log.h>
#include <huddle/util.h>

#define SWEEP_MS 250
#define REPORT_MS 10000
#define TRIM_PEAK_MIN 256
#define FD_MARGIN 256
#define ADDR_BUCKETS 1024

enum { PH_RECEIVING, PH_ANSWERING, PH_IDLE };

struct addr_count {
	struct addr_count *next;
	unsigned char key[16]; /* IPv6, or IPv4 mapped into it */
	unsigned int pending;  /* RECEIVING or IDLE, not closing (3) */
	unsigned int conns;    /* every tracked connection; freed at 0 */
};

struct hd_conn {
	struct hd_conn *prev, *next;
	struct hd_guard *g;
	struct addr_count *addr;
	int fd;
	int phase;
	int64_t since_ms; /* start of the phase's deadline (2) */
	int loopback;
	int reserve; /* let in on the reserve, not yet authenticated (4) */
	int closing; /* shut down by us; uncounted in pending */
};

struct hd_guard {
	hd_http_server *srv;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t sweeper;
	int started, stopping;
	unsigned int max, per_address, reserve;
	int64_t header_ms, idle_ms;
	struct hd_conn *head;
	unsigned int total, peak;
	struct addr_count *buckets[ADDR_BUCKETS];
	/* since the last report (8) */
	unsigned long refused_addr, refused_full, expired, denied;
	int64_t last_report;
};

/* ---- addresses ---------------------------------------------------------- */

static int
addr_key(const struct sockaddr *sa, unsigned char key[16], int *loopback)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff};

	*loopback = 0;
	memset(key, 0, 16);
	if (sa == NULL)
		return -1;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		memcpy(key, mapped, 12);
		memcpy(key + 12, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6)
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else
		return -1;
	if (memcmp(key, mapped, 12) == 0)
		*loopback = key[12] == 127;
	else
		*loopback = memcmp(key, &in6addr_loopback, 16) == 0;
	return 0;
}

static unsigned int
addr_hash(const unsigned char key[16])
{
	unsigned int h = 2166136261u;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * 16777619u;
	return h % ADDR_BUCKETS;
}

static struct addr_count *
addr_find(struct hd_guard *g, const unsigned char key[16])
{
	struct addr_count *a;

	for (a = g->buckets[addr_hash(key)]; a != NULL; a = a->next)
		if (memcmp(a->key, key, 16) == 0)
			return a;
	return NULL;
}

static struct addr_count *
addr_get(struct hd_guard *g, const unsigned char key[16])
{
	struct addr_count *a = addr_find(g, key);
	unsigned int h;

	if (a != NULL || (a = calloc(1, sizeof(*a))) == NULL)
		return a;
	h = addr_hash(key);
	memcpy(a->key, key, 16);
	a->next = g->buckets[h];
	g->buckets[h] = a;
	return a;
}

static void
addr_drop(struct hd_guard *g, struct addr_count *a)
{
	struct addr_count **pp;

	if (--a->conns > 0)
		return;
	for (pp = &g->buckets[addr_hash(a->key)]; *pp != NULL;
	    pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	free(a);
}

/* ---- phases ------------------------------------------------------------- */

static struct hd_conn *
conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* Under g->lock. */
static void
conn_close(struct hd_conn *c)
{
	if (c->closing)
		return;
	if (c->phase != PH_ANSWERING)
		c->addr->pending--;
	c->closing = 1;
	(void)shutdown(c->fd, SHUT_RDWR); /* (2) MHD sees the peer leave */
}

static void
set_phase(struct hd_conn *c, int phase, int restart)
{
	struct hd_guard *g = c->g;

	pthread_mutex_lock(&g->lock);
	if (!c->closing && (c->phase == PH_ANSWERING) != (phase == PH_ANSWERING)) {
		if (phase == PH_ANSWERING)
			c->addr->pending--;
		else
			c->addr->pending++;
	}
	if (restart)
		c->since_ms = hd_mono_ms();
	c->phase = phase;
	pthread_mutex_unlock(&g->lock);
}

/* ---- MHD callbacks ------------------------------------------------------ */

enum MHD_Result
hd_http__guard_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	hd_http_server *srv = cls;
	struct hd_guard *g = srv->guard;
	struct addr_count *a;
	unsigned char key[16];
	int loopback, ok;

	(void)addrlen;
	if (addr_key(addr, key, &loopback) < 0)
		return MHD_YES; /* not IP: nothing to count it by */
	pthread_mutex_lock(&g->lock);
	a = addr_find(g, key);
	if (a != NULL && a->pending >= g->per_address) {
		g->refused_addr++;
		ok = 0;
	} else if (g->total >= g->max ||
	    (!loopback && srv->token == NULL &&
		g->total >= g->max - g->reserve)) {
		g->refused_full++;
		ok = 0;
	} else
		ok = 1;
	pthread_mutex_unlock(&g->lock);
	return ok ? MHD_YES : MHD_NO;
}

static void
on_started(struct hd_guard *g, struct MHD_Connection *conn, void **sc)
{
	const union MHD_ConnectionInfo *ai = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const union MHD_ConnectionInfo *fi = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	unsigned char key[16];
	struct hd_conn *c;
	int loopback;

	*sc = NULL;
	if (fi == NULL)
		return;
	if (ai == NULL || addr_key(ai->client_addr, key, &loopback) < 0) {
		memset(key, 0, sizeof(key)); /* not IP: one shared count */
		loopback = 0;
	}
	pthread_mutex_lock(&g->lock);
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->addr = addr_get(g, key)) == NULL) {
		pthread_mutex_unlock(&g->lock);
		free(c);
		(void)shutdown(fi->connect_fd, SHUT_RDWR); /* cannot track it */
		return;
	}
	c->g = g;
	c->fd = fi->connect_fd;
	c->loopback = loopback;
	c->phase = PH_RECEIVING;
	c->since_ms = hd_mono_ms();
	c->addr->conns++;
	c->addr->pending++;
	c->next = g->head;
	if (g->head != NULL)
		g->head->prev = c;
	g->head = c;
	g->total++;
	if (g->total > g->peak)
		g->peak = g->total;
	/* exactly now what the accept policy checked with threads racing */
	if (c->addr->pending > g->per_address) {
		g->refused_addr++;
		conn_close(c);
	} else if (g->total > g->max ||
	    (!loopback && g->total > g->max - g->reserve &&
		g->srv->token == NULL)) {
		g->refused_full++;
		conn_close(c);
	} else
		c->reserve = !loopback && g->total > g->max - g->reserve;
	pthread_mutex_unlock(&g->lock);
	*sc = c;
}

static void
on_closed(struct hd_guard *g, struct hd_conn *c)
{
	pthread_mutex_lock(&g->lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (!c->closing && c->phase != PH_ANSWERING)
		c->addr->pending--;
	addr_drop(g, c->addr);
	g->total--;
	pthread_mutex_unlock(&g->lock);
	free(c);
}

void
hd_http__guard_notify(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode code)
{
	hd_http_server *srv = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		on_started(srv->guard, conn, socket_context);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED &&
	    *socket_context != NULL) {
		on_closed(srv->guard, *socket_context);
		*socket_context = NULL;
	}
}

void *
hd_http__guard_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct hd_conn *c = conn_of(conn);

	(void)cls;
	(void)uri;
	/* a kept-alive connection's next request: its deadline starts now;
	 * a new connection's runs from accept (the request line counts) */
	if (c != NULL && c->phase == PH_IDLE)
		set_phase(c, PH_RECEIVING, 1);
	return NULL; /* the handler's *con_cls starts NULL (server.c) */
}

/* ---- request progress (server.c) ---------------------------------------- */

int
hd_http__guard_headers(struct MHD_Connection *conn, int authenticated)
{
	struct hd_conn *c = conn_of(conn);
	int ok = 1;

	if (c == NULL)
		return 1;
	pthread_mutex_lock(&c->g->lock);
	if (c->reserve && authenticated)
		c->reserve = 0; /* it proved itself: the room is its own (4) */
	else if (c->reserve) {
		c->g->denied++;
		ok = 0;
	}
	pthread_mutex_unlock(&c->g->lock);
	return ok;
}

void
hd_http__guard_answering(struct MHD_Connection *conn)
{
	struct hd_conn *c = conn_of(conn);

	if (c != NULL && c->phase != PH_ANSWERING)
		set_phase(c, PH_ANSWERING, 0);
}

void
hd_http__guard_done(struct MHD_Connection *conn)
{
	struct hd_conn *c = conn_of(conn);

	if (c != NULL)
		set_phase(c, PH_IDLE, 1);
}

/* ---- the sweeper (2), (7), (8) ------------------------------------------ */

/* Under g->lock: one line for what was refused or closed lately. */
static void
report(struct hd_guard *g, int64_t now)
{
	if (now - g->last_report < REPORT_MS ||
	    g->refused_addr + g->refused_full + g->expired + g->denied == 0)
		return;
	g->last_report = now;
	hd_log_warn("connection guard: refused %lu over the per-address "
		    "limit and %lu over the connection limit, answered %lu "
		    "503 on the reserve, closed %lu past their deadline "
		    "(%u open)",
	    g->refused_addr, g->refused_full, g->denied, g->expired, g->total);
	g->refused_addr = g->refused_full = g->expired = g->denied = 0;
}

static void *
sweeper_main(void *arg)
{
	struct hd_guard *g = arg;
	struct hd_conn *c;
	struct timespec ts;
	int64_t now;
	int trim;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SWEEP_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
		if (g->stopping)
			break;
		now = hd_mono_ms();
		for (c = g->head; c != NULL; c = c->next) {
			if (c->closing || c->phase == PH_ANSWERING)
				continue;
			if (now - c->since_ms >= (c->phase == PH_RECEIVING
						     ? g->header_ms
						     : g->idle_ms)) {
				conn_close(c);
				g->expired++;
			}
		}
		trim = g->peak >= TRIM_PEAK_MIN && g->total <= g->peak / 4;
		if (trim)
			g->peak = g->total;
		report(g, now);
		pthread_mutex_unlock(&g->lock);
#ifdef __GLIBC__
		if (trim)
			malloc_trim(0);
#endif
		pthread_mutex_lock(&g->lock);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* ---- start and stop ----------------------------------------------------- */

/* (5) The soft open-file limit raised to the hard one; the result. */
static unsigned long long
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_cur != rl.rlim_max) {
		struct rlimit want = {rl.rlim_max, rl.rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl.rlim_cur = rl.rlim_max;
	}
	return rl.rlim_cur == RLIM_INFINITY ? (unsigned long long)1 << 30
					    : (unsigned long long)rl.rlim_cur;
}

int
hd_http__guard_start(
    hd_http_server *srv, const hd_http_config *cfg, hd_err *err)
{
	struct hd_guard *g;
	unsigned long long nofile = raise_nofile();
	unsigned long long room = nofile > FD_MARGIN ? nofile - FD_MARGIN : 0;
	unsigned int max = HD_GUARD_MAX_CONNECTIONS, followers;

	if (cfg->max_connections > 0) {
		if ((unsigned long long)cfg->max_connections > room)
			return hd_err_set(err, HD_EINVAL,
			    "--max-connections %u needs %llu open files, but "
			    "this process may open only %llu (raise `ulimit "
			    "-n` or ask for fewer)",
			    cfg->max_connections,
			    (unsigned long long)cfg->max_connections +
				FD_MARGIN,
			    nofile);
		max = cfg->max_connections;
	} else if (max > room) {
		if (room < 64)
			return hd_err_set(err, HD_EINVAL,
			    "this process may open only %llu files: too few "
			    "to serve (raise `ulimit -n`)",
			    nofile);
		max = (unsigned int)room;
	}
	if (cfg->max_per_address > max)
		return hd_err_set(err, HD_EINVAL,
		    "--max-per-address %u is over --max-connections %u",
		    cfg->max_per_address, max);
	if (cfg->max_followers > 0 && cfg->max_followers >= max)
		return hd_err_set(err, HD_EINVAL,
		    "--max-followers %u must be below --max-connections %u "
		    "(followers would leave no room for requests)",
		    cfg->max_followers, max);
	followers = cfg->max_followers > 0 ? cfg->max_followers : max / 2;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	g->srv = srv;
	g->max = max;
	g->reserve = max / 8;
	g->per_address = cfg->max_per_address > 0 ? cfg->max_per_address
						  : HD_GUARD_MAX_PER_ADDRESS;
	if (g->per_address > max)
		g->per_address = max;
	g->header_ms = 1000LL *
	    (cfg->header_timeout > 0 ? cfg->header_timeout
				     : HD_GUARD_HEADER_TIMEOUT_S);
	g->idle_ms = 1000LL * HD_GUARD_IDLE_TIMEOUT_S;
	g->last_report = hd_mono_ms() - REPORT_MS; /* the first at once */
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	if (pthread_create(&g->sweeper, NULL, sweeper_main, g) != 0) {
		pthread_mutex_destroy(&g->lock);
		pthread_cond_destroy(&g->cond);
		free(g);
		return hd_err_set(err, HD_ERR, "cannot start the connection "
					       "sweeper");
	}
	g->started = 1;
	srv->guard = g;
	srv->max_followers = followers;
	hd_log_info("connections: at most %u (the last %u for loopback and "
		    "token holders), %u per address sending a request or "
		    "idle, %u event streams; a request has %lld s to arrive; "
		    "open files %llu",
	    g->max, g->reserve, g->per_address, followers,
	    (long long)(g->header_ms / 1000), nofile);
	return 0;
}

unsigned int
hd_http__guard_max(const hd_http_server *srv)
{
	return srv->guard->max;
}

void
hd_http__guard_stop(hd_http_server *srv)
{
	struct hd_guard *g = srv->guard;
	struct addr_count *a;
	size_t i;

	if (g == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	g->stopping = 1;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	if (g->started)
		pthread_join(g->sweeper, NULL);
	/* MHD has stopped: every connection reported CLOSED */
	for (i = 0; i < ADDR_BUCKETS; i++)
		while ((a = g->buckets[i]) != NULL) {
			g->buckets[i] = a->next;
			free(a);
		}
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
	srv->guard = NULL;
}
