/*
 * conversation.c -- the durable state of conversations (SPEC 7). Owns
 * tables conversations, conversation_deliveries and conversation_replies
 * (migration 5); nothing else writes them but cancel.c, which ends a
 * cancelled conversation (conversation_files is
 * conv_files.c's, written in hd_conv__record's transaction). The threads that drive them
 * are in conv_engine.c.
 *
 * A delivery is one message for one agent: the user's, or a mention from
 * a reply. Its states, each transition one conditional UPDATE here:
 *   queued -> running     hd_conv__claim (the agent runs nothing else)
 *   running -> queued     hd_conv__release, hd_conv__adopt (turn cut short)
 *   running -> done       hd_conv__record (with its one reply)
 * A conversation: running -> completed in hd_conv__finish, once pending
 * is 0 (the replies are all in) and its transcript is written; running ->
 * cancelled in cancel.c, with its queued and running deliveries (cancel.c
 * (3)): the one other writer of these tables. A conversation with a
 * cancel request gets no new claim here.
 *  (1) Per agent, at most one delivery is running, across every process:
 *      the claim checks it inside BEGIN IMMEDIATE. Deliveries are claimed
 *      oldest first (id order = arrival order) among the conversations
 *      the claiming engine owns.
 *  (2) A delivery gets exactly one reply: the reply row (UNIQUE on
 *      delivery_id), the delivery done, pending and the new deliveries
 *      commit together, and only from running, only by the owner.
 *  (3) pending = deliveries not done, kept as a counter (SPEC 7); the
 *      reply transaction adds the mentions, then takes the answered one
 *      off.
 *  (4) Only the engine named in conversations.owner works on a
 *      conversation; another engine takes it over only by
 *      compare-and-set on the owner it saw, after finding that engine
 *      gone (conv_engine.c).
 *  (5) A room post that fails (an agent no longer in the team) never
 *      loses the reply: it runs under a savepoint and is logged.
 *  (6) A running delivery records where its runtime's process runs (host,
 *      boot, the pid that is its process group's id, its start time;
 *      hd_conv__running, once the command started); every transition out
 *      of running clears it. Adopting a dead engine's conversation kills
 *      each such group on this host before its delivery is queued again:
 *      the command itself died with its engine (proc.c (9)), and what it
 *      started must not act while the delivery runs a second time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
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

#define HD_LOG_COMPONENT "conversation"
#include <huddle/log.h>

#define NO_RESPONSE "(no response)"
#define CAP_NOTE "\n[truncated: the whole reply is in the conversation]"

/* ---- small helpers ------------------------------------------------------ */

