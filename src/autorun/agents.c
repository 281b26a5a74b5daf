/*
 * agents.c -- each agent's standing under autorun (autorun.h): its row in
 * autorun_agents (migration 12), the no-progress streak, its park (why
 * and since when) and its carry (the messages an aborted turn's prompt
 * delivered, wake.h (3)). This module owns the table; nothing else writes
 * it (the team module purges it with a team).
 *  (1) A row is made on first need (hd_autorun_agent_ensure), which keeps
 *      its team current; an agent without one reads as zeros.
 *  (2) Park and unpark are conditional UPDATEs, and their event is
 *      emitted only when a row changed: a state is entered once.
 * Every function runs inside its caller's transaction.
 * Callers: the supervisor (src/engine/wake.c, sv_turn.c, sv_hand.c).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/autorun.h>
#include <huddle/events.h>
#include <huddle/util.h>

#include "autorun_int.h"

void
hd_autorun_agent_dispose(hd_autorun_agent *a)
{
	free(a->parked);
	free(a->carry);
	memset(a, 0, sizeof(*a));
}

/* Columns streak, parked, parked_at, carry. */
static void
agent_fill(void *elem, hd_stmt *s)
{
	hd_autorun_agent *out = elem;

	out->streak = hd_stmt_int(s, 0);
	out->parked = hd_store_col_dup(s, 1);
	out->parked_at = hd_stmt_int(s, 2);
	out->carry = hd_store_col_dup(s, 3);
}

int
hd_autorun_agent_get(
    hd_autorun_agent *out, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT streak, parked, parked_at, carry FROM autorun_agents"
		 " WHERE agent_id = ?1",
		 HD_TEXT(agent))) < 0)
		return rc;
	return hd_autorun__row(NULL, out, st, s, agent_fill, err);
}

/* Make sure agent has its row (team kept current). */
int
hd_autorun_agent_ensure(
    hd_store *st, const char *team, const char *agent, hd_err *err)
{
	return hd_store_run(st, err,
	    "INSERT INTO autorun_agents(agent_id, team_id) VALUES (?1, ?2)"
	    " ON CONFLICT(agent_id) DO UPDATE SET team_id = "
	    "excluded.team_id"
	    " WHERE autorun_agents.team_id != excluded.team_id",
	    HD_TEXT(agent), HD_TEXT(team));
}

int
hd_autorun_agent_park(int *changed, hd_store *st, const char *team,
    const char *agent, const char *reason, const char *by, hd_err *err)
{
	int rc;

	*changed = 0;
	if ((rc = hd_autorun_agent_ensure(st, team, agent, err)) < 0)
		return rc;
	if (reason != NULL)
		rc = hd_store_run(st, err,
		    "UPDATE autorun_agents SET parked = ?2, parked_at = ?3"
		    " WHERE agent_id = ?1 AND parked IS NULL",
		    HD_TEXT(agent), HD_TEXT(reason), HD_INT(hd_now_ms()));
	else
		rc = hd_store_run(st, err,
		    "UPDATE autorun_agents SET parked = NULL,"
		    " parked_at = NULL, streak = 0"
		    " WHERE agent_id = ?1 AND parked IS NOT NULL",
		    HD_TEXT(agent));
	if (rc < 0)
		return rc;
	if ((*changed = hd_store_changes(st) > 0)) { /* (2) */
		if (reason != NULL)
			hd_events_append(st, "agent_parked", team, 0, agent,
			    json_pack("{s:s, s:s}", "agent", agent, "reason",
				reason));
		else
			hd_events_append(st, "agent_unparked", team, 0, agent,
			    json_pack("{s:s, s:s}", "agent", agent, "by", by));
	}
	return 0;
}

int
hd_autorun_agent_streak(
    hd_store *st, const char *agent, int64_t streak, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE autorun_agents SET streak = ?2 WHERE agent_id = ?1",
	    HD_TEXT(agent), HD_INT(streak));
}

int
hd_autorun_agent_carry(
    hd_store *st, const char *agent, const char *carry, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE autorun_agents SET carry = ?2 WHERE agent_id = ?1",
	    HD_TEXT(agent), HD_TEXT(carry)); /* NULL clears it */
}
