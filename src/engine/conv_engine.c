/*
 * conv_engine.c -- the conversation engine's threads (SPEC 7): one worker
 * thread per agent with work, each with its own store connection, running
 * that agent's messages one at a time through hd_runtime_run().
 *  (1) Per-agent serialization: an engine has at most one worker per
 *      agent, and the claim (conversation.c) refuses a second running
 *      message for an agent in any process, so an agent never runs two
 *      messages at once; different agents run in parallel.
 *  (2) No lost wake-up: whoever enqueues a message (start, a reply,
 *      a take-over) kicks the recipient's worker after the commit; a
 *      worker clears its dirty flag before it looks at the queue and
 *      sleeps only when the flag is still clear. A worker blocked by
 *      another process's running message waits on a database change
 *      (hd_store_wait_change), never by busy polling.
 *  (3) Liveness: an engine is named "<pid>:<process start>:<nonce>". It is
 *      alive while its process is (same pid and start time, not a
 *      zombie) and, within this process, while it is registered here.
 *      Conversations of a dead engine are taken over by hd_conversation_
 *      resume_all() and, lazily, by any worker they block.
 *  (4) A reply is recorded or the message is put back: a record that
 *      fails for a transient reason is retried; stopping the engine
 *      aborts running turns and puts their messages back in the queue.
 *  (5) Idle workers exit after idle_ms; stop joins every thread. The
 *      worker threads, their kick and their linger are workers.c's,
 *      shared with the supervisor; what a worker does (drain) is here.
 *  (6) The engine's own writes are serialized by write_lock before they
 *      reach SQLite (hd_conv_owner.wl): threads of one process queue on a
 *      mutex instead of meeting SQLITE_BUSY and sleeping through the
 *      store's backoff (which is for other processes). The lock is held
 *      only around one transaction and never while a turn runs.
 *  (7) A worker that records a reply claims its agent's next message in
 *      the same transaction: one commit per turn, and an agent with work
 *      queued stays working instead of flickering idle.
 *  (8) Cancel (cancel.c): each turn runs with an abort flag of its own,
 *      registered in e->turns, so a cancel stops the turns of one
 *      conversation and a stop stops them all. A watch thread polls for
 *      cancel requests of the conversations this engine runs; a turn a
 *      cancel stopped leaves its message cancelled (not put back) and its
 *      agent idle, and the conversation ends once none of it runs.
 *  (9) A crash costs one turn, never a duplicate: a turn's command dies
 *      with this process (proc.c (9)) and its process group is recorded
 *      with the delivery (conversation.c (6)), killed by whichever engine
 *      takes the conversation over before the delivery runs again. `huddle
 *      ask` run again with the same team and message takes over the
 *      conversation it left interrupted (hd_conversation_resume_same)
 *      instead of starting a second one.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <huddle/agent.h>
#include <huddle/attach.h>
#include <huddle/buf.h>
#include <huddle/live.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "cancel_int.h"
#include "conversation_int.h"
#include "owner.h"
#include "workers.h"

#define HD_LOG_COMPONENT "conversation"
#include <huddle/log.h>

#define IDLE_MS_DEFAULT 2000
#define BLOCKED_WAIT_MS 250
#define WAIT_SLICE_MS 250

struct hd_conversation_engine {
	char *home;
	hd_conv_owner me;
	hd_conversation_reply_fn on_reply;
	void *payload;
	char *mcp_host;
	int mcp_port;
	char *mcp_token;
	int idle_ms;

	pthread_mutex_t lock; /* guards workers, stopping, done_gen */
	pthread_cond_t done_cond;
	uint64_t done_gen; /* bumped when a conversation completes */
	hd_workers workers; /* (2) (5), workers.c */
	int stopping;
	atomic_int abort; /* set when the engine stops */
	hd_conv_turns turns;    /* the running turns (8) */
	hd_cancel_watch *watch; /* (8) */

	pthread_mutex_t cb_lock;    /* serializes on_reply */
	pthread_mutex_t write_lock; /* (6) */
};

/* ---- (3) liveness is owner.c's ------------------------------------------ */

static int
owner_alive(const char *owner, int64_t pid, int64_t start)
{
	return hd_owner_alive(owner, pid, start);
}

/* ---- workers (workers.c) --------------------------------------------------
 */

/* Wake (or start) agent's worker, (2). */
static void
kick(hd_conversation_engine *e, const char *agent)
{
	hd_workers_kick(&e->workers, agent);
}

static int
stopping(hd_conversation_engine *e)
{
	return hd_workers_stopping(&e->workers);
}

