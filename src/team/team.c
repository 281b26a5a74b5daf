/*
 * team.c -- teams (SPEC 3). Owns table `teams`.
 *  (1) An id is validated with hd_slug_check before it reaches SQL or a
 *      path; the error text is the spec's.
 *  (2) agent_count is computed on read (COUNT over agents), never stored.
 *  (3) leader_agent_id, when set, names an agent whose team_id is this
 *      team; agent.c clears it when that agent leaves.
 *  (4) A team's own rows (itself, its agents, its sessions, its settings
 *      in kv) go only with hd_team_drop_rows, which the team's removal
 *      (src/lifecycle/remove.c) calls last, once every other module has
 *      deleted its own rows of the team in the same transaction.
 *  (5) status is written only by hd_team_set_status (the shutdown
 *      protocol's setter), which emits team_status when it changes.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/util.h>

#include "team_int.h"

#define TEAM_COLS                                                             \
	"t.id, t.name, t.description, t.icon, t.color, t.leader_agent_id,"    \
	" t.status, (SELECT COUNT(*) FROM agents a WHERE a.team_id = t.id),"  \
	" t.created_at, t.updated_at, t.autorun, t.autorun_paused,"          \
	" t.max_spawn_depth, t.max_children, t.max_task_depth,"            \
	" t.max_new_roots, t.new_roots_window_s"

static int
team_row(void *item, hd_stmt *s, void *ctx)
{
	hd_team *t = item;

	(void)ctx;
	memset(t, 0, sizeof(*t));
	t->id = hd_store_col_dup(s, 0);
	t->name = hd_store_col_dup(s, 1);
	t->description = hd_store_col_dup(s, 2);
	t->icon = hd_store_col_dup(s, 3);
	t->color = hd_store_col_dup(s, 4);
	t->leader_agent_id = hd_store_col_dup(s, 5);
	t->status = hd_store_col_dup(s, 6);
	t->agent_count = hd_stmt_int(s, 7);
	t->created_at = hd_stmt_int(s, 8);
	t->updated_at = hd_stmt_int(s, 9);
	t->autorun = hd_stmt_int(s, 10) != 0;
	t->autorun_paused = hd_stmt_int(s, 11) != 0;
	t->max_spawn_depth = hd_stmt_int(s, 12);
	t->max_children = hd_stmt_int(s, 13);
	t->max_task_depth = hd_stmt_int(s, 14);
	t->max_new_roots = hd_stmt_int(s, 15);
	t->new_roots_window_s = hd_stmt_int(s, 16);
	if (t->id == NULL || t->name == NULL || t->description == NULL ||
	    t->status == NULL)
		return -1;
	return 0;
}

static void
team_dispose(void *item)
{
	hd_team *t = item;

	free(t->id);
	free(t->name);
	free(t->description);
	free(t->icon);
	free(t->color);
	free(t->leader_agent_id);
	free(t->status);
}

void
hd_team_free(hd_team *t)
{
	if (t == NULL)
		return;
	team_dispose(t);
	free(t);
}

void
hd_teams_dispose(hd_teams *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), team_dispose);
	l->items = NULL;
	l->n = 0;
}

int
hd_team__load(hd_team **out, hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	hd_team t;
	int rc;

	*out = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " TEAM_COLS " FROM teams t WHERE t.id = ?",
		 HD_TEXT(id))) < 0 ||
	    (rc = hd_store_row(st, s, &t, team_row, team_dispose, NULL,
		 err)) <= 0)
		return rc;
	if ((*out = malloc(sizeof(t))) == NULL) {
		team_dispose(&t);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	**out = t;
	return 0;
}

int
hd_team_get(hd_team **out, hd_store *st, const char *id, hd_err *err)
{
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", id, err)) < 0)
		return rc;
	if ((rc = hd_team__load(out, st, id, err)) < 0)
		return rc;
	if (*out == NULL)
		return hd_err_set(err, HD_ENOTFOUND, "team \"%s\" not found", id);
	return 0;
}

int
hd_team__probe(hd_store *st, const char *sql, const char *what,
    const char *id, hd_err *err)
{
	int64_t one;
	int rc;

	if ((rc = hd_slug_check(what, id, err)) < 0 ||
	    (rc = hd_store_get_int(st, &one, err, sql, HD_TEXT(id))) < 0)
		return rc;
	if (rc == 1)
		return 0;
	return hd_err_set(err, HD_ENOTFOUND, "%s \"%s\" not found", what, id);
}

int
hd_team_exists(hd_store *st, const char *id, hd_err *err)
{
	return hd_team__probe(
	    st, "SELECT 1 FROM teams WHERE id = ?", "team", id, err);
}

int
hd_team_list(hd_teams *out, hd_store *st, hd_err *err)
{
	hd_stmt *s;
	void *items;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT " TEAM_COLS " FROM teams t ORDER BY t.id", err)) < 0 ||
	    (rc = hd_store_rows(st, s, sizeof(hd_team), team_row, team_dispose,
		 NULL, &items, &out->n, err)) < 0)
		return rc;
	out->items = items;
	return 0;
}

/* One of the board's caps: 0 (not given) or 1..max. */
static int
cap_check(const char *name, int v, int max, hd_err *err)
{
	if (v != 0 && (v < 1 || v > max))
		return hd_err_set(
		    err, HD_EINVAL, "%s must be between 1 and %d", name, max);
	return 0;
}

