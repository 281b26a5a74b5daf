/*
 * mailbox.c -- directed messages between agents (SPEC 6). Owns table
 * `messages`; nothing else writes it (team.c only purges a removed team's
 * rows).
 *  (1) A message is validated (type, content size and encoding, protocol
 *      fields) before any write. Sender and recipient membership is checked
 *      inside the writing transaction, so no message ever lands in the
 *      inbox of an agent that is not (or no longer) in the team.
 *  (2) id is AUTOINCREMENT and assigned under the write lock: a recipient's
 *      messages in id order are in commit order, across processes.
 *  (3) hd_mailbox_read selects the oldest undelivered rows and marks exactly
 *      those delivered in one BEGIN IMMEDIATE transaction: two readers in
 *      any processes never both receive a message, and an unread message
 *      waits durably until some read returns it.
 *  (4) summary is never NULL once stored: the sender's, else
 *      hd_mailbox_summary(content).
 *  (5) message_sent is emitted in the sending transaction; so is the
 *      sender's last activity (hd_agent_touch; a notice from "huddle" is
 *      nobody's) and the reaction a caller hands to hd_mailbox__send_then,
 *      so the message and its effect commit together or not at all. That
 *      is how hd_mailbox_send (src/lifecycle/send.c) has a shutdown_response
 *      or idle message drive the shutdown protocol: the mailbox itself
 *      knows no protocol.
 *  (6) approve is stored only on a shutdown_response; any other type
 *      stores it unset, whatever the spec said.
 * Callers: the CLI (inbox, broadcast), the status rule and the shutdown
 * protocol (src/presence/: activity.c, shutdown.c), the team's lifecycle
 * (src/lifecycle/: send.c, spawn.c), the board's
 * reflection (hd_mailbox__send: a task_update drives no protocol), the
 * conversation engine and the MCP/HTTP surfaces. The mailbox calls only
 * down: the team's roster (membership, hd_agent_touch), the room
 * (render.c) and events (the domain order: docs/layers.md).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/util.h>
#include <huddle/team.h>

#include "mailbox_int.h"

#define MSG_SUMMARY_MAX 1000 /* characters of a given summary */
#define MSG_FIELD_MAX 200    /* request_id, conversation_id */
#define MSG_REASON_MAX 2000

static const char *const msg_types[] = {
    "message",
    "broadcast",
    "shutdown_request",
    "shutdown_response",
    "idle",
    "task_update",
    "mention",
    NULL,
};

int
hd_mailbox__check_content(const char *content, hd_err *err)
{
	size_t len = content != NULL ? strlen(content) : 0;

	if (hd_text_blank(content, len))
		return hd_err_set(err, HD_EINVAL, "message must not be empty");
	if (len > HD_MESSAGE_MAX)
		return hd_err_set(err, HD_ETOOBIG,
		    "message is %zu bytes; the limit is %d", len,
		    HD_MESSAGE_MAX);
	if (!hd_utf8_ok(content, len))
		return hd_err_set(
		    err, HD_EINVAL, "message must be valid UTF-8");
	return 0;
}