void
hd_conv__strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int
strv_push(char ***v, size_t *n, const char *s)
{
	char **grown = realloc(*v, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	*v = grown;
	if ((grown[*n] = strdup(s)) == NULL)
		return -1;
	(*n)++;
	return 0;
}

static int
strv_has(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned cp;
	size_t len, i;

	if (s[0] < 0x80)
		return s[0] != 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* The reply as stored (conversation.h (4)): U+FFFD for each byte that is
 * not valid UTF-8 and for NUL, trimmed, `(no response)` when empty. */
static char *
reply_clean(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	hd_buf b = HD_BUF_INIT(0);
	size_t i = 0, k, start, end;
	char *out;

	while (i < len) {
		if ((k = utf8_seq(u + i, len - i)) == 0) {
			hd_buf_puts(&b, "\xef\xbf\xbd");
			i++;
		} else {
			hd_buf_put(&b, s + i, k);
			i += k;
		}
	}
	if (hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return NULL;
	}
	start = 0;
	end = b.len;
	while (start < end && is_ws(b.ptr[start]))
		start++;
	while (end > start && is_ws(b.ptr[end - 1]))
		end--;
	if (start == end) {
		hd_buf_dispose(&b);
		return strdup(NO_RESPONSE);
	}
	if ((out = malloc(end - start + 1)) != NULL) {
		memcpy(out, b.ptr + start, end - start);
		out[end - start] = '\0';
	}
	hd_buf_dispose(&b);
	return out;
}

/* s cut to at most max bytes (at a character boundary) with CAP_NOTE, for
 * the room and the event log; s itself when it fits. */
static char *
cap_text(const char *s, size_t max)
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
static int64_t
room_post_soft(hd_store *st, const char *team, const char *kind,
    const char *author, const char *body)
{
	hd_err perr = HD_ERR_INIT;
	char *capped = cap_text(body, HD_ROOM_BODY_MAX);
	hd_post *p = NULL;
	int64_t seq = 0;

	if (capped == NULL ||
	    hd_store_exec(st, "SAVEPOINT conv_post", &perr) < 0) {
		free(capped);
		hd_log_warn("room post for %s skipped: %s", team,
		    capped == NULL ? "out of memory" : perr.msg);
		return 0;
	}
	if (hd_room_post(&p, st, team, kind, author, capped, &perr) < 0) {
		hd_log_warn("room post by %s in %s skipped: %s", author, team,
		    perr.msg);
		hd_store_exec(st, "ROLLBACK TO conv_post", NULL);
	} else
		seq = p->seq;
	hd_store_exec(st, "RELEASE conv_post", NULL);
	hd_post_free(p);
	free(capped);
	return seq;
}

/* What a turn means for the agent's status (activity.h): its begin, its
 * end (failure: the reason, or NULL), or its abort. team NULL: the
 * agent's own (read back). Failures are logged: a status is narration,
 * not the conversation's state. */
enum activity_step { ACT_BEGIN, ACT_END, ACT_CHAIN, ACT_ABORT };

static void
activity_soft(hd_store *st, const char *team, const char *agent,
    enum activity_step step, const char *failure)
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
	case ACT_BEGIN:
		rc = hd_activity_turn_begin(NULL, st, team, agent, &aerr);
		break;
	case ACT_END:
		rc = hd_activity_turn_end(st, team, agent, failure, &aerr);
		break;
	case ACT_CHAIN:
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

static int
changes(hd_store *st)
{
	return hd_store_changes(st);
}

/* A write transaction of the engine me, under its lock (hd_conv_owner). */
static int
owner_write(hd_store *st, const hd_conv_owner *me, hd_store_txn_fn fn,
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

/* ---- reading ------------------------------------------------------------ */

void
hd_conversation_free(hd_conversation *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->id);
	free(c->team_id);
	free(c->origin);
	free(c->status);
	free(c->message);
	free(c->target);
	free(c->response);
	for (i = 0; i < c->nreplies; i++) {
		free(c->replies[i].agent);
		free(c->replies[i].body);
	}
	free(c->replies);
	for (i = 0; i < c->ndeliveries; i++) {
		hd_conversation_delivery *d = &c->deliveries[i];

		free(d->to_agent);
		free(d->from_agent);
		free(d->body);
		free(d->prompt);
		free(d->state);
	}
	free(c->deliveries);
	hd_conv__files_dispose(c->files, c->nfiles);
	free(c);
}

struct get_txn {
	const char *id;
	hd_conversation *c;
};

static int
get_replies(hd_store *st, hd_conversation *c, hd_err *err)
{
	hd_stmt *s;
	hd_conversation_reply *grown, *r;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT seq, agent, body, is_error, delivery_id, created_at "
		 "FROM conversation_replies WHERE conversation_id = ?1 "
		 "ORDER BY seq",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, c->id);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		grown = realloc(c->replies, (c->nreplies + 1) * sizeof(*grown));
		if (grown == NULL) {
			rc = oom(err);
			break;
		}
		c->replies = grown;
		r = &c->replies[c->nreplies++];
		memset(r, 0, sizeof(*r));
		r->seq = hd_stmt_int(s, 0);
		r->agent = hd_store_col_dup(s, 1);
		r->body = hd_store_col_dup(s, 2);
		r->is_error = hd_stmt_int(s, 3);
		r->delivery_id = hd_stmt_int(s, 4);
		r->at = hd_stmt_int(s, 5);
		if (r->agent == NULL || r->body == NULL) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

static int
get_deliveries(hd_store *st, hd_conversation *c, hd_err *err)
{
	hd_stmt *s;
	hd_conversation_delivery *grown, *d;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, to_agent, from_agent, body, prompt, state, "
		 "created_at, started_at, finished_at "
		 "FROM conversation_deliveries WHERE conversation_id = ?1 "
		 "ORDER BY id",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, c->id);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		grown = realloc(
		    c->deliveries, (c->ndeliveries + 1) * sizeof(*grown));
		if (grown == NULL) {
			rc = oom(err);
			break;
		}
		c->deliveries = grown;
		d = &c->deliveries[c->ndeliveries++];
		memset(d, 0, sizeof(*d));
		d->id = hd_stmt_int(s, 0);
		d->to_agent = hd_store_col_dup(s, 1);
		d->from_agent = hd_store_col_dup(s, 2);
		d->body = hd_store_col_dup(s, 3);
		d->prompt = hd_store_col_dup(s, 4);
		d->state = hd_store_col_dup(s, 5);
		d->created_at = hd_stmt_int(s, 6);
		d->started_at = hd_stmt_int(s, 7);
		d->finished_at = hd_stmt_int(s, 8);
		if (d->to_agent == NULL || d->body == NULL ||
		    d->prompt == NULL || d->state == NULL) {
			rc = oom(err);
			break;
		}
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

static int
get_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct get_txn *g = payload;
	hd_conversation *c;
	hd_stmt *s;
	int rc, src;

	hd_conversation_free(g->c);
	g->c = NULL;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, team_id, origin, status, message, target, pending,"
		 " total_messages, max_messages, created_at, completed_at,"
		 " response FROM conversations WHERE id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, g->id);
	src = hd_stmt_step(s);
	if (src != HD_ROW) {
		rc = src == HD_DONE
			 ? hd_err_set(err, HD_ENOTFOUND,
			       "conversation \"%.64s\" not found", g->id)
			 : hd_store_sqlerr(st, src, err);
		hd_store_reset(s);
		return rc;
	}
	if ((c = g->c = calloc(1, sizeof(*c))) == NULL) {
		hd_store_reset(s);
		return oom(err);
	}
	c->id = hd_store_col_dup(s, 0);
	c->team_id = hd_store_col_dup(s, 1);
	c->origin = hd_store_col_dup(s, 2);
	c->status = hd_store_col_dup(s, 3);
	c->message = hd_store_col_dup(s, 4);
	c->target = hd_store_col_dup(s, 5);
	c->pending = hd_stmt_int(s, 6);
	c->total_messages = hd_stmt_int(s, 7);
	c->max_messages = hd_stmt_int(s, 8);
	c->created_at = hd_stmt_int(s, 9);
	c->completed_at = hd_stmt_int(s, 10);
	c->response = hd_store_col_dup(s, 11);
	hd_store_reset(s);
	if (c->id == NULL || c->team_id == NULL || c->origin == NULL ||
	    c->status == NULL || c->message == NULL || c->target == NULL)
		return oom(err);
	if ((rc = get_replies(st, c, err)) < 0 ||
	    (rc = get_deliveries(st, c, err)) < 0)
		return rc;
	return hd_conv__files_get(st, c, err);
}

int
hd_conversation_get(
    hd_conversation **out, hd_store *st, const char *id, hd_err *err)
{
	struct get_txn g = {id, NULL};
	int rc;

	*out = NULL;
	if ((rc = hd_store_read(st, get_txn_fn, &g, err)) < 0) {
		hd_conversation_free(g.c);
		return rc;
	}
	*out = g.c;
	return 0;
}

int
hd_conv__status(
    char *out, size_t outlen, hd_store *st, const char *id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT status FROM conversations WHERE id = ?1", err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, id);
	src = hd_stmt_step(s);
	if (src == HD_ROW)
		snprintf(
		    out, outlen, "%s", hd_stmt_text(s, 0));
	else
		rc = src == HD_DONE
			 ? hd_err_set(err, HD_ENOTFOUND,
			       "conversation \"%.64s\" not found", id)
			 : hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* The agents with a message not answered yet, each once, in arrival
 * order: who a running conversation waits for. */
static json_t *
waiting_for(const hd_conversation *c)
{
	json_t *a = json_array();
	size_t i, j;

	for (i = 0; i < c->ndeliveries; i++) {
		const char *to = c->deliveries[i].to_agent;

		if (strcmp(c->deliveries[i].state, "done") == 0)
			continue;
		for (j = 0; j < json_array_size(a); j++)
			if (strcmp(json_string_value(json_array_get(a, j)), to) ==
			    0)
				break;
		if (j == json_array_size(a))
			json_array_append_new(a, json_string(to));
	}
	return a;
}

json_t *
hd_conversation_to_json(const hd_conversation *c)
{
	json_t *replies = json_array(), *files = json_array(), *j;
	size_t i;

	for (i = 0; i < c->nreplies; i++)
		json_array_append_new(replies,
		    json_pack("{s:s, s:s, s:I, s:I, s:b}", "agent",
			c->replies[i].agent, "body", c->replies[i].body, "at",
			(json_int_t)c->replies[i].at, "seq",
			(json_int_t)c->replies[i].seq, "isError",
			c->replies[i].is_error));
	j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "id", c->id, "teamId",
	    c->team_id, "status", c->status, "pending", (json_int_t)c->pending,
	    "totalMessages", (json_int_t)c->total_messages, "replies", replies);
	for (i = 0; i < c->nfiles; i++)
		json_array_append_new(
		    files, hd_conversation_file_to_json(&c->files[i]));
	json_object_set_new(j, "files", files);
	json_object_set_new(j, "response",
	    c->response != NULL ? json_string(c->response) : json_null());
	json_object_set_new(j, "createdAt", json_integer(c->created_at));
	json_object_set_new(j, "completedAt",
	    c->completed_at != 0 ? json_integer(c->completed_at) : json_null());
	json_object_set_new(j, "message", json_string(c->message));
	json_object_set_new(j, "waitingFor", waiting_for(c));
	return j;
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

static void
drop_mention(hd_store *st, const char *conv, const char *team, const char *from,
    const char *target, const char *reason)
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
	hd_stmt *s;
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

	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO conversations(id, team_id, origin, status,"
		 " pending, total_messages, created_at, message, target,"
		 " max_messages, owner, owner_pid, owner_start)"
		 " VALUES (?1, ?2, ?3, 'running', 1, 0, ?4, ?5, ?6, ?7, ?8, ?9,"
		 " ?10)",
		 err)) < 0)
		goto done;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_text(s, 2, tm->id);
	hd_stmt_bind_text(s, 3, t->spec->origin);
	hd_stmt_bind_int(s, 4, now);
	hd_stmt_bind_text(s, 5, msg);
	hd_stmt_bind_text(s, 6, t->agent);
	hd_stmt_bind_int(s, 7, t->max);
	hd_stmt_bind_text(s, 8, t->me->token);
	hd_stmt_bind_int(s, 9, t->me->pid);
	hd_stmt_bind_int(s, 10, t->me->start);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		goto done;
	/* the user's message in the room: its delivery's prompt says it
	 * once, as the request */
	post_seq = room_post_soft(st, tm->id, "user", NULL, msg);
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO conversation_deliveries(conversation_id,"
		 " to_agent, from_agent, body, prompt, state, created_at,"
		 " post_seq) VALUES (?1, ?2, NULL, ?3, ?3, 'queued', ?4,"
		 " NULLIF(?5, 0))",
		 err)) < 0)
		goto done;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_text(s, 2, t->agent);
	hd_stmt_bind_text(s, 3, msg + route.offset);
	hd_stmt_bind_int(s, 4, now);
	hd_stmt_bind_int(s, 5, post_seq);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		goto done;
	if (route.dropped[0] != '\0')
		drop_mention(st, t->id, tm->id, NULL, route.dropped,
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
	if ((rc = owner_write(st, me, create_txn_fn, &t, err)) < 0)
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
static int
claim_in_txn(int *result, hd_conv_claim *c, hd_store *st, const char *agent,
    const hd_conv_owner *me, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	hd_conv__claim_dispose(c);
	*result = HD_CONV_NONE;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT d.id, d.conversation_id, d.prompt, c.team_id,"
		 " d.post_seq FROM conversation_deliveries d"
		 " JOIN conversations c ON c.id = d.conversation_id"
		 " WHERE d.to_agent = ?1 AND d.state = 'queued'"
		 " AND c.owner = ?2 AND c.status = 'running'"
		 " AND NOT EXISTS (SELECT 1 FROM cancel_requests r"
		 "  WHERE r.kind = 'conversation' AND r.target = c.id)"
		 " ORDER BY d.id LIMIT 1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	hd_stmt_bind_text(s, 2, me->token);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		c->delivery_id = hd_stmt_int(s, 0);
		snprintf(c->conversation_id, sizeof(c->conversation_id), "%s",
		    hd_stmt_text(s, 1));
		c->prompt = hd_store_col_dup(s, 2);
		snprintf(c->team, sizeof(c->team), "%s",
		    hd_stmt_text(s, 3));
		snprintf(c->agent, sizeof(c->agent), "%s", agent);
		c->post_seq = hd_stmt_int(s, 4);
	}
	hd_store_reset(s);
	if (src != HD_ROW)
		return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
	if (c->prompt == NULL)
		return oom(err);

	/* (1) the agent runs one message at a time, across processes */
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT c.id, c.owner, c.owner_pid, c.owner_start"
		 " FROM conversation_deliveries d"
		 " JOIN conversations c ON c.id = d.conversation_id"
		 " WHERE d.to_agent = ?1 AND d.state = 'running' LIMIT 1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		snprintf(c->blocker, sizeof(c->blocker), "%s",
		    hd_stmt_text(s, 0));
		c->blocker_owner = hd_store_col_dup(s, 1);
		c->blocker_pid = hd_stmt_int(s, 2);
		c->blocker_start = hd_stmt_int(s, 3);
		*result = HD_CONV_BLOCKED;
	}
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	if (*result == HD_CONV_BLOCKED)
		return 0;
	/* ... nor while the supervisor runs a turn of it (supervisor.h (1));
	 * the supervisor takes a dead engine's turn back, so the blocker is
	 * left blank: nothing here to take over */
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT 1 FROM autorun_turns WHERE agent_id = ?1"
		 " AND status = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	if ((src = hd_stmt_step(s)) == HD_ROW)
		*result = HD_CONV_BLOCKED;
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	if (*result == HD_CONV_BLOCKED)
		return 0;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET state = 'running',"
		 " started_at = ?2 WHERE id = ?1 AND state = 'queued'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, c->delivery_id);
	hd_stmt_bind_int(s, 2, hd_now_ms());
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	/* an agent whose last turn failed takes work too (then it is
	 * working, and its next good turn makes it idle) */
	activity_soft(st, c->team, agent, ACT_BEGIN, NULL);
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

	return claim_in_txn(&t->result, t->c, st, t->agent, t->me, err);
}

