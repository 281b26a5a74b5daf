/*
 * supervisor.c -- the supervisor's threads (supervisor.h): one dispatcher
 * and a worker per agent with a turn to run, each with its own store
 * connection. The durable state is the autorun module's (wake.h,
 * autorun_turn.h), moved by wake.c and sv_turn.c; this file writes no
 * SQL.
 *  (1) The dispatcher sleeps on the store's change notification
 *      (hd_store_wait_change), in slices so a stop is seen at once; when
 *      anything was committed it scans the autorun teams for new wakes
 *      (after a pass that found no wakes, at most one pass per
 *      DISPATCH_MIN_MS however busy the store, through
 *      hd_store_wait_change_paced: a commit that soon after it waits out
 *      the rest, and that pass reads every commit made meanwhile, so a
 *      burst of room posts that wake nobody costs a pass per
 *      DISPATCH_MIN_MS, not one per commit; a wake is seen at most
 *      DISPATCH_MIN_MS later for it, small beside a turn),
 *      then looks at every agent with wakes queued: one that could run
 *      gets its worker kicked, one held by a dead engine's turn gets that
 *      turn aborted (its wakes come back), one over its hourly cap sets
 *      the next time to look. Nothing else wakes it, so an idle store
 *      costs nothing but the notification's own safety net.
 *  (2) At most one worker per agent in this process, and the take
 *      (sv_turn.c) refuses a second running turn in any process: an agent
 *      never runs two turns at once; different agents run in parallel.
 *  (3) No lost kick: a worker clears its dirty flag before it takes and
 *      lingers (idle_ms) for a kick only while the flag is clear; the
 *      dispatcher sets it under the lock. The worker threads are
 *      workers.c's, shared with the conversation engine.
 *  (4) A turn is recorded or aborted: a record that fails for a transient
 *      reason is retried; stopping aborts the running turns (their
 *      runtimes are stopped through the abort flag) and puts their wakes
 *      back for the next engine.
 *  (5) A turn's command dies with this process (runtime/proc.c (9)); once
 *      it started, its process group is recorded with the turn
 *      (sv_proc.c), and the engine that aborts the turn after this one
 *      died kills what is left of the group before the wakes run again.
 *  (6) Routines: the supervisor also runs the routine ticker (ticker.c,
 *      every ROUTINE_TICK_MS on the home's ticker thread and connection),
 *      which fires the routines due at hd_routine_now_ms() (routine.h:
 *      each fire claimed in its own transaction, so several servers on
 *      one home make one task per due fire). A store change does not make
 *      a routine due, time does: this is the one timed wake here.
 *  (7) Verification: a thread of its own (verifier_main) runs the
 *      verifier engine (verifier.h) whenever a run is due: on a store
 *      change (a completion queued one; at most once per VERIFY_MIN_MS
 *      however busy the store, hd_store_wait_change_paced), and every
 *      VERIFY_POLL_MS for a run whose verifier died. One run at a time:
 *      a gate or a critic's turn may take minutes, so neither runs on
 *      the dispatcher or the ticker; stopping aborts the run in flight
 *      (the next server resumes it, verify.c (4)). When it starts it
 *      removes the throwaway critics that verifiers which died left
 *      (verifier.c (6)).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <huddle/agent.h>
#include <huddle/attach.h>
#include <huddle/autorun.h>
#include <huddle/live.h>
#include <huddle/routine.h>
#include <huddle/runtime.h>
#include <huddle/util.h>
#include <huddle/verifier.h>
#include <huddle/verify.h>

#include "supervisor_int.h"
#include "ticker.h"
#include "workers.h"

#define HD_LOG_COMPONENT "supervisor"
#include <huddle/log.h>

#define IDLE_MS_DEFAULT 2000
#define WAIT_SLICE_MS 250
#define ROUTINE_TICK_MS 1000 /* (6) */
#define VERIFY_POLL_MS 1000  /* (7) */
#define VERIFY_MIN_MS 100    /* (7) */
#define DISPATCH_MIN_MS 10   /* (1) */

struct hd_supervisor {
	char *home;
	char *mcp_host;
	char *mcp_token;
	int mcp_port;
	int idle_ms;
	hd_owner_id me;

