/*
 * bench-stream.h -- an open HTTP stream whose arrivals a reader thread
 * stamps, for the benchmarks that time a post to its arrival on a stream
 * (an SSE event, an MCP notification): bench_stream_open sends one
 * HTTP/1.0 request (no chunking: the body is the stream) and starts the
 * reader; each line that starts with the marker is one arrival, stamped
 * with hd_mono_us() as it is read; bench_stream_wait returns arrival i's
 * stamp, ending the bench when it takes more than 10 s.
 * Callers: bench-mcp-listen.c, bench-pg.c.
 */
#ifndef HD_BENCH_STREAM_H
#define HD_BENCH_STREAM_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <huddle/util.h>

#include "bench.h"

typedef struct bench_stream {
	int fd;
	const char *marker; /* the line that is one arrival */
	int64_t *at;        /* hd_mono_us of arrival i */
	int max;
	_Atomic int n;
	pthread_t reader;
} bench_stream;

static void *
bench_stream_reader(void *arg)
{
	bench_stream *s = arg;
	char buf[65536];
	size_t len = 0, mlen = strlen(s->marker);
	ssize_t got;

	while (atomic_load(&s->n) < s->max &&
	    (got = read(s->fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		int64_t now = hd_mono_us();
		char *line = buf, *nl;

		len += (size_t)got;
		buf[len] = '\0';
		while ((nl = strchr(line, '\n')) != NULL) {
			if ((size_t)(nl - line) >= mlen &&
			    strncmp(line, s->marker, mlen) == 0 &&
			    atomic_load(&s->n) < s->max) {
				s->at[atomic_load(&s->n)] = now;
				atomic_fetch_add(&s->n, 1);
			}
			line = nl + 1;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (len == sizeof(buf) - 1)
			len = 0; /* a line this long is no marker */
	}
	return NULL;
}

/* Connect to port on loopback, send the request head `head` (its lines,
 * each ending in CRLF, without the blank line) and body (or NULL), and
 * start the reader, which stamps up to max arrivals of marker. */
static inline void
bench_stream_open(bench_stream *s, int port, const char *head,
    const char *body, const char *marker, int max)
{
	struct sockaddr_in sin = {0};
	char req[2048];
	int one = 1, n;

	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(s->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		bench_die("connect", NULL);
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	n = body != NULL
		? snprintf(req, sizeof(req), "%sContent-Length: %zu\r\n\r\n%s",
		      head, strlen(body), body)
		: snprintf(req, sizeof(req), "%s\r\n", head);
	if (n <= 0 || (size_t)n >= sizeof(req) ||
	    write(s->fd, req, (size_t)n) != n)
		bench_die("request", NULL);
	s->marker = marker;
	s->max = max;
	s->at = calloc((size_t)max, sizeof(*s->at));
	atomic_store(&s->n, 0);
	if (s->at == NULL ||
	    pthread_create(&s->reader, NULL, bench_stream_reader, s) != 0)
		bench_die("reader", NULL);
}

/* Arrival i's stamp, once it came; what names the arrival in the error
 * that ends the bench when it has not come 10 s after since_us. */
static inline int64_t
bench_stream_wait(bench_stream *s, int i, int64_t since_us, const char *what)
{
	int64_t deadline = since_us + 10000000;
	char msg[128];

	while (atomic_load(&s->n) <= i) {
		if (hd_mono_us() > deadline) {
			snprintf(msg, sizeof(msg), "no %s within 10 s", what);
			bench_die(msg, NULL);
		}
		hd_sleep_us(20);
	}
	return s->at[i];
}

static inline void
bench_stream_close(bench_stream *s)
{
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->reader, NULL);
	close(s->fd);
	free(s->at);
}

#endif