static void
signal_done(hd_conversation_engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->done_gen++;
	pthread_cond_broadcast(&e->done_cond);
	pthread_mutex_unlock(&e->lock);
}

static void
finish(hd_conversation_engine *e, hd_store *st, const char *id)
{
	hd_err err = HD_ERR_INIT;
	int64_t backoff = 50;
	int done = 0, rc;

	for (;;) {
		if ((rc = hd_conv__finish(&done, st, id, &e->me, &err)) == 0)
			break;
		hd_log_warn(
		    "conversation %s: cannot complete yet: %s", id, err.msg);
		if (stopping(e))
			return; /* the next engine completes it */
		hd_workers_retry(&e->workers, &backoff);
	}
	if (done)
		signal_done(e);
}

/* Take conversation id over from a dead owner; kick its agents, finish it
 * when nothing is pending. Returns 1 when taken over. */
static int
adopt(hd_conversation_engine *e, hd_store *st, const char *id,
    const char *old_owner, hd_err *err)
{
	char **agents = NULL;
	size_t nagents = 0, i;
	int64_t pending = 0;
	int adopted = 0, rc;

	if ((rc = hd_conv__adopt(&adopted, &agents, &nagents, &pending, st, id,
		 old_owner, &e->me, err)) < 0)
		return rc;
	for (i = 0; i < nagents; i++)
		kick(e, agents[i]);
	hd_strv_free(agents, nagents);
	if (adopted && pending == 0)
		finish(e, st, id);
	return adopted;
}

struct spawned {
	hd_conversation_engine *e;
	hd_store *st;
	const hd_conv_claim *c;
};

/* (8) The turn's command runs: its process group is recorded with the
 * delivery, for an engine that takes the conversation over after this
 * one died. */
static void
turn_spawned(void *ctx, int64_t pgid, int64_t start)
{
	struct spawned *sp = ctx;
	hd_err err = HD_ERR_INIT;

	if (hd_conv__running(sp->st, sp->c, &sp->e->me, pgid, start, &err) < 0)
		hd_log_warn("conversation %s: the running message's process is "
			    "not recorded: %s",
		    sp->c->conversation_id, err.msg);
}

/*
 * Run one claimed message and record its reply, (4). *next gets the
 * agent's next message when it could be claimed with the record, (7).
 */
