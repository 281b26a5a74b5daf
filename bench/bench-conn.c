/*
 * bench-conn.c -- another client's latency while one address exhausts
 * connections (issue 24: connections are a guarded resource).
 *
 * One `huddle serve` with its default limits. Baseline: a REST read (GET
 * /api/teams/dev) and an MCP post (tools/call team_chat_post through a
 * signed attach URL) from 127.0.0.1, each on a new connection, with
 * nothing else open. Then, on the same server in the same run, 3,000 SSE
 * followers (spread over 127.0.1.1-30, as dashboards on many machines)
 * and an attacker on 127.0.0.2 keeping 4,000 slow partial requests going
 * (one header byte a second each; a connection the server closed is
 * opened again at the next second), and the same requests again. We
 * report p50/p99 of each beside the baseline, the attacker's view (how
 * many connections it held at most), and the server's RSS: idle, at the
 * peak of the attack, and after it (the server gives memory back with
 * malloc_trim once its connections fall). The followers follow another
 * team for conn_rest/conn_mcp (open, idle but for keep-alives); then, in
 * conn_fanout_*, the team posted to, so every post is also sent to
 * 3,000 followers (10 posts/s: 30,000 deliveries/s).
 *
 * conn_rest, conn_mcp, conn_fanout_rest, conn_fanout_mcp, conn_memory,
 * conn_attack: see run.sh's format.
 * usage: bench_conn [REQUESTS]  (default 400 of each, per phase); HUDDLE_BIN
 * names the huddle binary (default ./huddle).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include <huddle/attach.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "bench-server.h"

#define ATTACKERS 4000
#define FOLLOWERS 3000
#define FOLLOWER_ADDRS 30
/* between a REST read + MCP post pair: 10 posts/s, which (in the
 * fan-out phase) make 30,000 SSE deliveries/s */
#define PACE_US 100000

static int port;

static void
die(const char *what)
{
	fprintf(stderr, "bench: %s\n", what);
	if (bench_server_pid > 0)
		kill(bench_server_pid, SIGTERM);
	exit(1);
}

/* ---- the good client (127.0.0.1) --------------------------------------- */

struct good {
	CURL *rest, *mcp;
	struct curl_slist *hdrs;
	char rest_url[128], mcp_url[512];
};

