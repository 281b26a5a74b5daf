/*
 * conversation.c -- the conversation engine's transactions (SPEC 7):
 * starting a conversation, claiming a delivery, putting it back, and a
 * delivery's prompt; the rendering of a conversation (aggregate,
 * transcript) and the loop guard setting; and the helpers the engine's
 * other transaction files share (conv_record.c records a reply,
 * conv_adopt.c finishes and takes over). The rows are the domain
 * module's (src/conversation/, conversation_store.h): every statement is
 * a call there, grouped here into transactions. The threads that drive
 * them are in conv_engine.c.
 *
 * A delivery is one message for one agent: the user's, or a mention from
 * a reply. Its states, each transition one conditional UPDATE of the
 * queue (conversation_store.h (2)), made here:
 *   queued -> running     hd_conv__claim (the agent runs nothing else)
 *   running -> queued     hd_conv__release, hd_conv__adopt (turn cut short)
 *   running -> done       hd_conv__record (with its one reply)
 * A conversation: running -> completed in hd_conv__finish, once pending
 * is 0 (the replies are all in) and its transcript is written; running ->
 * cancelled in cancel.c, with its queued and running deliveries (cancel.c
 * (3)). A conversation with a cancel request gets no new claim here.
 *  (1) Per agent, at most one delivery is running, across every process:
 *      the claim checks it inside BEGIN IMMEDIATE. Deliveries are claimed
 *      oldest first (id order = arrival order) among the conversations
 *      the claiming engine owns.
 *  (2) A delivery gets exactly one reply: the reply row (UNIQUE on
 *      delivery_id), the delivery done, pending and the new deliveries
 *      commit together, and only from running, only by the owner
 *      (conv_record.c).
 *  (3) pending = deliveries not done, kept as a counter (SPEC 7); the
 *      reply transaction adds the mentions, then takes the answered one
 *      off.
 *  (4) Only the engine named in conversations.owner works on a
 *      conversation; another engine takes it over only by
 *      compare-and-set on the owner it saw, after finding that engine
 *      gone (conv_engine.c, conv_adopt.c).
 *  (5) A room post that fails (an agent no longer in the team) never
 *      loses the reply: it runs under a savepoint and is logged
 *      (hd_conv__room_post).
 *  (6) A running delivery records where its runtime's process runs (host,
 *      boot, the pid that is its process group's id, its start time;
 *      hd_conv__running, once the command started); every transition out
 *      of running clears it. Adopting a dead engine's conversation kills
 *      each such group on this host before its delivery is queued again:
 *      the command itself died with its engine (proc.c (9)), and what it
 *      started must not act while the delivery runs a second time.
 * Callers: conv_engine.c, conv_record.c and conv_adopt.c (the helpers),
 * sv_turn.c (hd_conv__agent_busy), the surfaces (rendering, the loop
 * guard) through conversation.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/autorun_turn.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/prompt.h>
#include <huddle/room.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "conversation_int.h"

#define HD_LOG_COMPONENT "conversation"
#include <huddle/log.h>

#define CAP_NOTE "\n[truncated: the whole reply is in the conversation]"

/* ---- small helpers, shared with conv_record.c and conv_adopt.c ---------- */

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* s cut to at most max bytes (at a character boundary) with CAP_NOTE, for
 * the room and the event log; s itself when it fits. */
char *
hd_conv__cap_text(const char *s, size_t max)
{
	size_t len = strlen(s), keep;
	char *out;

	if (len <= max)
		return strdup(s);
	keep = max - strlen(CAP_NOTE);
	while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	if ((out = malloc(keep + strlen(CAP_NOTE) + 1)) == NULL)
		return NULL;
	memcpy(out, s, keep);
	memcpy(out + keep, CAP_NOTE, strlen(CAP_NOTE) + 1);
	return out;
}

/* Post to the room under a savepoint (5); failures are logged only.
 * Returns the post's seq, or 0 when there is none. */
