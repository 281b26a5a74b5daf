/*
 * spawn.c -- teammate spawning (SPEC 3): a new agent joins an active team
 * with its first message already waiting. Owns no table; writes agents
 * through the team module and messages through mailbox.c.
 *  (1) The team must exist and be `active`, checked in the same
 *      transaction that adds the agent, so nobody joins a team that is
 *      shutting down.
 *  (2) spawned_by is the caller (a member; default the leader) and
 *      session_key is "agent:<id>:teammate:<uuid>".
 *  (3) The agent and its first message (the task, or
 *      "Join team <team> as <id>") commit together: a spawned agent never
 *      starts with an empty mailbox, and a refused message adds no agent.
 * Callers: the CLI (agent spawn); later the MCP teammate_spawn tool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/util.h>

#include "mailbox_int.h"

#define SESSION_KEY_MAX 128

struct spawn_ctx {
	const hd_spawn_spec *spec;
	char session_key[SESSION_KEY_MAX];
	const char *content;
};

static int
spawn_txn(hd_store *st, void *payload, hd_err *err)
{
	struct spawn_ctx *c = payload;
	const hd_spawn_spec *spec = c->spec;
	hd_agent_spec as;
	hd_message_spec ms;
	hd_team *t = NULL;
	const char *caller;
	int rc;

	if ((rc = hd_team_get(&t, st, spec->team, err)) < 0)
		goto done;
	if (strcmp(t->status, "active") != 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "team \"%s\" is not active (status: %s)", t->id, t->status);
		goto done;
	}
	caller = spec->caller != NULL ? spec->caller : t->leader_agent_id;
	if (spec->caller != NULL &&
	    (rc = hd_team_member_check(st, spec->team, spec->caller, err)) < 0)
		goto done;
	memset(&as, 0, sizeof(as));
	as.id = spec->id;
	as.team = spec->team;
	as.name = spec->name;
	as.role = spec->role;
	as.runtime = spec->runtime;
	as.runtime_config = spec->runtime_config;
	as.check = spec->check;
	as.spawned_by = caller;
	as.session_key = c->session_key;
	if ((rc = hd_agent_add(NULL, st, &as, err)) < 0)
		goto done;
	memset(&ms, 0, sizeof(ms));
	ms.team = spec->team;
	ms.from = caller;
	ms.to = spec->id;
	ms.type = "message";
	ms.content = c->content;
	ms.approve = -1;
	rc = hd_mailbox__send(NULL, st, &ms, caller == NULL, err);
done:
	hd_team_free(t);
	return rc;
}

int
hd_team_spawn(
    hd_agent **out, hd_store *st, const hd_spawn_spec *spec, hd_err *err)
{
	struct spawn_ctx c;
	hd_buf join = HD_BUF_INIT(0);
	char uuid[37];
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("team", spec->team, err)) < 0 ||
	    (rc = hd_slug_check("agent", spec->id, err)) < 0 ||
	    (spec->caller != NULL &&
		(rc = hd_slug_check("agent", spec->caller, err)) < 0) ||
	    (rc = hd_uuid(uuid, err)) < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.spec = spec;
	snprintf(c.session_key, sizeof(c.session_key), "agent:%s:teammate:%s",
	    spec->id, uuid);
	if (spec->task != NULL) {
		/* the message rules, before anything is written */
		if ((rc = hd_mailbox__check_content(spec->task, err)) < 0)
			goto done;
		c.content = spec->task;
	} else {
		hd_buf_printf(
		    &join, "Join team %s as %s", spec->team, spec->id);
		if (hd_buf_failed(&join)) {
			rc = hd_buf_error(&join, "message", err);
			goto done;
		}
		c.content = hd_buf_cstr(&join);
	}
	if ((rc = hd_store_write(st, spawn_txn, &c, err)) < 0)
		goto done;
	if (out != NULL)
		rc = hd_agent_get(out, st, spec->id, err);
done:
	hd_buf_dispose(&join);
	return rc;
}