static void
run_claimed(hd_conversation_engine *e, hd_store *st, hd_conv_claim *c,
    hd_conv_claim *next)
{
	hd_conversation_reply_info info;
	hd_runtime_result res;
	hd_runtime_turn turn;
	hd_conv_recorded rec;
	hd_conv_turn ct;
	hd_turn_state ts;
	hd_live shown; /* the turn's tool calls, as events */
	hd_conv_slot slot; /* its abort flag (8) */
	struct spawned sp = {e, st, c};
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT, uerr = HD_ERR_INIT;
	char *reply = NULL, *url = NULL, *prompt = NULL;
	size_t len = 0, i, context_len = 0;
	int64_t backoff = 50, seen = 0;
	int rc, is_error = 0, ran = 0;

	memset(&res, 0, sizeof(res));
	memset(&rec, 0, sizeof(rec));
	memset(&ts, 0, sizeof(ts));
	memset(&ct, 0, sizeof(ct));
	memset(next, 0, sizeof(*next));
	/* the agent's own state, shared with exchanges: its cursor in the
	 * room and the native session to resume (prompt.h, exchange.h) */
	if (hd_agent_get(&a, st, c->agent, &err) == 0 &&
	    hd_turn_state_get(&ts, st, c->team, c->agent, &err) == 0 &&
	    hd_conv__prompt(&prompt, &context_len, &seen, st, c, a, &ts, &e->me,
		&err) == 0) {
		memset(&turn, 0, sizeof(turn));
		turn.agent = a;
		turn.team = c->team;
		turn.prompt = prompt;
		turn.context_len = context_len;
		if (ts.runtime != NULL && strcmp(ts.runtime, a->runtime) == 0)
			turn.resume_session_id = ts.native_session_id;
		turn.huddle_home = e->home;
		hd_conv__turn_enter(&e->turns, &slot, c->conversation_id);
		turn.abort = &slot.abort;
		turn.on_spawn = turn_spawned;
		turn.spawn_ctx = &sp;
		if (e->mcp_port > 0 && e->mcp_host != NULL) {
			if (hd_attach_url(&url, st, e->mcp_host, e->mcp_port,
				a->id, &uerr) == 0) {
				turn.mcp_url = url;
				turn.mcp_token = e->mcp_token;
			} else
				hd_log_warn("no attach URL for %s: %s", a->id,
				    uerr.msg);
		}
		shown.st = st;
		shown.team = c->team;
		shown.agent = a->id;
		shown.runtime = a->runtime;
		shown.conversation_id = c->conversation_id;
		rc = hd_runtime_run(&res, &turn, hd_live_sink, &shown, &err);
		if (hd_conv__turn_leave(&e->turns, &slot)) {
			int ended = 0;

			/* (8): cancelled, not put back */
			if (hd_conv__cancel_delivery(st, c, &e->me, &err) < 0 ||
			    hd_conv__cancel_end(&ended, st, c->conversation_id,
				&e->me, &err) < 0)
				hd_log_warn("conversation %s: cancel of message "
					    "%lld: %s",
				    c->conversation_id,
				    (long long)c->delivery_id, err.msg);
			if (ended)
				signal_done(e);
			goto done;
		}
		if (atomic_load(&e->abort)) {
			/* stopping: the message goes back for the next engine
			 */
			if (hd_conv__release(st, c, &e->me, &err) < 0)
				hd_log_warn("conversation %s: message %lld not "
					    "put back: %s",
				    c->conversation_id,
				    (long long)c->delivery_id, err.msg);
			goto done;
		}
		ct.runtime = a->runtime;
		ct.resumed = turn.resume_session_id;
		/* the session to remember: the new one, else the one resumed
		 */
		ct.native_session_id = res.native_session_id
					   ? res.native_session_id
					   : turn.resume_session_id;
		ct.seen = seen;
		ct.cost = res.cost;
		ran = 1;
		if (rc < 0)
			is_error = 1;
		else if (res.reason == HD_DONE_ABORTED) {
			is_error = HD_CONV__ABORTED;
			hd_err_set(&err, HD_ERR, "the turn was aborted");
		} else {
			reply = res.text;
			len = res.text_len;
		}
	} else
		is_error = 1;
	if (is_error) {
		hd_buf b = HD_BUF_INIT(0);

		hd_buf_printf(&b, "[error: %s]", err.msg);
		len = b.len;
		reply = hd_buf_detach(&b);
		if (reply == NULL) {
			reply = strdup("[error: out of memory]");
			len = reply != NULL ? strlen(reply) : 0;
		}
		hd_log_warn("conversation %s: %s failed: %s",
		    c->conversation_id, c->agent, err.msg);
	}
	for (;;) {
		rc = hd_conv__record(&rec, st, c, reply != NULL ? reply : "",
		    len, is_error, !stopping(e), ran ? &ct : NULL, &e->me,
		    &err);
		if (rc == 0 || rc == HD_ECONFLICT)
			break;
		hd_log_warn("conversation %s: reply of %s not recorded yet: %s",
		    c->conversation_id, c->agent, err.msg);
		if (stopping(e)) {
			hd_conv__release(st, c, &e->me, NULL);
			goto done;
		}
		hd_workers_retry(&e->workers, &backoff);
	}
	if (rc == HD_ECONFLICT) {
		hd_log_warn("%s", err.msg);
		goto done;
	}
	if (rec.next_result == HD_CONV_CLAIMED) {
		*next = rec.next;
		memset(&rec.next, 0, sizeof(rec.next));
	}
	if (e->on_reply != NULL) {
		info.conversation_id = c->conversation_id;
		info.team = c->team;
		info.agent = c->agent;
		info.body = rec.body;
		info.seq = rec.seq;
		info.pending = rec.pending_mid;
		info.is_error = is_error;
		pthread_mutex_lock(&e->cb_lock);
		e->on_reply(&info, e->payload);
		pthread_mutex_unlock(&e->cb_lock);
	}
	for (i = 0; i < rec.ntargets; i++)
		kick(e, rec.targets[i]);
	if (rec.pending_after == 0)
		finish(e, st, c->conversation_id);
done:
	if (is_error)
		free(reply);
	hd_conv__recorded_dispose(&rec);
	hd_runtime_result_dispose(&res);
	hd_agent_free(a);
	hd_turn_state_dispose(&ts);
	free(prompt);
	free(url);
}