int
hd_conv__claim(int *result, hd_conv_claim *out, hd_store *st, const char *agent,
    const hd_conv_owner *me, hd_err *err)
{
	struct claim_txn t = {agent, me, out, HD_CONV_NONE};
	int rc;

	memset(out, 0, sizeof(*out));
	rc = owner_write(st, me, claim_txn_fn, &t, err);
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
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET state = 'queued',"
		 " started_at = NULL, run_host = NULL, run_boot = NULL,"
		 " run_pid = NULL, run_start = NULL"
		 " WHERE id = ?1 AND state = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, t->c->delivery_id);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	activity_soft(st, t->c->team, t->c->agent, ACT_ABORT, NULL);
	return 0;
}

int
hd_conv__release(
    hd_store *st, const hd_conv_claim *c, const hd_conv_owner *me, hd_err *err)
{
	struct release_txn t = {c};

	return owner_write(st, me, release_txn_fn, &t, err);
}

/* ---- recording a reply -----------------------------------------------------
 */

void
hd_conv__recorded_dispose(hd_conv_recorded *r)
{
	hd_conv__claim_dispose(&r->next);
	free(r->body);
	hd_conv__strv_free(r->targets, r->ntargets);
	memset(r, 0, sizeof(*r));
}

struct record_txn {
	const hd_conv_claim *c;
	const hd_conv_turn *turn;
	const hd_conv_owner *me;
	const char *body; /* cleaned */
	int is_error; /* the reply is an error */
	int aborted;  /* ... of a turn cut short, not one that failed */
	int want_next;
	const hd_mentions *m; /* NULL for an error reply */
	const hd_conv_tagged *tg; /* NULL for an error reply */
	char *cut;                /* the body as stored when it was cut */
	hd_conv_recorded *out;
	int64_t first_mention; /* the first delivery it enqueued, or 0 */
};