int64_t
hd_conv__room_post(hd_store *st, const char *team, const char *kind,
    const char *author, const char *body)
{
	hd_err perr = HD_ERR_INIT;
	char *capped = hd_conv__cap_text(body, HD_ROOM_BODY_MAX);
	hd_post *p = NULL;
	int64_t seq = 0;

	if (capped == NULL || hd_store_savepoint(st, &perr) < 0) {
		free(capped);
		hd_log_warn("room post for %s skipped: %s", team,
		    capped == NULL ? "out of memory" : perr.msg);
		return 0;
	}
	if (hd_room_post(&p, st, team, kind, author, capped, &perr) < 0) {
		hd_log_warn("room post by %s in %s skipped: %s", author, team,
		    perr.msg);
		hd_store_savepoint_end(st, 0, NULL);
	} else {
		seq = p->seq;
		hd_store_savepoint_end(st, 1, NULL);
	}
	hd_post_free(p);
	free(capped);
	return seq;
}

/* What a turn means for the agent's status (activity.h): its begin, its
 * end (failure: the reason, or NULL), or its abort. team NULL: the
 * agent's own (read back). Failures are logged: a status is narration,
 * not the conversation's state. */
void
hd_conv__activity(hd_store *st, const char *team, const char *agent,
    enum hd_conv_act step, const char *failure)
{
	hd_err aerr = HD_ERR_INIT;
	hd_agent *a = NULL;
	int rc;

	if (team == NULL) {
		if (hd_agent_get(&a, st, agent, &aerr) < 0 || a->team_id == NULL)
			goto done;
		team = a->team_id;
	}
	switch (step) {
	case HD_CONV_ACT_BEGIN:
		rc = hd_activity_turn_begin(NULL, st, team, agent, &aerr);
		break;
	case HD_CONV_ACT_END:
		rc = hd_activity_turn_end(st, team, agent, failure, &aerr);
		break;
	case HD_CONV_ACT_CHAIN:
		rc = hd_activity_turn_chain(st, team, agent, &aerr);
		break;
	default:
		rc = hd_activity_turn_abort(st, team, agent, &aerr);
	}
	if (rc < 0)
		hd_log_warn("agent %s: status after its turn: %s", agent,
		    aerr.msg);
done:
	hd_agent_free(a);
}

/* A write transaction of the engine me, under its lock (hd_conv_owner). */
int
hd_conv__owner_write(hd_store *st, const hd_conv_owner *me, hd_store_txn_fn fn,
    void *payload, hd_err *err)
{
	int rc;

	if (me->wl != NULL)
		pthread_mutex_lock(me->wl);
	rc = hd_store_write(st, fn, payload, err);
	if (me->wl != NULL)
		pthread_mutex_unlock(me->wl);
	return rc;
}


int
hd_conversation_aggregate(char **out, const hd_conversation *c, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0);
	char *shown = NULL;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (c->nreplies == 1) {
		if ((*out = strdup(c->replies[0].body)) == NULL)
			return oom(err);
		return 0;
	}
	for (i = 0; i < c->nreplies; i++) {
		if ((rc = hd_mentions_display(
			 &shown, c->replies[i].body, err)) < 0)
			goto done;
		if (i > 0)
			hd_buf_puts(&b, "\n\n------\n\n");
		hd_buf_printf(&b, "@%s: %s", c->replies[i].agent, shown);
		free(shown);
		shown = NULL;
	}
	if (hd_buf_failed(&b))
		rc = hd_buf_error(&b, "response", err);
	else if ((*out = strdup(hd_buf_cstr(&b))) == NULL)
		rc = oom(err);
done:
	hd_buf_dispose(&b);
	return rc;
}

int
hd_conversation_transcript(
    char **out, const hd_conversation *c, const char *team_name, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(0);
	char date[32];
	size_t i;

	*out = NULL;
	hd_time_iso(date, sizeof(date), c->created_at);
	hd_buf_printf(&b,
	    "# Team Conversation: %s (@%s)\n\nDate: %s\nMessages: %lld\n\n"
	    "## User\n\n%s\n",
	    team_name, c->team_id, date, (long long)c->total_messages,
	    c->message);
	for (i = 0; i < c->nreplies; i++)
		hd_buf_printf(&b, "\n## %s\n\n%s\n", c->replies[i].agent,
		    c->replies[i].body);
	if (hd_buf_failed(&b))
		return hd_buf_error(&b, "transcript", err);
	if ((*out = hd_buf_detach(&b)) == NULL)
		return oom(err);
	return 0;
}

