/*
 * store_int.h (private) -- what the files of src/conversation/ share:
 * the readers hd_conversation_get (record.c) gathers from the other
 * tables' files, and reading rows into an array (record.c). Nothing
 * outside src/conversation/ includes this.
 */
#ifndef HD_CONVERSATION_STORE_INT_H
#define HD_CONVERSATION_STORE_INT_H

#include <huddle/conversation_store.h>

#include <store/store.h>

int hd_convstore__oom(hd_err *err);

/* c's replies (replies.c), deliveries (queue.c) and files without their
 * bytes (files.c), appended to c. */
int hd_convstore__replies_get(hd_store *st, hd_conversation *c, hd_err *err);
int hd_convstore__deliveries_get(hd_store *st, hd_conversation *c, hd_err *err);
int hd_convstore__files_get(hd_store *st, hd_conversation *c, hd_err *err);
void hd_convstore__files_dispose(hd_conversation_file *l, size_t n);

/* Step s to its end, appending to the array *list of *n elements of size
 * bytes one element a row, zeroed and then filled by fill (-1: memory ran
 * out; the element stays counted, for the list's own free). s is reset;
 * 0, or the error with the rows read so far kept. */
int hd_convstore__rows(void **list, size_t *n, size_t size, hd_store *st,
    hd_stmt *s, int (*fill)(void *elem, hd_stmt *s), hd_err *err);

#endif
