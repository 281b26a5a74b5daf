/*
 * events.c -- the append-only event log (SPEC 13). Owns table `events`.
 *  (1) An event exists exactly when the change it describes does. Inside
 *      a write transaction the event commits with the change; a failed
 *      insert fails that transaction (hd_store_fail_txn), so the change
 *      is refused too, even where a caller in between ignores the error.
 *      Nothing is logged and dropped: SSE and followers, which resume by
 *      seq, never miss a change that committed.
 *  (2) seq is the rowid and events are never deleted (a team purge keeps
 *      them), so seq only grows and is never reused: a reader resuming "after
 *      seq N" never misses or repeats an event.
 *  (3) A read of several kinds is one statement with a fixed number of
 *      kind parameters (unused ones bound NULL, which matches nothing), so
 *      it stays one cached statement and one pass over the rows. The test
 *      is a CASE, not kind IN (...) or ORs of kind = ?: SQLite turns those
 *      into a temporary b-tree filled on every run, which cost more than
 *      the rows did. The kind test is written before the team's:
 *      SQLite tests them in that order, and most rows walked are of other
 *      kinds, so they are rejected without the team comparison.
 *  (4) A task's history (hd_events_list_task, for the dashboard's task
 *      drawer) is the events naming its task_id. task_id has no index of
 *      its own: the reader names the team, and the team's index bounds
 *      the walk to that team's events.
 *  (5) A team's cost events over a window (hd_events_costs, for the
 *      spend read) walk the partial index events_cost (team_id, ts)
 *      WHERE kind = 'cost' (migration 19): the query names the kind as
 *      that literal, so the planner may use it, and the index holds only
 *      cost rows, so every other append pays nothing for it.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/util.h>

#include <store/store.h>


/* The insert; seq into *seq. Inside a transaction a failure refuses it. */
static int
events_insert(hd_store *st, const char *kind, const char *team,
    int64_t task_id, const char *agent, const char *data_json, int64_t *seq,
    hd_err *err)
{
	char id[37];
	int rc;

	/* the texts bind without a copy: the run resets the statement
	 * before they can go, and a NULL pointer binds NULL */
	if ((rc = hd_store_uuid(st, id, err)) < 0 ||
	    (rc = hd_store_run(st, err,
		 "INSERT INTO events(id, ts, kind, team_id, task_id, agent_id, "
		 "data)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?)",
		 HD_TEXT(id), HD_INT(hd_now_ms()), HD_TEXT(kind), HD_TEXT(team),
		 HD_INT_OR_NULL(task_id > 0, task_id), HD_TEXT(agent),
		 HD_TEXT(data_json != NULL ? data_json : "{}"))) < 0) {
		hd_store_fail_txn(st, err); /* (1) */
		return rc;
	}
	*seq = hd_store_last_id(st); /* seq is the rowid */
	return 0;
}

int64_t
hd_events_append_raw(hd_store *st, const char *kind, const char *team,
    int64_t task_id, const char *agent, const char *data_json)
{
	hd_err err = HD_ERR_INIT;
	int64_t seq = 0;

	if (events_insert(st, kind, team, task_id, agent, data_json, &seq,
		&err) < 0)
		return 0;
	return seq;
}

int
hd_events_append(hd_store *st, const char *kind, const char *team,
    int64_t task_id, const char *agent, json_t *data)
{
	hd_err err = HD_ERR_INIT;
	char *text = NULL;
	int64_t seq;
	int rc;

	if (data != NULL &&
	    (text = json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER)) ==
		NULL) {
		json_decref(data);
		hd_err_set(&err, HD_ENOMEM, "out of memory");
		hd_store_fail_txn(st, &err);
		return HD_ENOMEM;
	}
	rc = events_insert(st, kind, team, task_id, agent, text, &seq, &err);
	free(text);
	json_decref(data);
	return rc;
}

static int
events_row(void *item, hd_stmt *s, void *ctx)
{
	hd_event *e = item;
	const char *data;

	(void)ctx;
	memset(e, 0, sizeof(*e));
	e->seq = hd_stmt_int(s, 0);
	e->id = hd_store_col_dup(s, 1);
	e->ts = hd_stmt_int(s, 2);
	e->kind = hd_store_col_dup(s, 3);
	e->team_id = hd_store_col_dup(s, 4);
	e->task_id = hd_stmt_int(s, 5);
	e->agent_id = hd_store_col_dup(s, 6);
	data = hd_stmt_text(s, 7);
	e->data = json_loads(data != NULL ? data : "{}", 0, NULL);
	if (e->data == NULL || !json_is_object(e->data)) {
		json_decref(e->data);
		e->data = json_object();
	}
	return (e->id == NULL || e->kind == NULL || e->data == NULL) ? -1 : 0;
}