/* Everything that can be checked without the database (invariant 1). */
static int
msg_check(const hd_message_spec *spec, const char *type, int system,
    int need_to, hd_err *err)
{
	int i, rc;

	for (i = 0; msg_types[i] != NULL; i++)
		if (strcmp(msg_types[i], type) == 0)
			break;
	if (msg_types[i] == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "invalid message type \"%.64s\": use message, broadcast, "
		    "shutdown_request, shutdown_response, idle, task_update or "
		    "mention",
		    type);
	if (spec->team == NULL)
		return hd_err_set(err, HD_EINVAL, "a message needs a team");
	if ((rc = hd_slug_check("team", spec->team, err)) < 0)
		return rc;
	if (!system && spec->from == NULL)
		return hd_err_set(err, HD_EINVAL, "a message needs a sender");
	if (need_to && spec->to == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "a message needs a recipient");
	if ((rc = hd_mailbox__check_content(spec->content, err)) < 0)
		return rc;
	if (spec->summary != NULL && spec->summary[0] != '\0' &&
	    (rc = hd_text_check(
		 "summary", spec->summary, 1, MSG_SUMMARY_MAX, err)) < 0)
		return rc;
	if (spec->request_id != NULL &&
	    (rc = hd_text_check(
		 "request_id", spec->request_id, 1, MSG_FIELD_MAX, err)) < 0)
		return rc;
	if (spec->conversation_id != NULL &&
	    (rc = hd_text_check("conversation_id", spec->conversation_id, 1,
		 MSG_FIELD_MAX, err)) < 0)
		return rc;
	if (spec->reason != NULL && (rc = hd_text_check("reason", spec->reason,
					 0, MSG_REASON_MAX, err)) < 0)
		return rc;
	if (spec->approve < -1 || spec->approve > 1)
		return hd_err_set(
		    err, HD_EINVAL, "approve must be -1 (unset), 0 or 1");
	if (strcmp(type, "shutdown_request") == 0 && spec->request_id == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "shutdown_request needs a request_id");
	if (strcmp(type, "shutdown_response") == 0) {
		if (spec->request_id == NULL)
			return hd_err_set(err, HD_EINVAL,
			    "shutdown_response needs a request_id");
		if (spec->approve == -1)
			return hd_err_set(err, HD_EINVAL,
			    "shutdown_response needs approve (true or false)");
		if (spec->approve == 0 &&
		    (spec->reason == NULL || spec->reason[0] == '\0'))
			return hd_err_set(err, HD_EINVAL,
			    "a refused shutdown needs a reason");
	}
	return 0;
}

static int
msg_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

char *
hd_mailbox_summary(const char *content)
{
	hd_buf b = HD_BUF_INIT(0);
	const char *p = content, *start;
	int words = 0;

	while (*p != '\0') {
		while (msg_is_space(*p))
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && !msg_is_space(*p))
			p++;
		if (++words > 10)
			break; /* an eleventh word: cut */
		if (words > 1)
			hd_buf_putc(&b, ' ');
		hd_buf_put(&b, start, (size_t)(p - start));
	}
	if (words <= 10) {
		hd_buf_dispose(&b);
		return strdup(content);
	}
	hd_buf_puts(&b, "...");
	return hd_buf_detach(&b);
}

/* Insert m (a view: id, created_at and delivered_at are ignored); sets
 * *id and emits message_sent. Inside the caller's transaction. */
static int
msg_insert(hd_store *st, const hd_message *m, int64_t *id, hd_err *err)
{
	int rc;

	if ((rc = hd_store_run(st, err,
		 "INSERT INTO messages(team_id, from_agent, to_agent, type,"
		 " content, summary, request_id, approve, reason,"
		 " conversation_id, created_at)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 HD_TEXT(m->team_id), HD_TEXT(m->from_agent),
		 HD_TEXT(m->to_agent), HD_TEXT(m->type), HD_TEXT(m->content),
		 HD_TEXT(m->summary), HD_TEXT(m->request_id),
		 HD_INT_OR_NULL(m->approve >= 0, m->approve), HD_TEXT(m->reason),
		 HD_TEXT(m->conversation_id), HD_INT(m->created_at))) < 0)
		return rc;
	*id = hd_store_last_id(st);
	hd_events_append(st, "message_sent", m->team_id, 0, m->from_agent,
	    json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)*id, "to",
		m->to_agent, "type", m->type, "summary", m->summary));
	return 0;
}

/* A view of a spec as a message; the strings stay the caller's. */
static void
msg_view(hd_message *m, const hd_message_spec *spec, const char *from,
    const char *to, const char *type, const char *summary)
{
	memset(m, 0, sizeof(*m));
	m->team_id = (char *)spec->team;
	m->from_agent = (char *)from;
	m->to_agent = (char *)to;
	m->type = (char *)type;
	m->content = (char *)spec->content;
	m->summary = (char *)summary;
	m->request_id = (char *)spec->request_id;
	/* approve means something only in an answer (invariant 6), so a
	 * zero-initialised spec never stores "approve=false" elsewhere */
	m->approve = strcmp(type, "shutdown_response") == 0 ? spec->approve
							    : -1;
	m->reason = (char *)spec->reason;
	m->conversation_id = (char *)spec->conversation_id;
}

