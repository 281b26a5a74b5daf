/*
 * bench-server.h -- what the HTTP benchmarks share: a `huddle serve` of
 * their own (on a free port, its home given), its resident memory, the
 * stopping it, and a curl sink for bodies nobody reads (the sort of
 * latencies is bench.h's bench_cmp_i64).
 * Callers: bench-mcp-http.c, bench-conn.c, bench-mcp-listen.c, bench-pg.c
 * (an open stream of arrivals is bench-stream.h's).
 */
#ifndef HD_BENCH_SERVER_H
#define HD_BENCH_SERVER_H

#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* the server bench_start_server started, for kill and rss */
static pid_t bench_server_pid;

/* Start `BIN --home HOME serve --port 0` and return the port it prints
 * (0 when it printed none): its stderr goes to /dev/null, and its info
 * lines (one per request and per engine event, the event log's thread
 * reading every commit) are off, HUDDLE_LOG=warn, unless BENCH_SERVER_LOG
 * is set: the benchmarks measure serving, not logging. */
static inline int
bench_start_server(const char *bin, const char *home)
{
	int out[2], port = 0;
	char buf[256];
	ssize_t n;
	size_t len = 0;

	if (pipe(out) != 0)
		return -1;
	if ((bench_server_pid = fork()) == 0) {
		dup2(out[1], 1);
		close(out[0]);
		if (getenv("BENCH_SERVER_LOG") == NULL &&
		    (freopen("/dev/null", "w", stderr) == NULL ||
			setenv("HUDDLE_LOG", "warn", 1) != 0))
			_exit(127);
		execl(bin, bin, "--home", home, "serve", "--port", "0",
		    (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	while (len < sizeof(buf) - 1 &&
	    (n = read(out[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
		char *s;

		len += (size_t)n;
		buf[len] = '\0';
		if ((s = strstr(buf, "127.0.0.1:")) != NULL &&
		    strchr(s, '\n') != NULL) {
			port = atoi(s + 10);
			break;
		}
	}
	close(out[0]);
	return port;
}

/* VmRSS of pid in KiB, -1 when unknown. */
static inline long
bench_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

/* SIGTERM to the server, then wait for it to end. */
static inline void
bench_stop_server(void)
{
	kill(bench_server_pid, SIGTERM);
	waitpid(bench_server_pid, NULL, 0);
}

/* a CURLOPT_WRITEFUNCTION that drops the body */
static inline size_t
bench_discard(void *p, size_t s, size_t n, void *u)
{
	(void)p;
	(void)u;
	return s * n;
}

#endif
