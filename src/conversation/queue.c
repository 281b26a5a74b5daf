/*
 * queue.c -- table conversation_deliveries (conversation_store.h;
 * migration 5): the conversation engine's queue (SPEC 9.4). A delivery
 * is one message for one agent, the user's or a mention from a reply;
 * its id is its arrival order.
 *  (1) States and the UPDATE that makes each move, every one naming the
 *      state it leaves:
 *        queued -> running     hd_convstore_start
 *        running -> queued     hd_convstore_requeue, hd_convstore_requeue_all
 *        running -> done       hd_convstore_done
 *        queued/running -> cancelled   hd_convstore_cancel_delivery(ies)
 *      When to make them is the engine's (src/engine/conversation.c: one
 *      running delivery per agent, checked inside its write).
 *  (2) A running delivery may record where its runtime process runs
 *      (hd_convstore_run_record); every move out of running clears it
 *      (RUN_CLEARED), but cancel, which ends the delivery for good.
 *  (3) The claim reads (next queued, running for an agent) are separate
 *      statements so the engine checks them in order inside one write,
 *      with the autorun module's own read of a supervised turn between
 *      them; the next queued one skips conversations a cancel request
 *      names (table cancel_requests, this module's too).
 * Callers: the conversation engine (src/engine/conversation.c,
 * conv_record.c, cancel.c), the supervisor (hd_convstore_agent_busy
 * through the engine), record.c (hd_conversation_get).
 */
#include <stdio.h>

#include <huddle/util.h>

#include "store_int.h"

#define HD_LOG_COMPONENT "conversation"
#include <huddle/log.h>

/* Fill a delivery from a row of hd_convstore__deliveries_get. */
static int
delivery_fill(void *elem, hd_stmt *s)
{
	hd_conversation_delivery *d = elem;

	d->id = hd_stmt_int(s, 0);
	d->to_agent = hd_store_col_dup(s, 1);
	d->from_agent = hd_store_col_dup(s, 2);
	d->body = hd_store_col_dup(s, 3);
	d->prompt = hd_store_col_dup(s, 4);
	d->state = hd_store_col_dup(s, 5);
	d->created_at = hd_stmt_int(s, 6);
	d->started_at = hd_stmt_int(s, 7);
	d->finished_at = hd_stmt_int(s, 8);
	if (d->to_agent == NULL || d->body == NULL || d->prompt == NULL ||
	    d->state == NULL)
		return -1;
	return 0;
}

int
hd_convstore__deliveries_get(hd_store *st, hd_conversation *c, hd_err *err)
{
	hd_stmt *s;
	void *l = c->deliveries;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, to_agent, from_agent, body, prompt, state, "
		 "created_at, started_at, finished_at "
		 "FROM conversation_deliveries WHERE conversation_id = ?1 "
		 "ORDER BY id",
		 HD_TEXT(c->id))) < 0)
		return rc;
	rc = hd_convstore__rows(&l, &c->ndeliveries, sizeof(*c->deliveries),
	    st, s, delivery_fill, err);
	c->deliveries = l;
	return rc;
}

/* ---- enqueueing --------------------------------------------------------- */

int
hd_convstore_enqueue_user(hd_store *st, const char *conv, const char *to,
    const char *body, int64_t now, int64_t post_seq, hd_err *err)
{
	return hd_store_run(st, err,
	    "INSERT INTO conversation_deliveries(conversation_id,"
	    " to_agent, from_agent, body, prompt, state, created_at,"
	    " post_seq) VALUES (?1, ?2, NULL, ?3, ?3, 'queued', ?4,"
	    " NULLIF(?5, 0))",
	    HD_TEXT(conv), HD_TEXT(to), HD_TEXT(body), HD_INT(now),
	    HD_INT(post_seq));
}

