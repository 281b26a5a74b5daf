/*
 * buf.h -- a growable, always NUL-terminated byte buffer with a hard cap.
 *
 * Appends never fail loudly: the first allocation failure or overflow of the
 * cap sets a sticky flag, later appends do nothing, and one check at the end
 * (hd_buf_failed / hd_buf_error) reports it. Every buffer holding outside
 * input is created with the limit the spec fixes for that input.
 */
#ifndef HUDDLE_BUF_H
#define HUDDLE_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct hd_buf {
	char *ptr;  /* NUL-terminated once anything was appended; may be NULL */
	size_t len; /* bytes used, excluding the NUL */
	size_t cap; /* bytes allocated */
	size_t max; /* hard limit on len; 0 means no limit */
	int failed; /* 0, HD_ENOMEM or HD_ETOOBIG; sticky */
} hd_buf;

#define HD_BUF_INIT(limit) {NULL, 0, 0, (limit), 0}

void hd_buf_put(hd_buf *b, const void *data, size_t len);
void hd_buf_puts(hd_buf *b, const char *s);
void hd_buf_putc(hd_buf *b, char c);
/* v in decimal, as printf's %lld prints it: a formatted append without the
 * formatter, for hot paths that print integers into JSON or keys. */
void hd_buf_put_i64(hd_buf *b, int64_t v);

/* The same digits into out (no NUL); returns how many. */
#define HD_I64_TEXT_MAX 20 /* "-9223372036854775808" */
size_t hd_i64_text(char out[HD_I64_TEXT_MAX], int64_t v);
void hd_buf_printf(hd_buf *b, const char *fmt, ...) HD_PRINTFLIKE(2, 3);
void hd_buf_vprintf(hd_buf *b, const char *fmt, va_list ap)
    HD_PRINTFLIKE(2, 0);

/* The contents as a C string; "" when empty. Borrowed; lives with b. */
const char *hd_buf_cstr(const hd_buf *b);

/* Non-zero once an append failed. */
int hd_buf_failed(const hd_buf *b);

/* Fill err from a failed buffer and return its code (HD_ENOMEM/HD_ETOOBIG);
 * what names the content for the message ("message", "reply"). */
int hd_buf_error(const hd_buf *b, const char *what, hd_err *err);

/* Hand the string to the caller (free() it); b is reset. NULL on failure. */
char *hd_buf_detach(hd_buf *b);

/* Drop the contents and the failure flag; the limit is kept. */
void hd_buf_reset(hd_buf *b);

/* Release the memory. NULL-safe. */
void hd_buf_dispose(hd_buf *b);

#endif
