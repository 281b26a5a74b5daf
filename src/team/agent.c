/*
 * agent.c -- agents, the members of teams (SPEC 3). Owns table `agents`.
 *  (1) An agent id is a slug, unique across all teams; an agent is in at
 *      most one team.
 *  (2) runtime is a slug and runtime_config an object before any write;
 *      what a runtime accepts is the runtime layer's to say, and the
 *      surfaces hand its check down (hd_agent_spec.check), so an engine
 *      never meets a config it cannot run. This module names no runtime
 *      (the default is HD_AGENT_RUNTIME_DEFAULT, a column value) and
 *      includes no engine header: the check is a callback because the
 *      domain may not call the runtime layer (agent.h says why per call).
 *  (3) A team keeps at most one leader: adding a second is refused, and
 *      removing the leader leaves the team without one.
 *  (4) status is written only by hd_agent_set_status (and its
 *      _if and _reason variants), which emit agent_status when it
 *      changes (the dashboard shows status live).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/util.h>

#include "team_int.h"

int
hd_agent_check_runtime(const char *runtime, const json_t *config,
    hd_agent_runtime_check check, hd_err *err)
{
	if (runtime == NULL || !hd_slug_ok(runtime))
		return hd_err_set(err, HD_EINVAL,
		    "invalid runtime name \"%.64s\": use 1-50 lowercase "
		    "letters, digits, '-' or '_'",
		    runtime ? runtime : "");
	if (config != NULL && !json_is_object(config))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config must be a JSON object");
	return check != NULL ? check(runtime, config, err) : 0;
}

int
hd_agent__check_fields(const char *name, const char *role, hd_err *err)
{
	int rc;

	if (name != NULL && (rc = hd_text_check("agent display name", name, 1,
				 HD_AGENT_NAME_MAX, err)) < 0)
		return rc;
	if (role != NULL && (rc = hd_text_check("agent role", role, 0,
				 HD_AGENT_ROLE_MAX, err)) < 0)
		return rc;
	return 0;
}

/* An agent row's columns, in agent_row's order: config is the runtime
 * config column (or NULL, unread), leader an expression true for the
 * team's leader. */
#define AGENT_COLS_OF(config, leader)                                         \
	"a.id, a.name, a.team_id, a.role, a.runtime, " config ","             \
	" a.status, a.spawned_by, a.session_key, a.last_active_at,"           \
	" a.created_at, a.updated_at, " leader ","                            \
	" a.status_reason, a.spawn_depth, a.turns, a.turn_at"
#define AGENT_COLS                                                            \
	AGENT_COLS_OF("a.runtime_config",                                     \
	    "(SELECT t.leader_agent_id = a.id FROM teams t"                   \
	    " WHERE t.id = a.team_id)")

static void
config_free(void *v)
{
	json_decref(v);
}

/* The stored runtime_config text as every reader sees it: NULL reads as
 * {}, and text that is not a JSON object as an empty object. A new
 * reference; NULL only when memory ran out. With a store, the parse is
 * kept in its memo beside the text (store.h) and shared from there while
 * the stored text is the same: a long-lived process (the server, an
 * exchange after another) does not parse an unchanged config again, and
 * every reader only reads a config. */
static json_t *
config_parse(hd_store *st, const char *id, const char *text)
{
	char key[96]; /* "agent-config:" and a slug of at most 50 */
	const json_t *kept;
	json_t *cfg;

	if (text == NULL)
		text = "{}";
	if (st != NULL && id != NULL) {
		snprintf(key, sizeof(key), "agent-config:%s", id);
		if ((kept = hd_store_memo_get(st, key, text)) != NULL)
			return json_incref((json_t *)kept);
	}
	cfg = json_loads(text, 0, NULL);
	if (!json_is_object(cfg)) {
		json_decref(cfg);
		cfg = json_object();
	}
	if (cfg != NULL && st != NULL && id != NULL)
		hd_store_memo_put(st, key, text, json_incref(cfg), config_free);
	return cfg;
}

