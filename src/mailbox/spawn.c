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
 *  (4) spawn_depth is the calling agent's + 1 (1 when no agent calls: the
 *      leader by default, or a user); a spawn deeper than the team's
 *      max_spawn_depth is refused before anything is written, so a chain
 *      of agents spawning agents ends at the limit.
 *  (5) runtime_config is checked as `huddle agent add` checks it (the
 *      runtime layer's check, handed down by the surface), after model,
 *      when given, is set in it.
 * Callers: the CLI (agent spawn), the MCP teammate_spawn tool and the
 * REST spawn route.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/util.h>

#include "mailbox_int.h"

#define SESSION_KEY_MAX 128
#define SPAWN_MODEL_MAX 200 /* characters of a model name */

struct spawn_ctx {
	const hd_spawn_spec *spec;
	const char *caller; /* the calling agent, or NULL (a user) */
	char session_key[SESSION_KEY_MAX];
	const char *content;
};

/* spec's runtime_config with model set in it (a new object), or a new
 * reference to the config itself when no model is given (NULL when none
 * was). HD_EINVAL when the config is not an object. */
static int
spawn_config(json_t **out, const json_t *config, const char *model,
    hd_err *err)
{
	*out = NULL;
	if (config != NULL && !json_is_object(config))
		return hd_err_set(
		    err, HD_EINVAL, "runtime_config must be a JSON object");
	if (model == NULL) {
		*out = json_incref((json_t *)config);
		return 0;
	}
	if ((*out = config != NULL ? json_deep_copy(config) : json_object()) ==
		NULL ||
	    json_object_set_new(*out, "model", json_string(model)) < 0) {
		json_decref(*out);
		*out = NULL;
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	return 0;
}

/* (4): *depth for an agent spawned by caller (NULL: by no agent) into t,
 * or the refusal when it would go past the team's limit. */
static int
spawn_depth(int *depth, hd_store *st, const hd_team *t, const char *caller,
    hd_err *err)
{
	hd_agent *a = NULL;
	int rc;

	*depth = 1;
	if (caller == NULL)
		return 0;
	if ((rc = hd_agent_get(&a, st, caller, err)) < 0)
		return rc;
	*depth = a->spawn_depth + 1;
	if (*depth > t->max_spawn_depth)
		rc = hd_err_set(err, HD_EREFUSED,
		    "cannot spawn: depth %d would exceed team %s's spawn depth "
		    "limit of %d (%s is at depth %d)",
		    *depth, t->id, t->max_spawn_depth, caller, a->spawn_depth);
	hd_agent_free(a);
	return rc;
}

static int
spawn_txn(hd_store *st, void *payload, hd_err *err)
{
	struct spawn_ctx *c = payload;
	const hd_spawn_spec *spec = c->spec;
	hd_agent_spec as;
	hd_message_spec ms;
	hd_team *t = NULL;
	json_t *cfg = NULL;
	const char *caller;
	int rc, depth;

	if ((rc = hd_team_get(&t, st, spec->team, err)) < 0)
		goto done;
	if (strcmp(t->status, "active") != 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "team \"%s\" is not active (status: %s)", t->id, t->status);
		goto done;
	}
	caller = c->caller != NULL ? c->caller : t->leader_agent_id;
	if (c->caller != NULL &&
	    (rc = hd_team_member_check(st, spec->team, c->caller, err)) < 0)
		goto done;
	if ((rc = spawn_depth(&depth, st, t, c->caller, err)) < 0 ||
	    (rc = spawn_config(&cfg, spec->runtime_config, spec->model, err)) <
		0)
		goto done;
	memset(&as, 0, sizeof(as));
	as.id = spec->id;
	as.team = spec->team;
	as.name = spec->name;
	as.role = spec->role;
	as.runtime = spec->runtime;
	as.runtime_config = cfg;
	as.check = spec->check;
	as.spawned_by = caller;
	as.spawn_depth = depth;
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
	json_decref(cfg);
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
	    (spec->model != NULL && (rc = hd_text_check("model", spec->model,
					 1, SPAWN_MODEL_MAX, err)) < 0) ||
	    (rc = hd_uuid(uuid, err)) < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.spec = spec;
	/* "user" is a person at a surface, as on the board: no agent */
	if (spec->caller != NULL && strcmp(spec->caller, HD_BOARD_USER) != 0)
		c.caller = spec->caller;
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