int
hd_team__check_fields(const hd_team_spec *spec, hd_err *err)
{
	int rc;

	if (spec->name != NULL && (rc = hd_text_check("team display name",
				       spec->name, 1, HD_TEAM_NAME_MAX, err)) < 0)
		return rc;
	if (spec->description != NULL &&
	    (rc = hd_text_check("team description", spec->description, 0,
		 HD_TEAM_DESCRIPTION_MAX, err)) < 0)
		return rc;
	if (spec->icon != NULL && (rc = hd_text_check("team icon", spec->icon,
				       0, HD_TEAM_DECOR_MAX, err)) < 0)
		return rc;
	if (spec->color != NULL && (rc = hd_text_check("team color",
				        spec->color, 0, HD_TEAM_DECOR_MAX, err)) < 0)
		return rc;
	if (spec->max_spawn_depth != 0 &&
	    (spec->max_spawn_depth < 1 ||
		spec->max_spawn_depth > HD_TEAM_SPAWN_DEPTH_MAX))
		return hd_err_set(err, HD_EINVAL,
		    "max_spawn_depth must be between 1 and %d",
		    HD_TEAM_SPAWN_DEPTH_MAX);
	if ((rc = cap_check("max_children", spec->max_children,
		 HD_TEAM_MAX_CHILDREN_MAX, err)) < 0 ||
	    (rc = cap_check("max_task_depth", spec->max_task_depth,
		 HD_TEAM_TASK_DEPTH_MAX, err)) < 0 ||
	    (rc = cap_check("max_new_roots", spec->max_new_roots,
		 HD_TEAM_NEW_ROOTS_MAX, err)) < 0 ||
	    (rc = cap_check("new_roots_window_s", spec->new_roots_window_s,
		 HD_TEAM_NEW_ROOTS_WINDOW_MAX, err)) < 0)
		return rc;
	return 0;
}

int
hd_team__insert(hd_store *st, const hd_team_spec *spec, hd_err *err)
{
	int64_t now = hd_now_ms();
	int rc;

	if ((rc = hd_store_run(st, err,
		 "INSERT INTO teams(id, name, description, icon, color,"
		 " created_at, updated_at, max_spawn_depth, max_children,"
		 " max_task_depth, max_new_roots, new_roots_window_s)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 HD_TEXT(spec->id),
		 HD_TEXT(spec->name != NULL ? spec->name : spec->id),
		 HD_TEXT(spec->description ? spec->description : ""),
		 HD_TEXT(spec->icon), HD_TEXT(spec->color), HD_INT(now),
		 HD_INT(now),
		 HD_INT(spec->max_spawn_depth > 0 ? spec->max_spawn_depth
						  : HD_TEAM_SPAWN_DEPTH),
		 HD_INT(spec->max_children > 0 ? spec->max_children
					       : HD_TEAM_MAX_CHILDREN),
		 HD_INT(spec->max_task_depth > 0 ? spec->max_task_depth
						 : HD_TEAM_TASK_DEPTH),
		 HD_INT(spec->max_new_roots > 0 ? spec->max_new_roots
						: HD_TEAM_NEW_ROOTS),
		 HD_INT(spec->new_roots_window_s > 0
			 ? spec->new_roots_window_s
			 : HD_TEAM_NEW_ROOTS_WINDOW))) < 0) {
		if (rc == HD_EEXISTS)
			hd_err_set(err, HD_EEXISTS, "team \"%s\" already exists",
			    spec->id);
		return rc;
	}
	hd_events_append(st, "team_created", spec->id, 0, NULL,
	    json_pack("{s:s}", "name", spec->name ? spec->name : spec->id));
	return 0;
}

static int
team_create_txn(hd_store *st, void *payload, hd_err *err)
{
	const hd_team_spec *spec = payload;
	hd_team *t = NULL;
	int rc;

	if ((rc = hd_team__load(&t, st, spec->id, err)) < 0)
		return rc;
	if (t != NULL) {
		hd_team_free(t);
		return hd_err_set(err, HD_EEXISTS, "team \"%s\" already exists",
		    spec->id);
	}
	return hd_team__insert(st, spec, err);
}

/* A create or an update: the spec's checks (an update's leader too),
 * txn on it, and the row read back into *out (when out is not NULL). */
