/*
 * sv_turn.c -- the supervisor's turns (supervisor.h): whether an agent's
 * wakes can be taken, taking them with the prompt, recording the turn,
 * aborting one whose engine stopped or died. The tables and their
 * invariants are the autorun module's (wake.h, autorun_turn.h,
 * autorun.h); this file calls it (its only SQL text is post_soft's
 * savepoint) and keeps them:
 *  (1) a second running turn per agent is refused first by the check and
 *      last by the unique index (autorun_turn.h (1));
 *  (2) wakes are taken in the transaction that starts the turn and done
 *      in the one that records it; an aborted turn's go back in the queue
 *      (wake.h (2));
 *  (3) what a prompt delivered is kept on the turn and carried on abort
 *      (wake.h (3));
 *  (4) progress is read from the event log (hd_events_progress): the
 *      events the agent caused between the turn's start and its record
 *      that moved the board or a mailbox; a failed turn made none it
 *      kept;
 *  (5) an aborted turn's process group is killed before its wakes are
 *      queued again (sv_proc.c).
 * Callers: supervisor.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/autorun.h>
#include <huddle/board.h>
#include <huddle/budget.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/mailbox.h>
#include <huddle/prompt.h>
#include <huddle/room.h>
#include <huddle/session.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "conversation_int.h"
#include "exchange_int.h"
#include "supervisor_int.h"

#define HD_LOG_COMPONENT "supervisor"
#include <huddle/log.h>

#define HOUR_MS INT64_C(3600000)
#define MAX_REASONS 16 /* wakes one turn answers, at most */

/* ---- who can run ----------------------------------------------------------
 */

/* agent's queued wakes as take reads them, and which of them it keeps. */
typedef struct qwakes {
	hd_wake v[MAX_REASONS];
	int keep[MAX_REASONS];
	size_t n;
	int manual; /* one of them is by hand */
	int resumed;
} qwakes;

static void
qwakes_dispose(qwakes *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		hd_wake_dispose(&q->v[i]);
	memset(q, 0, sizeof(*q));
}

static int
qwakes_load(qwakes *q, hd_store *st, const char *agent, hd_err *err)
{
	size_t i;
	int rc;

	memset(q, 0, sizeof(*q));
	rc = hd_wake_queued(q->v, MAX_REASONS, &q->n, st, agent, err);
	for (i = 0; i < q->n; i++) {
		q->keep[i] = 1;
		q->manual |= strcmp(q->v[i].reason, "manual") == 0;
		q->resumed |= q->v[i].resumed;
	}
	return rc;
}

/* Drop agent's queued wakes: every one (all), or those not kept. */
static int
drop_wakes(
    hd_store *st, const char *agent, const qwakes *q, int all, hd_err *err)
{
	size_t i;
	int rc;

	if (all)
		return hd_wake_drop_all(st, agent, err);
	for (i = 0; i < q->n; i++) {
		if (q->keep[i])
			continue;
		if ((rc = hd_wake_drop(st, q->v[i].id, err)) < 0)
			return rc;
	}
	return 0;
}

/* The checks shared by hd_sv__check and hd_sv__take, read-only. With
 * take set, what can be known to be dead is dropped. */
struct gate {
	const char *agent;
	int take;
	int result;
	hd_sv_block *blk;
	hd_agent *a;
	hd_autorun ar;
	qwakes q;
	hd_autorun_agent sa;
};

static void
gate_dispose(struct gate *g)
{
	hd_agent_free(g->a);
	g->a = NULL;
	qwakes_dispose(&g->q);
	hd_autorun_agent_dispose(&g->sa);
}

static int
blocked(struct gate *g, const char *why)
{
	g->result = HD_SV_BLOCKED;
	snprintf(g->blk->why, sizeof(g->blk->why), "%s", why);
	return 0;
}