int
hd_conversation_transcript_path(char *out, size_t outlen, const char *home,
    const hd_conversation *c, hd_err *err)
{
	time_t secs = (time_t)(c->created_at / 1000);
	struct tm tm;
	char stamp[32];

	if (hd_slug_check("team", c->team_id, err) < 0)
		return HD_EINVAL;
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if ((size_t)snprintf(out, outlen, "%s/chats/%s/%s-%s.md", home,
		c->team_id, stamp, c->id) >= outlen)
		return hd_err_set(err, HD_ETOOBIG, "transcript path too long");
	return 0;
}

/* ---- the loop guard setting --------------------------------------------- */

static void
max_key(char *out, size_t outlen, const char *team)
{
	snprintf(out, outlen, HD_TEAM_MAX_MESSAGES_KEY, team);
}

int
hd_conversation_max_messages(
    int64_t *out, hd_store *st, const char *team, hd_err *err)
{
	char key[96], *v = NULL;
	int64_t n;
	int rc;

	*out = HD_CONVERSATION_MAX_MESSAGES_DEFAULT;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	max_key(key, sizeof(key), team);
	if ((rc = hd_store_kv_get(&v, st, key, err)) < 0)
		return rc;
	if (v != NULL && hd_parse_i64(&n, v, "max messages", NULL) == 0 &&
	    n >= 1 && n <= HD_CONVERSATION_MAX_MESSAGES_LIMIT)
		*out = n;
	free(v);
	return 0;
}

struct max_txn {
	const char *team;
	int64_t n;
};

static int
max_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct max_txn *m = payload;
	hd_team *t = NULL;
	char key[96], val[32];
	int rc;

	if ((rc = hd_team_get(&t, st, m->team, err)) < 0)
		return rc;
	hd_team_free(t);
	max_key(key, sizeof(key), m->team);
	snprintf(val, sizeof(val), "%lld", (long long)m->n);
	if ((rc = hd_store_kv_put(st, key, val, err)) < 0)
		return rc;
	hd_events_append(st, "team_updated", m->team, 0, NULL,
	    json_pack("{s:I}", "max_messages", (json_int_t)m->n));
	return 0;
}

int
hd_conversation_set_max_messages(
    hd_store *st, const char *team, int64_t n, hd_err *err)
{
	struct max_txn m = {team, n};
	int rc;

	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (n < 1 || n > HD_CONVERSATION_MAX_MESSAGES_LIMIT)
		return hd_err_set(err, HD_EINVAL,
		    "max messages must be between 1 and %d",
		    HD_CONVERSATION_MAX_MESSAGES_LIMIT);
	return hd_store_write(st, max_txn_fn, &m, err);
}

/* ---- starting ------------------------------------------------------------ */

void
hd_conv__drop_mention(hd_store *st, const char *conv, const char *team,
    const char *from, const char *target, const char *reason)
{
	hd_log_info("conversation %s: mention of %s%.64s by %s dropped: %s",
	    conv, target[0] == '#' ? "" : "@", target,
	    from != NULL ? from : "the user", reason);
	hd_events_append(st, "mention_dropped", team, 0, from,
	    json_pack("{s:s, s:s?, s:s, s:s}", "conversation_id", conv, "from",
		from, "target", target, "reason", reason));
}

struct create_txn {
	const hd_conversation_spec *spec;
	const hd_conv_owner *me;
	const char *id;
	int64_t max;
	char agent[64];
};

