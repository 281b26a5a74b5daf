/*
 * bench-pg.c -- huddle on PostgreSQL (issue 16), each figure beside a
 * baseline measured in the same run on the same cluster:
 *
 *   pg_room_post_8thr: posts per second through hd_room_post from 8
 *     threads, each with its own hd_store_open (HUDDLE_STORE naming a
 *     fresh database), against a libpq loop on 8 connections sending,
 *     per post, the very statements hd_room_post sends (read off the
 *     cluster's log_statement=all, each prepared once and run with
 *     PQexecPrepared): BEGIN + lock_timeout + the writers' advisory lock
 *     in one round trip, the membership check, the seq counter upsert and
 *     its read, the post, its event, the author's activity touch, and
 *     the data version bump + NOTIFY + COMMIT in one round trip. So the
 *     ratio is what huddle's own code adds or saves (its group commit of
 *     posts made at the same time, room/batch.c, puts several posts in a
 *     commit: the baseline commits each post, as a program that does not
 *     batch does; on PostgreSQL each post of a batch sends a SAVEPOINT and a
 *     RELEASE, as many round trips as the BEGIN and COMMIT it saves, so
 *     what the batch saves there is lock hand-offs).
 *   pg_room_post_8thr_vs_lean: the same huddle figure against a lean
 *     libpq loop writing the same rows with the fewest round trips:
 *     BEGIN + advisory lock, the upsert with RETURNING seq, the post,
 *     the event, NOTIFY + COMMIT. It shows what huddle's statement design
 *     (the separate reads, the touch, the data version) costs.
 *   pg_claim_8thr: claims per second with 8 claimer threads (own stores)
 *     draining T ready tasks through hd_board_auto_claim (the board's claim:
 *     see bench-claim.c) against libpq sending the statements a claim
 *     sends: the advisory lock BEGIN, membership, the conditional UPDATE
 *     ... RETURNING, its dependencies and children read back, the
 *     task_claimed event, the room line in a savepoint (team check, seq
 *     upsert and read, post, its event), the touch, the data version +
 *     NOTIFY + COMMIT. _vs_lean: the conditional UPDATE, the task_claimed
 *     event, the room line and its event, NOTIFY + COMMIT and nothing
 *     else. Every round checks that each task was claimed exactly once
 *     and that none is left pending.
 *   pg_sse_cross_node_p50 / _p99: two `huddle serve` (HUDDLE_BIN) on one
 *     database; a post through node A's REST (POST /api/teams/b/posts,
 *     one keep-alive connection) until its team_chat_post event arrives on
 *     node B's GET /api/events stream, one post at a time. Baseline: the
 *     same post timed to node A's own stream, measured before and after
 *     in the same run, one stream open at a time.
 *
 * The cluster: HUDDLE_BENCH_PG=URL reuses one (each round makes a
 * database of its own there and drops it); otherwise tests/pg/cluster.sh
 * starts a throwaway one in BUILD/pg-bench (Unix socket only; fsync and
 * synchronous_commit off, as for the tests: both sides alike) and stops
 * it at the end. Without PostgreSQL the benchmark prints `# pg: skipped:
 * <why>` and exits 0, so `make bench` runs on machines without it.
 *
 * Posts: best of R rounds per side (bench-room.c); claims: the median
 * (bench-claim.c); sides rotate round by round against drift.
 * Output: `<name>: <figure> <unit> | baseline <figure> <unit> | ratio <x>`
 * and lines starting with '#' for context.
 *
 *   bench_pg [--posts N] [--tasks T] [--threads P] [--latency N]
 *            [--rounds R]     (default 8000 10000 8 1000 3)
 *
 * Callers: bench/run.sh (make bench), which runs every bench_*.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <libgen.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libpq-fe.h>

#include <huddle/board.h>
#include <huddle/log.h>
#include <huddle/room.h>
#include <huddle/store.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "bench-raw.h"
#include "bench-server.h"
#include "bench-stream.h"

#define MAX_THREADS 64
#define PG_WRITE_KEY 0x48756464 /* pg.c's HD_PG_WRITE_KEY */
#define BUSY_MS 60000

static int nposts = 8000, ntasks = 10000, nthreads = 8, nlat = 1000,
	   nrounds = 3;
static char *admin_url; /* the cluster's maintenance database */
static char cluster_dir[600];
static int started_cluster;
static pid_t nodes[2]; /* the serve processes running, 0: none */

/* --- the cluster and its databases -------------------------------------- */