/* Why target may not be sent a message from agent in team, or NULL. */
static const char *
target_refusal(hd_store *st, const char *target, const char *agent,
    const char *team, char *buf, size_t buflen)
{
	hd_agent *a = NULL;
	hd_err aerr = HD_ERR_INIT;
	const char *why = NULL;

	if (strcmp(target, agent) == 0)
		return "self-mention";
	if (hd_team_member_check(st, team, target, &aerr) == 0)
		return NULL; /* the common case, one lookup */
	if (hd_agent_get(&a, st, target, &aerr) < 0)
		why = "unknown agent";
	else if (a->team_id == NULL || strcmp(a->team_id, team) != 0) {
		snprintf(buf, buflen, "not in team %s", team);
		why = buf;
	}
	hd_agent_free(a);
	return why;
}

/* The agents with an unanswered message in the conversation, except the
 * one being answered: the "others" of conversation.h (3). */
static int
unanswered_agents(
    char ***out, size_t *n, hd_store *st, const hd_conv_claim *c, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT DISTINCT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state IN ('queued', "
		 "'running')"
		 " AND id != ?2",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, c->conversation_id);
	hd_stmt_bind_int(s, 2, c->delivery_id);
	while ((src = hd_stmt_step(s)) == HD_ROW)
		if (strv_push(out, n, hd_stmt_text(s, 0)) <
		    0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* Enqueue the mentions of the reply that may go (loop guard, drops). */
static int
enqueue_mentions(
    struct record_txn *t, hd_store *st, int64_t seq, int64_t max, hd_err *err)
{
	const hd_conv_claim *c = t->c;
	hd_conv_recorded *out = t->out;
	char **busy = NULL, *prompt = NULL, why_buf[96];
	const char *why;
	size_t nbusy = 0, i, others;
	hd_stmt *s;
	int rc = 0;

	for (i = 0; i < t->m->ntargets; i++) {
		const char *target = t->m->targets[i].target;

		if (seq >= max) { /* (2) of conversation.h */
			snprintf(why_buf, sizeof(why_buf),
			    "loop guard: the conversation has %lld replies",
			    (long long)seq);
			why = why_buf;
		} else
			why = target_refusal(st, target, c->agent, c->team,
			    why_buf, sizeof(why_buf));
		if (why != NULL) {
			drop_mention(st, c->conversation_id, c->team, c->agent,
			    target, why);
			continue;
		}
		if (strv_push(&out->targets, &out->ntargets, target) < 0)
			return oom(err);
	}
	if (out->ntargets == 0)
		return 0;
	if ((rc = unanswered_agents(&busy, &nbusy, st, c, err)) < 0)
		goto done;
	others = nbusy;
	for (i = 0; i < out->ntargets; i++)
		others += !strv_has(busy, nbusy, out->targets[i]);
	others -= 1; /* the recipient itself */
	for (i = 0; i < out->ntargets; i++) {
		const hd_mention *mt = NULL;
		size_t j;

		for (j = 0; j < t->m->ntargets; j++)
			if (strcmp(t->m->targets[j].target, out->targets[i]) ==
			    0)
				mt = &t->m->targets[j];
		if ((rc = hd_mentions_delivery(&prompt, c->agent, t->m->shared,
			 mt->body, (int64_t)others, err)) < 0)
			goto done;
		if ((rc = hd_store_prepare(st, &s,
			 "INSERT INTO conversation_deliveries(conversation_id,"
			 " to_agent, from_agent, body, prompt, state,"
			 " created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'queued',"
			 " ?6)",
			 err)) < 0)
			goto done;
		hd_stmt_bind_text(s, 1, c->conversation_id);
		hd_stmt_bind_text(s, 2, out->targets[i]);
		hd_stmt_bind_text(s, 3, c->agent);
		hd_stmt_bind_text(s, 4, mt->body);
		hd_stmt_bind_text(s, 5, prompt);
		hd_stmt_bind_int(s, 6, hd_now_ms());
		if ((rc = hd_store_step_done(st, s, err)) < 0)
			goto done;
		if (t->first_mention == 0)
			t->first_mention = hd_store_last_id(st);
		free(prompt);
		prompt = NULL;
	}
done:
	free(prompt);
	hd_conv__strv_free(busy, nbusy);
	return rc;
}

/* The room post that carries deliveries from first on (the reply that
 * mentioned their agents): their prompts say it once, as the request. */
static int
mark_carried(hd_store *st, const hd_conv_claim *c, int64_t first,
    int64_t post_seq, hd_err *err)
{
	hd_stmt *s;

	if (first == 0 || post_seq == 0)
		return 0;
	if (hd_store_prepare(st, &s,
		"UPDATE conversation_deliveries SET post_seq = ?1"
		" WHERE id >= ?2 AND conversation_id = ?3 AND from_agent = ?4",
		err) < 0)
		return err->code;
	hd_stmt_bind_int(s, 1, post_seq);
	hd_stmt_bind_int(s, 2, first);
	hd_stmt_bind_text(s, 3, c->conversation_id);
	hd_stmt_bind_text(s, 4, c->agent);
	return hd_store_step_done(st, s, err);
}

/* The agent's turn state moves on with the turn (cursor, native session;
 * the rest as the exchange left it), its lineage is recorded and its
 * spend charged: what an exchange turn saves, for a delivery. */
static int
save_turn(
    hd_store *st, const hd_conv_claim *c, const hd_conv_turn *turn, hd_err *err)
{
	const hd_runtime_cost *cost = &turn->cost;
	hd_turn_state ts;
	int crossed = 0, rc;

	if ((rc = hd_turn_state_get(&ts, st, c->team, c->agent, err)) < 0)
		return rc;
	if (turn->seen > ts.last_seen_seq)
		ts.last_seen_seq = turn->seen;
	free(ts.native_session_id);
	free(ts.runtime);
	ts.native_session_id = NULL;
	ts.runtime = NULL;
	if ((turn->native_session_id != NULL &&
		(ts.native_session_id = strdup(turn->native_session_id)) ==
		    NULL) ||
	    (ts.runtime = strdup(turn->runtime)) == NULL) {
		hd_turn_state_dispose(&ts);
		return oom(err);
	}
	rc = hd_turn_state_put(st, c->team, c->agent, &ts, err);
	hd_turn_state_dispose(&ts);
	if (rc < 0 ||
	    (rc = hd_session_record(st, c->agent, c->team, turn->runtime,
		 turn->native_session_id, turn->resumed, err)) < 0 ||
	    (rc = hd_budget_charge(
		 &crossed, st, c->team, c->agent, cost->microcents, err)) < 0)
		return rc;
	hd_events_append(st, "cost", c->team, 0, c->agent,
	    json_pack("{s:s, s:f, s:I, s:I, s:I, s:b}", "conversation_id",
		c->conversation_id, "usd", cost->usd, "microcents",
		(json_int_t)cost->microcents, "input_tokens",
		(json_int_t)cost->input_tokens, "output_tokens",
		(json_int_t)cost->output_tokens, "estimated", cost->estimated));
	return 0;
}

/* The reply's room tags (conv_files.c): each posts its message to the
 * team's room as the agent, or is dropped with a mention_dropped event
 * (target `#<team>`) when the message is empty, the team unknown or the
 * agent not in it. */
static void
room_tags(hd_store *st, const hd_conv_claim *c, const hd_conv_tagged *tg)
{
	hd_err terr;
	char target[72], why_buf[96];
	const char *why;
	size_t i;

	for (i = 0; i < tg->nroom; i++) {
		const hd_reply_tag *r = &tg->room[i];

		hd_err_clear(&terr);
		why = NULL;
		if (r->body[0] == '\0')
			why = "empty message";
		else if (hd_team_member_check(st, r->team, c->agent, &terr) <
			 0) {
			if (terr.code == HD_ENOTFOUND)
				why = "unknown team";
			else if (terr.code == HD_EREFUSED) {
				snprintf(why_buf, sizeof(why_buf),
				    "not a member of team %s", r->team);
				why = why_buf;
			} else
				why = terr.msg;
		}
		if (why == NULL) {
			room_post_soft(st, r->team, "peer", c->agent, r->body);
			continue;
		}
		snprintf(target, sizeof(target), "#%s", r->team);
		drop_mention(st, c->conversation_id, c->team, c->agent, target,
		    why);
	}
}

/* The answer's cut and the files it attaches (conversation.h): the
 * reply's own, then the whole answer when it was cut. */
static int
attach_files(struct record_txn *t, hd_store *st, int64_t seq, hd_err *err)
{
	const hd_conv_claim *c = t->c;
	hd_conv_attach whole;
	char name[48];
	int rc;

	if ((rc = hd_conv__files_insert(st, c->conversation_id, seq, c->agent,
		 t->tg->files, t->tg->nfiles, err)) < 0 ||
	    t->cut == NULL)
		return rc;
	snprintf(name, sizeof(name), "answer-%lld.md", (long long)seq);
	whole.name = name;
	whole.media_type = "text/markdown";
	whole.content = (unsigned char *)(uintptr_t)t->body;
	whole.size = strlen(t->body);
	return hd_conv__files_insert(
	    st, c->conversation_id, seq, c->agent, &whole, 1, err);
}

static int
record_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct record_txn *t = payload;
	const hd_conv_claim *c = t->c;
	hd_conv_recorded *out = t->out;
	hd_stmt *s;
	char *state = NULL, *owner = NULL, *capped = NULL;
	const char *shown;
	int64_t total = 0, max = 0, pending = 0, now = hd_now_ms();
	int rc, src, ours;

	hd_conv__strv_free(out->targets, out->ntargets);
	out->targets = NULL;
	out->ntargets = 0;
	t->first_mention = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT d.state, c.owner, c.total_messages, c.max_messages,"
		 " c.pending FROM conversation_deliveries d"
		 " JOIN conversations c ON c.id = d.conversation_id"
		 " WHERE d.id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, c->delivery_id);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		state = hd_store_col_dup(s, 0);
		owner = hd_store_col_dup(s, 1);
		total = hd_stmt_int(s, 2);
		max = hd_stmt_int(s, 3);
		pending = hd_stmt_int(s, 4);
	}
	hd_store_reset(s);
	if (src != HD_ROW && src != HD_DONE)
		return hd_store_sqlerr(st, src, err);
	ours = state != NULL && owner != NULL &&
	       strcmp(state, "running") == 0 &&
	       strcmp(owner, t->me->token) == 0;
	free(state);
	free(owner);
	if (!ours) /* (2), (4) */
		return hd_err_set(err, HD_ECONFLICT,
		    "message %lld of conversation %s is no longer this "
		    "engine's to answer",
		    (long long)c->delivery_id, c->conversation_id);

	out->seq = total + 1;
	free(t->cut);
	t->cut = NULL;
	if (t->tg != NULL) {
		char name[48];

		snprintf(name, sizeof(name), "answer-%lld.md",
		    (long long)out->seq);
		if ((rc = hd_conversation_cut(&t->cut, t->body,
			 HD_CONVERSATION_ANSWER_MAX, name, err)) < 0)
			return rc;
	}
	shown = t->cut != NULL ? t->cut : t->body;
	if ((rc = hd_store_prepare(st, &s,
		 "INSERT INTO conversation_replies(conversation_id, seq,"
		 " delivery_id, agent, body, is_error, created_at)"
		 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, c->conversation_id);
	hd_stmt_bind_int(s, 2, out->seq);
	hd_stmt_bind_int(s, 3, c->delivery_id);
	hd_stmt_bind_text(s, 4, c->agent);
	hd_stmt_bind_text(s, 5, shown);
	hd_stmt_bind_int(s, 6, t->is_error);
	hd_stmt_bind_int(s, 7, now);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	if (t->tg != NULL) {
		if ((rc = attach_files(t, st, out->seq, err)) < 0)
			return rc;
		room_tags(st, c, t->tg);
	}
	if (t->m != NULL &&
	    (rc = enqueue_mentions(t, st, out->seq, max, err)) < 0)
		return rc;
	out->pending_mid = pending + (int64_t)out->ntargets;
	out->pending_after = out->pending_mid - 1;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversations SET total_messages = ?2, pending = ?3"
		 " WHERE id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, c->conversation_id);
	hd_stmt_bind_int(s, 2, out->seq);
	hd_stmt_bind_int(s, 3, out->pending_after);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET state = 'done',"
		 " finished_at = ?2, run_host = NULL, run_boot = NULL,"
		 " run_pid = NULL, run_start = NULL WHERE id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, c->delivery_id);
	hd_stmt_bind_int(s, 2, now);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	out->next_result = HD_CONV_NONE;
	/* a failed turn puts the agent in error (the leader is told) until
	 * a turn of it begins again: maybe the next delivery, at once */
	if (t->aborted)
		activity_soft(st, c->team, c->agent, ACT_ABORT, NULL);
	else if (t->is_error) {
		/* the reason, without the room's "[error: ...]" around it */
		size_t blen = strlen(t->body);
		char *why = NULL;

		if (blen > 9 && strncmp(t->body, "[error: ", 8) == 0 &&
		    t->body[blen - 1] == ']')
			why = strndup(t->body + 8, blen - 9);
		activity_soft(st, c->team, c->agent, ACT_END,
		    why != NULL ? why : t->body);
		free(why);
	}
	if (t->want_next && (rc = claim_in_txn(&out->next_result, &out->next,
				 st, c->agent, t->me, err)) < 0)
		return rc;
	if (out->next_result != HD_CONV_CLAIMED) {
		hd_conv__claim_dispose(&out->next);
		out->next_result = HD_CONV_NONE;
		/* a good turn with no next: idle, with the notice, unless it
		 * still holds a started task */
		if (!t->is_error && !t->aborted)
			activity_soft(st, c->team, c->agent, ACT_END, NULL);
	} else if (!t->is_error && !t->aborted)
		/* the next began (counted in by its claim): this one is out,
		 * working throughout */
		activity_soft(st, c->team, c->agent, ACT_CHAIN, NULL);
	if ((rc = mark_carried(st, c, t->first_mention,
		 room_post_soft(st, c->team, "peer", c->agent, shown),
		 err)) < 0)
		return rc;
	if (t->turn != NULL && (rc = save_turn(st, c, t->turn, err)) < 0)
		return rc;
	if ((capped = cap_text(shown, HD_ROOM_BODY_MAX)) == NULL)
		return oom(err);
	hd_events_append(st, "conversation_reply", c->team, 0, c->agent,
	    json_pack("{s:s, s:s, s:s, s:I, s:I, s:b}", "conversation_id",
		c->conversation_id, "agent", c->agent, "reply", capped, "seq",
		(json_int_t)out->seq, "pending", (json_int_t)out->pending_mid,
		"error", t->is_error));
	free(capped);
	return 0;
}

int
hd_conv__record(hd_conv_recorded *out, hd_store *st, const hd_conv_claim *c,
    const char *reply, size_t len, int is_error, int want_next,
    const hd_conv_turn *turn, const hd_conv_owner *me, hd_err *err)
{
	struct record_txn t;
	hd_conv_tagged tg;
	hd_mentions m;
	char *swap;
	int rc, parsed = 0;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	memset(&t, 0, sizeof(t));
	memset(&tg, 0, sizeof(tg));
	if ((out->body = reply_clean(reply, len)) == NULL)
		return oom(err);
	if (!is_error) {
		/* room and file tags first: the mentions are those of the
		 * answer they leave (files read outside the transaction) */
		if ((rc = hd_conv__tags_apply(
			 &tg, st, c->agent, out->body, err)) < 0)
			goto done;
		swap = out->body;
		out->body = tg.text;
		tg.text = swap;
		if ((rc = hd_mentions_parse(
			 &m, out->body, strlen(out->body), err)) < 0)
			goto done;
		parsed = 1;
	}
	t.c = c;
	t.turn = turn;
	t.me = me;
	t.body = out->body;
	t.is_error = is_error != HD_CONV__REPLY;
	t.aborted = is_error == HD_CONV__ABORTED;
	t.want_next = want_next;
	t.m = parsed ? &m : NULL;
	t.tg = parsed ? &tg : NULL;
	t.out = out;
	rc = owner_write(st, me, record_txn_fn, &t, err);
	if (rc == 0 && t.cut != NULL) { /* the body as stored */
		free(out->body);
		out->body = t.cut;
		t.cut = NULL;
	}
done:
	free(t.cut);
	hd_conv__tagged_dispose(&tg);
	hd_mentions_dispose(&m);
	if (rc < 0)
		hd_conv__recorded_dispose(out);
	return rc;
}

int
hd_conv__agent_busy(int *busy, hd_store *st, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*busy = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT 1 FROM conversation_deliveries WHERE to_agent = ?1"
		 " AND state = 'running' LIMIT 1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, agent);
	if ((src = hd_stmt_step(s)) == HD_ROW) {
		*busy = 1;
		src = HD_DONE;
	}
	hd_store_reset(s);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
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
	if ((rc = owner_write(st, me, prompt_txn_fn, &t, err)) == 0) {
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

/* ---- finishing -------------------------------------------------------------
 */

/*
 * Write the transcript, mode 0600. No temporary file and rename: the
 * conversation is marked completed only after this returns, so a process
 * that dies halfway leaves it running, and whoever resumes it writes the
 * whole file again.
 */
int
hd_conv__write_file(const char *path, const char *text, hd_err *err)
{
	size_t len = strlen(text), off = 0;
	ssize_t w;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0)
		return hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(errno));
	while (off < len) {
		if ((w = write(fd, text + off, len - off)) < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return hd_err_set(err, HD_ERR, "cannot write %s: %s",
			    path, strerror(errno));
		}
		off += (size_t)w;
	}
	if (close(fd) < 0)
		return hd_err_set(
		    err, HD_ERR, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

struct finish_txn {
	const char *id;
	const hd_conv_owner *me;
	const char *response;
	const char *team;
	const char *path;
	int64_t total;
	int done;
};

static int
finish_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct finish_txn *t = payload;
	hd_stmt *s;
	char *capped;
	int rc;

	t->done = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversations SET status = 'completed', response = ?2,"
		 " completed_at = ?3 WHERE id = ?1 AND status = 'running'"
		 " AND pending = 0 AND owner = ?4",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_text(s, 2, t->response);
	hd_stmt_bind_int(s, 3, hd_now_ms());
	hd_stmt_bind_text(s, 4, t->me->token);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	if (changes(st) == 0)
		return 0;
	t->done = 1;
	if ((capped = cap_text(t->response, HD_ROOM_BODY_MAX)) == NULL)
		return oom(err);
	hd_events_append(st, "conversation_completed", t->team, 0, NULL,
	    json_pack("{s:s, s:I, s:i, s:s, s:s?}", "conversation_id", t->id,
		"total_messages", (json_int_t)t->total, "pending", 0,
		"response", capped, "transcript",
		t->path[0] != '\0' ? t->path : NULL));
	free(capped);
	return 0;
}

int
hd_conv__finish(int *done, hd_store *st, const char *id,
    const hd_conv_owner *me, hd_err *err)
{
	hd_conversation *c = NULL;
	hd_team *tm = NULL;
	char *response = NULL, *text = NULL, path[4096], dir[4096];
	hd_err werr = HD_ERR_INIT;
	struct finish_txn t;
	int rc;

	*done = 0;
	if ((rc = hd_conversation_get(&c, st, id, err)) < 0)
		goto done;
	if (strcmp(c->status, "running") != 0) {
		*done = 1;
		goto done;
	}
	if (c->pending != 0)
		goto done;
	if ((rc = hd_conversation_aggregate(&response, c, err)) < 0)
		goto done;
	if (hd_team_get(&tm, st, c->team_id, NULL) < 0)
		tm = NULL; /* removed since: the id stands in for the name */
	if ((rc = hd_conversation_transcript(
		 &text, c, tm != NULL ? tm->name : c->team_id, err)) < 0 ||
	    (rc = hd_conversation_transcript_path(
		 path, sizeof(path), hd_store_home(st), c, err)) < 0)
		goto done;
	snprintf(
	    dir, sizeof(dir), "%s/chats/%s", hd_store_home(st), c->team_id);
	if (hd_mkdir_p(dir, 0700, &werr) < 0 ||
	    hd_conv__write_file(path, text, &werr) < 0) {
		/* the user still gets the answer; only the file is missing */
		hd_log_error(
		    "conversation %s: no transcript: %s", id, werr.msg);
		path[0] = '\0';
	}
	memset(&t, 0, sizeof(t));
	t.id = id;
	t.me = me;
	t.response = response;
	t.team = c->team_id;
	t.path = path;
	t.total = c->total_messages;
	if ((rc = owner_write(st, me, finish_txn_fn, &t, err)) < 0)
		goto done;
	*done = t.done;
done:
	free(response);
	free(text);
	hd_team_free(tm);
	hd_conversation_free(c);
	return rc;
}

/* ---- taking over ------------------------------------------------------------
 */

void
hd_conv__foreign_free(hd_conv_foreign *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].owner);
	free(l);
}

struct foreign_txn {
	const hd_conv_owner *me;
	hd_conv_foreign *l;
	size_t n;
};

static int
foreign_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct foreign_txn *t = payload;
	hd_conv_foreign *grown, *f;
	hd_stmt *s;
	int rc, src;

	hd_conv__foreign_free(t->l, t->n);
	t->l = NULL;
	t->n = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT id, owner, owner_pid, owner_start FROM conversations"
		 " WHERE status = 'running' AND (owner IS NULL OR owner != ?1)"
		 " ORDER BY created_at",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->me->token);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if ((grown = realloc(t->l, (t->n + 1) * sizeof(*grown))) ==
		    NULL) {
			rc = oom(err);
			break;
		}
		t->l = grown;
		f = &t->l[t->n++];
		snprintf(f->id, sizeof(f->id), "%s",
		    hd_stmt_text(s, 0));
		f->owner = hd_store_col_dup(s, 1);
		f->pid = hd_stmt_int(s, 2);
		f->start = hd_stmt_int(s, 3);
	}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

