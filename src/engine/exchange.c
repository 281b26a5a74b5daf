/*
 * exchange.c -- the exchange loop (SPEC 8): pre-checks, the room lock and
 * its renewal, speaker selection, turns, board-derived obligations, and
 * the end. Owns no table (room/lock.c owns room_locks, team/budget.c
 * budgets, team/session.c sessions; turn state is kv).
 *  (1) Every refusal (pre-checks, a held lock) happens before any turn
 *      runs and leaves nothing behind: no post, no event, no lock.
 *  (2) Once the lock is taken the exchange always ends through one exit
 *      that emits exactly one turn_bound_hit (when it ended for one of
 *      the five reasons) and releases the lock, whatever happened: the
 *      step that decides the end writes turn_bound_hit and releases the
 *      lock in its transaction; after a failure the caller releases it.
 *  (3) The lock is renewed as a turn is announced (in that transaction,
 *      once a third of the lease has passed: a younger lease cannot have
 *      been taken over) and by a ticker every lease/3 while the exchange
 *      runs, so a turn longer than the lease keeps its room. The ticker
 *      runs on the home's ticker thread with that thread's own connection
 *      (ticker.c: a connection is never shared between threads); starting
 *      one costs no thread, so a short exchange, which never renews, pays
 *      nothing for it. A lock lost to a takeover ends the exchange
 *      `aborted` before the next turn. The ticker is stopped as soon as
 *      the last step committed; the stop waits for a renewal in flight,
 *      and after it none runs again, so the renewer's state goes with the
 *      call.
 *  (4) Obligations come from the board alone (exchange.h), never from the
 *      text of a reply. The speaker never obliges itself.
 *  (5) The caller's abort flag (and cancel, which ends the exchange
 *      `cancelled` instead of `aborted`) is read only between turns;
 *      abort_turn is handed to the runtime to stop a running turn.
 *  (6) Between two runtimes the loop makes one step, one BEGIN IMMEDIATE:
 *      the first part (the setup: lock, turn states, stimulus; or the save
 *      of the turn that just ran), then that turn's obligations, then the
 *      end or the next turn's begin (turn.c). So a turn's announcement
 *      commits with its predecessor's record, and N turns commit N+1
 *      times. With on_turn set, the save commits alone first, since
 *      on_turn must see it and its board moves must count (exchange.h).
 *      When begin fails (not a lost lease), the step is redone without
 *      it, so the turn that already ran is never lost to the next one's
 *      failure. A step may run more than once (busy retry): it starts
 *      from the bookkeeping kept at the last commit (book).
 *  (7) The ticker keeps renewing until it is stopped, which is after the
 *      last step committed; a renewal that finds the row gone once that
 *      step released it is the release, not a takeover (released, set in
 *      that step before its commit). A renewal that finds the row taken
 *      reports it once (lost) and renews no more.
 *  (8) Obligations read the board's events incrementally: each step scans
 *      the task_claimed and status_changed events appended since the last
 *      (the first from the lowest mark), keeps the claims that may still
 *      oblige their owner and the seq of the last task completed or
 *      failed. Events are append-only with growing seqs, so this decides
 *      exactly what rescanning from each mark would. The loop itself never
 *      appends either kind (an exchange never writes the board), so when
 *      nothing was written to the store since its last scanning step
 *      committed (the store's data version says so) the events since the
 *      last scan are all its own, and the scan is skipped. A save-only
 *      step (on_turn) scans nothing, so it is never that baseline.
 *  (9) The participants are read as a roster with their runtime configs
 *      as text, in the pre-checks' snapshot; a config is parsed once, the
 *      first time its agent runs, so a turn runs with exactly the config
 *      a full list at the pre-checks would have given it.
 * (10) A member in error (activity.h) is never selected: in error at the
 *      pre-checks, or once a turn of it failed here (known when that
 *      turn's record commits), its obligations are dropped until a turn
 *      of it succeeds or it is reset; first speakers all in error are
 *      refused before any turn. The result counts the failed turns.
 * (11) A crash costs one turn, never a duplicate. Each step saves the
 *      bookkeeping it commits with the room lock (progress.c: who owes,
 *      who spoke, the turns taken and their speakers, the bound, the
 *      stimulus post, the speaker whose turn was just begun), and the
 *      running turn's process group is recorded there too (turn.c (8)).
 *      A setup that takes the lock over from a dead holder (room/lock.c (2),
 *      (4): at once when it ran on this host; its turn's process group
 *      killed first) and finds progress of the same stimulus resumes it:
 *      no new stimulus post, the bookkeeping restored, the turns already
 *      committed counted and not run again, the interrupted speaker
 *      idle again, the last saved turn's obligations read (an
 *      interruption between a save and the next step left them unread),
 *      and an exchange_resumed event. The turn cut short is still owed,
 *      so it is selected and runs once more. Its runtime's command died
 *      with the holder (proc.c (9)); whatever mailbox messages its
 *      prompt had taken stay delivered.
 * Callers: the CLI (`huddle exchange`, `huddle demo`), REST
 * (POST /api/team-chat/exchange), the tests and the benchmark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/buf.h>
#include <huddle/board.h>
#include <huddle/budget.h>
#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/util.h>

#include <huddle/store.h>
#include "exchange_int.h"
#include "ticker.h"

#define HD_LOG_COMPONENT "exchange"
#include <huddle/log.h>

#define EVENTS_PAGE 1000

/* The loop's bookkeeping as of the last commit: a step transaction
 * changes exch's copy in place, and starts from this one whenever it
 * starts (over), since the store may run it more than once (6). */
typedef struct book {
	unsigned char *pending;
	unsigned char *spoke;
	int *turns;
	int64_t *marks;
	int last;
	int64_t expires_at; /* the lease as this process last renewed it */
	int64_t scanned;
	int64_t done_seq;
	size_t nclaims;
} book;