/* The line `cmd` printed last (its output and errors), in out. */
static int
run_capture(const char *cmd, char *out, size_t n)
{
	char line[1024];
	FILE *f = popen(cmd, "r");
	int status;

	out[0] = '\0';
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '\0')
			snprintf(out, n, "%s", line);
	}
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The URL of the cluster to use, or NULL with *why set (skipped). */
static char *
cluster_url(char *why, size_t n)
{
	const char *env = getenv("HUDDLE_BENCH_PG");
	char exe[512], cmd[1400], out[1024];
	ssize_t len;

	if (env != NULL && env[0] != '\0')
		return strdup(env);
	/* BUILD/bench/bench_pg -> BUILD/pg-bench */
	if ((len = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0) {
		snprintf(why, n, "cannot read /proc/self/exe");
		return NULL;
	}
	exe[len] = '\0';
	snprintf(cluster_dir, sizeof(cluster_dir), "%s/pg-bench",
	    dirname(dirname(exe)));
	snprintf(cmd, sizeof(cmd),
	    "bash '%s/tests/pg/cluster.sh' start '%s' 2>&1", HD_SOURCE_DIR,
	    cluster_dir);
	if (run_capture(cmd, out, sizeof(out)) != 0 ||
	    strncmp(out, "postgres", 8) != 0) {
		snprintf(why, n,
		    "no PostgreSQL cluster (tests/pg/cluster.sh: %s)", out);
		return NULL;
	}
	started_cluster = 1;
	return strdup(out);
}

static void
cluster_stop(void)
{
	char cmd[1400], out[1024];

	if (!started_cluster)
		return;
	snprintf(cmd, sizeof(cmd),
	    "bash '%s/tests/pg/cluster.sh' stop '%s' 2>&1", HD_SOURCE_DIR,
	    cluster_dir);
	if (run_capture(cmd, out, sizeof(out)) != 0)
		fprintf(stderr, "bench_pg: stopping the cluster: %s\n", out);
}

/* url with its database name replaced by db (malloc'd). */
static char *
url_with_db(const char *url, const char *db)
{
	const char *p = strstr(url, "://"), *slash, *q;
	char *out;
	size_t n;

	if (p == NULL)
		return NULL;
	p += 3;
	q = strchr(p, '?');
	slash = strchr(p, '/');
	if (slash != NULL && q != NULL && slash > q)
		slash = NULL;
	if (slash == NULL) /* no database named: it goes before the query */
		slash = q != NULL ? q : p + strlen(p);
	n = strlen(url) + strlen(db) + 2;
	if ((out = malloc(n)) == NULL)
		return NULL;
	snprintf(out, n, "%.*s/%s%s", (int)(slash - url), url, db,
	    q != NULL ? q : "");
	return out;
}

static void
pg_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg; /* NOTICEs ("does not exist, skipping") */
}

static PGconn *
pg_connect(const char *url)
{
	PGconn *c = PQconnectdb(url);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bench_pg: connect: %s", PQerrorMessage(c));
		exit(1);
	}
	PQsetNoticeProcessor(c, pg_quiet, NULL);
	return c;
}

/* Run sql on c (no result wanted); die naming what failed. */
static void
pg_do(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK &&
	    PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "bench_pg: %s: %s", sql, PQerrorMessage(c));
		exit(1);
	}
	PQclear(r);
}

/* A fresh database, a copy of template (NULL: an empty one): its name in
 * db, its URL returned (malloc'd), and HUDDLE_STORE set to it, so
 * hd_store_open uses it. */
static char *
db_create(char db[64], const char *template)
{
	static int seq;
	PGconn *c = pg_connect(admin_url);
	char sql[200], *url;

	snprintf(db, 64, "huddle_bench_%d_%d", (int)getpid(), ++seq);
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", db);
	pg_do(c, sql);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s%s%s", db,
	    template != NULL ? " TEMPLATE " : "",
	    template != NULL ? template : "");
	pg_do(c, sql);
	PQfinish(c);
	if ((url = url_with_db(admin_url, db)) == NULL ||
	    setenv("HUDDLE_STORE", url, 1) != 0)
		bench_die("out of memory", NULL);
	return url;
}

