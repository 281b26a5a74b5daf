/*
 * sv_hand.c -- the supervisor by hand (supervisor.h): a wake, a park and
 * an unpark asked for at a surface, and the state a surface shows. Each
 * is one transaction of calls to the autorun module (wake.h,
 * autorun_turn.h, autorun.h), which keeps its invariants; this file
 * writes no SQL. None needs a supervisor to be running (a wake waits in
 * the queue for one).
 * Callers: the CLI (agent wake, park, unpark; team state).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/autorun.h>
#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "supervisor_int.h"

#define HOUR_MS INT64_C(3600000)

/* agent, in a team and (unless any) not shut down. */
static int
hand_agent(
    hd_agent **out, hd_store *st, const char *agent, int any, hd_err *err)
{
	int rc;

	if ((rc = hd_agent_get(out, st, agent, err)) < 0)
		return rc;
	if ((*out)->team_id == NULL)
		return hd_err_set(
		    err, HD_EREFUSED, "agent %s is in no team", agent);
	if (!any && strcmp((*out)->status, "shutdown") == 0)
		return hd_err_set(
		    err, HD_EREFUSED, "agent %s is shut down", agent);
	return 0;
}

struct wake_txn {
	const char *agent;
	const char *note;
	int64_t id;
};

static int
wake_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct wake_txn *w = payload;
	hd_agent *a = NULL;
	char hex[17], key[32];
	int added, rc;

	if ((rc = hand_agent(&a, st, w->agent, 0, err)) < 0)
		goto done;
	if ((rc = hd_random_hex(hex, 8, err)) < 0)
		goto done;
	snprintf(key, sizeof(key), "manual:%s", hex);
	rc = hd_wake_add(&added, st, a->team_id, a->id, "manual", 0, key,
	    w->note, &w->id, err);
done:
	hd_agent_free(a);
	return rc;
}

int
hd_supervisor_wake(
    int64_t *id, hd_store *st, const char *agent, const char *note, hd_err *err)
{
	struct wake_txn w = {agent, note, 0};
	int rc;

	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	if (note != NULL && (rc = hd_text_check("wake note", note, 0,
				 HD_WAKE_NOTE_MAX, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, wake_txn_fn, &w, err)) < 0)
		return rc;
	if (id != NULL)
		*id = w.id;
	return 0;
}

struct park_txn {
	const char *agent;
	const char *reason; /* NULL: unpark */
	int changed;
};

static int
park_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct park_txn *p = payload;
	hd_agent *a = NULL;
	int rc;

	if ((rc = hand_agent(&a, st, p->agent, 1, err)) == 0)
		rc = hd_autorun_agent_park(
		    &p->changed, st, a->team_id, a->id, p->reason, "hand", err);
	hd_agent_free(a);
	return rc;
}

static int
park(int *changed, hd_store *st, const char *agent, const char *reason,
    hd_err *err)
{
	struct park_txn p = {agent, reason, 0};
	int rc;

	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	rc = hd_store_write(st, park_txn_fn, &p, err);
	if (changed != NULL)
		*changed = p.changed;
	return rc;
}

int
hd_supervisor_park(int *changed, hd_store *st, const char *agent,
    const char *reason, hd_err *err)
{
	int rc;

	if (reason == NULL || reason[0] == '\0')
		reason = "parked by hand";
	else if ((rc = hd_text_check("park reason", reason, 1, 200, err)) < 0)
		return rc;
	return park(changed, st, agent, reason, err);
}

int
hd_supervisor_unpark(int *changed, hd_store *st, const char *agent, hd_err *err)
{
	return park(changed, st, agent, NULL, err);
}

/* ---- state ----------------------------------------------------------------
 */

static int
member_state(json_t **out, hd_store *st, const hd_agent *a, hd_err *err)
{
	hd_autorun_agent sa;
	json_t *queue = NULL, *running = NULL, *last = NULL;
	int64_t hour = 0, oldest;
	int rc;

	*out = NULL;
	if ((rc = hd_autorun_agent_get(&sa, st, a->id, err)) < 0)
		return rc;
	if ((rc = hd_wake_queue_json(&queue, st, a->id, err)) < 0 ||
	    (rc = hd_autorun_turns_json(&running, &last, st, a->id, err)) < 0 ||
	    (rc = hd_autorun_turns_since(&hour, &oldest, st, a->id,
		 hd_now_ms() - HOUR_MS, err)) < 0)
		goto done;
	*out = json_pack("{s:s, s:s, s:s, s:b, s:s?, s:o, s:I, s:I, s:O, "
			 "s:O, s:O}",
	    "agent", a->id, "status", a->status, "runtime", a->runtime,
	    "leader", a->is_leader, "parked", sa.parked, "parked_at",
	    sa.parked_at > 0 ? json_integer(sa.parked_at) : json_null(),
	    "streak", (json_int_t)sa.streak, "turns_last_hour",
	    (json_int_t)hour, "queue", queue, "running", running, "last_turn",
	    last);
	if (*out == NULL)
		rc = hd_sv__oom(err);
done:
	json_decref(queue);
	json_decref(running);
	json_decref(last);
	hd_autorun_agent_dispose(&sa);
	return rc;
}

struct state_txn {
	const char *team;
	json_t *out;
};

static int
state_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct state_txn *t = payload;
	hd_autorun ar;
	hd_agents l;
	json_t *agents, *m;
	size_t i;
	int rc;

	json_decref(t->out);
	t->out = NULL;
	if ((rc = hd_autorun_get(&ar, st, t->team, err)) < 0)
		return rc;
	if ((rc = hd_agent_list(&l, st, t->team, err)) < 0)
		return rc;
	agents = json_array();
	for (i = 0; i < l.n; i++) {
		if ((rc = member_state(&m, st, &l.items[i], err)) < 0)
			break;
		json_array_append_new(agents, m);
	}
	hd_agents_dispose(&l);
	if (rc < 0) {
		json_decref(agents);
		return rc;
	}
	t->out = json_pack("{s:s, s:o, s:o}", "team", t->team, "autorun",
	    hd_autorun_to_json(&ar), "agents", agents);
	return t->out != NULL ? 0 : hd_sv__oom(err);
}

int
hd_supervisor_state(json_t **out, hd_store *st, const char *team, hd_err *err)
{
	struct state_txn t = {team, NULL};
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if ((rc = hd_store_read(st, state_txn_fn, &t, err)) < 0) {
		json_decref(t.out);
		return rc;
	}
	*out = t.out;
	return 0;
}