/* A task_claimed event that may still oblige its owner (8). */
typedef struct claim {
	int64_t seq;
	int64_t task;
	int owner; /* the participant's index */
} claim;

/* What the loop and its renewal ticker share (3): the loop's own, since
 * the ticker is stopped before hd_exchange_run returns. */
typedef struct renewer {
	/* a copy made before the ticker starts, never written again: the
	 * steps go on updating x->lock.expires_at while it runs */
	hd_room_lock lk;
	int64_t lease_ms;
	int done;            /* the ticker's own: it found the lock gone */
	atomic_int lost;     /* taken over (3) */
	atomic_int released; /* the last step released the lock (7) */
} renewer;

typedef struct exch {
	hd_store *st;
	const hd_exchange_spec *spec;
	const char *team; /* spec->team: the roster read says if it is none */
	hd_agents agents; /* a roster: configs parsed as each first runs */
	char **configs;   /* the listed configs' texts, NULL once parsed */
	const char **ids; /* participants' ids, the agents' order */
	size_t n;
	int leader;
	unsigned char *pending;
	unsigned char *spoke; /* spoke this exchange (heard the stimulus) */
	unsigned char *errored; /* (10) in error: never selected */
	int *turns;
	int64_t *marks; /* event seq at the end of each one's last turn */
	int last;
	/* the board scan (8) */
	int64_t scanned;  /* events up to here were read (0: none yet) */
	uint32_t version; /* the store's data version after the last step */
	int versioned;    /* version is known */
	int quiet;        /* this step: nothing written since the last (8) */
	int64_t done_seq; /* the last task completed or failed */
	claim *claims;
	size_t nclaims, capclaims;
	book kept;
	hd_turn_state *states; /* each participant's turn state (turn.c (1)) */
	const char **owing;    /* scratch: the pending ids of a selection */
	int max_turns;
	int kept_max_turns; /* the pre-checks' bound (a resume may change it) */
	int64_t lease_ms;
	int64_t stim_seq;
	hd_room_lock lock;
	int locked;
	renewer rn;              /* the ticker's side (3) */
	hd_ticker *ticker;       /* renewing the lease, or NULL (3) */
	/* (11) */
	hd_exchange_result *out; /* the speakers committed so far */
	char stim_hash[65];      /* what names this exchange with its room */
	int resuming;            /* the setup found this exchange interrupted */
	int resumed_taken;       /* the turns it had taken then */
	int64_t resume_head;     /* the seq of its exchange_resumed event */
	json_t *resumed_speakers;
} exch;

const char *
hd_exchange_end_name(hd_exchange_end e)
{
	switch (e) {
	case HD_EXCHANGE_NO_PENDING: return "no_pending_obligation";
	case HD_EXCHANGE_BUDGET_PAUSED: return "budget_paused";
	case HD_EXCHANGE_MAX_TURNS: return "max_turns";
	case HD_EXCHANGE_CANCELLED: return "cancelled";
	case HD_EXCHANGE_ABORTED: break;
	}
	return "aborted";
}

json_t *
hd_exchange_result_to_json(const hd_exchange_result *r)
{
	json_t *speakers = json_array();
	size_t i;

	for (i = 0; i < r->nspeakers; i++)
		json_array_append_new(speakers, json_string(r->speakers[i]));
	return json_pack("{s:i, s:i, s:s, s:o}", "turnsTaken", r->turns_taken,
	    "turnsFailed", r->turns_failed, "endedReason",
	    hd_exchange_end_name(r->ended), "speakers", speakers);
}

void
hd_exchange_result_dispose(hd_exchange_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nspeakers; i++)
		free(r->speakers[i]);
	free(r->speakers);
	r->speakers = NULL;
	r->nspeakers = 0;
}

static int
find_participant(const exch *x, const char *id)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		if (strcmp(x->ids[i], id) == 0)
			return (int)i;
	return -1;
}

static int
cancelled(const exch *x)
{
	return x->spec->cancel != NULL && atomic_load(x->spec->cancel);
}

static int
aborted(const exch *x)
{
	return (x->spec->abort != NULL && atomic_load(x->spec->abort)) ||
	       cancelled(x) || atomic_load(&x->rn.lost);
}

/* ---- the lease (3) ---- */

static int64_t
lease_ms(const hd_exchange_spec *spec)
{
	const char *env = getenv("HUDDLE_EXCHANGE_LEASE_MS");
	int64_t v;

	if (spec->lease_ms > 0)
		return spec->lease_ms;
	if (env != NULL && hd_parse_i64(&v, env, "lease", NULL) == 0 && v > 0)
		return v;
	return HD_EXCHANGE_LEASE_MS;
}

/* One renewal, on the ticker thread with its connection (3). */
static void
renew_tick(void *ctx, hd_store *own)
{
	renewer *rn = ctx;
	hd_err err = HD_ERR_INIT;
	int rc;

	if (rn->done)
		return;
	rc = hd_room_lock_renew(own, &rn->lk, rn->lease_ms, &err);
	if (rc == HD_ECONFLICT) {
		rn->done = 1;
		if (!atomic_load(&rn->released)) { /* (7) */
			hd_log_warn("%s: %s", rn->lk.room_id, err.msg);
			atomic_store(&rn->lost, 1);
		}
	} else if (rc < 0)
		hd_log_warn("%s: cannot renew the room lock: %s",
		    rn->lk.room_id, err.msg);
}

/* Start the renewal ticker once the lock is taken (3). */
static void
renew_start(exch *x)
{
	renewer *rn = &x->rn;

	rn->lk = x->lock;
	rn->lease_ms = x->lease_ms;
	x->ticker = hd_ticker_start(hd_store_home(x->st),
	    x->lease_ms / 3 > 0 ? x->lease_ms / 3 : 1, renew_tick, rn);
	if (x->ticker == NULL)
		hd_log_warn("%s: no renewal; the lease is renewed between "
			    "turns only",
		    x->lock.room_id);
}

