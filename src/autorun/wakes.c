/*
 * wakes.c -- the supervisor's queue (wake.h): table wakes (migration 12).
 * This module owns it; nothing else writes it (the team module purges it
 * with a team). wake.h states its invariants; here:
 *  (1) keys are UNIQUE per agent and inserted with OR IGNORE, so a wake
 *      queued twice is one row, and wake_queued is emitted once;
 *  (2) every move of a wake's state is one UPDATE conditional on the
 *      state it leaves, so two engines cannot move a wake twice;
 *  (3) the open wakes are read through index wakes_open (its condition
 *      repeated in the query, which lets the planner use the partial
 *      index).
 * Every function runs inside its caller's transaction.
 * Callers: the supervisor (src/engine/wake.c, sv_turn.c, sv_hand.c,
 * supervisor.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/util.h>
#include <huddle/wake.h>

#include "autorun_int.h"

void
hd_wake_dispose(hd_wake *w)
{
	free(w->note);
	memset(w, 0, sizeof(*w));
}

/* ---- queueing (1) ------------------------------------------------------ */

int
hd_wake_add(int *added, hd_store *st, const char *team, const char *agent,
    const char *reason, int64_t ref, const char *key, const char *note,
    int64_t *id, hd_err *err)
{
	int rc;

	*added = 0;
	if ((rc = hd_store_run(st, err,
		 "INSERT OR IGNORE INTO wakes(team_id, agent_id, reason, ref,"
		 " key, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		 HD_TEXT(team), HD_TEXT(agent), HD_TEXT(reason),
		 HD_INT_OR_NULL(ref > 0, ref), HD_TEXT(key), HD_TEXT(note),
		 HD_INT(hd_now_ms()))) < 0)
		return rc;
	if ((*added = hd_store_changes(st) > 0)) {
		if (id != NULL)
			*id = hd_store_last_id(st);
		hd_events_append(st, "wake_queued", team, 0, agent,
		    ref > 0 ? json_pack("{s:s, s:s, s:I}", "agent", agent,
				  "reason", reason, "ref", (json_int_t)ref)
			    : json_pack("{s:s, s:s, s:n}", "agent", agent,
				  "reason", reason, "ref"));
	}
	return 0;
}

int
hd_wake_seen(
    int *seen, hd_store *st, const char *agent, const char *key, hd_err *err)
{
	int64_t one;
	int rc;

	rc = hd_store_get_int(st, &one, err,
	    "SELECT 1 FROM wakes WHERE agent_id = ?1 AND key = ?2",
	    HD_TEXT(agent), HD_TEXT(key));
	*seen = rc > 0;
	return rc < 0 ? rc : 0;
}

int
hd_wake_open_count(int64_t *n, hd_store *st, const char *agent, hd_err *err)
{
	int rc;

	*n = 0;
	rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM wakes WHERE agent_id = ?1"
	    " AND (status = 'queued' OR status = 'running')",
	    HD_TEXT(agent));
	return rc < 0 ? rc : 0;
}

int
hd_wake_offered(
    int *open, hd_store *st, const char *team, const char *key, hd_err *err)
{
	int64_t one;
	int rc;

	rc = hd_store_get_int(st, &one, err,
	    "SELECT 1 FROM wakes WHERE team_id = ?1 AND key = ?2"
	    " AND (status = 'queued' OR status = 'running')",
	    HD_TEXT(team), HD_TEXT(key));
	*open = rc > 0;
	return rc < 0 ? rc : 0;
}

/* ---- reading the queue (3) --------------------------------------------- */

static void
agent_fill(void *elem, hd_stmt *s)
{
	hd_wake_agent *q = elem;

	snprintf(q->agent, sizeof(q->agent), "%s", hd_stmt_text(s, 0));
}

int
hd_wake_agents(hd_wake_agent **out, size_t *n, hd_store *st, hd_err *err)
{
	hd_stmt *s;
	void *v;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT DISTINCT agent_id FROM wakes INDEXED BY wakes_open"
		 " WHERE (status = 'queued' OR status = 'running')"
		 " AND status = 'queued' ORDER BY agent_id",
		 err)) < 0 ||
	    (rc = hd_autorun__collect(
		 &v, n, sizeof(**out), st, s, agent_fill, err)) < 0)
		return rc;
	*out = v;
	return 0;
}

int
hd_wake_queued(hd_wake *v, size_t max, size_t *n, hd_store *st,
    const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*n = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, reason, ref, note, turn_id FROM wakes"
		 " INDEXED BY wakes_open WHERE agent_id = ?1"
		 " AND (status = 'queued' OR status = 'running')"
		 " AND status = 'queued' ORDER BY id LIMIT ?2",
		 HD_TEXT(agent), HD_INT(max))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW && *n < max) {
		hd_wake *w = &v[(*n)++];

		memset(w, 0, sizeof(*w));
		w->id = hd_stmt_int(s, 0);
		snprintf(w->reason, sizeof(w->reason), "%s",
		    hd_stmt_text(s, 1));
		w->ref = hd_stmt_int(s, 2);
		w->note = hd_store_col_dup(s, 3);
		w->resumed = !hd_stmt_is_null(s, 4);
	}
	hd_store_reset(s);
	return src == HD_DONE || src == HD_ROW ? 0
					       : hd_store_sqlerr(st, src, err);
}

int
hd_wake_queue_json(json_t **out, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*out = json_array();
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, reason, ref, note, created_at, turn_id FROM wakes"
		 " INDEXED BY wakes_open WHERE agent_id = ?1"
		 " AND (status = 'queued' OR status = 'running')"
		 " AND status = 'queued' ORDER BY id",
		 HD_TEXT(agent))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW)
		json_array_append_new(*out,
		    json_pack("{s:o, s:o, s:o, s:o, s:o, s:b}", "id",
			hd_autorun__col_int(s, 0), "reason",
			hd_autorun__col_text(s, 1), "ref",
			hd_autorun__col_int(s, 2), "note",
			hd_autorun__col_text(s, 3), "created_at",
			hd_autorun__col_int(s, 4), "resumed",
			!hd_stmt_is_null(s, 5)));
	hd_store_reset(s);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

/* ---- moving wakes (2) -------------------------------------------------- */

int
hd_wake_drop(hd_store *st, int64_t id, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE wakes SET status = 'dropped' WHERE id = ?1"
	    " AND status = 'queued'",
	    HD_INT(id));
}

int
hd_wake_drop_all(hd_store *st, const char *agent, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE wakes SET status = 'dropped'"
	    " WHERE agent_id = ?1 AND status = 'queued'",
	    HD_TEXT(agent));
}

int
hd_wake_run(hd_store *st, int64_t id, int64_t turn_id, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE wakes SET status = 'running', turn_id = ?2"
	    " WHERE id = ?1 AND status = 'queued'",
	    HD_INT(id), HD_INT(turn_id));
}

/* The wakes turn_id was running leave running, for state. */
static int
turn_wakes_to(hd_store *st, int64_t turn_id, const char *state, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE wakes SET status = ?2 WHERE turn_id = ?1"
	    " AND status = 'running'",
	    HD_INT(turn_id), HD_TEXT(state));
}

int
hd_wake_finish(hd_store *st, int64_t turn_id, hd_err *err)
{
	return turn_wakes_to(st, turn_id, "done", err);
}

int
hd_wake_requeue(hd_store *st, int64_t turn_id, hd_err *err)
{
	return turn_wakes_to(st, turn_id, "queued", err);
}
