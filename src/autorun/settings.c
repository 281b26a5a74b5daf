/*
 * settings.c -- a team's autorun settings (autorun.h), kept on its row in
 * teams (the autorun columns of migration 12: autorun, autorun_paused,
 * turns_per_hour, park_after). The autorun module owns those columns
 * (the team module reads them into hd_team); the supervisor
 * (src/engine/supervisor.c) reads them and never writes them.
 *  (1) A set that changes nothing writes nothing and emits nothing, so a
 *      team file applied twice leaves no trace the second time.
 * Callers: the CLI (team update, pause, resume), apply.c (team files),
 * the supervisor.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/autorun.h>
#include <huddle/events.h>
#include <huddle/util.h>

#include "autorun_int.h"

/* Columns autorun, autorun_paused, turns_per_hour, park_after. */
static void
autorun_fill(void *elem, hd_stmt *s)
{
	hd_autorun *out = elem;

	out->on = hd_stmt_int(s, 0) != 0;
	out->paused = hd_stmt_int(s, 1) != 0;
	out->turns_per_hour = hd_stmt_int(s, 2);
	out->park_after = hd_stmt_int(s, 3);
}

static int
autorun_load(
    hd_autorun *out, int *found, hd_store *st, const char *team, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*found = 0;
	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT autorun, autorun_paused, turns_per_hour, park_after"
		 " FROM teams WHERE id = ?1",
		 HD_TEXT(team))) < 0)
		return rc;
	return hd_autorun__row(found, out, st, s, autorun_fill, err);
}

int
hd_autorun_get(hd_autorun *out, hd_store *st, const char *team, hd_err *err)
{
	int found, rc;

	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = autorun_load(out, &found, st, team, err)) < 0)
		return rc;
	if (!found)
		return hd_err_set(
		    err, HD_ENOTFOUND, "team \"%s\" not found", team);
	return 0;
}

static int
spec_check(const hd_autorun_spec *spec, hd_err *err)
{
	if (spec->turns_per_hour != 0 &&
	    (spec->turns_per_hour < 1 ||
		spec->turns_per_hour > HD_AUTORUN_TURNS_PER_HOUR_MAX))
		return hd_err_set(err, HD_EINVAL,
		    "turns_per_hour must be between 1 and %d",
		    HD_AUTORUN_TURNS_PER_HOUR_MAX);
	if (spec->park_after != 0 &&
	    (spec->park_after < 1 ||
		spec->park_after > HD_AUTORUN_PARK_AFTER_MAX))
		return hd_err_set(err, HD_EINVAL,
		    "park_after must be between 1 and %d",
		    HD_AUTORUN_PARK_AFTER_MAX);
	return 0;
}

struct set_txn {
	const char *team;
	const hd_autorun_spec *spec;
	hd_autorun now;
};

static int
set_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct set_txn *t = payload;
	const hd_autorun_spec *sp = t->spec;
	hd_autorun was;
	int found, rc;

	if ((rc = autorun_load(&was, &found, st, t->team, err)) < 0)
		return rc;
	if (!found)
		return hd_err_set(
		    err, HD_ENOTFOUND, "team \"%s\" not found", t->team);
	t->now = was;
	if (sp->on >= 0)
		t->now.on = sp->on != 0;
	if (sp->paused >= 0)
		t->now.paused = sp->paused != 0;
	if (sp->turns_per_hour > 0)
		t->now.turns_per_hour = sp->turns_per_hour;
	if (sp->park_after > 0)
		t->now.park_after = sp->park_after;
	if (memcmp(&was, &t->now, sizeof(was)) == 0)
		return 0; /* (1) */
	if ((rc = hd_store_run(st, err,
		 "UPDATE teams SET autorun = ?2, autorun_paused = ?3,"
		 " turns_per_hour = ?4, park_after = ?5, updated_at = ?6"
		 " WHERE id = ?1",
		 HD_TEXT(t->team), HD_INT(t->now.on), HD_INT(t->now.paused),
		 HD_INT(t->now.turns_per_hour), HD_INT(t->now.park_after),
		 HD_INT(hd_now_ms()))) < 0)
		return rc;
	hd_events_append(
	    st, "team_autorun", t->team, 0, NULL, hd_autorun_to_json(&t->now));
	return 0;
}