int
hd_agent_config_parse(
    hd_store *st, hd_agent *a, const char *text, hd_err *err)
{
	json_t *cfg = config_parse(st, a->id, text);

	if (cfg == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	json_decref(a->runtime_config);
	a->runtime_config = cfg;
	return 0;
}

/* One row of AGENT_COLS_OF; with config 0 the stored runtime_config is not
 * parsed (a roster: hd_agent_roster) and reads as an empty object. */
static int
agent_row(hd_store *st, hd_agent *a, hd_stmt *s, int config)
{
	memset(a, 0, sizeof(*a));
	a->id = hd_store_col_dup(s, 0);
	a->name = hd_store_col_dup(s, 1);
	a->team_id = hd_store_col_dup(s, 2);
	a->role = hd_store_col_dup(s, 3);
	a->runtime = hd_store_col_dup(s, 4);
	a->runtime_config =
	    config ? config_parse(
			 st, a->id, hd_stmt_text(s, 5))
		   : json_object();
	a->status = hd_store_col_dup(s, 6);
	a->spawned_by = hd_store_col_dup(s, 7);
	a->session_key = hd_store_col_dup(s, 8);
	a->last_active_at = hd_stmt_int(s, 9);
	a->created_at = hd_stmt_int(s, 10);
	a->updated_at = hd_stmt_int(s, 11);
	a->is_leader = hd_stmt_int(s, 12);
	a->status_reason = hd_store_col_dup(s, 13);
	a->spawn_depth = hd_stmt_int(s, 14);
	a->turns = hd_stmt_int(s, 15);
	a->turn_at = hd_stmt_int(s, 16);
	if (a->id == NULL || a->name == NULL || a->role == NULL ||
	    a->runtime == NULL || a->status == NULL || a->runtime_config == NULL)
		return -1;
	return 0;
}

static void
agent_dispose(void *item)
{
	hd_agent *a = item;

	free(a->id);
	free(a->name);
	free(a->team_id);
	free(a->role);
	free(a->runtime);
	json_decref(a->runtime_config);
	free(a->status);
	free(a->spawned_by);
	free(a->session_key);
	free(a->status_reason);
}

void
hd_agent_free(hd_agent *a)
{
	if (a == NULL)
		return;
	agent_dispose(a);
	free(a);
}

void
hd_agents_dispose(hd_agents *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), agent_dispose);
	l->items = NULL;
	l->n = 0;
}

/* A whole row, its config parsed (agent_row); ctx is the store. */
static int
agent_fill(void *item, hd_stmt *s, void *ctx)
{
	return agent_row(ctx, item, s, 1);
}

int
hd_agent__load(hd_agent **out, hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	hd_agent a;
	int rc;

	*out = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " AGENT_COLS " FROM agents a WHERE a.id = ?",
		 HD_TEXT(id))) < 0 ||
	    (rc = hd_store_row(st, s, &a, agent_fill, agent_dispose, st,
		 err)) <= 0)
		return rc;
	if ((*out = malloc(sizeof(a))) == NULL) {
		agent_dispose(&a);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	**out = a;
	return 0;
}

int
hd_agent_get(hd_agent **out, hd_store *st, const char *id, hd_err *err)
{
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("agent", id, err)) < 0)
		return rc;
	if ((rc = hd_agent__load(out, st, id, err)) < 0)
		return rc;
	if (*out == NULL)
		return hd_err_set(err, HD_ENOTFOUND, "agent \"%s\" not found", id);
	return 0;
}

/* One indexed probe: hd_agent_get's answer without building the row
 * (its runtime_config is parsed JSON, most of the cost of a load). */
int
hd_agent_exists(hd_store *st, const char *id, hd_err *err)
{
	return hd_team__probe(
	    st, "SELECT 1 FROM agents WHERE id = ?", "agent", id, err);
}

/* One team's agents, the way the list of all orders them (the leader
 * first, then by id), in one statement: the team's row, joined to its
 * agents in id order straight from agents_team (team_id, id), so nothing
 * is sorted. A team without agents reads as one row of NULLs; no row at
 * all means no such team. The leader is moved to the front as the rows
 * are read. */
#define TEAM_SQL                                                              \
	"SELECT " AGENT_COLS_OF(                                              \
	    "a.runtime_config", "t.leader_agent_id = a.id")                   \
	" FROM teams t LEFT JOIN agents a ON a.team_id = t.id"                \
	" WHERE t.id = ?1 ORDER BY a.id"

/* Move row k (the leader) in front of rows 0..k-1. */
static void
leader_first(hd_agent *items, char **tx, size_t k)
{
	hd_agent lead = items[k];
	char *text = tx != NULL ? tx[k] : NULL;

	memmove(&items[1], &items[0], k * sizeof(*items));
	items[0] = lead;
	if (tx != NULL) {
		memmove(&tx[1], &tx[0], k * sizeof(*tx));
		tx[0] = text;
	}
}