/* Stop the ticker: a renewal in flight ends first, and none runs after,
 * whatever it would have found (7). */
static void
renew_stop(exch *x)
{
	hd_ticker_stop(x->ticker);
	x->ticker = NULL;
}

/* ---- pre-checks (1) ---- */

/* The participants' arrays (none yet, or freed: a retried read starts
 * over). */
static void
participants_free(exch *x)
{
	size_t i;

	for (i = 0; x->states != NULL && i < x->n; i++)
		hd_turn_state_dispose(&x->states[i]);
	free(x->states);
	free(x->owing);
	free(x->ids);
	free(x->pending);
	free(x->spoke);
	free(x->errored);
	x->errored = NULL;
	free(x->turns);
	free(x->marks);
	free(x->kept.pending);
	free(x->kept.spoke);
	free(x->kept.turns);
	free(x->kept.marks);
	x->states = NULL;
	x->owing = x->ids = NULL;
	x->pending = x->spoke = x->kept.pending = x->kept.spoke = NULL;
	x->turns = x->kept.turns = NULL;
	x->marks = x->kept.marks = NULL;
	x->n = 0;
}

/* (10) Who is in error owes nothing: its obligations wait. */
static void
skip_errored(exch *x)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		if (x->errored[i])
			x->pending[i] = 0;
}

/* (10) An exchange whose first speakers are all in error would end before
 * its first turn: refused instead, saying who and how to reset them. */
static int
first_speakers_able(exch *x, hd_err *err)
{
	hd_buf who = HD_BUF_INIT(0);
	size_t i, owing = 0;
	int rc;

	for (i = 0; i < x->n; i++)
		if (x->pending[i] && !x->errored[i])
			return 0;
	for (i = 0; i < x->n; i++) {
		const hd_agent *a = &x->agents.items[i];

		if (!x->pending[i])
			continue;
		hd_buf_printf(&who, "%s%s (%s)", owing++ ? ", " : "", a->id,
		    a->status_reason != NULL ? a->status_reason
					     : "its last turn failed");
	}
	rc = hd_err_set(err, HD_EREFUSED,
	    "every first speaker is in error: %s; reset one with `huddle "
	    "agent set-status AGENT idle`",
	    hd_buf_failed(&who) ? "?" : hd_buf_cstr(&who));
	hd_buf_dispose(&who);
	return rc;
}

/* The participants, the leader and who owes the first turn. */
static int
participants(exch *x, hd_err *err)
{
	const hd_exchange_spec *spec = x->spec;
	size_t i;
	int j;

	if (x->agents.n == 0)
		return hd_err_set(
		    err, HD_EREFUSED, "team %s has no agents", x->team);
	x->n = x->agents.n;
	x->ids = calloc(x->n, sizeof(*x->ids));
	x->pending = calloc(x->n, 1);
	x->spoke = calloc(x->n, 1);
	x->errored = calloc(x->n, 1);
	x->turns = calloc(x->n, sizeof(*x->turns));
	x->marks = calloc(x->n, sizeof(*x->marks));
	x->states = calloc(x->n, sizeof(*x->states));
	x->owing = calloc(x->n, sizeof(*x->owing));
	x->kept.pending = calloc(x->n, 1);
	x->kept.spoke = calloc(x->n, 1);
	x->kept.turns = calloc(x->n, sizeof(*x->kept.turns));
	x->kept.marks = calloc(x->n, sizeof(*x->kept.marks));
	if (x->ids == NULL || x->pending == NULL || x->spoke == NULL ||
	    x->errored == NULL ||
	    x->turns == NULL || x->marks == NULL || x->states == NULL ||
	    x->owing == NULL || x->kept.pending == NULL ||
	    x->kept.spoke == NULL || x->kept.turns == NULL ||
	    x->kept.marks == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	for (i = 0; i < x->n; i++) {
		x->ids[i] = x->agents.items[i].id;
		x->errored[i] =
		    strcmp(x->agents.items[i].status, "error") == 0;
	}
	x->leader = hd_exchange_normalise_leader(&x->agents, x->team);
	if (spec->nfirst == 0) {
		if (x->leader < 0)
			return hd_err_set(err, HD_EREFUSED,
			    "team %s has no leader to speak first", x->team);
		x->pending[x->leader] = 1;
	}
	for (i = 0; i < spec->nfirst; i++) {
		if ((j = find_participant(x, spec->first_speakers[i])) < 0)
			return hd_err_set(err, HD_EREFUSED,
			    "unknown first speaker: %.64s",
			    spec->first_speakers[i]);
		x->pending[j] = 1;
	}
	return first_speakers_able(x, err);
}

typedef struct precheck_txn {
	exch *x;
	const char *which; /* a tripped cap budget: "team" or "agent" */
} precheck_txn;

/* The pre-checks' reads, in one read transaction: the team, its agents,
 * and whether the team's or a first speaker's cap budget is tripped. */
static int
precheck_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	precheck_txn *tx = payload;
	exch *x = tx->x;
	size_t i;
	int rc;

	/* a retried transaction starts over */
	hd_agent_config_texts_free(x->configs, x->agents.n);
	x->configs = NULL;
	hd_agents_dispose(&x->agents);
	participants_free(x);
	x->leader = -1;
	tx->which = NULL;
	if ((rc = hd_agent_roster_configs(
		 &x->agents, &x->configs, st, x->spec->team, err)) < 0 ||
	    (rc = participants(x, err)) < 0)
		return rc;
	if ((rc = hd_budget_paused(&tx->which, st, x->team, NULL, err)) < 0)
		return rc;
	for (i = 0; tx->which == NULL && i < x->n; i++) {
		if (!x->pending[i])
			continue;
		if ((rc = hd_budget_paused(
			 &tx->which, st, NULL, x->ids[i], err)) < 0)
			return rc;
	}
	return 0;
}

