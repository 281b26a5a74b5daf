/*
 * spawn.c -- teammate spawning (SPEC 3): a new agent joins an active team
 * with its first message already waiting. Owns no table; writes agents
 * through the team's roster (agent.c) and messages through the mailbox
 * (src/mailbox/mailbox.c).
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
 *  (6) A replacement (spec.replaces) is a spawn that also, in the same
 *      transaction: takes the replaced member's role, runtime and
 *      runtime_config unless given (its config only with its runtime);
 *      moves every task it owns that is claimed or in_progress to the new
 *      agent (hd_board_reassign_open, a comment on each saying why); sets
 *      it `shutdown`, status_reason `replaced by <new>`; and lists the
 *      tasks taken over in the first message. Only the leader or a user
 *      replaces, and never the leader; a refusal anywhere writes nothing.
 * Callers: the operation table's team.spawn and team.replace
 * (src/ops/ops-team.c): MCP teammate_spawn, POST /api/teams/:team/spawn,
 * huddle agent spawn and agent replace.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/spawn.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include <mailbox/mailbox_int.h>

#define SESSION_KEY_MAX 128
#define SPAWN_MODEL_MAX 200 /* characters of a model name */

#define REPLACE_LIST_MAX 50 /* tasks listed in a replacement's message */

struct spawn_ctx {
	const hd_spawn_spec *spec;
	const char *caller; /* the calling agent, or NULL (a user) */
	char session_key[SESSION_KEY_MAX];
	const char *content; /* the task, or the invitation */
	hd_tasks moved;	     /* a replacement's: the tasks taken over */
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

/* How a member's status reads in a sentence: "coder is in error". */
static const char *
status_phrase(const char *status)
{
	if (strcmp(status, "error") == 0)
		return "in error";
	if (strcmp(status, "shutdown") == 0)
		return "shut down";
	if (strcmp(status, "shutdown_requested") == 0)
		return "asked to shut down";
	return status;
}

/* " is in error (exit status 1)": old's status and why, for a sentence
 * that names it just before. */
static void
old_state(hd_buf *b, const hd_agent *old)
{
	hd_buf_printf(b, " is %s", status_phrase(old->status));
	if (old->status_reason != NULL && old->status_reason[0] != '\0')
		hd_buf_printf(b, " (%s)", old->status_reason);
}

/* (6): old may be replaced in t by caller (NULL: a user). */
static int
replace_check(hd_agent **old, hd_store *st, const hd_team *t,
    const char *caller, const char *id, hd_err *err)
{
	int rc;

	*old = NULL;
	if ((rc = hd_team_member_check(st, t->id, id, err)) < 0 ||
	    (rc = hd_agent_get(old, st, id, err)) < 0)
		return rc;
	if ((*old)->is_leader)
		return hd_err_set(err, HD_EREFUSED,
		    "cannot replace the leader (%s) of team %s", id, t->id);
	if (caller != NULL && (t->leader_agent_id == NULL ||
				  strcmp(caller, t->leader_agent_id) != 0))
		return hd_err_set(err, HD_EREFUSED,
		    "only the team leader or a user may replace %s, not %s", id,
		    caller);
	return 0;
}

/* The replacement's first message: the task (or the invitation), then
 * what it replaces and the tasks it took over. */
static void
replace_message(hd_buf *b, const char *content, const hd_agent *old,
    const hd_tasks *moved, const char *team, const char *id)
{
	size_t i;

	hd_buf_printf(b, "%s\n\nYou replace %s, who", content, old->id);
	old_state(b, old);
	if (moved->n == 0) {
		hd_buf_puts(b, ". It had no unfinished tasks.");
		return;
	}
	hd_buf_printf(b, ". You took over its unfinished task%s:",
	    moved->n == 1 ? "" : "s");
	for (i = 0; i < moved->n && i < REPLACE_LIST_MAX; i++)
		hd_buf_printf(b, "\n  - #%" PRId64 " \"%s\" (%s)",
		    moved->items[i].id, moved->items[i].subject,
		    moved->items[i].status);
	if (moved->n > REPLACE_LIST_MAX)
		hd_buf_printf(b, "\n  - and %zu more: huddle task list %s "
				 "--owner %s",
		    moved->n - REPLACE_LIST_MAX, team, id);
}

/* (6): the replaced member's open tasks move to the new one, which hears
 * of them in its first message (*content is then b's text); the old one
 * is retired. Inside the spawn's transaction, after the new agent is
 * added. */
static int
replace_apply(struct spawn_ctx *c, hd_store *st, const hd_agent *old,
    hd_buf *first, const char **content, hd_err *err)
{
	const hd_spawn_spec *spec = c->spec;
	hd_buf note = HD_BUF_INIT(0), why = HD_BUF_INIT(0);
	json_t *ids;
	size_t i;
	int rc;

	hd_buf_puts(&note, old->id);
	old_state(&note, old);
	hd_buf_printf(&note, "; %s replaces it", spec->id);
	hd_buf_printf(&why, "replaced by %s", spec->id);
	if (hd_buf_failed(&note) || hd_buf_failed(&why)) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = hd_board_reassign_open(&c->moved, st, spec->team, old->id,
		 spec->id, c->caller, hd_buf_cstr(&note), err)) < 0 ||
	    (rc = hd_agent_set_status_reason(
		 st, old->id, "shutdown", hd_buf_cstr(&why), err)) < 0)
		goto done;
	replace_message(first, *content, old, &c->moved, spec->team, spec->id);
	if (hd_buf_failed(first)) {
		rc = hd_buf_error(first, "message", err);
		goto done;
	}
	*content = hd_buf_cstr(first);
	ids = json_array();
	for (i = 0; i < c->moved.n; i++)
		json_array_append_new(ids, json_integer(c->moved.items[i].id));
	hd_events_append(st, "agent_replaced", spec->team, 0, spec->id,
	    json_pack("{s:s, s:s, s:o}", "replaces", old->id, "by",
		c->caller != NULL ? c->caller : HD_BOARD_USER, "tasks", ids));
