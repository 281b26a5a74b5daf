/*
 * table.c -- aligned text tables and times for human CLI output. Widths
 * count UTF-8 code points, so names with accents still line up.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

struct hd_table {
	int ncols;
	char **cells; /* rows * ncols, row 0 the headings */
	size_t nrows, cap;
};

static size_t
width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static void
table_add(hd_table *t, va_list ap)
{
	int i;

	if (t->nrows == t->cap) {
		char **nc;

		t->cap = t->cap ? t->cap * 2 : 16;
		nc = realloc(t->cells, t->cap * (size_t)t->ncols * sizeof(*nc));
		if (nc == NULL)
			abort(); /* a CLI table is tiny; nothing sane to do */
		t->cells = nc;
	}
	for (i = 0; i < t->ncols; i++) {
		const char *v = va_arg(ap, const char *);
		char *d = strdup(v != NULL ? v : "-"), *p;

		if (d == NULL)
			abort();
		for (p = d; *p; p++) /* one row per line, whatever the data */
			if ((unsigned char)*p < 0x20)
				*p = ' ';
		t->cells[t->nrows * (size_t)t->ncols + (size_t)i] = d;
	}
	t->nrows++;
}

hd_table *
hd_table_new(int ncols, ...)
{
	hd_table *t = calloc(1, sizeof(*t));
	va_list ap;

	if (t == NULL)
		abort();
	t->ncols = ncols;
	va_start(ap, ncols);
	table_add(t, ap);
	va_end(ap);
	return t;
}

void
hd_table_row(hd_table *t, ...)
{
	va_list ap;

	va_start(ap, t);
	table_add(t, ap);
	va_end(ap);
}

void
hd_table_print(hd_table *t, FILE *f, const char *indent)
{
	size_t w[16] = {0}, r;
	int i;

	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols && i < 16; i++) {
			size_t cw = width(t->cells[r * (size_t)t->ncols + (size_t)i]);

			if (cw > w[i])
				w[i] = cw;
		}
	for (r = 0; r < t->nrows; r++) {
		fputs(indent ? indent : "", f);
		for (i = 0; i < t->ncols; i++) {
			const char *cell = t->cells[r * (size_t)t->ncols + (size_t)i];

			fputs(cell, f);
			if (i + 1 < t->ncols)
				fprintf(f, "%*s", (int)(w[i] - width(cell) + 2), "");
		}
		fputc('\n', f);
	}
}

void
hd_table_free(hd_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

void
hd_cli_time(char *out, size_t outlen, int64_t ms)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0) {
		snprintf(out, outlen, "-");
		return;
	}
	localtime_r(&secs, &tm);
	strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm);
}