static int
precheck(exch *x, hd_err *err)
{
	const hd_exchange_spec *spec = x->spec;
	precheck_txn tx;
	size_t len;
	int rc;

	if (spec->stimulus != NULL) {
		len = strlen(spec->stimulus);
		if (len > HD_ROOM_BODY_MAX)
			return hd_err_set(err, HD_ETOOBIG,
			    "stimulus is %zu bytes; the limit is %d", len,
			    HD_ROOM_BODY_MAX);
		if (!hd_utf8_ok(spec->stimulus, len))
			return hd_err_set(
			    err, HD_EINVAL, "stimulus must be valid UTF-8");
	}
	if (spec->team == NULL)
		return hd_err_set(err, HD_EINVAL, "a team is required");
	tx.x = x;
	tx.which = NULL;
	x->team = spec->team;
	if ((rc = hd_store_read(x->st, precheck_txn_fn, &tx, err)) < 0)
		return rc;
	if (tx.which != NULL)
		return hd_err_set(
		    err, HD_EREFUSED, "budget_paused:%s", tx.which);
	x->max_turns = hd_exchange_max_turns(spec->max_turns, x->n);
	return 0;
}

/* ---- obligations (4) ---- */

/* 1 when agent owns a claimed or in_progress task of the team. */
static int
owns_open_task(int *out, exch *x, const char *agent, hd_err *err)
{
	static const char *const open[] = {"claimed", "in_progress"};
	hd_task_filter f;
	hd_tasks l;
	size_t k;
	int rc;

	*out = 0;
	for (k = 0; k < 2 && !*out; k++) {
		memset(&f, 0, sizeof(f));
		f.status = open[k];
		f.owner = agent;
		f.limit = 1;
		if ((rc = hd_board_list(&l, x->st, x->team, &f, err)) < 0)
			return rc;
		*out = l.n > 0;
		hd_tasks_dispose(&l);
	}
	return 0;
}

/*
 * The board's events since the lowest mark, read once (8): each step
 * scans only what was appended since the last, keeping the claims that
 * can still oblige (a claim of a participant after its mark) and the seq
 * of the last task completed or failed.
 */
static int
claim_add(exch *x, int64_t seq, int64_t task, int owner, hd_err *err)
{
	claim *nc;
	size_t cap;

	if (x->nclaims == x->capclaims) {
		cap = x->capclaims ? x->capclaims * 2 : 16;
		if ((nc = realloc(x->claims, cap * sizeof(*nc))) == NULL)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		x->claims = nc;
		x->capclaims = cap;
	}
	x->claims[x->nclaims].seq = seq;
	x->claims[x->nclaims].task = task;
	x->claims[x->nclaims].owner = owner;
	x->nclaims++;
	return 0;
}

static int
scan_events(exch *x, int64_t head, hd_err *err)
{
	static const char *const kinds[] = {"task_claimed", "status_changed"};
	hd_event_list l;
	const hd_event *e;
	const char *v;
	int64_t after = x->scanned;
	size_t k, n;
	int j, rc = 0;

	do { /* both kinds in one pass, in seq order (8) */
		if ((rc = hd_events_list_kinds(&l, x->st, x->team, kinds, 2,
			 after, EVENTS_PAGE, err)) < 0)
			return rc;
		for (k = 0; k < l.n && rc == 0; k++) {
			e = &l.items[k];
			if (e->seq > head)
				break;
			if (e->kind[0] == 't') { /* task_claimed */
				v = json_string_value(
				    json_object_get(e->data, "owner"));
				if (v != NULL &&
				    (j = find_participant(x, v)) >= 0 &&
				    e->seq > x->marks[j])
					rc = claim_add(
					    x, e->seq, e->task_id, j, err);
				continue;
			}
			v = json_string_value(json_object_get(e->data, "to"));
			if (v != NULL && (strcmp(v, "completed") == 0 ||
					     strcmp(v, "failed") == 0))
				x->done_seq = e->seq;
		}
		if (l.n > 0)
			after = l.items[l.n - 1].seq;
		n = l.n;
		hd_event_list_dispose(&l);
	} while (rc == 0 && n == EVENTS_PAGE && after < head);
	return rc;
}

/* Bring the scan up to head, the event head of this snapshot. */
static int
board_scan(exch *x, int64_t head, hd_err *err)
{
	size_t i;
	int rc;

	if (x->scanned == 0) { /* the first scan starts at the lowest mark */
		x->scanned = head;
		for (i = 0; i < x->n; i++)
			if (x->marks[i] > 0 && x->marks[i] < x->scanned)
				x->scanned = x->marks[i];
	} else if (x->quiet) { /* only the loop's own events since (8) */
		x->scanned = head;
		return 0;
	}
	if (head <= x->scanned)
		return 0;
	if ((rc = scan_events(x, head, err)) < 0)
		return rc;
	x->scanned = head;
	return 0;
}

/* Members: an open task assigned since they last spoke. */
static int
member_obligations(exch *x, int speaker, hd_err *err)
{
	hd_task *t = NULL;
	const claim *c;
	size_t i;
	int j, yes, rc;

	for (i = 0; i < x->n; i++) {
		if ((int)i == speaker || x->pending[i] || x->marks[i] > 0)
			continue;
		/* never spoke: every open task it owns was assigned since */
		if ((rc = owns_open_task(&yes, x, x->ids[i], err)) < 0)
			return rc;
		x->pending[i] = (unsigned char)yes;
	}
	for (i = 0; i < x->nclaims; i++) {
		c = &x->claims[i];
		j = c->owner;
		if (j == speaker || x->pending[j] || x->marks[j] == 0 ||
		    c->seq <= x->marks[j])
			continue;
		if ((rc = hd_board_get(&t, x->st, c->task, err)) < 0 &&
		    rc != HD_ENOTFOUND)
			return rc;
		if (t != NULL && t->owner != NULL &&
		    strcmp(t->owner, x->ids[j]) == 0 &&
		    (strcmp(t->status, "claimed") == 0 ||
			strcmp(t->status, "in_progress") == 0))
			x->pending[j] = 1;
		hd_task_free(t);
		t = NULL;
	}
	hd_err_clear(err);
	return 0;
}