/* Is wake w still worth a turn? */
static int
wake_valid(int *valid, hd_store *st, const struct gate *g, const hd_wake *w,
    hd_err *err)
{
	hd_task *t = NULL;
	hd_mail_waiting *mw = NULL;
	size_t n = 0, i;
	int rc;

	*valid = 1;
	if (w->resumed || strcmp(w->reason, "manual") == 0)
		return 0;
	if (strcmp(w->reason, "message") == 0) {
		if ((rc = hd_mailbox_waiting(&mw, &n, st, g->a->team_id, err)) <
		    0)
			return rc;
		for (*valid = 0, i = 0; i < n; i++)
			*valid |= strcmp(mw[i].agent, g->agent) == 0;
		hd_mail_waiting_dispose(mw, n);
		return 0;
	}
	if ((rc = hd_board_get(&t, st, w->ref, err)) < 0) {
		*valid = 0;
		return rc == HD_ENOTFOUND ? 0 : rc;
	}
	if (strcmp(w->reason, "task") == 0)
		*valid = t->owner != NULL && strcmp(t->owner, g->agent) == 0 &&
			 (strcmp(t->status, "claimed") == 0 ||
			     strcmp(t->status, "in_progress") == 0);
	else /* ready */
		*valid = strcmp(t->status, "pending") == 0 &&
			 t->owner == NULL && t->nblocked_by == 0;
	hd_task_free(t);
	return 0;
}

static int
gate_txn(hd_store *st, void *payload, hd_err *err)
{
	struct gate *g = payload;
	hd_sv_block *blk = g->blk;
	const char *paused = NULL;
	hd_team *tm = NULL;
	hd_autorun_running run;
	size_t i, kept;
	int64_t cnt = 0, oldest = 0;
	int rc, found, busy, dead, valid;

	gate_dispose(g);
	memset(blk, 0, sizeof(*blk));
	g->result = HD_SV_NONE;
	if ((rc = qwakes_load(&g->q, st, g->agent, err)) < 0)
		return rc;
	if (g->q.n == 0)
		return 0;
	/* gone, teamless, or shut down: nothing will ever run these */
	if ((rc = hd_agent_get(&g->a, st, g->agent, err)) < 0 &&
	    rc != HD_ENOTFOUND)
		return rc;
	dead = g->a == NULL || g->a->team_id == NULL ||
	       strcmp(g->a->status, "shutdown") == 0;
	if (!dead) {
		if ((rc = hd_team_get(&tm, st, g->a->team_id, err)) < 0)
			return rc;
		dead = strcmp(tm->status, "shutdown") == 0;
		hd_team_free(tm);
	}
	if (dead) {
		hd_err_clear(err);
		return g->take ? drop_wakes(st, g->agent, &g->q, 1, err) : 0;
	}
	if ((rc = hd_autorun_get(&g->ar, st, g->a->team_id, err)) < 0)
		return rc;
	if (g->ar.paused)
		return blocked(g, "paused");
	if (!g->ar.on && !g->q.manual && !g->q.resumed)
		return blocked(g, "off");
	/* (1) one turn at a time */
	if ((rc = hd_autorun_turn_running(&found, &run, st, g->agent, err)) < 0)
		return rc;
	if (found) {
		blk->turn_id = run.turn_id;
		snprintf(blk->owner, sizeof(blk->owner), "%s", run.owner);
		blk->pid = run.pid;
		blk->start = run.start;
		return blocked(g, "busy");
	}
	if ((rc = hd_conv__agent_busy(&busy, st, g->agent, err)) < 0)
		return rc;
	if (busy)
		return blocked(g, "conversation");
	if ((rc = hd_autorun_agent_get(&g->sa, st, g->agent, err)) < 0)
		return rc;
	if (g->sa.parked != NULL && !g->q.manual)
		return blocked(g, "parked");
	if ((rc = hd_budget_paused(&paused, st, g->a->team_id, g->agent, err)) <
	    0)
		return rc;
	if (paused != NULL)
		return blocked(g, "budget");
	if ((rc = hd_autorun_turns_since(&cnt, &oldest, st, g->agent,
		 hd_now_ms() - HOUR_MS, err)) < 0)
		return rc;
	if (cnt >= g->ar.turns_per_hour) {
		blk->until = oldest + HOUR_MS + 1;
		return blocked(g, "capped");
	}
	for (kept = 0, i = 0; i < g->q.n; i++) {
		if (!g->ar.on && !g->q.v[i].resumed &&
		    strcmp(g->q.v[i].reason, "manual") != 0) {
			g->q.keep[i] = 0; /* off: only by hand */
			continue;
		}
		if ((rc = wake_valid(&valid, st, g, &g->q.v[i], err)) < 0)
			return rc;
		g->q.keep[i] = valid;
		kept += valid != 0;
	}
	if (kept == 0 && g->ar.on) {
		/* all stale: drop them (a read leaves them for a take) */
		if (g->take &&
		    (rc = drop_wakes(st, g->agent, &g->q, 0, err)) < 0)
			return rc;
		return 0;
	}
	if (kept == 0)
		return blocked(g, "off");
	g->result = HD_SV_TAKEN;
	return 0;
}

