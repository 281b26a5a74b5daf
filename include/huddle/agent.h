/*
 * agent.h -- agents: the members of teams (SPEC 3).
 *
 * An agent id is a slug, globally unique; an agent is in at most one team.
 * runtime names the adapter that runs it and runtime_config is that
 * adapter's JSON object. Which names exist and what each accepts is the
 * runtime layer's knowledge (runtime.h, one adapter file per runtime), not
 * this header's: the domain checks only their shape, and takes what the
 * runtime layer accepts as a callback (hd_agent_runtime_check) from the
 * caller, since a domain module may not call up into an engine.
 */
#ifndef HUDDLE_AGENT_H
#define HUDDLE_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

typedef struct hd_agent {
	char *id;
	char *name;
	char *team_id; /* or NULL */
	char *role;    /* "" when none */
	char *runtime;
	json_t *runtime_config; /* an object; owned */
	char *status; /* idle | working | shutdown_requested | shutdown | error */
	char *spawned_by;  /* or NULL */
	char *session_key; /* or NULL */
	int is_leader;
	int64_t last_active_at; /* 0 when never */
	char *status_reason;    /* why it is in its status (an error, a
				   replacement), or NULL */
	int spawn_depth;        /* 0: not spawned; else its spawner's + 1 */
	int turns;              /* how many turns of it run now */
	int64_t turn_at;        /* since when (the oldest); 0: in none */
	int64_t created_at;
	int64_t updated_at;
} hd_agent;

typedef struct hd_agents {
	hd_agent *items;
	size_t n;
} hd_agents;

/* The runtime of an agent added without one: a value of the column, as
 * "{}" is runtime_config's; the runtime layer has an adapter of this name
 * (tests/unit/runtime/test-adapter.c checks it). */
#define HD_AGENT_RUNTIME_DEFAULT "scripted"

/*
 * What checks a runtime name and its runtime_config before an agent is
 * written: the runtime layer's hd_runtime_check_config, handed down by the
 * surfaces (the domain knows no runtime). HD_EINVAL with a message naming
 * the field.
 *
 * Why a callback in each request and not a validator registered once at
 * startup: the caller that writes an agent (a surface, `huddle up`, a
 * test) is above both layers and says what it accepts where it writes, so
 * no process-wide state decides it, a library user that links no engine
 * still gets the generic check, and a test can hand its own.
 */
typedef int (*hd_agent_runtime_check)(
    const char *runtime, const json_t *config, hd_err *err);

typedef struct hd_agent_spec {
	const char *id;
	const char *team;
	const char *name;	     /* default: the id */
	const char *role;	     /* default: "" */
	const char *runtime;	     /* default: HD_AGENT_RUNTIME_DEFAULT */
	const json_t *runtime_config; /* default: {} (borrowed) */
	int leader;		     /* make it the team's leader */
	const char *spawned_by;	     /* who spawned it, or NULL */
	int spawn_depth;	     /* 0: not spawned (hd_agent.spawn_depth) */
	const char *session_key;     /* or NULL */
	hd_agent_runtime_check check; /* or NULL: the generic check only */
} hd_agent_spec;

/*
 * Check runtime and runtime_config together: the runtime a name of
 * lowercase letters, digits, '-' and '_' (`invalid runtime name "X": ...`),
 * the config a JSON object (`runtime_config must be a JSON object`), then
 * check (when non-NULL) for what that runtime accepts.
 */
int hd_agent_check_runtime(const char *runtime, const json_t *config,
    hd_agent_runtime_check check, hd_err *err);

/* Add an agent to an existing team. `agent "x" already exists` when the id
 * is taken; `team dev already has a leader (manager)` for a second leader. */
int hd_agent_add(hd_agent **out, hd_store *st, const hd_agent_spec *spec,
    hd_err *err);

/* Fetch one agent. `agent "x" not found`. */
int hd_agent_get(hd_agent **out, hd_store *st, const char *id, hd_err *err);

/* 0 when the agent exists, else what hd_agent_get would say (`agent "x"
 * not found`, or the id's slug error), without loading the row: for a
 * caller that only needs to know it is there. */
int hd_agent_exists(hd_store *st, const char *id, hd_err *err);

/* Agents of a team (or of every team when team is NULL), leader first,
 * then by id. */
int hd_agent_list(hd_agents *out, hd_store *st, const char *team,
    hd_err *err);

/* A team's members and what they are doing, in hd_agent_list's order:
 * each item has its id, is_leader, status, status_reason, last_active_at
 * and turn_at, and nothing else (every other field NULL or 0). For a
 * caller that shows who is in a team and never runs them (the TEAM STATE
 * block, on every leader turn of an exchange): no config is read. `team
 * "x" not found`. */
