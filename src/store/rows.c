/*
 * rows.c -- rows into a domain module's structs (store.h): the first row
 * of a query into one element, or every row into a growing array, each
 * filled by the module's own row function, so a module states its columns
 * once and never writes the stepping, growing and unwinding again.
 *  (1) The statement is always reset before these return, whatever
 *      happened, so no read snapshot stays open.
 *  (2) Nothing is half kept: when a fill runs out of memory or a step
 *      fails, every element filled so far (the failing one too) is
 *      disposed and the array freed; the caller gets the error alone.
 *  (3) An element is handed to fill as it is (not cleared): each row
 *      function sets every field it owns first, so dispose may run on it
 *      whatever fill got to.
 * Callers: the domain modules' loads and lists (team, agent, budget,
 * session, events, room, mailbox), tests/unit/store/test-rows.c.
 */
#include <stdlib.h>

#include "store.h"

int
hd_store_row(hd_store *st, hd_stmt *s, void *item, hd_row_fill_fn fill,
    hd_row_dispose_fn dispose, void *ctx, hd_err *err)
{
	int src = hd_stmt_step(s), rc = 0;

	if (src == HD_ROW) {
		if (fill(item, s, ctx) < 0) {
			dispose(item);
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		} else
			rc = 1;
	} else if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

void
hd_store_rows_free(
    void *items, size_t n, size_t size, hd_row_dispose_fn dispose)
{
	size_t i;

	for (i = 0; i < n; i++)
		dispose((char *)items + i * size);
	free(items);
}

int
hd_store_rows(hd_store *st, hd_stmt *s, size_t size, hd_row_fill_fn fill,
    hd_row_dispose_fn dispose, void *ctx, void **items, size_t *n,
    hd_err *err)
{
	char *v = NULL, *grown;
	size_t cnt = 0, cap = 0;
	int rc = 0, src, got;

	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			if ((grown = realloc(v, cap * size)) == NULL) {
				rc = hd_err_set(err, HD_ENOMEM, "out of memory");
				break;
			}
			v = grown;
		}
		if ((got = fill(v + cnt * size, s, ctx)) < 0) {
			cnt++; /* (2) the failing one is disposed too */
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
			break;
		}
		if (got == 0)
			cnt++;
	}
	hd_store_reset(s);
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	if (rc < 0 || cnt == 0) { /* nothing kept: no array either */
		hd_store_rows_free(v, cnt, size, dispose);
		v = NULL;
		cnt = 0;
	}
	*items = v;
	*n = cnt;
	return rc;
}
