/*
 * team_int.h -- helpers shared inside the team module (team.c, agent.c,
 * apply.c). Each runs inside a transaction its caller holds.
 */
#ifndef HD_TEAM_INT_H
#define HD_TEAM_INT_H

#include <huddle/agent.h>
#include <huddle/team.h>

#include <store/store.h>

#define HD_TEAM_NAME_MAX 100
#define HD_TEAM_DESCRIPTION_MAX 2000
#define HD_TEAM_DECOR_MAX 32 /* icon, color */
#define HD_AGENT_NAME_MAX 100
#define HD_AGENT_ROLE_MAX 200
#define HD_AGENT_REASON_MAX 2000 /* status_reason */

/* Load a team; *out is NULL (and 0 returned) when it does not exist. */
int hd_team__load(hd_team **out, hd_store *st, const char *id, hd_err *err);

/* Load an agent; *out is NULL (and 0 returned) when it does not exist. */
int hd_agent__load(hd_agent **out, hd_store *st, const char *id,
    hd_err *err);

/* Validate the optional display fields of a team spec. */
int hd_team__check_fields(const hd_team_spec *spec, hd_err *err);

/* Validate an agent's name and role when given. */
int hd_agent__check_fields(const char *name, const char *role, hd_err *err);

/* Insert a team row (spec already validated); emits team_created. */
int hd_team__insert(hd_store *st, const hd_team_spec *spec, hd_err *err);

/* Set a team's leader column (NULL clears). */
int hd_team__set_leader(hd_store *st, const char *team, const char *leader,
    hd_err *err);

/* Insert an agent row (validated); emits agent_added. */
int hd_agent__insert(hd_store *st, const hd_agent_spec *spec, hd_err *err);

/*
 * One indexed probe, `SELECT 1 FROM <table> WHERE id = ?` given as sql,
 * for hd_team_exists and hd_agent_exists: 0 when the row is there, else
 * HD_ENOTFOUND `<what> "<id>" not found` (after the slug check on id).
 */
int hd_team__probe(hd_store *st, const char *sql, const char *what,
    const char *id, hd_err *err);

#endif
