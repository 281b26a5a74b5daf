/*
 * files.c -- table conversation_files (conversation_store.h; migration
 * 14): the files a reply attached, bytes and all, so an answer stays what
 * it was whatever happens to the file on disk.
 *  (1) Written only in the engine's reply transaction (the bytes were
 *      read before it, src/engine/conv_files.c), so a reply and its files
 *      commit together; never updated.
 *  (2) Listing a conversation's files (hd_conversation_get) reads no
 *      bytes; hd_conversation_file_get reads one file's.
 * Callers: src/engine/conv_record.c (hd_convstore_files_add), record.c
 * (hd_conversation_get), the surfaces (hd_conversation_file_get) through
 * conversation.h.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "store_int.h"

int
hd_convstore_files_add(hd_store *st, const char *conv, int64_t seq,
    const char *agent, const hd_convstore_attach *files, size_t n, hd_err *err)
{
	const void *bytes;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		/* an empty file is an empty blob, not NULL */
		bytes = files[i].content != NULL ? (const void *)files[i].content
						 : (const void *)"";
		if ((rc = hd_store_run(st, err,
			 "INSERT INTO conversation_files(conversation_id, seq,"
			 " agent, name, media_type, size, content, created_at)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
			 HD_TEXT(conv), HD_INT(seq), HD_TEXT(agent),
			 HD_TEXT(files[i].name), HD_TEXT(files[i].media_type),
			 HD_INT(files[i].size), HD_BLOB(bytes, files[i].size),
			 HD_INT(hd_now_ms()))) < 0)
			return rc;
	}
	return 0;
}

void
hd_conversation_file_free(hd_conversation_file *f)
{
	if (f == NULL)
		return;
	free(f->agent);
	free(f->name);
	free(f->media_type);
	free(f->content);
	free(f);
}

json_t *
hd_conversation_file_to_json(const hd_conversation_file *f)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:s, s:I, s:I}", "id",
	    (json_int_t)f->id, "seq", (json_int_t)f->seq, "agent", f->agent,
	    "name", f->name, "mediaType", f->media_type, "size",
	    (json_int_t)f->size, "createdAt", (json_int_t)f->created_at);
}

/* Fill a file from a row id, seq, agent, name, media_type, size,
 * created_at (-1: out of memory). */
static int
file_row(void *elem, hd_stmt *s)
{
	hd_conversation_file *f = elem;

	f->id = hd_stmt_int(s, 0);
	f->seq = hd_stmt_int(s, 1);
	f->agent = hd_store_col_dup(s, 2);
	f->name = hd_store_col_dup(s, 3);
	f->media_type = hd_store_col_dup(s, 4);
	f->size = hd_stmt_int(s, 5);
	f->created_at = hd_stmt_int(s, 6);
	return f->agent != NULL && f->name != NULL && f->media_type != NULL
		   ? 0
		   : -1;
}

#define FILE_COLS "id, seq, agent, name, media_type, size, created_at"

int
hd_convstore__files_get(hd_store *st, hd_conversation *c, hd_err *err)
{
	hd_stmt *s;
	void *l = c->files;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " FILE_COLS " FROM conversation_files"
		 " WHERE conversation_id = ?1 ORDER BY id",
		 HD_TEXT(c->id))) < 0)
		return rc;
	rc = hd_convstore__rows(
	    &l, &c->nfiles, sizeof(*c->files), st, s, file_row, err);
	c->files = l;
	return rc;
}

void
hd_convstore__files_dispose(hd_conversation_file *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(l[i].agent);
		free(l[i].name);
		free(l[i].media_type);
		free(l[i].content);
	}
	free(l);
}

int
hd_conversation_file_get(hd_conversation_file **out, hd_store *st,
    const char *id, int64_t file_id, hd_err *err)
{
	hd_conversation_file *f = NULL;
	hd_stmt *s;
	char status[32];
	const void *blob;
	size_t blen = 0;
	int rc, src;

	*out = NULL;
	if ((rc = hd_convstore_status(status, sizeof(status), st, id, err)) < 0)
		return rc;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " FILE_COLS ", content FROM conversation_files"
		 " WHERE conversation_id = ?1 AND id = ?2",
		 HD_TEXT(id), HD_INT(file_id))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) != HD_ROW) {
		rc = src == HD_DONE
			 ? hd_err_set(err, HD_ENOTFOUND,
			       "file %lld not found in conversation %.64s",
			       (long long)file_id, id)
			 : hd_store_sqlerr(st, src, err);
		goto done;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL || file_row(f, s) < 0 ||
	    (f->content = malloc((size_t)f->size + 1)) == NULL) {
		rc = hd_convstore__oom(err);
		goto done;
	}
	blob = hd_stmt_blob(s, 7, &blen);
	if (f->size > 0 && blob != NULL && blen >= (size_t)f->size)
		memcpy(f->content, blob, (size_t)f->size);
	*out = f;
	f = NULL;
done:
	hd_store_reset(s);
	hd_conversation_file_free(f);
	return rc;
}
