/*
 * bench-mcp-listen.c -- post-to-notification latency for a listening MCP
 * client (SPEC 10.1).
 *
 * mcp_listen: one bound agent (a1) holds a 2026-07-28 subscriptions/listen
 * stream on a real `huddle serve`; another bound agent (a0) posts over
 * MCP HTTP (tools/call team_chat_post on its attach URL, keep-alive), one
 * post at a time. Each latency runs from just before the post request to
 * the arrival of its notifications/huddle/room on the stream (a reader
 * thread stamps every arrival). p50/p99 are reported against the same
 * server's GET /api/events stream, the dashboard's, timed the same way
 * for the same kind of posts (its team_chat_post event), measured before
 * and after the listener in the same run, one stream open at a time; the
 * ratio is the p50's: what a listener's notification (the post read back
 * and wrapped, the JSON-RPC frame) costs over the bare event.
 *
 * usage: bench_mcp_listen [POSTS]   (default 2000); HUDDLE_BIN names the
 * huddle binary (default ./huddle).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include <huddle/attach.h>
#include <huddle/team.h>

#include "bench-server.h"
#include "bench-stream.h"

static const char post_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"benchmark "
    "post to a listener\"}}}";
static const char listen_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"bench\",\"method\":\"subscriptions/"
    "listen\",\"params\":{\"notifications\":{\"huddle/room\":true},"
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

/* Post n times through h, each after the previous one's arrival on s;
 * lat[i] = its arrival - just before its request, in us. */
static void
measure(CURL *h, bench_stream *s, int n, int64_t *lat)
{
	int i;

	hd_sleep_us(200000); /* the stream is registered */
	for (i = 0; i < n; i++) {
		int64_t t0 = hd_mono_us();

		if (curl_easy_perform(h) != CURLE_OK)
			bench_die("post", NULL);
		lat[i] = bench_stream_wait(s, i, t0, "notification") - t0;
	}
	qsort(lat, (size_t)n, sizeof(*lat), bench_cmp_i64);
}

/* The baseline: the same posts timed to GET /api/events's event. */
static void
events_run(CURL *h, int port, int n, int64_t *lat)
{
	bench_stream s;
	char head[256];

	snprintf(head, sizeof(head),
	    "GET /api/events?team=dev HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n"
	    "Accept: text/event-stream\r\n",
	    port);
	bench_stream_open(&s, port, head, NULL, "event: team_chat_post", n);
	measure(h, &s, n, lat);
	bench_stream_close(&s);
}

int
main(int argc, char **argv)
{
	char home[] = "/tmp/huddle-bench-XXXXXX", head[1024], *url = NULL;
	const char *bin = getenv("HUDDLE_BIN") ? getenv("HUDDLE_BIN") : "./huddle";
	int n = argc > 1 ? atoi(argv[1]) : 2000, port;
	int64_t *lat, *base1, *base2;
	hd_store *st;
	hd_err err = HD_ERR_INIT;
	struct curl_slist *hdrs;
	bench_stream s;
	CURL *h;
	double b50, b99;

	if (n < 100 || mkdtemp(home) == NULL)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	st = bench_team_home(home, "dev", "a", 2, 1);
	if ((port = bench_start_server(bin, home)) <= 0) {
		fprintf(stderr, "bench: cannot start %s serve\n", bin);
		return 1;
	}
	lat = calloc((size_t)n, sizeof(*lat));
	base1 = calloc((size_t)n, sizeof(*base1));
	base2 = calloc((size_t)n, sizeof(*base2));
	if (lat == NULL || base1 == NULL || base2 == NULL)
		return 1;

	/* the poster: a0 over MCP HTTP, one keep-alive connection */
	if (hd_attach_url(&url, st, "127.0.0.1", port, "a0", &err) != 0)
		bench_die("attach url", &err);
	h = curl_easy_init();
	hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, post_body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_discard);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	free(url);

	events_run(h, port, n, base1);

	/* the listener: a1's subscriptions/listen over its attach URL */
	if (hd_attach_url(&url, st, "127.0.0.1", port, "a1", &err) != 0)
		bench_die("attach url", &err);
	snprintf(head, sizeof(head),
	    "POST %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2026-07-28\r\n"
	    "Mcp-Method: subscriptions/listen\r\n",
	    strstr(url, "/mcp"), port);
	free(url);
	bench_stream_open(&s, port, head, listen_body,
	    "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/huddle/room\"",
	    n);
	measure(h, &s, n, lat);
	bench_stream_close(&s);

	events_run(h, port, n, base2);
	b50 = (base1[n / 2] + base2[n / 2]) / 2.0;
	b99 = (base1[n * 99 / 100] + base2[n * 99 / 100]) / 2.0;
	printf("mcp_listen: post-to-notification p50 %.2f ms, p99 %.2f ms "
	       "(%d posts over MCP HTTP, 2026 listen) | baseline GET "
	       "/api/events p50 %.2f ms, p99 %.2f ms (same server, same "
	       "run) | ratio %.2fx\n",
	    lat[n / 2] / 1000.0, lat[n * 99 / 100] / 1000.0, n, b50 / 1000.0,
	    b99 / 1000.0, lat[n / 2] / b50);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	curl_global_cleanup();
	hd_store_close(st);
	free(lat);
	free(base1);
	free(base2);
	bench_stop_server();
	bench_rm_rf(home);
	return 0;
}
