/*
 * autorun_int.h (private) -- helpers shared inside the autorun module
 * (settings.c, agents.c, turns.c, wakes.c; defined in rows.c). Nothing
 * outside src/autorun/ includes this.
 */
#ifndef HD_AUTORUN_INT_H
#define HD_AUTORUN_INT_H

#include <stddef.h>

#include <jansson.h>

#include <huddle/err.h>

#include <store/store.h>

int hd_autorun__oom(hd_err *err);

/* Step s to its end, growing *out by one element of size bytes a row,
 * filled by fill; s is reset. *out is freed on failure. */
int hd_autorun__collect(void **out, size_t *n, size_t size, hd_store *st,
    hd_stmt *s, void (*fill)(void *elem, hd_stmt *s), hd_err *err);

/* Step s once: on a row, fill out from it. *found (when not NULL) says
 * whether there was one; s is reset. 0, or the database's error. */
int hd_autorun__row(int *found, void *out, hd_store *st, hd_stmt *s,
    void (*fill)(void *elem, hd_stmt *s), hd_err *err);

/* A column as JSON: its text or integer, or null for SQL NULL. */
json_t *hd_autorun__col_text(hd_stmt *s, int i);
json_t *hd_autorun__col_int(hd_stmt *s, int i);

#endif