static void
event_dispose(void *item)
{
	hd_event *e = item;

	free(e->id);
	free(e->kind);
	free(e->team_id);
	free(e->agent_id);
	json_decref(e->data);
}

/* Step s to the end into *out; resets s. */
static int
events_fetch(hd_event_list *out, hd_store *st, hd_stmt *s, hd_err *err)
{
	void *items;
	int rc;

	if ((rc = hd_store_rows(st, s, sizeof(hd_event), events_row,
		 event_dispose, NULL, &items, &out->n, err)) < 0)
		return rc;
	out->items = items;
	return 0;
}

static int
limit_check(int *limit, int asked, hd_err *err)
{
	*limit = asked == 0 ? 100 : asked;
	if (*limit < 1 || *limit > HD_EVENTS_LIMIT_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "limit must be between 1 and %d, not %d",
		    HD_EVENTS_LIMIT_MAX, *limit);
	return 0;
}

int
hd_events_list(
    hd_event_list *out, hd_store *st, const hd_event_filter *f, hd_err *err)
{
	static const char *const sql_after =
	    "SELECT seq, id, ts, kind, team_id, task_id, agent_id, data"
	    " FROM events WHERE seq > ?1 AND (?2 IS NULL OR team_id = ?2)"
	    " AND (?3 IS NULL OR kind = ?3) ORDER BY seq LIMIT ?4";
	static const char *const sql_tail =
	    "SELECT * FROM (SELECT seq, id, ts, kind, team_id, task_id,"
	    " agent_id, data FROM events WHERE (?2 IS NULL OR team_id = ?2)"
	    " AND (?3 IS NULL OR kind = ?3) ORDER BY seq DESC LIMIT ?4) AS tail"
	    " ORDER BY seq";
	hd_stmt *s;
	int limit, rc;

	memset(out, 0, sizeof(*out));
	if ((rc = limit_check(&limit, f->limit, err)) < 0)
		return rc;
	if ((rc = hd_store_query(st, &s, err,
		 f->after_seq > 0 ? sql_after : sql_tail, HD_INT(f->after_seq),
		 HD_TEXT(f->team), HD_TEXT(f->kind), HD_INT(limit))) < 0)
		return rc;
	return events_fetch(out, st, s, err);
}

int
hd_events_list_task(hd_event_list *out, hd_store *st, const char *team,
    int64_t task_id, int limit, hd_err *err)
{
	static const char *const sql =
	    "SELECT * FROM (SELECT seq, id, ts, kind, team_id, task_id,"
	    " agent_id, data FROM events WHERE team_id = ?1 AND task_id = ?2"
	    " ORDER BY seq DESC LIMIT ?3) AS tail ORDER BY seq";
	hd_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = limit_check(&limit, limit, err)) < 0)
		return rc;
	if ((rc = hd_store_query(st, &s, err, sql, HD_TEXT(team),
		 HD_INT(task_id), HD_INT(limit))) < 0)
		return rc;
	return events_fetch(out, st, s, err);
}

/* 1..HD_EVENTS_KINDS_MAX kinds, none NULL. */
static int
kinds_check(const char *const *kinds, size_t nkinds, hd_err *err)
{
	size_t i;

	if (nkinds < 1 || nkinds > HD_EVENTS_KINDS_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "between 1 and %d kinds, not %zu", HD_EVENTS_KINDS_MAX,
		    nkinds);
	for (i = 0; i < nkinds; i++)
		if (kinds[i] == NULL)
			return hd_err_set(err, HD_EINVAL, "a kind is required");
	return 0;
}

/* The kinds into the HD_EVENTS_KINDS_MAX parameters from first on, the
 * unused ones NULL (3). Static: events_fetch resets s before they go. */
static void
kinds_bind(hd_stmt *s, int first, const char *const *kinds, size_t nkinds)
{
	size_t i;

	for (i = 0; i < HD_EVENTS_KINDS_MAX; i++)
		if (i < nkinds)
			hd_stmt_bind_text(s, first + (int)i, kinds[i]);
		else
			hd_stmt_bind_null(s, first + (int)i);
}