/* What a list reads of each agent. */
enum list_what {
	LIST_ROWS,  /* whole rows, each runtime_config parsed */
	LIST_TEXTS, /* whole rows, configs left as text (*texts) */
	LIST_NAMES  /* ids, the leader and activity only (a roster) */
};

/* A roster names members and what they are doing: their ids in
 * agents_team's order, the leader from the team's row, as a list orders
 * them, and the activity columns; never a config. */
#define NAMES_SQL                                                              \
	"SELECT a.id, t.leader_agent_id = a.id, a.status, a.status_reason,"   \
	" a.last_active_at, a.turns, a.turn_at FROM teams t"                   \
	" LEFT JOIN agents a ON a.team_id = t.id"                              \
	" WHERE t.id = ?1 ORDER BY a.id"

/* A roster's row: the id, whether it leads, its activity. */
static int
name_row(hd_agent *a, hd_stmt *s)
{
	memset(a, 0, sizeof(*a));
	a->is_leader = hd_stmt_int(s, 1);
	a->last_active_at = hd_stmt_int(s, 4);
	a->turns = hd_stmt_int(s, 5);
	a->turn_at = hd_stmt_int(s, 6);
	a->id = hd_store_col_dup(s, 0);
	a->status = hd_store_col_dup(s, 2);
	a->status_reason = hd_store_col_dup(s, 3);
	return a->id == NULL || a->status == NULL ? -1 : 0;
}

/* What agent_list's rows need, and what they leave beside the items. */
struct list_ctx {
	hd_store *st;
	enum list_what what;
	int found;       /* a row came: the team exists */
	char **tx;       /* LIST_TEXTS: tx[i] for items[i] */
	size_t ntx, cap; /* of tx */
};

/* One row of a list: a member (skipped when it is the team's row of
 * NULLs), with LIST_TEXTS its stored config text kept aside. */
static int
list_row(void *item, hd_stmt *s, void *ctx)
{
	struct list_ctx *c = ctx;
	const char *cfg;
	char **nt;

	c->found = 1;
	if (hd_stmt_is_null(s, 0))
		return 1; /* the team, without agents */
	memset(item, 0, sizeof(hd_agent));
	if (c->what == LIST_TEXTS) {
		if (c->ntx == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 8;
			if ((nt = realloc(c->tx, c->cap * sizeof(*nt))) == NULL)
				return -1;
			c->tx = nt;
		}
		cfg = hd_stmt_text(s, 5);
		if ((c->tx[c->ntx] = strdup(cfg != NULL ? cfg : "{}")) == NULL)
			return -1;
		c->ntx++;
	}
	return c->what == LIST_NAMES
		   ? name_row(item, s)
		   : agent_row(c->st, item, s, c->what == LIST_ROWS);
}

/* The agents of team (NULL: all; LIST_NAMES needs a team), as what says.
 * With LIST_TEXTS, texts gets each row's stored runtime_config, texts[i]
 * for items[i], and each config reads as an empty object, so the caller
 * can parse the ones it needs later (hd_agent_roster_configs). */
static int
agent_list(hd_agents *out, char ***texts, hd_store *st, const char *team,
    enum list_what what, hd_err *err)
{
	struct list_ctx c = {st, what, team == NULL, NULL, 0, 0};
	hd_stmt *s;
	void *items = NULL;
	const char *sql;
	size_t n = 0, k;
	int rc;

