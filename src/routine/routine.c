/*
 * routine.c -- routines (routine.h): a team's recurring tasks. Owns table
 * `routines`; nothing else writes it (team removal calls
 * hd_routine_team_purge).
 *  (1) A routine is validated whole (slugs, texts, exactly one of cron
 *      and every, the cron expression, the zone, a member agent) before
 *      anything is written; a cron that never matches is refused.
 *  (2) next_fire_at is stored: the first scheduled time after the
 *      routine was added, enabled or last fired (NULL when disabled or
 *      never matching). The due scan is an index range on it.
 *  (3) A fire runs in one write transaction: the row is read again and
 *      must still be enabled and due with the next_fire_at the scan saw;
 *      the task is delegated (hd_board_delegate, in a savepoint: a
 *      refusal such as an agent shut down rolls back only the task) and
 *      the row's UPDATE is conditional on that same next_fire_at. Two
 *      processes on one home serialize on the write lock, and the second
 *      finds the fire taken: one task per due fire (routine.h (1)).
 *  (4) A fire later than HD_ROUTINE_LATE_MS is a catch-up: its next
 *      fire is scheduled after now, not after the missed time, so a long
 *      downtime makes exactly one fire; it is said in the event and as a
 *      system line in the room (routine.h (2)).
 *  (5) fire-now fires by hand whatever the schedule: its event says
 *      manual, and next_fire_at is left as it was.
 * Callers: the operation table (src/ops/ops-routine.c), the supervisor's
 * routine ticker (engine/supervisor.c), team removal. Calls down: the
 * board (delegate), the room (the catch-up line), the team (membership),
 * events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/routine.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include <store/store.h>

#define TITLE_MAX 200
#define DESC_MAX 10000
#define DUE_BATCH 64

#define COLS                                                                  \
	"id, team_id, name, agent, cron, tz, every_s, title, description, "  \
	"priority, enabled, created_at, next_fire_at, last_fire_at, "        \
	"last_task_id, fires"

int64_t
hd_routine_now_ms(void)
{
	const char *file = getenv("HUDDLE_CLOCK_FILE");
	char buf[64];
	long long v;
	FILE *f;

	if (file == NULL || file[0] == '\0' || (f = fopen(file, "r")) == NULL)
		return hd_now_ms();
	if (fgets(buf, sizeof(buf), f) == NULL || sscanf(buf, "%lld", &v) != 1 ||
	    v <= 0)
		v = hd_now_ms();
	fclose(f);
	return (int64_t)v;
}

static void
dispose(void *item)
{
	hd_routine *r = item;

	free(r->team);
	free(r->name);
	free(r->agent);
	free(r->cron);
	free(r->tz);
	free(r->title);
	free(r->description);
}

static int
fill(void *item, hd_stmt *s, void *ctx)
{
	hd_routine *r = item;

	(void)ctx;
	memset(r, 0, sizeof(*r));
	r->id = hd_stmt_int(s, 0);
	r->team = hd_store_col_dup(s, 1);
	r->name = hd_store_col_dup(s, 2);
	r->agent = hd_store_col_dup(s, 3);
	r->cron = hd_store_col_dup(s, 4);
	r->tz = hd_store_col_dup(s, 5);
	r->every_s = hd_stmt_int(s, 6);
	r->title = hd_store_col_dup(s, 7);
	r->description = hd_store_col_dup(s, 8);
	r->priority = hd_stmt_int(s, 9);
	r->enabled = (int)hd_stmt_int(s, 10);
	r->created_at = hd_stmt_int(s, 11);
	r->next_fire_at = hd_stmt_int(s, 12);
	r->last_fire_at = hd_stmt_int(s, 13);
	r->last_task_id = hd_stmt_int(s, 14);
	r->fires = hd_stmt_int(s, 15);
	if (r->team == NULL || r->name == NULL || r->agent == NULL ||
	    r->title == NULL || r->description == NULL ||
	    (r->cron == NULL && !hd_stmt_is_null(s, 4)) ||
	    (r->tz == NULL && !hd_stmt_is_null(s, 5)))
		return -1;
	return 0;
}

void
hd_routine_free(hd_routine *r)
{
	if (r == NULL)
		return;
	dispose(r);
	free(r);
}

void
hd_routine_list_free(hd_routine *v, size_t n)
{
	hd_store_rows_free(v, n, sizeof(*v), dispose);
}

/* The row of (team, name), or id when team is NULL: 1, 0 none, or err. */
static int
load(hd_routine *r, hd_store *st, const char *team, const char *name,
    int64_t id, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if (team != NULL)
		rc = hd_store_query(st, &s, err,
		    "SELECT " COLS " FROM routines WHERE team_id = ?1 AND "
		    "name = ?2",
		    HD_TEXT(team), HD_TEXT(name));
	else
		rc = hd_store_query(st, &s, err,
		    "SELECT " COLS " FROM routines WHERE id = ?1", HD_INT(id));
	if (rc < 0)
		return rc;
	return hd_store_row(st, s, r, fill, dispose, NULL, err);
}

