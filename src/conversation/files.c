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
	hd_stmt *s;
	size_t i;
	int rc, src;

	for (i = 0; i < n; i++) {
		if ((rc = hd_store_prepare(st, &s,
			 "INSERT INTO conversation_files(conversation_id, seq,"
			 " agent, name, media_type, size, content, created_at)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
			 err)) < 0)
			return rc;
		hd_stmt_bind_text(s, 1, conv);
		hd_stmt_bind_int(s, 2, seq);
		hd_stmt_bind_text(s, 3, agent);
		hd_stmt_bind_text(s, 4, files[i].name);
		hd_stmt_bind_text(s, 5, files[i].media_type);
		hd_stmt_bind_int(s, 6, files[i].size);
		hd_stmt_bind_blob(s, 7,
		    files[i].content != NULL ? (const void *)files[i].content
					     : (const void *)"",
		    (size_t)files[i].size);
		hd_stmt_bind_int(s, 8, hd_now_ms());
		src = hd_stmt_step(s);
		hd_store_reset(s);
		if (src != HD_DONE)
			return hd_store_sqlerr(st, src, err);
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

/* Fill f from a row id, seq, agent, name, media_type, size, created_at. */
static int
file_row(hd_conversation_file *f, hd_stmt *s)
{
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
	hd_conversation_file *grown;
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT " FILE_COLS " FROM conversation_files"
		 " WHERE conversation_id = ?1 ORDER BY id",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, c->id);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		grown = realloc(c->files, (c->nfiles + 1) * sizeof(*grown));
		if (grown == NULL) {
			rc = hd_convstore__oom(err);
			break;
		}
		c->files = grown;
		memset(&c->files[c->nfiles], 0, sizeof(*grown));
		if (file_row(&c->files[c->nfiles++], s) < 0) {
			rc = hd_convstore__oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
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
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT " FILE_COLS ", content FROM conversation_files"
		 " WHERE conversation_id = ?1 AND id = ?2",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, id);
	hd_stmt_bind_int(s, 2, file_id);
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