	memset(out, 0, sizeof(*out));
	if (texts != NULL)
		*texts = NULL;
	if (team != NULL && (rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (team == NULL)
		sql = "SELECT " AGENT_COLS " FROM agents a"
		      " ORDER BY a.team_id, 13 DESC, a.id";
	else
		sql = what == LIST_NAMES ? NAMES_SQL : TEAM_SQL;
	if ((rc = hd_store_prepare(st, &s, sql, err)) < 0)
		return rc;
	if (team != NULL)
		hd_stmt_bind_text(s, 1, team);
	if ((rc = hd_store_rows(st, s, sizeof(hd_agent), list_row,
		 agent_dispose, &c, &items, &n, err)) == 0 &&
	    !c.found)
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "team \"%s\" not found", team);
	if (rc < 0) {
		hd_store_rows_free(items, n, sizeof(hd_agent), agent_dispose);
		hd_agent_config_texts_free(c.tx, c.ntx);
		return rc;
	}
	out->items = items;
	out->n = n;
	for (k = 1; team != NULL && k < n; k++)
		if (out->items[k].is_leader)
			leader_first(out->items, c.tx, k);
	if (texts != NULL)
		*texts = c.tx;
	return 0;
}

int
hd_agent_list(hd_agents *out, hd_store *st, const char *team,
    hd_err *err)
{
	return agent_list(out, NULL, st, team, LIST_ROWS, err);
}

int
hd_agent_roster(hd_agents *out, hd_store *st, const char *team,
    hd_err *err)
{
	if (team == NULL)
		return hd_err_set(err, HD_EINVAL, "a team is required");
	return agent_list(out, NULL, st, team, LIST_NAMES, err);
}

int
hd_agent_roster_configs(hd_agents *out, char ***texts, hd_store *st,
    const char *team, hd_err *err)
{
	return agent_list(out, texts, st, team, LIST_TEXTS, err);
}

void
hd_agent_config_texts_free(char **texts, size_t n)
{
	size_t i;

	if (texts == NULL)
		return;
	for (i = 0; i < n; i++)
		free(texts[i]);
	free(texts);
}

int
hd_agent__insert(hd_store *st, const hd_agent_spec *spec, hd_err *err)
{
	int64_t now = hd_now_ms();
	char *cfg = NULL;
	int rc;

	cfg = spec->runtime_config != NULL
	    ? json_dumps(spec->runtime_config, JSON_COMPACT | JSON_SORT_KEYS)
	    : NULL;
	rc = hd_store_run(st, err,
	    "INSERT INTO agents(id, name, team_id, role, runtime,"
	    " runtime_config, created_at, updated_at, spawned_by,"
	    " session_key, spawn_depth)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    HD_TEXT(spec->id), HD_TEXT(spec->name ? spec->name : spec->id),
	    HD_TEXT(spec->team), HD_TEXT(spec->role ? spec->role : ""),
	    HD_TEXT(spec->runtime ? spec->runtime : HD_AGENT_RUNTIME_DEFAULT),
	    HD_TEXT(cfg ? cfg : "{}"), HD_INT(now), HD_INT(now),
	    HD_TEXT(spec->spawned_by), HD_TEXT(spec->session_key),
	    HD_INT(spec->spawn_depth));
	free(cfg);
	if (rc < 0) {
		if (rc == HD_EEXISTS)
			hd_err_set(err, HD_EEXISTS, "agent \"%s\" already exists",
			    spec->id);
		return rc;
	}
	hd_events_append(st, "agent_added", spec->team, 0, spec->id,
	    json_pack("{s:s, s:b}", "runtime",
		spec->runtime ? spec->runtime : HD_AGENT_RUNTIME_DEFAULT,
		"leader", spec->leader));
	return 0;
}

static int
agent_add_txn(hd_store *st, void *payload, hd_err *err)
{
	const hd_agent_spec *spec = payload;
	hd_team *t = NULL;
	hd_agent *a = NULL;
	int rc;

	if ((rc = hd_team__load(&t, st, spec->team, err)) < 0)
		goto done;
	if (t == NULL) {
		rc = hd_err_set(err, HD_ENOTFOUND, "team \"%s\" not found",
		    spec->team);
		goto done;
	}
	if ((rc = hd_agent__load(&a, st, spec->id, err)) < 0)
		goto done;
	if (a != NULL) {
		if (a->team_id != NULL)
			rc = hd_err_set(err, HD_EEXISTS,
			    "agent \"%s\" already exists in team %s", spec->id,
			    a->team_id);
		else
			rc = hd_err_set(err, HD_EEXISTS,
			    "agent \"%s\" already exists", spec->id);
		goto done;
	}
	if (spec->leader && t->leader_agent_id != NULL) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "team %s already has a leader (%s)", t->id, t->leader_agent_id);
		goto done;
	}
	if ((rc = hd_agent__insert(st, spec, err)) < 0)
		goto done;
	if (spec->leader)
		rc = hd_team__set_leader(st, spec->team, spec->id, err);
done:
	hd_team_free(t);
	hd_agent_free(a);
	return rc;
}

int
hd_agent_add(hd_agent **out, hd_store *st, const hd_agent_spec *spec,
    hd_err *err)
{
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("team", spec->team, err)) < 0 ||
	    (rc = hd_slug_check("agent", spec->id, err)) < 0 ||
	    (rc = hd_agent__check_fields(spec->name, spec->role, err)) < 0 ||
	    (rc = hd_agent_check_runtime(
		 spec->runtime ? spec->runtime : HD_AGENT_RUNTIME_DEFAULT,
		 spec->runtime_config, spec->check, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, agent_add_txn, (void *)spec, err)) < 0)
		return rc;
	return out != NULL ? hd_agent_get(out, st, spec->id, err) : 0;
}