static void
db_drop(const char *db)
{
	PGconn *c = pg_connect(admin_url);
	char sql[128];

	snprintf(
	    sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
	pg_do(c, sql);
	PQfinish(c);
}

static char *
fresh_home(void)
{
	char *dir = strdup("/tmp/huddle-bench-pg-XXXXXX");

	if (dir == NULL || mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);
	return dir;
}

/* --- the libpq baselines: prepared statements, run one after another ---- */

/* A baseline connection with its statements prepared. */
struct raw {
	PGconn *c;
	unsigned char pool[BENCH_RAW_POOL];
	size_t used;
	char begin[160], commit[160];
};

static void
raw_prepare(struct raw *r, const char *name, const char *sql)
{
	PGresult *res = PQprepare(r->c, name, sql, 0, NULL);

	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "bench_pg: prepare %s: %s", name,
		    PQerrorMessage(r->c));
		exit(1);
	}
	PQclear(res);
}

/* Run prepared `name` with n text parameters; the result (the caller
 * clears it) or death naming the statement. */
static PGresult *
raw_exec(struct raw *r, const char *name, int n, const char *const *v)
{
	PGresult *res = PQexecPrepared(r->c, name, n, v, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "bench_pg: %s: %s", name, PQerrorMessage(r->c));
		exit(1);
	}
	return res;
}

static void
raw_run(struct raw *r, const char *name, int n, const char *const *v)
{
	PQclear(raw_exec(r, name, n, v));
}

/* One round trip of several statements (BEGIN ..., ... COMMIT). */
static void
raw_multi(struct raw *r, const char *sql)
{
	pg_do(r->c, sql);
}

/* The statements hd_room_post and hd_board_auto_claim send, as
 * PostgreSQL's log shows them (pg.c's translation of the modules' SQL). */
static const char sql_member[] =
    "SELECT 1 FROM agents WHERE team_id = $1 AND id = $2";
static const char sql_seq_up[] =
    "INSERT INTO room_seqs(team_id, seq) VALUES ($1, 1) ON CONFLICT(team_id)"
    " DO UPDATE SET seq = room_seqs.seq + 1";
static const char sql_seq_get[] =
    "SELECT seq FROM room_seqs WHERE team_id = $1";
static const char sql_seq_lean[] =
    "INSERT INTO room_seqs(team_id, seq) VALUES ($1, 1) ON CONFLICT(team_id)"
    " DO UPDATE SET seq = room_seqs.seq + 1 RETURNING seq";
static const char sql_post[] =
    "INSERT INTO team_chat(id, room_id, team_id, author_agent_id, body, kind,"
    " created_at, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
static const char sql_event[] =
    "INSERT INTO events(id, ts, kind, team_id, task_id, agent_id, data)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq";
static const char sql_touch[] =
    "UPDATE agents SET last_active_at = $3 WHERE id = $1 AND team_id = $2"
    " AND (last_active_at IS NULL OR last_active_at <= $4)";
static const char sql_claim[] =
    "UPDATE tasks SET status = 'claimed', owner = $2, claimed_at = $3,"
    " updated_at = $3 WHERE id = (SELECT t.id FROM tasks t WHERE"
    " t.team_id = $1 AND t.status = 'pending' AND t.owner IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM task_verify v"
    "   WHERE v.task_id = t.id AND v.critic = $2)"
    " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks p"
    "   ON p.id = d.depends_on WHERE d.task_id = t.id"
    "   AND p.status <> 'completed')"
    " ORDER BY t.priority DESC, t.id LIMIT 1) AND status = 'pending'"
    " AND owner IS NULL AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN"
    " tasks p ON p.id = d.depends_on WHERE d.task_id = tasks.id"
    " AND p.status <> 'completed') RETURNING id, team_id, subject,"
    " description, active_form, status, owner, priority, metadata, result,"
    " created_by, created_at, claimed_at, started_at, completed_at,"
    " updated_at, parent_id";
static const char sql_claim_lean[] =
    "UPDATE tasks SET status = 'claimed', owner = $2, claimed_at = $3,"
    " updated_at = $3 WHERE id = (SELECT t.id FROM tasks t WHERE"
    " t.team_id = $1 AND t.status = 'pending' AND t.owner IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks p"
    "   ON p.id = d.depends_on WHERE d.task_id = t.id"
    "   AND p.status <> 'completed')"
    " ORDER BY t.priority DESC, t.id LIMIT 1) AND status = 'pending'"
    " AND owner IS NULL RETURNING id, subject";
static const char sql_deps[] =
    "SELECT d.depends_on, p.status FROM task_deps d JOIN tasks p ON"
    " p.id = d.depends_on WHERE d.task_id = $1 ORDER BY d.depends_on";