	pthread_mutex_t lock; /* guards workers, stopping */
	pthread_cond_t stop_cond;
	hd_workers workers; /* (2) (3), workers.c */
	int stopping;
	atomic_int abort; /* every running turn's abort flag */
	pthread_t dispatcher;
	int started;
	hd_ticker *routines; /* (6) */
	pthread_t verifier;  /* (7) */
	int verifier_started;
};

/* (6): fire the routines that are due. */
static void
routine_tick(void *ctx, hd_store *own)
{
	hd_err err = HD_ERR_INIT;
	int fired = 0;

	(void)ctx;
	if (hd_routine_fire_due(&fired, own, hd_routine_now_ms(), &err) < 0)
		hd_log_warn("routines not fired: %s", err.msg);
	else if (fired > 0)
		hd_log_info("fired %d routine(s)", fired);
}

static int
stopping(hd_supervisor *sv)
{
	return hd_workers_stopping(&sv->workers);
}

/* ---- a turn ------------------------------------------------------------- */

/* Record t's outcome, retrying what may pass (4). */
static void
record(hd_supervisor *sv, hd_store *st, const hd_sv_turn *t,
    const hd_sv_outcome *o)
{
	hd_sv_finished fin;
	hd_err err = HD_ERR_INIT;
	int64_t backoff = 50;
	int aborted, rc;

	for (;;) {
		if ((rc = hd_sv__finish(&fin, st, t, o, &sv->me, &err)) == 0)
			break;
		if (rc == HD_ECONFLICT) {
			hd_log_warn("%s", err.msg);
			return;
		}
		hd_log_warn("turn %lld of %s not recorded yet: %s",
		    (long long)t->id, t->agent, err.msg);
		if (stopping(sv)) {
			hd_sv__abort(&aborted, st, t->id, sv->me.token, NULL);
			return;
		}
		hd_workers_retry(&sv->workers, &backoff);
	}
	if (fin.parked)
		hd_log_info("%s parked: no progress", t->agent);
}

struct spawned {
	hd_store *st;
	const hd_sv_turn *t;
};

/* The turn's command runs: record its process group with the turn, for
 * the engine that aborts it after this one died (sv_proc.c). */
static void
turn_spawned(void *ctx, int64_t pgid, int64_t start)
{
	struct spawned *sp = ctx;
	hd_err err = HD_ERR_INIT;

	if (hd_sv__turn_running(sp->st, sp->t->id, pgid, start, &err) < 0)
		hd_log_warn("turn %lld of %s: its process is not recorded: %s",
		    (long long)sp->t->id, sp->t->agent, err.msg);
}

/* Run one taken turn through its runtime and record it. */
static void
run_turn(hd_supervisor *sv, hd_store *st, hd_sv_turn *t)
{
	hd_runtime_result res;
	hd_runtime_turn in;
	hd_sv_outcome o;
	hd_live shown;
	struct spawned sp = {st, t};
	hd_err err = HD_ERR_INIT, uerr = HD_ERR_INIT;
	char *url = NULL;
	int rc, aborted;

	memset(&res, 0, sizeof(res));
	memset(&in, 0, sizeof(in));
	memset(&o, 0, sizeof(o));
	in.agent = t->a;
	in.team = t->team;
	in.prompt = t->prompt;
	in.context_len = t->context_len;
	if (t->ts.runtime != NULL && strcmp(t->ts.runtime, t->a->runtime) == 0)
		in.resume_session_id = t->ts.native_session_id;
	in.huddle_home = sv->home;
	in.abort = &sv->abort;
	in.on_spawn = turn_spawned;
	in.spawn_ctx = &sp;
	if (sv->mcp_port > 0 && sv->mcp_host != NULL) {
		if (hd_attach_url(&url, st, sv->mcp_host, sv->mcp_port,
			t->a->id, &uerr) == 0) {
			in.mcp_url = url;
			in.mcp_token = sv->mcp_token;
		} else
			hd_log_warn(
			    "no attach URL for %s: %s", t->a->id, uerr.msg);
	}
	shown.st = st;
	shown.team = t->team;
	shown.agent = t->a->id;
	shown.runtime = t->a->runtime;
	shown.conversation_id = NULL;
	rc = hd_runtime_run(&res, &in, hd_live_sink, &shown, &err);
	if (atomic_load(&sv->abort)) {
		/* stopping: the wakes go back for the next engine (4) */
		if (hd_sv__abort(&aborted, st, t->id, sv->me.token, &err) < 0)
			hd_log_warn("turn %lld of %s not put back: %s",
			    (long long)t->id, t->agent, err.msg);
		goto done;
	}
	o.runtime = t->a->runtime;
	o.resumed = in.resume_session_id;
	o.native_session_id = res.native_session_id != NULL
				  ? res.native_session_id
				  : in.resume_session_id;
	o.cost = res.cost;
	o.ran = 1;
	if (rc < 0 || res.reason == HD_DONE_ERROR ||
	    res.reason == HD_DONE_ABORTED) {
		o.error = res.reason == HD_DONE_ABORTED ? "the turn was aborted"
			  : res.error != NULL           ? res.error
			  : err.msg[0] != '\0'          ? err.msg
							: "the runtime failed";
		hd_log_warn("turn %lld of %s failed: %s", (long long)t->id,
		    t->agent, o.error);
	} else {
		o.reply = res.text;
		o.len = res.text_len;
	}
	record(sv, st, t, &o);
done:
	hd_runtime_result_dispose(&res);
	free(url);
}

