/*
 * state.c -- the team-state snapshot for a leader's context (SPEC 6):
 * the team, its members and its task counts, read together. Owns no
 * table; reads through the team and board modules.
 *  (1) A pending shutdown's timeout is evaluated before the read, so a
 *      team whose shutdown ran out of time reads as active.
 *  (2) team, members and counts come from one read transaction: one
 *      snapshot, never a mix of two moments.
 *  (3) The TEAM STATE block shows no member's role or config, so
 *      hd_team_state reads the roster (hd_agent_roster: ids and the
 *      leader, from the team's index) rather than the members' rows: it is
 *      on every leader turn of an exchange.
 *  (4) A member's TEAM CONTEXT (hd_team_context) is read in one read
 *      transaction too: the roster with roles and the member's own open
 *      tasks (claimed or in_progress), oldest first.
 *  (5) What each member holds is read in the same snapshot, member by
 *      member through the owner index (a team has few members, a board
 *      many tasks), with the moment of the read, so the block's "last
 *      active" and its statuses are of one instant.
 * Callers: the CLI (team state), the turn prompt (src/engine/prompt.c:
 * the leader's starts with the TEAM STATE block, a member's with its TEAM
 * CONTEXT) and the MCP team_state tool.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/buf.h>
#include <huddle/shutdown.h>
#include <huddle/team_state.h>
#include <huddle/util.h>

#include <store/store.h>

struct snap_ctx {
	const char *team;
	int roster; /* members without their runtime configs (3) */
	hd_team_snapshot snap;
};

struct held_ctx {
	hd_team_snapshot *snap;
	const char *owner;
	size_t cap;
};