static const char sql_children[] =
    "SELECT id FROM tasks WHERE parent_id = $1 ORDER BY id";
static const char sql_team[] = "SELECT 1 FROM teams WHERE id = $1";

/* A connection to url with the baseline's statements prepared; lean
 * picks the lean transaction's BEGIN and COMMIT. */
static void
raw_open(struct raw *r, const char *url, int lean)
{
	memset(r, 0, sizeof(*r));
	r->c = pg_connect(url);
	r->used = sizeof(r->pool);
	raw_prepare(r, "member", sql_member);
	raw_prepare(r, "seq_up", sql_seq_up);
	raw_prepare(r, "seq_get", sql_seq_get);
	raw_prepare(r, "seq_lean", sql_seq_lean);
	raw_prepare(r, "post", sql_post);
	raw_prepare(r, "event", sql_event);
	raw_prepare(r, "touch", sql_touch);
	raw_prepare(r, "claim", sql_claim);
	raw_prepare(r, "claim_lean", sql_claim_lean);
	raw_prepare(r, "deps", sql_deps);
	raw_prepare(r, "children", sql_children);
	raw_prepare(r, "team", sql_team);
	raw_prepare(r, "sp", "SAVEPOINT hd_sp"); /* pg.c prepares these too */
	raw_prepare(r, "release", "RELEASE hd_sp");
	if (lean) {
		snprintf(r->begin, sizeof(r->begin),
		    "BEGIN; SELECT pg_advisory_xact_lock(%d)", PG_WRITE_KEY);
		snprintf(r->commit, sizeof(r->commit),
		    "NOTIFY huddle_change, "
		    "'%d'; COMMIT",
		    PQbackendPID(r->c));
	} else {
		snprintf(r->begin, sizeof(r->begin),
		    "BEGIN; SET LOCAL lock_timeout = %d; "
		    "SELECT pg_advisory_xact_lock(%d)",
		    BUSY_MS, PG_WRITE_KEY);
		snprintf(r->commit, sizeof(r->commit),
		    "UPDATE huddle_data_version SET v = v + 1; "
		    "NOTIFY huddle_change, '%d'; COMMIT",
		    PQbackendPID(r->c));
	}
}

/* The room line or post of the baseline, inside its transaction: the
 * counter, the post row, its event. Returns the post's seq. */
static long long
raw_room_line(struct raw *r, int lean, const char *author, const char *kind,
    const char *body, const char *event_agent)
{
	char id[48], ev[48], now[24], seqs[24], data[200];
	const char *v[8];
	PGresult *res;
	long long seq;

	v[0] = "b";
	if (lean) {
		res = raw_exec(r, "seq_lean", 1, v);
	} else {
		raw_run(r, "seq_up", 1, v);
		res = raw_exec(r, "seq_get", 1, v);
	}
	seq = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	bench_raw_uuid(id, r->pool, &r->used);
	snprintf(now, sizeof(now), "%lld", (long long)hd_now_ms());
	snprintf(seqs, sizeof(seqs), "%lld", seq);
	v[0] = id;
	v[1] = "team:b";
	v[2] = "b";
	v[3] = author;
	v[4] = body;
	v[5] = kind;
	v[6] = now;
	v[7] = seqs;
	raw_run(r, "post", 8, v);
	bench_raw_uuid(ev, r->pool, &r->used);
	snprintf(data, sizeof(data),
	    "{\"seq\":%lld,\"roomId\":\"team:b\",\"author\":\"%s\","
	    "\"kind\":\"%s\"}",
	    seq, author, kind);
	v[0] = ev;
	v[1] = now;
	v[2] = "team_chat_post";
	v[3] = "b";
	v[4] = NULL;
	v[5] = event_agent;
	v[6] = data;
	raw_run(r, "event", 7, v);
	return seq;
}

/* The author's activity, as hd_agent_touch sends it with every post. */
static void
raw_touch(struct raw *r, const char *agent)
{
	char now[24], before[24];
	const char *v[4];
	int64_t t = hd_now_ms();

	snprintf(now, sizeof(now), "%lld", (long long)t);
	snprintf(before, sizeof(before), "%lld", (long long)(t - 1000));
	v[0] = agent;
	v[1] = "b";
	v[2] = now;
	v[3] = before;
	raw_run(r, "touch", 4, v);
}