/* The leader: a task completed or failed since it last spoke. */
static int
leader_obligation(exch *x, int speaker, hd_err *err)
{
	hd_task_counts c;
	int rc;

	if (x->leader < 0 || x->leader == speaker || x->pending[x->leader])
		return 0;
	if (x->marks[x->leader] == 0) {
		if ((rc = hd_board_counts(&c, x->st, x->team, err)) < 0)
			return rc;
		x->pending[x->leader] = c.completed + c.failed > 0;
		return 0;
	}
	x->pending[x->leader] = x->done_seq > x->marks[x->leader];
	return 0;
}

/* All of a turn's obligations, in the snapshot its save committed in. */
static int
obligations(exch *x, int speaker, int64_t head, hd_err *err)
{
	int rc;

	if ((rc = board_scan(x, head, err)) < 0 ||
	    (rc = member_obligations(x, speaker, err)) < 0)
		return rc;
	return leader_obligation(x, speaker, err);
}

/* ---- one step of the loop (6) ---- */

static void
book_restore(exch *x)
{
	memcpy(x->pending, x->kept.pending, x->n);
	memcpy(x->spoke, x->kept.spoke, x->n);
	memcpy(x->turns, x->kept.turns, x->n * sizeof(*x->turns));
	memcpy(x->marks, x->kept.marks, x->n * sizeof(*x->marks));
	x->last = x->kept.last;
	x->lock.expires_at = x->kept.expires_at;
	x->scanned = x->kept.scanned;
	x->done_seq = x->kept.done_seq;
	x->nclaims = x->kept.nclaims;
}

static void
book_keep(exch *x)
{
	size_t i, k = 0;

	memcpy(x->kept.pending, x->pending, x->n);
	memcpy(x->kept.spoke, x->spoke, x->n);
	memcpy(x->kept.turns, x->turns, x->n * sizeof(*x->turns));
	memcpy(x->kept.marks, x->marks, x->n * sizeof(*x->marks));
	x->kept.last = x->last;
	x->kept.expires_at = x->lock.expires_at;
	x->kept.scanned = x->scanned;
	x->kept.done_seq = x->done_seq;
	/* a claim its owner has spoken since can never oblige again */
	for (i = 0; i < x->nclaims; i++)
		if (x->claims[i].seq > x->marks[x->claims[i].owner])
			x->claims[k++] = x->claims[i];
	x->nclaims = x->kept.nclaims = k;
}

static void
step_init(hd_exchange_step *s, const exch *x, int speaker,
    hd_speaker_policy policy, int turn)
{
	const hd_runtime_adapter *rt = NULL;
	const hd_agent *a = &x->agents.items[speaker];

	memset(s, 0, sizeof(*s));
	s->room_id = x->lock.room_id;
	s->turn = turn;
	s->max_turns = x->max_turns;
	s->speaker = a->id;
	s->policy = policy;
	s->runtime = a->runtime;
	s->scripted =
	    hd_runtime_find(&rt, a->runtime, NULL) == 0 && rt->is_scripted;
	s->resumed = x->resuming ? x->resumed_taken : -1;
}