static int
team_write(hd_team **out, hd_store *st, const hd_team_spec *spec,
    int leader, hd_store_txn_fn txn, hd_err *err)
{
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("team", spec->id, err)) < 0 ||
	    (rc = hd_team__check_fields(spec, err)) < 0)
		return rc;
	if (leader && spec->leader != NULL && spec->leader[0] != '\0' &&
	    (rc = hd_slug_check("agent", spec->leader, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, txn, (void *)spec, err)) < 0)
		return rc;
	return out != NULL ? hd_team_get(out, st, spec->id, err) : 0;
}

int
hd_team_create(hd_team **out, hd_store *st, const hd_team_spec *spec,
    hd_err *err)
{
	return team_write(out, st, spec, 0, team_create_txn, err);
}

int
hd_team__set_leader(hd_store *st, const char *team, const char *leader,
    hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE teams SET leader_agent_id = ?, updated_at = ?"
	    " WHERE id = ?",
	    HD_TEXT(leader), HD_INT(hd_now_ms()), HD_TEXT(team));
}

static int
team_update_txn(hd_store *st, void *payload, hd_err *err)
{
	const hd_team_spec *spec = payload;
	json_t *changed;
	int rc;

	if ((rc = hd_team_exists(st, spec->id, err)) < 0)
		return rc;
	if (spec->leader != NULL && spec->leader[0] != '\0' &&
	    (rc = hd_team_member_check(st, spec->id, spec->leader, err)) < 0)
		return rc;
	if ((rc = hd_store_run(st, err,
		 "UPDATE teams SET name = COALESCE(?1, name),"
		 " description = COALESCE(?2, description),"
		 " icon = COALESCE(?3, icon), color = COALESCE(?4, color),"
		 " leader_agent_id = CASE WHEN ?5 IS NULL THEN leader_agent_id"
		 "   WHEN ?5 = '' THEN NULL ELSE ?5 END,"
		 " max_spawn_depth = CASE WHEN ?8 > 0 THEN ?8"
		 "   ELSE max_spawn_depth END,"
		 " max_children = CASE WHEN ?9 > 0 THEN ?9"
		 "   ELSE max_children END,"
		 " max_task_depth = CASE WHEN ?10 > 0 THEN ?10"
		 "   ELSE max_task_depth END,"
		 " max_new_roots = CASE WHEN ?11 > 0 THEN ?11"
		 "   ELSE max_new_roots END,"
		 " new_roots_window_s = CASE WHEN ?12 > 0 THEN ?12"
		 "   ELSE new_roots_window_s END,"
		 " updated_at = ?6 WHERE id = ?7",
		 HD_TEXT(spec->name), HD_TEXT(spec->description),
		 HD_TEXT(spec->icon), HD_TEXT(spec->color), HD_TEXT(spec->leader),
		 HD_INT(hd_now_ms()), HD_TEXT(spec->id),
		 HD_INT(spec->max_spawn_depth), HD_INT(spec->max_children),
		 HD_INT(spec->max_task_depth), HD_INT(spec->max_new_roots),
		 HD_INT(spec->new_roots_window_s))) < 0)
		return rc;
	changed = json_object();
	if (spec->name)
		json_object_set_new(changed, "name", json_string(spec->name));
	if (spec->description)
		json_object_set_new(changed, "description",
		    json_string(spec->description));
	if (spec->icon)
		json_object_set_new(changed, "icon", json_string(spec->icon));
	if (spec->color)
		json_object_set_new(changed, "color", json_string(spec->color));
	if (spec->leader)
		json_object_set_new(changed, "leader",
		    spec->leader[0] ? json_string(spec->leader) : json_null());
	if (spec->max_spawn_depth > 0)
		json_object_set_new(changed, "max_spawn_depth",
		    json_integer(spec->max_spawn_depth));
	if (spec->max_children > 0)
		json_object_set_new(changed, "max_children",
		    json_integer(spec->max_children));
	if (spec->max_task_depth > 0)
		json_object_set_new(changed, "max_task_depth",
		    json_integer(spec->max_task_depth));
	if (spec->max_new_roots > 0)
		json_object_set_new(changed, "max_new_roots",
		    json_integer(spec->max_new_roots));
	if (spec->new_roots_window_s > 0)
		json_object_set_new(changed, "new_roots_window_s",
		    json_integer(spec->new_roots_window_s));
	hd_events_append(st, "team_updated", spec->id, 0, NULL, changed);
	return 0;
}

int
hd_team_update(hd_team **out, hd_store *st, const hd_team_spec *spec,
    hd_err *err)
{
	return team_write(out, st, spec, 1, team_update_txn, err);
}

