/*
 * autorun.h -- a team's autorun settings: whether `huddle serve` runs its
 * agents between asks (the supervisor, supervisor.h), and the guardrails
 * it runs them under. Kept on the team's row by the team module; the
 * supervisor only reads them.
 *
 *   on              the supervisor wakes the team's agents when they have
 *                   work (team file "autorun": true; default off)
 *   paused          set by hand (`huddle team pause`): nothing is woken
 *                   until resumed; a turn already running finishes
 *   turns_per_hour  per agent, 1..1000 (default 30): past it the agent's
 *                   wakes wait until the hour's oldest turn ages out
 *   park_after      1..100 (default 3): that many turns in a row that
 *                   changed nothing on the board or in a mailbox park the
 *                   agent until something new arrives for it
 */
#ifndef HUDDLE_AUTORUN_H
#define HUDDLE_AUTORUN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_AUTORUN_TURNS_PER_HOUR 30
#define HD_AUTORUN_TURNS_PER_HOUR_MAX 1000
#define HD_AUTORUN_PARK_AFTER 3
#define HD_AUTORUN_PARK_AFTER_MAX 100

typedef struct hd_autorun {
	int on;
	int paused;
	int64_t turns_per_hour;
	int64_t park_after;
} hd_autorun;

/* What to change; -1 (on, paused) or 0 (the numbers): leave it. */
typedef struct hd_autorun_spec {
	int on;
	int paused;
	int64_t turns_per_hour;
	int64_t park_after;
} hd_autorun_spec;

#define HD_AUTORUN_SPEC_INIT                                                   \
	{                                                                      \
		-1, -1, 0, 0                                                   \
	}

/* team's settings. `team "x" not found`. */
int hd_autorun_get(
    hd_autorun *out, hd_store *st, const char *team, hd_err *err);

/*
 * Change the given settings of team; *out (when non-NULL) gets them all
 * afterwards. `turns_per_hour must be between 1 and 1000`, `park_after
 * must be between 1 and 100` (HD_EINVAL) before anything is written;
 * `team "x" not found`. Emits team_autorun {on, paused, turns_per_hour,
 * park_after} when anything changed. Works inside a caller's transaction.
 */
int hd_autorun_set(hd_autorun *out, hd_store *st, const char *team,
    const hd_autorun_spec *spec, hd_err *err);

/*
 * Read a team file's "autorun" value into *spec: true or false, or an
 * object {"on": bool, "turns_per_hour": N, "park_after": N} (each key
 * optional; an object means on unless it says "on": false). HD_EINVAL
 * naming the field otherwise.
 */
int hd_autorun_parse(hd_autorun_spec *spec, const json_t *v, hd_err *err);

/* The ids of the teams with autorun on, by id (paused ones included).
 * Free with hd_autorun_teams_free. */
int hd_autorun_teams(char ***out, size_t *n, hd_store *st, hd_err *err);
void hd_autorun_teams_free(char **v, size_t n);

/* {"on","paused","turns_per_hour","park_after"}. */
json_t *hd_autorun_to_json(const hd_autorun *a);

#endif
