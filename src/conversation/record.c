/*
 * record.c -- table conversations (conversation_store.h; migration 5):
 * one row per conversation, its status, its counters, its owner. The
 * engine (src/engine/conversation.c, cancel.c) decides; this file only
 * reads and writes the rows.
 *  (1) status leaves running once: to completed (hd_convstore_complete,
 *      only with pending 0 and by its owner) or to cancelled
 *      (hd_convstore_cancelled); both UPDATEs name running.
 *  (2) owner changes only by compare-and-set on the owner seen
 *      (hd_convstore_adopt) or by its owner letting go
 *      (hd_convstore_disown); pid and start change with it.
 *  (3) hd_conversation_get reads the row, its replies, deliveries and
 *      files in one read transaction: one snapshot.
 *  (4) Every list this module reads (replies, deliveries, files, agents,
 *      other owners' conversations) grows through hd_convstore__rows: a
 *      row that ran out of memory stays counted, so the list's own free
 *      releases what it holds.
 * Callers: the conversation engine (src/engine/conversation.c,
 * conv_record.c, conv_engine.c, cancel.c), cancel_requests.c, and the
 * surfaces (hd_conversation_get) through conversation.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

int
hd_convstore__oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

int
hd_convstore__rows(void **list, size_t *n, size_t size, hd_store *st,
    hd_stmt *s, int (*fill)(void *elem, hd_stmt *s), hd_err *err)
{
	unsigned char *grown;
	int rc = 0, src;

	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if ((grown = realloc(*list, (*n + 1) * size)) == NULL) {
			rc = hd_convstore__oom(err);
			break;
		}
		*list = grown;
		memset(grown + *n * size, 0, size);
		if (fill(grown + (*n)++ * size, s) < 0) {
			rc = hd_convstore__oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* ---- reading ------------------------------------------------------------ */

void
hd_conversation_free(hd_conversation *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->id);
	free(c->team_id);
	free(c->origin);
	free(c->status);
	free(c->message);
	free(c->target);
	free(c->response);
	for (i = 0; i < c->nreplies; i++) {
		free(c->replies[i].agent);
		free(c->replies[i].body);
	}
	free(c->replies);
	for (i = 0; i < c->ndeliveries; i++) {
		hd_conversation_delivery *d = &c->deliveries[i];

		free(d->to_agent);
		free(d->from_agent);
		free(d->body);
		free(d->prompt);
		free(d->state);
	}
	free(c->deliveries);
	hd_convstore__files_dispose(c->files, c->nfiles);
	free(c);
}

struct get_txn {
	const char *id;
	hd_conversation *c;
};

static int
get_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct get_txn *g = payload;
	hd_conversation *c;
	hd_stmt *s;
	int rc, src;

	hd_conversation_free(g->c);
	g->c = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, team_id, origin, status, message, target, pending,"
		 " total_messages, max_messages, created_at, completed_at,"
		 " response FROM conversations WHERE id = ?1",
		 HD_TEXT(g->id))) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src != HD_ROW) {
		rc = src == HD_DONE
			 ? hd_err_set(err, HD_ENOTFOUND,
			       "conversation \"%.64s\" not found", g->id)
			 : hd_store_sqlerr(st, src, err);
		hd_store_reset(s);
		return rc;
	}
	if ((c = g->c = calloc(1, sizeof(*c))) == NULL) {
		hd_store_reset(s);
		return hd_convstore__oom(err);
	}
	c->id = hd_store_col_dup(s, 0);
	c->team_id = hd_store_col_dup(s, 1);
	c->origin = hd_store_col_dup(s, 2);
	c->status = hd_store_col_dup(s, 3);
	c->message = hd_store_col_dup(s, 4);
	c->target = hd_store_col_dup(s, 5);
	c->pending = hd_stmt_int(s, 6);
	c->total_messages = hd_stmt_int(s, 7);
	c->max_messages = hd_stmt_int(s, 8);
	c->created_at = hd_stmt_int(s, 9);
	c->completed_at = hd_stmt_int(s, 10);
	c->response = hd_store_col_dup(s, 11);
	hd_store_reset(s);
	if (c->id == NULL || c->team_id == NULL || c->origin == NULL ||
	    c->status == NULL || c->message == NULL || c->target == NULL)
		return hd_convstore__oom(err);
	if ((rc = hd_convstore__replies_get(st, c, err)) < 0 ||
	    (rc = hd_convstore__deliveries_get(st, c, err)) < 0)
		return rc;
	return hd_convstore__files_get(st, c, err);
}