static void
raw_post(struct raw *r, int lean, const char *author, const char *body)
{
	const char *v[2] = {"b", author};

	raw_multi(r, r->begin);
	if (!lean) {
		PGresult *res = raw_exec(r, "member", 2, v);

		if (PQntuples(res) != 1)
			bench_die("baseline: the author is no member", NULL);
		PQclear(res);
	}
	raw_room_line(r, lean, author, "peer", body, author);
	if (!lean)
		raw_touch(r, author);
	raw_multi(r, r->commit);
}

/* One claim; the task's id, 0 when none is left. */
static long long
raw_claim(struct raw *r, int lean, const char *agent)
{
	char now[24], ev[48], data[128], body[256], ids[24];
	const char *v[7];
	PGresult *res;
	long long id;

	raw_multi(r, r->begin);
	v[0] = "b";
	v[1] = agent;
	if (!lean) {
		res = raw_exec(r, "member", 2, v);
		if (PQntuples(res) != 1)
			bench_die("baseline: the claimer is no member", NULL);
		PQclear(res);
	}
	snprintf(now, sizeof(now), "%lld", (long long)hd_now_ms());
	v[2] = now;
	res = raw_exec(r, lean ? "claim_lean" : "claim", 3, v);
	if (PQntuples(res) == 0) {
		PQclear(res);
		raw_multi(r, "ROLLBACK");
		return 0;
	}
	id = atoll(PQgetvalue(res, 0, 0));
	snprintf(body, sizeof(body), "Task #%lld \"%s\" claimed by %s.", id,
	    PQgetvalue(res, 0, lean ? 1 : 2), agent);
	PQclear(res);
	snprintf(ids, sizeof(ids), "%lld", id);
	if (!lean) {
		v[0] = ids;
		raw_run(r, "deps", 1, v);
		raw_run(r, "children", 1, v);
	}
	bench_raw_uuid(ev, r->pool, &r->used);
	snprintf(data, sizeof(data),
	    "{\"owner\":\"%s\",\"by\":\"%s\",\"auto\":true}", agent, agent);
	v[0] = ev;
	v[1] = now;
	v[2] = "task_claimed";
	v[3] = "b";
	v[4] = ids;
	v[5] = agent;
	v[6] = data;
	raw_run(r, "event", 7, v);
	if (!lean) {
		raw_run(r, "sp", 0, NULL);
		v[0] = "b";
		raw_run(r, "team", 1, v);
	}
	raw_room_line(r, lean, "huddle", "system", body, NULL);
	if (!lean) {
		raw_run(r, "release", 0, NULL);
		raw_touch(r, agent);
	}
	raw_multi(r, r->commit);
	return id;
}

/* --- the rounds ---------------------------------------------------------- */

enum { SIDE_HUDDLE, SIDE_RAW, SIDE_LEAN, NSIDES };
static const char *const side_names[] = {"huddle", "baseline", "lean"};

/* What a round's threads share. */
struct round {
	int side;
	const char *home, *url;
	int per;             /* posts per thread */
	_Atomic int ready;   /* threads connected */
	_Atomic int go;      /* the start line */
	_Atomic int *claims; /* per task id: how often it was claimed */
};

struct worker {
	struct round *rd;
	int idx;
	pthread_t t;
};

static void
wait_go(struct round *rd)
{
	atomic_fetch_add(&rd->ready, 1);
	while (!atomic_load(&rd->go))
		hd_sleep_us(100);
}

static void *
post_thread(void *arg)
{
	struct worker *w = arg;
	struct round *rd = w->rd;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	struct raw r;
	char author[16], body[64];
	int i;

	snprintf(author, sizeof(author), "a%d", w->idx);
	if (rd->side == SIDE_HUDDLE) {
		if (hd_store_open(&st, rd->home, &err) < 0)
			bench_die("open", &err);
		hd_store_set_busy_budget(st, BUSY_MS);
	} else
		raw_open(&r, rd->url, rd->side == SIDE_LEAN);
	wait_go(rd);
	for (i = 0; i < rd->per; i++) {
		snprintf(body, sizeof(body), "post %d from %s", i, author);
		if (rd->side != SIDE_HUDDLE)
			raw_post(&r, rd->side == SIDE_LEAN, author, body);
		else if (hd_room_post(
			     NULL, st, "b", "peer", author, body, &err) < 0)
			bench_die("hd_room_post", &err);
	}
	if (st != NULL)
		hd_store_close(st);
	else
		PQfinish(r.c);
	return NULL;
}

