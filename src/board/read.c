/*
 * read.c -- reading the board: one task (hd_board_get) and a team's list
 * with its filters (hd_task_filter, metadata matches).
 *  (1) A read runs in one read transaction: the tasks, their
 *      dependencies and subtasks are of one snapshot.
 *  (2) ready is computed (board.c (1), (2)): pending, no owner, no
 *      unfinished dependency; never stored.
 *  (3) Writes nothing.
 *  (4) A team's list reads no more of the team than whether it exists
 *      (hd_team_exists; an unknown team is HD_ENOTFOUND, "team \"x\" not
 *      found"): loading the team counts its agents, a cost growing with
 *      the team that a task list (the native runtime's task_list, every
 *      turn) has no use for.
 * Callers: the CLI (task list, show), MCP tools, HTTP routes, the
 * engines' prompts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/team.h>

#include "tasks_int.h"

/* ---- read ------------------------------------------------------------------
 */

static int
board_get_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	int rc;

	hd_task_free(b->task); /* a try again starts over */
	b->task = NULL;
	if ((rc = hd_board__task_load(&b->task, st, b->id, 1, err)) < 0)
		return rc;
	if (b->task == NULL)
		return hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", b->id);
	return 0;
}

int
hd_board_get(hd_task **out, hd_store *st, int64_t id, hd_err *err)
{
	board_txn b;
	int rc;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	b.id = id;
	if ((rc = hd_store_read(st, board_get_txn, &b, err)) == 0) {
		*out = b.task;
		b.task = NULL;
	}
	hd_board__txn_dispose(&b);
	return rc;
}

/* A parsed metadata filter. */
typedef struct meta_filter {
	char *key;
	const char *value;
} meta_filter;

/* Does metadata value v match the filter text? Strings compare equal;
 * numbers, booleans and null compare by their JSON text. */
static int
meta_value_matches(const json_t *v, const char *want)
{
	char *text;
	int match;

	if (v == NULL)
		return 0;
	if (json_is_string(v))
		return strcmp(json_string_value(v), want) == 0;
	if (json_is_object(v) || json_is_array(v))
		return 0;
	if ((text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return 0;
	match = strcmp(text, want) == 0;
	free(text);
	return match;
}

struct board_list {
	const char *team;
	const hd_task_filter *f;
	meta_filter *meta;
	size_t nmeta;
	hd_tasks out;
};

static int
task_matches_meta(const hd_task *t, const struct board_list *l)
{
	size_t i;

	for (i = 0; i < l->nmeta; i++)
		if (!meta_value_matches(
			json_object_get(t->metadata, l->meta[i].key),
			l->meta[i].value))
			return 0;
	return 1;
}

static int
task_cmp_desc(const void *a, const void *b)
{
	int64_t x = ((const hd_task *)a)->id, y = ((const hd_task *)b)->id;

	return x > y ? -1 : x < y;
}

/* A row of a query over the team's tasks for the listed task t, whose
 * capacities (width of them) are caps; -1 when out of memory. */
typedef int (*list_attach_fn)(hd_task *t, hd_stmt *s, size_t *caps);

/* A dependency: d.task_id, d.depends_on, its status. */
static int
attach_dep(hd_task *t, hd_stmt *s, size_t *caps)
{
	return hd_board__task_add_dep(t, hd_stmt_int(s, 1), hd_stmt_text(s, 2),
	    &caps[0], &caps[1]);
}

/* A subtask: parent_id, id. */
static int
attach_child(hd_task *t, hd_stmt *s, size_t *caps)
{
	return hd_board__ids_push(
	    &t->children, &t->nchildren, &caps[0], hd_stmt_int(s, 1));
}

/* Hand each row of sql (?1 the team) to attach with the listed task its
 * first column names: one query for all the listed tasks. */
static int
list_attach(hd_store *st, const char *team, hd_tasks *l, const char *sql,
    list_attach_fn attach, size_t width, hd_err *err)
{
	hd_stmt *s;
	size_t *caps;
	int rc, src;

	if (l->n == 0)
		return 0;
	if ((caps = calloc(l->n * width, sizeof(*caps))) == NULL)
		return oom(err);
	if ((rc = hd_store_query(st, &s, err, sql, HD_TEXT(team))) < 0)
		goto done;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		hd_task key, *t;

		key.id = hd_stmt_int(s, 0);
		t = bsearch(&key, l->items, l->n, sizeof(*t), task_cmp_desc);
		if (t == NULL)
			continue;
		if (attach(t, s, &caps[(size_t)(t - l->items) * width]) < 0) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
done:
	free(caps);
	return rc;
}

static int
board_list_txn(hd_store *st, void *payload, hd_err *err)
{
	struct board_list *l = payload;
	const hd_task_filter *f = l->f;
	hd_stmt *s;
	size_t cap = 0;
	int rc, src, limit;

	hd_tasks_dispose(&l->out); /* a try again starts over */
	/* (4): whether the team is there, not the team (its row counts its
	 * agents) */
	if ((rc = hd_team_exists(st, l->team, err)) < 0)
		return rc;
	limit = f != NULL && f->limit > 0 ? f->limit : -1;
	/* metadata filters run in C, so the limit is applied there too (?6) */
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " TASK_COLS " FROM tasks t WHERE t.team_id = ?1"
		 " AND (?2 IS NULL OR t.status = ?2)"
		 " AND (?3 IS NULL OR t.owner = ?3)"
		 " AND (?4 = 0 OR (t.status = 'pending' AND t.owner IS NULL"
		 "   AND NOT " UNFINISHED_DEP(
		     "t") "))"
			  " AND (?5 = 0 OR " UNFINISHED_DEP(
			      "t") ")"
				   " ORDER BY t.id DESC LIMIT ?6",
		 HD_TEXT(l->team), HD_TEXT(f ? f->status : NULL),
		 HD_TEXT(f ? f->owner : NULL), HD_INT(f ? f->ready != 0 : 0),
		 HD_INT(f ? f->blocked != 0 : 0),
		 /* no limit: the largest (PostgreSQL refuses SQLite's -1) */
		 HD_INT(l->nmeta > 0 || limit < 0 ? INT64_MAX : limit))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		hd_task *t;

		if (limit > 0 && l->out.n == (size_t)limit)
			break;
		t = hd_board__grow(l->out.items, l->out.n, &cap, sizeof(*t), 16);
		if (t == NULL) {
			rc = oom(err);
			break;
		}
		l->out.items = t;
		t = &l->out.items[l->out.n];
		if (hd_board__task_row(t, s) < 0) {
			hd_board__task_dispose(t);
			rc = oom(err);
			break;
		}
		if (!task_matches_meta(t, l)) {
			hd_board__task_dispose(t);
			continue;
		}
		l->out.n++;
	}
	if (rc == 0 && src != HD_DONE && src != HD_ROW)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	if (rc == 0) /* every dependency of the listed tasks */
		rc = list_attach(st, l->team, &l->out,
		    "SELECT d.task_id, d.depends_on, p.status FROM task_deps d"
		    " JOIN tasks t ON t.id = d.task_id"
		    " JOIN tasks p ON p.id = d.depends_on"
		    " WHERE t.team_id = ? ORDER BY d.task_id, d.depends_on",
		    attach_dep, 2, err);
	if (rc == 0) /* and their subtasks */
		rc = list_attach(st, l->team, &l->out,
		    "SELECT parent_id, id FROM tasks WHERE team_id = ?"
		    " AND parent_id IS NOT NULL ORDER BY parent_id, id",
		    attach_child, 1, err);
	if (rc < 0)
		hd_tasks_dispose(&l->out);
	return rc;
}