int
hd_conversation_get(
    hd_conversation **out, hd_store *st, const char *id, hd_err *err)
{
	struct get_txn g = {id, NULL};
	int rc;

	*out = NULL;
	if ((rc = hd_store_read(st, get_txn_fn, &g, err)) < 0) {
		hd_conversation_free(g.c);
		return rc;
	}
	*out = g.c;
	return 0;
}

int
hd_convstore_status(
    char *out, size_t outlen, hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT status FROM conversations WHERE id = ?1",
		 HD_TEXT(id))) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src == HD_ROW)
		snprintf(out, outlen, "%s", hd_stmt_text(s, 0));
	else
		rc = src == HD_DONE
			 ? hd_err_set(err, HD_ENOTFOUND,
			       "conversation \"%.64s\" not found", id)
			 : hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_convstore_head_get(
    hd_convstore_head *out, hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT status, team_id, owner, owner_pid, owner_start,"
		 " total_messages, pending FROM conversations WHERE id = ?1",
		 HD_TEXT(id))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		snprintf(
		    out->status, sizeof(out->status), "%s", hd_stmt_text(s, 0));
		snprintf(
		    out->team, sizeof(out->team), "%s", hd_stmt_text(s, 1));
		out->owner = hd_store_col_dup(s, 2);
		out->owner_pid = hd_stmt_int(s, 3);
		out->owner_start = hd_stmt_int(s, 4);
		out->total_messages = hd_stmt_int(s, 5);
		out->pending = hd_stmt_int(s, 6);
	}
	hd_store_reset(s);
	if (src == HD_DONE)
		return hd_err_set(
		    err, HD_ENOTFOUND, "conversation \"%s\" not found", id);
	if (src != HD_ROW)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

/* The agents with a message not answered yet, each once, in arrival
 * order: who a running conversation waits for. */
static json_t *
waiting_for(const hd_conversation *c)
{
	json_t *a = json_array();
	size_t i, j;

	for (i = 0; i < c->ndeliveries; i++) {
		const char *to = c->deliveries[i].to_agent;

		if (strcmp(c->deliveries[i].state, "done") == 0)
			continue;
		for (j = 0; j < json_array_size(a); j++)
			if (strcmp(json_string_value(json_array_get(a, j)),
				to) == 0)
				break;
		if (j == json_array_size(a))
			json_array_append_new(a, json_string(to));
	}
	return a;
}

json_t *
hd_conversation_to_json(const hd_conversation *c)
{
	json_t *replies = json_array(), *files = json_array(), *j;
	size_t i;

	for (i = 0; i < c->nreplies; i++)
		json_array_append_new(replies,
		    json_pack("{s:s, s:s, s:I, s:I, s:b}", "agent",
			c->replies[i].agent, "body", c->replies[i].body, "at",
			(json_int_t)c->replies[i].at, "seq",
			(json_int_t)c->replies[i].seq, "isError",
			c->replies[i].is_error));
	j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "id", c->id, "teamId",
	    c->team_id, "status", c->status, "pending", (json_int_t)c->pending,
	    "totalMessages", (json_int_t)c->total_messages, "replies", replies);
	for (i = 0; i < c->nfiles; i++)
		json_array_append_new(
		    files, hd_conversation_file_to_json(&c->files[i]));
	json_object_set_new(j, "files", files);
	json_object_set_new(j, "response",
	    c->response != NULL ? json_string(c->response) : json_null());
	json_object_set_new(j, "createdAt", json_integer(c->created_at));
	json_object_set_new(j, "completedAt",
	    c->completed_at != 0 ? json_integer(c->completed_at) : json_null());
	json_object_set_new(j, "message", json_string(c->message));
	json_object_set_new(j, "waitingFor", waiting_for(c));
	return j;
}

/* ---- writing ------------------------------------------------------------ */

int
hd_convstore_insert(hd_store *st, const hd_convstore_new *n, hd_err *err)
{
	return hd_store_run(st, err,
	    "INSERT INTO conversations(id, team_id, origin, status,"
	    " pending, total_messages, created_at, message, target,"
	    " max_messages, owner, owner_pid, owner_start)"
	    " VALUES (?1, ?2, ?3, 'running', 1, 0, ?4, ?5, ?6, ?7, ?8, ?9,"
	    " ?10)",
	    HD_TEXT(n->id), HD_TEXT(n->team), HD_TEXT(n->origin),
	    HD_INT(n->created_at), HD_TEXT(n->message), HD_TEXT(n->target),
	    HD_INT(n->max_messages), HD_TEXT(n->owner), HD_INT(n->owner_pid),
	    HD_INT(n->owner_start));
}

int
hd_convstore_set_counts(
    hd_store *st, const char *id, int64_t total, int64_t pending, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversations SET total_messages = ?2, pending = ?3"
	    " WHERE id = ?1",
	    HD_TEXT(id), HD_INT(total), HD_INT(pending));
}

