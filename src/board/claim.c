/*
 * claim.c -- pending -> claimed: claim, assign (by the leader or a user),
 * assign_auto (the board picks the member), delegate (create + claim +
 * the assignee's message) and auto_claim (the next ready task).
 *  (1) A claim is one conditional UPDATE ... RETURNING; only a loser
 *      reads the task again, to name the reason (board.c (4)).
 *  (2) Auto-claim picks and claims in that same single statement;
 *      auto-assign picks the member and claims for it in one
 *      transaction, on the counts it read there (board.c (4)).
 *  (3) Delegation is create, claim and the message in one transaction; a
 *      refusal of any step rolls back the others (board.c (8)).
 * Callers: the CLI (task claim, assign, delegate), MCP tools, HTTP
 * routes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "tasks_int.h"

/* ---- claim ------------------------------------------------------------------
 */

/* Why task id could not be claimed by agent (NULL: not asked): called
 * only for a loser, inside the same transaction, so what it reads is
 * what the UPDATE saw. */
static int
claim_refusal(hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	hd_task *t = NULL;
	hd_buf ids = HD_BUF_INIT(0);
	size_t i;
	int rc;

	/* its critic never owns it (verify.c (2)) */
	if (agent != NULL &&
	    (rc = hd_board__verify_not_critic(st, id, agent, err)) < 0)
		return rc;
	if ((rc = hd_board__task_load(&t, st, id, 0, err)) < 0)
		return rc;
	if (t == NULL)
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", id);
	else if (t->owner != NULL &&
		 (strcmp(t->status, "claimed") == 0 ||
		     strcmp(t->status, "in_progress") == 0 ||
		     strcmp(t->status, "pending") == 0))
		rc = hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 " is already claimed by %s", id, t->owner);
	else if (strcmp(t->status, "pending") == 0 && t->nblocked_by > 0) {
		for (i = 0; i < t->nblocked_by; i++)
			hd_buf_printf(&ids, "%s%" PRId64, i ? ", " : "",
			    t->blocked_by[i]);
		if (hd_buf_failed(&ids))
			rc = oom(err);
		else
			rc = hd_err_set(err, HD_EREFUSED,
			    "task %" PRId64 " is blocked by %s", id,
			    hd_buf_cstr(&ids));
	} else
		rc = hd_err_set(
		    err, HD_EREFUSED, "task %" PRId64 " is %s", id, t->status);
	hd_buf_dispose(&ids);
	hd_task_free(t);
	return rc;
}

/* The one conditional UPDATE that decides a claim. */
static int
claim_update(
    hd_task **out, hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "UPDATE tasks SET status = 'claimed', owner = ?2,"
		 " claimed_at = ?3, updated_at = ?3"
		 " WHERE id = ?1 AND status = 'pending' AND owner IS NULL"
		 " AND NOT EXISTS (SELECT 1 FROM task_verify v"
		 "   WHERE v.task_id = ?1 AND v.critic = ?2)"
		 " AND NOT " UNFINISHED_DEP("tasks") " RETURNING " TASK_COLS,
		 HD_INT(id), HD_TEXT(agent), HD_INT(hd_now_ms()))) < 0)
		return rc;
	return hd_board__task_step(out, st, s, err);
}

/* task_claimed {owner, by, auto}: auto is true when the board chose,
 * the task (auto-claim) or the member (auto-assign); a delegation adds
 * "delegated": true. */
static void
claim_event(hd_store *st, const hd_task *t, const char *by, int automatic,
    int delegated)
{
	char data[224];

	/* owner and by passed the slug rule (or are "user"): printed
	 * directly, without a json_t to build and dump on the claim path */
	snprintf(data, sizeof(data),
	    "{\"owner\":\"%s\",\"by\":\"%s\",\"auto\":%s%s}", t->owner,
	    is_user(by) ? HD_BOARD_USER : by, automatic ? "true" : "false",
	    delegated ? ",\"delegated\":true" : "");
	hd_events_append_raw(
	    st, "task_claimed", t->team_id, t->id, event_agent(by), data);
}