struct send_ctx {
	hd_message m; /* the view being sent */
	int system;
	hd_mailbox__react_fn react;
	const void *react_ctx;
};

static int
send_txn(hd_store *st, void *payload, hd_err *err)
{
	struct send_ctx *c = payload;
	int rc;

	if (!c->system && (rc = hd_team_member_check(
			       st, c->m.team_id, c->m.from_agent, err)) < 0)
		return rc;
	if ((rc = hd_team_member_check(st, c->m.team_id, c->m.to_agent, err)) <
	    0)
		return rc;
	c->m.created_at = hd_now_ms();
	if ((rc = msg_insert(st, &c->m, &c->m.id, err)) < 0)
		return rc;
	if (c->system) /* protocol notices never drive the protocol */
		return 0;
	if ((rc = hd_agent_touch(st, c->m.team_id, c->m.from_agent, err)) < 0)
		return rc;
	return c->react != NULL ? c->react(st, &c->m, c->react_ctx, err) : 0;
}

static char *
msg_dup(const char *s, int *oom)
{
	char *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = 1;
	return d;
}

/* A heap copy of a view. */
static int
msg_copy(hd_message **out, const hd_message *v, hd_err *err)
{
	hd_message *m;
	int oom = 0;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	m->id = v->id;
	m->team_id = msg_dup(v->team_id, &oom);
	m->from_agent = msg_dup(v->from_agent, &oom);
	m->to_agent = msg_dup(v->to_agent, &oom);
	m->type = msg_dup(v->type, &oom);
	m->content = msg_dup(v->content, &oom);
	m->summary = msg_dup(v->summary, &oom);
	m->request_id = msg_dup(v->request_id, &oom);
	m->approve = v->approve;
	m->reason = msg_dup(v->reason, &oom);
	m->conversation_id = msg_dup(v->conversation_id, &oom);
	m->created_at = v->created_at;
	m->delivered_at = v->delivered_at;
	if (oom) {
		hd_message_free(m);
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	}
	*out = m;
	return 0;
}

int
hd_mailbox__send_then(hd_message **out, hd_store *st,
    const hd_message_spec *spec, int system, hd_mailbox__react_fn react,
    const void *ctx, hd_err *err)
{
	struct send_ctx c;
	const char *type = spec->type != NULL ? spec->type : "message";
	char *autosum = NULL;
	const char *summary = spec->summary;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = msg_check(spec, type, system, 1, err)) < 0)
		return rc;
	if (summary == NULL || summary[0] == '\0') {
		if ((autosum = hd_mailbox_summary(spec->content)) == NULL)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		summary = autosum;
	}
	msg_view(&c.m, spec, system ? HD_MAILBOX_SYSTEM : spec->from, spec->to,
	    type, summary);
	c.system = system;
	c.react = react;
	c.react_ctx = ctx;
	if ((rc = hd_store_write(st, send_txn, &c, err)) < 0)
		goto done;
	if (out != NULL)
		rc = msg_copy(out, &c.m, err);
done:
	free(autosum);
	return rc;
}

int
hd_mailbox__send(hd_message **out, hd_store *st, const hd_message_spec *spec,
    int system, hd_err *err)
{
	return hd_mailbox__send_then(out, st, spec, system, NULL, NULL, err);
}

int
hd_mailbox_send_system(
    hd_message **out, hd_store *st, const hd_message_spec *spec, hd_err *err)
{
	return hd_mailbox__send(out, st, spec, 1, err);
}

struct bcast_ctx {
	hd_message m;
	size_t count;
};