int
hd_board_list(hd_tasks *out, hd_store *st, const char *team,
    const hd_task_filter *f, hd_err *err)
{
	struct board_list l;
	const char *eq;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&l, 0, sizeof(l));
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (f != NULL && f->status != NULL && !hd_task_status_ok(f->status))
		return hd_err_set(err, HD_EINVAL,
		    "unknown task status \"%.64s\": use pending, claimed, "
		    "in_progress, completed, failed or cancelled",
		    f->status);
	if (f != NULL && f->limit < 0)
		return hd_err_set(err, HD_EINVAL, "limit must not be negative");
	l.team = team;
	l.f = f;
	if (f != NULL && f->nmeta > 0) {
		if ((l.meta = calloc(f->nmeta, sizeof(*l.meta))) == NULL)
			return oom(err);
		for (i = 0; i < f->nmeta; i++) {
			const char *k = f->meta[i];

			/* SPEC 4 spells it metadata.KEY=VALUE; KEY=VALUE too */
			if (strncmp(k, "metadata.", 9) == 0)
				k += 9;
			eq = strchr(k, '=');
			if (eq == NULL || eq == k) {
				rc = hd_err_set(err, HD_EINVAL,
				    "metadata filter must be KEY=VALUE, not "
				    "\"%.64s\"",
				    f->meta[i]);
				goto done;
			}
			l.meta[i].key = strndup(k, (size_t)(eq - k));
			l.meta[i].value = eq + 1;
			l.nmeta++;
			if (l.meta[i].key == NULL) {
				rc = oom(err);
				goto done;
			}
		}
	}
	if ((rc = hd_store_read(st, board_list_txn, &l, err)) == 0) {
		*out = l.out;
		memset(&l.out, 0, sizeof(l.out));
	}
done:
	hd_tasks_dispose(&l.out);
	for (i = 0; i < l.nmeta; i++)
		free(l.meta[i].key);
	free(l.meta);
	return rc;
}