/* Refuse unless b->actor may assign in team: the leader or a user. */
static int
assign_allowed(hd_store *st, board_txn *b, const char *team, hd_err *err)
{
	int rc;

	free(b->leader);
	if ((rc = hd_board__actor_member(st, team, b->actor, err)) < 0 ||
	    (rc = hd_board__team_leader(&b->leader, st, team, err)) < 0)
		return rc;
	if (!is_user(b->actor) &&
	    (b->leader == NULL || strcmp(b->leader, b->actor) != 0))
		return hd_err_set(err, HD_EREFUSED,
		    "only the team leader or a user may assign task %" PRId64
		    ", not %s",
		    b->id, b->actor);
	return 0;
}

/* Refuse, as a lost claim is told, unless task id is ready: auto-assign
 * names no member for a task nobody could claim. */
static int
claim_ready(hd_store *st, int64_t id, hd_err *err)
{
	hd_task *t = NULL;
	int rc, ready;

	if ((rc = hd_board__task_load(&t, st, id, 0, err)) < 0)
		return rc;
	ready = t != NULL && strcmp(t->status, "pending") == 0 &&
		t->owner == NULL && t->nblocked_by == 0;
	hd_task_free(t);
	return ready ? 0 : claim_refusal(st, id, NULL, err);
}

/* open[i]: the claimed and in_progress tasks of team owned by m's item i,
 * from one GROUP BY. */
static int
open_counts(int64_t *open, const hd_agents *m, hd_store *st,
    const char *team, hd_err *err)
{
	hd_stmt *s;
	const char *owner;
	size_t i;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT owner, COUNT(*) FROM tasks WHERE team_id = ?"
		 " AND status IN ('claimed', 'in_progress') GROUP BY owner",
		 HD_TEXT(team))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		owner = hd_stmt_text(s, 0);
		for (i = 0; owner != NULL && i < m->n; i++)
			if (strcmp(m->items[i].id, owner) == 0)
				open[i] = hd_stmt_int(s, 1);
	}
	if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* How many members a refused auto-assign names with their status. */
#define PICK_LISTED 5

/*
 * Pick the member task b->id goes to (hd_board_assign_auto) into *b->pick
 * and point b->agent at it. The candidates are the members other than
 * the leader, or the leader when it is the only member; of the idle ones
 * the one with the fewest open tasks wins, then the lowest id.
 */
static int
pick_member(hd_store *st, board_txn *b, const char *team, hd_err *err)
{
	hd_board_pick *p = b->pick;
	hd_agents m;
	hd_buf busy = HD_BUF_INIT(0);
	const hd_agent *a;
	int64_t *open = NULL;
	size_t i, best = SIZE_MAX, ntied = 0, ncand = 0, nbusy = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = hd_agent_list(&m, st, team, err)) < 0)
		return rc;
	if (m.n > 0 && (open = calloc(m.n, sizeof(*open))) == NULL) {
		rc = oom(err);
		goto done;
	}
	if ((rc = open_counts(open, &m, st, team, err)) < 0)
		goto done;
	for (i = 0; i < m.n; i++) {
		a = &m.items[i];
		if (a->is_leader && m.n > 1)
			continue;
		ncand++;
		if (strcmp(a->status, "idle") != 0) {
			if (nbusy++ < PICK_LISTED)
				hd_buf_printf(&busy, "%s%s: %s",
				    nbusy > 1 ? ", " : "", a->id, a->status);
		} else if (best == SIZE_MAX || open[i] < open[best]) {
			best = i;
			ntied = 1;
		} else if (open[i] == open[best]) {
			ntied++;
			if (strcmp(a->id, m.items[best].id) < 0)
				best = i;
		}
	}
	if (nbusy > PICK_LISTED)
		hd_buf_printf(&busy, " and %zu more", nbusy - PICK_LISTED);
	if (ncand == 0)
		rc = hd_err_set(err, HD_EREFUSED,
		    "no member in team %s to assign task %" PRId64 " to", team,
		    b->id);
	else if (hd_buf_failed(&busy))
		rc = oom(err);
	else if (best == SIZE_MAX)
		rc = hd_err_set(err, HD_EREFUSED,
		    "no idle member in team %s to assign task %" PRId64
		    " to (%s)",
		    team, b->id, hd_buf_cstr(&busy));
	if (rc < 0)
		goto done;
	a = &m.items[best];
	snprintf(p->agent, sizeof(p->agent), "%s", a->id);
	p->open_tasks = open[best];
	snprintf(p->reason, sizeof(p->reason), "idle, %" PRId64 " open task%s",
	    open[best], open[best] == 1 ? "" : "s");
	if (ntied > 1)
		snprintf(p->reason + strlen(p->reason),
		    sizeof(p->reason) - strlen(p->reason),
		    ", lowest id of %zu tied", ntied);
	else if (a->is_leader)
		snprintf(p->reason + strlen(p->reason),
		    sizeof(p->reason) - strlen(p->reason),
		    ", the team's only member");
	b->agent = p->agent;