static int
not_found(hd_err *err, const char *team, const char *name)
{
	return hd_err_set(err, HD_ENOTFOUND, "routine \"%s\" not found in team %s",
	    name, team);
}

/* The first scheduled time after anchor (2): 1 with *next, 0 never. */
static int
next_after(int64_t *next, const hd_routine *r, int64_t anchor, hd_err *err)
{
	hd_cron c;
	int rc;

	if (r->every_s > 0) {
		*next = anchor + r->every_s * 1000;
		return 1;
	}
	if ((rc = hd_cron_parse(&c, r->cron, err)) < 0)
		return rc;
	return hd_cron_next(next, &c, r->tz, anchor, err);
}

json_t *
hd_routine_to_json(const hd_routine *r)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s?, s:s?, s:I, s:s, s:s, "
			      "s:I, s:b, s:I, s:I}",
	    "id", (json_int_t)r->id, "team", r->team, "name", r->name, "agent",
	    r->agent, "cron", r->cron, "tz", r->cron != NULL ? (r->tz != NULL ? r->tz : "UTC") : NULL,
	    "every_s", (json_int_t)r->every_s, "title", r->title,
	    "description", r->description, "priority", (json_int_t)r->priority,
	    "enabled", r->enabled, "created_at", (json_int_t)r->created_at,
	    "fires", (json_int_t)r->fires);

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "next_fire_at",
	    r->next_fire_at > 0 ? json_integer(r->next_fire_at) : json_null());
	json_object_set_new(o, "last_fire_at",
	    r->last_fire_at > 0 ? json_integer(r->last_fire_at) : json_null());
	json_object_set_new(o, "last_task_id",
	    r->last_task_id > 0 ? json_integer(r->last_task_id) : json_null());
	return o;
}

/* ---- add (1) ------------------------------------------------------------ */

struct add_ctx {
	const hd_routine_spec *spec;
	hd_routine r;
	int64_t now;
	hd_routine **out;
};

static int
add_txn(hd_store *st, void *payload, hd_err *err)
{
	struct add_ctx *a = payload;
	const hd_routine_spec *sp = a->spec;
	hd_routine *got;
	int64_t id;
	int rc;

	if ((rc = hd_team_member_check(st, sp->team, sp->agent, err)) < 0)
		return rc;
	rc = hd_store_run(st, err,
	    "INSERT INTO routines (team_id, name, agent, cron, tz, every_s, "
	    "title, description, priority, enabled, created_at, updated_at, "
	    "next_fire_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, "
	    "?10, ?11)",
	    HD_TEXT(sp->team), HD_TEXT(sp->name), HD_TEXT(sp->agent),
	    HD_TEXT(a->r.cron), HD_TEXT(a->r.tz), HD_INT(a->r.every_s),
	    HD_TEXT(sp->title), HD_TEXT(a->r.description), HD_INT(sp->priority),
	    HD_INT(a->now), HD_INT(a->r.next_fire_at));
	if (rc == HD_EEXISTS)
		return hd_err_set(err, HD_EEXISTS,
		    "routine \"%s\" already exists in team %s", sp->name,
		    sp->team);
	if (rc < 0)
		return rc;
	id = hd_store_last_id(st);
	hd_events_append(st, "routine_added", sp->team, 0, sp->agent,
	    json_pack("{s:s, s:I}", "routine", sp->name, "next_fire_at",
		(json_int_t)a->r.next_fire_at));
	if ((got = calloc(1, sizeof(*got))) == NULL)
		return hd_err_set(err, HD_ERR, "out of memory");
	if ((rc = load(got, st, NULL, NULL, id, err)) <= 0) {
		free(got);
		return rc < 0 ? rc : hd_err_set(err, HD_ERR, "routine vanished");
	}
	hd_routine_free(*a->out);
	*a->out = got;
	return 0;
}

