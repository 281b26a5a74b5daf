/*
 * activity.c -- a member's status follows its work (activity.h): settled
 * after each act on a task and at each turn's end, with the idle notice
 * and the failure notice to the leader. Reads a member's work (what it
 * holds) only through the hd_work its caller hands in -- the board's
 * (hd_board_work): the board sits above this module, which names nothing
 * of it -- and writes agents only through the team module's functions,
 * messages only through the mailbox (src/mailbox/mailbox.c).
 *  (1) The rule is one function (want): working while in a turn (the
 *      mark an engine sets at begin and clears at end) or while holding
 *      a task in_progress; idle otherwise. A claimed task not started is
 *      not work yet. error, shutdown_requested and shutdown are left to
 *      their own ways out (activity.h).
 *  (2) The idle notice goes with the status change, in its transaction:
 *      a leader told "idle" sees the member idle, and a crash keeps both
 *      or neither. Being a message of type idle, it is also what counts
 *      as approval for a pending shutdown (shutdown.c reacts to it as it
 *      is sent); a team without a leader has the idle member approve
 *      directly. It is sent with the shutdown protocol's reaction
 *      handed the same hd_work (hd_shutdown__react), as hd_mailbox_send
 *      would with the board's.
 *  (3) A member asked to shut down that would now be idle approves the
 *      same way (its status is shutdown_requested, not working, but it
 *      has nothing left to do): a shutdown whose members simply finish
 *      completes without waiting out its timeout.
 * Callers: the board's reflection (hd_activity__settle, each act on a
 * task, with the board's hd_work), shutdown.c (the status a member goes
 * back to), and through src/lifecycle/presence.c (the public functions,
 * bound to the board's hd_work) the engines' turns (conversation,
 * exchange, supervisor) and the CLI (set-status); hd_activity_turn_begin
 * and hd_activity_turn_chain, which read no work, are called directly.
 */
#include <stdio.h>
#include <string.h>

#include <huddle/activity.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "presence_int.h"

#define HD_LOG_COMPONENT "activity"
#include <huddle/log.h>

int
hd_activity__busy(int *busy, hd_store *st, const hd_work *w, const char *team,
    const hd_agent_presence *p, const char *agent, hd_err *err)
{
	*busy = p->turns > 0;
	if (*busy)
		return 0;
	return w->has_started(busy, st, team, agent, err);
}

static int
last_text(
    void *ctx, int64_t id, const char *subject, const char *status, hd_err *err)
{
	(void)err;
	hd_buf_printf(ctx, "; last finished task #%lld \"%s\" (%s)",
	    (long long)id, subject, status);
	return 0;
}

/* `coder is idle; last finished task #5 "Docs" (completed)`. */
static int
idle_text(hd_buf *b, hd_store *st, const hd_work *w, const char *team,
    const char *agent, hd_err *err)
{
	int rc;

	hd_buf_printf(b, "%s is idle", agent);
	if ((rc = w->last_finished(st, team, agent, last_text, b, err)) < 0)
		return rc;
	return hd_buf_failed(b) ? hd_buf_error(b, "idle notice", err) : 0;
}

/* (2) (3) */
static int
went_idle(hd_store *st, const hd_work *w, const char *team, const char *agent,
    const hd_agent_presence *p, hd_err *err)
{
	hd_buf text = HD_BUF_INIT(HD_MESSAGE_MAX);
	hd_message_spec m;
	hd_message idle;
	char summary[96];
	int rc;

	if (p->is_leader)
		return 0;
	if (p->leader[0] == '\0') {
		memset(&idle, 0, sizeof(idle));
		idle.team_id = (char *)team;
		idle.from_agent = (char *)agent;
		idle.type = (char *)"idle";
		return hd_shutdown__react(st, &idle, w, err);
	}
	if ((rc = idle_text(&text, st, w, team, agent, err)) < 0)
		goto done;
	snprintf(summary, sizeof(summary), "%s is idle", agent);
	memset(&m, 0, sizeof(m));
	m.team = team;
	m.from = agent;
	m.to = p->leader;
	m.type = "idle";
	m.content = hd_buf_cstr(&text);
	m.summary = summary;
	m.approve = -1;
	rc = hd_mailbox__send_then(NULL, st, &m, 0, hd_shutdown__react, w, err);
done:
	hd_buf_dispose(&text);
	return rc;
}