done:
	free(open);
	hd_buf_dispose(&busy);
	hd_agents_dispose(&m);
	return rc;
}

static int
board_claim_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	char *team = NULL;
	int rc;

	if ((rc = hd_board__task_team(&team, st, b->id, err)) < 0)
		goto done;
	/* the leader or a user, for someone else */
	if (b->assign && (rc = assign_allowed(st, b, team, err)) < 0)
		goto done;
	if (b->pick != NULL) {
		if ((rc = claim_ready(st, b->id, err)) < 0 ||
		    (rc = pick_member(st, b, team, err)) < 0)
			goto done;
	} else if ((rc = hd_team_member_check(st, team, b->agent, err)) < 0)
		goto done;
	if ((rc = claim_update(&b->task, st, b->id, b->agent, err)) < 0)
		goto done;
	if (b->task == NULL) {
		rc = claim_refusal(st, b->id, b->agent, err);
		goto done;
	}
	if ((rc = hd_board__task_load_deps(st, b->task, err)) < 0)
		goto done;
	claim_event(st, b->task, b->actor, b->pick != NULL, 0);
	b->changed = 1;
done:
	free(team);
	return rc;
}

int
hd_board_claim(
    hd_task **out, hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.agent = agent;
	b.actor = agent;
	return hd_board__write_task(
	    out, st, board_claim_txn, &b, HD_BOARD__CLAIMED, err);
}

int
hd_board_assign(hd_task **out, hd_store *st, int64_t id, const char *agent,
    const char *actor, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.agent = agent;
	b.actor = is_user(actor) ? HD_BOARD_USER : actor;
	b.assign = 1;
	return hd_board__write_task(
	    out, st, board_claim_txn, &b, HD_BOARD__ASSIGNED, err);
}

int
hd_board_assign_auto(hd_task **out, hd_board_pick *pick, hd_store *st,
    int64_t id, const char *actor, hd_err *err)
{
	hd_board_pick mine;
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (pick == NULL)
		pick = &mine;
	memset(pick, 0, sizeof(*pick));
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.actor = is_user(actor) ? HD_BOARD_USER : actor;
	b.assign = 1;
	b.pick = pick;
	if ((rc = hd_board__write_task(
		 out, st, board_claim_txn, &b, HD_BOARD__ASSIGNED, err)) < 0)
		memset(pick, 0, sizeof(*pick)); /* nobody was picked */
	return rc;
}

/* Refuse a delegation to an agent that cannot take work: in error,
 * asked to shut down or shut down, with why when it is known. */
static int
delegate_assignee(hd_store *st, const char *team, const char *agent,
    hd_err *err)
{
	hd_agent *a = NULL;
	int rc;

	if ((rc = hd_team_member_check(st, team, agent, err)) < 0 ||
	    (rc = hd_agent_get(&a, st, agent, err)) < 0)
		return rc;
	if (strcmp(a->status, "error") == 0 ||
	    strcmp(a->status, "shutdown_requested") == 0 ||
	    strcmp(a->status, "shutdown") == 0) {
		if (a->status_reason != NULL && a->status_reason[0] != '\0')
			rc = hd_err_set(err, HD_EREFUSED,
			    "cannot delegate to %s: it is in %s (%.256s)", agent,
			    a->status, a->status_reason);
		else
			rc = hd_err_set(err, HD_EREFUSED,
			    "cannot delegate to %s: it is in %s", agent,
			    a->status);
	}
	hd_agent_free(a);
	return rc;
}