static int
held_add(void *ctx, int64_t id, const char *subject, const char *status,
    hd_err *err)
{
	struct held_ctx *h = ctx;
	hd_team_snapshot *s = h->snap;
	hd_held_task *grown, *t;

	if (s->nheld == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 8;
		if ((grown = realloc(s->held, h->cap * sizeof(*grown))) ==
		    NULL)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		s->held = grown;
	}
	t = &s->held[s->nheld];
	t->id = id;
	t->subject = strdup(subject);
	t->status = strdup(status);
	t->owner = strdup(h->owner);
	s->nheld++;
	if (t->subject == NULL || t->status == NULL || t->owner == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

static int
snap_txn(hd_store *st, void *payload, hd_err *err)
{
	struct snap_ctx *c = payload;
	struct held_ctx h;
	size_t i;
	int rc;

	hd_team_snapshot_dispose(&c->snap);
	if ((rc = hd_team_get(&c->snap.team, st, c->team, err)) < 0 ||
	    (rc = (c->roster ? hd_agent_roster : hd_agent_list)(
		 &c->snap.members, st, c->team, err)) < 0 ||
	    (rc = hd_board_counts(&c->snap.counts, st, c->team, err)) < 0)
		return rc;
	/* (5) */
	memset(&h, 0, sizeof(h));
	h.snap = &c->snap;
	for (i = 0; i < c->snap.members.n; i++) {
		h.owner = c->snap.members.items[i].id;
		if ((rc = hd_board_each_open(
			 st, c->team, h.owner, held_add, &h, err)) < 0)
			return rc;
	}
	c->snap.read_at = hd_now_ms();
	return 0;
}

static int
snapshot_get(hd_team_snapshot *out, hd_store *st, const char *team, int roster,
    hd_err *err)
{
	struct snap_ctx c;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.team = team;
	c.roster = roster;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if ((rc = hd_shutdown_expire(st, team, err)) < 0)
		return rc;
	if ((rc = hd_store_read(st, snap_txn, &c, err)) < 0) {
		hd_team_snapshot_dispose(&c.snap);
		return rc;
	}
	*out = c.snap;
	return 0;
}

int
hd_team_snapshot_get(
    hd_team_snapshot *out, hd_store *st, const char *team, hd_err *err)
{
	return snapshot_get(out, st, team, 0, err);
}

void
hd_team_snapshot_dispose(hd_team_snapshot *s)
{
	size_t i;

	if (s == NULL)
		return;
	hd_team_free(s->team);
	s->team = NULL;
	hd_agents_dispose(&s->members);
	memset(&s->counts, 0, sizeof(s->counts));
	for (i = 0; i < s->nheld; i++) {
		free(s->held[i].subject);
		free(s->held[i].status);
		free(s->held[i].owner);
	}
	free(s->held);
	s->held = NULL;
	s->nheld = 0;
}

json_t *
hd_team_snapshot_to_json(const hd_team_snapshot *s)
{
	json_t *o = json_object(), *arr = json_array();
	size_t i;

	json_object_set_new(o, "team", hd_team_to_json(s->team));
	for (i = 0; i < s->members.n; i++) {
		json_t *m = hd_agent_to_json(&s->members.items[i]),
		       *tasks = json_array();
		size_t k;

		for (k = 0; k < s->nheld; k++)
			if (strcmp(s->held[k].owner,
				s->members.items[i].id) == 0)
				json_array_append_new(tasks,
				    json_pack("{s:I, s:s, s:s}", "id",
					(json_int_t)s->held[k].id, "subject",
					s->held[k].subject, "status",
					s->held[k].status));
		json_object_set_new(m, "tasks", tasks);
		json_array_append_new(arr, m);
	}
	json_object_set_new(o, "members", arr);
	json_object_set_new(o, "task_counts",
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "pending",
		(json_int_t)s->counts.pending, "in_progress",
		(json_int_t)(s->counts.claimed + s->counts.in_progress),
		"completed", (json_int_t)s->counts.completed, "claimed",
		(json_int_t)s->counts.claimed, "failed",
		(json_int_t)s->counts.failed, "cancelled",
		(json_int_t)s->counts.cancelled));
	return o;
}

int
hd_team_state(char **out, hd_store *st, const char *team, hd_err *err)
{
	hd_team_snapshot s;
	int rc;

	*out = NULL;
	if ((rc = snapshot_get(&s, st, team, 1, err)) < 0)
		return rc;
	rc = hd_team_state_render(out, &s, err);
	hd_team_snapshot_dispose(&s);
	return rc;
}

/* ---- a member's team context (4) ---- */

struct ctx_ctx {
	const char *team;
	const char *agent;
	hd_team *t;
	hd_agents members; /* configs left as text: never run here */
	char **texts;
	hd_buf *b;
	size_t open;
};

static void
ctx_dispose(struct ctx_ctx *c)
{
	hd_team_free(c->t);
	c->t = NULL;
	hd_agent_config_texts_free(c->texts, c->members.n);
	c->texts = NULL;
	hd_agents_dispose(&c->members);
}

static int
ctx_task(void *ctx, int64_t id, const char *subject, const char *status,
    hd_err *err)
{
	struct ctx_ctx *c = ctx;

	(void)err;
	if (c->open++ == 0)
		hd_buf_puts(c->b, "Your open tasks:\n");
	hd_buf_puts(c->b, "  - #");
	hd_buf_put_i64(c->b, id);
	hd_buf_puts(c->b, " \"");
	hd_buf_puts(c->b, subject);
	hd_buf_puts(c->b, "\" (");
	hd_buf_puts(c->b, status);
	hd_buf_puts(c->b, ")\n");
	return 0;
}

static int
ctx_txn(hd_store *st, void *payload, hd_err *err)
{
	struct ctx_ctx *c = payload;
	size_t i;
	int rc;

	ctx_dispose(c);
	hd_buf_reset(c->b);
	c->open = 0;
	if ((rc = hd_team_get(&c->t, st, c->team, err)) < 0 ||
	    (rc = hd_agent_roster_configs(
		 &c->members, &c->texts, st, c->team, err)) < 0)
		return rc;
	hd_buf_puts(c->b, "=== TEAM CONTEXT ===\nTeam: ");
	hd_buf_puts(c->b, c->t->name);
	hd_buf_puts(c->b, " (");
	hd_buf_puts(c->b, c->t->id);
	hd_buf_puts(c->b, ")\nLed by: ");
	hd_buf_puts(
	    c->b, c->t->leader_agent_id ? c->t->leader_agent_id : "nobody");
	hd_buf_puts(c->b, "\nMembers:\n");
	for (i = 0; i < c->members.n; i++) {
		const hd_agent *a = &c->members.items[i];

		hd_buf_puts(c->b, "  - ");
		hd_buf_puts(c->b, a->id);
		hd_buf_puts(c->b, strcmp(a->id, c->agent) == 0 ? " (you)"
				  : a->is_leader		? " (Lead)"
								: "");
		if (a->role != NULL && a->role[0] != '\0') {
			hd_buf_puts(c->b, ": ");
			hd_buf_puts(c->b, a->role);
		}
		hd_buf_putc(c->b, '\n');
	}
	if ((rc = hd_board_each_open(
		 st, c->team, c->agent, ctx_task, c, err)) < 0)
		return rc;
	if (c->open == 0)
		hd_buf_puts(c->b, "Your open tasks: none\n");
	hd_buf_puts(c->b, "====================\n");
	return 0;
}

int
hd_team_context(char **out, hd_store *st, const char *team, const char *agent,
    hd_err *err)
{
	struct ctx_ctx c;
	hd_buf b = HD_BUF_INIT(0);
	int rc;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.team = team;
	c.agent = agent;
	c.b = &b;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	if ((rc = hd_store_read(st, ctx_txn, &c, err)) < 0)
		goto done;
	if (hd_buf_failed(&b))
		rc = hd_buf_error(&b, "team context", err);
	else if ((*out = hd_buf_detach(&b)) == NULL)
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
done:
	hd_buf_dispose(&b);
	ctx_dispose(&c);
	return rc;
}
