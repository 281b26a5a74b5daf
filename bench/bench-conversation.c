/*
 * bench-conversation.c -- fan-out conversations through the engine
 * (SPEC 7): a leader whose reply mentions three members, each member
 * answering, so 4 turns per conversation; N conversations are started at
 * once and the clock stops when the last completes. Everything a real
 * conversation does is in the figure: the claims and replies in SQLite,
 * the room posts and events, agent statuses, the transcript files.
 *
 * conversation_scripted: conversations/s with scripted agents (the
 *   engine's own cost), against bare SQLite commits (the same pragmas,
 *   one small insert each) divided by 6, the fewest transactions a
 *   fan-out conversation takes (start, four replies, completion): how
 *   close the engine comes to its transactional floor.
 * conversation_exec: agent invocations/s with exec agents that are a
 *   trivial shell script, against the raw cost of spawning that script
 *   (posix_spawn + pipes + write + read to EOF + waitpid) the same number
 *   of times, one after another, in the same run, rounds interleaved.
 *   Target: ratio >= 0.9 (the Node.js reference reaches about 0.6 of its
 *   spawn ceiling).
 * conversation_exec_parallel: the same engine figure against 4 spawners
 *   at once (one per agent, as the engine runs them): the stricter
 *   ceiling of a machine whose cores all spawn.
 *
 * usage: bench_conversation [SCRIPTED_CONVERSATIONS] [EXEC_CONVERSATIONS]
 *        (default 400 and 150)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/conversation.h>
#include <huddle/log.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "bench-raw.h"
#include "bench.h"

#define ROUNDS 3
#define AGENTS 4
#define LEAD_REPLY "Go. [@a: part one] [@b: part two] [@c: part three]"

static const char *prompt = "[Message from teammate @lead]:\nGo.\n\n------\n\n"
			    "Directed to you:\npart one";

static void
rm_home(const char *dir)
{
	if (bench_rm_rf(dir) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
}

/* A fresh home with team "bench": lead + a, b, c on runtime. */
static hd_store *
setup(char *dir, size_t dirlen, const char *runtime, const char *lead_cfg,
    const char *member_cfg)
{
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	const char *ids[AGENTS] = {"lead", "a", "b", "c"};
	json_t *cfg;
	int i;

	snprintf(dir, dirlen, "/tmp/huddle-bench-conv-XXXXXX");
	if (mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);
	if (hd_store_open(&st, dir, &err) < 0)
		bench_die("open", &err);
	ts.id = "bench";
	if (hd_team_create(NULL, st, &ts, &err) < 0)
		bench_die("team", &err);
	for (i = 0; i < AGENTS; i++) {
		memset(&as, 0, sizeof(as));
		as.id = ids[i];
		as.team = "bench";
		as.leader = i == 0;
		as.runtime = runtime;
		cfg = json_loads(i == 0 ? lead_cfg : member_cfg, 0, NULL);
		as.runtime_config = cfg;
		if (cfg == NULL || hd_agent_add(NULL, st, &as, &err) < 0)
			bench_die("agent", &err);
		json_decref(cfg);
	}
	return st;
}

/* Run n fan-out conversations at once; microseconds until all are done. */
static int64_t
run_conversations(hd_store *st, const char *home, long n)
{
	hd_conversation_engine_config cfg;
	hd_conversation_engine *e = NULL;
	hd_conversation_spec spec = {"bench", "start", "bench"};
	hd_conversation *c = NULL;
	hd_err err = HD_ERR_INIT;
	char(*ids)[37] = calloc((size_t)n, 37);
	int64_t t0, t;
	long i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.home = home;
	if (ids == NULL || hd_conversation_engine_start(&e, &cfg, &err) < 0)
		bench_die("engine", &err);
	t0 = hd_mono_us();
	for (i = 0; i < n; i++)
		if (hd_conversation_start(ids[i], e, st, &spec, &err) < 0)
			bench_die("start", &err);
	for (i = 0; i < n; i++)
		if (hd_conversation_wait(e, st, ids[i], 600000, &err) < 0)
			bench_die("wait", &err);
	t = hd_mono_us() - t0;
	hd_conversation_engine_stop(e);
	/* a sanity check: every conversation has its 4 replies */
	for (i = 0; i < n; i++) {
		if (hd_conversation_get(&c, st, ids[i], &err) < 0)
			bench_die("get", &err);
		if (c->nreplies != AGENTS ||
		    strcmp(c->status, "completed") != 0)
			bench_die("a conversation without its 4 replies", NULL);
		hd_conversation_free(c);
	}
	free(ids);
	return t;
}

/* Bare SQLite: n commits of one small insert, same pragmas; commits/s. */
static double
raw_commits(long n)
{
	char dir[64], path[128];
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t t0;
	long i;

	snprintf(dir, sizeof(dir), "/tmp/huddle-bench-raw-XXXXXX");
	if (mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);
	snprintf(path, sizeof(path), "%s/raw.db", dir);
	db = bench_raw_open(path,
	    "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL,"
	    " at INTEGER NOT NULL);",
	    "INSERT INTO t(body, at) VALUES (?, ?)", &s);
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		sqlite3_bind_text(s, 1, "done", -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, hd_now_ms());
		if (sqlite3_step(s) != SQLITE_DONE)
			bench_die("raw insert", NULL);
		sqlite3_reset(s);
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	}
	t0 = hd_mono_us() - t0;
	sqlite3_finalize(s);
	sqlite3_close(db);
	rm_home(dir);
	return (double)n / ((double)t0 / 1e6);
}