static void *
claim_thread(void *arg)
{
	struct worker *w = arg;
	struct round *rd = w->rd;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	struct raw r;
	char agent[16];
	long long id;
	int rc;

	snprintf(agent, sizeof(agent), "a%d", w->idx);
	if (rd->side == SIDE_HUDDLE) {
		if (hd_store_open(&st, rd->home, &err) < 0)
			bench_die("open", &err);
		hd_store_set_busy_budget(st, BUSY_MS);
	} else
		raw_open(&r, rd->url, rd->side == SIDE_LEAN);
	wait_go(rd);
	for (;;) {
		if (rd->side != SIDE_HUDDLE) {
			if ((id = raw_claim(
				 &r, rd->side == SIDE_LEAN, agent)) == 0)
				break;
		} else {
			rc = hd_board_auto_claim(&t, st, "b", agent, &err);
			if (rc == HD_ENOTFOUND)
				break;
			if (rc < 0)
				bench_die("hd_board_auto_claim", &err);
			id = t->id;
			hd_task_free(t);
			t = NULL;
		}
		if (id < 1 || id > ntasks)
			bench_die("a claim returned an unknown task", NULL);
		atomic_fetch_add(&rd->claims[id], 1);
	}
	if (st != NULL)
		hd_store_close(st);
	else
		PQfinish(r.c);
	return NULL;
}

static int
make_tasks_txn(hd_store *st, void *payload, hd_err *err)
{
	hd_task_spec spec = {0};
	char subject[32];
	int i, rc;

	(void)payload;
	spec.team = "b";
	spec.subject = subject;
	for (i = 0; i < ntasks; i++) {
		snprintf(subject, sizeof(subject), "task %d", i + 1);
		spec.priority = i % 5;
		if ((rc = hd_board_create(NULL, st, &spec, err)) < 0)
			return rc;
	}
	return 0;
}

/* Each task claimed once, none pending in the database. */
static void
claims_verify(struct round *rd)
{
	PGconn *c = pg_connect(rd->url);
	PGresult *res;
	int i, doubles = 0, missed = 0;
	long pending;

	for (i = 1; i <= ntasks; i++) {
		doubles += rd->claims[i] > 1;
		missed += rd->claims[i] == 0;
	}
	res = PQexec(c, "SELECT COUNT(*) FROM tasks WHERE status = 'pending'");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bench_die("verify: count pending", NULL);
	pending = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(c);
	if (doubles || missed || pending) {
		fprintf(stderr,
		    "bench_pg: claims (%s): %d double claims, %d missed, %ld "
		    "left pending\n",
		    side_names[rd->side], doubles, missed, pending);
		exit(1);
	}
}

/* The database every round of a kind starts from, made once by huddle
 * (team b, members a0..a(P-1), a0 its leader, and for claims T ready
 * tasks made by hd_board_create): each round copies it (CREATE DATABASE
 * ... TEMPLATE), so both sides start from the very same rows and no round
 * pays for the setup. Its name in db. */
static void
template_make(char db[64], int claims)
{
	char *url, *home = fresh_home();
	hd_store *st;
	hd_err err = HD_ERR_INIT;

	url = db_create(db, NULL);
	st = bench_team_home(home, "b", "a", nthreads, 1);
	if (claims && hd_store_write(st, make_tasks_txn, NULL, &err) < 0)
		bench_die("tasks", &err);
	hd_store_close(st); /* a template has no connections */
	free(url);
	bench_rm_rf(home);
	free(home);
}

/* One round on a copy of template: nthreads threads post or claim;
 * returns posts or claims per second. */