done:
	hd_buf_dispose(&note);
	hd_buf_dispose(&why);
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
	hd_agent *old = NULL;
	hd_buf first = HD_BUF_INIT(0); /* the send checks its size */
	const json_t *base = spec->runtime_config;
	json_t *cfg = NULL;
	const char *caller, *content = c->content;
	int rc, depth;

	hd_tasks_dispose(&c->moved); /* a retried transaction starts over */
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
	if (spec->replaces != NULL &&
	    (rc = replace_check(&old, st, t, c->caller, spec->replaces, err)) <
		0)
		goto done;
	memset(&as, 0, sizeof(as));
	as.role = spec->role;
	as.runtime = spec->runtime;
	if (old != NULL) { /* (6): what it replaces, unless given */
		if (as.role == NULL)
			as.role = old->role;
		if (as.runtime == NULL)
			as.runtime = old->runtime;
		if (base == NULL && strcmp(as.runtime, old->runtime) == 0)
			base = old->runtime_config;
	}
	if ((rc = spawn_depth(&depth, st, t, c->caller, err)) < 0 ||
	    (rc = spawn_config(&cfg, base, spec->model, err)) < 0)
		goto done;
	as.id = spec->id;
	as.team = spec->team;
	as.name = spec->name;
	as.runtime_config = cfg;
	as.check = spec->check;
	as.spawned_by = caller;
	as.spawn_depth = depth;
	as.session_key = c->session_key;
	if ((rc = hd_agent_add(NULL, st, &as, err)) < 0)
		goto done;
	if (old != NULL &&
	    (rc = replace_apply(c, st, old, &first, &content, err)) < 0)
		goto done;
	memset(&ms, 0, sizeof(ms));
	ms.team = spec->team;
	ms.from = caller;
	ms.to = spec->id;
	ms.type = "message";
	ms.content = content;
	ms.approve = -1;
	rc = hd_mailbox__send(NULL, st, &ms, caller == NULL, err);
done:
	hd_buf_dispose(&first);
	json_decref(cfg);
	hd_agent_free(old);
	hd_team_free(t);
	return rc;
}

static int
spawn_run(hd_agent **out, hd_tasks *moved, hd_store *st,
    const hd_spawn_spec *spec, hd_err *err)
{
	struct spawn_ctx c;
	hd_buf join = HD_BUF_INIT(0);
	char uuid[37];
	int rc;

	if (out != NULL)
		*out = NULL;
	if (moved != NULL)
		memset(moved, 0, sizeof(*moved));
	if ((rc = hd_slug_check("team", spec->team, err)) < 0 ||
	    (rc = hd_slug_check("agent", spec->id, err)) < 0 ||
	    (spec->caller != NULL &&
		(rc = hd_slug_check("agent", spec->caller, err)) < 0) ||
	    (spec->replaces != NULL &&
		(rc = hd_slug_check("agent", spec->replaces, err)) < 0) ||
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
	if (out != NULL && (rc = hd_agent_get(out, st, spec->id, err)) < 0)
		goto done;
	if (moved != NULL) {
		*moved = c.moved;
		memset(&c.moved, 0, sizeof(c.moved));
	}
done:
	hd_tasks_dispose(&c.moved);
	hd_buf_dispose(&join);
	return rc;
}

int
hd_team_spawn(
    hd_agent **out, hd_store *st, const hd_spawn_spec *spec, hd_err *err)
{
	return spawn_run(out, NULL, st, spec, err);
}

int
hd_team_replace(hd_agent **out, hd_tasks *moved, hd_store *st,
    const hd_spawn_spec *spec, hd_err *err)
{
	if (out != NULL)
		*out = NULL;
	if (moved != NULL)
		memset(moved, 0, sizeof(*moved));
	if (spec->replaces == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "a replacement needs the agent it replaces");
	return spawn_run(out, moved, st, spec, err);
}