/* Settle agent given its presence as just read (p.found). */
static int
settle_with(hd_store *st, const hd_work *w, const char *team, const char *agent,
    hd_agent_presence p, hd_err *err)
{
	int busy, changed, rc;

	if (strcmp(p.status, "working") != 0 && strcmp(p.status, "idle") != 0 &&
	    strcmp(p.status, "shutdown_requested") != 0)
		return 0;
	if ((rc = hd_activity__busy(&busy, st, w, team, &p, agent, err)) < 0)
		return rc;
	if (strcmp(p.status, "shutdown_requested") == 0)
		return busy ? 0
			    : went_idle(st, w, team, agent, &p, err); /* (3) */
	if (busy == (strcmp(p.status, "working") == 0))
		return 0;
	if ((rc = hd_agent_set_status_if(st, team, agent, p.status,
		 busy ? "working" : "idle", &changed, err)) < 0)
		return rc;
	return changed && !busy ? went_idle(st, w, team, agent, &p, err) : 0;
}

static int
settle_txn(hd_store *st, const hd_work *w, const char *team, const char *agent,
    hd_err *err)
{
	hd_agent_presence p;
	int rc;

	if ((rc = hd_agent_presence_get(&p, st, team, agent, err)) < 0 ||
	    !p.found)
		return rc;
	return settle_with(st, w, team, agent, p, err);
}

struct settle {
	const hd_work *w;
	const char *team;
	const char *agent;
	const char *failure;
	int *began;
};

static int
settle_fn(hd_store *st, void *payload, hd_err *err)
{
	struct settle *s = payload;

	return settle_txn(st, s->w, s->team, s->agent, err);
}

int
hd_activity__settle(hd_store *st, const hd_work *w, const char *team,
    const char *agent, hd_err *err)
{
	struct settle s = {w, team, agent, NULL, NULL};

	if (team == NULL || agent == NULL)
		return 0;
	return hd_store_write(st, settle_fn, &s, err);
}

static int
begin_fn(hd_store *st, void *payload, hd_err *err)
{
	struct settle *s = payload;
	hd_agent_presence p;
	int changed = 0, rc;

	if ((rc = hd_agent_presence_get(&p, st, s->team, s->agent, err)) < 0 ||
	    !p.found)
		return rc;
	if ((rc = hd_agent_turn_mark(st, s->team, s->agent, 1, err)) < 0)
		return rc;
	if ((strcmp(p.status, "idle") == 0 || strcmp(p.status, "error") == 0) &&
	    (rc = hd_agent_set_status_if(st, s->team, s->agent, p.status,
		 "working", &changed, err)) < 0)
		return rc;
	if (s->began != NULL)
		*s->began = changed;
	return 0;
}

int
hd_activity_turn_begin(
    int *began, hd_store *st, const char *team, const char *agent, hd_err *err)
{
	struct settle s = {NULL, team, agent, NULL, began};

	if (began != NULL)
		*began = 0;
	return hd_store_write(st, begin_fn, &s, err);
}

/* The leader's notice of a failed turn, from huddle. */
static int
failed_notice(hd_store *st, const char *team, const char *agent,
    const hd_agent_presence *p, const char *reason, hd_err *err)
{
	hd_buf text = HD_BUF_INIT(HD_MESSAGE_MAX);
	hd_message_spec m;
	char summary[128];
	int rc;

	if (p->is_leader || p->leader[0] == '\0')
		return 0;
	hd_buf_printf(&text,
	    "%s's turn failed: %s\n%s is in error now: speaker selection and "
	    "auto-assignment skip it until a turn of it succeeds or it is "
	    "reset (huddle agent set-status %s idle). A replacement can take "
	    "over its unfinished tasks (huddle agent replace %s %s NEW, or "
	    "teammate_spawn with replaces \"%s\").",
	    agent, reason, agent, agent, team, agent, agent);
	if (hd_buf_failed(&text)) {
		rc = hd_buf_error(&text, "failure notice", err);
		goto done;
	}
	snprintf(summary, sizeof(summary), "%s's turn failed", agent);
	memset(&m, 0, sizeof(m));
	m.team = team;
	m.from = HD_MAILBOX_SYSTEM;
	m.to = p->leader;
	m.content = hd_buf_cstr(&text);
	m.summary = summary;
	m.approve = -1;
	rc = hd_mailbox__send(NULL, st, &m, 1, err);
done:
	hd_buf_dispose(&text);
	return rc;
}

