/*
 * create.c -- a new task on the board (hd_board_create).
 *  (1) Everything checkable without the database is checked first
 *      (hd_board__create_check), then in one write transaction: the
 *      creator's membership, the parent and the team's caps (board.c
 *      (7): open children, depth, root tasks per window), the
 *      dependencies (existing tasks of the same team, which cannot close
 *      a cycle: board.c (3)), the critic's membership, the insert and
 *      its event (board.c (5)).
 *  (2) A refusal at any step writes nothing. Every refusal comes before
 *      the task's INSERT: on PostgreSQL a rolled-back insert still uses
 *      up its id (an identity sequence), and a refusal after it would
 *      leave a gap in the team's task numbers that SQLite never has.
 * Callers: the CLI, MCP, HTTP; hd_board_delegate (claim.c) for its first
 * step.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "tasks_int.h"

/* ---- create ----------------------------------------------------------------
 */

/*
 * The parent rules and caps of a subtask of spec->parent_id (7): a task
 * of the same team, not completed or cancelled, with fewer open or
 * failed children than max_children, and shallow enough that the new
 * task's depth stays within max_task_depth.
 */
static int
create_parent_check(
    hd_store *st, const hd_task_spec *spec, const hd_team *team, hd_err *err)
{
	hd_task *p = NULL;
	int64_t n = 0, depth = 0;
	int rc;

	if ((rc = hd_board__task_load(&p, st, spec->parent_id, 0, err)) < 0)
		return rc;
	if (p == NULL || strcmp(p->team_id, spec->team) != 0) {
		rc = hd_err_set(err, HD_ENOTFOUND,
		    "unknown parent: task %" PRId64, spec->parent_id);
		goto done;
	}
	if (strcmp(p->status, "completed") == 0 ||
	    strcmp(p->status, "cancelled") == 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "cannot add a subtask to task %" PRId64 ": it is %s", p->id,
		    p->status);
		goto done;
	}
	if ((rc = hd_store_get_int(st, &n, err,
		 "SELECT COUNT(*) FROM tasks WHERE parent_id = ?1"
		 " AND status NOT IN ('completed', 'cancelled')",
		 HD_INT(p->id))) < 0)
		goto done;
	if (n >= team->max_children) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " already has %" PRId64 " subtask%s (the "
		    "team's max_children); finish or cancel some, or raise it "
		    "with huddle team update %s --max-children N",
		    p->id, n, n == 1 ? "" : "s", team->id);
		goto done;
	}
	/* the parent's depth: how many ancestors it has */
	if ((rc = hd_store_get_int(st, &depth, err,
		 "WITH RECURSIVE up(id, d) AS (SELECT parent_id, 1 FROM tasks"
		 "   WHERE id = ?1 AND parent_id IS NOT NULL"
		 " UNION ALL SELECT t.parent_id, up.d + 1 FROM tasks t"
		 "   JOIN up ON t.id = up.id WHERE t.parent_id IS NOT NULL"
		 "   AND up.d <= 100)"
		 " SELECT COALESCE(MAX(d), 0) FROM up",
		 HD_INT(p->id))) < 0)
		goto done;
	rc = 0; /* not hd_store_get_int's 1 (a row) */
	if (depth + 1 > team->max_task_depth)
		rc = hd_err_set(err, HD_EREFUSED,
		    "a subtask of task %" PRId64 " would be at depth %" PRId64
		    ", deeper than the team's max_task_depth %d (a root task "
		    "is at depth 0); add it under a shallower task, or raise "
		    "it with huddle team update %s --max-task-depth N",
		    p->id, depth + 1, team->max_task_depth, team->id);
done:
	hd_task_free(p);
	return rc;
}

/* The cap on root tasks an agent creates per window (7); a user is not
 * capped. */
static int
create_roots_check(
    hd_store *st, const hd_task_spec *spec, const hd_team *team, hd_err *err)
{
	int64_t n = 0;
	int rc;

	if (spec->parent_id > 0 || is_user(spec->created_by))
		return 0;
	if ((rc = hd_store_get_int(st, &n, err,
		 "SELECT COUNT(*) FROM tasks WHERE team_id = ?1"
		 " AND created_by = ?2 AND parent_id IS NULL"
		 " AND created_at > ?3",
		 HD_TEXT(spec->team), HD_TEXT(spec->created_by),
		 HD_INT(hd_now_ms() -
		     (int64_t)team->new_roots_window_s * 1000))) < 0)
		return rc;
	if (n >= team->max_new_roots)
		return hd_err_set(err, HD_EREFUSED,
		    "%s already created %" PRId64 " root task%s in the last %d "
		    "s (the team's max_new_roots); make this a subtask of one "
		    "of them, wait, or raise it with huddle team update %s "
		    "--max-new-roots N",
		    spec->created_by, n, n == 1 ? "" : "s",
		    team->new_roots_window_s, team->id);
	return 0;
}