/* ---- workers ------------------------------------------------------------ */

/* Take and run agent's turns until there is none to take (a worker's
 * drain). */
static void
drain(void *owner, const char *agent, hd_store *st)
{
	hd_supervisor *sv = owner;
	hd_sv_turn t;
	hd_sv_block blk;
	hd_err err = HD_ERR_INIT;
	int result, rc;

	while (!stopping(sv)) {
		rc =
		    hd_sv__take(&result, &t, &blk, st, agent, &sv->me, &err);
		if (rc < 0) {
			hd_log_warn(
			    "cannot start a turn of %s: %s", agent, err.msg);
			return; /* the next change looks again */
		}
		if (result != HD_SV_TAKEN)
			return;
		run_turn(sv, st, &t);
		hd_sv__turn_dispose(&t);
	}
}

/* Kick (or start) agent's worker. */
static void
kick(hd_supervisor *sv, const char *agent)
{
	hd_workers_kick(&sv->workers, agent);
}

/* ---- the dispatcher ----------------------------------------------------- */

/* Abort the running turns whose engines are gone. */
static void
recover(hd_store *st)
{
	hd_autorun_running *r = NULL;
	hd_err err = HD_ERR_INIT;
	size_t n = 0, i;
	int aborted;

	if (hd_autorun_turns_running(&r, &n, st, &err) < 0) {
		hd_log_warn("cannot list running turns: %s", err.msg);
		return;
	}
	for (i = 0; i < n; i++) {
		if (hd_owner_alive(r[i].owner, r[i].pid, r[i].start))
			continue;
		if (hd_sv__abort(&aborted, st, r[i].turn_id, r[i].owner, &err) <
		    0)
			hd_log_warn("cannot take turn %lld of %s back: %s",
			    (long long)r[i].turn_id, r[i].agent, err.msg);
		else if (aborted)
			hd_log_info("turn %lld of %s was left running by an "
				    "engine that is gone: its wakes are queued "
				    "again",
			    (long long)r[i].turn_id, r[i].agent);
	}
	free(r);
}

/* One pass (1): scan, then start what can run. *next_at is when a capped
 * agent can run again (0: none); *found is 1 when the pass found wakes
 * (new or queued); returns 1 when it changed something worth another
 * pass at once. */