int
hd_convstore_complete(int *changed, hd_store *st, const char *id,
    const char *response, int64_t now, const char *owner, hd_err *err)
{
	int rc;

	*changed = 0;
	if ((rc = hd_store_run(st, err,
		 "UPDATE conversations SET status = 'completed', response = ?2,"
		 " completed_at = ?3 WHERE id = ?1 AND status = 'running'"
		 " AND pending = 0 AND owner = ?4",
		 HD_TEXT(id), HD_TEXT(response), HD_INT(now),
		 HD_TEXT(owner))) < 0)
		return rc;
	*changed = hd_store_changes(st) != 0;
	return 0;
}

int
hd_convstore_cancelled(hd_store *st, const char *id, const char *response,
    int64_t now, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversations SET status = 'cancelled', response = ?2,"
	    " completed_at = ?3 WHERE id = ?1 AND status = 'running'",
	    HD_TEXT(id), HD_TEXT(response), HD_INT(now));
}

int
hd_convstore_adopt(int *changed, hd_store *st, const char *id,
    const char *old_owner, const char *owner, int64_t pid, int64_t start,
    hd_err *err)
{
	int rc;

	*changed = 0;
	if ((rc = hd_store_run(st, err,
		 "UPDATE conversations SET owner = ?2, owner_pid = ?3,"
		 " owner_start = ?4 WHERE id = ?1 AND status = 'running'"
		 " AND owner IS ?5",
		 HD_TEXT(id), HD_TEXT(owner), HD_INT(pid), HD_INT(start),
		 HD_TEXT(old_owner))) < 0)
		return rc;
	*changed = hd_store_changes(st) != 0;
	return 0;
}

int
hd_convstore_disown(hd_store *st, const char *owner, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversations SET owner = NULL, owner_pid = NULL,"
	    " owner_start = NULL WHERE owner = ?1 AND status = 'running'",
	    HD_TEXT(owner));
}

int
hd_convstore_pending_team(int64_t *pending, char *team, size_t teamlen,
    hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT pending, team_id FROM conversations WHERE id = ?1",
		 HD_TEXT(id))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		*pending = hd_stmt_int(s, 0);
		snprintf(team, teamlen, "%s", hd_stmt_text(s, 1));
	}
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

/* ---- other owners' conversations ---------------------------------------- */

void
hd_convstore_foreign_free(hd_convstore_foreign *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].owner);
	free(l);
}

struct foreign_txn {
	const char *owner;
	hd_convstore_foreign *l;
	size_t n;
};

/* A row id, owner (NULL when none), owner_pid, owner_start. */
static int
foreign_fill(void *elem, hd_stmt *s)
{
	hd_convstore_foreign *f = elem;

	snprintf(f->id, sizeof(f->id), "%s", hd_stmt_text(s, 0));
	f->owner = hd_store_col_dup(s, 1);
	f->pid = hd_stmt_int(s, 2);
	f->start = hd_stmt_int(s, 3);
	return 0;
}

static int
foreign_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct foreign_txn *t = payload;
	hd_stmt *s;
	void *l;
	int rc;

	hd_convstore_foreign_free(t->l, t->n);
	t->l = NULL;
	t->n = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, owner, owner_pid, owner_start FROM conversations"
		 " WHERE status = 'running' AND (owner IS NULL OR owner != ?1)"
		 " ORDER BY created_at",
		 HD_TEXT(t->owner))) < 0)
		return rc;
	l = t->l;
	rc = hd_convstore__rows(&l, &t->n, sizeof(*t->l), st, s, foreign_fill,
	    err);
	t->l = l;
	return rc;
}

int
hd_convstore_foreign_list(hd_convstore_foreign **out, size_t *n, hd_store *st,
    const char *owner, hd_err *err)
{
	struct foreign_txn t = {owner, NULL, 0};
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = hd_store_read(st, foreign_txn_fn, &t, err)) < 0) {
		hd_convstore_foreign_free(t.l, t.n);
		return rc;
	}
	*out = t.l;
	*n = t.n;
	return 0;
}

int
hd_convstore_team_count(int64_t *n, hd_store *st, const char *team, hd_err *err)
{
	int rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM conversations WHERE team_id = ?1", HD_TEXT(team));

	return rc < 0 ? rc : 0;
}

int
hd_convstore_team_purge(hd_store *st, const char *team, hd_err *err)
{
	int rc;

	if ((rc = hd_store_run(st, err,
		 "DELETE FROM cancel_requests WHERE team_id = ?1",
		 HD_TEXT(team))) < 0)
		return rc;
	return hd_store_run(st, err,
	    "DELETE FROM conversations WHERE team_id = ?1", HD_TEXT(team));
}