int
hd_sv__check(
    int *result, hd_sv_block *blk, hd_store *st, const char *agent, hd_err *err)
{
	struct gate g;
	int rc;

	memset(&g, 0, sizeof(g));
	g.agent = agent;
	g.blk = blk;
	rc = hd_store_read(st, gate_txn, &g, err);
	*result = g.result;
	gate_dispose(&g);
	return rc;
}

/* ---- taking ---------------------------------------------------------------
 */

void
hd_sv__turn_dispose(hd_sv_turn *t)
{
	hd_agent_free(t->a);
	hd_turn_state_dispose(&t->ts);
	free(t->prompt);
	memset(t, 0, sizeof(*t));
}

/* The request of a woken turn: what woke it, then how to act. */
static int
request_text(char **out, hd_store *st, const struct gate *g, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0);
	hd_task *t;
	size_t i;
	int mail = 0;

	hd_buf_puts(&b, "huddle woke you: nobody is waiting on a reply, so "
			"act on your own. You were woken because:");
	for (i = 0; i < g->q.n; i++) {
		const hd_wake *w = &g->q.v[i];

		if (!g->q.keep[i])
			continue;
		if (strcmp(w->reason, "message") == 0 ||
		    (w->resumed && strcmp(w->reason, "message") == 0)) {
			if (!mail)
				hd_buf_puts(&b, "\n- there are messages for "
						"you (above)");
			mail = 1;
			continue;
		}
		if (strcmp(w->reason, "manual") == 0) {
			hd_buf_puts(&b, "\n- you were woken by hand");
			if (w->note != NULL && w->note[0] != '\0') {
				hd_buf_puts(&b, ": ");
				hd_buf_puts(&b, w->note);
			}
			continue;
		}
		t = NULL;
		if (hd_board_get(&t, st, w->ref, NULL) < 0 || t == NULL)
			continue;
		hd_buf_printf(&b,
		    strcmp(w->reason, "task") == 0
			? "\n- task #%lld \"%s\" is yours and not finished "
			  "(%s)"
			: "\n- task #%lld \"%s\" is ready for someone to "
			  "claim%s",
		    (long long)t->id, t->subject,
		    strcmp(w->reason, "task") == 0 ? t->status : "");
		hd_task_free(t);
	}
	if (g->q.resumed)
		hd_buf_puts(&b, "\n(your previous turn was cut short; pick up "
				"where it stopped)");
	hd_buf_puts(&b,
	    "\n\nAct with huddle's tools: claim, start, complete or fail "
	    "tasks on the board (a ready task is yours only once your "
	    "task_claim wins); answer a shutdown_request with send_message "
	    "type shutdown_response and its request_id (approve, or refuse "
	    "with a reason); message teammates with send_message. Then end "
	    "with one short line for the team room on what you did.");
	if (hd_buf_failed(&b))
		return hd_buf_error(&b, "request", err);
	*out = hd_buf_detach(&b);
	return 0;
}

/* "lo-hi" into lo and hi; 0 when it does not parse. */
static int
range_parse(const char *s, int64_t *lo, int64_t *hi)
{
	long long a, b;

	if (s == NULL || sscanf(s, "%lld-%lld", &a, &b) != 2 || a <= 0 || b < a)
		return 0;
	*lo = a;
	*hi = b;
	return 1;
}

struct take {
	struct gate g;
	const hd_owner_id *me;
	hd_sv_turn *out;
};

static int
reasons_json(char **out, const qwakes *q)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < q->n; i++)
		if (q->keep[i])
			json_array_append_new(arr,
			    q->v[i].ref > 0
				? json_pack("{s:s, s:I}", "reason",
				      q->v[i].reason, "ref",
				      (json_int_t)q->v[i].ref)
				: json_pack("{s:s}", "reason", q->v[i].reason));
	*out = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return *out != NULL ? 0 : -1;
}