static int
dispatch(hd_supervisor *sv, hd_store *st, int64_t *next_at, int *found)
{
	hd_wake_agent *q = NULL;
	hd_sv_block blk;
	hd_err err = HD_ERR_INIT;
	char **teams = NULL;
	size_t nteams = 0, nq = 0, i, queued;
	int result, aborted, again = 0;

	*next_at = 0;
	*found = 0;
	if (hd_autorun_teams(&teams, &nteams, st, &err) < 0)
		hd_log_warn("cannot list autorun teams: %s", err.msg);
	for (i = 0; i < nteams && !stopping(sv); i++)
		if (hd_sv__scan(&queued, st, teams[i], &err) < 0)
			hd_log_warn(
			    "cannot scan team %s: %s", teams[i], err.msg);
		else
			*found |= queued > 0;
	hd_strv_free(teams, nteams);
	if (hd_wake_agents(&q, &nq, st, &err) < 0) {
		hd_log_warn("cannot list queued wakes: %s", err.msg);
		return 0;
	}
	*found |= nq > 0;
	for (i = 0; i < nq && !stopping(sv); i++) {
		if (hd_workers_busy(&sv->workers, q[i].agent)) {
			kick(sv, q[i].agent); /* it looks again when done */
			continue;
		}
		if (hd_sv__check(&result, &blk, st, q[i].agent, &err) < 0) {
			hd_log_warn("cannot check %s: %s", q[i].agent, err.msg);
			continue;
		}
		if (result == HD_SV_TAKEN)
			kick(sv, q[i].agent);
		else if (result == HD_SV_NONE)
			kick(sv, q[i].agent); /* stale wakes: the take drops */
		else if (strcmp(blk.why, "busy") == 0 &&
			 !hd_owner_alive(blk.owner, blk.pid, blk.start)) {
			if (hd_sv__abort(
				&aborted, st, blk.turn_id, blk.owner, &err) < 0)
				hd_log_warn("cannot take turn %lld back: %s",
				    (long long)blk.turn_id, err.msg);
			again |= aborted;
		} else if (strcmp(blk.why, "capped") == 0 &&
			   (*next_at == 0 || blk.until < *next_at))
			*next_at = blk.until;
	}
	free(q);
	return again;
}

static void *
dispatcher_main(void *arg)
{
	hd_supervisor *sv = arg;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	uint64_t cursor = 0;
	int64_t next_at = 0, wait, backoff = 50, last = 0;
	int again = 1, found = 1;

	while (hd_store_open(&st, sv->home, &err) < 0) {
		hd_log_error(
		    "the supervisor cannot open the store: %s", err.msg);
		if (stopping(sv))
			return NULL;
		hd_workers_retry(&sv->workers, &backoff);
	}
	recover(st);
	while (!stopping(sv)) {
		if (again) {
			last = hd_mono_us();
			hd_store_change_cursor(st, &cursor, NULL);
			again = dispatch(sv, st, &next_at, &found);
			continue;
		}
		wait = WAIT_SLICE_MS;
		if (next_at > 0) {
			wait = next_at - hd_now_ms();
			if (wait <= 0) {
				again = 1;
				continue;
			}
			if (wait > WAIT_SLICE_MS)
				wait = WAIT_SLICE_MS;
		}
		/* (1): after a pass that found nothing, a commit this soon
		 * waits out the rest of DISPATCH_MIN_MS; the pass then reads
		 * all of them */
		again = hd_store_wait_change_paced(st, &cursor, (int)wait,
			    found ? 0 : DISPATCH_MIN_MS, last, NULL) > 0;
		pthread_mutex_lock(&sv->lock);
		hd_workers_reap(&sv->workers);
		pthread_mutex_unlock(&sv->lock);
	}
	hd_store_close(st);
	return NULL;
}

