/*
 * turns.c -- the supervisor's turns (autorun_turn.h): table autorun_turns
 * (migration 12). This module owns it; nothing else writes it (the team
 * module purges it with a team). autorun_turn.h states its invariants;
 * here:
 *  (1) the partial unique index autorun_turns_running (agent_id WHERE
 *      status = 'running') is the backstop of one running turn per agent;
 *  (2) every write to a turn that may have moved on is conditional on
 *      its state ('running', and for the end its owner), so an engine
 *      never records over another's abort;
 *  (3) an agent's turns are read through autorun_turns_agent, the
 *      running ones through autorun_turns_running.
 * Every function runs inside its caller's transaction.
 * Callers: the supervisor (src/engine/sv_turn.c, sv_proc.c, sv_hand.c,
 * supervisor.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/autorun_turn.h>
#include <huddle/util.h>

#include "autorun_int.h"

/* ---- starting, and who runs (1) ---------------------------------------- */

int
hd_autorun_turn_start(int64_t *id, hd_store *st, const char *team,
    const char *agent, const char *owner, int64_t owner_pid,
    int64_t owner_start, const char *reasons, int64_t start_seq,
    hd_err *err)
{
	int rc;

	*id = 0;
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO autorun_turns(team_id, agent_id, status, owner,"
		 " owner_pid, owner_start, reasons, start_seq, started_at)"
		 " VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8)",
		 HD_TEXT(team), HD_TEXT(agent), HD_TEXT(owner),
		 HD_INT(owner_pid), HD_INT(owner_start), HD_TEXT(reasons),
		 HD_INT(start_seq), HD_INT(hd_now_ms()))) < 0)
		return rc;
	*id = hd_store_last_id(st);
	return 0;
}

/* Columns id, agent_id, owner, owner_pid, owner_start. */
static void
running_fill(void *elem, hd_stmt *s)
{
	hd_autorun_running *r = elem;
	const char *owner = hd_stmt_text(s, 2);

	r->turn_id = hd_stmt_int(s, 0);
	snprintf(r->agent, sizeof(r->agent), "%s", hd_stmt_text(s, 1));
	snprintf(r->owner, sizeof(r->owner), "%s", owner != NULL ? owner : "");
	r->pid = hd_stmt_int(s, 3);
	r->start = hd_stmt_int(s, 4);
}

int
hd_autorun_turn_running(int *found, hd_autorun_running *out, hd_store *st,
    const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*found = 0;
	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT id, agent_id, owner, owner_pid, owner_start"
		 " FROM autorun_turns WHERE agent_id = ?1"
		 " AND status = 'running'",
		 HD_TEXT(agent))) < 0)
		return rc;
	return hd_autorun__row(found, out, st, s, running_fill, err);
}

int
hd_autorun_turns_running(
    hd_autorun_running **out, size_t *n, hd_store *st, hd_err *err)
{
	hd_stmt *s;
	void *v;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, agent_id, owner, owner_pid, owner_start"
		 " FROM autorun_turns INDEXED BY autorun_turns_running"
		 " WHERE status = 'running'",
		 err)) < 0 ||
	    (rc = hd_autorun__collect(
		 &v, n, sizeof(**out), st, s, running_fill, err)) < 0)
		return rc;
	*out = v;
	return 0;
}

int
hd_autorun_turns_since(int64_t *count, int64_t *oldest, hd_store *st,
    const char *agent, int64_t since, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*count = 0;
	*oldest = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT COUNT(*), MIN(started_at) FROM autorun_turns"
		 " INDEXED BY autorun_turns_agent"
		 " WHERE agent_id = ?1 AND started_at > ?2",
		 HD_TEXT(agent), HD_INT(since))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		*count = hd_stmt_int(s, 0);
		*oldest = hd_stmt_int(s, 1);
		src = HD_DONE;
	}
	hd_store_reset(s);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

int
hd_autorun_turn_delivered(
    hd_store *st, int64_t id, const char *range, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE autorun_turns SET delivered = ?2 WHERE id = ?1",
	    HD_INT(id), HD_TEXT(range));
}

/* ---- its process ------------------------------------------------------- */

int
hd_autorun_turn_process_set(hd_store *st, int64_t id, const char *host,
    const char *boot, int64_t pid, int64_t start, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE autorun_turns SET run_host = ?2, run_boot = ?3,"
	    " run_pid = ?4, run_start = ?5"
	    " WHERE id = ?1 AND status = 'running'",
	    HD_INT(id), HD_TEXT(host), HD_TEXT(boot), HD_INT(pid),
	    HD_INT(start));
}

/* Columns run_host, run_boot, run_pid, run_start. */
static void
process_fill(void *elem, hd_stmt *s)
{
	hd_autorun_process *out = elem;
	const char *host = hd_stmt_text(s, 0), *boot = hd_stmt_text(s, 1);

	snprintf(out->host, sizeof(out->host), "%s", host != NULL ? host : "");
	snprintf(out->boot, sizeof(out->boot), "%s", boot != NULL ? boot : "");
	out->pid = hd_stmt_int(s, 2);
	out->start = hd_stmt_int(s, 3);
}

