/*
 * team_state.h -- what a team looks like from inside (SPEC 6): the TEAM
 * STATE block a leader's turn starts with and the TEAM CONTEXT a member's
 * does, read in one snapshot of the team, its members and its board.
 *
 * (1) A snapshot is one read transaction: the team, its members, what
 *     each holds and the task counts are of one instant.
 * (2) A pending shutdown's timeout is evaluated before the read
 *     (shutdown.h), so a team whose shutdown timed out reads as active.
 * (3) Rendering is pure (no database, no clock): the same snapshot gives
 *     the same text, byte for byte.
 */
#ifndef HUDDLE_TEAM_STATE_H
#define HUDDLE_TEAM_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "agent.h"
#include "board.h"
#include "err.h"
#include "store.h"
#include "team.h"

/* A task a member holds (claimed or in_progress), for the team state. */
typedef struct hd_held_task {
	int64_t id;
	char *subject;
	char *status;
	char *owner;
} hd_held_task;

/* Everything the team-state block shows, read in one snapshot. */
typedef struct hd_team_snapshot {
	hd_team *team;
	hd_agents members; /* leader first, then by id */
	hd_task_counts counts;
	hd_held_task *held; /* the members' open tasks, member by member,
			       oldest first */
	size_t nheld;
	int64_t read_at; /* when it was read (ms): "last active" is from it */
} hd_team_snapshot;

/*
 * The "=== TEAM STATE ===" block (SPEC 6) of a snapshot: the team, its
 * members (in the snapshot's order; each by id, "(Lead)" for the team's
 * leader, else "(Member)", then what it is doing) and its task counts
 * ("In Progress" = claimed + in_progress), byte for byte:
 *
 *   === TEAM STATE ===\n
 *   Team: Dev team (dev)\n
 *   Status: active\n
 *   Description: N/A\n            (N/A when the description is empty)
 *   \n
 *   Members (2):\n
 *     - manager (Lead): idle\n    (two spaces, "- ")
 *     - coder (Member): working; holds #5 "Docs" (in_progress); last
 *       active just now\n         (one line)
 *   \n
 *   Task Counts:\n
 *     - Pending: 5\n
 *     - In Progress: 2\n
 *     - Completed: 10\n
 *   ====================\n        (20 '='; the text ends with this \n)
 *
 * After a member's status: ": <reason>" when it has one (an error's, a
 * replaced member's); "; holds ..."
 * (its open tasks, oldest first) when it holds any; "; last active
 * just now" (under a minute before read_at), "N min ago", "N h ago" or
 * "N d ago" once it has acted. *out is malloc'd.
 */
int hd_team_state_render(
    char **out, const hd_team_snapshot *s, hd_err *err);

/*
 * Load a team, its members and its task counts in one read transaction,
 * after evaluating a pending shutdown's timeout (shutdown.h), so a team
 * whose shutdown timed out reads as active. `team "x" not found`.
 * Dispose with hd_team_snapshot_dispose().
 */
int hd_team_snapshot_get(hd_team_snapshot *out, hd_store *st,
    const char *team, hd_err *err);
void hd_team_snapshot_dispose(hd_team_snapshot *s);

/* {"team": {...}, "members": [... each with "tasks": [{"id", "subject",
 * "status"}], what it holds], "task_counts": {"pending",
 * "in_progress" (claimed + in_progress), "completed", "claimed",
 * "failed", "cancelled"}}. A new reference. */
json_t *hd_team_snapshot_to_json(const hd_team_snapshot *s);

/* hd_team_snapshot_get + hd_team_state_render: *out is malloc'd. */
int hd_team_state(char **out, hd_store *st, const char *team, hd_err *err);

/*
 * The shorter team context a member other than the leader gets in its
 * turns (SPEC 6), *out malloc'd:
 *
 *   === TEAM CONTEXT ===
 *   Team: Dev team (dev)
 *   Led by: manager
 *   Members:
 *     - manager (Lead): team lead
 *     - coder (you): engineer
 *   Your open tasks:
 *     - #5 "Write docs" (in_progress)
 *   ====================
 *
 * (a member without a role shows no ": role"; "Led by: nobody" without a
 * leader; "Your open tasks: none" without claimed or in_progress tasks).
 * `team "x" not found`.
 */
int hd_team_context(char **out, hd_store *st, const char *team,
    const char *agent, hd_err *err);

#endif
