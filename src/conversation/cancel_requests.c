/*
 * cancel_requests.c -- table cancel_requests (cancel_requests.h;
 * migration 15): the requests to stop a running conversation or exchange,
 * written by whoever asks, in any process, and read by the engine that
 * runs the work (src/engine/cancel.c).
 *  (1) One row per (kind, target), INSERT OR IGNORE: asking twice is
 *      asking once. A conversation's target is its id; an exchange's is
 *      the holder of its room lock, so a request never reaches the room's
 *      next exchange.
 *  (2) A request is refused, in the asker's write transaction, when
 *      there is nothing running to cancel; the row and the check commit
 *      together.
 *  (3) Table conversations (record.c) is read here, never written. An
 *      exchange's request is asked and looked up by the room lock
 *      (room/lock.c), which finds the holder in its own table and calls
 *      hd_cancel_request_add / hd_cancel_request_exists.
 * Callers: src/engine/cancel.c (requests, the watch's lookups, who asked),
 * src/room/lock.c (an exchange's request).
 */
#include <stdio.h>
#include <string.h>

#include <huddle/cancel_requests.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "store_int.h"

int
hd_cancel_request_add(hd_store *st, const char *kind, const char *target,
    const char *team, const char *by, hd_err *err)
{
	return hd_store_run(st, err,
	    "INSERT OR IGNORE INTO cancel_requests (kind, target,"
	    " team_id, requested_by, requested_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)",
	    HD_TEXT(kind), HD_TEXT(target), HD_TEXT(team), HD_TEXT(by),
	    HD_INT(hd_now_ms()));
}

int
hd_cancel_request_conversation(hd_convstore_head *head, hd_store *st,
    const char *id, const char *by, hd_err *err)
{
	int rc;

	if ((rc = hd_convstore_head_get(head, st, id, err)) < 0)
		return rc;
	if (strcmp(head->status, "running") != 0)
		return hd_err_set(err, HD_ECONFLICT,
		    "conversation %s already ended (%s)", id, head->status);
	return hd_cancel_request_add(st, "conversation", id, head->team, by, err);
}

int
hd_cancel_request_by(char **by, hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*by = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT requested_by FROM cancel_requests"
		 " WHERE kind = 'conversation' AND target = ?1",
		 HD_TEXT(id))) < 0)
		return rc;
	if (hd_stmt_step(s) == HD_ROW)
		*by = hd_store_col_dup(s, 0);
	hd_store_reset(s);
	return 0;
}

int
hd_cancel_requests_owned(char (*ids)[HD_CONVERSATION_ID_LEN + 1], size_t max,
    size_t *n, int *more, hd_store *st, const char *owner, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*n = 0;
	*more = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT c.id FROM cancel_requests r JOIN conversations c"
		 " ON c.id = r.target WHERE r.kind = 'conversation'"
		 " AND c.status = 'running' AND c.owner = ?1",
		 HD_TEXT(owner))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW && *n < max) {
		snprintf(ids[*n], sizeof(ids[0]), "%s", hd_stmt_text(s, 0));
		(*n)++;
	}
	hd_store_reset(s);
	*more = src == HD_ROW; /* more than fit */
	return 0;
}

int
hd_cancel_request_exists(int *out, hd_store *st, const char *kind,
    const char *target, hd_err *err)
{
	int64_t one;
	int rc;

	*out = 0;
	if ((rc = hd_store_get_int(st, &one, err,
		 "SELECT 1 FROM cancel_requests WHERE kind = ?1"
		 " AND target = ?2",
		 HD_TEXT(kind), HD_TEXT(target))) < 0)
		return rc;
	*out = rc == 1;
	return 0;
}
