/*
 * bench-supervisor.c -- autorun (supervisor.h): how soon a woken agent's
 * turn starts, and what idle agents cost.
 *
 * supervisor_wake: 20 exec agents in one autorun team, the supervisor
 *   running in this process. Each round sends one message to every agent
 *   (20 commits, one after another, from this thread's own connection);
 *   each agent's command writes the wall clock when it starts. A sample
 *   is that time minus the moment just before its message was sent: the
 *   store's notification, the scan, the take (the prompt, the mail
 *   delivered), the runtime's spawn. Baseline, in the same run: spawning
 *   the same command directly (posix_spawn), 20 at once a round as the
 *   supervisor's 20 turns are, each sample from just before its spawn to
 *   the same written clock. p50 and p99 of both; the ratio compares p50s.
 * supervisor_idle_cpu: the CPU this process uses over 3 s with the
 *   supervisor running and all 20 agents idle, less the same with the
 *   team's autorun off (nothing watched: the baseline), per agent per
 *   second. Target: 0 -- nothing polls per agent; what the baseline shows
 *   is the store notification's own safety net, once per 250 ms whatever
 *   the number of agents.
 *
 * usage: bench_supervisor [ROUNDS] [AGENTS] (default 10 and 20)
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <huddle/agent.h>
#include <huddle/autorun.h>
#include <huddle/mailbox.h>
#include <huddle/supervisor.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "bench.h"

#include "store/store.h"

#define AGENTS_MAX 64
#define IDLE_S 3
#define SCRIPT                                                                 \
	"date +%s%N >> \"$BENCH_STAMPS/$HUDDLE_AGENT\"; cat >/dev/null; "      \
	"echo ok"

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double
pctl_ms(int64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);

	qsort(v, n, sizeof(*v), bench_cmp_i64);
	return (double)v[i] / 1e6;
}

/* The last stamp in path, or 0 when it has fewer than want lines. */
static int64_t
stamp_at(const char *path, int want)
{
	char line[64];
	long long v = 0;
	int n = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		v = strtoll(line, NULL, 10);
		n++;
	}
	fclose(f);
	return n >= want ? (int64_t)v : 0;
}