static int
create_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct create_txn *t = payload;
	const char *team = t->spec->team, *msg = t->spec->message;
	hd_conversation_route_result route;
	hd_team *tm = NULL;
	hd_agents members = {NULL, 0};
	const char **ids = NULL;
	hd_convstore_new row;
	int64_t now = hd_now_ms(), post_seq;
	size_t i;
	int rc;

	if ((rc = hd_team_get(&tm, st, team, err)) < 0)
		goto done;
	if (strcmp(tm->status, "active") != 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "team \"%s\" is not active (status: %s)", tm->id,
		    tm->status);
		goto done;
	}
	if ((rc = hd_agent_list(&members, st, team, err)) < 0)
		goto done;
	if (members.n > 0 && (ids = calloc(members.n, sizeof(*ids))) == NULL) {
		rc = oom(err);
		goto done;
	}
	for (i = 0; i < members.n; i++)
		ids[i] = members.items[i].id;
	hd_conversation_route(
	    &route, msg, tm->id, ids, members.n, tm->leader_agent_id);
	if (route.agent == NULL) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "team \"%s\" has no leader: address an agent with @<agent>",
		    tm->id);
		goto done;
	}
	if (hd_text_blank(msg + route.offset, strlen(msg + route.offset))) {
		rc = hd_err_set(err, HD_EINVAL, "message must not be empty");
		goto done;
	}
	snprintf(t->agent, sizeof(t->agent), "%s", route.agent);

	memset(&row, 0, sizeof(row));
	row.id = t->id;
	row.team = tm->id;
	row.origin = t->spec->origin;
	row.message = msg;
	row.target = t->agent;
	row.max_messages = t->max;
	row.created_at = now;
	row.owner = t->me->token;
	row.owner_pid = t->me->pid;
	row.owner_start = t->me->start;
	if ((rc = hd_convstore_insert(st, &row, err)) < 0)
		goto done;
	/* the user's message in the room: its delivery's prompt says it
	 * once, as the request */
	post_seq = hd_conv__room_post(st, tm->id, "user", NULL, msg);
	if ((rc = hd_convstore_enqueue_user(st, t->id, t->agent,
		 msg + route.offset, now, post_seq, err)) < 0)
		goto done;
	if (route.dropped[0] != '\0')
		hd_conv__drop_mention(st, t->id, tm->id, NULL, route.dropped,
		    "no member of that name: sent to the leader");
	hd_events_append(st, "conversation_started", tm->id, 0, t->agent,
	    json_pack("{s:s, s:s, s:s, s:s, s:i, s:I}", "conversation_id",
		t->id, "agent", t->agent, "message", msg, "origin",
		t->spec->origin, "pending", 1, "max_messages",
		(json_int_t)t->max));
done:
	free(ids);
	hd_agents_dispose(&members);
	hd_team_free(tm);
	return rc;
}

int
hd_conv__create(char *out, char *agent, hd_store *st,
    const hd_conversation_spec *spec, const hd_conv_owner *me, hd_err *err)
{
	struct create_txn t;
	hd_conversation_spec sp = *spec;
	char id[HD_CONVERSATION_ID_LEN + 1];
	size_t len;
	int rc;

	if (sp.origin == NULL)
		sp.origin = "api";
	if ((rc = hd_slug_check("team", sp.team, err)) < 0)
		return rc;
	len = sp.message != NULL ? strlen(sp.message) : 0;
	if (hd_text_blank(sp.message, len))
		return hd_err_set(err, HD_EINVAL, "message must not be empty");
	if (len > HD_MESSAGE_MAX)
		return hd_err_set(err, HD_ETOOBIG,
		    "message is %zu bytes; the limit is %d", len,
		    HD_MESSAGE_MAX);
	if (!hd_utf8_ok(sp.message, len))
		return hd_err_set(
		    err, HD_EINVAL, "message must be valid UTF-8");
	if ((rc = hd_uuid(id, err)) < 0)
		return rc;
	memset(&t, 0, sizeof(t));
	t.spec = &sp;
	t.me = me;
	t.id = id;
	if ((rc = hd_conversation_max_messages(&t.max, st, sp.team, err)) < 0)
		return rc;
	if ((rc = hd_conv__owner_write(st, me, create_txn_fn, &t, err)) < 0)
		return rc;
	memcpy(out, id, sizeof(id));
	snprintf(agent, 64, "%s", t.agent);
	return 0;
}

/* ---- claiming -------------------------------------------------------------
 */

void
hd_conv__claim_dispose(hd_conv_claim *c)
{
	free(c->prompt);
	free(c->blocker_owner);
	memset(c, 0, sizeof(*c));
}

