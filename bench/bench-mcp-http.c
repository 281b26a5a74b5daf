/*
 * bench-mcp-http.c -- `tools/call team_chat_post` over Streamable HTTP,
 * in both MCP eras.
 *
 * mcp_http: 8 concurrent clients (curl multi, HTTP keep-alive, one bound
 * attach URL each) post to one room through a real `huddle serve` as
 * 2025-era requests; we report posts/s and p50/p99 latency, against the
 * same server answering MCP `ping` on the same connections (the request,
 * parse, bind and reply a post pays too, without its write), measured
 * before and after the posts in the same run and averaged. The ratio is
 * what the durable post costs over the bare round trip.
 * mcp_http_2026: the same, the same 8 clients on the same connections,
 * right after: each post a stateless 2026-07-28 request (the _meta
 * envelope in params, and the MCP-Protocol-Version, Mcp-Method and
 * Mcp-Name headers src/mcp/era.c requires), against the same server
 * answering that era's `server/discover` (checked by the same steps
 * (1)-(4) of era.c a post is) before and after.
 * Both eras go through one client loop (run_http), which a request kind
 * (struct mcp_req: body, headers, what its reply must say) parameterises.
 * Every reply is read and checked -- HTTP 200 and a JSON-RPC result; in
 * the 2026 era result.resultType "complete"; for a post, no isError --
 * and the room's head must have moved by exactly the posts sent, so no
 * figure ever counts an error: a failed request ends the bench (exit 1)
 * naming the request kind, the reason and the reply.
 * mcp_memory: the server's resident memory at idle, and with 1,000 open
 * SSE followers on /api/events.
 *
 * usage: bench_mcp_http [REQUESTS]   (default 20000, per run); HUDDLE_BIN
 * names the huddle binary (default ./huddle).
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
#include <jansson.h>

#include <huddle/attach.h>
#include <huddle/buf.h>
#include <huddle/room.h>
#include <huddle/team.h>



#include "bench-server.h"

#define CLIENTS 8
#define FOLLOWERS 1000


struct client {
	CURL *h;
	char url[512];
	int64_t started;
	hd_buf reply; /* the body of the request in flight */
};

struct clients {
	struct client c[CLIENTS];
	CURLM *m;
};

/* the bench's home, removed (with its server stopped) when a check fails */
static const char *bench_home;

/* End the bench after a failed check: stop the server, remove the home,
 * exit 1, so a failure leaves nothing running behind it. */
static void
bench_fail(void)
{
	if (bench_server_pid > 0)
		bench_stop_server();
	if (bench_home != NULL)
		bench_rm_rf(bench_home);
	exit(1);
}

/* One kind of request: its body, the headers it goes with (built by
 * reqs_open), and what its reply must say besides HTTP 200 and a
 * JSON-RPC result. */
struct mcp_req {
	const char *name; /* for the failure message */
	const char *body;
	const char *headers[3]; /* beyond Content-Type and Accept */
	int modern;             /* result.resultType must be "complete" */
	int post;               /* a post: result.isError must not be true */
	struct curl_slist *hdrs;
};

#define MODERN_META                                                            \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"              \
	"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

enum { POST_2025, PING_2025, POST_2026, DISCOVER_2026, NREQS };

static struct mcp_req reqs[NREQS] = {
    [POST_2025] = {"2025 team_chat_post",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	"{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"benchmark "
	"post from a bound agent\"}}}",
	{NULL}, 0, 1, NULL},
    [PING_2025] = {"2025 ping",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", {NULL}, 0, 0,
	NULL},
    [POST_2026] = {"2026 team_chat_post",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	"{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"benchmark "
	"post from a bound agent\"}," MODERN_META "}}",
	{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call",
	    "Mcp-Name: team_chat_post"},
	1, 1, NULL},
    [DISCOVER_2026] = {"2026 server/discover",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
	"\"params\":{" MODERN_META "}}",
	{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: server/discover",
	    NULL},
	1, 0, NULL},
};

