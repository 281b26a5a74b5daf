/*
 * agent_activity.c -- the activity columns of an agent's row (agent.h):
 * when it last acted, whether a turn of it runs, why it is in error. The
 * status rules that read them (working while in a turn or holding a started
 * task, the idle notice, the failure notice) are the mailbox module's
 * (activity.h), which calls these inside its own transactions.
 *  (1) Every function works inside a caller's transaction and touches one
 *      row, matched on both the agent and its team: an agent that left
 *      the team (or never was in it) is left alone, never an error.
 *  (2) last_active_at moves forward only, and at most once a second
 *      (HD_AGENT_ACTIVE_GRAIN_MS): a burst of posts or claims by one
 *      agent rewrites its row once, not once per act. The conditional
 *      UPDATE that finds a fresh stamp changes nothing and writes no page.
 *  (3) status_reason goes with the status it explains: set here with
 *      `error`, by hd_agent_set_status_reason with another; a change to
 *      any status but error clears it (agent.c's updates do that).
 *  (4) Turns are counted, not flagged: two engines may run a turn of the
 *      same member at once (an exchange beside the supervisor), and the
 *      first to end must not make it look idle while the other runs.
 *      turn_at is when the oldest running one began. A count an engine
 *      that died left behind is reset by hand (hd_activity_set_status
 *      idle) or when the engine's turn is taken back.
 * Callers: src/presence/activity.c; the room (a post), the mailbox (a
 * send) and the board's reflection (each act on a task) touch the stamp.
 */
#include <stdio.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/util.h>

#include "team_int.h"


int
hd_agent_touch(hd_store *st, const char *team, const char *agent, hd_err *err)
{
	int64_t now = hd_now_ms();

	if (team == NULL || agent == NULL)
		return 0;
	return hd_store_run(st, err,
	    "UPDATE agents SET last_active_at = ?3"
	    " WHERE id = ?1 AND team_id = ?2"
	    " AND (last_active_at IS NULL OR last_active_at <= ?4)",
	    HD_TEXT(agent), HD_TEXT(team), HD_INT(now),
	    HD_INT(now - HD_AGENT_ACTIVE_GRAIN_MS));
}

int
hd_agent_presence_get(hd_agent_presence *out, hd_store *st, const char *team,
    const char *agent, hd_err *err)
{
	hd_stmt *s;
	const char *v;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT a.status, a.turns, t.leader_agent_id"
		 " FROM agents a JOIN teams t ON t.id = a.team_id"
		 " WHERE a.id = ?1 AND a.team_id = ?2",
		 HD_TEXT(agent), HD_TEXT(team))) < 0)
		return rc;
	rc = hd_stmt_step(s);
	if (rc == HD_ROW) {
		out->found = 1;
		v = hd_stmt_text(s, 0);
		snprintf(out->status, sizeof(out->status), "%s", v ? v : "");
		out->turns = hd_stmt_int(s, 1);
		v = hd_stmt_text(s, 2);
		snprintf(out->leader, sizeof(out->leader), "%s", v ? v : "");
		out->is_leader = v != NULL && strcmp(v, agent) == 0;
		rc = 0;
	} else if (rc == HD_DONE)
		rc = 0;
	else
		rc = hd_store_sqlerr(st, rc, err);
	hd_store_reset(s);
	return rc;
}

int
hd_agent_turn_mark(
    hd_store *st, const char *team, const char *agent, int delta, hd_err *err)
{
	int64_t now = hd_now_ms();

	/* (4) */
	return hd_store_run(st, err,
	    delta > 0
		? "UPDATE agents SET turns = turns + 1,"
		  " turn_at = COALESCE(turn_at, ?3), last_active_at = ?3"
		  " WHERE id = ?1 AND team_id = ?2"
	    : delta < 0
		? "UPDATE agents SET turns = CASE WHEN turns > 1 THEN turns - 1"
		  " ELSE 0 END,"
		  " turn_at = CASE WHEN turns > 1 THEN turn_at END"
		  " WHERE id = ?1 AND team_id = ?2 AND ?3 IS NOT NULL"
		: "UPDATE agents SET turns = 0, turn_at = NULL"
		  " WHERE id = ?1 AND team_id = ?2 AND ?3 IS NOT NULL",
	    HD_TEXT(agent), HD_TEXT(team), HD_INT(now));
}

int
hd_agent_set_error(int *changed, hd_store *st, const char *team,
    const char *agent, const char *reason, hd_err *err)
{
	hd_agent_presence p;
	char cut[HD_AGENT_REASON_MAX + 4];
	size_t len;
	int rc;

	*changed = 0;
	if ((rc = hd_agent_presence_get(&p, st, team, agent, err)) < 0)
		return rc;
	/* (1); a member shut down (or being asked to) stays so */
	if (!p.found || strcmp(p.status, "shutdown") == 0 ||
	    strcmp(p.status, "shutdown_requested") == 0)
		return 0;
	if (reason == NULL || reason[0] == '\0')
		reason = "the turn failed";
	len = strlen(reason);
	if (len > HD_AGENT_REASON_MAX) {
		len = HD_AGENT_REASON_MAX; /* back to a character boundary */
		while (len > 0 && ((unsigned char)reason[len] & 0xc0) == 0x80)
			len--;
		memcpy(cut, reason, len);
		memcpy(cut + len, "...", 4);
		reason = cut;
	}
	if ((rc = hd_store_run(st, err,
		 "UPDATE agents SET status = 'error', status_reason = ?3,"
		 " updated_at = ?4 WHERE id = ?1 AND team_id = ?2",
		 HD_TEXT(agent), HD_TEXT(team), HD_TEXT(reason),
		 HD_INT(hd_now_ms()))) < 0)
		return rc;
	if (strcmp(p.status, "error") != 0) {
		*changed = 1;
		hd_events_append(st, "agent_status", team, 0, agent,
		    json_pack("{s:s, s:s, s:s}", "from", p.status, "to",
			"error", "reason", reason));
	}
	return 0;
}