int hd_agent_roster(hd_agents *out, hd_store *st, const char *team,
    hd_err *err);

/*
 * hd_agent_list, with each member's stored runtime_config kept as text
 * instead of parsed (each item's runtime_config is an empty object):
 * (*texts)[i] is out->items[i]'s (malloc'd; free the array with
 * hd_agent_config_texts_free(*texts, out->n)). For a caller that runs
 * only some members and parses a config (hd_agent_config_parse) when its
 * member first runs, yet wants the configs of the snapshot it listed in.
 */
int hd_agent_roster_configs(hd_agents *out, char ***texts, hd_store *st,
    const char *team, hd_err *err);

/* Replace a->runtime_config with the parse of text, a stored
 * runtime_config, read as hd_agent_list reads it (NULL or text that is
 * not a JSON object: an empty object). With st (else NULL), the parse is
 * kept in st's memo and shared from there, as every list and load does:
 * treat a config as read-only. HD_ENOMEM. */
int hd_agent_config_parse(
    hd_store *st, hd_agent *a, const char *text, hd_err *err);

/* NULL-safe. */
void hd_agent_config_texts_free(char **texts, size_t n);

/* Remove an agent; a leader's team is left without a leader. */
int hd_agent_remove(hd_store *st, const char *id, hd_err *err);

/*
 * Set an agent's status: idle, working, shutdown_requested, shutdown or
 * error, else HD_EINVAL `invalid agent status "x": use idle, working,
 * shutdown_requested, shutdown or error`. `agent "x" not found`. Becoming
 * working also stamps last_active_at; any status but error clears the
 * error's reason. Emits
 * agent_status {from, to} when the status changes (the dashboard shows
 * status live). Works inside a caller's transaction.
 */
int hd_agent_set_status(hd_store *st, const char *agent, const char *status,
    hd_err *err);

/*
 * hd_agent_set_status, also setting why (status_reason: 1..2000
 * characters, NULL clears it), e.g. shutdown with `replaced by coder-2`.
 * The reason is written even when the status stays the same. Works
 * inside a caller's transaction.
 */
int hd_agent_set_status_reason(hd_store *st, const char *agent,
    const char *status, const char *reason, hd_err *err);

/*
 * Set an agent's status to `to` only while it is `from`, in one
 * conditional update (an engine's working/idle never overrides a
 * shutdown). Emits agent_status {from, to} when it changed; *changed
 * (when non-NULL) says whether it did. An agent that is not found or not
 * in `from` is left alone and is not an error. With `team` non-NULL the
 * agent must also be in that team (else it is left alone alike), which
 * spares reading its team back for the event. Refuses an invalid `to`
 * as hd_agent_set_status does. Works inside a caller's transaction.
 */
int hd_agent_set_status_if(hd_store *st, const char *team, const char *agent,
    const char *from, const char *to, int *changed, hd_err *err);

/* ---- activity columns (src/team/agent_activity.c) ----
 * Each works inside a caller's transaction on the row of agent in team;
 * an agent not in team is left alone (not an error). The status rules
 * built on them are activity.h's. */

/* How often at most last_active_at moves (a burst rewrites it once). */
#define HD_AGENT_ACTIVE_GRAIN_MS 1000

/* Stamp last_active_at with now (posting, sending, acting on a task). */
int hd_agent_touch(hd_store *st, const char *team, const char *agent,
    hd_err *err);

/* What the status rules read of a member, in one step. */
typedef struct hd_agent_presence {
	int found;      /* 0: agent is not in team */
	char status[24];
	int turns;      /* how many turns of it run now */
	int is_leader;
	char leader[64]; /* the team's leader, "" when none */
} hd_agent_presence;

int hd_agent_presence_get(hd_agent_presence *out, hd_store *st,
    const char *team, const char *agent, hd_err *err);

/* Count a turn of the agent in (delta 1: also its last activity) or out
 * (-1); 0 clears the count (a reset by hand). */
int hd_agent_turn_mark(hd_store *st, const char *team, const char *agent,
    int delta, hd_err *err);

/* Set `error` with why (cut to 500 bytes; NULL: "the turn failed"),
 * unless it is shut down or asked to be. Emits agent_status {from, to,
 * reason} when the status changed (*changed 1). */
int hd_agent_set_error(int *changed, hd_store *st, const char *team,
    const char *agent, const char *reason, hd_err *err);

json_t *hd_agent_to_json(const hd_agent *a);
void hd_agent_free(hd_agent *a);
void hd_agents_dispose(hd_agents *l);

#endif
