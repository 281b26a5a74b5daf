/*
 * deps.c -- a dependency added to an existing task (hd_board_link).
 *  (1) task_deps stays acyclic and within one team: an edge that would
 *      close a cycle (found by a recursive CTE) or cross teams is
 *      refused, in the write transaction that would add it (board.c (3)).
 *  (2) Linking an existing edge again changes nothing and reflects
 *      nothing.
 * Callers: the CLI (task link), MCP tools, HTTP routes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>

#include "tasks_int.h"

/* ---- dependencies ----------------------------------------------------------
 */

static int
board_link_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	hd_task *dep = NULL;
	char *team = NULL;
	int64_t cycle = 0;
	int rc;

	if ((rc = hd_board__task_team(&team, st, b->id, err)) < 0)
		goto done;
	if ((rc = hd_board__task_load(&dep, st, b->dep, 0, err)) < 0)
		goto done;
	if (dep == NULL || strcmp(dep->team_id, team) != 0) {
		rc = hd_err_set(err, HD_ENOTFOUND,
		    "unknown dependency: task %" PRId64, b->dep);
		goto done;
	}
	if ((rc = hd_board__actor_member(st, team, b->actor, err)) < 0)
		goto done;
	/* Does dep already (transitively) depend on id? dep == id counts. */
	if ((rc = hd_store_get_int(st, &cycle, err,
		 "WITH RECURSIVE up(id) AS (SELECT CAST(?1 AS BIGINT)"
		 " UNION SELECT d.depends_on FROM task_deps d"
		 "   JOIN up ON d.task_id = up.id)"
		 " SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2)",
		 HD_INT(b->dep), HD_INT(b->id))) < 0)
		goto done;
	if (cycle) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "linking task %" PRId64 " to task %" PRId64
		    " would create a circular dependency",
		    b->id, b->dep);
		goto done;
	}
	if ((rc = hd_store_run(st, err,
		 "INSERT OR IGNORE INTO task_deps(task_id, depends_on)"
		 " VALUES (?, ?)",
		 HD_INT(b->id), HD_INT(b->dep))) < 0)
		goto done;
	b->changed = hd_store_changes(st) > 0;
	if (b->changed) {
		if ((rc = hd_store_run(st, err,
			 "UPDATE tasks SET updated_at = ? WHERE id = ?",
			 HD_INT(hd_now_ms()), HD_INT(b->id))) < 0)
			goto done;
		hd_events_append(st, "dep_linked", team, b->id,
		    event_agent(b->actor),
		    json_pack("{s:I, s:s}", "depends_on", (json_int_t)b->dep,
			"by", is_user(b->actor) ? HD_BOARD_USER : b->actor));
	}
	if ((b->dep_subject = strdup(dep->subject)) == NULL) {
		rc = oom(err);
		goto done;
	}
	rc = hd_board__task_load(&b->task, st, b->id, 0, err);
done:
	free(team);
	hd_task_free(dep);
	return rc;
}

int
hd_board_link(hd_task **out, hd_store *st, int64_t id, int64_t dep,
    const char *actor, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.dep = dep;
	b.actor = actor;
	return hd_board__write_task(
	    out, st, board_link_txn, &b, HD_BOARD__LINKED, err);
}
