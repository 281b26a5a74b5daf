/*
 * pg_sql.c -- the PostgreSQL backend's SQL translator and URL masking
 * (pg.h: hd_pg_translate; store.h: hd_store_mask_url), apart from the connection
 * (pg.c) because it is pure text work, tested on its own.
 *
 * Invariants:
 *  (1) Modules keep one SQLite-dialect text; what PostgreSQL reads
 *      differently is rewritten here by small tables and rules, never
 *      inside a string literal or a quoted name: `?N`/`?` placeholders,
 *      INSERT OR IGNORE, `IS ?`, INDEXED BY, the words of pg_words[].
 *  (2) An INSERT into a table with a generated key and no RETURNING of
 *      its own returns the key (pg.c (4)), so last_id costs no round
 *      trip.
 *  (3) A URL shown to anyone has its password masked: the userinfo's (up
 *      to the authority's last '@', so a password holding '@' is masked
 *      whole) and every password= parameter's, whatever its length.
 *  (4) Text is built in an hd_buf (util), as everywhere else.
 *
 * Callers: pg.c (each statement once per connection, the store's path),
 * store.c (hd_store_path), the CLI's store line (serve, doctor),
 * tests/unit/store/test-pg.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <huddle/buf.h>

#include "pg.h"

char *
hd_store_mask_url(const char *url)
{
	const char *p = strstr(url, "://"), *auth, *end, *at, *colon, *q, *amp;
	hd_buf b = HD_BUF_INIT(0);

	if (p == NULL)
		return strdup(url);
	auth = p + 3;
	end = auth + strcspn(auth, "/?");
	/* the userinfo ends at the authority's last '@' */
	for (at = NULL, p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	hd_buf_put(&b, url, (size_t)(auth - url));
	if (at != NULL &&
	    (colon = memchr(auth, ':', (size_t)(at - auth))) != NULL) {
		hd_buf_put(&b, auth, (size_t)(colon - auth));
		hd_buf_put(&b, ":***", 4);
		hd_buf_put(&b, at, (size_t)(end - at));
	} else
		hd_buf_put(&b, auth, (size_t)(end - auth));
	if ((q = strchr(end, '?')) == NULL)
		hd_buf_put(&b, end, strlen(end));
	else {
		hd_buf_put(&b, end, (size_t)(q + 1 - end));
		for (p = q + 1; *p != '\0'; p = *amp != '\0' ? amp + 1 : amp) {
			amp = p + strcspn(p, "&");
			if (strncmp(p, "password=", 9) == 0)
				hd_buf_put(&b, "password=***", 12);
			else
				hd_buf_put(&b, p, (size_t)(amp - p));
			if (*amp == '&')
				hd_buf_put(&b, "&", 1);
		}
	}
	return hd_buf_detach(&b);
}

/* ---- the translator ---- */

/* Words replaced wherever they stand as a whole word outside strings. */
static const struct {
	const char *from, *to;
} pg_words[] = {
	{ "instr", "strpos" },
	{ "rowid", "ctid" }, /* a tie-break in insertion order (session.c) */
};

