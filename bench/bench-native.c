/*
 * bench-native.c -- the native runtime against a model server on
 * loopback.
 *
 * runtime_native: native turns per second, each turn two streamed model
 *   calls (the first answers with one tool call, task_list, run in
 *   process on the agent's store; the second with text), through
 *   hd_runtime_run_turn, each turn resuming the one before (its
 *   transcript read back and resent, as an agent's turns are), against
 *   two loops in C, rounds interleaved, in the same run. Both make the
 *   same HTTP requests with libcurl -- the very bodies the native round
 *   sent, recorded by the server -- two per turn on a fresh easy handle
 *   (as a turn has). The baseline (SPEC 15: a baseline does the same
 *   durable work) also does what a turn keeps, raw: the transcript's
 *   four lines appended to a file opened for the turn, one write() each
 *   as its message is made (native-transcript.c (1)), and task_list's
 *   reads in one SQLite read transaction on the same database (the team,
 *   its tasks, their dependencies and subtasks, the agent, its first
 *   undelivered message), each row's columns read. The second loop, HTTP
 *   alone, is printed beside it. Higher is better; the ratio is native /
 *   baseline (target >= 0.9), and native / HTTP alone after it. The server records a body by copying it into memory mapped
 *   and faulted in before the rounds: kept in the buffer it arrived in,
 *   each body recorded was memory the server could not reuse, and the
 *   page faults of fresh memory (about ten a turn) were charged to the
 *   native rounds, a cost of recording that neither side has.
 *   The server is a fake Chat Completions endpoint written here on
 *   libmicrohttpd, so neither side waits on a model.
 * runtime_native_idle: what an idle native agent costs this process: the
 *   heap still in use (mallinfo2) after one turn each of the last half of
 *   IDLE_AGENTS agents, per agent, over what it was before them (the
 *   first half's turns fill what the process keeps; a native agent's state
 *   is its transcript in its home; what the process keeps is bounded
 *   whatever the number of agents: the thread's kept tool session, and
 *   the resendable tail of the last few sessions written,
 *   native-transcript.c (3)), the resident memory grown the same way,
 *   and the transcript's bytes on disk.
 *
 * usage: bench_native [TURNS]   (default 400)
 */
#include <dirent.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <sqlite3.h>

#include <huddle/runtime.h>
#include <huddle/util.h>
#include <mcp/mcp.h>

#include "bench.h"
#include "runtime/native.h"

#define ROUNDS 4
#define IDLE_AGENTS 200

static const char *prompt = "status report, please: what is left?";

/* ---- the fake model server ---- */

