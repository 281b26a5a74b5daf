/*
 * bench.h -- what the C benchmarks share, so each states only what it
 * measures: failing with a reason, the sort of latencies, removing a
 * home, a home holding one team, and the raw spawn that the exec
 * benchmarks take as their baseline.
 *
 * Everything is static inline: each benchmark compiles the very code it
 * compiled when it held its own copy, so no figure moves by sharing it.
 * Callers: every bench/bench-*.c (bench-conn.c and bench-mcp-http.c
 * through bench-server.h).
 */
#ifndef HD_BENCH_H
#define HD_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/team.h>
#include <huddle/util.h>

extern char **environ;

/* "<program>: what: err's message" on stderr, then exit 1. */
static inline void
bench_die(const char *what, const hd_err *err)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
	    err ? err->msg : "");
	exit(1);
}

/* qsort order for int64_t latencies */
static inline int
bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* rm -rf dir: 0, or -1 when it failed. */
static inline int
bench_rm_rf(const char *dir)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The store at home (created when new) with team `team` whose members are
 * prefix0..prefix(n-1), prefix0 its leader when leader is set. */
static inline hd_store *
bench_team_home(
    const char *home, const char *team, const char *prefix, int n, int leader)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	hd_team_spec ts = {0};
	hd_agent_spec as;
	char id[32];
	int i;

	if (hd_store_open(&st, home, &err) < 0)
		bench_die("open", &err);
	ts.id = team;
	if (hd_team_create(NULL, st, &ts, &err) < 0)
		bench_die("team", &err);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s%d", prefix, i);
		memset(&as, 0, sizeof(as));
		as.id = id;
		as.team = team;
		as.leader = leader && i == 0;
		if (hd_agent_add(NULL, st, &as, &err) < 0)
			bench_die("agent", &err);
	}
	return st;
}

/* One raw turn, the exec benchmarks' baseline: spawn the script at path
 * with pipes, feed it prompt, read its output to EOF, reap it. */
static inline void
bench_raw_turn(const char *path, const char *prompt)
{
	char *argv[] = {(char *)path, NULL};
	posix_spawn_file_actions_t fa;
	int inp[2], outp[2];
	char buf[4096];
	pid_t pid;
	ssize_t n;
	int status;

	if (pipe2(inp, O_CLOEXEC) != 0 || pipe2(outp, O_CLOEXEC) != 0)
		bench_die("pipe", NULL);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	if (posix_spawn(&pid, path, &fa, NULL, argv, environ) != 0)
		bench_die("posix_spawn", NULL);
	posix_spawn_file_actions_destroy(&fa);
	close(inp[0]);
	close(outp[1]);
	if (write(inp[1], prompt, strlen(prompt)) < 0)
		bench_die("write", NULL);
	close(inp[1]);
	while ((n = read(outp[0], buf, sizeof(buf))) > 0 ||
	       (n < 0 && errno == EINTR))
		;
	close(outp[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

#endif