static int
is_word(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/* Does the text p[0..n) end with the words w (case-insensitive), w
 * standing whole? */
static int
is_suffix_word(const char *p, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && strncasecmp(p + n - k, w, k) == 0 &&
	    (n == k || !is_word((unsigned char)p[n - k - 1]));
}

/* Does the word w start at s (case-insensitive, whole word)? */
static int
word_at(const char *sql, const char *s, const char *w)
{
	size_t n = strlen(w);

	if (s > sql && is_word((unsigned char)s[-1]))
		return 0;
	return strncasecmp(s, w, n) == 0 && !is_word((unsigned char)s[n]);
}

/* The position of the top-level keyword w in t outside strings, or -1. */
static long
find_word(const char *t, const char *w)
{
	const char *s;
	char q = 0;

	for (s = t; *s != '\0'; s++) {
		if (q != 0) {
			if (*s == q)
				q = 0;
			continue;
		}
		if (*s == '\'' || *s == '"') {
			q = *s;
			continue;
		}
		if (word_at(t, s, w))
			return (long)(s - t);
	}
	return -1;
}

char *
hd_pg_translate(const char *sql, const char *const *tables,
    const char *const *keys, size_t nkeys, int *nparams, int *returning)
{
	hd_buf b = HD_BUF_INIT(0);
	const char *s = sql, *t;
	int maxp = 0, ignore = 0;
	char q = 0, num[16];
	size_t i, n;
	long at;

	*returning = 0;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (strncasecmp(s, "INSERT OR IGNORE INTO", 21) == 0) {
		hd_buf_puts(&b, "INSERT INTO");
		s += 21;
		ignore = 1;
	}
	while (*s != '\0') {
		if (q != 0) { /* inside '...' or "..." ('' reads as two) */
			if (*s == q)
				q = 0;
			hd_buf_put(&b, s++, 1);
			continue;
		}
		if (*s == '\'' || *s == '"') {
			q = *s;
			hd_buf_put(&b, s++, 1);
			continue;
		}
		if (s[0] == '-' && s[1] == '-') {
			n = strcspn(s, "\n");
			hd_buf_put(&b, s, n);
			s += n;
			continue;
		}
		if (*s == '?') {
			int v;

			/* `x IS ?` / `x IS NOT ?`: SQLite's null-safe
			 * comparison with a value, PostgreSQL's IS [NOT]
			 * DISTINCT FROM (IS takes only NULL, TRUE... there) */
			if (b.len >= 3 && is_suffix_word(b.ptr, b.len, "IS ")) {
				b.len -= 3;
				hd_buf_puts(&b, "IS NOT DISTINCT FROM ");
			} else if (b.len >= 7 &&
			    is_suffix_word(b.ptr, b.len, "IS NOT ")) {
				b.len -= 7;
				hd_buf_puts(&b, "IS DISTINCT FROM ");
			}

			s++;
			if (*s >= '0' && *s <= '9') {
				v = (int)strtol(s, (char **)&t, 10);
				s = t;
			} else
				v = maxp + 1;
			if (v > maxp)
				maxp = v;
			snprintf(num, sizeof(num), "$%d", v);
			hd_buf_puts(&b, num);
			continue;
		}
		if (is_word((unsigned char)*s) &&
		    (s == sql || !is_word((unsigned char)s[-1]))) {
			/* SQLite's planner hint `INDEXED BY name`: dropped,
			 * PostgreSQL's planner takes no orders */
			if (word_at(sql, s, "INDEXED") &&
			    (t = s + 7 + strspn(s + 7, " \t\n")) != NULL &&
			    word_at(sql, t, "BY")) {
				t += 2;
				t += strspn(t, " \t\n");
				while (is_word((unsigned char)*t))
					t++;
				s = t + strspn(t, " \t\n");
				continue;
			}
			for (i = 0; i < sizeof(pg_words) / sizeof(pg_words[0]);
			    i++)
				if (word_at(sql, s, pg_words[i].from))
					break;
			if (i < sizeof(pg_words) / sizeof(pg_words[0])) {
				hd_buf_puts(&b, pg_words[i].to);
				s += strlen(pg_words[i].from);
				continue;
			}
			n = 0;
			while (is_word((unsigned char)s[n]))
				n++;
			hd_buf_put(&b, s, n);
			s += n;
			continue;
		}
		hd_buf_put(&b, s++, 1);
	}
	if (hd_buf_failed(&b) || b.ptr == NULL) {
		hd_buf_dispose(&b);
		return NULL;
	}
	/* no trailing `;` or blanks: clauses are appended below */
	while (b.len > 0 && strchr(" \t\n;", b.ptr[b.len - 1]) != NULL)
		b.ptr[--b.len] = '\0';
	at = find_word(b.ptr, "RETURNING");
	if (ignore) {
		const char *clause = " ON CONFLICT DO NOTHING";
		char *tail = at >= 0 ? strdup(b.ptr + at) : NULL;

		if (at >= 0 && tail == NULL) {
			hd_buf_dispose(&b);
			return NULL;
		}
		if (at >= 0) {
			b.len = (size_t)at;
			while (b.len > 0 && b.ptr[b.len - 1] == ' ')
				b.len--;
			b.ptr[b.len] = '\0';
		}
		hd_buf_puts(&b, clause);
		if (tail != NULL) {
			hd_buf_puts(&b, " ");
			hd_buf_puts(&b, tail);
			free(tail);
		}
	}
	/* (4): INSERT INTO name ... with a generated key */
	if (at < 0 && strncasecmp(b.ptr, "INSERT INTO", 11) == 0) {
		s = b.ptr + 11;
		while (*s == ' ')
			s++;
		for (n = 0; is_word((unsigned char)s[n]); n++)
			;
		for (i = 0; i < nkeys; i++)
			if (strlen(tables[i]) == n &&
			    strncasecmp(tables[i], s, n) == 0)
				break;
		if (n > 0 && i < nkeys) {
			hd_buf_puts(&b, " RETURNING ");
			hd_buf_puts(&b, keys[i]);
			*returning = 1;
		}
	}
	if (hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return NULL;
	}
	*nparams = maxp;
	return hd_buf_detach(&b);
}