/* Create, claim for b->agent and tell it, in one transaction (8). */
static int
board_delegate_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	const char *team = b->spec->team;
	hd_task *t = NULL;
	int rc;

	hd_task_free(b->task); /* a retried transaction starts over */
	b->task = NULL;
	free(b->leader);
	b->leader = NULL;
	if ((rc = hd_team_exists(st, team, err)) < 0 ||
	    (rc = hd_board__actor_member(st, team, b->actor, err)) < 0 ||
	    (rc = hd_board__team_leader(&b->leader, st, team, err)) < 0)
		return rc;
	if (!is_user(b->actor) &&
	    (b->leader == NULL || strcmp(b->leader, b->actor) != 0))
		return hd_err_set(err, HD_EREFUSED,
		    "only the team leader or a user may delegate, not %s",
		    b->actor);
	if ((rc = delegate_assignee(st, team, b->agent, err)) < 0 ||
	    (rc = hd_board__create_txn(st, b, err)) < 0)
		return rc;
	b->id = b->task->id;
	if ((rc = claim_update(&t, st, b->id, b->agent, err)) < 0)
		return rc;
	if (t == NULL) /* a dependency not completed yet */
		return claim_refusal(st, b->id, b->agent, err);
	hd_task_free(b->task);
	b->task = t;
	if ((rc = hd_board__task_load_deps(st, b->task, err)) < 0)
		return rc;
	claim_event(st, b->task, b->actor, 0, 1);
	return hd_board__delegate_note(st, b->task, b->actor, err);
}

int
hd_board_delegate(hd_task **out, hd_store *st, const hd_task_spec *spec,
    const char *assignee, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_board__create_check(spec, err)) < 0 ||
	    (rc = hd_slug_check("agent", assignee, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.spec = spec;
	b.agent = assignee;
	b.actor = is_user(spec->created_by) ? HD_BOARD_USER : spec->created_by;
	return hd_board__write_task(
	    out, st, board_delegate_txn, &b, HD_BOARD__DELEGATED, err);
}

static int
board_auto_claim_txn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	hd_stmt *s;
	int rc;

	if ((rc = hd_team_member_check(st, b->team, b->agent, err)) < 0)
		return rc;
	/*
	 * Pick and claim in one statement. It runs inside BEGIN IMMEDIATE,
	 * so no other writer can take the chosen row between the subselect
	 * and the update: no row means no ready task, and nothing is retried.
	 * The outer WHERE restates readiness anyway, so the statement is
	 * correct on its own.
	 */
	if ((rc = hd_store_query(st, &s, err,
		 "UPDATE tasks SET status = 'claimed', owner = ?2,"
		 " claimed_at = ?3, updated_at = ?3"
		 " WHERE id = (SELECT t.id FROM tasks t WHERE t.team_id = ?1"
		 "   AND t.status = 'pending' AND t.owner IS NULL"
		 "   AND NOT EXISTS (SELECT 1 FROM task_verify v"
		 "     WHERE v.task_id = t.id AND v.critic = ?2)"
		 "   AND NOT " UNFINISHED_DEP(
		     "t") "   ORDER BY t.priority DESC, t.id LIMIT 1)"
			  " AND status = 'pending' AND owner IS NULL"
			  " AND NOT " UNFINISHED_DEP(
			      "tasks") " RETURNING " TASK_COLS,
		 HD_TEXT(b->team), HD_TEXT(b->agent), HD_INT(hd_now_ms()))) < 0)
		return rc;
	if ((rc = hd_board__task_step(&b->task, st, s, err)) < 0)
		return rc;
	if (b->task == NULL)
		return hd_err_set(
		    err, HD_ENOTFOUND, "no ready task in team %s", b->team);
	if ((rc = hd_board__task_load_deps(st, b->task, err)) < 0)
		return rc;
	claim_event(st, b->task, b->agent, 1, 0);
	b->changed = 1;
	return 0;
}

int
hd_board_auto_claim(hd_task **out, hd_store *st, const char *team,
    const char *agent, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.team = team;
	b.agent = agent;
	b.actor = agent;
	return hd_board__write_task(
	    out, st, board_auto_claim_txn, &b, HD_BOARD__CLAIMED, err);
}