static double
bench_scripted(long n, double *base_rate)
{
	hd_store *st;
	char dir[64];
	int64_t lib = 0;
	double raw = 0;
	long per = n / ROUNDS > 0 ? n / ROUNDS : 1;
	int round;

	st = setup(dir, sizeof(dir), "scripted",
	    "{\"default\": \"" LEAD_REPLY "\"}", "{\"default\": \"done\"}");
	run_conversations(st, dir, per / 4 > 0 ? per / 4 : 1); /* warm up */
	for (round = 0; round < ROUNDS; round++) {
		raw += raw_commits(per * 6);
		lib += run_conversations(st, dir, per);
	}
	hd_store_close(st);
	rm_home(dir);
	*base_rate = raw / ROUNDS / 6;
	return (double)(per * ROUNDS) / ((double)lib / 1e6);
}

struct spawner {
	pthread_t th;
	const char *path;
	long n;
};

static void *
spawner_main(void *arg)
{
	struct spawner *s = arg;
	long i;

	for (i = 0; i < s->n; i++)
		bench_raw_turn(s->path, prompt);
	return NULL;
}

/* n invocations of path on AGENTS threads; microseconds. */
static int64_t
raw_parallel(const char *path, long n)
{
	struct spawner sp[AGENTS];
	int64_t t0 = hd_mono_us();
	int k;

	for (k = 0; k < AGENTS; k++) {
		sp[k].path = path;
		sp[k].n = n / AGENTS;
		if (pthread_create(&sp[k].th, NULL, spawner_main, &sp[k]) != 0)
			bench_die("pthread_create", NULL);
	}
	for (k = 0; k < AGENTS; k++)
		pthread_join(sp[k].th, NULL);
	return hd_mono_us() - t0;
}

static double
bench_exec(long n, double *raw_rate, double *par_rate)
{
	hd_store *st;
	char dir[64], lead[128], member[128], cfg_lead[256], cfg_member[256];
	int64_t lib = 0, par = 0, seq = 0, t0;
	long per = n / ROUNDS > 0 ? n / ROUNDS : 1, i;
	int round;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/huddle-bench-scripts-XXXXXX");
	if (mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);
	snprintf(lead, sizeof(lead), "%s/lead.sh", dir);
	snprintf(member, sizeof(member), "%s/member.sh", dir);
	if ((f = fopen(lead, "w")) == NULL)
		bench_die("script", NULL);
	fputs("#!/bin/sh\ncat >/dev/null\necho '" LEAD_REPLY "'\n", f);
	fclose(f);
	if ((f = fopen(member, "w")) == NULL)
		bench_die("script", NULL);
	fputs("#!/bin/sh\ncat >/dev/null\necho done\n", f);
	fclose(f);
	chmod(lead, 0755);
	chmod(member, 0755);
	snprintf(cfg_lead, sizeof(cfg_lead), "{\"command\": [\"%s\"]}", lead);
	snprintf(
	    cfg_member, sizeof(cfg_member), "{\"command\": [\"%s\"]}", member);

	for (i = 0; i < 10; i++) /* warm the page cache and the shell */
		bench_raw_turn(member, prompt);
	for (round = 0; round < ROUNDS; round++) {
		char home[64];

		t0 = hd_mono_us();
		for (i = 0; i < per * AGENTS; i++)
			bench_raw_turn(member, prompt);
		seq += hd_mono_us() - t0;
		par += raw_parallel(member, per * AGENTS);
		st = setup(home, sizeof(home), "exec", cfg_lead, cfg_member);
		lib += run_conversations(st, home, per);
		hd_store_close(st);
		rm_home(home);
	}
	unlink(lead);
	unlink(member);
	rmdir(dir);
	*raw_rate = (double)(per * AGENTS * ROUNDS) / ((double)seq / 1e6);
	*par_rate = (double)(per * AGENTS * ROUNDS) / ((double)par / 1e6);
	return (double)(per * AGENTS * ROUNDS) / ((double)lib / 1e6);
}

int
main(int argc, char **argv)
{
	long nscripted = argc > 1 ? atol(argv[1]) : 400;
	long nexec = argc > 2 ? atol(argv[2]) : 150;
	double lib, base, par;

	if (nscripted < 1 || nexec < 1) {
		fprintf(stderr,
		    "usage: bench_conversation "
		    "[SCRIPTED_CONVERSATIONS] [EXEC_CONVERSATIONS]\n");
		return 2;
	}
	hd_log_set_level(HD_LOG_WARN);
	lib = bench_scripted(nscripted, &base);
	printf("conversation_scripted: %.0f conversations/s | baseline %.0f "
	       "conversations/s | ratio %.2f\n",
	    lib, base, lib / base);
	fflush(stdout);
	lib = bench_exec(nexec, &base, &par);
	printf("conversation_exec: %.0f invocations/s | baseline %.0f "
	       "invocations/s | ratio %.2f\n",
	    lib, base, lib / base);
	printf("conversation_exec_parallel: %.0f invocations/s | baseline %.0f "
	       "invocations/s | ratio %.2f\n",
	    lib, par, lib / par);
	return 0;
}