int
hd_routine_add(hd_routine **out, hd_store *st, const hd_routine_spec *spec,
    int64_t now, hd_err *err)
{
	struct add_ctx a;
	hd_cron c;
	int rc;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	a.spec = spec;
	a.now = now;
	a.out = out;
	if ((rc = hd_slug_check("team", spec->team, err)) < 0 ||
	    (rc = hd_slug_check("routine", spec->name, err)) < 0 ||
	    (rc = hd_slug_check("agent", spec->agent, err)) < 0 ||
	    (rc = hd_text_check("task title", spec->title, 1, TITLE_MAX,
		 err)) < 0 ||
	    (spec->description != NULL &&
		(rc = hd_text_check("description", spec->description, 0,
		     DESC_MAX, err)) < 0))
		return rc;
	if ((spec->cron != NULL) == (spec->every != NULL))
		return hd_err_set(err, HD_EINVAL,
		    spec->cron != NULL ? "give --cron or --every, not both"
				       : "give a schedule: --cron EXPR or "
					 "--every DURATION");
	if (spec->tz != NULL && spec->cron == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "--tz goes with --cron (an interval has no time zone)");
	if (spec->priority < -1000 || spec->priority > 1000)
		return hd_err_set(
		    err, HD_EINVAL, "priority must be between -1000 and 1000");
	a.r.description = (char *)(spec->description != NULL ? spec->description : "");
	if (spec->cron != NULL) {
		if ((rc = hd_cron_parse(&c, spec->cron, err)) < 0 ||
		    (rc = hd_tz_check(spec->tz != NULL ? spec->tz : "UTC",
			 err)) < 0)
			return rc;
		a.r.cron = (char *)spec->cron;
		a.r.tz = (char *)spec->tz;
	} else if ((rc = hd_routine_parse_every(&a.r.every_s, spec->every,
			err)) < 0)
		return rc;
	if ((rc = next_after(&a.r.next_fire_at, &a.r, now, err)) < 0)
		return rc;
	if (rc == 0)
		return hd_err_set(err, HD_EINVAL,
		    "cron: \"%s\" never matches a date", spec->cron);
	return hd_store_write(st, add_txn, &a, err);
}

/* ---- read ---------------------------------------------------------------- */

int
hd_routine_get(hd_routine **out, hd_store *st, const char *team,
    const char *name, hd_err *err)
{
	hd_routine *r;
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("routine", name, err)) < 0)
		return rc;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return hd_err_set(err, HD_ERR, "out of memory");
	if ((rc = load(r, st, team, name, 0, err)) <= 0) {
		free(r);
		if (rc == 0 && (rc = hd_team_exists(st, team, err)) == 0)
			rc = not_found(err, team, name);
		return rc;
	}
	*out = r;
	return 0;
}

int
hd_routine_list(hd_routine **out, size_t *n, hd_store *st, const char *team,
    hd_err *err)
{
	hd_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_team_exists(st, team, err)) < 0)
		return rc;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " COLS " FROM routines WHERE team_id = ?1 ORDER BY name",
		 HD_TEXT(team))) < 0)
		return rc;
	return hd_store_rows(st, s, sizeof(**out), fill, dispose, NULL,
	    (void **)out, n, err);
}

/* ---- enable, disable, remove --------------------------------------------- */

struct set_ctx {
	const char *team, *name;
	int enabled;
	int64_t now;
	hd_routine *r;
};

static int
set_txn(hd_store *st, void *payload, hd_err *err)
{
	struct set_ctx *s = payload;
	hd_routine r;
	int64_t next = 0;
	int rc;

	if ((rc = load(&r, st, s->team, s->name, 0, err)) <= 0) {
		if (rc == 0 && (rc = hd_team_exists(st, s->team, err)) == 0)
			rc = not_found(err, s->team, s->name);
		return rc;
	}
	if (s->enabled && (rc = next_after(&next, &r, s->now, err)) < 0)
		goto done;
	if ((rc = hd_store_run(st, err,
		 "UPDATE routines SET enabled = ?2, next_fire_at = ?3, "
		 "updated_at = ?4 WHERE id = ?1",
		 HD_INT(r.id), HD_INT(s->enabled), HD_INT_OR_NULL(next > 0, next),
		 HD_INT(s->now))) < 0)
		goto done;
	if (r.enabled != s->enabled)
		hd_events_append(st,
		    s->enabled ? "routine_enabled" : "routine_disabled", s->team,
		    0, r.agent, json_pack("{s:s}", "routine", r.name));
	rc = load(s->r, st, NULL, NULL, r.id, err);
	rc = rc < 0 ? rc : 0;
done:
	dispose(&r);
	return rc;
}

