/*
 * pg_sql.c -- the PostgreSQL backend's SQL translator and URL masking
 * (pg.h: hd_pg_translate, hd_pg_mask_url), apart from the connection
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
 *  (3) A URL shown to anyone has its password masked, in the authority
 *      and in a password= parameter.
 *
 * Callers: pg.c (each statement once per connection, the store's path),
 * tests/unit/store/test-pg.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pg.h"

char *
hd_pg_mask_url(const char *url)
{
	char *out = strdup(url), *p, *at, *slash, *colon, *end;
	size_t n;

	if (out == NULL)
		return NULL;
	/* scheme://user:PASSWORD@host... */
	if ((p = strstr(out, "://")) != NULL) {
		p += 3;
		slash = strchr(p, '/');
		at = strchr(p, '@');
		if (at != NULL && (slash == NULL || at < slash) &&
		    (colon = memchr(p, ':', (size_t)(at - p))) != NULL) {
			n = strlen(at);
			memcpy(colon + 1, "***", 3);
			memmove(colon + 4, at, n + 1);
		}
	}
	/* ...?password=PASSWORD&... */
	for (p = out; (p = strstr(p, "password=")) != NULL; p += 9) {
		if (p != out && p[-1] != '?' && p[-1] != '&')
			continue;
		end = p + 9 + strcspn(p + 9, "&");
		if (end - (p + 9) < 3)
			continue;
		memcpy(p + 9, "***", 3);
		memmove(p + 12, end, strlen(end) + 1);
	}
	return out;
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

struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	char *np;

	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 256);

		while (cap < b->n + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void
sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
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
	struct sbuf b = { 0 };
	const char *s = sql, *t;
	int maxp = 0, ignore = 0;
	char q = 0, num[16];
	size_t i, n;
	long at;

	*returning = 0;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (strncasecmp(s, "INSERT OR IGNORE INTO", 21) == 0) {
		sb_str(&b, "INSERT INTO");
		s += 21;
		ignore = 1;
	}
	while (*s != '\0') {
		if (q != 0) { /* inside '...' or "..." ('' reads as two) */
			if (*s == q)
				q = 0;
			sb_add(&b, s++, 1);
			continue;
		}
		if (*s == '\'' || *s == '"') {
			q = *s;
			sb_add(&b, s++, 1);
			continue;
		}
		if (s[0] == '-' && s[1] == '-') {
			n = strcspn(s, "\n");
			sb_add(&b, s, n);
			s += n;
			continue;
		}
		if (*s == '?') {
			int v;

			/* `x IS ?` / `x IS NOT ?`: SQLite's null-safe
			 * comparison with a value, PostgreSQL's IS [NOT]
			 * DISTINCT FROM (IS takes only NULL, TRUE... there) */
			if (b.n >= 3 && is_suffix_word(b.p, b.n, "IS ")) {
				b.n -= 3;
				sb_str(&b, "IS NOT DISTINCT FROM ");
			} else if (b.n >= 7 &&
			    is_suffix_word(b.p, b.n, "IS NOT ")) {
				b.n -= 7;
				sb_str(&b, "IS DISTINCT FROM ");
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
			sb_str(&b, num);
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
				sb_str(&b, pg_words[i].to);
				s += strlen(pg_words[i].from);
				continue;
			}
			n = 0;
			while (is_word((unsigned char)s[n]))
				n++;
			sb_add(&b, s, n);
			s += n;
			continue;
		}
		sb_add(&b, s++, 1);
	}
	if (b.oom || b.p == NULL) {
		free(b.p);
		return NULL;
	}
	/* no trailing `;` or blanks: clauses are appended below */
	while (b.n > 0 && strchr(" \t\n;", b.p[b.n - 1]) != NULL)
		b.p[--b.n] = '\0';
	at = find_word(b.p, "RETURNING");
	if (ignore) {
		const char *clause = " ON CONFLICT DO NOTHING";
		char *tail = at >= 0 ? strdup(b.p + at) : NULL;

		if (at >= 0 && tail == NULL) {
			free(b.p);
			return NULL;
		}
		if (at >= 0) {
			b.n = (size_t)at;
			while (b.n > 0 && b.p[b.n - 1] == ' ')
				b.n--;
			b.p[b.n] = '\0';
		}
		sb_str(&b, clause);
		if (tail != NULL) {
			sb_str(&b, " ");
			sb_str(&b, tail);
			free(tail);
		}
	}
	/* (4): INSERT INTO name ... with a generated key */
	if (at < 0 && strncasecmp(b.p, "INSERT INTO", 11) == 0) {
		s = b.p + 11;
		while (*s == ' ')
			s++;
		for (n = 0; is_word((unsigned char)s[n]); n++)
			;
		for (i = 0; i < nkeys; i++)
			if (strlen(tables[i]) == n &&
			    strncasecmp(tables[i], s, n) == 0)
				break;
		if (n > 0 && i < nkeys) {
			sb_str(&b, " RETURNING ");
			sb_str(&b, keys[i]);
			*returning = 1;
		}
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*nparams = maxp;
	return b.p;
}