/* The claim, inside a write transaction: *result as hd_conv__claim. */
int
hd_conv__claim_in_txn(int *result, hd_conv_claim *c, hd_store *st,
    const char *agent, const hd_conv_owner *me, hd_err *err)
{
	hd_autorun_running turn;
	int rc, found;

	hd_conv__claim_dispose(c);
	*result = HD_CONV_NONE;
	if ((rc = hd_convstore_next_queued(
		 &found, c, st, agent, me->token, err)) < 0 ||
	    !found)
		return rc;

	/* (1) the agent runs one message at a time, across processes */
	if ((rc = hd_convstore_running_for(&found, c, st, agent, err)) < 0)
		return rc;
	if (found) {
		*result = HD_CONV_BLOCKED;
		return 0;
	}
	/* ... nor while the supervisor runs a turn of it (supervisor.h (1));
	 * the supervisor takes a dead engine's turn back, so the blocker is
	 * left blank: nothing here to take over */
	if ((rc = hd_autorun_turn_running(&found, &turn, st, agent, err)) < 0)
		return rc;
	if (found) {
		*result = HD_CONV_BLOCKED;
		return 0;
	}

	if ((rc = hd_convstore_start(st, c->delivery_id, hd_now_ms(), err)) <
	    0)
		return rc;
	/* an agent whose last turn failed takes work too (then it is
	 * working, and its next good turn makes it idle) */
	hd_conv__activity(st, c->team, agent, HD_CONV_ACT_BEGIN, NULL);
	*result = HD_CONV_CLAIMED;
	return 0;
}

struct claim_txn {
	const char *agent;
	const hd_conv_owner *me;
	hd_conv_claim *c;
	int result;
};

static int
claim_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct claim_txn *t = payload;

	return hd_conv__claim_in_txn(
	    &t->result, t->c, st, t->agent, t->me, err);
}

int
hd_conv__claim(int *result, hd_conv_claim *out, hd_store *st, const char *agent,
    const hd_conv_owner *me, hd_err *err)
{
	struct claim_txn t = {agent, me, out, HD_CONV_NONE};
	int rc;

	memset(out, 0, sizeof(*out));
	rc = hd_conv__owner_write(st, me, claim_txn_fn, &t, err);
	*result = rc < 0 ? HD_CONV_NONE : t.result;
	if (rc < 0 || t.result == HD_CONV_NONE)
		hd_conv__claim_dispose(out);
	return rc;
}

struct release_txn {
	const hd_conv_claim *c;
};

static int
release_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct release_txn *t = payload;
	int rc;

	if ((rc = hd_convstore_requeue(st, t->c->delivery_id, err)) < 0)
		return rc;
	hd_conv__activity(st, t->c->team, t->c->agent, HD_CONV_ACT_ABORT, NULL);
	return 0;
}

int
hd_conv__release(
    hd_store *st, const hd_conv_claim *c, const hd_conv_owner *me, hd_err *err)
{
	struct release_txn t = {c};

	return hd_conv__owner_write(st, me, release_txn_fn, &t, err);
}

/* The supervisor's question (sv_turn.c), answered by the queue. */
int
hd_conv__agent_busy(int *busy, hd_store *st, const char *agent, hd_err *err)
{
	return hd_convstore_agent_busy(busy, st, agent, err);
}

/* ---- a delivery's prompt ------------------------------------------------ */

struct prompt_txn {
	const hd_conv_claim *c;
	const hd_agent *a;
	const hd_turn_state *state;
	hd_prompt p;
};

static int
prompt_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct prompt_txn *t = payload;
	hd_prompt_spec ps;

	hd_prompt_dispose(&t->p); /* a retried transaction starts over */
	memset(&ps, 0, sizeof(ps));
	ps.team = t->c->team;
	ps.agent = t->a;
	ps.is_leader = t->a->is_leader;
	ps.since_seq = t->state->last_seen_seq;
	ps.skip_seq = t->c->post_seq; /* said once, as the request */
	ps.request = t->c->prompt;
	return hd_prompt_build(&t->p, st, &ps, err);
}

int
hd_conv__prompt(char **out, size_t *context_len, int64_t *seen, hd_store *st,
    const hd_conv_claim *c, const hd_agent *a, const hd_turn_state *state,
    const hd_conv_owner *me, hd_err *err)
{
	struct prompt_txn t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.c = c;
	t.a = a;
	t.state = state;
	*out = NULL;
	if ((rc = hd_conv__owner_write(st, me, prompt_txn_fn, &t, err)) == 0) {
		*out = t.p.text;
		/* a delivery answers its message: the room and the mail
		 * before it are context (runtime.h context_len) */
		*context_len = t.p.request_off;
		*seen = t.p.seen;
		t.p.text = NULL;
	}
	hd_prompt_dispose(&t.p);
	return rc;
}
