/*
 * log.h -- one line per event on stderr, never stdout (stdout belongs to
 * MCP stdio and --json output).
 *
 * Line format: `2026-11-22T10:00:00.123Z 31337 <component> <L>: message`.
 * Messages pass through a filter that turns control characters into spaces,
 * so logged data can never forge a line.
 */
#ifndef HUDDLE_LOG_H
#define HUDDLE_LOG_H

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

void hd_log_write(hd_log_level level, const char *component, const char *fmt,
    ...) HD_PRINTFLIKE(3, 4);

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