static int
take_txn(hd_store *st, void *payload, hd_err *err)
{
	struct take *tk = payload;
	struct gate *g = &tk->g;
	hd_sv_turn *t = tk->out;
	hd_prompt_spec ps;
	hd_prompt p;
	hd_messages carry = {0};
	char *reasons = NULL, *request = NULL, range[64];
	int64_t lo = 0, hi = 0, head = 0;
	size_t i;
	int rc;

	hd_sv__turn_dispose(t);
	memset(&p, 0, sizeof(p));
	if ((rc = gate_txn(st, g, err)) < 0 || g->result != HD_SV_TAKEN)
		return rc;
	if (g->take && (rc = drop_wakes(st, g->agent, &g->q, 0, err)) < 0)
		return rc;
	if ((rc = hd_events_head(&head, st, err)) < 0 ||
	    reasons_json(&reasons, &g->q) < 0) {
		rc = rc < 0 ? rc : hd_sv__oom(err);
		goto done;
	}
	if ((rc = hd_autorun_turn_start(&t->id, st, g->a->team_id, g->agent,
		 tk->me->token, tk->me->pid, tk->me->start, reasons, head,
		 err)) < 0)
		goto done;
	for (i = 0; i < g->q.n; i++) {
		if (!g->q.keep[i])
			continue;
		if ((rc = hd_wake_run(st, g->q.v[i].id, t->id, err)) < 0)
			goto done;
	}
	/* a manual wake unparks, and says so */
	if (g->q.manual && g->sa.parked != NULL) {
		int changed;

		if ((rc = hd_autorun_agent_park(&changed, st, g->a->team_id,
			 g->agent, NULL, "manual", err)) < 0)
			goto done;
	}
	if ((rc = hd_activity_turn_begin(
		 NULL, st, g->a->team_id, g->agent, err)) < 0)
		goto done;
	hd_events_append(st, "autorun_turn_started", g->a->team_id, 0, g->agent,
	    json_pack("{s:I, s:s, s:o, s:b}", "turn", (json_int_t)t->id,
		"agent", g->agent, "reasons", json_loads(reasons, 0, NULL),
		"resumed", g->q.resumed));
	/* the prompt, delivering the mail (3) */
	if ((rc = hd_turn_state_get(&t->ts, st, g->a->team_id, g->agent, err)) <
	    0)
		goto done;
	if (range_parse(g->sa.carry, &lo, &hi) &&
	    (rc = hd_mailbox_range(&carry, st, g->agent, lo, hi, err)) < 0)
		goto done;
	if ((rc = request_text(&request, st, g, err)) < 0)
		goto done;
	memset(&ps, 0, sizeof(ps));
	ps.team = g->a->team_id;
	ps.agent = g->a;
	ps.is_leader = g->a->is_leader;
	ps.since_seq = t->ts.last_seen_seq;
	ps.request = request;
	ps.redeliver = &carry;
	if ((rc = hd_prompt_build(&p, st, &ps, err)) < 0)
		goto done;
	if (carry.n > 0 || p.nmessages > 0) {
		snprintf(range, sizeof(range), "%lld-%lld",
		    (long long)(carry.n > 0 ? lo : p.first_message),
		    (long long)(p.nmessages > 0 ? p.last_message : hi));
		if ((rc = hd_autorun_turn_delivered(st, t->id, range, err)) < 0)
			goto done;
	}
	if (g->sa.carry != NULL &&
	    (rc = hd_autorun_agent_carry(st, g->agent, NULL, err)) < 0)
		goto done;
	snprintf(t->team, sizeof(t->team), "%s", g->a->team_id);
	snprintf(t->agent, sizeof(t->agent), "%s", g->agent);
	t->start_seq = head;
	t->resumed = g->q.resumed;
	t->prompt = p.text;
	p.text = NULL;
	/* what woke it is the request; the rest is context (runtime.h) */
	t->context_len = p.request_off;
	t->seen = p.seen;
	t->a = g->a;
	g->a = NULL;
done:
	hd_prompt_dispose(&p);
	hd_messages_dispose(&carry);
	free(reasons);
	free(request);
	return rc;
}

int
hd_sv__take(int *result, hd_sv_turn *out, hd_sv_block *blk, hd_store *st,
    const char *agent, const hd_owner_id *me, hd_err *err)
{
	struct take tk;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&tk, 0, sizeof(tk));
	tk.g.agent = agent;
	tk.g.take = 1;
	tk.g.blk = blk;
	tk.me = me;
	tk.out = out;
	rc = hd_store_write(st, take_txn, &tk, err);
	*result = rc == 0 ? tk.g.result : HD_SV_NONE;
	if (rc < 0 || *result != HD_SV_TAKEN)
		hd_sv__turn_dispose(out);
	else
		out->started_ms = hd_mono_ms();
	gate_dispose(&tk.g);
	return rc;
}

/* ---- recording ------------------------------------------------------------
 */

struct finish {
	const hd_sv_turn *t;
	const hd_sv_outcome *o;
	const hd_owner_id *me;
	const char *body; /* what to post, or NULL */
	hd_sv_finished *out;
};

