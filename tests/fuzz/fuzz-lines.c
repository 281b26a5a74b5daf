/*
 * fuzz-lines.c -- the line reader every JSON-lines runtime parses
 * through (hd_lines, src/runtime/proc.c (8)), on any output arriving in
 * pieces of any size. The first input byte picks the line limit (1 to 64
 * bytes, or 1 MiB) and how the output is cut into pieces; the rest is the
 * output. For every input the lines handed over are exactly those of a
 * plain reference reading of the whole output at once:
 *  (1) one line per '\n', plus a last one when the output does not end
 *      with '\n';
 *  (2) each is its bytes up to the newline, or only the first `limit` of
 *      them, flagged cut, when it is longer; then without one trailing
 *      '\r';
 *  (3) the pieces the output came in change nothing.
 * (The stream parsers themselves are fuzzed line by line by
 * fuzz-claude-stream and fuzz-codex-stream.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/runtime_int.h"

struct got {
	const uint8_t *out; /* the whole output */
	size_t size, max;
	size_t at;    /* where the reference's next line starts */
	size_t lines; /* lines handed over */
};

/* Compare each line handed over with the reference's next one. */
static void
on_line(void *ctx, const char *line, size_t len, int cut)
{
	struct got *g = ctx;
	const uint8_t *start = g->out + g->at, *nl;
	size_t full, want;

	check(g->at < g->size, "a line after the end of the output"); /* (1) */
	nl = memchr(start, '\n', g->size - g->at);
	full = nl != NULL ? (size_t)(nl - start) : g->size - g->at;
	want = full > g->max ? g->max : full;
	if (want > 0 && start[want - 1] == '\r')
		want--;
	check(cut == (full > g->max), "the cut flag is wrong"); /* (2) */
	check(len == want && memcmp(line, start, len) == 0,
	    "a line differs from the output");
	check(line[len] == '\0' || line[len] == '\r',
	    "a line is not terminated");
	g->at += full + (nl != NULL);
	g->lines++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct got g;
	hd_lines l;
	uint8_t first = 0;
	size_t off = 0, n, step;

	if (size > 0) {
		first = data[0];
		data++;
		size--;
	}
	memset(&g, 0, sizeof(g));
	g.out = data;
	g.size = size;
	g.max = first % 8 == 0 ? (size_t)1 << 20 : (size_t)1 + first % 64;
	hd_lines_init(&l, g.max, on_line, &g);
	step = first;
	while (off < size) { /* (3) */
		n = fuzz_piece(&step, size - off);
		hd_lines_feed(&l, (const char *)data + off, n);
		off += n;
	}
	hd_lines_feed(&l, NULL, 0);
	hd_lines_dispose(&l);
	check(g.at == size, "the lines stop before the output does"); /* (1) */
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "\x01one\ntwo\nthree",
    "\x02one\r\ntwo\r\n",
    "\x03\n\n\n",
    "\x04{\"type\":\"result\"}\n",
    "\x05" "a line longer than five bytes\nshort\n",
    "\x06" "abcde\r\nabcdef\r\n",
    "\x08no newline at all",
    "\x09\r",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "\n", "\r", "\r\n", "a", "abcdefgh", "{\"type\":\"x\"}", "\xff", " ",
    "\n\n", NULL,
};
