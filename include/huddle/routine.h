/*
 * routine.h -- routines: a team's recurring tasks (issue 15, item 2).
 *
 * A routine names an agent of the team, a schedule -- a 5-field cron
 * expression read in an IANA time zone (default UTC), or an interval --
 * and the task each fire creates (title, description, priority). The
 * server's ticker (engine/supervisor.c) fires the routines that are due;
 * a fire delegates a new board task to the routine's agent
 * (hd_board_delegate: created, claimed for it, a task_update in its
 * mailbox), so budgets, claims and verification apply as to any task.
 *
 * Invariants:
 *  (1) One task per due fire across processes on one home: the fire is
 *      claimed (next_fire_at moved on, conditionally on the value the
 *      firer read) in the transaction that creates the task.
 *  (2) After downtime at most one catch-up fire: a fire more than
 *      HD_ROUTINE_LATE_MS after its scheduled time is a catch-up (its
 *      event says so and a system line in the room too), and the next
 *      fire is the first scheduled time after now, whatever was missed.
 *  (3) DST: a local time that does not exist (spring forward) fires once,
 *      at the first valid time after the gap; one that exists twice (fall
 *      back) fires once, at its first occurrence.
 *  (4) Every fire is an event: routine_fired {routine, task, scheduled_at,
 *      catch_up, manual}, or routine_fire_failed {routine, error} when
 *      the task could not be delegated (the schedule still moves on).
 *
 * The clock: every time decision here takes `now` from the caller;
 * hd_routine_now_ms() is the clock the server and the CLI pass, the real
 * one unless HUDDLE_CLOCK_FILE names a file holding the time (ms since
 * the epoch), read at every call -- a debug option that lets the tests
 * move time without sleeping (docs/routines.md).
 */
#ifndef HUDDLE_ROUTINE_H
#define HUDDLE_ROUTINE_H

#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_ROUTINE_LATE_MS 60000 /* (2) later than this: a catch-up */
#define HD_ROUTINE_EVERY_MIN_S 60
#define HD_ROUTINE_EVERY_MAX_S (366LL * 86400)
#define HD_ROUTINE_CRON_MAX 200
#define HD_ROUTINE_TZ_MAX 64

/* ---- cron (cron.c) ---- */

/* A parsed 5-field expression: bit i set when value i matches. */
typedef struct hd_cron {
	uint64_t minute; /* 0-59 */
	uint32_t hour;	 /* 0-23 */
	uint32_t dom;	 /* 1-31 */
	uint16_t month;	 /* 1-12 */
	uint8_t dow;	 /* 0-6, Sunday 0 (7 read as 0) */
	int dom_any, dow_any; /* the field was "*" (the OR rule) */
} hd_cron;

/*
 * Parse "minute hour day-of-month month day-of-week": each field a list
 * of `*`, N, A-B, with /STEP on `*` or a range; names jan-dec and
 * sun-sat. When both day fields are restricted a day matches either
 * (cron's OR rule). Errors name the field and the token: `cron: bad
 * hour "25": use 0-23`, `cron: needs 5 fields (minute hour
 * day-of-month month day-of-week), got 4`. HD_EINVAL.
 */
int hd_cron_parse(hd_cron *out, const char *expr, hd_err *err);

/* 0 when zone is a time zone of the system's database ("UTC" always
 * is), else HD_EINVAL `unknown time zone "x"`. */
int hd_tz_check(const char *zone, hd_err *err);

/*
 * The first time after after_ms (ms since the epoch, UTC) at which c
 * matches the wall clock of zone (NULL: UTC), by (3). 1 with *out (a
 * whole minute), 0 when it never matches in the next 30 years, or the
 * error (an unknown zone).
 */
int hd_cron_next(int64_t *out, const hd_cron *c, const char *zone,
    int64_t after_ms, hd_err *err);

/* "15m", "2h", "1d", "90s" into seconds: HD_EINVAL `bad interval "x":
 * use N followed by s, m, h or d (at least 1m)`. */
int hd_routine_parse_every(int64_t *out_s, const char *text, hd_err *err);

/* ---- routines (routine.c) ---- */

typedef struct hd_routine {
	int64_t id;
	char *team;
	char *name;
	char *agent;
	char *cron; /* NULL for an interval */
	char *tz;   /* cron's zone; NULL: UTC */
	int64_t every_s; /* 0 for a cron routine */
	char *title;
	char *description;
	int64_t priority;
	int enabled;
	int64_t created_at;
	int64_t next_fire_at; /* 0: never (disabled, or no match) */
	int64_t last_fire_at; /* when it last fired; 0: never */
	int64_t last_task_id;
	int64_t fires;
} hd_routine;

typedef struct hd_routine_spec {
	const char *team;
	const char *name;  /* a slug, unique in the team */
	const char *agent; /* a member of the team */
	const char *cron;  /* exactly one of cron and every */
	const char *tz;
	const char *every; /* "15m" */
	const char *title;
	const char *description;
	int64_t priority;
} hd_routine_spec;

/* The clock (see above). */
int64_t hd_routine_now_ms(void);

/* Add a routine; its first fire is the schedule's first time after now.
 * `routine "x" already exists in team dev` (HD_EEXISTS), the parse
 * errors above, `no member "x" in team dev`, `give --cron or --every,
 * not both`. Emits routine_added. */
int hd_routine_add(hd_routine **out, hd_store *st,
    const hd_routine_spec *spec, int64_t now, hd_err *err);

/* `routine "x" not found in team dev` (HD_ENOTFOUND). */
int hd_routine_get(hd_routine **out, hd_store *st, const char *team,
    const char *name, hd_err *err);

/* Every routine of team, by name. */
int hd_routine_list(hd_routine **out, size_t *n, hd_store *st,
    const char *team, hd_err *err);

/* Enable (its next fire: the first scheduled time after now) or
 * disable (no next fire). Emits routine_enabled / routine_disabled. */
int hd_routine_set_enabled(hd_routine **out, hd_store *st, const char *team,
    const char *name, int enabled, int64_t now, hd_err *err);

/* Remove one (its tasks stay on the board). Emits routine_removed. */
int hd_routine_remove(
    hd_store *st, const char *team, const char *name, hd_err *err);

/* What a fire did. */
typedef struct hd_routine_fire {
	int64_t routine_id;
	int64_t task_id; /* 0 when the task could not be delegated */
	int64_t scheduled_at;
	int catch_up;
	int manual;
	char error[512]; /* why no task, or "" */
} hd_routine_fire;

/*
 * Fire every enabled routine due at now (next_fire_at <= now), each in a
 * transaction of its own by (1) and (2); a routine another process fired
 * first is skipped. *fired (may be NULL) counts the fires made here.
 */
int hd_routine_fire_due(
    int *fired, hd_store *st, int64_t now, hd_err *err);

/* Fire one now, by hand (enabled or not); the schedule is unchanged. */
int hd_routine_fire_now(hd_routine_fire *out, hd_store *st,
    const char *team, const char *name, int64_t now, hd_err *err);

/* The team removal's (team_remove.h). */
int hd_routine_team_count(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
int hd_routine_team_purge(hd_store *st, const char *team, hd_err *err);

json_t *hd_routine_to_json(const hd_routine *r);
void hd_routine_free(hd_routine *r);
void hd_routine_list_free(hd_routine *v, size_t n);

#endif