static double
round_once(int side, int claims, const char *template)
{
	struct worker w[MAX_THREADS];
	struct round rd = {0};
	char db[64], *url, *home = fresh_home();
	int64_t t0, t1;
	int i, done;

	url = db_create(db, template);
	rd.side = side;
	rd.home = home;
	rd.url = url;
	rd.per = nposts / nthreads;
	if (claims && (rd.claims = calloc(
			   (size_t)ntasks + 1, sizeof(*rd.claims))) == NULL)
		bench_die("out of memory", NULL);
	for (i = 0; i < nthreads; i++) {
		w[i].rd = &rd;
		w[i].idx = i;
		if (pthread_create(&w[i].t, NULL,
			claims ? claim_thread : post_thread, &w[i]) != 0)
			bench_die("pthread_create", NULL);
	}
	while (atomic_load(&rd.ready) < nthreads)
		hd_sleep_us(1000);
	t0 = hd_mono_us();
	atomic_store(&rd.go, 1);
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].t, NULL);
	t1 = hd_mono_us();
	done = claims ? ntasks : rd.per * nthreads;
	if (claims)
		claims_verify(&rd);
	free(rd.claims);
	db_drop(db);
	free(url);
	bench_rm_rf(home);
	free(home);
	return (double)done * 1e6 / (double)(t1 - t0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
bench_rounds(int claims)
{
	double v[NSIDES][64], fig[NSIDES];
	const char *unit = claims ? "claims/s" : "posts/s";
	char name[48], template[64];
	int r, k, side;

	template_make(template, claims);
	for (r = 0; r < nrounds; r++)
		for (k = 0; k < NSIDES; k++) {
			side = (r + k) % NSIDES; /* rotate, against drift */
			v[side][r] = round_once(side, claims, template);
			printf("# %s round %d %s: %.0f %s\n",
			    claims ? "claim" : "room_post", r + 1,
			    side_names[side], v[side][r], unit);
			fflush(stdout);
		}
	db_drop(template);
	for (side = 0; side < NSIDES; side++) {
		qsort(v[side], (size_t)nrounds, sizeof(double), cmp_double);
		/* posts: the best round (bench-room.c); claims: the median
		 * (bench-claim.c) */
		fig[side] =
		    claims ? v[side][nrounds / 2] : v[side][nrounds - 1];
	}
	snprintf(name, sizeof(name), "pg_%s_%dthr",
	    claims ? "claim" : "room_post", nthreads);
	printf("%s: %.0f %s | baseline %.0f %s | ratio %.2f\n", name,
	    fig[SIDE_HUDDLE], unit, fig[SIDE_RAW], unit,
	    fig[SIDE_HUDDLE] / fig[SIDE_RAW]);
	printf("%s_vs_lean: %.0f %s | baseline %.0f %s | ratio %.2f\n", name,
	    fig[SIDE_HUDDLE], unit, fig[SIDE_LEAN], unit,
	    fig[SIDE_HUDDLE] / fig[SIDE_LEAN]);
	fflush(stdout);
}

/* --- cross-node post -> SSE --------------------------------------------- */

/* n posts through h, each after the previous one arrived on the stream of
 * port; lat[i] = its arrival - just before its request, in us. */
static void
measure(CURL *h, int port, int n, int64_t *lat)
{
	bench_stream s;
	char head[256];
	int i;

	snprintf(head, sizeof(head),
	    "GET /api/events?team=b HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n"
	    "Accept: text/event-stream\r\n",
	    port);
	bench_stream_open(&s, port, head, NULL, "event: team_chat_post", n);
	hd_sleep_us(200000); /* the stream is registered */
	for (i = 0; i < n; i++) {
		int64_t t0 = hd_mono_us();
		long code = 0;

		if (curl_easy_perform(h) != CURLE_OK ||
		    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) !=
			CURLE_OK ||
		    code < 200 || code > 299) {
			fprintf(
			    stderr, "bench_pg: REST post: HTTP %ld\n", code);
			exit(1);
		}
		lat[i] = bench_stream_wait(&s, i, t0, "event") - t0;
	}
	bench_stream_close(&s);
}

/* Start `bin serve` on home; its port. Its own pid is returned in *pid. */
static int
node_start(const char *bin, const char *home, pid_t *pid)
{
	int port = bench_start_server(bin, home);

	if (port <= 0) {
		fprintf(stderr,
		    "bench_pg: cannot start %s serve (HUDDLE_BIN)\n", bin);
		exit(1);
	}
	*pid = bench_server_pid;
	return port;
}

static void
node_stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

/* At exit, a failure's too: no serve process and no cluster of ours
 * outlives the benchmark. */
static void
cleanup(void)
{
	node_stop(&nodes[0]);
	node_stop(&nodes[1]);
	cluster_stop();
}