static int
bcast_txn(hd_store *st, void *payload, hd_err *err)
{
	struct bcast_ctx *c = payload;
	hd_agents members = {0};
	size_t i;
	int64_t id;
	int rc;

	c->count = 0;
	if ((rc = hd_team_member_check(
		 st, c->m.team_id, c->m.from_agent, err)) < 0)
		return rc;
	if ((rc = hd_agent_list(&members, st, c->m.team_id, err)) < 0)
		return rc;
	c->m.created_at = hd_now_ms();
	for (i = 0; i < members.n; i++) {
		if (strcmp(members.items[i].id, c->m.from_agent) == 0)
			continue;
		c->m.to_agent = members.items[i].id;
		if ((rc = msg_insert(st, &c->m, &id, err)) < 0)
			break;
		c->count++;
	}
	c->m.to_agent = NULL; /* pointed into members */
	hd_agents_dispose(&members);
	if (rc == 0)
		rc = hd_agent_touch(st, c->m.team_id, c->m.from_agent, err);
	return rc;
}

int
hd_mailbox_broadcast(
    size_t *out_count, hd_store *st, const hd_message_spec *spec, hd_err *err)
{
	struct bcast_ctx c;
	char *autosum = NULL;
	const char *summary = spec->summary;
	int rc;

	if (out_count != NULL)
		*out_count = 0;
	if ((rc = msg_check(spec, "broadcast", 0, 0, err)) < 0)
		return rc;
	if (summary == NULL || summary[0] == '\0') {
		if ((autosum = hd_mailbox_summary(spec->content)) == NULL)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		summary = autosum;
	}
	msg_view(&c.m, spec, spec->from, NULL, "broadcast", summary);
	c.count = 0;
	rc = hd_store_write(st, bcast_txn, &c, err);
	if (rc == 0 && out_count != NULL)
		*out_count = c.count;
	free(autosum);
	return rc;
}

int
hd_mailbox__request_sender(char **out, hd_store *st, const char *team,
    const char *to, const char *request_id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*out = NULL;
	/* messages_request finds the request's few rows; the newest wins */
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT from_agent FROM messages WHERE request_id = ?1"
		 " AND type = 'shutdown_request' AND team_id = ?2"
		 " AND to_agent = ?3 ORDER BY id DESC LIMIT 1",
		 HD_TEXT(request_id), HD_TEXT(team), HD_TEXT(to))) < 0)
		return rc;
	src = hd_stmt_step(s);
	if (src == HD_ROW) {
		if ((*out = hd_store_col_dup(s, 0)) == NULL)
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	} else if (src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

#define MSG_COLS                                                               \
	"id, team_id, from_agent, to_agent, type, content, summary,"           \
	" request_id, approve, reason, conversation_id, created_at,"           \
	" delivered_at"

static int
msg_row(void *item, hd_stmt *s, void *ctx)
{
	hd_message *m = item;

	(void)ctx;
	memset(m, 0, sizeof(*m));
	m->id = hd_stmt_int(s, 0);
	m->team_id = hd_store_col_dup(s, 1);
	m->from_agent = hd_store_col_dup(s, 2);
	m->to_agent = hd_store_col_dup(s, 3);
	m->type = hd_store_col_dup(s, 4);
	m->content = hd_store_col_dup(s, 5);
	m->summary = hd_store_col_dup(s, 6);
	m->request_id = hd_store_col_dup(s, 7);
	m->approve = hd_stmt_is_null(s, 8)
			 ? -1
			 : hd_stmt_int(s, 8) != 0;
	m->reason = hd_store_col_dup(s, 9);
	m->conversation_id = hd_store_col_dup(s, 10);
	m->created_at = hd_stmt_int(s, 11);
	m->delivered_at = hd_stmt_int(s, 12);
	if (m->team_id == NULL || m->from_agent == NULL ||
	    m->to_agent == NULL || m->type == NULL || m->content == NULL)
		return -1;
	if (m->summary == NULL && (m->summary = strdup("")) == NULL)
		return -1;
	return 0;
}

static void
msg_dispose(void *item)
{
	hd_message *m = item;

	free(m->team_id);
	free(m->from_agent);
	free(m->to_agent);
	free(m->type);
	free(m->content);
	free(m->summary);
	free(m->request_id);
	free(m->reason);
	free(m->conversation_id);
}

void
hd_message_free(hd_message *m)
{
	if (m == NULL)
		return;
	msg_dispose(m);
	free(m);
}

/* A query's messages into list (disposed first: a retried transaction
 * body starts afresh); resets s. */
static int
msg_rows(hd_messages *list, hd_store *st, hd_stmt *s, hd_err *err)
{
	void *items;
	int rc;

	hd_messages_dispose(list);
	if ((rc = hd_store_rows(st, s, sizeof(hd_message), msg_row,
		 msg_dispose, NULL, &items, &list->n, err)) < 0)
		return rc;
	list->items = items;
	return 0;
}

void
hd_messages_dispose(hd_messages *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), msg_dispose);
	l->items = NULL;
	l->n = 0;
}