int
hd_autorun_set(hd_autorun *out, hd_store *st, const char *team,
    const hd_autorun_spec *spec, hd_err *err)
{
	struct set_txn t;
	int rc;

	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = spec_check(spec, err)) < 0)
		return rc;
	memset(&t, 0, sizeof(t));
	t.team = team;
	t.spec = spec;
	if ((rc = hd_store_write(st, set_txn_fn, &t, err)) < 0)
		return rc;
	if (out != NULL)
		*out = t.now;
	return 0;
}

static int
parse_count(
    int64_t *out, const json_t *o, const char *key, int64_t max, hd_err *err)
{
	const json_t *v = json_object_get(o, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > max)
		return hd_err_set(err, HD_EINVAL,
		    "autorun.%s must be an integer from 1 to %lld", key,
		    (long long)max);
	*out = json_integer_value(v);
	return 0;
}

int
hd_autorun_parse(hd_autorun_spec *spec, const json_t *v, hd_err *err)
{
	static const char *const keys[] = {
	    "on", "turns_per_hour", "park_after", NULL};
	const json_t *on;
	const char *key;
	json_t *x;
	int i, ok, rc;

	*spec = (hd_autorun_spec)HD_AUTORUN_SPEC_INIT;
	if (json_is_boolean(v)) {
		spec->on = json_is_true(v);
		return 0;
	}
	if (!json_is_object(v))
		return hd_err_set(
		    err, HD_EINVAL, "autorun must be true, false or an object");
	json_object_foreach ((json_t *)v, key, x) {
		for (ok = 0, i = 0; keys[i] != NULL && !ok; i++)
			ok = strcmp(keys[i], key) == 0;
		if (!ok)
			return hd_err_set(err, HD_EINVAL,
			    "autorun: unknown key \"%.64s\": use on, "
			    "turns_per_hour or park_after",
			    key);
	}
	on = json_object_get(v, "on");
	if (on != NULL && !json_is_boolean(on))
		return hd_err_set(
		    err, HD_EINVAL, "autorun.on must be true or false");
	spec->on = on == NULL || json_is_true(on);
	if ((rc = parse_count(&spec->turns_per_hour, v, "turns_per_hour",
		 HD_AUTORUN_TURNS_PER_HOUR_MAX, err)) < 0 ||
	    (rc = parse_count(&spec->park_after, v, "park_after",
		 HD_AUTORUN_PARK_AFTER_MAX, err)) < 0)
		return rc;
	return 0;
}

int
hd_autorun_teams(char ***out, size_t *n, hd_store *st, hd_err *err)
{
	hd_stmt *s;
	char **v = NULL, **grown, *id;
	size_t cnt = 0;
	int rc, src;

	*out = NULL;
	*n = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id FROM teams WHERE autorun != 0 ORDER BY id", err)) <
	    0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if ((id = hd_store_col_dup(s, 0)) == NULL ||
		    (grown = realloc(v, (cnt + 1) * sizeof(*v))) == NULL) {
			free(id);
			hd_store_reset(s);
			hd_strv_free(v, cnt);
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		}
		v = grown;
		v[cnt++] = id;
	}
	hd_store_reset(s);
	if (src != HD_DONE) {
		hd_strv_free(v, cnt);
		return hd_store_sqlerr(st, src, err);
	}
	*out = v;
	*n = cnt;
	return 0;
}

json_t *
hd_autorun_to_json(const hd_autorun *a)
{
	return json_pack("{s:b, s:b, s:I, s:I}", "on", a->on, "paused",
	    a->paused, "turns_per_hour", (json_int_t)a->turns_per_hour,
	    "park_after", (json_int_t)a->park_after);
}

int
hd_autorun_team_purge(hd_store *st, const char *team, hd_err *err)
{
	static const char *const sql[] = {
	    "DELETE FROM wakes WHERE team_id = ?1",
	    "DELETE FROM autorun_turns WHERE team_id = ?1",
	    "DELETE FROM autorun_agents WHERE team_id = ?1",
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++)
		if ((rc = hd_store_run(st, err, sql[i], HD_TEXT(team))) < 0)
			return rc;
	return 0;
}
