/*
 * state.c -- the team-state snapshot for a leader's context (SPEC 6):
 * the team, its members and its task counts, read together. Owns no
 * table; reads through the team and board modules.
 *  (1) A pending shutdown's timeout is evaluated before the read, so a
 *      team whose shutdown ran out of time reads as active.
 *  (2) team, members and counts come from one read transaction: one
 *      snapshot, never a mix of two moments.
 *  (3) The TEAM STATE block shows members' ids and roles only, so
 *      hd_team_state reads the roster (hd_agent_roster: ids and the
 *      leader, from the team's index) rather than the members' rows: it is
 *      on every leader turn of an exchange.
 * Callers: the CLI (team state), later the exchange engine (the leader's
 * prompt starts with this block) and the MCP team_state tool.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "mailbox_int.h"

struct snap_ctx {
	const char *team;
	int roster; /* members without their runtime configs (3) */
	hd_team_snapshot snap;
};

static int
snap_txn(hd_store *st, void *payload, hd_err *err)
{
	struct snap_ctx *c = payload;
	int rc;

	hd_team_snapshot_dispose(&c->snap);
	if ((rc = hd_team_get(&c->snap.team, st, c->team, err)) < 0 ||
	    (rc = (c->roster ? hd_agent_roster : hd_agent_list)(
		 &c->snap.members, st, c->team, err)) < 0 ||
	    (rc = hd_board_counts(&c->snap.counts, st, c->team, err)) < 0)
		return rc;
	return 0;
}

static int
snapshot_get(hd_team_snapshot *out, hd_store *st, const char *team,
    int roster, hd_err *err)
{
	struct snap_ctx c;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.team = team;
	c.roster = roster;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if ((rc = hd_shutdown_expire(st, team, err)) < 0)
		return rc;
	if ((rc = hd_store_read(st, snap_txn, &c, err)) < 0) {
		hd_team_snapshot_dispose(&c.snap);
		return rc;
	}
	*out = c.snap;
	return 0;
}

int
hd_team_snapshot_get(
    hd_team_snapshot *out, hd_store *st, const char *team, hd_err *err)
{
	return snapshot_get(out, st, team, 0, err);
}

void
hd_team_snapshot_dispose(hd_team_snapshot *s)
{
	if (s == NULL)
		return;
	hd_team_free(s->team);
	s->team = NULL;
	hd_agents_dispose(&s->members);
	memset(&s->counts, 0, sizeof(s->counts));
}

json_t *
hd_team_snapshot_to_json(const hd_team_snapshot *s)
{
	json_t *o = json_object(), *arr = json_array();
	size_t i;

	json_object_set_new(o, "team", hd_team_to_json(s->team));
	for (i = 0; i < s->members.n; i++)
		json_array_append_new(
		    arr, hd_agent_to_json(&s->members.items[i]));
	json_object_set_new(o, "members", arr);
	json_object_set_new(o, "task_counts",
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "pending",
		(json_int_t)s->counts.pending, "in_progress",
		(json_int_t)(s->counts.claimed + s->counts.in_progress),
		"completed", (json_int_t)s->counts.completed, "claimed",
		(json_int_t)s->counts.claimed, "failed",
		(json_int_t)s->counts.failed, "cancelled",
		(json_int_t)s->counts.cancelled));
	return o;
}

int
hd_team_state(char **out, hd_store *st, const char *team, hd_err *err)
{
	hd_team_snapshot s;
	int rc;

	*out = NULL;
	if ((rc = snapshot_get(&s, st, team, 1, err)) < 0)
		return rc;
	rc = hd_team_state_render(out, s.team, &s.members, &s.counts, err);
	hd_team_snapshot_dispose(&s);
	return rc;
}