/* Answer every message for agent that can run now (a worker's drain). */
static void
drain(void *owner, const char *agent, hd_store *st)
{
	hd_conversation_engine *e = owner;
	hd_conv_claim c, next;
	hd_err err = HD_ERR_INIT;
	uint64_t cursor = 0;
	int64_t backoff = 50;
	int result, rc, have = 0;

	memset(&c, 0, sizeof(c));
	for (;;) {
		if (stopping(e)) {
			if (have && hd_conv__release(st, &c, &e->me, &err) < 0)
				hd_log_warn("conversation %s: message %lld not "
					    "put back: %s",
				    c.conversation_id, (long long)c.delivery_id,
				    err.msg);
			hd_conv__claim_dispose(&c);
			return;
		}
		if (!have) {
			hd_store_change_cursor(st, &cursor, NULL);
			rc = hd_conv__claim(
			    &result, &c, st, agent, &e->me, &err);
			if (rc < 0) {
				hd_log_warn("cannot claim a message for %s: %s",
				    agent, err.msg);
				hd_workers_retry(&e->workers, &backoff);
				continue;
			}
			backoff = 50;
			if (result == HD_CONV_NONE)
				return;
			if (result == HD_CONV_BLOCKED) {
				/* (3): a dead engine's message blocks the
				 * agent */
				if (c.blocker[0] != '\0' &&
				    !owner_alive(c.blocker_owner, c.blocker_pid,
					c.blocker_start) &&
				    adopt(e, st, c.blocker, c.blocker_owner,
					&err) < 0)
					hd_log_warn(
					    "cannot take conversation %s "
					    "over: %s",
					    c.blocker, err.msg);
				hd_conv__claim_dispose(&c);
				hd_store_wait_change(
				    st, &cursor, BLOCKED_WAIT_MS, NULL);
				continue;
			}
		}
		run_claimed(e, st, &c, &next);
		hd_conv__claim_dispose(&c);
		c = next;
		have = c.delivery_id != 0;
	}
}

/* ---- the public engine ----------------------------------------------------
 */

/* What start made, once no thread of the engine is left. */
static void
engine_free(hd_conversation_engine *e)
{
	hd_conv__turns_destroy(&e->turns);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->cb_lock);
	pthread_mutex_destroy(&e->write_lock);
	pthread_cond_destroy(&e->done_cond);
	free(e->home);
	free(e->mcp_host);
	free(e->mcp_token);
	free(e);
}

