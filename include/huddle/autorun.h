/*
 * autorun.h -- a team's autorun settings: whether `huddle serve` runs its
 * agents between asks (the supervisor, supervisor.h), and the guardrails
 * it runs them under; and each agent's standing under them (parked, its
 * no-progress streak). The settings are kept on the team's row, the
 * standing in autorun_agents, both by the autorun module (src/autorun/);
 * the supervisor reads the settings and keeps the standing. Its turns
 * are in autorun_turn.h, what wakes it in wake.h.
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
 * Free with hd_strv_free. */
int hd_autorun_teams(char ***out, size_t *n, hd_store *st, hd_err *err);

/* {"on","paused","turns_per_hour","park_after"}. */
json_t *hd_autorun_to_json(const hd_autorun *a);

/* ---- an agent's standing ----------------------------------------------
 *
 * One row per agent in autorun_agents, made on first need; an agent
 * without one stands at zeros (no streak, not parked, nothing carried).
 * Every call runs inside its caller's transaction: the writes inside
 * hd_store_write (with the rest of what the caller records), the reads
 * inside hd_store_read or a write. Errors are the store's.
 *  (1) Park and unpark move only from the other state (a conditional
 *      write): the event is emitted, and *changed set, only when the
 *      state moved, so two engines parking at once park once.
 */

typedef struct hd_autorun_agent {
	int64_t streak; /* turns in a row that changed nothing */
	char *parked;   /* why, or NULL */
	int64_t parked_at;
	char *carry; /* "lo-hi": the ids of the messages an aborted turn's
			prompt delivered, shown again by the next (wake.h
			(3)), or NULL */
} hd_autorun_agent;

/* agent's standing (zeros when it has no row). Free with
 * hd_autorun_agent_dispose. */
int hd_autorun_agent_get(
    hd_autorun_agent *out, hd_store *st, const char *agent, hd_err *err);
void hd_autorun_agent_dispose(hd_autorun_agent *a);

/* Make sure agent has its row, with team kept current. */
int hd_autorun_agent_ensure(
    hd_store *st, const char *team, const char *agent, hd_err *err);

/*
 * Park agent (reason non-NULL) or unpark it (by: who, for the event),
 * making its row first; *changed when it moved (1), with agent_parked
 * {agent, reason} or agent_unparked {agent, by}. Unparking also clears
 * the no-progress streak.
 */
int hd_autorun_agent_park(int *changed, hd_store *st, const char *team,
    const char *agent, const char *reason, const char *by, hd_err *err);

/* Set agent's no-progress streak (its row exists). */
int hd_autorun_agent_streak(
    hd_store *st, const char *agent, int64_t streak, hd_err *err);

/* Set agent's carry to "lo-hi", or clear it (carry NULL). Changes
 * nothing when agent has no row. */
int hd_autorun_agent_carry(
    hd_store *st, const char *agent, const char *carry, hd_err *err);

/* A team's autorun rows (its agents, turns and waiting wakes) (team removal, src/lifecycle/remove.c, in its write
 * transaction): delete them. */
int hd_autorun_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