static int
end_fn(hd_store *st, void *payload, hd_err *err)
{
	struct settle *s = payload;
	hd_agent_presence p;
	int changed, rc;

	if ((rc = hd_agent_presence_get(&p, st, s->team, s->agent, err)) < 0 ||
	    !p.found)
		return rc;
	if ((rc = hd_agent_turn_mark(st, s->team, s->agent, -1, err)) < 0 ||
	    (rc = hd_agent_touch(st, s->team, s->agent, err)) < 0)
		return rc;
	if (s->failure == NULL) {
		/* the presence read above, less the turn just counted out */
		p.turns = p.turns > 0 ? p.turns - 1 : 0;
		return settle_with(st, s->w, s->team, s->agent, p, err);
	}
	if ((rc = hd_agent_set_error(
		 &changed, st, s->team, s->agent, s->failure, err)) < 0)
		return rc;
	hd_events_append(st, "turn_failed", s->team, 0, s->agent,
	    json_pack("{s:s, s:s}", "agent", s->agent, "reason",
		s->failure[0] != '\0' ? s->failure : "the turn failed"));
	return failed_notice(st, s->team, s->agent, &p,
	    s->failure[0] != '\0' ? s->failure : "the turn failed", err);
}

int
hd_activity__turn_end(hd_store *st, const hd_work *w, const char *team,
    const char *agent, const char *failure, hd_err *err)
{
	struct settle s = {w, team, agent, failure, NULL};

	return hd_store_write(st, end_fn, &s, err);
}

static int
abort_fn(hd_store *st, void *payload, hd_err *err)
{
	struct settle *s = payload;
	hd_agent_presence p;
	int busy, rc;

	if ((rc = hd_agent_presence_get(&p, st, s->team, s->agent, err)) < 0 ||
	    !p.found)
		return rc;
	if ((rc = hd_agent_turn_mark(st, s->team, s->agent, -1, err)) < 0 ||
	    strcmp(p.status, "working") != 0)
		return rc;
	p.turns = p.turns > 0 ? p.turns - 1 : 0;
	if ((rc = hd_activity__busy(
		 &busy, st, s->w, s->team, &p, s->agent, err)) < 0 ||
	    busy)
		return rc;
	return hd_agent_set_status_if(
	    st, s->team, s->agent, "working", "idle", NULL, err);
}

int
hd_activity__turn_abort(hd_store *st, const hd_work *w, const char *team,
    const char *agent, hd_err *err)
{
	struct settle s = {w, team, agent, NULL, NULL};

	return hd_store_write(st, abort_fn, &s, err);
}

int
hd_activity_turn_chain(hd_store *st, const char *team, const char *agent,
    hd_err *err)
{
	return hd_agent_turn_mark(st, team, agent, -1, err);
}

struct manual {
	const hd_work *w;
	const char *agent;
	const char *status;
};

static int
manual_fn(hd_store *st, void *payload, hd_err *err)
{
	struct manual *m = payload;
	hd_agent *a = NULL;
	int rc;

	if ((rc = hd_agent_set_status(st, m->agent, m->status, err)) < 0)
		return rc;
	if (strcmp(m->status, "idle") != 0)
		return 0;
	if ((rc = hd_agent_get(&a, st, m->agent, err)) < 0)
		return rc;
	/* the counted turns go (an engine that died left them), then what
	 * its work says: a member still holding a started task works */
	if (a->team_id != NULL &&
	    (rc = hd_agent_turn_mark(st, a->team_id, a->id, 0, err)) == 0)
		rc = settle_txn(st, m->w, a->team_id, a->id, err);
	hd_agent_free(a);
	return rc;
}

int
hd_activity__set_status(hd_store *st, const hd_work *w, const char *agent,
    const char *status, hd_err *err)
{
	struct manual m = {w, agent, status};

	return hd_store_write(st, manual_fn, &m, err);
}