static int
add_speaker(hd_exchange_result *out, const char *id, hd_err *err)
{
	char **ns = realloc(out->speakers, (out->nspeakers + 1) * sizeof(*ns));

	if (ns == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	out->speakers = ns;
	if ((ns[out->nspeakers] = strdup(id)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	out->nspeakers++;
	return 0;
}

/* One write transaction between two runtimes: the first part (the
 * setup, or the save of the turn that just ran, and its obligations),
 * then either the end or the next turn's begin. */
typedef struct step_txn {
	exch *x;
	int setup;               /* take the lock, load states, post stimulus */
	hd_exchange__turn *done; /* the turn to save, or NULL */
	int done_idx;
	int taken;     /* turns committed before this step */
	int save_only; /* stop after the save: on_turn runs next */
	int saved;     /* done was saved (and adopted) by the step before */
	int no_begin;  /* commit the first part alone (begin failed) */
	hd_exchange__turn *next; /* where the next turn is begun */
	/* out */
	hd_speaker_pick pick;
	int began;
	int ended;
	hd_exchange_end end;
	int lost;     /* begin found the lease taken over */
	int released; /* the end released the lock */
	int begin_rc; /* begin failed with this (the transaction too) */
} step_txn;

/* (11) The progress the holder taken over left, if it is this exchange's
 * (same stimulus): the bookkeeping as of its last commit, and its turn
 * cut short put back (its speaker is not working any more). */
static int
resume_from(hd_store *st, exch *x, const char *text)
{
	hd_exchange__progress p;
	hd_err rerr = HD_ERR_INIT;
	json_t *speakers = NULL;
	char data[HD_ROOM_ID_MAX + 96];

	memset(&p, 0, sizeof(p));
	p.pending = x->pending;
	p.spoke = x->spoke;
	p.turns = x->turns;
	if (!hd_exchange__progress_load(&p, &speakers, text, x->ids, x->n) ||
	    strcmp(p.stimulus, x->stim_hash) != 0) {
		/* not progress, or another exchange's: ours starts over
		 * from the pre-checks' bookkeeping */
		json_decref(speakers);
		memcpy(x->pending, x->kept.pending, x->n);
		memcpy(x->spoke, x->kept.spoke, x->n);
		memcpy(x->turns, x->kept.turns, x->n * sizeof(*x->turns));
		return 0;
	}
	x->resuming = 1;
	x->resumed_taken = p.taken;
	x->max_turns = p.max_turns;
	x->last = p.last;
	x->stim_seq = p.stim_seq;
	json_decref(x->resumed_speakers);
	x->resumed_speakers = speakers;
	if (p.running != NULL &&
	    hd_activity_turn_abort(st, x->team, p.running, &rerr) < 0)
		hd_log_warn("%s stays working: %s", p.running, rerr.msg);
	snprintf(data, sizeof(data),
	    "{\"room_id\":\"%s\",\"turns_taken\":%d}", x->lock.room_id,
	    p.taken);
	x->resume_head = hd_events_append_raw(
	    st, "exchange_resumed", x->team, 0, NULL, data);
	return 0;
}

static int
setup_part(exch *x, hd_err *err)
{
	const hd_exchange_spec *spec = x->spec;
	hd_post *p = NULL;
	char *progress = NULL;
	size_t i;
	int rc;

	/* refused (a live lease): the transaction rolls back whole (1) */
	if ((rc = hd_room_lock_take(&x->lock, &progress, x->st, x->team,
		 x->lease_ms, err)) < 0)
		return rc;
	for (i = 0; i < x->n; i++) {
		hd_turn_state_dispose(&x->states[i]);
		if ((rc = hd_turn_state_get(
			 &x->states[i], x->st, x->team, x->ids[i], err)) < 0) {
			free(progress);
			return rc;
		}
		x->marks[i] = x->states[i].last_event_seq;
	}
	x->stim_seq = 0;
	x->resuming = x->resumed_taken = 0;
	x->max_turns = x->kept_max_turns;
	x->resume_head = 0;
	rc = progress != NULL ? resume_from(x->st, x, progress) : 0;
	free(progress);
	if (x->resuming)
		return rc;
	if (spec->stimulus != NULL && spec->stimulus[0] != '\0') {
		if ((rc = hd_room_post(&p, x->st, x->team, "user", NULL,
			 spec->stimulus, err)) < 0)
			return rc;
		x->stim_seq = p->seq;
		hd_post_free(p);
	}
	return 0;
}

/* The exchange ends in this transaction: turn_bound_hit, and the lock
 * released with it (2). */
static int
step_end(hd_store *st, step_txn *tx, hd_exchange_end end, int taken)
{
	exch *x = tx->x;
	hd_err rerr = HD_ERR_INIT;
	char data[HD_ROOM_ID_MAX + 160];

	tx->ended = 1;
	tx->end = end;
	snprintf(data, sizeof(data),
	    "{\"room_id\":\"%s\",\"reason\":\"%s\",\"max_turns\":%d,"
	    "\"turns_taken\":%d}",
	    x->lock.room_id, hd_exchange_end_name(end), x->max_turns, taken);
	hd_events_append_raw(st, "turn_bound_hit", x->team, 0, NULL, data);
	/* set before the commit: a renewal waiting on it then finds the row
	 * gone and must not call that a takeover (7) */
	atomic_store(&x->rn.released, 1);
	if (hd_room_lock_release(st, &x->lock, &rerr) == 0)
		tx->released = 1;
	return 0;
}

/* (11) The bookkeeping this step commits, with the lock: what a resume
 * starts from. running is the speaker of the turn just begun (or NULL);
 * done, the turn this step saved. */
static int
progress_save(hd_store *st, exch *x, int taken, const char *running,
    const hd_exchange__turn *done, hd_err *err)
{
	hd_exchange__progress p;
	char *text;
	int rc;

	memset(&p, 0, sizeof(p));
	memcpy(p.stimulus, x->stim_hash, sizeof(p.stimulus));
	p.stim_seq = x->stim_seq;
	p.max_turns = x->max_turns;
	p.taken = taken;
	p.last = x->last;
	p.running = running;
	p.pending = x->pending;
	p.spoke = x->spoke;
	p.turns = x->turns;
	if ((text = hd_exchange__progress_dump(&p, x->ids, x->n,
		 x->out->speakers, x->out->nspeakers,
		 done != NULL ? done->agent->id : NULL)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	rc = hd_room_lock_progress(st, &x->lock, text, err);
	free(text);
	return rc;
}

static void
turn_init(hd_exchange__turn *t, exch *x, const step_txn *tx, int turn_no)
{
	int s = tx->pick.speaker;
	size_t i, k = 0;

	for (i = 0; i < x->n; i++)
		if (x->pending[i])
			x->owing[k++] = x->ids[i];
	hd_exchange__turn_dispose(t);
	memset(t, 0, sizeof(*t));
	t->st = x->st;
	t->spec = x->spec;
	t->team = x->team;
	t->room_id = x->lock.room_id;
	t->agent = &x->agents.items[s];
	t->state = &x->states[s];
	t->is_leader = s == x->leader;
	t->first = !x->spoke[s];
	t->skip_seq = x->stim_seq;
	t->turn_no = turn_no;
	t->policy = tx->pick.policy;
	t->pending = x->owing;
	t->npending = k;
	t->lock = &x->lock;
	t->lease_ms = x->lease_ms;
	/* the save just read the team's cap (paused_after) in this snapshot */
	t->team_read = tx->done != NULL && !tx->saved;
}

static int
step_fn(hd_store *st, void *payload, hd_err *err)
{
	step_txn *tx = payload;
	exch *x = tx->x;
	hd_exchange__turn *done = tx->done;
	int taken = tx->taken, s = tx->done_idx, rc;
	uint32_t version;
	size_t i;

	book_restore(x);
	x->quiet = x->versioned && hd_store_data_version(st, &version) == 0 &&
		   version == x->version;
	tx->began = tx->ended = tx->lost = tx->released = 0;
	tx->begin_rc = 0;
	tx->pick.speaker = -1;
	if (tx->setup) {
		if ((rc = setup_part(x, err)) < 0)
			return rc;
		taken += x->resumed_taken;
		/* (11) the obligations of the last turn saved, which an
		 * interruption between its save and the next step left
		 * unread; read up to the exchange_resumed event */
		if (x->resuming && x->last >= 0 && x->resume_head > 0) {
			if ((rc = obligations(
				 x, x->last, x->resume_head, err)) < 0)
				return rc;
			skip_errored(x);
		}
	}
	if (done != NULL && !tx->saved) {
		if ((rc = hd_exchange__turn_save(done, err)) < 0)
			return rc;
		taken++;
		x->turns[s]++;
		x->spoke[s] = 1;
		x->last = s;
		x->marks[s] = done->event_mark;
		x->pending[s] = 0;
		if (tx->save_only) /* on_turn comes between (spec) */
			return progress_save(st, x, taken, NULL, done, err);
	}
	if (done != NULL) {
		/* the obligations, read with the saved turn (and whatever
		 * on_turn moved) in this snapshot */
		if ((rc = obligations(x, s, done->event_mark, err)) < 0)
			return rc;
		skip_errored(x);
		if (cancelled(x)) /* whatever else the turn would end */
			return step_end(st, tx, HD_EXCHANGE_CANCELLED, taken);
		if (done->paused_after != NULL)
			return step_end(
			    st, tx, HD_EXCHANGE_BUDGET_PAUSED, taken);
		for (i = 0; i < x->n && !x->pending[i]; i++)
			;
		if (i == x->n)
			return step_end(st, tx, HD_EXCHANGE_NO_PENDING, taken);
		if (taken >= x->max_turns)
			return step_end(st, tx, HD_EXCHANGE_MAX_TURNS, taken);
	}
	if (aborted(x))
		return step_end(st, tx,
		    cancelled(x) ? HD_EXCHANGE_CANCELLED : HD_EXCHANGE_ABORTED,
		    taken);
	skip_errored(x);
	tx->pick = hd_exchange_select(
	    x->ids, x->n, x->leader, x->pending, x->turns, x->last);
	if (tx->pick.speaker < 0)
		return step_end(st, tx, HD_EXCHANGE_NO_PENDING, taken);
	if (tx->no_begin)
		return 0;
	turn_init(tx->next, x, tx, taken + 1);
	rc = hd_exchange__turn_begin(tx->next, err);
	if (rc == HD_ECONFLICT) { /* taken over (3); nothing was written */
		hd_log_warn("%s: %s", x->lock.room_id, err->msg);
		hd_err_clear(err);
		tx->lost = 1;
		return step_end(st, tx, HD_EXCHANGE_ABORTED, taken);
	}
	if (rc < 0)
		return tx->begin_rc = rc;
	if (tx->next->paused) /* the speaker's cap (or the team's) is spent */
		return step_end(st, tx, HD_EXCHANGE_BUDGET_PAUSED, taken);
	tx->began = 1;
	return progress_save(st, x, taken, tx->next->agent->id,
	    done != NULL && !tx->saved ? done : NULL, err);
}

/* The store's data version once a step committed (rc >= 0), for the
 * next step to tell whether anything else was written since (8). A step
 * that only saved (on_turn runs next) scanned nothing: it cannot be the
 * baseline, or what others wrote during the turn before it would be
 * skipped; the next step scans. */
static void
step_versioned(const step_txn *tx, int rc)
{
	exch *x = tx->x;

	x->versioned = rc >= 0 && !(tx->save_only && tx->done != NULL) &&
		       hd_store_data_version(x->st, &x->version) == 0;
}

/* Run one step; when begin failed, commit the first part alone (the
 * setup, or the turn that already ran) and report begin's error. */
static int
step_run(step_txn *tx, int *begin_failed, hd_err *err)
{
	hd_err berr;
	int rc;

	*begin_failed = 0;
	tx->no_begin = 0;
	if ((rc = hd_store_write(tx->x->st, step_fn, tx, err)) >= 0 ||
	    tx->begin_rc == 0) {
		step_versioned(tx, rc);
		return rc;
	}
	berr = *err;
	tx->no_begin = 1;
	rc = hd_store_write(tx->x->st, step_fn, tx, err);
	step_versioned(tx, rc);
	if (rc < 0)
		return rc;
	if (!tx->ended) {
		*begin_failed = berr.code;
		*err = berr;
	}
	return 0;
}

/* (11) The resumed exchange's turns are this one's. */
static int
resumed(exch *x, hd_exchange_result *out, hd_err *err)
{
	json_t *v;
	size_t i;
	int rc;

	out->turns_taken = out->resumed = x->resumed_taken;
	out->max_turns = x->max_turns;
	json_array_foreach (x->resumed_speakers, i, v)
		if (json_is_string(v) &&
		    (rc = add_speaker(out, json_string_value(v), err)) < 0)
			return rc;
	hd_log_info("%s: resumed the exchange interrupted after %d turn(s)",
	    x->lock.room_id, x->resumed_taken);
	return 0;
}

/* The committed step, in memory: the bookkeeping, the saved turn's state
 * and its on_turn. */
static int
step_adopt(exch *x, step_txn *tx, hd_exchange_result *out,
    hd_exchange_step *done_step, hd_err *err)
{
	const hd_exchange_spec *spec = x->spec;
	hd_exchange__turn *t = tx->done;
	int rc;

	book_keep(x);
	if (tx->setup)
		x->locked = 1;
	if (tx->setup && x->resuming && (rc = resumed(x, out, err)) < 0)
		return rc;
	if (tx->lost)
		atomic_store(&x->rn.lost, 1);
	if (tx->released)
		x->locked = 0;
	if (t == NULL || tx->saved)
		return 0;
	out->turns_taken++;
	/* (10) a failed turn puts its speaker in error (committed now) */
	x->errored[t->agent - x->agents.items] =
	    (unsigned char)(t->failed && !t->aborted);
	out->turns_failed += t->failed && !t->aborted;
	if ((rc = add_speaker(out, t->agent->id, err)) < 0)
		return rc;
	if (t->crossed & HD_BUDGET_CROSSED_WARN)
		hd_log_warn(
		    "%s: a warn budget of %s or team %s is over its limit",
		    x->lock.room_id, t->agent->id, t->team);
	done_step->reply = t->body;
	done_step->seq = t->seq;
	done_step->failed = t->failed;
	done_step->cost = t->cost;
	done_step->duration_ms = t->duration_ms;
	if (spec->on_turn != NULL)
		spec->on_turn(done_step, spec->payload);
	if (hd_exchange__turn_adopt(&x->states[tx->done_idx], t) < 0)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

/* The speaker's runtime_config, parsed the first time it runs, from the
 * text the pre-checks listed (9): most members of a large team never
 * speak in a short exchange. */
static int
speaker_config(exch *x, int idx, hd_err *err)
{
	int rc;

	if (x->configs[idx] == NULL)
		return 0;
	if ((rc = hd_agent_config_parse(
		 x->st, &x->agents.items[idx], x->configs[idx], err)) < 0)
		return rc;
	free(x->configs[idx]);
	x->configs[idx] = NULL;
	return 0;
}

/* Never leave an agent shown as working after its turn failed. */
static void
turn_unwork(exch *x, const hd_exchange__turn *t)
{
	hd_err rerr = HD_ERR_INIT;

	if (t != NULL && t->agent != NULL &&
	    hd_activity_turn_abort(x->st, t->team, t->agent->id, &rerr) < 0)
		hd_log_warn("%s stays working: %s", t->agent->id, rerr.msg);
}

/* Everything from the lock to the end. The lock is taken by the first
 * step and released by the last (2); a failure leaves x->locked for the
 * caller to release. */
static int
run_steps(exch *x, hd_exchange_result *out, hd_err *err)
{
	const hd_exchange_spec *spec = x->spec;
	hd_exchange__turn turns[2];
	hd_exchange_step steps[2];
	step_txn tx;
	int cur = 0, rc, failed, idx;

	memset(turns, 0, sizeof(turns));
	memset(&tx, 0, sizeof(tx));
	tx.x = x;
	tx.setup = 1;
	tx.next = &turns[cur];
	for (;;) {
		if (tx.done != NULL && spec->on_turn != NULL) {
			/* on_turn sees the turn saved and may move the board
			 * before its obligations are read: the save commits
			 * alone */
			tx.taken = out->turns_taken;
			tx.save_only = 1;
			if ((rc = step_run(&tx, &failed, err)) < 0) {
				turn_unwork(x, tx.done);
				break;
			}
			if ((rc = step_adopt(
				 x, &tx, out, &steps[1 - cur], err)) < 0)
				break;
			tx.save_only = 0;
			tx.saved = 1;
		}
		tx.taken = out->turns_taken;
		rc = step_run(&tx, &failed, err);
		if (rc < 0) {
			if (!tx.saved)
				turn_unwork(x, tx.done);
			break;
		}
		if (tx.setup) {
			x->locked = 1;
			renew_start(x);
		}
		if ((rc = step_adopt(x, &tx, out, &steps[1 - cur], err)) < 0)
			break;
		if (failed < 0) {
			rc = failed;
			break;
		}
		if (tx.ended) {
			out->ended = tx.end;
			hd_log_debug("%s: exchange ended %s after %d turn(s)",
			    x->lock.room_id, hd_exchange_end_name(tx.end),
			    out->turns_taken);
			break;
		}
		/* the next turn, begun and committed: run it */
		idx = tx.pick.speaker;
		step_init(
		    &steps[cur], x, idx, tx.pick.policy, out->turns_taken + 1);
		if (spec->on_selected != NULL)
			spec->on_selected(&steps[cur], spec->payload);
		if ((rc = speaker_config(x, idx, err)) < 0 ||
		    (rc = hd_exchange__turn_execute(&turns[cur], err)) < 0) {
			turn_unwork(x, &turns[cur]);
			break;
		}
		tx.setup = 0;
		tx.saved = 0;
		tx.done = &turns[cur];
		tx.done_idx = idx;
		cur = 1 - cur;
		tx.next = &turns[cur];
	}
	renew_stop(x);
	hd_exchange__turn_dispose(&turns[0]);
	hd_exchange__turn_dispose(&turns[1]);
	if (rc < 0 && x->locked)
		hd_events_append(x->st, "error", x->team, 0, NULL,
		    json_pack("{s:s, s:s}", "room_id", x->lock.room_id,
			"message", err->msg));
	return rc;
}

int
hd_exchange_run(hd_exchange_result *out, hd_store *st,
    const hd_exchange_spec *spec, hd_err *err)
{
	exch x;
	hd_err rerr = HD_ERR_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	x.st = st;
	x.spec = spec;
	x.last = -1;
	x.leader = -1;
	x.out = out;
	hd_exchange__stimulus_hash(x.stim_hash, spec->stimulus);
	atomic_init(&x.rn.lost, 0);
	atomic_init(&x.rn.released, 0);
	if ((rc = precheck(&x, err)) < 0)
		goto done;
	x.kept_max_turns = x.max_turns;
	book_keep(&x);
	hd_room_id(out->room_id, sizeof(out->room_id), x.team);
	out->max_turns = x.max_turns;
	x.lease_ms = lease_ms(spec);
	rc = run_steps(&x, out, err);
	if (x.locked && hd_room_lock_release(st, &x.lock, &rerr) < 0)
		hd_log_warn("%s: cannot release the room lock (it expires in "
			    "%lld ms): %s",
		    x.lock.room_id, (long long)x.lease_ms, rerr.msg);
done:
	participants_free(&x);
	free(x.claims);
	json_decref(x.resumed_speakers);
	hd_agent_config_texts_free(x.configs, x.agents.n);
	hd_agents_dispose(&x.agents);
	renew_stop(&x); /* stopped after the last step already; no-op then */
	return rc;
}
