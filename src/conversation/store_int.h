/*
 * store_int.h (private) -- what the files of src/conversation/ share:
 * the readers hd_conversation_get (record.c) gathers from the other
 * tables' files. Nothing outside src/conversation/ includes this.
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

/* Append a copy of s to *v: -1 when memory ran out. */
int hd_convstore__strv_push(char ***v, size_t *n, const char *s);

#endif
