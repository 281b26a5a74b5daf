/*
 * replies.c -- table conversation_replies (conversation_store.h;
 * migration 5): one reply per delivery (UNIQUE on delivery_id), seq its
 * completion order in the conversation, from 1.
 *  (1) A reply is written only in the engine's reply transaction, after
 *      hd_convstore_answerable said the delivery is running and the
 *      engine's to answer (conversation.h (5)), with the delivery done
 *      and the counters moved in the same transaction.
 * Callers: src/engine/conv_record.c (the reply), record.c
 * (hd_conversation_get).
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Fill a reply from a row of hd_convstore__replies_get. */
static int
reply_fill(void *elem, hd_stmt *s)
{
	hd_conversation_reply *r = elem;

	r->seq = hd_stmt_int(s, 0);
	r->agent = hd_store_col_dup(s, 1);
	r->body = hd_store_col_dup(s, 2);
	r->is_error = hd_stmt_int(s, 3);
	r->delivery_id = hd_stmt_int(s, 4);
	r->at = hd_stmt_int(s, 5);
	return r->agent == NULL || r->body == NULL ? -1 : 0;
}

int
hd_convstore__replies_get(hd_store *st, hd_conversation *c, hd_err *err)
{
	hd_stmt *s;
	void *l = c->replies;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT seq, agent, body, is_error, delivery_id, created_at "
		 "FROM conversation_replies WHERE conversation_id = ?1 "
		 "ORDER BY seq",
		 HD_TEXT(c->id))) < 0)
		return rc;
	rc = hd_convstore__rows(
	    &l, &c->nreplies, sizeof(*c->replies), st, s, reply_fill, err);
	c->replies = l;
	return rc;
}

int
hd_convstore_answerable(int *ours, int64_t *total, int64_t *max,
    int64_t *pending, hd_store *st, int64_t id, const char *owner, hd_err *err)
{
	hd_stmt *s;
	char *state = NULL, *by = NULL;
	int rc, src;

	*ours = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT d.state, c.owner, c.total_messages, c.max_messages,"
		 " c.pending FROM conversation_deliveries d"
		 " JOIN conversations c ON c.id = d.conversation_id"
		 " WHERE d.id = ?1",
		 HD_INT(id))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		state = hd_store_col_dup(s, 0);
		by = hd_store_col_dup(s, 1);
		*total = hd_stmt_int(s, 2);
		*max = hd_stmt_int(s, 3);
		*pending = hd_stmt_int(s, 4);
	}
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	*ours = state != NULL && by != NULL && strcmp(state, "running") == 0 &&
		strcmp(by, owner) == 0;
	free(state);
	free(by);
	return 0;
}

int
hd_convstore_reply_add(hd_store *st, const hd_convstore_reply *r, hd_err *err)
{
	return hd_store_run(st, err,
	    "INSERT INTO conversation_replies(conversation_id, seq,"
	    " delivery_id, agent, body, is_error, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	    HD_TEXT(r->conv), HD_INT(r->seq), HD_INT(r->delivery_id),
	    HD_TEXT(r->agent), HD_TEXT(r->body), HD_INT(r->is_error),
	    HD_INT(r->created_at));
}
