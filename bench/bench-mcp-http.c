/*
 * bench-mcp-http.c -- `tools/call team_chat_post` over Streamable HTTP.
 *
 * mcp_http: 8 concurrent clients (curl multi, HTTP keep-alive, one bound
 * attach URL each) post to one room through a real `huddle serve`; we
 * report posts/s and p50/p99 latency, against raw SQLite doing the same
 * room insert per commit (BEGIN IMMEDIATE, MAX(seq)+1, INSERT with a random
 * UUID id, COMMIT; the schema and pragmas of a huddle store) from one
 * process in the same run.
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

#include "bench-raw.h"

#include "store/sqlite.h"

#include "bench-server.h"

#define CLIENTS 8
#define FOLLOWERS 1000


struct client {
	CURL *h;
	char url[512];
	int64_t started;
};

static double
run_http(int port, hd_store *st, int total, int64_t *lat)
{
	static const char body[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"team_chat_post\",\"arguments\":{\"text\":\"benchmark "
	    "post from a bound agent\"}}}";
	struct client c[CLIENTS];
	struct curl_slist *hdrs = NULL;
	CURLM *m = curl_multi_init();
	int sent = 0, done = 0, running, i;
	int64_t t0;
	hd_err err = HD_ERR_INIT;

	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Accept: application/json, "
				       "text/event-stream");
	for (i = 0; i < CLIENTS; i++) {
		char agent[16], *url = NULL;

		snprintf(agent, sizeof(agent), "a%d", i);
		if (hd_attach_url(&url, st, "127.0.0.1", port, agent, &err) != 0) {
			fprintf(stderr, "bench: %s\n", err.msg);
			exit(1);
		}
		snprintf(c[i].url, sizeof(c[i].url), "%s", url);
		free(url);
		c[i].h = curl_easy_init();
		curl_easy_setopt(c[i].h, CURLOPT_URL, c[i].url);
		curl_easy_setopt(c[i].h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c[i].h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(c[i].h, CURLOPT_WRITEFUNCTION, bench_discard);
		curl_easy_setopt(c[i].h, CURLOPT_PRIVATE, &c[i]);
		curl_easy_setopt(c[i].h, CURLOPT_TCP_NODELAY, 1L);
		/* SIGPIPE is ignored already: spare curl two sigaction calls
		 * per transfer, CPU the server would otherwise not get */
		curl_easy_setopt(c[i].h, CURLOPT_NOSIGNAL, 1L);
	}
	t0 = hd_mono_us();
	for (i = 0; i < CLIENTS && sent < total; i++, sent++) {
		c[i].started = hd_mono_us();
		curl_multi_add_handle(m, c[i].h);
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
			lat[done++] = hd_mono_us() - cl->started;
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
	for (i = 0; i < CLIENTS; i++)
		curl_easy_cleanup(c[i].h);
	curl_slist_free_all(hdrs);
	curl_multi_cleanup(m);
	return total / (t0 / 1e6);
}

static void
raw_step(sqlite3 *db, sqlite3_stmt *s, int want)
{
	if (sqlite3_step(s) != want) {
		fprintf(stderr, "bench: raw: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
}

/* Raw SQLite doing the same post, one commit each, from one connection:
 * on a store of its own under dir (so the schema comes from the same
 * migrations and the pragmas from the same open), BEGIN IMMEDIATE,
 * SELECT MAX(seq)+1, INSERT with a random UUID id, COMMIT. */
static double
run_raw(const char *dir, int n)
{
	char path[512];
	unsigned char pool[BENCH_RAW_POOL];
	size_t used = sizeof(pool);
	hd_store *rst = NULL;
	hd_err err = HD_ERR_INIT;
	sqlite3 *db;
	sqlite3_stmt *begin, *max, *ins, *commit;
	int64_t t0, seq;
	int i;

	snprintf(path, sizeof(path), "%s/raw", dir);
	if (hd_store_open(&rst, path, &err) != 0) {
		fprintf(stderr, "bench: raw: %s\n", err.msg);
		exit(1);
	}
	db = hd_store_db(rst);
	if (sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL) ||
	    sqlite3_prepare_v2(db,
		"SELECT COALESCE(MAX(seq), 0) + 1 FROM team_chat"
		" WHERE room_id = 'team:dev'",
		-1, &max, NULL) ||
	    sqlite3_prepare_v2(db,
		"INSERT INTO team_chat(id, room_id, team_id, author_agent_id,"
		" body, kind, created_at, seq) VALUES (?, 'team:dev', 'dev',"
		" 'a0', ?, 'peer', ?, ?)",
		-1, &ins, NULL) ||
	    sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL)) {
		fprintf(stderr, "bench: raw: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		char id[37];

		bench_raw_uuid(id, pool, &used);
		raw_step(db, begin, SQLITE_DONE);
		raw_step(db, max, SQLITE_ROW);
		seq = sqlite3_column_int64(max, 0);
		sqlite3_reset(max);
		sqlite3_bind_text(ins, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, "benchmark post from a bound agent",
		    -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 3, hd_now_ms());
		sqlite3_bind_int64(ins, 4, seq);
		raw_step(db, ins, SQLITE_DONE);
		raw_step(db, commit, SQLITE_DONE);
		sqlite3_reset(begin);
		sqlite3_reset(ins);
		sqlite3_reset(commit);
	}
	t0 = hd_mono_us() - t0;
	sqlite3_finalize(begin);
	sqlite3_finalize(max);
	sqlite3_finalize(ins);
	sqlite3_finalize(commit);
	hd_store_close(rst);
	return n / (t0 / 1e6);
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
	double http, raw;
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
	raw = run_raw(home, total / 2);
	run_http(port, st, total / 10, lat); /* warm up */
	idle = bench_rss_kb(bench_server_pid);
	http = run_http(port, st, total, lat);
	raw = (raw + run_raw(home, total / 2)) / 2;
	qsort(lat, (size_t)total, sizeof(*lat), bench_cmp_i64);
	printf("mcp_http: %.0f posts/s (8 clients, p50 %.2f ms, p99 %.2f ms) | "
	       "baseline raw sqlite %.0f posts/s (1 process, per commit) | "
	       "ratio %.2fx\n",
	    http, lat[total / 2] / 1000.0, lat[total * 99 / 100] / 1000.0, raw,
	    http / raw);
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