static void
reqs_open(void)
{
	int i, k;

	for (i = 0; i < NREQS; i++) {
		struct curl_slist *l;

		l = curl_slist_append(NULL, "Content-Type: application/json");
		l = curl_slist_append(l, "Accept: application/json, "
					 "text/event-stream");
		for (k = 0; k < 3 && reqs[i].headers[k] != NULL; k++)
			l = curl_slist_append(l, reqs[i].headers[k]);
		if (l == NULL) {
			fprintf(stderr, "bench: out of memory\n");
			bench_fail();
		}
		reqs[i].hdrs = l;
	}
}

static void
reqs_close(void)
{
	int i;

	for (i = 0; i < NREQS; i++)
		curl_slist_free_all(reqs[i].hdrs);
}

/* a CURLOPT_WRITEFUNCTION keeping the reply in its client's buffer */
static size_t
keep_reply(void *p, size_t s, size_t n, void *u)
{
	hd_buf *b = u;

	hd_buf_put(b, p, s * n);
	return hd_buf_failed(b) ? 0 : s * n;
}

/* o's member key is the string want */
static int
member_is(const json_t *o, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v != NULL && strcmp(v, want) == 0;
}

/* The reply c got to rq is what rq asks for, or the bench ends here. */
static void
check_reply(const struct mcp_req *rq, struct client *c, CURLcode res)
{
	const char *why = NULL;
	json_t *j = NULL, *r;
	long code = 0;

	curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
	if (res != CURLE_OK)
		why = curl_easy_strerror(res);
	else if (code != 200)
		why = "the HTTP status is not 200";
	else if ((j = json_loadb(c->reply.ptr, c->reply.len, 0, NULL)) == NULL)
		why = "the reply is not JSON";
	else if (!json_is_object(r = json_object_get(j, "result")))
		why = "the reply has no result";
	else if (rq->modern && !member_is(r, "resultType", "complete"))
		why = "result.resultType is not \"complete\"";
	else if (rq->post && json_is_true(json_object_get(r, "isError")))
		why = "the post failed (result.isError)";
	json_decref(j);
	if (why != NULL) {
		fprintf(stderr, "bench: %s: %s (HTTP %ld): %.400s\n", rq->name,
		    why, code, hd_buf_cstr(&c->reply));
		bench_fail();
	}
}

/* One keep-alive handle per agent a0..a7, each on its own attach URL:
 * every run below reuses the same handles, so the same connections. */
static void
clients_open(struct clients *cs, int port, hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	int i;

	cs->m = curl_multi_init();
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
		c->reply = (hd_buf)HD_BUF_INIT(0);
		curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, keep_reply);
		curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->reply);
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

	for (i = 0; i < CLIENTS; i++) {
		curl_easy_cleanup(cs->c[i].h);
		hd_buf_dispose(&cs->c[i].reply);
	}
	curl_multi_cleanup(cs->m);
}

/* total requests of kind rq, CLIENTS at a time, every reply checked;
 * requests/s, and each one's latency in lat (NULL: not kept). The one
 * client loop of both eras: only rq differs between them. */
