/*
 * sv_hand.c -- the supervisor by hand (supervisor.h): a wake, a park and
 * an unpark asked for at a surface, and the state a surface shows. Each
 * write is one transaction through wake.c's helpers, so it keeps wake.c's
 * invariants; none needs a supervisor to be running (a wake waits in the
 * queue for one).
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
	rc = hd_sv__wake_add(&added, st, a->team_id, a->id, "manual", 0, key,
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
		rc = hd_sv__park_set(
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

static json_t *
col_text(hd_stmt *s, int i)
{
	const char *t = hd_stmt_text(s, i);

	return t != NULL ? json_string(t) : json_null();
}

static json_t *
col_int(hd_stmt *s, int i)
{
	return hd_stmt_is_null(s, i)
		   ? json_null()
		   : json_integer(hd_stmt_int(s, i));
}

#define TURN_COLS                                                              \
	"id, status, reasons, started_at, finished_at, progress, post_seq,"    \
	" error"

static json_t *
turn_row(hd_stmt *s)
{
	const char *r = hd_stmt_text(s, 2);
	json_t *reasons =
	    r != NULL ? json_loads(r, 0, NULL) : NULL;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id",
	    col_int(s, 0), "status", col_text(s, 1), "reasons",
	    reasons != NULL ? reasons : json_array(), "started_at",
	    col_int(s, 3), "finished_at", col_int(s, 4), "progress",
	    col_int(s, 5), "post_seq", col_int(s, 6), "error", col_text(s, 7));
}

/* The first row of sql (?1 = agent) as a turn, or null. */
static int
one_turn(
    json_t **out, hd_store *st, const char *sql, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*out = NULL;
	if ((rc = hd_store_prepare(st, &s, sql, err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		*out = turn_row(s);
		src = HD_DONE;
	}
	hd_store_reset(s);
	if (*out == NULL)
		*out = json_null();
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

static int
queue_of(json_t **out, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*out = json_array();
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, reason, ref, note, created_at, turn_id FROM wakes"
		 " INDEXED BY wakes_open WHERE agent_id = ?1"
		 " AND (status = 'queued' OR status = 'running')"
		 " AND status = 'queued' ORDER BY id",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	while ((src = hd_stmt_step(s)) == HD_ROW)
		json_array_append_new(
		    *out, json_pack("{s:o, s:o, s:o, s:o, s:o, s:b}", "id",
			      col_int(s, 0), "reason", col_text(s, 1), "ref",
			      col_int(s, 2), "note", col_text(s, 3),
			      "created_at", col_int(s, 4), "resumed",
			      !hd_stmt_is_null(s, 5)));
	hd_store_reset(s);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

static int
member_state(json_t **out, hd_store *st, const hd_agent *a, hd_err *err)
{
	hd_sv_agent sa;
	json_t *queue = NULL, *running = NULL, *last = NULL;
	char since[32];
	int64_t hour = 0;
	int rc;

	*out = NULL;
	snprintf(
	    since, sizeof(since), "%lld", (long long)(hd_now_ms() - HOUR_MS));
	if ((rc = hd_sv__agent_get(&sa, st, a->id, err)) < 0)
		return rc;
	if ((rc = queue_of(&queue, st, a->id, err)) < 0 ||
	    (rc = one_turn(&running, st,
		 "SELECT " TURN_COLS " FROM autorun_turns"
		 " WHERE agent_id = ?1 AND status = 'running'",
		 a->id, err)) < 0 ||
	    (rc = one_turn(&last, st,
		 "SELECT " TURN_COLS " FROM autorun_turns"
		 " INDEXED BY autorun_turns_agent WHERE agent_id = ?1"
		 " AND status != 'running' ORDER BY id DESC LIMIT 1",
		 a->id, err)) < 0 ||
	    (rc = hd_sv__query_i64(&hour, st,
		 "SELECT COUNT(*) FROM autorun_turns"
		 " INDEXED BY autorun_turns_agent WHERE agent_id = ?1"
		 " AND started_at > CAST(?2 AS INTEGER)",
		 a->id, since, err)) < 0)
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
	hd_sv__agent_dispose(&sa);
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