int
hd_conv__list_foreign(hd_conv_foreign **out, size_t *n, hd_store *st,
    const hd_conv_owner *me, hd_err *err)
{
	struct foreign_txn t = {me, NULL, 0};
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = hd_store_read(st, foreign_txn_fn, &t, err)) < 0) {
		hd_conv__foreign_free(t.l, t.n);
		return rc;
	}
	*out = t.l;
	*n = t.n;
	return 0;
}

struct adopt_txn {
	const char *id;
	const char *old_owner;
	const hd_conv_owner *me;
	int adopted;
	char **agents;
	size_t nagents;
	int64_t pending;
	char team[64];
};

/* Run s (one text column, ?1 = conversation id) and append every value
 * to *v. */
static int
collect_agents(hd_store *st, hd_stmt *s, const char *conv, char ***v,
    size_t *n, hd_err *err)
{
	int rc = 0, src;

	hd_stmt_bind_text(s, 1, conv);
	while ((src = hd_stmt_step(s)) == HD_ROW)
		if (strv_push(v, n, hd_stmt_text(s, 0)) <
		    0) {
			rc = oom(err);
			break;
		}
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

/* (6) Kill the process group each running delivery of conv recorded,
 * when it ran on this host in this boot (hd_proc_group_kill checks the
 * recording still names it). */
static int
kill_running(hd_store *st, const char *conv, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT run_host, run_boot, run_pid, run_start, id"
		 " FROM conversation_deliveries WHERE conversation_id = ?1"
		 " AND state = 'running' AND run_pid IS NOT NULL",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, conv);
	while ((src = hd_stmt_step(s)) == HD_ROW)
		if (hd_proc_here(hd_stmt_text(s, 0),
			hd_stmt_text(s, 1)) &&
		    hd_proc_group_kill(hd_stmt_int(s, 2),
			hd_stmt_int(s, 3)))
			hd_log_info("conversation %s: killed process group "
				    "%lld of interrupted message %lld",
			    conv, (long long)hd_stmt_int(s, 2),
			    (long long)hd_stmt_int(s, 4));
	if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

struct running_txn {
	const hd_conv_claim *c;
	int64_t pgid, start;
};

static int
running_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct running_txn *t = payload;
	char host[256], boot[40];
	hd_stmt *s;
	int rc;

	hd_host_name(host, sizeof(host));
	hd_boot_id(boot, sizeof(boot));
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET run_host = ?2,"
		 " run_boot = ?3, run_pid = ?4, run_start = ?5"
		 " WHERE id = ?1 AND state = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, t->c->delivery_id);
	hd_stmt_bind_text_copy(s, 2, host);
	hd_stmt_bind_text_copy(s, 3, boot);
	hd_stmt_bind_int(s, 4, t->pgid);
	hd_stmt_bind_int(s, 5, t->start);
	return hd_store_step_done(st, s, err);
}