/* (7): run the verifications that are due until stopped. */
static void *
verifier_main(void *arg)
{
	hd_supervisor *sv = arg;
	hd_verifier_env env;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	uint64_t cursor = 0;
	int64_t backoff = 50, last = 0;
	int due, changed = 1;

	while (hd_store_open(&st, sv->home, &err) < 0) {
		hd_log_error("the verifier cannot open the store: %s", err.msg);
		if (stopping(sv))
			return NULL;
		hd_workers_retry(&sv->workers, &backoff);
	}
	memset(&env, 0, sizeof(env));
	env.home = sv->home;
	env.mcp_host = sv->mcp_host;
	env.mcp_port = sv->mcp_port;
	env.mcp_token = sv->mcp_token;
	env.abort = &sv->abort;
	env.runner = sv->me.token;
	/* (7): the throwaway critics of verifiers that died (verifier.c) */
	if (hd_board_verify_sweep(NULL, st, &err) < 0)
		hd_log_warn("throwaway critics not swept: %s", err.msg);
	while (!stopping(sv)) {
		if (changed || hd_mono_us() - last >= VERIFY_POLL_MS * 1000) {
			last = hd_mono_us();
			hd_store_change_cursor(st, &cursor, NULL);
			hd_err_clear(&err);
			if (hd_board_verify_due(&due, st, &err) < 0)
				hd_log_warn("verifications not read: %s", err.msg);
			else if (due &&
				 hd_verifier_run(NULL, st, &env, 0, &err) < 0)
				hd_log_warn("verifications not run: %s", err.msg);
		}
		/* at most one read per VERIFY_MIN_MS however busy the store:
		 * a burst of posts is not a burst of checks */
		changed = hd_store_wait_change_paced(st, &cursor,
			      WAIT_SLICE_MS, VERIFY_MIN_MS, last, NULL) > 0;
	}
	hd_store_close(st);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------ */

int
hd_supervisor_start(
    hd_supervisor **out, const hd_supervisor_config *cfg, hd_err *err)
{
	hd_supervisor *sv;
	char nonce[17];
	int rc;

	*out = NULL;
	if (cfg == NULL || cfg->home == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "the supervisor needs HUDDLE_HOME");
	if ((rc = hd_random_hex(nonce, 8, err)) < 0)
		return rc;
	if ((sv = calloc(1, sizeof(*sv))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	sv->home = strdup(cfg->home);
	sv->mcp_host = cfg->mcp_host != NULL ? strdup(cfg->mcp_host) : NULL;
	sv->mcp_token = cfg->mcp_token != NULL ? strdup(cfg->mcp_token) : NULL;
	sv->mcp_port = cfg->mcp_port;
	sv->idle_ms = cfg->idle_ms > 0 ? cfg->idle_ms : IDLE_MS_DEFAULT;
	hd_owner_init(&sv->me, nonce);
	atomic_init(&sv->abort, 0);
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->stop_cond, NULL);
	sv->workers.lock = &sv->lock;
	sv->workers.stop_cond = &sv->stop_cond;
	sv->workers.stopping = &sv->stopping;
	sv->workers.home = sv->home;
	sv->workers.idle_ms = sv->idle_ms;
	sv->workers.drain = drain;
	sv->workers.owner = sv;
	if (sv->home == NULL ||
	    (cfg->mcp_host != NULL && sv->mcp_host == NULL) ||
	    (cfg->mcp_token != NULL && sv->mcp_token == NULL) ||
	    hd_owner_register(sv->me.token) < 0) {
		hd_supervisor_stop(sv);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	if ((rc = pthread_create(&sv->dispatcher, NULL, dispatcher_main, sv)) !=
	    0) {
		hd_supervisor_stop(sv);
		return hd_err_set(err, HD_ERR,
		    "cannot start the supervisor: %s", strerror(rc));
	}
	sv->started = 1;
	if ((sv->routines = hd_ticker_start(
		 sv->home, ROUTINE_TICK_MS, routine_tick, sv)) == NULL)
		hd_log_warn("routines will not fire: no ticker thread");
	if ((rc = pthread_create(&sv->verifier, NULL, verifier_main, sv)) == 0)
		sv->verifier_started = 1;
	else
		hd_log_warn("tasks will not be verified: %s", strerror(rc));
	*out = sv;
	return 0;
}

void
hd_supervisor_stop(hd_supervisor *sv)
{
	if (sv == NULL)
		return;
	hd_ticker_stop(sv->routines);
	pthread_mutex_lock(&sv->lock);
	sv->stopping = 1;
	atomic_store(&sv->abort, 1);
	pthread_cond_broadcast(&sv->stop_cond);
	pthread_mutex_unlock(&sv->lock);
	if (sv->started)
		pthread_join(sv->dispatcher, NULL);
	if (sv->verifier_started)
		pthread_join(sv->verifier, NULL);
	hd_workers_join(&sv->workers);
	hd_owner_unregister(sv->me.token);
	pthread_mutex_destroy(&sv->lock);
	pthread_cond_destroy(&sv->stop_cond);
	free(sv->home);
	free(sv->mcp_host);
	free(sv->mcp_token);
	free(sv);
}