int
hd_board__create_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	const hd_task_spec *spec = b->spec;
	hd_team *team = NULL;
	json_t *deps = NULL;
	char *meta = NULL, *dteam = NULL;
	int64_t id, now = hd_now_ms();
	size_t i;
	int rc;

	if ((rc = hd_team_get(&team, st, spec->team, err)) < 0 ||
	    (rc = hd_board__actor_member(st, spec->team, spec->created_by, err)) < 0)
		goto done;
	for (i = 0; i < spec->ndepends_on; i++) {
		rc = hd_board__task_team(&dteam, st, spec->depends_on[i], err);
		if (rc == HD_ENOTFOUND ||
		    (rc == 0 && strcmp(dteam, spec->team) != 0))
			rc = hd_err_set(err, HD_ENOTFOUND,
			    "unknown dependency: task %" PRId64,
			    spec->depends_on[i]);
		free(dteam);
		dteam = NULL;
		if (rc < 0)
			goto done;
	}
	if ((spec->parent_id > 0 &&
		(rc = create_parent_check(st, spec, team, err)) < 0) ||
	    (rc = create_roots_check(st, spec, team, err)) < 0 ||
	    (rc = hd_board__verify_member(st, spec, err)) < 0)
		goto done;
	meta = spec->metadata != NULL ? json_dumps(spec->metadata,
					    JSON_COMPACT | JSON_PRESERVE_ORDER)
				      : strdup("{}");
	if (meta == NULL) {
		rc = oom(err);
		goto done;
	}
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO tasks(team_id, subject, description, active_form,"
		 " priority, metadata, created_by, created_at, updated_at,"
		 " parent_id)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 HD_TEXT(spec->team), HD_TEXT(spec->subject),
		 HD_TEXT(spec->description ? spec->description : ""),
		 HD_TEXT(spec->active_form), HD_INT(spec->priority),
		 HD_TEXT(meta),
		 HD_TEXT(is_user(spec->created_by) ? HD_BOARD_USER
						   : spec->created_by),
		 HD_INT(now), HD_INT(now),
		 HD_INT_OR_NULL(spec->parent_id > 0, spec->parent_id))) < 0)
		goto done;
	id = hd_store_last_id(st);
	if ((rc = hd_board__verify_insert(st, id, spec, err)) < 0)
		goto done;
	deps = json_array();
	for (i = 0; i < spec->ndepends_on; i++)
		if ((rc = hd_store_run(st, err,
			 "INSERT OR IGNORE INTO task_deps(task_id, depends_on)"
			 " VALUES (?, ?)",
			 HD_INT(id), HD_INT(spec->depends_on[i]))) < 0)
			goto done;
	if ((rc = hd_board__task_load(&b->task, st, id, 0, err)) < 0)
		goto done;
	for (i = 0; i < b->task->ndepends_on; i++)
		json_array_append_new(
		    deps, json_integer(b->task->depends_on[i]));
	hd_events_append(st, "task_created", spec->team, id,
	    event_agent(spec->created_by),
	    json_pack("{s:s, s:I, s:O, s:s, s:o}", "subject", spec->subject,
		"priority", (json_int_t)spec->priority, "depends_on", deps,
		"by",
		is_user(spec->created_by) ? HD_BOARD_USER : spec->created_by,
		"parent_id",
		spec->parent_id > 0 ? json_integer(spec->parent_id)
				    : json_null()));
	b->changed = 1;
done:
	json_decref(deps);
	free(meta);
	hd_team_free(team);
	return rc;
}

/* Everything about a new task that can be checked without the
 * database (5). */
int
hd_board__create_check(const hd_task_spec *spec, hd_err *err)
{
	char *meta;
	size_t i, metalen;
	int rc;

	if ((rc = hd_slug_check("team", spec->team, err)) < 0)
		return rc;
	if (spec->subject == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "task subject must not be empty");
	if ((rc = hd_text_check("task subject", spec->subject, 1,
		 HD_TASK_SUBJECT_MAX, err)) < 0)
		return rc;
	if (spec->description != NULL &&
	    (rc = hd_text_check("task description", spec->description, 0,
		 HD_TASK_DESCRIPTION_MAX, err)) < 0)
		return rc;
	if (spec->active_form != NULL &&
	    (rc = hd_text_check("task active form", spec->active_form, 0,
		 HD_TASK_ACTIVE_FORM_MAX, err)) < 0)
		return rc;
	if (spec->metadata != NULL) {
		if (!json_is_object(spec->metadata))
			return hd_err_set(err, HD_EINVAL,
			    "task metadata must be a JSON object");
		meta = json_dumps(spec->metadata, JSON_COMPACT);
		if (meta == NULL)
			return oom(err);
		metalen = strlen(meta);
		free(meta);
		if (metalen > HD_TASK_METADATA_MAX)
			return hd_err_set(err, HD_EINVAL,
			    "task metadata is %zu bytes; the limit is %d",
			    metalen, HD_TASK_METADATA_MAX);
	}
	if (spec->ndepends_on > HD_TASK_DEPS_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "a task may depend on at most %d tasks, not %zu",
		    HD_TASK_DEPS_MAX, spec->ndepends_on);
	for (i = 0; i < spec->ndepends_on; i++)
		if (spec->depends_on[i] <= 0)
			return hd_err_set(err, HD_ENOTFOUND,
			    "unknown dependency: task %" PRId64,
			    spec->depends_on[i]);
	if (spec->parent_id < 0)
		return hd_err_set(err, HD_ENOTFOUND,
		    "unknown parent: task %" PRId64, spec->parent_id);
	if ((rc = hd_board__verify_check(spec, err)) < 0)
		return rc;
	return actor_check(spec->created_by, err);
}

int
hd_board_create(
    hd_task **out, hd_store *st, const hd_task_spec *spec, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_board__create_check(spec, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.spec = spec;
	b.actor = spec->created_by;
	return hd_board__write_task(
	    out, st, hd_board__create_txn, &b, HD_BOARD__CREATED, err);
}