int
hd_convstore_enqueue_mention(int64_t *id, hd_store *st, const char *conv,
    const char *to, const char *from, const char *body, const char *prompt,
    int64_t now, hd_err *err)
{
	int rc;

	if ((rc = hd_store_run(st, err,
		 "INSERT INTO conversation_deliveries(conversation_id,"
		 " to_agent, from_agent, body, prompt, state,"
		 " created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'queued',"
		 " ?6)",
		 HD_TEXT(conv), HD_TEXT(to), HD_TEXT(from), HD_TEXT(body),
		 HD_TEXT(prompt), HD_INT(now))) < 0)
		return rc;
	*id = hd_store_last_id(st);
	return 0;
}

/* ---- the claim's reads (3) ---------------------------------------------- */

int
hd_convstore_next_queued(int *found, hd_convstore_claim *c, hd_store *st,
    const char *agent, const char *owner, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*found = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT d.id, d.conversation_id, d.prompt, c.team_id,"
		 " d.post_seq FROM conversation_deliveries d"
		 " JOIN conversations c ON c.id = d.conversation_id"
		 " WHERE d.to_agent = ?1 AND d.state = 'queued'"
		 " AND c.owner = ?2 AND c.status = 'running'"
		 " AND NOT EXISTS (SELECT 1 FROM cancel_requests r"
		 "  WHERE r.kind = 'conversation' AND r.target = c.id)"
		 " ORDER BY d.id LIMIT 1",
		 HD_TEXT(agent), HD_TEXT(owner))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		c->delivery_id = hd_stmt_int(s, 0);
		snprintf(c->conversation_id, sizeof(c->conversation_id), "%s",
		    hd_stmt_text(s, 1));
		c->prompt = hd_store_col_dup(s, 2);
		snprintf(c->team, sizeof(c->team), "%s", hd_stmt_text(s, 3));
		snprintf(c->agent, sizeof(c->agent), "%s", agent);
		c->post_seq = hd_stmt_int(s, 4);
	}
	hd_store_reset(s);
	if (src != HD_ROW)
		return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
	if (c->prompt == NULL)
		return hd_convstore__oom(err);
	*found = 1;
	return 0;
}

int
hd_convstore_running_for(int *found, hd_convstore_claim *c, hd_store *st,
    const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*found = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT c.id, c.owner, c.owner_pid, c.owner_start"
		 " FROM conversation_deliveries d"
		 " JOIN conversations c ON c.id = d.conversation_id"
		 " WHERE d.to_agent = ?1 AND d.state = 'running' LIMIT 1",
		 HD_TEXT(agent))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		snprintf(
		    c->blocker, sizeof(c->blocker), "%s", hd_stmt_text(s, 0));
		c->blocker_owner = hd_store_col_dup(s, 1);
		c->blocker_pid = hd_stmt_int(s, 2);
		c->blocker_start = hd_stmt_int(s, 3);
		*found = 1;
	}
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	return 0;
}

int
hd_convstore_agent_busy(int *busy, hd_store *st, const char *agent, hd_err *err)
{
	int64_t one;
	int rc;

	*busy = 0;
	if ((rc = hd_store_get_int(st, &one, err,
		 "SELECT 1 FROM conversation_deliveries WHERE to_agent = ?1"
		 " AND state = 'running' LIMIT 1",
		 HD_TEXT(agent))) < 0)
		return rc;
	*busy = rc;
	return 0;
}

/* ---- moves (1) ---------------------------------------------------------- */

/* What every move out of running but cancel sets (2). */
#define RUN_CLEARED                                                            \
	" run_host = NULL, run_boot = NULL, run_pid = NULL, run_start = NULL"

int
hd_convstore_start(hd_store *st, int64_t id, int64_t now, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET state = 'running',"
	    " started_at = ?2 WHERE id = ?1 AND state = 'queued'",
	    HD_INT(id), HD_INT(now));
}

int
hd_convstore_requeue(hd_store *st, int64_t id, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET state = 'queued',"
	    " started_at = NULL," RUN_CLEARED
	    " WHERE id = ?1 AND state = 'running'",
	    HD_INT(id));
}

int
hd_convstore_requeue_all(hd_store *st, const char *conv, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET state = 'queued',"
	    " started_at = NULL," RUN_CLEARED
	    " WHERE conversation_id = ?1 AND state = 'running'",
	    HD_TEXT(conv));
}

