/*
 * util.h -- small portable helpers every layer uses: time, names, random
 * ids, files. No huddle rules live here apart from the name syntax.
 */
#ifndef HUDDLE_UTIL_H
#define HUDDLE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

/* Wall-clock milliseconds since the epoch (what every table stores). */
int64_t hd_now_ms(void);

/* Monotonic milliseconds and microseconds, for budgets and timing only. */
int64_t hd_mono_ms(void);
int64_t hd_mono_us(void);

/* Sleep for us microseconds (restarts on EINTR). */
void hd_sleep_us(int64_t us);

/* Free n malloc'd strings and the array that holds them (NULL: none). */
void hd_strv_free(char **v, size_t n);

/* ts = now (CLOCK_REALTIME, as pthread_cond_timedwait wants) + ms. */
void hd_timespec_in(struct timespec *ts, int64_t ms);

/* Format ms-since-epoch as ISO 8601 UTC with milliseconds
 * ("2026-11-22T10:29:03.123Z") into out (>= 25 bytes). */
void hd_time_iso(char *out, size_t outlen, int64_t ms);

/* 1 when s matches ^[a-z0-9][a-z0-9_-]{0,49}$, the syntax of team and agent
 * ids; only names that pass may ever become part of a path. */
int hd_slug_ok(const char *s);

/*
 * Check a team or agent id; on failure set err to
 * `invalid <what> name "<s>": use 1-50 lowercase letters, digits, '-' or '_'`
 * and return HD_EINVAL.
 */
int hd_slug_check(const char *what, const char *s, hd_err *err);

/* 1 when the len bytes at s are valid UTF-8 (no overlongs, surrogates or
 * code points past U+10FFFF). */
int hd_utf8_ok(const char *s, size_t len);

/* The length of the longest valid UTF-8 prefix of the len bytes at s: len
 * when they are all valid, else where the first bad or cut-off character
 * starts. */
size_t hd_utf8_prefix(const char *s, size_t len);

/* The bytes of s to print under a limit of max bytes without cutting a
 * character in two: at most max, ending on a character boundary (for
 * "%.*s"; s valid UTF-8, NUL-terminated or at least max long). */
size_t hd_utf8_cut(const char *s, size_t max);

/* Make the NUL-terminated s valid UTF-8 in place: every byte that does
 * not start a valid character (a stray byte, a character cut off by a
 * length limit) becomes '?'. */
void hd_utf8_scrub(char *s);

/* Make the NUL-terminated s one line of valid UTF-8 in place, as error
 * messages and a runtime's statuses are kept: hd_utf8_scrub, then each
 * control character (below 0x20, and 0x7f) a space. The length stays. */
void hd_utf8_line(char *s);

/* The number of code points in the NUL-terminated UTF-8 string s, or -1
 * when s is not valid UTF-8. */
long hd_utf8_chars(const char *s);

/* The characters a blank text consists of: the six ASCII whitespace
 * characters of the C locale. Other Unicode spaces (U+00A0, U+3000, ...)
 * are text. */
#define HD_TEXT_BLANK_CHARS " \t\n\v\f\r"

/* 1 when the len bytes at s are empty or all HD_TEXT_BLANK_CHARS. The one
 * rule behind every `... must not be empty` (room posts, messages, task
 * subjects, hd_text_check with min > 0). */
int hd_text_blank(const char *s, size_t len);

/*
 * Check a text field: valid UTF-8 with min..max code points; with min > 0
 * a blank text (hd_text_blank) counts as empty. Messages:
 * `<what> must be valid UTF-8`, `<what> must not be empty`,
 * `<what> is 201 characters; the limit is 200`.
 */
int hd_text_check(const char *what, const char *s, long min, long max,
    hd_err *err);

/* Fill buf with n cryptographically random bytes (OpenSSL). */
int hd_random_bytes(void *buf, size_t n, hd_err *err);

/* A random RFC 4122 version 4 UUID, 36 chars + NUL, into out[37]. */
int hd_uuid(char out[37], hd_err *err);

/* Format 16 random bytes as a version-4 UUID (sets the version and variant
 * bits in r). */
void hd_uuid_format(char out[37], unsigned char r[16]);

/* A random lowercase hex string of 2*nbytes chars into out. */
int hd_random_hex(char *out, size_t nbytes, hd_err *err);

/* A uniformly random integer in [0, n) for jitter; not for secrets. */
uint32_t hd_jitter(uint32_t n);

/* mkdir -p with mode for every directory it creates; an existing directory
 * is left alone. */
int hd_mkdir_p(const char *path, int mode, hd_err *err);

/* Resolve HUDDLE_HOME: override when given, else $HUDDLE_HOME, else
 * $HOME/.huddle. Returns a malloc'd string or NULL with err set. */
char *hd_home_resolve(const char *override, hd_err *err);

/* Read a whole file (at most max bytes) into a malloc'd, NUL-terminated
 * string. */
int hd_read_file(char **out, size_t *outlen, const char *path, size_t max,
    hd_err *err);

/* Parse a base-10 int64 that must fill s completely; 0 or HD_EINVAL with
 * `<what> must be an integer, not "<s>"`. */
int hd_parse_i64(int64_t *out, const char *s, const char *what, hd_err *err);

/* A duration "<N><unit>" in milliseconds: N a positive integer, the unit
 * one of the letters in units (of s, m, h, d, w), the whole at most
 * max_ms. 1 and *ms set when s is one, else 0 (the caller words its own
 * message, naming what it accepts). */
int hd_parse_duration(
    int64_t *ms, const char *s, const char *units, int64_t max_ms);

/* ---- processes on this host (host.c) ---- */

/* The start time of process pid (field 22 of /proc/<pid>/stat, clock
 * ticks since boot), 0 when it is gone or a zombie, -1 when it cannot be
 * told. With the pid it names one process within one boot. */
int64_t hd_proc_start(int64_t pid);

/* This boot's id (/proc/sys/kernel/random/boot_id) and this host's name
 * (gethostname); "" when unknown. */
void hd_boot_id(char *out, size_t outlen);
void hd_host_name(char *out, size_t outlen);

/* 1 when host and boot name this host in this boot (both known). */
int hd_proc_here(const char *host, const char *boot);

/*
 * SIGKILL the process group whose leader was process pgid started at
 * start (hd_proc_start), if that recording still names it: a live pgid
 * with another start time is another process and is left alone; a gone
 * leader's group holds only its leftovers. Never this process's own
 * group. 1 when a signal was sent.
 */
int hd_proc_group_kill(int64_t pgid, int64_t start);

#endif