static int64_t
turns_done(hd_store *st)
{
	hd_stmt *s;
	int64_t n = 0;

	if (hd_store_prepare(st, &s,
		"SELECT COUNT(*) FROM autorun_turns WHERE status = 'done'",
		NULL) < 0)
		return -1;
	if (hd_stmt_step(s) == HD_ROW)
		n = hd_stmt_int(s, 0);
	hd_store_reset(s);
	return n;
}

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	int AGENTS = argc > 2 ? atoi(argv[2]) : 20;
	char dir[] = "/tmp/huddle-bench-sv-XXXXXX", stamps[600], path[700];
	char id[16];
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_autorun_spec ar = HD_AUTORUN_SPEC_INIT;
	hd_supervisor_config cfg;
	hd_supervisor *sv = NULL;
	hd_message_spec ms;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t *lat, *base, t0[AGENTS_MAX], deadline, stamp;
	pid_t pids[AGENTS_MAX];
	size_t nlat = 0, nbase = 0;
	double c0, c1, c2, c3;
	json_t *config;
	int r, i, rc;

	if (rounds < 1)
		rounds = 10;
	if (AGENTS < 2 || AGENTS > AGENTS_MAX)
		AGENTS = 20;
	if (mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);
	snprintf(stamps, sizeof(stamps), "%s/stamps", dir);
	mkdir(stamps, 0700);
	setenv("BENCH_STAMPS", stamps, 1);
	if (hd_store_open(&st, dir, &err) < 0)
		bench_die("open", &err);
	ts.id = "bench";
	if (hd_team_create(NULL, st, &ts, &err) < 0)
		bench_die("team", &err);
	config = json_pack("{s:[s,s,s]}", "command", "/bin/sh", "-c", SCRIPT);
	for (i = 0; i < AGENTS; i++) {
		snprintf(id, sizeof(id), "a%02d", i);
		memset(&as, 0, sizeof(as));
		as.id = id;
		as.team = "bench";
		as.runtime = "exec";
		as.runtime_config = config;
		as.leader = i == 0;
		if (hd_agent_add(NULL, st, &as, &err) < 0)
			bench_die("agent", &err);
	}
	json_decref(config);
	ar.on = 1;
	ar.turns_per_hour = HD_AUTORUN_TURNS_PER_HOUR_MAX;
	ar.park_after = HD_AUTORUN_PARK_AFTER_MAX;
	if (hd_autorun_set(NULL, st, "bench", &ar, &err) < 0)
		bench_die("autorun", &err);
	memset(&cfg, 0, sizeof(cfg));
	cfg.home = dir;
	if (hd_supervisor_start(&sv, &cfg, &err) < 0)
		bench_die("supervisor", &err);
	lat = calloc((size_t)rounds * AGENTS, sizeof(*lat));
	base = calloc((size_t)rounds * AGENTS, sizeof(*base));
	if (lat == NULL || base == NULL)
		bench_die("out of memory", NULL);

	for (r = 0; r < rounds; r++) {
		/* the supervisor: one message each, then wait for all turns */
		for (i = 0; i < AGENTS; i++) {
			snprintf(id, sizeof(id), "a%02d", i);
			memset(&ms, 0, sizeof(ms));
			ms.team = "bench";
			ms.from = i == 0 ? "a01" : "a00";
			ms.to = id;
			ms.content = "run the job";
			t0[i] = now_ns();
			if (hd_mailbox_send(NULL, st, &ms, &err) < 0)
				bench_die("send", &err);
		}
		deadline = hd_mono_ms() + 60000;
		while (turns_done(st) < (int64_t)(r + 1) * AGENTS) {
			if (hd_mono_ms() > deadline)
				bench_die(
				    "turns did not finish within 60 s", NULL);
			hd_sleep_us(2000);
		}
		for (i = 0; i < AGENTS; i++) {
			snprintf(path, sizeof(path), "%s/a%02d", stamps, i);
			if ((stamp = stamp_at(path, r + 1)) == 0)
				bench_die("a turn left no stamp", NULL);
			lat[nlat++] = stamp - t0[i];
		}
		/* the baseline: the same command spawned directly, all the
		 * round's spawns at once as the supervisor's turns are */
		for (i = 0; i < AGENTS; i++) {
			char *args[] = {"/bin/sh", "-c", SCRIPT, NULL};
			posix_spawn_file_actions_t fa;

			snprintf(id, sizeof(id), "b%02d", i);
			setenv("HUDDLE_AGENT", id, 1);
			posix_spawn_file_actions_init(&fa);
			posix_spawn_file_actions_addopen(
			    &fa, 0, "/dev/null", O_RDONLY, 0);
			posix_spawn_file_actions_addopen(
			    &fa, 1, "/dev/null", O_WRONLY, 0);
			t0[i] = now_ns();
			rc = posix_spawn(
			    &pids[i], "/bin/sh", &fa, NULL, args, environ);
			posix_spawn_file_actions_destroy(&fa);
			if (rc != 0)
				bench_die("posix_spawn", NULL);
		}
		for (i = 0; i < AGENTS; i++) {
			int status;

			waitpid(pids[i], &status, 0);
			snprintf(path, sizeof(path), "%s/b%02d", stamps, i);
			if ((stamp = stamp_at(path, r + 1)) == 0)
				bench_die("a spawn left no stamp", NULL);
			base[nbase++] = stamp - t0[i];
		}
	}

	/* idle: nothing to do for anyone, and the workers gone (they linger
	 * 2 s for more work); then the same with autorun off, so nothing
	 * watched: the difference is what the idle agents cost */
	hd_sleep_us(3000000);
	c0 = cpu_s();
	hd_sleep_us(IDLE_S * 1000000);
	c1 = cpu_s();
	ar.on = 0;
	if (hd_autorun_set(NULL, st, "bench", &ar, &err) < 0)
		bench_die("autorun off", &err);
	hd_sleep_us(1000000);
	c2 = cpu_s();
	hd_sleep_us(IDLE_S * 1000000);
	c3 = cpu_s();

	{
		double p50 = pctl_ms(lat, nlat, 0.50),
		       p99 = pctl_ms(lat, nlat, 0.99);
		double b50 = pctl_ms(base, nbase, 0.50),
		       b99 = pctl_ms(base, nbase, 0.99);

		printf(
		    "supervisor_wake: p50 %.2f ms, p99 %.2f ms (%d agents, %zu "
		    "wakes) | baseline direct spawn p50 %.2f ms, p99 %.2f ms "
		    "| ratio %.2f\n",
		    p50, p99, AGENTS, nlat, b50, b99, b50 / p50);
	}
	{
		double on = (c1 - c0) * 1e6 / IDLE_S,
		       off = (c3 - c2) * 1e6 / IDLE_S;

		printf("supervisor_idle_cpu: %.1f us/s per idle agent (%d idle "
		       "agents: %.1f us/s in all) | baseline no agent watched "
		       "%.1f us/s (the store notification's safety net)\n",
		    (on - off) / AGENTS, AGENTS, on, off);
	}
	hd_supervisor_stop(sv);
	hd_store_close(st);
	free(lat);
	free(base);
	if (bench_rm_rf(dir) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
	return 0;
}