static void
bench_sse(void)
{
	const char *bin =
	    getenv("HUDDLE_BIN") ? getenv("HUDDLE_BIN") : "./huddle";
	char db[64], *url, *home_a = fresh_home(), *home_b = fresh_home();
	char post_url[128];
	int64_t *cross, *base;
	struct curl_slist *hdrs;
	int port_a, port_b;
	CURL *h;

	if (access(bin, X_OK) != 0) {
		printf("# pg_sse_cross_node: skipped: HUDDLE_BIN=%s is not an "
		       "executable\n",
		    bin);
		return;
	}
	url = db_create(db, NULL);
	hd_store_close(bench_team_home(home_a, "b", "a", 2, 1));
	port_a = node_start(bin, home_a, &nodes[0]);
	port_b = node_start(bin, home_b, &nodes[1]);
	cross = calloc((size_t)nlat, sizeof(*cross));
	base = calloc(2 * (size_t)nlat, sizeof(*base));
	if (cross == NULL || base == NULL)
		bench_die("out of memory", NULL);
	snprintf(post_url, sizeof(post_url),
	    "http://127.0.0.1:%d/api/teams/b/posts", port_a);
	h = curl_easy_init();
	hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_URL, post_url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(
	    h, CURLOPT_POSTFIELDS, "{\"text\":\"cross-node ping\"}");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_discard);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	measure(h, port_a, nlat, base);  /* one node */
	measure(h, port_b, nlat, cross); /* A's post, B's stream */
	measure(h, port_a, nlat, base + nlat);
	qsort(cross, (size_t)nlat, sizeof(*cross), bench_cmp_i64);
	qsort(base, 2 * (size_t)nlat, sizeof(*base), bench_cmp_i64);
	printf("pg_sse_cross_node_p50: %lld us | baseline %lld us | ratio "
	       "%.2f\n",
	    (long long)cross[nlat / 2], (long long)base[nlat],
	    (double)cross[nlat / 2] / (double)base[nlat]);
	printf("pg_sse_cross_node_p99: %lld us | baseline %lld us | ratio "
	       "%.2f\n",
	    (long long)cross[nlat * 99 / 100],
	    (long long)base[2 * nlat * 99 / 100],
	    (double)cross[nlat * 99 / 100] / (double)base[2 * nlat * 99 / 100]);
	printf("# pg_sse_cross_node: %d posts through node A's REST to node "
	       "B's GET /api/events; baseline: node A's own stream, %d posts "
	       "before and %d after; max %lld us\n",
	    nlat, nlat, nlat, (long long)cross[nlat - 1]);
	fflush(stdout);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	node_stop(&nodes[0]);
	node_stop(&nodes[1]);
	free(cross);
	free(base);
	db_drop(db);
	free(url);
	bench_rm_rf(home_a);
	bench_rm_rf(home_b);
	free(home_a);
	free(home_b);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"posts", required_argument, NULL, 'p'},
	    {"tasks", required_argument, NULL, 't'},
	    {"threads", required_argument, NULL, 'P'},
	    {"latency", required_argument, NULL, 'l'},
	    {"rounds", required_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	char why[1200];
	int ch;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': nposts = atoi(optarg); break;
		case 't': ntasks = atoi(optarg); break;
		case 'P': nthreads = atoi(optarg); break;
		case 'l': nlat = atoi(optarg); break;
		case 'r': nrounds = atoi(optarg); break;
		default:
			fprintf(stderr,
			    "usage: bench_pg [--posts N] [--tasks T] "
			    "[--threads P] [--latency N] [--rounds R]\n");
			return 2;
		}
	}
	if (nposts < 0 || ntasks < 0 || nthreads < 1 ||
	    nthreads > MAX_THREADS || (nposts > 0 && nposts < nthreads) ||
	    nlat < 0 || (nlat > 0 && nlat < 100) || nrounds < 1 ||
	    nrounds > 64) {
		fprintf(stderr,
		    "bench_pg: bad arguments: --threads 1..%d, --posts 0 or at "
		    "least one per thread, --latency 0 or at least 100, "
		    "--rounds "
		    "1..64\n",
		    MAX_THREADS);
		return 2;
	}
	if ((admin_url = cluster_url(why, sizeof(why))) == NULL) {
		printf("# pg: skipped: %s\n", why);
		return 0;
	}
	atexit(cleanup);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	hd_log_set_level(HD_LOG_WARN);
	printf("# pg: %d threads (own connections), %d posts and %d tasks per "
	       "round, %d rounds per side; cluster %s\n",
	    nthreads, nposts, ntasks, nrounds,
	    started_cluster ? "of tests/pg/cluster.sh (fsync off)"
			    : "from HUDDLE_BENCH_PG");
	fflush(stdout);
	if (nposts > 0)
		bench_rounds(0);
	if (ntasks > 0)
		bench_rounds(1);
	if (nlat > 0)
		bench_sse();
	curl_global_cleanup();
	free(admin_url);
	return 0;
}
