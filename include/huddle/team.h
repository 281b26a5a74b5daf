/*
 * team.h -- teams and their agents (SPEC 3).
 *
 * Team and agent ids match ^[a-z0-9][a-z0-9_-]{0,49}$; anything else is
 * refused before any write, and no path is ever built from a name that has
 * not passed that check. A team has at most one leader. An agent belongs to
 * at most one team. A team's agent count is computed on read.
 */
#ifndef HUDDLE_TEAM_H
#define HUDDLE_TEAM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "agent.h"
#include "err.h"
#include "store.h"

typedef struct hd_team {
	char *id;
	char *name;
	char *description; /* "" when none */
	char *icon;	   /* or NULL */
	char *color;	   /* or NULL */
	char *leader_agent_id; /* or NULL */
	char *status;	   /* active | shutting_down | shutdown */
	int64_t agent_count;
	int autorun;        /* 1: huddle serve runs its agents (autorun.h) */
	int autorun_paused; /* 1: paused by hand (huddle team pause) */
	int max_spawn_depth; /* how deep a spawn chain may go (default 5) */
	int max_children;    /* subtasks per task (default 24; board.h) */
	int max_task_depth;  /* how deep subtasks nest (default 2) */
	int max_new_roots;   /* root tasks per agent per window (default 30) */
	int new_roots_window_s; /* that window, in seconds (default 300) */
	int64_t created_at;
	int64_t updated_at;
} hd_team;

typedef struct hd_teams {
	hd_team *items;
	size_t n;
} hd_teams;

/*
 * The kv key (a printf format taking the team id) of a team's
 * conversation loop guard (SPEC 7): how many replies a conversation
 * records before mentions stop being routed. Written by a team file's
 * "max_messages" and by hd_conversation_set_max_messages (conversation.h),
 * read when a conversation starts, removed with the team.
 */
#define HD_TEAM_MAX_MESSAGES_KEY "team:%s:max_messages"

/*
 * How deep a chain of spawns may go in a team (hd_team.max_spawn_depth):
 * an agent added by hand is at depth 0, one it spawns at 1, and so on; a
 * spawn that would go deeper than the team's limit is refused (spawn.h,
 * hd_team_spawn). Set by a team file's "max_spawn_depth" or
 * hd_team_update, 1..HD_TEAM_SPAWN_DEPTH_MAX.
 */
#define HD_TEAM_SPAWN_DEPTH 5
#define HD_TEAM_SPAWN_DEPTH_MAX 100

/*
 * The board's runaway caps (board.h, hd_board_create): how many open or
 * finished subtasks one task may have (max_children), how deep subtasks
 * nest (max_task_depth: a root task is at depth 0, its child at 1), and
 * how many root tasks one agent may create within new_roots_window_s
 * seconds (max_new_roots; a user is not capped). Defaults and the
 * largest value a team file or hd_team_update may set; each is at
 * least 1.
 */
#define HD_TEAM_MAX_CHILDREN 24
#define HD_TEAM_MAX_CHILDREN_MAX 1000
#define HD_TEAM_TASK_DEPTH 2
#define HD_TEAM_TASK_DEPTH_MAX 20
#define HD_TEAM_NEW_ROOTS 30
#define HD_TEAM_NEW_ROOTS_MAX 10000
#define HD_TEAM_NEW_ROOTS_WINDOW 300
#define HD_TEAM_NEW_ROOTS_WINDOW_MAX 86400

/* Fields for create and update; NULL (0 for the numbers) means "not
 * given". */
typedef struct hd_team_spec {
	const char *id;
	const char *name;
	const char *description;
	const char *icon;
	const char *color;
	const char *leader; /* update only: an agent of the team, "" clears */
	int max_spawn_depth; /* 1..HD_TEAM_SPAWN_DEPTH_MAX; 0: not given
				(a new team gets HD_TEAM_SPAWN_DEPTH) */
	int max_children;    /* the board's caps, likewise: 1..the _MAX */
	int max_task_depth;  /* above; 0: not given (a new team gets the */
	int max_new_roots;   /* default) */
	int new_roots_window_s;
} hd_team_spec;

/* Create a team. `team "x" already exists` (HD_EEXISTS) when taken. On
 * success *out (when out is non-NULL) is the new team: hd_team_free() it. */
int hd_team_create(hd_team **out, hd_store *st, const hd_team_spec *spec,
    hd_err *err);

/* Fetch one team with its agent count. `team "x" not found`. */
int hd_team_get(hd_team **out, hd_store *st, const char *id, hd_err *err);

/* 0 when the team exists, else what hd_team_get would say (`team "x" not
 * found`), without loading the row: an existence check. */
int hd_team_exists(hd_store *st, const char *id, hd_err *err);

/* All teams ordered by id. Dispose with hd_teams_dispose(). */
int hd_team_list(hd_teams *out, hd_store *st, hd_err *err);

/* Change the given fields of spec->id. `max_spawn_depth must be between
 * 1 and 100` (likewise max_children 1-1000, max_task_depth 1-20,
 * max_new_roots 1-10000, new_roots_window_s 1-86400; HD_EINVAL) before
 * anything is written. */
int hd_team_update(hd_team **out, hd_store *st, const hd_team_spec *spec,
    hd_err *err);

/* Delete the team's own rows: its sessions, its settings in kv, its
 * agents and the team itself (team removal, src/lifecycle/remove.c, in
 * its write transaction, after every other module's rows of the team). */
int hd_team_drop_rows(hd_store *st, const char *id, hd_err *err);

/* Set err to `no member "x" in team y` (HD_EREFUSED) unless agent is in
 * team. The team must exist (else `team "y" not found`). */
int hd_team_member_check(hd_store *st, const char *team, const char *agent,
    hd_err *err);

/*
 * Set a team's status: active, shutting_down or shutdown, else HD_EINVAL
 * `invalid team status "x": use active, shutting_down or shutdown`.
 * `team "x" not found`. Emits team_status {from, to} when it changes.
 * Works inside a caller's transaction. The shutdown protocol (shutdown.h)
 * is the one that moves a team through these; this is its setter.
 */
int hd_team_set_status(hd_store *st, const char *team, const char *status,
    hd_err *err);

json_t *hd_team_to_json(const hd_team *t);
void hd_team_free(hd_team *t);
void hd_teams_dispose(hd_teams *l);

/* What hd_team_apply_file did, for the caller to show. */
typedef struct hd_apply_report {
	json_t *json; /* {"team","action","agents":[{"id","action"}],
			 "warnings":[...]}; owned by the report */
	int changed;  /* 1 when anything was created or updated */
} hd_apply_report;

/*
 * Apply a team file (SPEC 3) idempotently in one transaction: create what
 * is missing, update what changed, never delete. A malformed file gives
 * `<path>:<line>:<column>: <problem>` and changes nothing; a file that
 * parses but is wrong names the field (`<path>: agents[1].id: ...`).
 */
int hd_team_apply_file(hd_apply_report *out, hd_store *st, const char *path,
    hd_agent_runtime_check check, hd_err *err);

/* The same from an already parsed document; origin names it in errors.
 * check (the runtime layer's hd_runtime_check_config, from a surface; or
 * NULL) decides what each agent's runtime and runtime_config may be. */
int hd_team_apply_json(hd_apply_report *out, hd_store *st, const json_t *doc,
    const char *origin, hd_agent_runtime_check check, hd_err *err);

void hd_apply_report_dispose(hd_apply_report *r);

#endif
