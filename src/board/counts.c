/*
 * counts.c -- task counts by status for one team (the team-state block,
 * SPEC 6). Reads table `tasks`, which the board owns; writes nothing.
 *  (1) One GROUP BY over the team's tasks in one statement, so the counts
 *      come from a single snapshot.
 *  (2) A status the schema does not know cannot occur (CHECK constraint);
 *      were it to, it is not counted anywhere.
 *  (3) hd_board_each_open hands over an owner's claimed and in_progress
 *      tasks, oldest first, straight from their rows (the tasks_owner
 *      index): id, subject and status only, no dependencies read;
 *      hd_board_last_finished the one it finished last, the same way;
 *      hd_board_has_started only whether it holds one in_progress, one
 *      index probe whatever it holds (an owner may hold thousands).
 * Callers: hd_team_snapshot_get and hd_team_context (src/lifecycle/state.c),
 * the status rules (src/presence/activity.c, through hd_board_work).
 */
#include <string.h>

#include <huddle/board.h>
#include <huddle/util.h>

#include <store/store.h>

int
hd_board_counts(
    hd_task_counts *out, hd_store *st, const char *team, hd_err *err)
{
	hd_stmt *s;
	const char *status;
	int64_t n;
	int rc, src;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT status, COUNT(*) FROM tasks WHERE team_id = ?"
		 " GROUP BY status",
		 HD_TEXT(team))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		status = hd_stmt_text(s, 0);
		n = hd_stmt_int(s, 1);
		if (status == NULL)
			continue;
		if (strcmp(status, "pending") == 0)
			out->pending = n;
		else if (strcmp(status, "claimed") == 0)
			out->claimed = n;
		else if (strcmp(status, "in_progress") == 0)
			out->in_progress = n;
		else if (strcmp(status, "completed") == 0)
			out->completed = n;
		else if (strcmp(status, "failed") == 0)
			out->failed = n;
		else if (strcmp(status, "cancelled") == 0)
			out->cancelled = n;
		else if (strcmp(status, "verifying") == 0)
			out->verifying = n;
	}
	hd_store_reset(s);
	if (src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

/* Hand each row of sql (id, subject, status; ?1 the owner, ?2 the team)
 * to fn until it stops. */
static int
each_task(hd_store *st, const char *sql, const char *team, const char *owner,
    hd_board_open_fn fn, void *ctx, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_store_query(st, &s, err, sql, HD_TEXT(owner),
		 HD_TEXT(team))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW && rc == 0)
		rc = fn(ctx, hd_stmt_int(s, 0),
		    hd_stmt_text(s, 1),
		    hd_stmt_text(s, 2), err);
	if (rc == 0 && src != HD_ROW && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_board_each_open(hd_store *st, const char *team, const char *owner,
    hd_board_open_fn fn, void *ctx, hd_err *err)
{
	return each_task(st,
	    "SELECT id, subject, status FROM tasks"
	    " WHERE owner = ?1 AND status IN ('claimed', 'in_progress')"
	    " AND team_id = ?2 ORDER BY id",
	    team, owner, fn, ctx, err);
}

int
hd_board_last_finished(hd_store *st, const char *team, const char *owner,
    hd_board_open_fn fn, void *ctx, hd_err *err)
{
	return each_task(st,
	    "SELECT id, subject, status FROM tasks"
	    " WHERE owner = ?1 AND status IN ('completed', 'failed')"
	    " AND team_id = ?2 ORDER BY completed_at DESC, id DESC"
	    " LIMIT 1",
	    team, owner, fn, ctx, err);
}

int
hd_board_has_started(
    int *yes, hd_store *st, const char *team, const char *owner, hd_err *err)
{
	int64_t one;
	int rc;

	*yes = 0;
	if ((rc = hd_store_get_int(st, &one, err,
		 "SELECT 1 FROM tasks WHERE owner = ?1 AND status = "
		 "'in_progress' AND team_id = ?2 LIMIT 1",
		 HD_TEXT(owner), HD_TEXT(team))) < 0)
		return rc;
	*yes = rc; /* 1: a row */
	return 0;
}