/* A read of one agent's messages: a take (read_txn) or a range
 * (range_txn). */
struct read_ctx {
	const char *agent;
	int limit;
	int mark; /* read (1) or peek (0) */
	int64_t lo, hi;
	hd_messages list;
};

/* Run txn on c into *out, in a write transaction when c marks what it
 * reads; nothing is kept on an error. */
static int
mailbox_list(hd_messages *out, hd_store *st, struct read_ctx *c,
    hd_store_txn_fn txn, hd_err *err)
{
	int rc = c->mark ? hd_store_write(st, txn, c, err)
			 : hd_store_read(st, txn, c, err);

	if (rc < 0) {
		hd_messages_dispose(&c->list);
		return rc;
	}
	*out = c->list;
	return 0;
}

static int
read_txn(hd_store *st, void *payload, hd_err *err)
{
	struct read_ctx *c = payload;
	hd_stmt *s;
	size_t i;
	int64_t now;
	int rc;

	if ((rc = hd_agent_exists(st, c->agent, err)) < 0 ||
	    (rc = hd_store_query(st, &s, err,
		 "SELECT " MSG_COLS " FROM messages"
		 " WHERE to_agent = ? AND delivered_at IS NULL"
		 " ORDER BY id LIMIT ?",
		 /* no limit: the largest (PostgreSQL refuses SQLite's -1) */
		 HD_TEXT(c->agent),
		 HD_INT(c->limit > 0 ? c->limit : INT64_MAX))) < 0 ||
	    (rc = msg_rows(&c->list, st, s, err)) < 0)
		return rc;
	if (!c->mark || c->list.n == 0)
		return 0;
	/* Invariant 3: exactly the rows returned, under the same lock. */
	now = hd_now_ms();
	if ((rc = hd_store_run(st, err,
		 "UPDATE messages SET delivered_at = ?1 WHERE to_agent = ?2"
		 " AND delivered_at IS NULL AND id <= ?3",
		 HD_INT(now), HD_TEXT(c->agent),
		 HD_INT(c->list.items[c->list.n - 1].id))) < 0)
		return rc;
	for (i = 0; i < c->list.n; i++)
		c->list.items[i].delivered_at = now;
	return 0;
}

static int
mailbox_take(hd_messages *out, hd_store *st, const char *agent, int limit,
    int mark, hd_err *err)
{
	struct read_ctx c;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	if (limit < 0 || limit > HD_MAILBOX_READ_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "limit must be between 0 (all) and %d, not %d",
		    HD_MAILBOX_READ_MAX, limit);
	memset(&c, 0, sizeof(c));
	c.agent = agent;
	c.limit = limit;
	c.mark = mark;
	return mailbox_list(out, st, &c, read_txn, err);
}

int
hd_mailbox_read(
    hd_messages *out, hd_store *st, const char *agent, int limit, hd_err *err)
{
	return mailbox_take(out, st, agent, limit, 1, err);
}

int
hd_mailbox_peek(
    hd_messages *out, hd_store *st, const char *agent, int limit, hd_err *err)
{
	return mailbox_take(out, st, agent, limit, 0, err);
}

