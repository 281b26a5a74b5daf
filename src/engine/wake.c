/*
 * wake.c -- the supervisor's durable state (supervisor.h). Owns tables
 * wakes, autorun_turns and autorun_agents (migration 12); nothing else
 * writes them (the team module purges them with a team). The threads
 * that drive them are in supervisor.c.
 *
 * A wake's states, each move one conditional UPDATE here:
 *   queued -> running    hd_sv__take, with the turn that answers it
 *   queued -> dropped    hd_sv__take: stale (the mail was read, the task
 *                        moved on), or the agent or its team is gone or
 *                        shut down
 *   running -> done      hd_sv__finish
 *   running -> queued    hd_sv__abort (the turn was cut short); it keeps
 *                        the aborted turn's id, which marks it resumed
 *  (1) Keys make a stimulus wake once: "mail:<newest id>", "task:<id>:
 *      <status>:<claimed_at>", "ready:<id>:<updated_at>", "manual:<hex>",
 *      UNIQUE per agent, inserted with OR IGNORE; a wake queued twice by
 *      two scans (two servers) is one row.
 *  (2) A turn is one row in autorun_turns; the partial unique index on
 *      agent_id WHERE status = 'running' makes a second running turn of
 *      an agent impossible, whatever the processes do. take checks first,
 *      so the index is the backstop, never the path.
 *  (3) What a turn's prompt delivered is kept on its row ("lo-hi": one
 *      read takes an agent's oldest unread first, so it is one id range)
 *      and, when the turn is aborted, carried to the agent's row, to be
 *      shown again by the next turn's prompt and cleared by it.
 *  (4) Progress is read from the event log: the events the agent caused
 *      between the turn's start and its record that moved the board or a
 *      mailbox (hd_events_progress). A failed turn made none it kept.
 *  (5) Scans read first and write only when something is new, so the
 *      store changing for other reasons costs each supervisor one read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/autorun.h>
#include <huddle/board.h>
#include <huddle/budget.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/mailbox.h>
#include <huddle/prompt.h>
#include <huddle/room.h>
#include <huddle/runtime.h>
#include <huddle/session.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "conversation_int.h"
#include "exchange_int.h"
#include "supervisor_int.h"

#define HD_LOG_COMPONENT "supervisor"
#include <huddle/log.h>

int
hd_sv__oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

int
hd_sv__changes(hd_store *st)
{
	return hd_store_changes(st);
}

int
hd_sv__query_i64(int64_t *out, hd_store *st, const char *sql, const char *a,
    const char *b, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*out = 0;
	if ((rc = hd_store_prepare(st, &s, sql, err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, a);
	if (b != NULL)
		hd_stmt_bind_text(s, 2, b);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		*out = hd_stmt_int(s, 0);
		src = HD_DONE;
	}
	hd_store_reset(s);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

/* ---- the agent's row ------------------------------------------------------
 */

void
hd_sv__agent_dispose(hd_sv_agent *a)
{
	free(a->parked);
	free(a->carry);
	memset(a, 0, sizeof(*a));
}

int
hd_sv__agent_get(hd_sv_agent *out, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT streak, parked, parked_at, carry FROM autorun_agents"
		 " WHERE agent_id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		out->streak = hd_stmt_int(s, 0);
		out->parked = hd_store_col_dup(s, 1);
		out->parked_at = hd_stmt_int(s, 2);
		out->carry = hd_store_col_dup(s, 3);
		src = HD_DONE;
	}
	hd_store_reset(s);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

/* Make sure agent has its row (team kept current). */
int
hd_sv__agent_ensure(
    hd_store *st, const char *team, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO autorun_agents(agent_id, team_id) VALUES (?1, ?2)"
		 " ON CONFLICT(agent_id) DO UPDATE SET team_id = "
		 "excluded.team_id"
		 " WHERE team_id != excluded.team_id",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	hd_stmt_bind_text(s, 2, team);
	return hd_store_step_done(st, s, err);
}

