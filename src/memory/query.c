/*
 * query.c -- the user's words made safe to search with, and an expiry
 * read (memory.h: hd_memory_fts_query, hd_memory_parse_expires). Pure.
 *  (1) The user's text is never FTS5 syntax: it is cut into words (runs
 *      of ASCII letters and digits and of any byte >= 0x80, so UTF-8
 *      letters stay whole), every other byte -- quotes, parentheses,
 *      '*', ':', '^', '-', '+' -- separating them. Each word goes into
 *      the query inside double quotes (a word cannot hold one), so
 *      NEAR, AND, OR and NOT are words like any other and no input makes
 *      the MATCH fail to parse.
 *  (2) Words are joined by OR, so bm25 ranks a fact by how many of them
 *      it holds and how rare they are: a search box's few words and a
 *      turn's whole stimulus (the prompt's memory) both find what
 *      shares the most. The first HD_MEMORY_TERMS_MAX distinct words
 *      (ASCII case folded) are kept; a word longer than WORD_MAX bytes
 *      is cut there.
 *  (3) An expiry is a duration from now or a UTC date and time; anything
 *      else is refused with the accepted forms, the input cut to 64
 *      bytes.
 * Callers: memory.c, tests/unit/memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <huddle/buf.h>
#include <huddle/memory.h>
#include <huddle/util.h>

#define WORD_MAX 64 /* bytes of one word (2) */

static int
word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c >= 0x80;
}

int
hd_memory_fts_query(char **out, const char *text, hd_err *err)
{
	char words[HD_MEMORY_TERMS_MAX][WORD_MAX + 1];
	hd_buf b = HD_BUF_INIT(0);
	const char *p = text;
	size_t n = 0, i, len;

	*out = NULL;
	while (*p != '\0' && n < HD_MEMORY_TERMS_MAX) {
		while (*p != '\0' && !word_byte((unsigned char)*p))
			p++;
		for (len = 0; word_byte((unsigned char)p[len]); len++)
			;
		if (len == 0)
			break;
		/* cut at WORD_MAX, never inside a UTF-8 sequence */
		i = len < WORD_MAX ? len : WORD_MAX;
		while (i < len && i > 0 && ((unsigned char)p[i] & 0xc0) == 0x80)
			i--;
		memcpy(words[n], p, i);
		words[n][i] = '\0';
		p += len;
		for (len = 0; len < n; len++)
			if (strcasecmp(words[len], words[n]) == 0)
				break;
		if (len == n && i > 0)
			n++;
	}
	if (n == 0)
		return hd_err_set(
		    err, HD_EINVAL, "the query has no words to search for");
	for (i = 0; i < n; i++) {
		hd_buf_puts(&b, i > 0 ? " OR \"" : "\"");
		hd_buf_puts(&b, words[i]);
		hd_buf_puts(&b, "\"");
	}
	if (hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	*out = hd_buf_detach(&b);
	return 0;
}

/* "2027-01-31" or "2027-01-31T12:00:00Z" (3): 1 with *ms, else 0. */
static int
utc_time(int64_t *ms, const char *s)
{
	struct tm tm;
	const char *end;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%d", &tm)) == NULL)
		return 0;
	if (*end == 'T' || *end == ' ') {
		if ((end = strptime(end + 1, "%H:%M:%S", &tm)) == NULL)
			return 0;
		if (*end == 'Z')
			end++;
	}
	if (*end != '\0' || (t = timegm(&tm)) == (time_t)-1)
		return 0;
	*ms = (int64_t)t * 1000;
	return 1;
}

int
hd_memory_parse_expires(int64_t *out, const char *s, int64_t now, hd_err *err)
{
	int64_t span;

	if (hd_parse_duration(&span, s, "smhdw", 3650 * 86400000LL)) {
		*out = now + span;
		return 0;
	}
	if (utc_time(out, s))
		return 0;
	return hd_err_set(err, HD_EINVAL,
	    "expires must be a duration like 7d (s, m, h, d or w) or a UTC "
	    "time like 2027-01-31T12:00:00Z, not \"%.64s\"",
	    s);
}
