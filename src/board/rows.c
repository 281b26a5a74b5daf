/*
 * rows.c -- loading tasks of the board (board.c) and their JSON: a row of
 * TASK_COLS into an hd_task, with its dependencies (depends_on,
 * blocked_by), subtasks and, for a single task, its comments and
 * dependents. Read-only; every loader runs inside a transaction its
 * caller holds (tasks_int.h). Also the small pieces the board's loops
 * share: an array grown by doubling (hd_board__grow) and the ids a query
 * names (hd_board__ids_query: subtasks, dependents, an owner's open
 * tasks).
 *  (1) blocked_by is computed here from task_deps and the dependencies'
 *      statuses on every load, never stored (board.c (2)).
 *  (2) A loaded task is whole or absent: an allocation failure frees it
 *      and reports HD_ENOMEM, never a half-filled task.
 * Callers: the board's files (read, claim, create, transitions, deps,
 * board.c); hd_task_to_json and hd_task_comment_to_json every surface.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/team.h>

#include "tasks_int.h"

/* ---- rows ---------------------------------------------------------------- */

void
hd_board__task_dispose(hd_task *t)
{
	size_t i;

	free(t->team_id);
	free(t->subject);
	free(t->description);
	free(t->active_form);
	free(t->status);
	free(t->owner);
	json_decref(t->metadata);
	free(t->result);
	free(t->created_by);
	free(t->depends_on);
	free(t->blocked_by);
	free(t->unblocked);
	free(t->children);
	for (i = 0; i < t->ncomments; i++) {
		free(t->comments[i].author);
		free(t->comments[i].body);
	}
	free(t->comments);
	free(t->dependents);
	hd_board__verify_free(t->verify);
	memset(t, 0, sizeof(*t));
}

void
hd_task_free(hd_task *t)
{
	if (t == NULL)
		return;
	hd_board__task_dispose(t);
	free(t);
}