int
hd_sv__park_set(int *changed, hd_store *st, const char *team, const char *agent,
    const char *reason, const char *by, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*changed = 0;
	if ((rc = hd_sv__agent_ensure(st, team, agent, err)) < 0)
		return rc;
	if (reason != NULL) {
		if ((rc = hd_store_prepare(st, &s,
			 "UPDATE autorun_agents SET parked = ?2, parked_at = ?3"
			 " WHERE agent_id = ?1 AND parked IS NULL",
			 err)) < 0)
			return rc;
		hd_stmt_bind_text(s, 2, reason);
		hd_stmt_bind_int(s, 3, hd_now_ms());
	} else if ((rc = hd_store_prepare(st, &s,
			"UPDATE autorun_agents SET parked = NULL,"
			" parked_at = NULL, streak = 0"
			" WHERE agent_id = ?1 AND parked IS NOT NULL",
			err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	if ((*changed = hd_sv__changes(st) > 0)) {
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

/* ---- queueing (1) ---------------------------------------------------------
 */

int
hd_sv__wake_add(int *added, hd_store *st, const char *team, const char *agent,
    const char *reason, int64_t ref, const char *key, const char *note,
    int64_t *id, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*added = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT OR IGNORE INTO wakes(team_id, agent_id, reason, ref,"
		 " key, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, team);
	hd_stmt_bind_text(s, 2, agent);
	hd_stmt_bind_text(s, 3, reason);
	if (ref > 0)
		hd_stmt_bind_int(s, 4, ref);
	else
		hd_stmt_bind_null(s, 4);
	hd_stmt_bind_text(s, 5, key);
	hd_stmt_bind_text_copy(s, 6, note);
	hd_stmt_bind_int(s, 7, hd_now_ms());
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	if ((*added = hd_sv__changes(st) > 0)) {
		if (id != NULL)
			*id = hd_store_last_id(st);
		hd_events_append(st, "wake_queued", team, 0, agent,
		    ref > 0 ? json_pack("{s:s, s:s, s:I}", "agent", agent,
				  "reason", reason, "ref", (json_int_t)ref)
			    : json_pack("{s:s, s:s, s:n}", "agent", agent,
				  "reason", reason, "ref"));
	}
	return 0;
}

/* 1 when agent already has a wake with key. */
static int
key_seen(
    int *seen, hd_store *st, const char *agent, const char *key, hd_err *err)
{
	int64_t v;
	int rc;

	rc = hd_sv__query_i64(&v, st,
	    "SELECT 1 FROM wakes WHERE agent_id = ?1 AND key = ?2", agent, key,
	    err);
	*seen = v != 0;
	return rc;
}

/* How many wakes agent has queued or running. */
static int
open_wakes(int64_t *n, hd_store *st, const char *agent, hd_err *err)
{
	return hd_sv__query_i64(n, st,
	    "SELECT COUNT(*) FROM wakes WHERE agent_id = ?1"
	    " AND (status = 'queued' OR status = 'running')",
	    agent, NULL, err);
}

/* 1 when a wake with key is queued or running for anyone in team. */
static int
offer_open(
    int *open, hd_store *st, const char *team, const char *key, hd_err *err)
{
	int64_t v;
	int rc;

	rc = hd_sv__query_i64(&v, st,
	    "SELECT 1 FROM wakes WHERE team_id = ?1 AND key = ?2"
	    " AND (status = 'queued' OR status = 'running')",
	    team, key, err);
	*open = v != 0;
	return rc;
}

/* ---- scanning -------------------------------------------------------------
 */

/* A member as the scan sees it. */
struct member {
	const hd_agent *a;
	int drivable; /* its runtime has an adapter in this build */
	int parked;
	int busy; /* has a wake queued or running (or picked this scan) */
};

struct scan {
	const char *team;
	int write; /* 0: only count what is new */
	size_t found;
	hd_agents agents;
	struct member *m;
	size_t nm;
	int has_members; /* someone besides the leader */
};

static void
scan_reset(struct scan *sc)
{
	hd_agents_dispose(&sc->agents);
	free(sc->m);
	sc->m = NULL;
	sc->nm = 0;
	sc->found = 0;
}

static struct member *
member_of(struct scan *sc, const char *agent)
{
	size_t i;

	for (i = 0; i < sc->nm; i++)
		if (strcmp(sc->m[i].a->id, agent) == 0)
			return &sc->m[i];
	return NULL;
}

/* Queue (or, reading, count) one wake; unpark when direct says so. */
static int
scan_wake(struct scan *sc, hd_store *st, struct member *mb, const char *reason,
    int64_t ref, const char *key, int direct, hd_err *err)
{
	int seen, added, changed, rc;

	if (!sc->write) {
		if ((rc = key_seen(&seen, st, mb->a->id, key, err)) < 0)
			return rc;
		if (!seen)
			sc->found++;
		mb->busy |= !seen;
		return 0;
	}
	if ((rc = hd_sv__wake_add(&added, st, sc->team, mb->a->id, reason, ref,
		 key, NULL, NULL, err)) < 0)
		return rc;
	if (!added)
		return 0;
	sc->found++;
	mb->busy = 1;
	if (mb->parked && direct) {
		if ((rc = hd_sv__park_set(&changed, st, sc->team, mb->a->id,
			 NULL, reason, err)) < 0)
			return rc;
		mb->parked = 0;
	}
	return 0;
}

static int
scan_mail(struct scan *sc, hd_store *st, hd_err *err)
{
	hd_mail_waiting *w = NULL;
	struct member *mb;
	char key[64];
	size_t n = 0, i;
	int rc = 0;

	if ((rc = hd_mailbox_waiting(&w, &n, st, sc->team, err)) < 0)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		if ((mb = member_of(sc, w[i].agent)) == NULL || !mb->drivable)
			continue;
		/* a parked agent hears only what is meant for it alone */
		if (mb->parked && w[i].newest_direct == 0)
			continue;
		snprintf(key, sizeof(key), "mail:%lld",
		    (long long)(mb->parked ? w[i].newest_direct : w[i].newest));
		rc = scan_wake(sc, st, mb, "message",
		    mb->parked ? w[i].newest_direct : w[i].newest, key, 1, err);
	}
	hd_mail_waiting_dispose(w, n);
	return rc;
}

/* The team's open tasks (claimed or in progress), two board reads for
 * the whole team, each woken for its owner. */
static int
scan_owned(struct scan *sc, hd_store *st, hd_err *err)
{
	static const char *const open[] = {"claimed", "in_progress"};
	struct member *mb;
	hd_task_filter f;
	hd_tasks l;
	char key[96];
	size_t k, i;
	int rc = 0;

	for (k = 0; k < 2 && rc == 0; k++) {
		memset(&f, 0, sizeof(f));
		f.status = open[k];
		if ((rc = hd_board_list(&l, st, sc->team, &f, err)) < 0)
			return rc;
		for (i = 0; i < l.n && rc == 0; i++) {
			if (l.items[i].owner == NULL ||
			    (mb = member_of(sc, l.items[i].owner)) == NULL ||
			    !mb->drivable || mb->parked)
				continue;
			snprintf(key, sizeof(key), "task:%lld:%s:%lld",
			    (long long)l.items[i].id, l.items[i].status,
			    (long long)l.items[i].claimed_at);
			rc = scan_wake(
			    sc, st, mb, "task", l.items[i].id, key, 1, err);
		}
		hd_tasks_dispose(&l);
	}
	return rc;
}

static int
by_priority(const void *a, const void *b)
{
	const hd_task *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Members in the order ready work is offered: least lately active
 * first, then by id. */
static int
by_rest(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->a->last_active_at != y->a->last_active_at)
		return x->a->last_active_at < y->a->last_active_at ? -1 : 1;
	return strcmp(x->a->id, y->a->id);
}

static int
scan_ready(struct scan *sc, hd_store *st, hd_err *err)
{
	hd_task_filter f;
	hd_tasks l;
	char key[96];
	size_t i, j;
	int open, seen, rc = 0;

	memset(&f, 0, sizeof(f));
	f.ready = 1;
	if ((rc = hd_board_list(&l, st, sc->team, &f, err)) < 0)
		return rc;
	/* no items may mean no array at all, which qsort must not be given */
	if (l.n > 1)
		qsort(l.items, l.n, sizeof(*l.items), by_priority);
	if (sc->nm > 1)
		qsort(sc->m, sc->nm, sizeof(*sc->m), by_rest);
	for (i = 0; i < l.n && rc == 0; i++) {
		snprintf(key, sizeof(key), "ready:%lld:%lld",
		    (long long)l.items[i].id, (long long)l.items[i].updated_at);
		if ((rc = offer_open(&open, st, sc->team, key, err)) < 0)
			break;
		if (open)
			continue; /* someone is considering it */
		for (j = 0; j < sc->nm; j++) {
			struct member *mb = &sc->m[j];

			if (!mb->drivable || mb->parked || mb->busy ||
			    (mb->a->is_leader && sc->has_members) ||
			    strcmp(mb->a->status, "idle") != 0)
				continue;
			if ((rc = key_seen(&seen, st, mb->a->id, key, err)) < 0)
				break;
			if (seen)
				continue; /* it passed on this one */
			rc = scan_wake(
			    sc, st, mb, "ready", l.items[i].id, key, 0, err);
			break;
		}
	}
	hd_tasks_dispose(&l);
	return rc;
}

static int
scan_txn(hd_store *st, void *payload, hd_err *err)
{
	struct scan *sc = payload;
	const hd_runtime_adapter *ad;
	hd_autorun ar;
	hd_team *tm = NULL;
	hd_sv_agent sa;
	size_t i;
	int64_t n;
	int rc;

	scan_reset(sc);
	if ((rc = hd_team_get(&tm, st, sc->team, err)) < 0)
		return rc == HD_ENOTFOUND ? 0 : rc; /* removed meanwhile */
	rc = strcmp(tm->status, "shutdown") == 0;
	hd_team_free(tm);
	if (rc)
		return 0;
	if ((rc = hd_autorun_get(&ar, st, sc->team, err)) < 0)
		return rc;
	if (!ar.on || ar.paused)
		return 0;
	if ((rc = hd_agent_list(&sc->agents, st, sc->team, err)) < 0)
		return rc;
	if (sc->agents.n == 0)
		return 0;
	if ((sc->m = calloc(sc->agents.n, sizeof(*sc->m))) == NULL)
		return hd_sv__oom(err);
	for (i = 0; i < sc->agents.n; i++) {
		const hd_agent *a = &sc->agents.items[i];
		struct member *mb;

		if (strcmp(a->status, "shutdown") == 0)
			continue; /* (3) never woken again */
		mb = &sc->m[sc->nm++];
		mb->a = a;
		mb->drivable = hd_runtime_find(&ad, a->runtime, NULL) == 0;
		if (!a->is_leader)
			sc->has_members = 1;
		if ((rc = hd_sv__agent_get(&sa, st, a->id, err)) < 0)
			return rc;
		mb->parked = sa.parked != NULL;
		hd_sv__agent_dispose(&sa);
		if ((rc = open_wakes(&n, st, a->id, err)) < 0)
			return rc;
		mb->busy = n > 0;
	}
	if ((rc = scan_mail(sc, st, err)) < 0)
		return rc;
	if ((rc = scan_owned(sc, st, err)) < 0)
		return rc;
	return scan_ready(sc, st, err);
}

int
hd_sv__scan(size_t *queued, hd_store *st, const char *team, hd_err *err)
{
	struct scan sc;
	int rc;

	*queued = 0;
	memset(&sc, 0, sizeof(sc));
	sc.team = team;
	if ((rc = hd_store_read(st, scan_txn, &sc, err)) == 0 && sc.found > 0) {
		sc.write = 1;
		rc = hd_store_write(st, scan_txn, &sc, err);
		*queued = sc.found;
	}
	scan_reset(&sc);
	return rc;
}
