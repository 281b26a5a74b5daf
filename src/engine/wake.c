/*
 * wake.c -- deriving the supervisor's wakes (supervisor.h): a scan of an
 * autorun team's mailboxes and board queues a wake for every stimulus
 * not seen before. The wakes, turns and agents' standing are the autorun
 * module's (wake.h, autorun_turn.h, autorun.h: their invariants are in
 * those headers); this file writes no SQL. The threads that drive it are
 * in supervisor.c, the turns in sv_turn.c.
 *  (1) A stimulus wakes once: its key (wake.h (1)) says what it is, and a
 *      key an agent has seen is not queued again.
 *  (2) A parked agent hears only what is meant for it alone (a message
 *      not a broadcast, a task assigned), and that unparks it.
 *  (3) An agent that is shut down, or in a team that is, or paused, or
 *      with autorun off, is never woken by a scan.
 *  (4) Ready work is offered to one idle member at a time, least lately
 *      active first (never the leader of a team with members), each
 *      member once per task: a member that passes leaves it to the next.
 *  (5) Scans read first and write only when something is new, so the
 *      store changing for other reasons costs each supervisor one read.
 * Callers: supervisor.c (hd_sv__scan); sv_turn.c, sv_hand.c (hd_sv__oom).
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
		if ((rc = hd_wake_seen(&seen, st, mb->a->id, key, err)) < 0)
			return rc;
		if (!seen)
			sc->found++;
		mb->busy |= !seen;
		return 0;
	}
	if ((rc = hd_wake_add(&added, st, sc->team, mb->a->id, reason, ref,
		 key, NULL, NULL, err)) < 0)
		return rc;
	if (!added)
		return 0;
	sc->found++;
	mb->busy = 1;
	if (mb->parked && direct) {
		if ((rc = hd_autorun_agent_park(&changed, st, sc->team, mb->a->id,
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
		if ((rc = hd_wake_offered(&open, st, sc->team, key, err)) < 0)
			break;
		if (open)
			continue; /* someone is considering it */
		for (j = 0; j < sc->nm; j++) {
			struct member *mb = &sc->m[j];

			if (!mb->drivable || mb->parked || mb->busy ||
			    (mb->a->is_leader && sc->has_members) ||
			    strcmp(mb->a->status, "idle") != 0)
				continue;
			if ((rc = hd_wake_seen(&seen, st, mb->a->id, key, err)) < 0)
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
	hd_autorun_agent sa;
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
		if ((rc = hd_autorun_agent_get(&sa, st, a->id, err)) < 0)
			return rc;
		mb->parked = sa.parked != NULL;
		hd_autorun_agent_dispose(&sa);
		if ((rc = hd_wake_open_count(&n, st, a->id, err)) < 0)
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