void
hd_tasks_dispose(hd_tasks *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		hd_board__task_dispose(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

void
hd_task_comment_free(hd_task_comment *c)
{
	if (c == NULL)
		return;
	free(c->author);
	free(c->body);
	free(c);
}

static int64_t
col_ms(hd_stmt *s, int col)
{
	return hd_stmt_is_null(s, col)
		   ? 0
		   : hd_stmt_int(s, col);
}

/* Fill t from a row of TASK_COLS; -1 on allocation failure. */
int
hd_board__task_row(hd_task *t, hd_stmt *s)
{
	const char *meta;

	memset(t, 0, sizeof(*t));
	t->id = hd_stmt_int(s, 0);
	t->team_id = hd_store_col_dup(s, 1);
	t->subject = hd_store_col_dup(s, 2);
	t->description = hd_store_col_dup(s, 3);
	t->active_form = hd_store_col_dup(s, 4);
	t->status = hd_store_col_dup(s, 5);
	t->owner = hd_store_col_dup(s, 6);
	t->priority = hd_stmt_int(s, 7);
	meta = hd_stmt_text(s, 8);
	t->metadata = json_loads(meta != NULL ? meta : "{}", 0, NULL);
	if (t->metadata != NULL && !json_is_object(t->metadata)) {
		json_decref(t->metadata);
		t->metadata = NULL;
	}
	if (t->metadata == NULL)
		t->metadata = json_object();
	t->result = hd_store_col_dup(s, 9);
	t->created_by = hd_store_col_dup(s, 10);
	t->created_at = col_ms(s, 11);
	t->claimed_at = col_ms(s, 12);
	t->started_at = col_ms(s, 13);
	t->completed_at = col_ms(s, 14);
	t->updated_at = col_ms(s, 15);
	t->parent_id = col_ms(s, 16);
	if (t->team_id == NULL || t->subject == NULL ||
	    t->description == NULL || t->status == NULL || t->metadata == NULL)
		return -1;
	return 0;
}

void *
hd_board__grow(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t want;

	if (n < *cap)
		return v;
	want = *cap ? *cap * 2 : first;
	if ((v = realloc(v, want * size)) != NULL)
		*cap = want;
	return v;
}

int
hd_board__ids_push(int64_t **v, size_t *n, size_t *cap, int64_t id)
{
	int64_t *nv = hd_board__grow(*v, *n, cap, sizeof(*nv), 4);

	if (nv == NULL)
		return -1;
	*v = nv;
	(*v)[(*n)++] = id;
	return 0;
}

int
hd_board__ids_query_(int64_t **ids, size_t *n, hd_store *st, hd_err *err,
    const char *sql, const hd_val *v, size_t nv)
{
	hd_stmt *s;
	size_t cap = 0;
	int rc, src;

	free(*ids);
	*ids = NULL;
	*n = 0;
	if ((rc = hd_store_query_(st, &s, err, sql, v, nv)) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW)
		if (hd_board__ids_push(ids, n, &cap, hd_stmt_int(s, 0)) < 0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

json_t *
hd_board__json_ids(const int64_t *ids, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(ids[i]));
	return a;
}

/* Record that t depends on dep (whose status is dep_status). */
int
hd_board__task_add_dep(
    hd_task *t, int64_t dep, const char *dep_status, size_t *capd, size_t *capb)
{
	if (hd_board__ids_push(&t->depends_on, &t->ndepends_on, capd, dep) < 0)
		return -1;
	if (dep_status == NULL || strcmp(dep_status, "completed") != 0)
		if (hd_board__ids_push(&t->blocked_by, &t->nblocked_by, capb, dep) < 0)
			return -1;
	return 0;
}

/* t->children: the ids of its subtasks, ascending. */
static int
task_load_children(hd_store *st, hd_task *t, hd_err *err)
{
	return hd_board__ids_query(&t->children, &t->nchildren, st, err,
	    "SELECT id FROM tasks WHERE parent_id = ? ORDER BY id",
	    HD_INT(t->id));
}

/* t's dependencies (depends_on, blocked_by) and subtasks (children). */
int
hd_board__task_load_deps(hd_store *st, hd_task *t, hd_err *err)
{
	hd_stmt *s;
	size_t capd = 0, capb = 0;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT d.depends_on, p.status FROM task_deps d"
		 " JOIN tasks p ON p.id = d.depends_on WHERE d.task_id = ?"
		 " ORDER BY d.depends_on",
		 HD_INT(t->id))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW)
		if (hd_board__task_add_dep(t, hd_stmt_int(s, 0),
			hd_stmt_text(s, 1), &capd,
			&capb) < 0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc < 0 ? rc : task_load_children(st, t, err);
}

static int
task_load_comments(hd_store *st, hd_task *t, hd_err *err)
{
	hd_stmt *s;
	size_t cap = 0;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, author, body, created_at FROM task_comments"
		 " WHERE task_id = ? ORDER BY id",
		 HD_INT(t->id))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		hd_task_comment *c = hd_board__grow(
		    t->comments, t->ncomments, &cap, sizeof(*c), 4);

		if (c == NULL) {
			rc = oom(err);
			break;
		}
		t->comments = c;
		c = &t->comments[t->ncomments++];
		c->id = hd_stmt_int(s, 0);
		c->author = hd_store_col_dup(s, 1);
		c->body = hd_store_col_dup(s, 2);
		c->created_at = hd_stmt_int(s, 3);
		if (c->author == NULL || c->body == NULL) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	t->has_comments = rc == 0;
	return rc;
}

/* t->dependents: the tasks that depend on t (task_deps_rev), ascending;
 * loaded with the comments, for the one-task read. */
static int
task_load_dependents(hd_store *st, hd_task *t, hd_err *err)
{
	return hd_board__ids_query(&t->dependents, &t->ndependents, st, err,
	    "SELECT task_id FROM task_deps WHERE depends_on = ?"
	    " ORDER BY task_id",
	    HD_INT(t->id));
}

/* Step a statement returning TASK_COLS once: *out is the task, or NULL
 * when there was no row. The statement is reset either way. */
int
hd_board__task_step(hd_task **out, hd_store *st, hd_stmt *s, hd_err *err)
{
	hd_task *t;
	int rc = 0, src;

	*out = NULL;
	src = hd_stmt_step(s);
	if (src == HD_ROW) {
		if ((t = calloc(1, sizeof(*t))) == NULL)
			rc = oom(err);
		else if (hd_board__task_row(t, s) < 0) {
			hd_task_free(t);
			rc = oom(err);
		} else
			*out = t;
		/* finish an UPDATE ... RETURNING so the change is complete */
		if (rc == 0 && (src = hd_stmt_step(s)) != HD_DONE) {
			hd_task_free(*out);
			*out = NULL;
			rc = hd_store_sqlerr(st, src, err);
		}
	} else if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Load a task with its dependencies; *out NULL (0 returned) when absent. */
int
hd_board__task_load(
    hd_task **out, hd_store *st, int64_t id, int with_comments, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*out = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " TASK_COLS " FROM tasks WHERE id = ?", HD_INT(id))) < 0)
		return rc;
	if ((rc = hd_board__task_step(out, st, s, err)) < 0 || *out == NULL)
		return rc;
	if ((rc = hd_board__task_load_deps(st, *out, err)) < 0 ||
	    (with_comments &&
		((rc = task_load_comments(st, *out, err)) < 0 ||
		    (rc = task_load_dependents(st, *out, err)) < 0 ||
		    (rc = hd_board__verify_load(st, *out, err)) < 0))) {
		hd_task_free(*out);
		*out = NULL;
	}
	return rc;
}

/* The team of task id into *team (malloc'd), or `task 5 not found`. */
int
hd_board__task_team(char **team, hd_store *st, int64_t id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*team = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT team_id FROM tasks WHERE id = ?", HD_INT(id))) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src == HD_ROW) {
		if ((*team = hd_store_col_dup(s, 0)) == NULL)
			rc = oom(err);
	} else if (src == HD_DONE)
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", id);
	else
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Check that actor may act in team: "user", or a member. */
int
hd_board__actor_member(hd_store *st, const char *team, const char *actor, hd_err *err)
{
	return is_user(actor) ? 0 : hd_team_member_check(st, team, actor, err);
}

/* The leader of team (malloc'd) or NULL. */
int
hd_board__team_leader(char **out, hd_store *st, const char *team, hd_err *err)
{
	hd_team *t = NULL;
	int rc;

	*out = NULL;
	if ((rc = hd_team_get(&t, st, team, err)) < 0)
		return rc;
	if (t->leader_agent_id != NULL &&
	    (*out = strdup(t->leader_agent_id)) == NULL)
		rc = oom(err);
	hd_team_free(t);
	return rc;
}


/* ---- JSON ------------------------------------------------------------------
 */

static json_t *
json_ms(int64_t ms)
{
	return ms > 0 ? json_integer(ms) : json_null();
}

static json_t *
json_str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

json_t *
hd_task_comment_to_json(const hd_task_comment *c)
{
	return json_pack("{s:I, s:s, s:s, s:I}", "id", (json_int_t)c->id,
	    "author", c->author, "body", c->body, "created_at",
	    (json_int_t)c->created_at);
}

json_t *
hd_task_to_json(const hd_task *t)
{
	json_t *o = json_object(), *cs;
	int failed = strcmp(t->status, "failed") == 0;
	size_t i;

	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "team_id", json_string(t->team_id));
	json_object_set_new(o, "subject", json_string(t->subject));
	json_object_set_new(o, "description", json_string(t->description));
	json_object_set_new(o, "active_form", json_str_or_null(t->active_form));
	json_object_set_new(o, "status", json_string(t->status));
	json_object_set_new(o, "owner", json_str_or_null(t->owner));
	json_object_set_new(o, "priority", json_integer(t->priority));
	json_object_set(o, "metadata", t->metadata);
	json_object_set_new(
	    o, "result", json_str_or_null(failed ? NULL : t->result));
	json_object_set_new(
	    o, "reason", json_str_or_null(failed ? t->result : NULL));
	json_object_set_new(o, "created_by", json_str_or_null(t->created_by));
	json_object_set_new(o, "created_at", json_integer(t->created_at));
	json_object_set_new(o, "claimed_at", json_ms(t->claimed_at));
	json_object_set_new(o, "started_at", json_ms(t->started_at));
	json_object_set_new(o, "completed_at", json_ms(t->completed_at));
	json_object_set_new(o, "updated_at", json_integer(t->updated_at));
	json_object_set_new(
	    o, "depends_on", hd_board__json_ids(t->depends_on, t->ndepends_on));
	json_object_set_new(
	    o, "blocked_by", hd_board__json_ids(t->blocked_by, t->nblocked_by));
	json_object_set_new(o, "ready",
	    json_boolean(strcmp(t->status, "pending") == 0 &&
			 t->owner == NULL && t->nblocked_by == 0));
	json_object_set_new(o, "parent_id",
	    t->parent_id > 0 ? json_integer(t->parent_id) : json_null());
	json_object_set_new(
	    o, "children", hd_board__json_ids(t->children, t->nchildren));
	if (t->has_unblocked)
		json_object_set_new(
		    o, "unblocked", hd_board__json_ids(t->unblocked, t->nunblocked));
	if (t->has_comments) {
		cs = json_array();
		for (i = 0; i < t->ncomments; i++)
			json_array_append_new(
			    cs, hd_task_comment_to_json(&t->comments[i]));
		json_object_set_new(o, "comments", cs);
		json_object_set_new(o, "dependents",
		    hd_board__json_ids(t->dependents, t->ndependents));
	}
	if (t->verify != NULL)
		json_object_set_new(o, "verify", hd_board__verify_json(t->verify));
	return o;
}