/* Post the narration under a savepoint: a post that is refused (the agent
 * left the team) never loses the turn's record. */
static int64_t
post_soft(hd_store *st, const char *team, const char *agent, const char *body)
{
	hd_err perr = HD_ERR_INIT;
	hd_post *p = NULL;
	int64_t seq = 0;

	if (hd_store_exec(st, "SAVEPOINT sv_post", &perr) < 0) {
		hd_log_warn("room post of %s skipped: %s", agent, perr.msg);
		return 0;
	}
	if (hd_room_post(&p, st, team, "peer", agent, body, &perr) < 0) {
		hd_log_warn(
		    "room post of %s in %s skipped: %s", agent, team, perr.msg);
		hd_store_exec(st, "ROLLBACK TO sv_post", NULL);
	} else
		seq = p->seq;
	hd_store_exec(st, "RELEASE sv_post", NULL);
	hd_post_free(p);
	return seq;
}

static int
save_state(
    hd_store *st, const hd_sv_turn *t, const hd_sv_outcome *o, hd_err *err)
{
	hd_turn_state ts;
	int crossed = 0, rc;

	if ((rc = hd_turn_state_get(&ts, st, t->team, t->agent, err)) < 0)
		return rc;
	if (t->seen > ts.last_seen_seq)
		ts.last_seen_seq = t->seen;
	ts.turn_index++;
	free(ts.native_session_id);
	free(ts.runtime);
	ts.native_session_id = NULL;
	ts.runtime = NULL;
	if ((o->native_session_id != NULL &&
		(ts.native_session_id = strdup(o->native_session_id)) ==
		    NULL) ||
	    (ts.runtime = strdup(o->runtime)) == NULL) {
		hd_turn_state_dispose(&ts);
		return hd_sv__oom(err);
	}
	rc = hd_turn_state_put(st, t->team, t->agent, &ts, err);
	hd_turn_state_dispose(&ts);
	if (rc < 0 ||
	    (rc = hd_session_record(st, t->agent, t->team, o->runtime,
		 o->native_session_id, o->resumed, err)) < 0 ||
	    (rc = hd_budget_charge(
		 &crossed, st, t->team, t->agent, o->cost.microcents, err)) < 0)
		return rc;
	hd_events_append(st, "cost", t->team, 0, t->agent,
	    json_pack("{s:I, s:f, s:I, s:I, s:I, s:b}", "turn",
		(json_int_t)t->id, "usd", o->cost.usd, "microcents",
		(json_int_t)o->cost.microcents, "input_tokens",
		(json_int_t)o->cost.input_tokens, "output_tokens",
		(json_int_t)o->cost.output_tokens, "estimated",
		o->cost.estimated));
	return 0;
}

static int
finish_txn(hd_store *st, void *payload, hd_err *err)
{
	struct finish *f = payload;
	const hd_sv_turn *t = f->t;
	const hd_sv_outcome *o = f->o;
	hd_autorun ar;
	hd_autorun_agent sa;
	char why[128];
	int64_t progress = 0, streak;
	int rc, changed, ended;

	memset(f->out, 0, sizeof(*f->out));
	/* still ours? */
	if ((rc = hd_autorun_turn_end(
		 &ended, st, t->id, f->me->token, o->error, err)) < 0)
		return rc;
	if (!ended)
		return hd_err_set(err, HD_ECONFLICT,
		    "turn %lld of %s is no longer this engine's",
		    (long long)t->id, t->agent);
	if (f->body != NULL)
		f->out->post_seq = post_soft(st, t->team, t->agent, f->body);
	if (o->ran && (rc = save_state(st, t, o, err)) < 0)
		return rc;
	/* (4) what it moved */
	if (o->error == NULL && (rc = hd_events_progress(&progress, st,
				     t->agent, t->start_seq, err)) < 0)
		return rc;
	f->out->progress = progress;
	if ((rc = hd_autorun_turn_progress(
		 st, t->id, progress, f->out->post_seq, err)) < 0 ||
	    (rc = hd_wake_finish(st, t->id, err)) < 0)
		return rc;
	/* the streak, and maybe a park (supervisor.h (3)) */
	if ((rc = hd_autorun_agent_ensure(st, t->team, t->agent, err)) < 0 ||
	    (rc = hd_autorun_agent_get(&sa, st, t->agent, err)) < 0)
		return rc;
	streak = progress > 0 ? 0 : sa.streak + 1;
	hd_autorun_agent_dispose(&sa);
	if ((rc = hd_autorun_agent_streak(st, t->agent, streak, err)) < 0)
		return rc;
	if ((rc = hd_autorun_get(&ar, st, t->team, err)) < 0 &&
	    rc != HD_ENOTFOUND)
		return rc;
	if (rc == 0 && streak >= ar.park_after) {
		snprintf(why, sizeof(why),
		    "%lld turns in a row changed nothing on the board or in a "
		    "mailbox",
		    (long long)streak);
		if ((rc = hd_autorun_agent_park(
			 &changed, st, t->team, t->agent, why, NULL, err)) < 0)
			return rc;
		f->out->parked = changed;
	}
	hd_err_clear(err);
	if ((rc = hd_activity_turn_end(
		 st, t->team, t->agent, o->error, err)) < 0)
		return rc;
	hd_events_append(st, "autorun_turn_completed", t->team, 0, t->agent,
	    json_pack("{s:I, s:s, s:I, s:I, s:s?, s:I, s:f}", "turn",
		(json_int_t)t->id, "agent", t->agent, "seq",
		(json_int_t)f->out->post_seq, "progress", (json_int_t)progress,
		"error", o->error, "duration_ms",
		(json_int_t)(hd_mono_ms() - t->started_ms), "usd",
		o->cost.usd));
	return 0;
}

