/*
 * rows.c -- reading rows, shared by the autorun module's tables
 * (autorun_int.h): a statement's rows into an array, its first row into
 * a struct, a column as JSON. Each leaves the statement reset, so no
 * read snapshot stays open.
 * Callers: settings.c, agents.c, turns.c, wakes.c.
 */
#include <stdlib.h>
#include <string.h>

#include "autorun_int.h"

int
hd_autorun__oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

int
hd_autorun__collect(void **out, size_t *n, size_t size, hd_store *st,
    hd_stmt *s, void (*fill)(void *elem, hd_stmt *s), hd_err *err)
{
	unsigned char *v = NULL, *grown;
	size_t cnt = 0;
	int src;

	*out = NULL;
	*n = 0;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if ((grown = realloc(v, (cnt + 1) * size)) == NULL) {
			hd_store_reset(s);
			free(v);
			return hd_autorun__oom(err);
		}
		v = grown;
		memset(v + cnt * size, 0, size);
		fill(v + cnt * size, s);
		cnt++;
	}
	hd_store_reset(s);
	if (src != HD_DONE) {
		free(v);
		return hd_store_sqlerr(st, src, err);
	}
	*out = v;
	*n = cnt;
	return 0;
}

int
hd_autorun__row(int *found, void *out, hd_store *st, hd_stmt *s,
    void (*fill)(void *elem, hd_stmt *s), hd_err *err)
{
	int src = hd_stmt_step(s);

	if (src == HD_ROW)
		fill(out, s);
	hd_store_reset(s);
	if (found != NULL)
		*found = src == HD_ROW;
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

json_t *
hd_autorun__col_text(hd_stmt *s, int i)
{
	const char *t = hd_stmt_text(s, i);

	return t != NULL ? json_string(t) : json_null();
}

json_t *
hd_autorun__col_int(hd_stmt *s, int i)
{
	return hd_stmt_is_null(s, i)
		   ? json_null()
		   : json_integer(hd_stmt_int(s, i));
}
