/*
 * bench-mcp-http.c -- `tools/call team_chat_post` over Streamable HTTP.
 *
 * mcp_http: 8 concurrent clients (curl multi, HTTP keep-alive, one bound
 * attach URL each) post to one room through a real `huddle serve`; we
 * report posts/s and p50/p99 latency, against the same server answering
 * MCP `ping` on the same connections (the request, parse, bind and reply
 * a post pays too, without its write), measured before and after the
 * posts in the same run and averaged. The ratio is what the durable post
 * costs over the bare round trip.
 * mcp_memory: the server's resident memory at idle, and with 1,000 open
 * SSE followers on /api/events.
 *
 * usage: bench_mcp_http [REQUESTS]   (default 20000); HUDDLE_BIN names the
 * huddle binary (default ./huddle).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include <huddle/attach.h>
#include <huddle/team.h>



#include "bench-server.h"

#define CLIENTS 8
#define FOLLOWERS 1000


struct client {
	CURL *h;
	char url[512];
	int64_t started;
};

struct clients {
	struct client c[CLIENTS];
	struct curl_slist *hdrs;
	CURLM *m;
};

static const char post_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"benchmark "
    "post from a bound agent\"}}}";
static const char ping_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

/* One keep-alive handle per agent a0..a7, each on its own attach URL:
 * every run below reuses the same handles, so the same connections. */
static void
clients_open(struct clients *cs, int port, hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	int i;

	cs->m = curl_multi_init();
	cs->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	cs->hdrs = curl_slist_append(cs->hdrs, "Accept: application/json, "
					       "text/event-stream");
	for (i = 0; i < CLIENTS; i++) {
		struct client *c = &cs->c[i];
		char agent[16], *url = NULL;

		snprintf(agent, sizeof(agent), "a%d", i);
		if (hd_attach_url(&url, st, "127.0.0.1", port, agent, &err) != 0)
			bench_die("attach url", &err);
		snprintf(c->url, sizeof(c->url), "%s", url);
		free(url);
		c->h = curl_easy_init();
		curl_easy_setopt(c->h, CURLOPT_URL, c->url);
		curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, cs->hdrs);
		curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, bench_discard);
		curl_easy_setopt(c->h, CURLOPT_PRIVATE, c);
		curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
		/* SIGPIPE is ignored already: spare curl two sigaction calls
		 * per transfer, CPU the server would otherwise not get */
		curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	}
}

static void
clients_close(struct clients *cs)
{
	int i;

	for (i = 0; i < CLIENTS; i++)
		curl_easy_cleanup(cs->c[i].h);
	curl_slist_free_all(cs->hdrs);
	curl_multi_cleanup(cs->m);
}

/* total requests of body, CLIENTS at a time; requests/s, and each one's
 * latency in lat (NULL: not kept). */
static double
run_http(struct clients *cs, const char *body, int total, int64_t *lat)
{
	CURLM *m = cs->m;
	int sent = 0, done = 0, running, i;
	int64_t t0;

	for (i = 0; i < CLIENTS; i++)
		curl_easy_setopt(cs->c[i].h, CURLOPT_POSTFIELDS, body);
	t0 = hd_mono_us();
	for (i = 0; i < CLIENTS && sent < total; i++, sent++) {
		cs->c[i].started = hd_mono_us();
		curl_multi_add_handle(m, cs->c[i].h);
	}
	while (done < total) {
		CURLMsg *msg;
		int left;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct client *cl;
			long code = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
			    (char **)&cl);
			curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_RESPONSE_CODE, &code);
			if (msg->data.result != CURLE_OK || code != 200) {
				fprintf(stderr, "bench: request failed (%d, %ld)\n",
				    msg->data.result, code);
				exit(1);
			}
			if (lat != NULL)
				lat[done] = hd_mono_us() - cl->started;
			done++;
			curl_multi_remove_handle(m, cl->h);
			if (sent < total) {
				sent++;
				cl->started = hd_mono_us();
				curl_multi_add_handle(m, cl->h);
			}
		}
		if (done < total)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	t0 = hd_mono_us() - t0;
	return total / (t0 / 1e6);
}

/* Open FOLLOWERS SSE connections; return the sockets (still open). */
static int *
open_followers(int port)
{
	static const char req[] = "GET /api/events HTTP/1.1\r\nHost: "
				  "127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
	struct sockaddr_in sin;
	int *fds = calloc(FOLLOWERS, sizeof(int)), i;
	char buf[512];

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < FOLLOWERS; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0 ||
		    connect(fds[i], (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
		    write(fds[i], req, sizeof(req) - 1) < 0) {
			fprintf(stderr, "bench: follower %d failed\n", i);
			exit(1);
		}
	}
	for (i = 0; i < FOLLOWERS; i++) /* each got its headers */
		if (read(fds[i], buf, sizeof(buf)) <= 0) {
			fprintf(stderr, "bench: follower %d got nothing\n", i);
			exit(1);
		}
	return fds;
}

int
main(int argc, char **argv)
{
	char home[] = "/tmp/huddle-bench-XXXXXX";
	const char *bin = getenv("HUDDLE_BIN") ? getenv("HUDDLE_BIN") : "./huddle";
	int total = argc > 1 ? atoi(argv[1]) : 20000, port, i, *fds;
	int64_t *lat;
	hd_store *st = NULL;
	hd_team_spec ts = {.id = "dev"};
	hd_err err = HD_ERR_INIT;
	struct clients cs;
	double http, ping;
	long idle, loaded;

	if (total < 100 || mkdtemp(home) == NULL)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (hd_store_open(&st, home, &err) != 0 ||
	    hd_team_create(NULL, st, &ts, &err) != 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	for (i = 0; i < CLIENTS; i++) {
		hd_agent_spec as = {0};
		char id[16];

		snprintf(id, sizeof(id), "a%d", i);
		as.id = id;
		as.team = "dev";
		as.leader = i == 0;
		if (hd_agent_add(NULL, st, &as, &err) != 0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			return 1;
		}
	}
	if ((port = bench_start_server(bin, home)) <= 0) {
		fprintf(stderr, "bench: cannot start %s serve\n", bin);
		return 1;
	}
	lat = calloc((size_t)total, sizeof(*lat));
	clients_open(&cs, port, st);
	run_http(&cs, post_body, total / 10, NULL); /* warm up */
	idle = bench_rss_kb(bench_server_pid);
	ping = run_http(&cs, ping_body, total, NULL);
	http = run_http(&cs, post_body, total, lat);
	ping = (ping + run_http(&cs, ping_body, total, NULL)) / 2;
	clients_close(&cs);
	qsort(lat, (size_t)total, sizeof(*lat), bench_cmp_i64);
	printf("mcp_http: %.0f posts/s (8 clients, p50 %.2f ms, p99 %.2f ms) | "
	       "baseline ping %.0f requests/s (same server, same 8 "
	       "connections) | ratio %.2fx\n",
	    http, lat[total / 2] / 1000.0, lat[total * 99 / 100] / 1000.0, ping,
	    http / ping);
	fds = open_followers(port);
	hd_sleep_us(300000);
	loaded = bench_rss_kb(bench_server_pid);
	printf("mcp_memory: %.1f MB idle | with %d SSE followers %.1f MB\n",
	    idle / 1024.0, FOLLOWERS, loaded / 1024.0);
	for (i = 0; i < FOLLOWERS; i++)
		close(fds[i]);
	free(fds);
	free(lat);
	bench_stop_server();
	hd_store_close(st);
	curl_global_cleanup();
	return bench_rm_rf(home) == 0 ? 0 : 1;
}