int
hd_routine_set_enabled(hd_routine **out, hd_store *st, const char *team,
    const char *name, int enabled, int64_t now, hd_err *err)
{
	struct set_ctx s = {team, name, enabled, now, NULL};
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("routine", name, err)) < 0)
		return rc;
	if ((s.r = calloc(1, sizeof(*s.r))) == NULL)
		return hd_err_set(err, HD_ERR, "out of memory");
	if ((rc = hd_store_write(st, set_txn, &s, err)) < 0) {
		free(s.r);
		return rc;
	}
	*out = s.r;
	return 0;
}

struct rm_ctx {
	const char *team, *name;
};

static int
rm_txn(hd_store *st, void *payload, hd_err *err)
{
	struct rm_ctx *m = payload;
	int rc;

	if ((rc = hd_team_exists(st, m->team, err)) < 0 ||
	    (rc = hd_store_run(st, err,
		 "DELETE FROM routines WHERE team_id = ?1 AND name = ?2",
		 HD_TEXT(m->team), HD_TEXT(m->name))) < 0)
		return rc;
	if (hd_store_changes(st) == 0)
		return not_found(err, m->team, m->name);
	hd_events_append(st, "routine_removed", m->team, 0, NULL,
	    json_pack("{s:s}", "routine", m->name));
	return 0;
}

int
hd_routine_remove(hd_store *st, const char *team, const char *name, hd_err *err)
{
	struct rm_ctx m = {team, name};
	int rc;

	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("routine", name, err)) < 0)
		return rc;
	return hd_store_write(st, rm_txn, &m, err);
}

/* ---- fire (3) (4) (5) ---------------------------------------------------- */

struct fire_ctx {
	int64_t id;
	int64_t expect; /* the next_fire_at the scan saw; manual: unused */
	int64_t now;
	int manual;
	hd_routine_fire *out;
};

/* The task: delegated to the routine's agent in a savepoint (3). */
static void
fire_task(hd_store *st, const hd_routine *r, hd_routine_fire *f)
{
	hd_task_spec spec;
	hd_task *t = NULL;
	hd_err e = HD_ERR_INIT;
	json_t *meta = json_pack("{s:s}", "routine", r->name);

	memset(&spec, 0, sizeof(spec));
	spec.team = r->team;
	spec.subject = r->title;
	spec.description = r->description;
	spec.priority = r->priority;
	spec.metadata = meta;
	if (hd_store_savepoint(st, &e) < 0) {
		snprintf(f->error, sizeof(f->error), "%s", e.msg);
		json_decref(meta);
		return;
	}
	if (hd_board_delegate(&t, st, &spec, r->agent, &e) < 0) {
		snprintf(f->error, sizeof(f->error), "%s", e.msg);
		hd_store_savepoint_end(st, 0, NULL);
	} else {
		f->task_id = t->id;
		hd_store_savepoint_end(st, 1, NULL);
	}
	hd_task_free(t);
	json_decref(meta);
}