int
hd_autorun_turn_process(int *found, hd_autorun_process *out, hd_store *st,
    int64_t id, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*found = 0;
	memset(out, 0, sizeof(*out));
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT run_host, run_boot, run_pid, run_start"
		 " FROM autorun_turns WHERE id = ?1 AND status = 'running'"
		 " AND run_pid IS NOT NULL",
		 HD_INT(id))) < 0)
		return rc;
	return hd_autorun__row(found, out, st, s, process_fill, err);
}

/* ---- ending (2) -------------------------------------------------------- */

int
hd_autorun_turn_end(int *ended, hd_store *st, int64_t id, const char *owner,
    const char *error, hd_err *err)
{
	int rc;

	*ended = 0;
	if ((rc = hd_store_run(st, err,
		 "UPDATE autorun_turns SET status = ?3, finished_at = ?4,"
		 " error = ?5 WHERE id = ?1 AND status = 'running'"
		 " AND owner = ?2",
		 HD_INT(id), HD_TEXT(owner),
		 HD_TEXT(error != NULL ? "failed" : "done"),
		 HD_INT(hd_now_ms()), HD_TEXT(error))) < 0)
		return rc;
	*ended = hd_store_changes(st) != 0;
	return 0;
}

int
hd_autorun_turn_progress(hd_store *st, int64_t id, int64_t progress,
    int64_t post_seq, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE autorun_turns SET progress = ?2, post_seq = ?3"
	    " WHERE id = ?1",
	    HD_INT(id), HD_INT(progress),
	    HD_INT_OR_NULL(post_seq > 0, post_seq));
}

int
hd_autorun_turn_owned(int *found, char **team, char **agent,
    char **delivered, hd_store *st, int64_t id, const char *owner,
    hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*found = 0;
	*team = *agent = *delivered = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT team_id, agent_id, delivered FROM autorun_turns"
		 " WHERE id = ?1 AND status = 'running' AND owner IS ?2",
		 HD_INT(id), HD_TEXT(owner))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		*team = hd_store_col_dup(s, 0);
		*agent = hd_store_col_dup(s, 1);
		*delivered = hd_store_col_dup(s, 2);
	}
	hd_store_reset(s);
	if (src != HD_ROW) {
		if (src != HD_DONE)
			return hd_store_sqlerr(st, src, err);
		return 0; /* finished, or someone else's now */
	}
	if (*team == NULL || *agent == NULL) {
		free(*team);
		free(*agent);
		free(*delivered);
		*team = *agent = *delivered = NULL;
		return hd_autorun__oom(err);
	}
	*found = 1;
	return 0;
}

int
hd_autorun_turn_abort(hd_store *st, int64_t id, hd_err *err)
{
	return hd_store_run(st, err,
	    "UPDATE autorun_turns SET status = 'aborted', finished_at = ?2"
	    " WHERE id = ?1",
	    HD_INT(id), HD_INT(hd_now_ms()));
}

/* ---- as JSON ----------------------------------------------------------- */

#define TURN_COLS                                                              \
	"id, status, reasons, started_at, finished_at, progress, post_seq,"    \
	" error"

static json_t *
turn_row(hd_stmt *s)
{
	const char *r = hd_stmt_text(s, 2);
	json_t *reasons = r != NULL ? json_loads(r, 0, NULL) : NULL;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id",
	    hd_autorun__col_int(s, 0), "status", hd_autorun__col_text(s, 1),
	    "reasons", reasons != NULL ? reasons : json_array(), "started_at",
	    hd_autorun__col_int(s, 3), "finished_at",
	    hd_autorun__col_int(s, 4), "progress", hd_autorun__col_int(s, 5),
	    "post_seq", hd_autorun__col_int(s, 6), "error",
	    hd_autorun__col_text(s, 7));
}

static void
turn_fill(void *elem, hd_stmt *s)
{
	*(json_t **)elem = turn_row(s);
}

/* The first row of sql (?1 = agent) as a turn, or null. */
static int
one_turn(
    json_t **out, hd_store *st, const char *sql, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc;

	*out = NULL;
	if ((rc = hd_store_query(st, &s, err, sql, HD_TEXT(agent))) < 0)
		return rc;
	rc = hd_autorun__row(NULL, out, st, s, turn_fill, err);
	if (*out == NULL)
		*out = json_null();
	return rc;
}

int
hd_autorun_turns_json(json_t **running, json_t **last, hd_store *st,
    const char *agent, hd_err *err)
{
	int rc;

	*last = NULL;
	if ((rc = one_turn(running, st,
		 "SELECT " TURN_COLS " FROM autorun_turns"
		 " WHERE agent_id = ?1 AND status = 'running'",
		 agent, err)) < 0)
		return rc;
	return one_turn(last, st,
	    "SELECT " TURN_COLS " FROM autorun_turns"
	    " INDEXED BY autorun_turns_agent WHERE agent_id = ?1"
	    " AND status != 'running' ORDER BY id DESC LIMIT 1",
	    agent, err);
}
