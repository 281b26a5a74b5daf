/*
 * buf.c -- the capped, sticky-failure string builder of buf.h.
 *  (1) ptr is NUL-terminated whenever it is non-NULL.
 *  (2) once failed is set no append changes the contents.
 *  (3) len never exceeds max when max is non-zero.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>

#define PRINTF_ROOM 256

static int
buf_grow(hd_buf *b, size_t extra)
{
	size_t need, ncap;
	char *np;

	if (b->failed)
		return -1;
	if (b->max != 0 && (extra > b->max || b->len > b->max - extra)) {
		b->failed = HD_ETOOBIG;
		return -1;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap *= 2;
	if ((np = realloc(b->ptr, ncap)) == NULL) {
		b->failed = HD_ENOMEM;
		return -1;
	}
	b->ptr = np;
	b->cap = ncap;
	return 0;
}

void
hd_buf_put(hd_buf *b, const void *data, size_t len)
{
	if (buf_grow(b, len) < 0)
		return;
	if (len > 0)
		memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
}

void
hd_buf_puts(hd_buf *b, const char *s)
{
	hd_buf_put(b, s, strlen(s));
}

void
hd_buf_putc(hd_buf *b, char c)
{
	hd_buf_put(b, &c, 1);
}

size_t
hd_i64_text(char out[HD_I64_TEXT_MAX], int64_t v)
{
	char d[HD_I64_TEXT_MAX], *p = d + sizeof(d);
	/* in unsigned arithmetic, so INT64_MIN's magnitude fits */
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	n = (size_t)(d + sizeof(d) - p);
	memcpy(out, p, n);
	return n;
}

void
hd_buf_put_i64(hd_buf *b, int64_t v)
{
	char d[HD_I64_TEXT_MAX];

	hd_buf_put(b, d, hd_i64_text(d, v));
}

/* Room for a formatted append of typical size, so that most print in one
 * pass: capacity only (len and the cap on it are untouched), and a failure
 * here is no failure, the append just measures first. */
static void
buf_room(hd_buf *b)
{
	size_t ncap;
	char *np;

	if (b->cap - b->len >= PRINTF_ROOM)
		return;
	ncap = b->cap ? b->cap : 64;
	while (ncap - b->len < PRINTF_ROOM)
		ncap *= 2;
	if ((np = realloc(b->ptr, ncap)) == NULL)
		return;
	if (b->cap == 0)
		np[0] = '\0'; /* (1) */
	b->ptr = np;
	b->cap = ncap;
}

/* One vsnprintf into the room there is; a second, after growing, only
 * when the text did not fit. A formatted append that fails leaves the
 * contents as they were (2): the NUL it wrote over is put back. */
void
hd_buf_vprintf(hd_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	size_t room;
	int n;

	if (b->failed)
		return;
	buf_room(b);
	room = b->cap - b->len; /* 0 only when buf_room could not allocate */
	va_copy(cp, ap);
	n = vsnprintf(room > 0 ? b->ptr + b->len : NULL, room, fmt, cp);
	va_end(cp);
	if (n < 0) {
		if (room > 0)
			b->ptr[b->len] = '\0';
		b->failed = HD_ENOMEM;
		return;
	}
	if (buf_grow(b, (size_t)n) < 0) {
		if (b->ptr != NULL)
			b->ptr[b->len] = '\0';
		return;
	}
	if ((size_t)n >= room)
		vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
hd_buf_printf(hd_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hd_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *
hd_buf_cstr(const hd_buf *b)
{
	return b->ptr != NULL ? b->ptr : "";
}

int
hd_buf_failed(const hd_buf *b)
{
	return b->failed != 0;
}

int
hd_buf_error(const hd_buf *b, const char *what, hd_err *err)
{
	if (b->failed == HD_ETOOBIG)
		return hd_err_set(err, HD_ETOOBIG, "%s is over the limit of %zu bytes",
		    what, b->max);
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

char *
hd_buf_detach(hd_buf *b)
{
	char *p;

	if (b->failed) {
		hd_buf_dispose(b);
		return NULL;
	}
	p = b->ptr != NULL ? b->ptr : strdup("");
	b->ptr = NULL;
	b->len = b->cap = 0;
	return p;
}

void
hd_buf_reset(hd_buf *b)
{
	b->len = 0;
	b->failed = 0;
	if (b->ptr != NULL)
		b->ptr[0] = '\0';
}

void
hd_buf_dispose(hd_buf *b)
{
	if (b == NULL)
		return;
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
	b->failed = 0;
}