static int
fire_txn(hd_store *st, void *payload, hd_err *err)
{
	struct fire_ctx *fc = payload;
	hd_routine_fire *f = fc->out;
	hd_routine r;
	int64_t next = 0;
	char line[1024];
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = load(&r, st, NULL, NULL, fc->id, err)) <= 0)
		return rc; /* removed meanwhile: nothing to fire */
	if (!fc->manual && (!r.enabled || r.next_fire_at != fc->expect ||
			       r.next_fire_at <= 0 || r.next_fire_at > fc->now))
		goto done; /* another process fired it first (3) */
	f->routine_id = r.id;
	f->manual = fc->manual;
	f->scheduled_at = fc->manual ? fc->now : r.next_fire_at;
	f->catch_up = !fc->manual && fc->now - r.next_fire_at > HD_ROUTINE_LATE_MS;
	if (!fc->manual &&
	    (rc = next_after(&next, &r,
		 f->catch_up ? fc->now : r.next_fire_at, err)) < 0)
		goto done;
	fire_task(st, &r, f);
	if (fc->manual)
		rc = hd_store_run(st, err,
		    "UPDATE routines SET last_fire_at = ?2, last_task_id = "
		    "coalesce(?3, last_task_id), fires = fires + 1 WHERE id = ?1",
		    HD_INT(r.id), HD_INT(fc->now),
		    HD_INT_OR_NULL(f->task_id > 0, f->task_id));
	else
		rc = hd_store_run(st, err,
		    "UPDATE routines SET last_fire_at = ?2, last_task_id = "
		    "coalesce(?3, last_task_id), fires = fires + 1, "
		    "next_fire_at = ?4 WHERE id = ?1 AND next_fire_at = ?5",
		    HD_INT(r.id), HD_INT(fc->now),
		    HD_INT_OR_NULL(f->task_id > 0, f->task_id),
		    HD_INT_OR_NULL(next > 0, next), HD_INT(fc->expect));
	if (rc < 0)
		goto done;
	if (hd_store_changes(st) != 1) {
		rc = hd_err_set(err, HD_ECONFLICT, "routine %s fired elsewhere",
		    r.name);
		goto done;
	}
	if (f->task_id > 0)
		hd_events_append(st, "routine_fired", r.team, f->task_id, r.agent,
		    json_pack("{s:s, s:I, s:I, s:b, s:b}", "routine", r.name,
			"task", (json_int_t)f->task_id, "scheduled_at",
			(json_int_t)f->scheduled_at, "catch_up", f->catch_up,
			"manual", f->manual));
	else
		hd_events_append(st, "routine_fire_failed", r.team, 0, r.agent,
		    json_pack("{s:s, s:s, s:I, s:b, s:b}", "routine", r.name,
			"error", f->error, "scheduled_at",
			(json_int_t)f->scheduled_at, "catch_up", f->catch_up,
			"manual", f->manual));
	if (f->catch_up || f->task_id == 0) {
		if (f->task_id > 0)
			snprintf(line, sizeof(line),
			    "Routine %s: catch-up fire (missed its time while no "
			    "server ran): task #%lld for %s.",
			    r.name, (long long)f->task_id, r.agent);
		else
			snprintf(line, sizeof(line),
			    "Routine %s%s could not create its task for %s: %.300s",
			    r.name, f->catch_up ? " (catch-up fire)" : "",
			    r.agent, f->error);
		rc = hd_room_post(NULL, st, r.team, "system", NULL, line, err);
	}
done:
	dispose(&r);
	return rc < 0 ? rc : 0;
}

int
hd_routine_fire_due(int *fired, hd_store *st, int64_t now, hd_err *err)
{
	int64_t ids[DUE_BATCH], due[DUE_BATCH];
	hd_routine_fire f;
	hd_stmt *s;
	size_t n = 0, i;
	int rc;

	if (fired != NULL)
		*fired = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, next_fire_at FROM routines WHERE enabled = 1 AND "
		 "next_fire_at <= ?1 ORDER BY next_fire_at, id LIMIT 64",
		 HD_INT(now))) < 0)
		return rc;
	while ((rc = hd_stmt_step(s)) == HD_ROW && n < DUE_BATCH) {
		ids[n] = hd_stmt_int(s, 0);
		due[n] = hd_stmt_int(s, 1);
		n++;
	}
	hd_store_reset(s);
	if (rc != HD_DONE && rc != HD_ROW)
		return hd_store_sqlerr(st, rc, err);
	for (i = 0; i < n; i++) {
		struct fire_ctx fc = {ids[i], due[i], now, 0, &f};

		rc = hd_store_write(st, fire_txn, &fc, err);
		if (rc == HD_ECONFLICT)
			continue; /* (3): fired elsewhere */
		if (rc < 0)
			return rc;
		if (f.routine_id != 0 && fired != NULL)
			(*fired)++;
	}
	return 0;
}

int
hd_routine_fire_now(hd_routine_fire *out, hd_store *st, const char *team,
    const char *name, int64_t now, hd_err *err)
{
	hd_routine *r = NULL;
	struct fire_ctx fc;
	int rc;

	if ((rc = hd_routine_get(&r, st, team, name, err)) < 0)
		return rc;
	fc = (struct fire_ctx){r->id, 0, now, 1, out};
	hd_routine_free(r);
	if ((rc = hd_store_write(st, fire_txn, &fc, err)) < 0)
		return rc;
	if (out->task_id == 0)
		return hd_err_set(err, HD_EREFUSED, "routine %s fired, but %s",
		    name, out->error);
	return 0;
}

/* ---- team removal -------------------------------------------------------- */

int
hd_routine_team_count(int64_t *n, hd_store *st, const char *team, hd_err *err)
{
	int rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM routines WHERE team_id = ?1", HD_TEXT(team));

	return rc < 0 ? rc : 0;
}

int
hd_routine_team_purge(hd_store *st, const char *team, hd_err *err)
{
	return hd_store_run(
	    st, err, "DELETE FROM routines WHERE team_id = ?1", HD_TEXT(team));
}