static int
agent_rm_txn(hd_store *st, void *payload, hd_err *err)
{
	const char *id = payload;
	hd_agent *a = NULL;
	int rc;

	if ((rc = hd_agent__load(&a, st, id, err)) < 0)
		return rc;
	if (a == NULL)
		return hd_err_set(err, HD_ENOTFOUND, "agent \"%s\" not found", id);
	if (a->is_leader &&
	    (rc = hd_team__set_leader(st, a->team_id, NULL, err)) < 0)
		goto done;
	if ((rc = hd_store_run(st, err, "DELETE FROM agents WHERE id = ?",
		 HD_TEXT(id))) < 0)
		goto done;
	hd_events_append(st, "agent_removed", a->team_id, 0, id, NULL);
done:
	hd_agent_free(a);
	return rc;
}

int
hd_agent_remove(hd_store *st, const char *id, hd_err *err)
{
	int rc;

	if ((rc = hd_slug_check("agent", id, err)) < 0)
		return rc;
	return hd_store_write(st, agent_rm_txn, (void *)id, err);
}

json_t *
hd_agent_to_json(const hd_agent *a)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(a->id));
	json_object_set_new(o, "name", json_string(a->name));
	json_object_set_new(o, "team_id",
	    a->team_id ? json_string(a->team_id) : json_null());
	json_object_set_new(o, "role", json_string(a->role));
	json_object_set_new(o, "runtime", json_string(a->runtime));
	json_object_set(o, "runtime_config", a->runtime_config);
	json_object_set_new(o, "status", json_string(a->status));
	json_object_set_new(o, "leader", json_boolean(a->is_leader));
	json_object_set_new(o, "spawned_by",
	    a->spawned_by ? json_string(a->spawned_by) : json_null());
	json_object_set_new(o, "session_key",
	    a->session_key ? json_string(a->session_key) : json_null());
	json_object_set_new(o, "last_active_at",
	    a->last_active_at ? json_integer(a->last_active_at) : json_null());
	json_object_set_new(o, "status_reason",
	    a->status_reason ? json_string(a->status_reason) : json_null());
	json_object_set_new(o, "spawn_depth", json_integer(a->spawn_depth));
	json_object_set_new(o, "turns", json_integer(a->turns));
	json_object_set_new(o, "turn_started_at",
	    a->turn_at ? json_integer(a->turn_at) : json_null());
	json_object_set_new(o, "created_at", json_integer(a->created_at));
	json_object_set_new(o, "updated_at", json_integer(a->updated_at));
	return o;
}

static const char *const agent_statuses[] = {
	"idle", "working", "shutdown_requested", "shutdown", "error", NULL,
};

/* `invalid agent status "x": use idle, ...` unless status is one. */
static int
status_check(const char *status, hd_err *err)
{
	int i;

	for (i = 0; agent_statuses[i] != NULL; i++)
		if (strcmp(agent_statuses[i], status) == 0)
			return 0;
	return hd_err_set(err, HD_EINVAL,
	    "invalid agent status \"%.64s\": use idle, working, "
	    "shutdown_requested, shutdown or error",
	    status);
}

struct agent_status {
	const char *id;
	const char *status;
	int with_reason; /* also set status_reason to reason */
	const char *reason;
};

/* Write status_reason (NULL clears it); no event of its own: it goes
 * with the status it explains. */
static int
agent_reason_set(hd_store *st, const struct agent_status *as, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE agents SET status_reason = ?1 WHERE id = ?2",
	    HD_TEXT(as->reason), HD_TEXT(as->id));
}

/* A status change, ?1 the status, ?2 now, matched on the id (?3) and
 * what the caller adds: working stamps the activity, and any status but
 * error clears the reason. */
#define STATUS_SET                                                            \
	"UPDATE agents SET status = ?1, updated_at = ?2,"                     \
	" last_active_at = CASE WHEN ?1 = 'working' THEN ?2"                  \
	"   ELSE last_active_at END,"                                         \
	" status_reason = CASE WHEN ?1 = 'error' THEN status_reason"          \
	"   END"                                                              \
	" WHERE id = ?3"