static int
range_txn(hd_store *st, void *payload, hd_err *err)
{
	struct read_ctx *c = payload;
	hd_stmt *s;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " MSG_COLS " FROM messages"
		 " WHERE to_agent = ?1 AND id >= ?2 AND id <= ?3 ORDER BY id",
		 HD_TEXT(c->agent), HD_INT(c->lo), HD_INT(c->hi))) < 0)
		return rc;
	return msg_rows(&c->list, st, s, err);
}

int
hd_mailbox_range(hd_messages *out, hd_store *st, const char *agent,
    int64_t lo, int64_t hi, hd_err *err)
{
	struct read_ctx c;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.agent = agent;
	c.lo = lo;
	c.hi = hi;
	return mailbox_list(out, st, &c, range_txn, err);
}

void
hd_mail_waiting_dispose(hd_mail_waiting *w, size_t n)
{
	(void)n;
	free(w);
}

static int
waiting_row(void *item, hd_stmt *s, void *ctx)
{
	hd_mail_waiting *w = item;
	const char *a = hd_stmt_text(s, 0);

	(void)ctx;
	memset(w, 0, sizeof(*w));
	snprintf(w->agent, sizeof(w->agent), "%s", a != NULL ? a : "");
	w->newest = hd_stmt_int(s, 1);
	w->newest_direct = hd_stmt_int(s, 2);
	return 0;
}

/* A waiting entry holds nothing of its own. */
static void
waiting_dispose(void *item)
{
	(void)item;
}

int
hd_mailbox_waiting(hd_mail_waiting **out, size_t *n, hd_store *st,
    const char *team, hd_err *err)
{
	hd_stmt *s;
	void *v;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	/* per member, through messages_inbox (the undelivered rows only):
	 * never a scan of the team's whole history */
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT * FROM (SELECT a.id AS agent,"
		 " (SELECT MAX(m.id) FROM messages m WHERE m.to_agent = a.id"
		 "  AND m.delivered_at IS NULL AND m.type != 'idle') AS newest,"
		 " (SELECT MAX(m.id) FROM messages m WHERE m.to_agent = a.id"
		 "  AND m.delivered_at IS NULL AND m.type != 'idle'"
		 "  AND m.type != 'broadcast') AS direct"
		 " FROM agents a WHERE a.team_id = ?1) AS w"
		 " WHERE newest IS NOT NULL"
		 " ORDER BY agent",
		 HD_TEXT(team))) < 0 ||
	    (rc = hd_store_rows(st, s, sizeof(hd_mail_waiting), waiting_row,
		 waiting_dispose, NULL, &v, n, err)) < 0)
		return rc;
	*out = v;
	return 0;
}

static json_t *
json_str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

json_t *
hd_message_to_json(const hd_message *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(m->id));
	json_object_set_new(o, "team_id", json_str_or_null(m->team_id));
	json_object_set_new(o, "from_agent", json_str_or_null(m->from_agent));
	json_object_set_new(o, "to_agent", json_str_or_null(m->to_agent));
	json_object_set_new(o, "type", json_str_or_null(m->type));
	json_object_set_new(o, "content", json_str_or_null(m->content));
	json_object_set_new(o, "summary", json_str_or_null(m->summary));
	json_object_set_new(o, "request_id", json_str_or_null(m->request_id));
	json_object_set_new(o, "approve",
	    m->approve < 0 ? json_null() : json_boolean(m->approve));
	json_object_set_new(o, "reason", json_str_or_null(m->reason));
	json_object_set_new(
	    o, "conversation_id", json_str_or_null(m->conversation_id));
	json_object_set_new(o, "created_at", json_integer(m->created_at));
	json_object_set_new(o, "delivered_at",
	    m->delivered_at ? json_integer(m->delivered_at) : json_null());
	return o;
}

int
hd_mailbox_team_count(int64_t *n, hd_store *st, const char *team, hd_err *err)
{
	int rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM messages WHERE team_id = ?1", HD_TEXT(team));

	return rc < 0 ? rc : 0;
}

int
hd_mailbox_team_purge(hd_store *st, const char *team, hd_err *err)
{
	return hd_store_run(
	    st, err, "DELETE FROM messages WHERE team_id = ?1", HD_TEXT(team));
}