int
hd_events_list_kinds(hd_event_list *out, hd_store *st, const char *team,
    const char *const *kinds, size_t nkinds, int64_t after_seq, int limit,
    hd_err *err)
{
	static const char *const sql =
	    "SELECT seq, id, ts, kind, team_id, task_id, agent_id, data"
	    " FROM events WHERE seq > ?1"
	    " AND CASE kind WHEN ?3 THEN 1 WHEN ?4 THEN 1 WHEN ?5 THEN 1"
	    " WHEN ?6 THEN 1 ELSE 0 END = 1 AND (?2 IS NULL OR team_id = ?2)"
	    " ORDER BY seq LIMIT ?7";
	hd_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = kinds_check(kinds, nkinds, err)) < 0 ||
	    (rc = limit_check(&limit, limit, err)) < 0)
		return rc;
	if ((rc = hd_store_prepare(st, &s, sql, err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, after_seq > 0 ? after_seq : 0);
	/* static: events_fetch resets s before the strings can go */
	if (team != NULL)
		hd_stmt_bind_text(s, 2, team);
	else
		hd_stmt_bind_null(s, 2);
	kinds_bind(s, 3, kinds, nkinds);
	hd_stmt_bind_int(s, 7, limit);
	return events_fetch(out, st, s, err);
}

int
hd_events_last_of(hd_event_list *out, hd_store *st, const char *agent,
    const char *const *kinds, size_t nkinds, hd_err *err)
{
	static const char *const sql =
	    "SELECT seq, id, ts, kind, team_id, task_id, agent_id, data"
	    " FROM events WHERE agent_id = ?1"
	    " AND CASE kind WHEN ?2 THEN 1 WHEN ?3 THEN 1 WHEN ?4 THEN 1"
	    " WHEN ?5 THEN 1 ELSE 0 END = 1 ORDER BY seq DESC LIMIT 1";
	hd_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = kinds_check(kinds, nkinds, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = hd_store_prepare(st, &s, sql, err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	kinds_bind(s, 2, kinds, nkinds);
	return events_fetch(out, st, s, err);
}

int
hd_events_progress(
    int64_t *out, hd_store *st, const char *agent, int64_t after_seq, hd_err *err)
{
	int rc;

	*out = 0;
	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = hd_store_get_int(st, out, err,
		 "SELECT COUNT(*) FROM events WHERE seq > ?1 AND agent_id = ?2"
		 " AND (kind = 'task_created' OR kind = 'task_claimed' OR"
		 " kind = 'status_changed' OR kind = 'dep_linked' OR"
		 " kind = 'message_sent')",
		 HD_INT(after_seq > 0 ? after_seq : 0), HD_TEXT(agent))) < 0)
		return rc;
	return 0;
}

int
hd_events_costs(hd_store *st, const char *team, int64_t since_ms,
    int64_t until_ms, hd_event_fn fn, void *ctx, hd_err *err)
{
	/* (5): 'cost' a literal, for the partial index */
	static const char *const sql =
	    "SELECT seq, id, ts, kind, team_id, task_id, agent_id, data"
	    " FROM events WHERE kind = 'cost' AND team_id = ?1"
	    " AND ts >= ?2 AND ts < ?3 ORDER BY ts, seq";
	hd_stmt *s;
	hd_event e;
	int rc, src, frc = 0;

	if ((rc = hd_store_query(st, &s, err, sql, HD_TEXT(team),
		 HD_INT(since_ms), HD_INT(until_ms))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if (events_row(&e, s, NULL) < 0) {
			event_dispose(&e);
			hd_store_reset(s);
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		}
		frc = fn(ctx, &e);
		event_dispose(&e);
		if (frc < 0)
			break;
	}
	hd_store_reset(s);
	if (frc < 0)
		return frc;
	if (src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

int
hd_events_head(int64_t *out, hd_store *st, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(
		 st, &s, "SELECT COALESCE(MAX(seq), 0) FROM events", err)) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW)
		*out = hd_stmt_int(s, 0);
	else
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

json_t *
hd_event_to_json(const hd_event *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "seq", json_integer(e->seq));
	json_object_set_new(o, "id", json_string(e->id));
	json_object_set_new(o, "ts", json_integer(e->ts));
	json_object_set_new(o, "kind", json_string(e->kind));
	json_object_set_new(
	    o, "team_id", e->team_id ? json_string(e->team_id) : json_null());
	json_object_set_new(
	    o, "task_id", e->task_id ? json_integer(e->task_id) : json_null());
	json_object_set_new(o, "agent_id",
	    e->agent_id ? json_string(e->agent_id) : json_null());
	json_object_set(o, "data", e->data);
	return o;
}

void
hd_event_list_dispose(hd_event_list *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), event_dispose);
	l->items = NULL;
	l->n = 0;
}