static int
agent_status_txn(hd_store *st, void *payload, hd_err *err)
{
	struct agent_status *as = payload;
	hd_agent *a = NULL;
	int rc;

	if ((rc = hd_agent__load(&a, st, as->id, err)) < 0)
		return rc;
	if (a == NULL)
		return hd_err_set(err, HD_ENOTFOUND, "agent \"%s\" not found",
		    as->id);
	if (strcmp(a->status, as->status) == 0)
		goto reason; /* no change, no event */
	if ((rc = hd_store_run(st, err, STATUS_SET, HD_TEXT(as->status),
		 HD_INT(hd_now_ms()), HD_TEXT(as->id))) < 0)
		goto done;
	hd_events_append(st, "agent_status", a->team_id, 0, as->id,
	    json_pack("{s:s, s:s}", "from", a->status, "to", as->status));
reason: /* after the change, which clears a reason of another status */
	if (as->with_reason)
		rc = agent_reason_set(st, as, err);
done:
	hd_agent_free(a);
	return rc;
}

struct agent_status_if {
	const char *team; /* the caller's, or NULL: read back */
	const char *id;
	const char *from;
	const char *to;
	int changed;
};

/* Without RETURNING: SQLite runs that as a trigger program filling a
 * temporary table, about four times the cost of the UPDATE itself, and the
 * exchange moves its speaker idle -> working -> idle on every turn. A
 * caller that names the team matches the row on it too, so the event's
 * team is that row's; otherwise the team is read back, only when the row
 * changed, in the same transaction. */
static int
agent_status_if_txn(hd_store *st, void *payload, hd_err *err)
{
	struct agent_status_if *as = payload;
	hd_stmt *s;
	hd_buf data = HD_BUF_INIT(0);
	char *team = NULL;
	int rc, src;

	as->changed = 0;
	if ((rc = hd_store_run(st, err,
		 STATUS_SET " AND status = ?4 AND (?5 IS NULL OR team_id = ?5)",
		 HD_TEXT(as->to), HD_INT(hd_now_ms()), HD_TEXT(as->id),
		 HD_TEXT(as->from), HD_TEXT(as->team))) < 0)
		return rc;
	if (hd_store_changes(st) == 0)
		return 0;
	as->changed = 1;
	if (as->team == NULL) {
		if ((rc = hd_store_query(st, &s, err,
			 "SELECT team_id FROM agents WHERE id = ?",
			 HD_TEXT(as->id))) < 0)
			return rc;
		if ((src = hd_stmt_step(s)) == HD_ROW)
			team = hd_store_col_dup(s, 0);
		else
			rc = hd_store_sqlerr(st, src, err);
		hd_store_reset(s);
	}
	/* both are statuses the CHECK accepted: no escaping needed */
	if (rc == 0) {
		hd_buf_puts(&data, "{\"from\":\"");
		hd_buf_puts(&data, as->from);
		hd_buf_puts(&data, "\",\"to\":\"");
		hd_buf_puts(&data, as->to);
		hd_buf_puts(&data, "\"}");
		hd_events_append_raw(st, "agent_status",
		    as->team != NULL ? as->team : team, 0, as->id,
		    hd_buf_failed(&data) ? NULL : data.ptr);
		hd_buf_dispose(&data);
	}
	free(team);
	return rc;
}

int
hd_agent_set_status_if(hd_store *st, const char *team, const char *agent,
    const char *from, const char *to, int *changed, hd_err *err)
{
	struct agent_status_if as = {team, agent, from, to, 0};
	int rc;

	if (changed != NULL)
		*changed = 0;
	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (team != NULL && (rc = hd_slug_check("team", team, err)) < 0))
		return rc;
	if ((rc = status_check(to, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, agent_status_if_txn, &as, err)) < 0)
		return rc;
	if (changed != NULL)
		*changed = as.changed;
	return 0;
}

int
hd_agent_set_status_reason(hd_store *st, const char *agent,
    const char *status, const char *reason, hd_err *err)
{
	struct agent_status as = {agent, status, 1, reason};
	int rc;

	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (reason != NULL && (rc = hd_text_check("status reason", reason, 1,
				    HD_AGENT_REASON_MAX, err)) < 0) ||
	    (rc = status_check(status, err)) < 0)
		return rc;
	return hd_store_write(st, agent_status_txn, &as, err);
}

int
hd_agent_set_status(hd_store *st, const char *agent, const char *status,
    hd_err *err)
{
	struct agent_status as = {agent, status, 0, NULL};
	int rc;

	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = status_check(status, err)) < 0)
		return rc;
	return hd_store_write(st, agent_status_txn, &as, err);
}