int
hd_conv__running(hd_store *st, const hd_conv_claim *c,
    const hd_conv_owner *me, int64_t pgid, int64_t start, hd_err *err)
{
	struct running_txn t = {c, pgid, start};

	return owner_write(st, me, running_txn_fn, &t, err);
}

static int
adopt_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct adopt_txn *t = payload;
	hd_stmt *s;
	size_t i;
	int rc, requeued;

	t->adopted = 0;
	hd_conv__strv_free(t->agents, t->nagents);
	t->agents = NULL;
	t->nagents = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversations SET owner = ?2, owner_pid = ?3,"
		 " owner_start = ?4 WHERE id = ?1 AND status = 'running'"
		 " AND owner IS ?5",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	hd_stmt_bind_text(s, 2, t->me->token);
	hd_stmt_bind_int(s, 3, t->me->pid);
	hd_stmt_bind_int(s, 4, t->me->start);
	hd_stmt_bind_text_copy(s, 5, t->old_owner);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;
	if (changes(st) == 0)
		return 0; /* someone else was faster, or it completed */
	t->adopted = 1;

	/* (6) what the interrupted turns started, killed before they run
	 * again */
	if ((rc = kill_running(st, t->id, err)) < 0)
		return rc;
	/* the interrupted turns: their agents are idle again */
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state = 'running'",
		 err)) < 0)
		return rc;
	if ((rc = collect_agents(st, s, t->id, &t->agents, &t->nagents, err)) <
	    0)
		return rc;
	for (i = 0; i < t->nagents; i++)
		activity_soft(st, NULL, t->agents[i], ACT_ABORT, NULL);
	requeued = (int)t->nagents;
	hd_conv__strv_free(t->agents, t->nagents);
	t->agents = NULL;
	t->nagents = 0;
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversation_deliveries SET state = 'queued',"
		 " started_at = NULL, run_host = NULL, run_boot = NULL,"
		 " run_pid = NULL, run_start = NULL WHERE conversation_id = ?1"
		 " AND state = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	if ((rc = hd_store_step_done(st, s, err)) < 0)
		return rc;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT DISTINCT to_agent FROM conversation_deliveries"
		 " WHERE conversation_id = ?1 AND state = 'queued'",
		 err)) < 0)
		return rc;
	if ((rc = collect_agents(st, s, t->id, &t->agents, &t->nagents, err)) <
	    0)
		return rc;
	if ((rc = hd_store_prepare(st, &s,
		 "SELECT pending, team_id FROM conversations WHERE id = ?1",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, t->id);
	if (hd_stmt_step(s) == HD_ROW) {
		t->pending = hd_stmt_int(s, 0);
		snprintf(t->team, sizeof(t->team), "%s",
		    hd_stmt_text(s, 1));
	}
	hd_store_reset(s);
	hd_events_append(st, "conversation_resumed", t->team, 0, NULL,
	    json_pack("{s:s, s:s?, s:i, s:I}", "conversation_id", t->id,
		"previous_owner", t->old_owner, "requeued", requeued, "pending",
		(json_int_t)t->pending));
	return 0;
}

int
hd_conv__adopt(int *adopted, char ***agents, size_t *nagents, int64_t *pending,
    hd_store *st, const char *id, const char *old_owner,
    const hd_conv_owner *me, hd_err *err)
{
	struct adopt_txn t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.id = id;
	t.old_owner = old_owner;
	t.me = me;
	*adopted = 0;
	*agents = NULL;
	*nagents = 0;
	*pending = 0;
	if ((rc = owner_write(st, me, adopt_txn_fn, &t, err)) < 0) {
		hd_conv__strv_free(t.agents, t.nagents);
		return rc;
	}
	if (t.adopted)
		hd_log_info("conversation %s resumed (was %s; %lld pending)",
		    id, old_owner != NULL ? old_owner : "released",
		    (long long)t.pending);
	*adopted = t.adopted;
	*agents = t.agents;
	*nagents = t.nagents;
	*pending = t.pending;
	return 0;
}

static int
disown_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	const hd_conv_owner *me = payload;
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE conversations SET owner = NULL, owner_pid = NULL,"
		 " owner_start = NULL WHERE owner = ?1 AND status = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_text(s, 1, me->token);
	return hd_store_step_done(st, s, err);
}

int
hd_conv__disown(hd_store *st, const hd_conv_owner *me, hd_err *err)
{
	return owner_write(st, me, disown_txn_fn, (void *)me, err);
}