static double
run_http(struct clients *cs, const struct mcp_req *rq, int total, int64_t *lat)
{
	CURLM *m = cs->m;
	int sent = 0, done = 0, running, i;
	int64_t t0;

	for (i = 0; i < CLIENTS; i++) {
		curl_easy_setopt(cs->c[i].h, CURLOPT_POSTFIELDS, rq->body);
		curl_easy_setopt(cs->c[i].h, CURLOPT_HTTPHEADER, rq->hdrs);
	}
	t0 = hd_mono_us();
	for (i = 0; i < CLIENTS && sent < total; i++, sent++) {
		hd_buf_reset(&cs->c[i].reply);
		cs->c[i].started = hd_mono_us();
		curl_multi_add_handle(m, cs->c[i].h);
	}
	while (done < total) {
		CURLMsg *msg;
		int left;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct client *cl;
			int64_t took;

			if (msg->msg != CURLMSG_DONE)
				continue;
			took = hd_mono_us();
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
			    (char **)&cl);
			took -= cl->started;
			check_reply(rq, cl, msg->data.result);
			if (lat != NULL)
				lat[done] = took;
			done++;
			curl_multi_remove_handle(m, cl->h);
			if (sent < total) {
				sent++;
				hd_buf_reset(&cl->reply);
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

/* The room's highest seq, read through the bench's own connection. */
static int64_t
room_head(hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	int64_t head;

	if (hd_room_head(&head, st, "dev", &err) != 0) {
		fprintf(stderr, "bench: room head: %s\n", err.msg);
		bench_fail();
	}
	return head;
}

/* One era's figures: posts/s and their sorted latencies, and the
 * baseline's requests/s run before and after the posts, averaged. */
struct era {
	double posts, ceiling;
	int64_t *lat;
};

/* Measure one era: total of reqs[base], of reqs[post] (which must each
 * have put one post in the room, the room's head says), of reqs[base]. */
static void
measure_era(struct era *e, struct clients *cs, hd_store *st, int post, int base,
    int total)
{
	int64_t before, after;

	e->ceiling = run_http(cs, &reqs[base], total, NULL);
	before = room_head(st);
	e->posts = run_http(cs, &reqs[post], total, e->lat);
	after = room_head(st);
	if (after - before != total) {
		fprintf(stderr,
		    "bench: %s: %d posts answered, but the room "
		    "holds %lld new ones\n",
		    reqs[post].name, total, (long long)(after - before));
		bench_fail();
	}
	e->ceiling = (e->ceiling + run_http(cs, &reqs[base], total, NULL)) / 2;
	qsort(e->lat, (size_t)total, sizeof(*e->lat), bench_cmp_i64);
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
	hd_store *st = NULL;
	hd_team_spec ts = {.id = "dev"};
	hd_err err = HD_ERR_INIT;
	struct clients cs;
	struct era e25, e26;
	long idle, loaded;

	if (total < 100 || mkdtemp(home) == NULL)
		return 2;
	bench_home = home;
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
	e25.lat = calloc((size_t)total, sizeof(*e25.lat));
	e26.lat = calloc((size_t)total, sizeof(*e26.lat));
	if (e25.lat == NULL || e26.lat == NULL)
		return 1;
	reqs_open();
	clients_open(&cs, port, st);
	/* warm up, both eras */
	run_http(&cs, &reqs[POST_2025], total / 10, NULL);
	run_http(&cs, &reqs[POST_2026], total / 10, NULL);
	idle = bench_rss_kb(bench_server_pid);
	measure_era(&e25, &cs, st, POST_2025, PING_2025, total);
	measure_era(&e26, &cs, st, POST_2026, DISCOVER_2026, total);
	clients_close(&cs);
	reqs_close();
	printf("mcp_http: %.0f posts/s (8 clients, p50 %.2f ms, p99 %.2f ms) | "
	       "baseline ping %.0f requests/s (same server, same 8 "
	       "connections) | ratio %.2fx\n",
	    e25.posts, e25.lat[total / 2] / 1000.0,
	    e25.lat[total * 99 / 100] / 1000.0, e25.ceiling,
	    e25.posts / e25.ceiling);
	printf("mcp_http_2026: %.0f posts/s (8 clients, 2026-07-28 stateless, "
	       "p50 %.2f ms, p99 %.2f ms) | baseline server/discover %.0f "
	       "requests/s (same server, same 8 connections) | ratio %.2fx\n",
	    e26.posts, e26.lat[total / 2] / 1000.0,
	    e26.lat[total * 99 / 100] / 1000.0, e26.ceiling,
	    e26.posts / e26.ceiling);
	fds = open_followers(port);
	hd_sleep_us(300000);
	loaded = bench_rss_kb(bench_server_pid);
	printf("mcp_memory: %.1f MB idle | with %d SSE followers %.1f MB\n",
	    idle / 1024.0, FOLLOWERS, loaded / 1024.0);
	for (i = 0; i < FOLLOWERS; i++)
		close(fds[i]);
	free(fds);
	free(e25.lat);
	free(e26.lat);
	bench_stop_server();
	hd_store_close(st);
	curl_global_cleanup();
	return bench_rm_rf(home) == 0 ? 0 : 1;
}
