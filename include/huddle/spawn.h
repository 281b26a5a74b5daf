/*
 * spawn.h -- teammate spawning and replacement (SPEC 3): a new agent
 * joins an active team with its first message already waiting.
 *
 * (1) The agent, its first message and (for a replacement) the tasks it
 *     takes over and the replaced member's shutdown commit together in
 *     one transaction, or nothing does.
 * (2) A chain of agents spawning agents ends at the team's
 *     max_spawn_depth (team.h).
 */
#ifndef HUDDLE_SPAWN_H
#define HUDDLE_SPAWN_H

#include <jansson.h>

#include "agent.h"
#include "board.h"
#include "err.h"
#include "store.h"

/* Teammate spawning (SPEC 3). */
typedef struct hd_spawn_spec {
	const char *team;
	const char *id;	    /* the new agent's id (a slug) */
	const char *caller; /* the member spawning it (spawned_by); NULL or
			       "user": no agent, and spawned_by is the
			       leader (or nobody when the team has none) */
	const char *name;   /* display name; default: the id */
	const char *role;
	const char *runtime; /* default "scripted" */
	const json_t *runtime_config; /* borrowed; default {} */
	const char *model; /* sets runtime_config.model (over one given
			      there); NULL: not given */
	hd_agent_runtime_check check; /* as hd_agent_spec.check */
	const char *task; /* the first message; default
			     "Join team <team> as <id>" */
	const char *replaces; /* a member it replaces (hd_team_replace), or
				 NULL */
} hd_spawn_spec;

/*
 * Add an agent to an active team with spawned_by = the caller and session
 * key "agent:<id>:teammate:<uuid>", and put its first message (the task,
 * or `Join team <team> as <id>`) in its mailbox, from the caller (from
 * "huddle" when the team has no leader and no caller was given), all in
 * one transaction. Its spawn_depth is the calling agent's + 1 (1 when no
 * agent calls); one past the team's max_spawn_depth is refused before
 * anything is written (HD_EREFUSED): `cannot spawn: depth 6 would exceed
 * team dev's spawn depth limit of 5 (researcher is at depth 5)`.
 * Other refusals: `team "ghost" not found`; `team "dev" is not active
 * (status: shutdown)` (HD_EREFUSED); `model must not be empty`; the
 * errors of hd_agent_add (the runtime and runtime_config, model set in
 * it, as check says) and hd_mailbox_send. *out (when non-NULL) is the new
 * agent: hd_agent_free(). With spec->replaces set it replaces that
 * member (hd_team_replace).
 */
int hd_team_spawn(hd_agent **out, hd_store *st, const hd_spawn_spec *spec,
    hd_err *err);

/*
 * Spawn spec->id to replace spec->replaces, a member that failed or is
 * to be retired, as hd_team_spawn spawns (same rules, same refusals) and
 * in the same transaction:
 *  - the new agent takes the replaced one's role, runtime and
 *    runtime_config unless the spec gives them (its runtime_config only
 *    when the runtime stays the same; model still applies);
 *  - every task the replaced one owns that is claimed or in_progress
 *    moves to the new one, status kept (hd_board_reassign_open), each with
 *    a comment by the caller (or "user"): `moved from coder to coder-2:
 *    coder is in error (exit status 1); coder-2 replaces it`;
 *  - the replaced one is set `shutdown`, status_reason `replaced by
 *    coder-2`; an agent_replaced event {replaces, by, tasks} is emitted;
 *  - the first message (the task, or the invitation) goes on with
 *    `You replace coder, who is in error (exit status 1). You took over
 *    its unfinished tasks:` and a line `  - #3 "X" (in_progress)` per
 *    task (or `It had no unfinished tasks.`).
 * Refusals, nothing written: `a replacement needs the agent it replaces`
 * (HD_EINVAL); `no member "x" in team dev`; `cannot replace the leader
 * (manager) of team dev` and `only the team leader or a user may replace
 * coder, not tester` (HD_EREFUSED); and hd_team_spawn's (`agent "x"
 * already exists in team dev`, the depth, the team not active, ...).
 * *out as hd_team_spawn's; *moved (when non-NULL) gets the tasks taken
 * over, by id ascending: hd_tasks_dispose() it. hd_team_spawn with
 * spec->replaces set does the same without *moved.
 */
int hd_team_replace(hd_agent **out, hd_tasks *moved, hd_store *st,
    const hd_spawn_spec *spec, hd_err *err);

#endif