int
hd_conversation_engine_start(hd_conversation_engine **out,
    const hd_conversation_engine_config *cfg, hd_err *err)
{
	hd_conversation_engine *e;
	hd_owner_id id;
	char nonce[17];
	int rc;

	*out = NULL;
	if (cfg == NULL || cfg->home == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "a conversation engine needs HUDDLE_HOME");
	if ((rc = hd_random_hex(nonce, 8, err)) < 0)
		return rc;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	atomic_init(&e->abort, 0);
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->cb_lock, NULL);
	pthread_mutex_init(&e->write_lock, NULL);
	pthread_cond_init(&e->done_cond, NULL);
	hd_conv__turns_init(&e->turns);
	e->home = strdup(cfg->home);
	e->mcp_host = cfg->mcp_host != NULL ? strdup(cfg->mcp_host) : NULL;
	e->mcp_token = cfg->mcp_token != NULL ? strdup(cfg->mcp_token) : NULL;
	if (e->home == NULL || (cfg->mcp_host != NULL && e->mcp_host == NULL) ||
	    (cfg->mcp_token != NULL && e->mcp_token == NULL)) {
		engine_free(e);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	e->mcp_port = cfg->mcp_port;
	e->on_reply = cfg->on_reply;
	e->payload = cfg->payload;
	e->idle_ms = cfg->idle_ms > 0 ? cfg->idle_ms : IDLE_MS_DEFAULT;
	hd_owner_init(&id, nonce);
	memcpy(e->me.token, id.token, sizeof(e->me.token));
	e->me.pid = id.pid;
	e->me.start = id.start;
	e->me.wl = &e->write_lock;
	e->workers.lock = &e->lock;
	e->workers.stop_cond = &e->done_cond;
	e->workers.stopping = &e->stopping;
	e->workers.home = e->home;
	e->workers.idle_ms = e->idle_ms;
	e->workers.drain = drain;
	e->workers.owner = e;
	if (hd_owner_register(e->me.token) < 0)
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	else if ((rc = hd_conv__watch_start(&e->watch, e->home, &e->me,
		      &e->turns, err)) < 0)
		hd_owner_unregister(e->me.token);
	if (rc < 0) {
		engine_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

void
hd_conversation_engine_stop(hd_conversation_engine *e)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;

	if (e == NULL)
		return;
	hd_cancel_watch_stop(e->watch);
	pthread_mutex_lock(&e->lock);
	e->stopping = 1;
	atomic_store(&e->abort, 1);
	hd_conv__turns_close(&e->turns);
	pthread_cond_broadcast(&e->done_cond);
	pthread_mutex_unlock(&e->lock);
	hd_workers_join(&e->workers);
	/* (3): release what is left so the next engine needs no liveness
	 * check to resume it */
	if (hd_store_open(&st, e->home, &err) < 0 ||
	    hd_conv__disown(st, &e->me, &err) < 0)
		hd_log_warn("conversations not released (the next engine "
			    "takes them over when this process is gone): %s",
		    err.msg);
	hd_store_close(st);
	hd_owner_unregister(e->me.token);
	engine_free(e);
}

int
hd_conversation_start(char *out, hd_conversation_engine *e, hd_store *st,
    const hd_conversation_spec *spec, hd_err *err)
{
	char agent[64];
	int rc;

	if (stopping(e))
		return hd_err_set(
		    err, HD_ECONFLICT, "the conversation engine is stopping");
	if ((rc = hd_conv__create(out, agent, st, spec, &e->me, err)) < 0)
		return rc;
	kick(e, agent);
	return 0;
}

int
hd_conversation_wait(hd_conversation_engine *e, hd_store *st, const char *id,
    int timeout_ms, hd_err *err)
{
	struct timespec ts;
	int64_t deadline =
	    timeout_ms < 0 ? INT64_MAX : hd_mono_ms() + timeout_ms;
	int64_t left;
	uint64_t gen;
	char status[16];
	int rc;

	for (;;) {
		pthread_mutex_lock(&e->lock);
		gen = e->done_gen;
		pthread_mutex_unlock(&e->lock);
		if ((rc = hd_convstore_status(
			 status, sizeof(status), st, id, err)) < 0)
			return rc;
		if (strcmp(status, "running") != 0)
			return 0;
		if (stopping(e))
			return hd_err_set(err, HD_ECONFLICT,
			    "the conversation engine is stopping");
		if ((left = deadline - hd_mono_ms()) <= 0)
			return hd_err_set(err, HD_ETIMEOUT,
			    "conversation %s is still running", id);
		hd_timespec_in(&ts, left < WAIT_SLICE_MS ? left : WAIT_SLICE_MS);
		pthread_mutex_lock(&e->lock);
		while (
		    e->done_gen == gen && !e->stopping &&
		    pthread_cond_timedwait(&e->done_cond, &e->lock, &ts) == 0)
			;
		pthread_mutex_unlock(&e->lock);
	}
}

int
hd_conversation_resume_all(
    size_t *adopted, hd_conversation_engine *e, hd_store *st, hd_err *err)
{
	hd_convstore_foreign *l = NULL;
	size_t n = 0, i, count = 0;
	int rc;

	if (adopted != NULL)
		*adopted = 0;
	if ((rc = hd_convstore_foreign_list(&l, &n, st, e->me.token, err)) < 0)
		return rc;
	for (i = 0; i < n; i++) {
		if (owner_alive(l[i].owner, l[i].pid, l[i].start))
			continue;
		if ((rc = adopt(e, st, l[i].id, l[i].owner, err)) < 0)
			break;
		count += (size_t)rc;
		rc = 0;
	}
	hd_convstore_foreign_free(l, n);
	if (adopted != NULL)
		*adopted = count;
	return rc;
}

int
hd_conversation_resume_same(char *out, int *found,
    hd_conversation_engine *e, hd_store *st, const hd_conversation_spec *spec,
    hd_err *err)
{
	const char *origin = spec->origin != NULL ? spec->origin : "api";
	hd_convstore_foreign *l = NULL;
	hd_conversation *c = NULL;
	size_t n = 0, i;
	int rc, same;

	*found = 0;
	if (spec->team == NULL || spec->message == NULL)
		return 0;
	if ((rc = hd_convstore_foreign_list(&l, &n, st, e->me.token, err)) < 0)
		return rc;
	for (i = 0; i < n && !*found; i++) {
		if (owner_alive(l[i].owner, l[i].pid, l[i].start))
			continue;
		if ((rc = hd_conversation_get(&c, st, l[i].id, err)) < 0) {
			if (rc != HD_ENOTFOUND)
				break;
			hd_err_clear(err);
			rc = 0;
			continue;
		}
		same = strcmp(c->team_id, spec->team) == 0 &&
		       strcmp(c->origin, origin) == 0 &&
		       strcmp(c->message, spec->message) == 0;
		hd_conversation_free(c);
		c = NULL;
		if (!same)
			continue;
		if ((rc = adopt(e, st, l[i].id, l[i].owner, err)) < 0)
			break;
		if (rc == 1) { /* else another engine was faster */
			snprintf(out, HD_CONVERSATION_ID_LEN + 1, "%s",
			    l[i].id);
			*found = 1;
		}
		rc = 0;
	}
	hd_convstore_foreign_free(l, n);
	return rc;
}