static const char tool_reply[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
    "\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
    "\"task_list\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
    "\"tool_calls\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,"
    "\"completion_tokens\":20}}\n\n"
    "data: [DONE]\n\n";
static const char text_reply[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"All green, "
    "two tasks left.\"},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
    "\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":150,"
    "\"completion_tokens\":10}}\n\n"
    "data: [DONE]\n\n";

typedef struct upload {
	hd_buf body;
} upload;

/* The bodies the native round sent, for the baseline to send again:
 * copied into an arena mapped and faulted in before the rounds, so that
 * keeping them costs the native round a copy, not the page faults of
 * memory the process has not touched yet (a body kept is a buffer the
 * server's next request cannot reuse: its pages are new). A body past
 * the arena's room is kept in its own buffer. */
#define REC_BODY_ROOM (64 * 1024)
static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static char **rec;
static size_t nrec, caprec;
static int recording;
static char *arena;
static size_t arena_size, arena_used;

static int
in_arena(const char *p)
{
	return p >= arena && p < arena + arena_size;
}

/* A tool call when the last message is the user's, else text. */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data,
    size_t *size, void **req_cls)
{
	upload *u = *req_cls;
	struct MHD_Response *r;
	json_t *j, *msgs;
	const char *role, *reply;
	enum MHD_Result ok;

	(void)cls, (void)url, (void)method, (void)version;
	if (u == NULL) {
		if ((u = calloc(1, sizeof(*u))) == NULL)
			return MHD_NO;
		u->body = (hd_buf)HD_BUF_INIT(0);
		*req_cls = u;
		return MHD_YES;
	}
	if (*size > 0) {
		hd_buf_put(&u->body, data, *size);
		*size = 0;
		return MHD_YES;
	}
	j = json_loadb(hd_buf_cstr(&u->body), u->body.len, 0, NULL);
	pthread_mutex_lock(&rec_mu);
	if (recording && nrec < caprec) {
		if (u->body.len < arena_size - arena_used) {
			rec[nrec] = arena + arena_used;
			memcpy(
			    rec[nrec], hd_buf_cstr(&u->body), u->body.len + 1);
			arena_used += u->body.len + 1;
			nrec++;
		} else
			rec[nrec++] = hd_buf_detach(&u->body);
	}
	pthread_mutex_unlock(&rec_mu);
	msgs = json_object_get(j, "messages");
	role = json_string_value(json_object_get(
	    json_array_get(msgs, json_array_size(msgs) - 1), "role"));
	reply = role != NULL && strcmp(role, "tool") == 0 ? text_reply
							  : tool_reply;
	json_decref(j);
	hd_buf_dispose(&u->body);
	free(u);
	*req_cls = NULL;
	r = MHD_create_response_from_buffer(
	    strlen(reply), (void *)reply, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

/* ---- the baseline's durable work: what a turn keeps, done raw ---- */

enum { DUR_TEAM, DUR_TASKS, DUR_DEPS, DUR_SUBS, DUR_AGENT, DUR_INBOX, DUR_N };

static const char *const dur_sql[DUR_N] = {
    "SELECT 1 FROM teams WHERE id = ?1",
    "SELECT id, team_id, subject, description, active_form, status, owner,"
    " priority, metadata, result, created_by, created_at, claimed_at,"
    " started_at, completed_at, updated_at, parent_id FROM tasks"
    " WHERE team_id = ?1 ORDER BY id DESC",
    "SELECT d.task_id, d.depends_on, p.status FROM task_deps d"
    " JOIN tasks t ON t.id = d.task_id JOIN tasks p ON p.id = d.depends_on"
    " WHERE t.team_id = ?1 ORDER BY d.task_id, d.depends_on",
    "SELECT parent_id, id FROM tasks WHERE team_id = ?1"
    " AND parent_id IS NOT NULL ORDER BY parent_id, id",
    "SELECT 1 FROM agents WHERE id = ?2",
    "SELECT id, team_id, from_agent, to_agent, type, content, summary,"
    " request_id, approve, reason, conversation_id, created_at,"
    " delivered_at FROM messages WHERE to_agent = ?2"
    " AND delivered_at IS NULL ORDER BY id LIMIT 1",
};

typedef struct durable {
	sqlite3 *db;
	sqlite3_stmt *q[DUR_N];
	char path[700];  /* its transcript */
	char *lines[4];  /* user, the call, the tool's answer, the reply */
	size_t lens[4];
	size_t bytes;    /* what the columns read came to (kept live) */
} durable;

/* The reads task_list makes, in one read transaction. */
static void
durable_reads(durable *du)
{
	int i, c;

	if (sqlite3_exec(du->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		bench_die("raw begin", NULL);
	for (i = 0; i < DUR_N; i++) {
		sqlite3_stmt *q = du->q[i];

		while (sqlite3_step(q) == SQLITE_ROW)
			for (c = 0; c < sqlite3_column_count(q); c++) {
				(void)sqlite3_column_text(q, c);
				du->bytes += (size_t)sqlite3_column_bytes(q, c);
			}
		sqlite3_reset(q);
	}
	if (sqlite3_exec(du->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		bench_die("raw commit", NULL);
}

static void
durable_line(durable *du, int fd, int k)
{
	if (write(fd, du->lines[k], du->lens[k]) != (ssize_t)du->lens[k])
		bench_die("raw transcript write", NULL);
}

/* The lines a turn writes, as native-transcript.c writes them (one
 * message, compact, then a newline), and the reads on the store. */
static void
durable_open(durable *du, const char *home, const char *dir,
    const char *tool_text)
{
	char db[700];
	json_t *m[4];
	int i;

	memset(du, 0, sizeof(*du));
	snprintf(db, sizeof(db), "%s/huddle.db", home);
	snprintf(du->path, sizeof(du->path), "%s/raw-transcript.jsonl", dir);
	if (sqlite3_open_v2(db, &du->db, SQLITE_OPEN_READWRITE, NULL) !=
		SQLITE_OK ||
	    sqlite3_exec(du->db, "PRAGMA busy_timeout=2000", NULL, NULL,
		NULL) != SQLITE_OK)
		bench_die("raw open", NULL);
	for (i = 0; i < DUR_N; i++) {
		if (sqlite3_prepare_v2(du->db, dur_sql[i], -1, &du->q[i],
			NULL) != SQLITE_OK)
			bench_die(sqlite3_errmsg(du->db), NULL);
		if (sqlite3_bind_parameter_index(du->q[i], "?1") > 0)
			sqlite3_bind_text(du->q[i], 1, "dev", -1, SQLITE_STATIC);
		if (sqlite3_bind_parameter_index(du->q[i], "?2") > 0)
			sqlite3_bind_text(du->q[i],
			    sqlite3_bind_parameter_index(du->q[i], "?2"), "a0",
			    -1, SQLITE_STATIC);
	}
	m[0] = json_pack("{s:s, s:s}", "role", "user", "text", prompt);
	m[1] = json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "role",
	    "assistant", "text", "", "calls", "id", "call_1", "name",
	    "task_list", "args", "{}");
	m[2] = json_pack("{s:s, s:s, s:s, s:s, s:b}", "role", "tool", "id",
	    "call_1", "name", "task_list", "text", tool_text, "is_error", 0);
	m[3] = json_pack("{s:s, s:s}", "role", "assistant", "text",
	    "All green, two tasks left.");
	for (i = 0; i < 4; i++) {
		char *j = json_dumps(m[i], JSON_COMPACT);

		if (j == NULL)
			bench_die("raw lines", NULL);
		du->lens[i] = strlen(j) + 1;
		if ((du->lines[i] = malloc(du->lens[i] + 1)) == NULL)
			bench_die("memory", NULL);
		memcpy(du->lines[i], j, du->lens[i] - 1);
		memcpy(du->lines[i] + du->lens[i] - 1, "\n", 2);
		free(j);
		json_decref(m[i]);
	}
}

static void
durable_close(durable *du)
{
	int i;

	for (i = 0; i < DUR_N; i++)
		sqlite3_finalize(du->q[i]);
	sqlite3_close(du->db);
	for (i = 0; i < 4; i++)
		free(du->lines[i]);
}

/* ---- the baselines: the same requests with libcurl ---- */

static size_t
discard(char *p, size_t s, size_t n, void *ctx)
{
	(void)p;
	*(size_t *)ctx += s * n;
	return s * n;
}

/* One turn's two requests; with du, the turn's durable work in the
 * order a turn does it: the prompt's line, the first call, its line,
 * the tool's reads and its line, the second call, the reply's line. */
static void
curl_turn(const char *url, struct curl_slist *h, const char *b1,
    const char *b2, durable *du)
{
	CURL *c = curl_easy_init();
	const char *bodies[2] = {b1, b2};
	size_t got = 0;
	int i, fd = -1;

	if (du != NULL) {
		if ((fd = open(du->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			 0600)) < 0)
			bench_die("raw transcript", NULL);
		durable_line(du, fd, 0);
	}
	for (i = 0; i < 2; i++) {
		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, bodies[i]);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
		if (curl_easy_perform(c) != CURLE_OK)
			bench_die("curl", NULL);
		if (du != NULL && i == 0) {
			durable_line(du, fd, 1);
			durable_reads(du);
			durable_line(du, fd, 2);
		}
	}
	curl_easy_cleanup(c);
	if (du != NULL) {
		durable_line(du, fd, 3);
		close(fd);
	}
	if (got != sizeof(tool_reply) - 1 + sizeof(text_reply) - 1)
		bench_die("curl reply", NULL);
}

/* The two bodies a turn sends, as native-wire.c makes them. */
static void
bodies(char **b1, char **b2, const json_t *tools)
{
	json_t *m = json_array(), *r;

	json_array_append_new(
	    m, json_pack("{s:s, s:s}", "role", "user", "text", prompt));
	r = hd_native__request(HD_NATIVE_OPENAI, "fake-model", NULL, m, tools);
	*b1 = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	json_array_append_new(m,
	    json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "role", "assistant",
		"text", "", "calls", "id", "call_1", "name", "task_list",
		"args", "{}"));
	json_array_append_new(m,
	    json_pack("{s:s, s:s, s:s, s:s, s:b}", "role", "tool", "id",
		"call_1", "name", "task_list", "text", "{\"tasks\":[]}",
		"is_error", 0));
	r = hd_native__request(HD_NATIVE_OPENAI, "fake-model", NULL, m, tools);
	*b2 = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	json_decref(m);
}

/* ---- the native turns ---- */

/* One turn of a, resuming *session (then the turn's own) when given. */
static void
native_turn(const hd_runtime_adapter *rt, hd_agent *a, const char *home,
    const char *agent_home, char **session)
{
	hd_runtime_turn t;
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;

	memset(&t, 0, sizeof(t));
	t.agent = a;
	t.team = "dev";
	t.prompt = prompt;
	t.home_dir = agent_home;
	t.huddle_home = home;
	t.resume_session_id = session != NULL ? *session : NULL;
	if (hd_runtime_run_turn(&res, rt, &t, NULL, NULL, &err) != 0)
		bench_die("native turn", &err);
	if (strcmp(res.text, "All green, two tasks left.") != 0)
		bench_die("native reply", NULL);
	if (session != NULL && res.native_session_id != NULL) {
		free(*session);
		*session = strdup(res.native_session_id);
	}
	hd_runtime_result_dispose(&res);
}

static long
rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 400;
	long per, i;
	char dir[] = "/tmp/huddle-bench-native-XXXXXX";
	char home[600], ahome[700], url[128], cfg[256], id[32];
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info = NULL;
	const hd_runtime_adapter *rt;
	struct curl_slist *h = NULL;
	hd_store *st;
	hd_agent a;
	hd_err err = HD_ERR_INIT;
	void *sess;
	json_t *tools;
	char *b1, *b2, *session = NULL, *tool_text = NULL;
	int64_t t0, lib = 0, raw = 0, http = 0;
	durable du;
	long rss0 = 0, rss1, disk = 0;
	size_t heap0 = 0, heap1;
	int round;
	struct stat sb;

	if (n < ROUNDS) {
		fprintf(stderr, "usage: bench_native [TURNS >= %d]\n", ROUNDS);
		return 2;
	}
	per = n / ROUNDS;
	if (mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);
	snprintf(home, sizeof(home), "%s/home", dir);
	st = bench_team_home(home, "dev", "a", IDLE_AGENTS, 1);
	hd_store_close(st);
	hd_runtime_set_tool_host(hd_mcp_tool_host());

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
	    on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
	if (d == NULL ||
	    (info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)) == NULL)
		bench_die("the fake server", NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/v1",
	    (unsigned)info->port);
	snprintf(cfg, sizeof(cfg),
	    "{\"provider\":\"openai\",\"model\":\"fake-model\","
	    "\"base_url\":\"%s\",\"tools\":[\"task_list\"]}",
	    url);
	memset(&a, 0, sizeof(a));
	a.id = (char *)"a0";
	a.team_id = (char *)"dev";
	a.runtime = (char *)"native";
	a.runtime_config = json_loads(cfg, 0, NULL);
	if (hd_runtime_find(&rt, "native", &err) != 0)
		bench_die("find", &err);

	/* the baseline's requests: the bodies a turn sends */
	if (hd_mcp_tool_host()->open(&sess, home, "dev", "a0", &err) < 0)
		bench_die("tools", &err);
	{
		json_t *all = hd_mcp_tool_host()->list(sess), *v;
		size_t k;

		tools = json_array();
		json_array_foreach (all, k, v)
			if (strcmp(json_string_value(json_object_get(v, "name")),
				"task_list") == 0)
				json_array_append(tools, v);
		json_decref(all);
	}
	{ /* the tool's answer, for the baseline's transcript line */
		json_t *none = json_object();

		if (hd_mcp_tool_host()->call(sess, "task_list", none, &tool_text) != 0)
			bench_die("task_list", NULL);
		json_decref(none);
	}
	hd_mcp_tool_host()->close(sess);
	bodies(&b1, &b2, tools);
	json_decref(tools);
	snprintf(url + strlen(url), sizeof(url) - strlen(url),
	    "/chat/completions");
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: text/event-stream");

	snprintf(ahome, sizeof(ahome), "%s/agent-a0", dir);
	mkdir(ahome, 0700);
	durable_open(&du, home, dir, tool_text);
	for (i = 0; i < 10; i++) { /* warm all three */
		curl_turn(url, h, b1, b2, &du);
		curl_turn(url, h, b1, b2, NULL);
		native_turn(rt, &a, home, ahome, NULL);
	}
	caprec = (size_t)per * 2;
	arena_size = caprec * REC_BODY_ROOM;
	if ((rec = calloc(caprec, sizeof(*rec))) == NULL ||
	    (arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)) ==
		MAP_FAILED)
		bench_die("memory", NULL);
	for (round = 0; round < ROUNDS; round++) {
		size_t k;

		pthread_mutex_lock(&rec_mu);
		nrec = 0;
		arena_used = 0;
		recording = 1;
		pthread_mutex_unlock(&rec_mu);
		t0 = hd_mono_us();
		for (i = 0; i < per; i++)
			native_turn(rt, &a, home, ahome, &session);
		lib += hd_mono_us() - t0;
		pthread_mutex_lock(&rec_mu);
		recording = 0;
		pthread_mutex_unlock(&rec_mu);
		if (nrec != caprec)
			bench_die("recorded bodies", NULL);
		t0 = hd_mono_us();
		for (i = 0; i < per; i++)
			curl_turn(url, h, rec[2 * i], rec[2 * i + 1], &du);
		raw += hd_mono_us() - t0;
		t0 = hd_mono_us();
		for (i = 0; i < per; i++)
			curl_turn(url, h, rec[2 * i], rec[2 * i + 1], NULL);
		http += hd_mono_us() - t0;
		for (k = 0; k < nrec; k++)
			if (!in_arena(rec[k]))
				free(rec[k]);
	}
	free(rec);
	munmap(arena, arena_size);
	free(session);
	durable_close(&du);
	free(tool_text);
	printf("runtime_native: %.0f turns/s | baseline %.0f turns/s | "
	       "ratio %.2f | HTTP alone %.0f turns/s, ratio %.2f\n",
	    (double)(per * ROUNDS) / ((double)lib / 1e6),
	    (double)(per * ROUNDS) / ((double)raw / 1e6),
	    (double)raw / (double)lib,
	    (double)(per * ROUNDS) / ((double)http / 1e6),
	    (double)http / (double)lib);
	fflush(stdout);

	/* idle agents: one turn each, then nothing held but their files */
	for (i = 0; i < IDLE_AGENTS; i++) {
		if (i == IDLE_AGENTS / 2) { /* the first half fills what the
					       process keeps */
			heap0 = mallinfo2().uordblks;
			rss0 = rss_kib();
		}
		snprintf(id, sizeof(id), "a%ld", i);
		a.id = id;
		snprintf(ahome, sizeof(ahome), "%s/idle-%ld", dir, i);
		mkdir(ahome, 0700);
		native_turn(rt, &a, home, ahome, NULL);
	}
	rss1 = rss_kib();
	heap1 = mallinfo2().uordblks;
	for (i = 0; i < IDLE_AGENTS; i++) {
		char f[800];
		DIR *dd;
		struct dirent *e;

		snprintf(f, sizeof(f), "%s/idle-%ld/native", dir, i);
		if ((dd = opendir(f)) == NULL)
			continue;
		while ((e = readdir(dd)) != NULL) {
			char p[1100];

			snprintf(p, sizeof(p), "%s/%s", f, e->d_name);
			if (e->d_name[0] != '.' && stat(p, &sb) == 0)
				disk += sb.st_size;
		}
		closedir(dd);
	}
	printf("runtime_native_idle: %.0f bytes of heap per idle agent, RSS "
	       "%+.1f KiB per agent (%d agents, one turn each) | transcript "
	       "%ld bytes on disk per agent\n",
	    ((double)heap1 - (double)heap0) / (IDLE_AGENTS / 2),
	    (double)(rss1 - rss0) / (IDLE_AGENTS / 2), IDLE_AGENTS / 2,
	    disk / IDLE_AGENTS);

	MHD_stop_daemon(d);
	curl_slist_free_all(h);
	free(b1);
	free(b2);
	json_decref(a.runtime_config);
	bench_rm_rf(dir);
	return 0;
}
