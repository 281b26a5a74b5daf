/*
 * log.c -- stderr logging. The level is the one piece of process-wide
 * state in the library: main() sets it before any thread starts, and
 * everything else only reads it. Each line is built whole and written with
 * one write(2) so lines from threads never interleave; no lock is taken,
 * so a line per HTTP request costs its formatting and one write.
 *  (1) The format (text or JSON) is set once like the level, or read from
 *      HUDDLE_LOG_FORMAT on first use. A JSON line is one object built
 *      with Jansson: its strings are escaped there, and in text that is
 *      not UTF-8 each byte that starts no valid character becomes '?'
 *      first (hd_utf8_scrub: Jansson refuses such text, and the line must
 *      not be lost).
 *  (2) Text lines have control characters replaced by spaces, so logged
 *      data never forges a line; neither format ever writes a colour.
 * Callers: every layer through the hd_log_* macros; `huddle serve`
 * (src/cli/cmd-serve.c) sets the level and format from its options.
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

/* -1: not read from the environment yet (as log_level). */
static _Atomic int log_format = -1;

int
hd_log_level_parse(const char *s, hd_log_level *out)
{
	static const char *const names[] = {"debug", "info", "warn", "error",
	    "off"};
	int i;

	for (i = 0; s != NULL && i < 5; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (hd_log_level)i;
			return 0;
		}
	return -1;
}

void
hd_log_set_format(hd_log_format format)
{
	atomic_store_explicit(&log_format, (int)format, memory_order_relaxed);
}

int
hd_log_json(void)
{
	int cur = atomic_load_explicit(&log_format, memory_order_relaxed);

	if (cur < 0) {
		const char *v = getenv("HUDDLE_LOG_FORMAT");

		cur = v != NULL && strcmp(v, "json") == 0 ? HD_LOG_JSON
							 : HD_LOG_TEXT;
		atomic_store_explicit(&log_format, cur, memory_order_relaxed);
	}
	return cur == HD_LOG_JSON;
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

static void
log_put(const char *line, size_t len)
{
	if (write(STDERR_FILENO, line, len) < 0) {
		/* nowhere left to report it */
	}
}

/* (1) One JSON object: ts, pid, component, level, msg, then fields. */
static void
log_json(hd_log_level level, const char *component, json_t *fields,
    char *msg, const char *ts)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	json_t *j;
	char *text, *p;

	hd_utf8_scrub(msg);
	j = json_pack("{s:s, s:I, s:s, s:s, s:s}", "ts", ts, "pid",
	    (json_int_t)getpid(), "component", component, "level",
	    names[level], "msg", msg);
	if (j == NULL)
		return;
	if (fields != NULL)
		json_object_update_new(j, fields);
	text = json_dumps(
	    j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(j);
	if (text == NULL)
		return;
	p = text + strlen(text);
	*p = '\n'; /* over the NUL: one write, not NUL-terminated */
	log_put(text, (size_t)(p - text) + 1);
	free(text);
}

static void log_vwrite(hd_log_level level, const char *component,
    json_t *fields, const char *fmt, va_list ap) HD_PRINTFLIKE(4, 0);

static void
log_vwrite(hd_log_level level, const char *component, json_t *fields,
    const char *fmt, va_list ap)
{
	static const char letters[] = "DIWE";
	char line[2048], ts[32];
	int n, m;
	char *p;

	if (!hd_log_enabled(level) || level >= HD_LOG_OFF) {
		json_decref(fields);
		return;
	}
	hd_time_iso(ts, sizeof(ts), hd_now_ms());
	if (hd_log_json()) {
		if (vsnprintf(line, sizeof(line), fmt, ap) >= 0)
			log_json(level, component, fields, line, ts);
		else
			json_decref(fields);
		return;
	}
	json_decref(fields); /* text: the message says it */
	n = snprintf(line, sizeof(line), "%s %ld %s %c: ", ts, (long)getpid(),
	    component, letters[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	if ((size_t)(n + m) > sizeof(line) - 2)
		m = (int)(sizeof(line) - 2 - (size_t)n);
	for (p = line + n; p < line + n + m; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	line[n + m] = '\n';
	log_put(line, (size_t)(n + m + 1));
}

void
hd_log_write(hd_log_level level, const char *component, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, component, NULL, fmt, ap);
	va_end(ap);
}

void
hd_log_with(hd_log_level level, const char *component, json_t *fields,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(level, component, fields, fmt, ap);
	va_end(ap);
}
