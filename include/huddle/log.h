/*
 * log.h -- one line per event on stderr, never stdout (stdout belongs to
 * MCP stdio and --json output).
 *
 * Line format: `2026-11-22T10:00:00.123Z 31337 <component> <L>: message`.
 * Messages pass through a filter that turns control characters into spaces,
 * so logged data can never forge a line. No line carries colour (no ANSI
 * escapes, TTY or not): a journal or a file gets them as they are.
 *
 * In the JSON format (hd_log_set_format, HUDDLE_LOG_FORMAT=json) each line
 * is one object instead, written by Jansson:
 * `{"ts":"...","pid":31337,"component":"http","level":"info","msg":"..."}`
 * followed by the fields a hd_log_with caller gave.
 */
#ifndef HUDDLE_LOG_H
#define HUDDLE_LOG_H

#include <jansson.h>

#include "err.h"

typedef enum {
	HD_LOG_DEBUG = 0,
	HD_LOG_INFO = 1,
	HD_LOG_WARN = 2,
	HD_LOG_ERROR = 3,
	HD_LOG_OFF = 4,
} hd_log_level;

/* Set by main() once, before threads start: the minimum level written.
 * The default is HD_LOG_INFO, or HUDDLE_LOG=debug|info|warn|error|off. */
void hd_log_set_level(hd_log_level level);
int hd_log_enabled(hd_log_level level);
/* "debug", "info", "warn", "error" or "off" as a level: 0, or -1 when s
 * is none of them. */
int hd_log_level_parse(const char *s, hd_log_level *out);

typedef enum {
	HD_LOG_TEXT = 0, /* the line format above (the default) */
	HD_LOG_JSON = 1, /* one JSON object per line */
} hd_log_format;

/* Set by main() once, before threads start, like the level. The default
 * is HD_LOG_TEXT, or HUDDLE_LOG_FORMAT=text|json. */
void hd_log_set_format(hd_log_format format);
/* 1 when lines are JSON: a caller with fields builds them only then. */
int hd_log_json(void);

void hd_log_write(hd_log_level level, const char *component, const char *fmt,
    ...) HD_PRINTFLIKE(3, 4);
/* hd_log_write with fields (an object, stolen; NULL for none): in JSON
 * they are members of the line's object after msg, in text only the
 * message is written (put what matters in it). */
void hd_log_with(hd_log_level level, const char *component, json_t *fields,
    const char *fmt, ...) HD_PRINTFLIKE(4, 5);

#define hd_log_debug(...)                                                     \
	do {                                                                  \
		if (hd_log_enabled(HD_LOG_DEBUG))                             \
			hd_log_write(HD_LOG_DEBUG, HD_LOG_COMPONENT,          \
			    __VA_ARGS__);                                     \
	} while (0)
#define hd_log_info(...) hd_log_write(HD_LOG_INFO, HD_LOG_COMPONENT, __VA_ARGS__)
#define hd_log_warn(...) hd_log_write(HD_LOG_WARN, HD_LOG_COMPONENT, __VA_ARGS__)
#define hd_log_error(...)                                                     \
	hd_log_write(HD_LOG_ERROR, HD_LOG_COMPONENT, __VA_ARGS__)

#endif