int
hd_team_drop_rows(hd_store *st, const char *id, hd_err *err)
{
	char key[160];
	int rc;

	snprintf(key, sizeof(key), HD_TEAM_MAX_MESSAGES_KEY, id);
	if ((rc = hd_store_run(st, err, "DELETE FROM sessions WHERE team_id = ?1",
		 HD_TEXT(id))) < 0 ||
	    (rc = hd_store_kv_delete(st, key, 0, err)) < 0 ||
	    (rc = hd_store_run(st, err, "DELETE FROM agents WHERE team_id = ?1",
		 HD_TEXT(id))) < 0)
		return rc;
	return hd_store_run(
	    st, err, "DELETE FROM teams WHERE id = ?1", HD_TEXT(id));
}

/* One probe in the common case: membership is answered by the covering
 * index agents_team (team_id, id; migration 10) alone, and a member
 * implies its team (agents.team_id references teams). The planner would take
 * the id's unique index and then read the row, so the index is named. Only a
 * miss reads teams, to say which of the two is wrong. Every peer post, claim,
 * message and spawn passes through here. */
int
hd_team_member_check(hd_store *st, const char *team, const char *agent,
    hd_err *err)
{
	int64_t one;
	int rc;

	if ((rc = hd_store_get_int(st, &one, err,
		 "SELECT 1 FROM agents INDEXED BY agents_team"
		 " WHERE team_id = ?1 AND id = ?2",
		 HD_TEXT(team), HD_TEXT(agent))) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = hd_store_get_int(st, &one, err,
		 "SELECT 1 FROM teams WHERE id = ?", HD_TEXT(team))) < 0)
		return rc;
	if (rc == 0)
		return hd_err_set(err, HD_ENOTFOUND, "team \"%.128s\" not found",
		    team);
	return hd_err_set(err, HD_EREFUSED, "no member \"%.128s\" in team %s",
	    agent, team);
}

json_t *
hd_team_to_json(const hd_team *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(t->id));
	json_object_set_new(o, "name", json_string(t->name));
	json_object_set_new(o, "description", json_string(t->description));
	json_object_set_new(o, "icon", t->icon ? json_string(t->icon) : json_null());
	json_object_set_new(o, "color",
	    t->color ? json_string(t->color) : json_null());
	json_object_set_new(o, "leader_agent_id",
	    t->leader_agent_id ? json_string(t->leader_agent_id) : json_null());
	json_object_set_new(o, "status", json_string(t->status));
	json_object_set_new(o, "agent_count", json_integer(t->agent_count));
	json_object_set_new(o, "autorun", json_boolean(t->autorun));
	json_object_set_new(o, "paused", json_boolean(t->autorun_paused));
	json_object_set_new(
	    o, "max_spawn_depth", json_integer(t->max_spawn_depth));
	json_object_set_new(o, "max_children", json_integer(t->max_children));
	json_object_set_new(
	    o, "max_task_depth", json_integer(t->max_task_depth));
	json_object_set_new(o, "max_new_roots", json_integer(t->max_new_roots));
	json_object_set_new(
	    o, "new_roots_window_s", json_integer(t->new_roots_window_s));
	json_object_set_new(o, "created_at", json_integer(t->created_at));
	json_object_set_new(o, "updated_at", json_integer(t->updated_at));
	return o;
}

static const char *const team_statuses[] = {
	"active", "shutting_down", "shutdown", NULL,
};

struct team_status {
	const char *id;
	const char *status;
};

static int
team_status_txn(hd_store *st, void *payload, hd_err *err)
{
	struct team_status *ts = payload;
	hd_team *t = NULL;
	int rc;

	if ((rc = hd_team__load(&t, st, ts->id, err)) < 0)
		return rc;
	if (t == NULL)
		return hd_err_set(err, HD_ENOTFOUND, "team \"%s\" not found",
		    ts->id);
	if (strcmp(t->status, ts->status) == 0)
		goto done; /* no change, no event */
	if ((rc = hd_store_run(st, err,
		 "UPDATE teams SET status = ?, updated_at = ? WHERE id = ?",
		 HD_TEXT(ts->status), HD_INT(hd_now_ms()), HD_TEXT(ts->id))) < 0)
		goto done;
	hd_events_append(st, "team_status", ts->id, 0, NULL,
	    json_pack("{s:s, s:s}", "from", t->status, "to", ts->status));
done:
	hd_team_free(t);
	return rc;
}

int
hd_team_set_status(hd_store *st, const char *team, const char *status,
    hd_err *err)
{
	struct team_status ts = {team, status};
	int i, rc;

	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	for (i = 0; team_statuses[i] != NULL; i++)
		if (strcmp(team_statuses[i], status) == 0)
			break;
	if (team_statuses[i] == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "invalid team status \"%.64s\": use active, shutting_down "
		    "or shutdown",
		    status);
	return hd_store_write(st, team_status_txn, &ts, err);
}
