/*
 * log.c -- stderr logging. The level is the one piece of process-wide
 * state in the library: main() sets it before any thread starts, and
 * everything else only reads it. Each line is built whole and written with
 * one write(2) so lines from threads never interleave.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/log.h>
#include <huddle/util.h>

/* -1: not read from the environment yet. Atomic because the first
 * reader may be any thread; every thread that races there computes the
 * same value from HUDDLE_LOG. */
static _Atomic int log_level = -1;

static hd_log_level
log_level_from_env(void)
{
	const char *v = getenv("HUDDLE_LOG");

	if (v == NULL)
		return HD_LOG_INFO;
	if (strcmp(v, "debug") == 0)
		return HD_LOG_DEBUG;
	if (strcmp(v, "warn") == 0)
		return HD_LOG_WARN;
	if (strcmp(v, "error") == 0)
		return HD_LOG_ERROR;
	if (strcmp(v, "off") == 0)
		return HD_LOG_OFF;
	return HD_LOG_INFO;
}

void
hd_log_set_level(hd_log_level level)
{
	atomic_store_explicit(&log_level, (int)level, memory_order_relaxed);
}

int
hd_log_enabled(hd_log_level level)
{
	int cur = atomic_load_explicit(&log_level, memory_order_relaxed);

	if (cur < 0) {
		cur = (int)log_level_from_env();
		atomic_store_explicit(&log_level, cur, memory_order_relaxed);
	}
	return (int)level >= cur;
}

void
hd_log_write(hd_log_level level, const char *component, const char *fmt, ...)
{
	static const char letters[] = "DIWE";
	char line[2048], ts[32];
	va_list ap;
	int n, m;
	char *p;

	if (!hd_log_enabled(level) || level >= HD_LOG_OFF)
		return;
	hd_time_iso(ts, sizeof(ts), hd_now_ms());
	n = snprintf(line, sizeof(line), "%s %ld %s %c: ", ts, (long)getpid(),
	    component, letters[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	if ((size_t)(n + m) > sizeof(line) - 2)
		m = (int)(sizeof(line) - 2 - (size_t)n);
	for (p = line + n; p < line + n + m; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	line[n + m] = '\n';
	if (write(STDERR_FILENO, line, (size_t)(n + m + 1)) < 0) {
		/* nowhere left to report it */
	}
}