int
hd_sv__finish(hd_sv_finished *out, hd_store *st, const hd_sv_turn *t,
    const hd_sv_outcome *o, const hd_owner_id *me, hd_err *err)
{
	struct finish f;
	hd_buf b = HD_BUF_INIT(0);
	char *body = NULL;
	const unsigned char *p;
	size_t i;
	int rc, blank = 1;

	memset(&f, 0, sizeof(f));
	f.t = t;
	f.o = o;
	f.me = me;
	f.out = out;
	if (o->error != NULL) {
		hd_buf_printf(&b, "[error: %s]", o->error);
		if (hd_buf_failed(&b)) {
			hd_buf_dispose(&b);
			return hd_sv__oom(err);
		}
		body = hd_exchange__reply_body(b.ptr, b.len);
		hd_buf_dispose(&b);
	} else if (o->reply != NULL) {
		/* a turn that said nothing leaves the room alone */
		for (p = (const unsigned char *)o->reply, i = 0;
		     i < o->len && blank; i++)
			blank = p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
				p[i] == '\r';
		if (!blank)
			body = hd_exchange__reply_body(o->reply, o->len);
	}
	if ((o->error != NULL || !blank) && body == NULL)
		return hd_sv__oom(err);
	f.body = body;
	rc = hd_store_write(st, finish_txn, &f, err);
	free(body);
	return rc;
}

/* ---- aborting (2) ---------------------------------------------------------
 */

struct abort_txn {
	int64_t turn_id;
	const char *owner;
	int aborted;
};

static int
abort_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct abort_txn *a = payload;
	char *team = NULL, *agent = NULL, *delivered = NULL;
	int rc, found;

	a->aborted = 0;
	if ((rc = hd_autorun_turn_owned(&found, &team, &agent, &delivered, st,
		 a->turn_id, a->owner, err)) < 0 ||
	    !found)
		return rc; /* not found: finished, or someone else's now */
	/* what its command left in its group acts no more (sv_proc.c) */
	if ((rc = hd_sv__turn_kill(st, a->turn_id, err)) < 0)
		goto done;
	if ((rc = hd_autorun_turn_abort(st, a->turn_id, err)) < 0 ||
	    (rc = hd_wake_requeue(st, a->turn_id, err)) < 0)
		goto done;
	if (delivered != NULL &&
	    ((rc = hd_autorun_agent_ensure(st, team, agent, err)) < 0 ||
		(rc = hd_autorun_agent_carry(st, agent, delivered, err)) < 0))
		goto done;
	if ((rc = hd_activity_turn_abort(st, team, agent, err)) < 0)
		goto done;
	hd_events_append(st, "autorun_turn_aborted", team, 0, agent,
	    json_pack(
		"{s:I, s:s}", "turn", (json_int_t)a->turn_id, "agent", agent));
	a->aborted = 1;
done:
	free(team);
	free(agent);
	free(delivered);
	return rc;
}

int
hd_sv__abort(
    int *aborted, hd_store *st, int64_t turn_id, const char *owner, hd_err *err)
{
	struct abort_txn a = {turn_id, owner, 0};
	int rc;

	rc = hd_store_write(st, abort_txn_fn, &a, err);
	*aborted = a.aborted;
	return rc;
}