static void
good_init(struct good *g, hd_store *st)
{
	static const char body[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"posted "
	    "while the server is under attack\"}}}";
	hd_err err = HD_ERR_INIT;
	char *url = NULL;

	snprintf(g->rest_url, sizeof(g->rest_url),
	    "http://127.0.0.1:%d/api/teams/dev", port);
	if (hd_attach_url(&url, st, "127.0.0.1", port, "a0", &err) != 0)
		die(err.msg);
	snprintf(g->mcp_url, sizeof(g->mcp_url), "%s", url);
	free(url);
	g->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	g->hdrs = curl_slist_append(g->hdrs, "Accept: application/json, "
					     "text/event-stream");
	g->rest = curl_easy_init();
	g->mcp = curl_easy_init();
	curl_easy_setopt(g->rest, CURLOPT_URL, g->rest_url);
	curl_easy_setopt(g->mcp, CURLOPT_URL, g->mcp_url);
	curl_easy_setopt(g->mcp, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(g->mcp, CURLOPT_HTTPHEADER, g->hdrs);
	curl_easy_setopt(g->rest, CURLOPT_WRITEFUNCTION, bench_discard);
	curl_easy_setopt(g->mcp, CURLOPT_WRITEFUNCTION, bench_discard);
	/* a new connection each time: a new client must get in */
	curl_easy_setopt(g->rest, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(g->mcp, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(g->rest, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(g->mcp, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(g->rest, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(g->mcp, CURLOPT_NOSIGNAL, 1L);
}

static int64_t
timed(CURL *h)
{
	int64_t t0 = hd_mono_us();
	long code = 0;
	CURLcode rc = curl_easy_perform(h);

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK || code != 200) {
		fprintf(stderr, "bench: request failed (%s, %ld)\n",
		    curl_easy_strerror(rc), code);
		die("another client was not answered");
	}
	return hd_mono_us() - t0;
}

/* n of each, alternating, pause_us between pairs; RSS peak sampled. */
static void
measure(struct good *g, int n, int64_t *rest, int64_t *mcp, int pause_us,
    long *peak)
{
	int i;
	long kb;

	for (i = 0; i < n; i++) {
		rest[i] = timed(g->rest);
		mcp[i] = timed(g->mcp);
		if (pause_us > 0)
			hd_sleep_us(pause_us);
		if (peak != NULL && i % 20 == 0 &&
		    (kb = bench_rss_kb(bench_server_pid)) > *peak)
			*peak = kb;
	}
	qsort(rest, (size_t)n, sizeof(*rest), bench_cmp_i64);
	qsort(mcp, (size_t)n, sizeof(*mcp), bench_cmp_i64);
}

/* ---- the attacker (127.0.0.2) ------------------------------------------- */

static const char slow_prefix[] = "GET /api/teams HTTP/1.1\r\nHost: "
				  "127.0.0.1\r\nX-Slow: ";

struct slot {
	int fd;
	int connected;
};

static struct slot slots[ATTACKERS];
static atomic_int attack_stop;
static long attack_connects, attack_closed;
static int attack_held_max;

static void
slot_open(int ep, int i)
{
	struct sockaddr_in src, dst;
	struct epoll_event ev;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	slots[i].fd = -1;
	slots[i].connected = 0;
	if (fd < 0)
		return;
	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.2", &src.sin_addr);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) != 0 ||
	    (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) != 0 &&
		errno != EINPROGRESS)) {
		close(fd);
		return;
	}
	ev.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP;
	ev.data.u32 = (uint32_t)i;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	slots[i].fd = fd;
	attack_connects++;
}

static void
slot_close(int i)
{
	if (slots[i].fd >= 0)
		close(slots[i].fd);
	slots[i].fd = -1;
	slots[i].connected = 0;
}

static void *
attack_main(void *arg)
{
	struct epoll_event evs[256];
	int ep = epoll_create1(0), i, n, held;
	int64_t next_tick = hd_mono_ms() + 1000;
	char buf[512];

	(void)arg;
	for (i = 0; i < ATTACKERS; i++)
		slot_open(ep, i);
	while (!atomic_load(&attack_stop)) {
		int64_t now = hd_mono_ms();

		n = epoll_wait(ep, evs, 256,
		    next_tick > now ? (int)(next_tick - now) : 0);
		for (i = 0; i < n; i++) {
			int s = (int)evs[i].data.u32;
			struct slot *sl = &slots[s];

			if (sl->fd < 0)
				continue;
			if (evs[i].events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP |
						EPOLLIN)) {
				/* the server answered or closed: done with it */
				while (read(sl->fd, buf, sizeof(buf)) > 0)
					;
				attack_closed++;
				slot_close(s);
				continue;
			}
			if ((evs[i].events & EPOLLOUT) && !sl->connected) {
				struct epoll_event ev = {
				    .events = EPOLLIN | EPOLLRDHUP,
				    .data.u32 = (uint32_t)s};

				sl->connected = 1;
				if (write(sl->fd, slow_prefix,
					sizeof(slow_prefix) - 1) < 0) {
					attack_closed++;
					slot_close(s);
					continue;
				}
				epoll_ctl(ep, EPOLL_CTL_MOD, sl->fd, &ev);
			}
		}
		if (hd_mono_ms() < next_tick)
			continue;
		/* each second: one byte on every open one, reopen the rest */
		next_tick += 1000;
		held = 0;
		for (i = 0; i < ATTACKERS; i++) {
			if (slots[i].fd < 0) {
				slot_open(ep, i);
				continue;
			}
			if (!slots[i].connected)
				continue;
			held++;
			if (write(slots[i].fd, "a", 1) < 0) {
				attack_closed++;
				slot_close(i);
			}
		}
		if (held > attack_held_max)
			attack_held_max = held;
	}
	for (i = 0; i < ATTACKERS; i++)
		slot_close(i);
	close(ep);
	return NULL;
}

/* ---- followers (127.0.1.1-30) ------------------------------------------- */

static atomic_int follow_stop;

/* The followers read what they are sent, as dashboards do. */
static void *
follow_main(void *arg)
{
	int *fds = arg, ep = epoll_create1(0), i, n;
	struct epoll_event ev, evs[256];
	char buf[16384];

	for (i = 0; i < FOLLOWERS; i++) {
		ev.events = EPOLLIN;
		ev.data.fd = fds[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	while (!atomic_load(&follow_stop)) {
		n = epoll_wait(ep, evs, 256, 100);
		for (i = 0; i < n; i++)
			if (read(evs[i].data.fd, buf, sizeof(buf)) <= 0)
				epoll_ctl(ep, EPOLL_CTL_DEL, evs[i].data.fd, NULL);
	}
	close(ep);
	return NULL;
}

/* FOLLOWERS streams of team's events, each having its headers. */
static int *
open_followers(const char *team)
{
	struct sockaddr_in src, dst;
	int *fds = calloc(FOLLOWERS, sizeof(int)), i, len;
	char buf[512], req[256];
	ssize_t n;

	len = snprintf(req, sizeof(req),
	    "GET /api/events?team=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Accept: text/event-stream\r\n\r\n",
	    team);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < FOLLOWERS; i++) {
		memset(&src, 0, sizeof(src));
		src.sin_family = AF_INET;
		src.sin_addr.s_addr =
		    htonl(0x7f000100u + 1u + (uint32_t)(i % FOLLOWER_ADDRS));
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0 ||
		    bind(fds[i], (struct sockaddr *)&src, sizeof(src)) != 0 ||
		    connect(fds[i], (struct sockaddr *)&dst, sizeof(dst)) != 0 ||
		    write(fds[i], req, (size_t)len) < 0)
			die("a follower could not connect");
	}
	for (i = 0; i < FOLLOWERS; i++) { /* each got its stream */
		n = read(fds[i], buf, sizeof(buf) - 1);
		if (n <= 0)
			die("a follower got nothing");
		buf[n] = '\0';
		if (strncmp(buf, "HTTP/1.1 200", 12) != 0)
			die("a follower was not let in");
	}
	return fds;
}

static void
followers_close(int *fds, pthread_t reader)
{
	int i;

	atomic_store(&follow_stop, 1);
	pthread_join(reader, NULL);
	atomic_store(&follow_stop, 0);
	for (i = 0; i < FOLLOWERS; i++)
		close(fds[i]);
	free(fds);
}

static void
report(const char *name, const char *what, int64_t *at, int64_t *base, int n)
{
	printf("%s: p50 %.2f ms, p99 %.2f ms (%s) | baseline p50 %.2f ms, "
	       "p99 %.2f ms (same server, no attack, no followers) | ratio "
	       "p99 %.2fx\n",
	    name, at[n / 2] / 1000.0, at[n * 99 / 100] / 1000.0, what,
	    base[n / 2] / 1000.0, base[n * 99 / 100] / 1000.0,
	    (double)at[n * 99 / 100] / (double)base[n * 99 / 100]);
}

int
main(int argc, char **argv)
{
	char home[] = "/tmp/huddle-bench-XXXXXX", what[200];
	const char *bin = getenv("HUDDLE_BIN") ? getenv("HUDDLE_BIN") : "./huddle";
	int n = argc > 1 ? atoi(argv[1]) : 400, *fds;
	int64_t *lat[6]; /* baseline, attack, attack + fan-out; rest, mcp */
	hd_store *st = NULL;
	hd_team_spec ts = {.id = "dev"}, ts2 = {.id = "ops"};
	hd_agent_spec as = {.id = "a0", .team = "dev", .leader = 1};
	hd_err err = HD_ERR_INIT;
	struct good g;
	struct rlimit rl;
	pthread_t attacker, reader;
	long idle, peak = 0, peak_fanout = 0, after;
	int i;

	if (n < 100 || mkdtemp(home) == NULL)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	/* 4,000 attackers and 3,000 followers are this process's fds too */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < ATTACKERS + FOLLOWERS + 256) {
			fprintf(stderr, "bench: conn: needs %d open files, the "
					"limit is %llu\n",
			    ATTACKERS + FOLLOWERS + 256,
			    (unsigned long long)rl.rlim_cur);
			return 1;
		}
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (hd_store_open(&st, home, &err) != 0 ||
	    hd_team_create(NULL, st, &ts, &err) != 0 ||
	    hd_team_create(NULL, st, &ts2, &err) != 0 ||
	    hd_agent_add(NULL, st, &as, &err) != 0)
		die(err.msg);
	if ((port = bench_start_server(bin, home)) <= 0)
		die("cannot start huddle serve");
	for (i = 0; i < 6; i++)
		if ((lat[i] = calloc((size_t)n, sizeof(int64_t))) == NULL)
			die("out of memory");
	good_init(&g, st);
	measure(&g, n / 4, lat[0], lat[1], 0, NULL); /* warm up */
	measure(&g, n, lat[0], lat[1], PACE_US, NULL);
	idle = bench_rss_kb(bench_server_pid);

	/* the attack, with 3,000 followers of another team open: what the
	 * guard is for */
	fds = open_followers("ops");
	if (pthread_create(&reader, NULL, follow_main, fds) != 0)
		die("cannot start the followers");
	if (pthread_create(&attacker, NULL, attack_main, NULL) != 0)
		die("cannot start the attacker");
	hd_sleep_us(3000000); /* the attack is in full swing */
	/* PACE_US apart, the requests span the attack's reconnection waves
	 * and its held connections' deadlines */
	measure(&g, n, lat[2], lat[3], PACE_US, &peak);
	followers_close(fds, reader);
	hd_sleep_us(2000000); /* the server lets them go (sse.c (8)) */

	/* the same with the followers following the team posted to: each
	 * post is also sent to 3,000 followers */
	fds = open_followers("dev");
	if (pthread_create(&reader, NULL, follow_main, fds) != 0)
		die("cannot start the followers");
	hd_sleep_us(1000000);
	measure(&g, n, lat[4], lat[5], PACE_US, &peak_fanout);
	atomic_store(&attack_stop, 1);
	pthread_join(attacker, NULL);
	followers_close(fds, reader);
	hd_sleep_us(3000000); /* the server notices, and trims */
	after = bench_rss_kb(bench_server_pid);

	snprintf(what, sizeof(what),
	    "new connection each, %d slow connections from one address, %d "
	    "SSE followers of another team",
	    ATTACKERS, FOLLOWERS);
	report("conn_rest", what, lat[2], lat[0], n);
	report("conn_mcp", what, lat[3], lat[1], n);
	snprintf(what, sizeof(what),
	    "the same attack, the %d followers sent every post, %d posts/s",
	    FOLLOWERS, 1000000 / PACE_US);
	report("conn_fanout_rest", what, lat[4], lat[0], n);
	report("conn_fanout_mcp", what, lat[5], lat[1], n);
	printf("conn_memory: RSS %.1f MB at peak of the attack (%.1f MB with "
	       "the fan-out), %.1f MB after it | baseline %.1f MB idle | "
	       "ratio after/idle %.2fx\n",
	    peak / 1024.0, peak_fanout / 1024.0, after / 1024.0, idle / 1024.0,
	    (double)after / (double)idle);
	printf("conn_attack: %d slow connections kept trying: %ld connects, "
	       "%ld closed by the server, at most %d open at once as the "
	       "attacker saw it\n",
	    ATTACKERS, attack_connects, attack_closed, attack_held_max);

	curl_easy_cleanup(g.rest);
	curl_easy_cleanup(g.mcp);
	curl_slist_free_all(g.hdrs);
	for (i = 0; i < 6; i++)
		free(lat[i]);
	bench_stop_server();
	hd_store_close(st);
	curl_global_cleanup();
	return bench_rm_rf(home) == 0 ? 0 : 1;
}