int
hd_convstore_done(hd_store *st, int64_t id, int64_t now, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET state = 'done',"
	    " finished_at = ?2," RUN_CLEARED " WHERE id = ?1",
	    HD_INT(id), HD_INT(now));
}

int
hd_convstore_cancel_delivery(hd_store *st, int64_t id, int64_t now, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET state = 'cancelled',"
	    " finished_at = ?2 WHERE id = ?1 AND state = 'running'",
	    HD_INT(id), HD_INT(now));
}

int
hd_convstore_cancel_deliveries(
    hd_store *st, const char *conv, int64_t now, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET state = 'cancelled',"
	    " finished_at = ?2 WHERE conversation_id = ?1"
	    " AND (state = 'queued' OR state = 'running')",
	    HD_TEXT(conv), HD_INT(now));
}

int
hd_convstore_carry(hd_store *st, const char *conv, const char *from,
    int64_t first, int64_t post_seq, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET post_seq = ?1"
	    " WHERE id >= ?2 AND conversation_id = ?3 AND from_agent = ?4",
	    HD_INT(post_seq), HD_INT(first), HD_TEXT(conv), HD_TEXT(from));
}

/* ---- the running process (2) -------------------------------------------- */

int
hd_convstore_run_record(hd_store *st, int64_t id, const char *host,
    const char *boot, int64_t pgid, int64_t start, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE conversation_deliveries SET run_host = ?2,"
	    " run_boot = ?3, run_pid = ?4, run_start = ?5"
	    " WHERE id = ?1 AND state = 'running'",
	    HD_INT(id), HD_TEXT(host), HD_TEXT(boot), HD_INT(pgid),
	    HD_INT(start));
}

int
hd_convstore_kill_running(hd_store *st, const char *conv, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT run_host, run_boot, run_pid, run_start, id"
		 " FROM conversation_deliveries WHERE conversation_id = ?1"
		 " AND state = 'running' AND run_pid IS NOT NULL",
		 HD_TEXT(conv))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW)
		if (hd_proc_here(hd_stmt_text(s, 0), hd_stmt_text(s, 1)) &&
		    hd_proc_group_kill(hd_stmt_int(s, 2), hd_stmt_int(s, 3)))
			hd_log_info("conversation %s: killed process group "
				    "%lld of interrupted message %lld",
			    conv, (long long)hd_stmt_int(s, 2),
			    (long long)hd_stmt_int(s, 4));
	if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* ---- agents ------------------------------------------------------------- */

/* A copy of the row's one text column, into a char * of the list. */
static int
agent_fill(void *elem, hd_stmt *s)
{
	char **agent = elem;

	return (*agent = hd_store_col_dup(s, 0)) != NULL ? 0 : -1;
}

/* Step s (one text column) and append every value to *v. */
static int
collect_agents(hd_store *st, hd_stmt *s, char ***v, size_t *n, hd_err *err)
{
	void *l = *v;
	int rc;

	rc = hd_convstore__rows(&l, n, sizeof(**v), st, s, agent_fill, err);
	*v = l;
	return rc;
}

int
hd_convstore_running_agents(
    char ***v, size_t *n, hd_store *st, const char *conv, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state = 'running'",
		 HD_TEXT(conv))) < 0)
		return rc;
	return collect_agents(st, s, v, n, err);
}

int
hd_convstore_queued_agents(
    char ***v, size_t *n, hd_store *st, const char *conv, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT DISTINCT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state = 'queued'",
		 HD_TEXT(conv))) < 0)
		return rc;
	return collect_agents(st, s, v, n, err);
}

int
hd_convstore_unanswered(char ***v, size_t *n, hd_store *st, const char *conv,
    int64_t except, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT DISTINCT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state IN ('queued', "
		 "'running')"
		 " AND id != ?2",
		 HD_TEXT(conv), HD_INT(except))) < 0)
		return rc;
	return collect_agents(st, s, v, n, err);
}
