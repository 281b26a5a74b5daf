/*
 * shutdown.c -- the team shutdown protocol (SPEC 6; the state diagram is
 * in include/huddle/shutdown.h). Owns the kv key "shutdown:<team>": the
 * team's latest request as JSON. Writes teams.status and agents.status
 * only through hd_team_set_status / hd_agent_set_status, and messages only
 * through the mailbox (src/mailbox/mailbox.c). Reads the members' work
 * only through the hd_work its caller hands in (activity.h): the board's,
 * above this module, bound by src/lifecycle/presence.c.
 *  (1) Every transition runs inside one BEGIN IMMEDIATE transaction that
 *      re-reads the request first, so two processes answering at once
 *      never both finish it, and a request ends exactly once.
 *  (2) A request is live only while its outcome is "pending" and its team
 *      is `shutting_down`; a pending record whose team has another status
 *      (changed by hand) is closed as "cancelled" without side effects.
 *  (3) The timeout is evaluated lazily -- on every team-state read,
 *      response, idle message, new request and wait poll -- never by a
 *      timer, so it holds with no server running.
 *  (4) The leader is never asked (it is the one asking); members are
 *      asked only when `working` -- or, in a team with autorun on, when
 *      not shut down: there every member is a live session that answers
 *      from its own turn (supervisor.h), busy or not.
 *  (5) Nothing is deleted: a refused or timed-out shutdown puts the team
 *      back to `active` and the members still asked back to what their
 *      work says: `working` while in a turn or holding a started task,
 *      else `idle` (activity.h).
 *  (6) An answer goes to whoever asked (hd_shutdown_requester): the
 *      team request's leader, or the sender of a shutdown_request sent
 *      one to one with that request_id -- found inside the transaction
 *      that sends the answer.
 *  (7) A shutdown_request sent one to one (any member to another, with a
 *      request_id of its own) is no team shutdown: it has no record and
 *      no timeout. Its answer is an ordinary shutdown_response to the
 *      asker, and an approval sets the member who approved `shutdown`.
 *      A response naming a request that is neither the team's nor one
 *      sent to its sender is refused.
 *  (8) A member asked that has nothing left to do (its turn ended, its
 *      started tasks finished) approves by going idle: activity.c sends
 *      its idle message, which approves here like any other -- also when
 *      a board write's reflection settled it, in that write's transaction.
 * Callers: activity.c and src/lifecycle/send.c (hd_shutdown__react, the
 * mailbox reaction), and through src/lifecycle/presence.c (the public
 * functions, bound to the board's hd_work) state.c (expiry before a read),
 * the CLI (team shutdown, shutdown-response, send), the MCP tools
 * (team_shutdown, send_message) and the REST shutdown route.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "presence_int.h"

#define HD_LOG_COMPONENT "shutdown"
#include <huddle/log.h>

#define SD_KEY_MAX 80
#define SD_REASON_MAX 2000
#define SD_POLL_US 100000 /* wait poll interval, see hd_team_shutdown_wait */

static void
sd_key(char *out, size_t outlen, const char *team)
{
	snprintf(out, outlen, "shutdown:%s", team);
}

void
hd_shutdown_free(hd_shutdown *s)
{
	if (s == NULL)
		return;
	free(s->team_id);
	free(s->request_id);
	free(s->requested_by);
	free(s->reason);
	free(s->outcome);
	free(s->refused_by);
	free(s->refusal_reason);
	hd_strv_free(s->pending, s->npending);
	hd_strv_free(s->approved, s->napproved);
	free(s);
}

/* Append a copy of str to *v; 0 or -1 (out of memory). */
static int
strs_push(char ***v, size_t *n, const char *str)
{
	char **nv, *d;

	if ((d = strdup(str)) == NULL)
		return -1;
	if ((nv = realloc(*v, (*n + 1) * sizeof(*nv))) == NULL) {
		free(d);
		return -1;
	}
	nv[(*n)++] = d;
	*v = nv;
	return 0;
}

static ssize_t
strs_find(char **v, size_t n, const char *str)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], str) == 0)
			return (ssize_t)i;
	return -1;
}

/* Replace *field with a copy of str (NULL clears); -1 out of memory. */
static int
set_str(char **field, const char *str)
{
	char *d = NULL;

	if (str != NULL && (d = strdup(str)) == NULL)
		return -1;
	free(*field);
	*field = d;
	return 0;
}

static json_t *
strs_json(char **v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

json_t *
hd_shutdown_to_json(const hd_shutdown *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "team", json_string(s->team_id));
	json_object_set_new(o, "request_id", json_string(s->request_id));
	json_object_set_new(o, "requested_by", str_or_null(s->requested_by));
	json_object_set_new(o, "reason", str_or_null(s->reason));
	json_object_set_new(o, "outcome", json_string(s->outcome));
	json_object_set_new(o, "refused_by", str_or_null(s->refused_by));
	json_object_set_new(
	    o, "refusal_reason", str_or_null(s->refusal_reason));
	json_object_set_new(o, "requested_at", json_integer(s->requested_at));
	json_object_set_new(o, "deadline", json_integer(s->deadline));
	json_object_set_new(o, "finished_at",
	    s->finished_at ? json_integer(s->finished_at) : json_null());
	json_object_set_new(o, "pending", strs_json(s->pending, s->npending));
	json_object_set_new(
	    o, "approved", strs_json(s->approved, s->napproved));
	return o;
}

/* Optional string member of a stored record; -1 when present but not a
 * string (a malformed record) or out of memory. */
static int
rec_str(char **out, const json_t *o, const char *key, int required)
{
	const json_t *v = json_object_get(o, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return required ? -1 : 0;
	if (!json_is_string(v) || (*out = strdup(json_string_value(v))) == NULL)
		return -1;
	return 0;
}

static int
rec_strs(char ***out, size_t *n, const json_t *o, const char *key)
{
	const json_t *a = json_object_get(o, key), *v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!json_is_array(a))
		return -1;
	json_array_foreach (a, i, v) {
		if (!json_is_string(v) ||
		    strs_push(out, n, json_string_value(v)))
			return -1;
	}
	return 0;
}

/* Parse a stored record; NULL (logged) when it is malformed. */
static hd_shutdown *
sd_parse(const char *team, const char *text)
{
	hd_shutdown *s = NULL;
	json_t *o = json_loads(text, 0, NULL), *v;

	if (!json_is_object(o) || (s = calloc(1, sizeof(*s))) == NULL)
		goto bad;
	if ((s->team_id = strdup(team)) == NULL ||
	    rec_str(&s->request_id, o, "request_id", 1) < 0 ||
	    rec_str(&s->requested_by, o, "requested_by", 0) < 0 ||
	    rec_str(&s->reason, o, "reason", 0) < 0 ||
	    rec_str(&s->outcome, o, "outcome", 1) < 0 ||
	    rec_str(&s->refused_by, o, "refused_by", 0) < 0 ||
	    rec_str(&s->refusal_reason, o, "refusal_reason", 0) < 0 ||
	    rec_strs(&s->pending, &s->npending, o, "pending") < 0 ||
	    rec_strs(&s->approved, &s->napproved, o, "approved") < 0)
		goto bad;
	if (!json_is_integer(v = json_object_get(o, "requested_at")))
		goto bad;
	s->requested_at = json_integer_value(v);
	if (!json_is_integer(v = json_object_get(o, "deadline")))
		goto bad;
	s->deadline = json_integer_value(v);
	v = json_object_get(o, "finished_at");
	s->finished_at = json_is_integer(v) ? json_integer_value(v) : 0;
	json_decref(o);
	return s;
bad:
	hd_log_warn("ignoring a malformed shutdown record for team %s", team);
	json_decref(o);
	hd_shutdown_free(s);
	return NULL;
}

/* The team's latest request, or *out = NULL when none (or malformed). */
static int
sd_load(hd_shutdown **out, hd_store *st, const char *team, hd_err *err)
{
	char key[SD_KEY_MAX], *text = NULL;
	int rc;

	*out = NULL;
	sd_key(key, sizeof(key), team);
	if ((rc = hd_store_kv_get(&text, st, key, err)) < 0)
		return rc;
	if (text != NULL)
		*out = sd_parse(team, text);
	free(text);
	return 0;
}

static int
sd_save(hd_store *st, const hd_shutdown *s, hd_err *err)
{
	char key[SD_KEY_MAX], *text;
	json_t *o = hd_shutdown_to_json(s);
	int rc;

	json_object_del(o, "team"); /* the key names it */
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	sd_key(key, sizeof(key), s->team_id);
	rc = hd_store_kv_put(st, key, text, err);
	free(text);
	return rc;
}

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
}

/* "60 s" or "250 ms". */
static void
fmt_span(char *out, size_t outlen, int64_t ms)
{
	if (ms % 1000 == 0)
		snprintf(out, outlen, "%lld s", (long long)(ms / 1000));
	else
		snprintf(out, outlen, "%lld ms", (long long)ms);
}

/*
 * End a pending request without shutting down: outcome "refused" (by
 * who, because why) or "timeout". Inside the caller's transaction; s is
 * saved. notify: tell the leader with a notice from "huddle".
 */
static int
sd_abort(hd_store *st, const hd_work *w, hd_shutdown *s, const char *outcome,
    const char *who, const char *why, int notify, hd_err *err)
{
	hd_buf text = HD_BUF_INIT(HD_MESSAGE_MAX);
	hd_message_spec ms;
	hd_agent_presence p;
	hd_err ignored = HD_ERR_INIT;
	char span[32];
	size_t i;
	int rc, busy;

	if ((rc = hd_team_set_status(st, s->team_id, "active", err)) < 0)
		goto done;
	for (i = 0; i < s->npending; i++) {
		/* a member removed meanwhile has nothing to restore; one
		 * still asked goes back to what its work says (activity.h) */
		if ((rc = hd_agent_presence_get(
			 &p, st, s->team_id, s->pending[i], err)) < 0)
			goto done;
		if (!p.found || strcmp(p.status, "shutdown_requested") != 0)
			continue;
		if ((rc = hd_activity__busy(&busy, st, w, s->team_id, &p,
			 s->pending[i], err)) < 0 ||
		    (rc = hd_agent_set_status(st, s->pending[i],
			 busy ? "working" : "idle", err)) < 0)
			goto done;
	}
	if (set_str(&s->outcome, outcome) < 0 ||
	    set_str(&s->refused_by, who) < 0 ||
	    set_str(&s->refusal_reason, who != NULL ? why : NULL) < 0) {
		rc = oom(err);
		goto done;
	}
	s->finished_at = hd_now_ms();
	if ((rc = sd_save(st, s, err)) < 0)
		goto done;
	hd_events_append(st, "shutdown_aborted", s->team_id, 0, who,
	    json_pack("{s:s, s:s, s:s?}", "request_id", s->request_id,
		"outcome", outcome, "reason", why));
	/* the leader hears about it, unless it left the team meanwhile */
	if (!notify || s->requested_by == NULL ||
	    hd_team_member_check(st, s->team_id, s->requested_by, &ignored) < 0)
		goto done;
	if (who != NULL)
		hd_buf_printf(&text,
		    "Shutdown of team %s aborted: %s refused: %s", s->team_id,
		    who, why);
	else {
		fmt_span(span, sizeof(span), s->deadline - s->requested_at);
		hd_buf_printf(&text,
		    "Shutdown of team %s aborted: no answer from ", s->team_id);
		for (i = 0; i < s->npending; i++)
			hd_buf_printf(
			    &text, "%s%s", i ? ", " : "", s->pending[i]);
		hd_buf_printf(&text, " within %s", span);
	}
	if (hd_buf_failed(&text)) {
		rc = hd_buf_error(&text, "message", err);
		goto done;
	}
	memset(&ms, 0, sizeof(ms));
	ms.team = s->team_id;
	ms.to = s->requested_by;
	ms.type = "shutdown_response";
	ms.content = hd_buf_cstr(&text);
	ms.request_id = s->request_id;
	ms.approve = 0;
	ms.reason = who != NULL ? why : "timeout";
	rc = hd_mailbox__send(NULL, st, &ms, 1, err);
done:
	hd_buf_dispose(&text);
	return rc;
}

/* agent (one of s->pending) approves; the last approval shuts the team
 * down. Inside the caller's transaction; s is saved. */
static int
sd_approve(hd_store *st, hd_shutdown *s, const char *agent, hd_err *err)
{
	ssize_t at = strs_find(s->pending, s->npending, agent);
	int rc;

	if (at < 0)
		return 0;
	if (strs_push(&s->approved, &s->napproved, agent) < 0)
		return oom(err);
	free(s->pending[at]);
	memmove(&s->pending[at], &s->pending[at + 1],
	    (s->npending - (size_t)at - 1) * sizeof(*s->pending));
	s->npending--;
	if ((rc = hd_agent_set_status(st, agent, "shutdown", err)) < 0)
		return rc;
	hd_events_append(st, "shutdown_approved", s->team_id, 0, agent,
	    json_pack("{s:s}", "request_id", s->request_id));
	if (s->npending == 0) {
		if ((rc = hd_team_set_status(st, s->team_id, "shutdown", err)) <
		    0)
			return rc;
		if (set_str(&s->outcome, "shutdown") < 0)
			return oom(err);
		s->finished_at = hd_now_ms();
		hd_events_append(st, "shutdown_completed", s->team_id, 0, NULL,
		    json_pack("{s:s}", "request_id", s->request_id));
	}
	return sd_save(st, s, err);
}

int
hd_shutdown__expire_txn(
    hd_store *st, const hd_work *w, const char *team, hd_err *err)
{
	hd_shutdown *s = NULL;
	hd_team *t = NULL;
	hd_err ignored = HD_ERR_INIT;
	int rc;

	if ((rc = sd_load(&s, st, team, err)) < 0)
		return rc;
	if (s == NULL || strcmp(s->outcome, "pending") != 0)
		goto done;
	if (hd_team_get(&t, st, team, &ignored) < 0 ||
	    strcmp(t->status, "shutting_down") != 0) {
		/* invariant 2: the status moved under us; close quietly */
		if (set_str(&s->outcome, "cancelled") < 0) {
			rc = oom(err);
			goto done;
		}
		s->finished_at = hd_now_ms();
		rc = sd_save(st, s, err);
		goto done;
	}
	if (hd_now_ms() >= s->deadline)
		rc = sd_abort(st, w, s, "timeout", NULL, "timeout", 1, err);
done:
	hd_team_free(t);
	hd_shutdown_free(s);
	return rc;
}

struct expire_ctx {
	const hd_work *w;
	const char *team;
};

static int
expire_txn(hd_store *st, void *payload, hd_err *err)
{
	struct expire_ctx *c = payload;

	return hd_shutdown__expire_txn(st, c->w, c->team, err);
}

int
hd_shutdown__expire(
    hd_store *st, const hd_work *w, const char *team, hd_err *err)
{
	struct expire_ctx c = {w, team};
	hd_shutdown *s = NULL;
	hd_team *t = NULL;
	int rc, due;

	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	/* Cheap look first: only a due or stale pending request needs the
	 * write lock. */
	if ((rc = sd_load(&s, st, team, err)) < 0)
		return rc;
	if (s == NULL || strcmp(s->outcome, "pending") != 0)
		goto done;
	due = hd_now_ms() >= s->deadline;
	if (!due) {
		if ((rc = hd_team_get(&t, st, team, err)) < 0)
			goto done;
		due = strcmp(t->status, "shutting_down") != 0;
	}
	if (due)
		rc = hd_store_write(st, expire_txn, &c, err);
done:
	hd_team_free(t);
	hd_shutdown_free(s);
	return rc;
}

/* (7): a shutdown_response m answering a shutdown_request sent to its
 * sender alone; approving shuts the sender down. `no shutdown request
 * "x" in team dev` when no such request was sent to it. */
static int
one_to_one(hd_store *st, const hd_message *m, hd_err *err)
{
	char *by = NULL;
	int rc;

	if (m->request_id != NULL &&
	    (rc = hd_mailbox__request_sender(
		 &by, st, m->team_id, m->from_agent, m->request_id, err)) < 0)
		return rc;
	if (by == NULL)
		return hd_err_set(err, HD_ENOTFOUND,
		    "no shutdown request \"%.128s\" in team %s",
		    m->request_id ? m->request_id : "", m->team_id);
	free(by);
	if (m->approve != 1)
		return 0;
	hd_events_append(st, "shutdown_approved", m->team_id, 0, m->from_agent,
	    json_pack("{s:s}", "request_id", m->request_id));
	return hd_agent_set_status(st, m->from_agent, "shutdown", err);
}

int
hd_shutdown__react(
    hd_store *st, const hd_message *m, const void *work, hd_err *err)
{
	const hd_work *w = work;
	hd_shutdown *s = NULL;
	int response = strcmp(m->type, "shutdown_response") == 0;
	int rc, notify;

	if (!response && strcmp(m->type, "idle") != 0)
		return 0;
	if ((rc = hd_shutdown__expire_txn(st, w, m->team_id, err)) < 0)
		return rc;
	if ((rc = sd_load(&s, st, m->team_id, err)) < 0)
		return rc;
	if (response && (s == NULL || m->request_id == NULL ||
			    strcmp(s->request_id, m->request_id) != 0)) {
		/* not the team's: a request sent to this member alone (7) */
		rc = one_to_one(st, m, err);
		goto done;
	}
	/* An answer to a request that ended, or from a member not (or no
	 * longer) asked, is an ordinary message. */
	if (s == NULL || strcmp(s->outcome, "pending") != 0 ||
	    strs_find(s->pending, s->npending, m->from_agent) < 0)
		goto done;
	if (!response || m->approve == 1)
		rc = sd_approve(st, s, m->from_agent, err);
	else {
		/* the refusal itself reached the leader: no second notice */
		notify = s->requested_by != NULL &&
			 (m->to_agent == NULL ||
			     strcmp(m->to_agent, s->requested_by) != 0);
		rc = sd_abort(
		    st, w, s, "refused", m->from_agent, m->reason, notify, err);
	}
done:
	hd_shutdown_free(s);
	return rc;
}

struct start_ctx {
	const hd_work *w;
	const char *team;
	const char *reason;
	int64_t timeout_ms;
	const char *request_id;
	hd_shutdown *out;
};

static int
sd_request_text(hd_buf *b, const char *team, const char *request_id,
    const char *reason, hd_err *err)
{
	hd_buf_reset(b);
	if (reason != NULL && reason[0] != '\0')
		hd_buf_printf(
		    b, "Team %s is shutting down: %s\n", team, reason);
	else
		hd_buf_printf(b, "Team %s is shutting down.\n", team);
	hd_buf_printf(b,
	    "Request %s: finish or hand off your work, then answer with a "
	    "shutdown_response (approve, or refuse with a reason).",
	    request_id);
	return hd_buf_failed(b) ? hd_buf_error(b, "message", err) : 0;
}

static int
start_txn(hd_store *st, void *payload, hd_err *err)
{
	struct start_ctx *c = payload;
	hd_shutdown *s = NULL, *prev = NULL;
	hd_team *t = NULL;
	hd_agents members = {0};
	hd_buf text = HD_BUF_INIT(HD_MESSAGE_MAX);
	hd_message_spec ms;
	char summary[128];
	int64_t now = hd_now_ms();
	size_t i;
	int rc;

	hd_shutdown_free(c->out); /* a retried body starts afresh */
	c->out = NULL;
	if ((rc = hd_shutdown__expire_txn(st, c->w, c->team, err)) < 0 ||
	    (rc = hd_team_get(&t, st, c->team, err)) < 0)
		goto done;
	if (strcmp(t->status, "shutting_down") == 0) {
		if ((rc = sd_load(&prev, st, c->team, err)) < 0)
			goto done;
		rc = hd_err_set(err, HD_EREFUSED,
		    "team \"%s\" is already shutting down (request %s)", t->id,
		    prev != NULL ? prev->request_id : "unknown");
		goto done;
	}
	if (strcmp(t->status, "shutdown") == 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "team \"%s\" is already shut down", t->id);
		goto done;
	}
	if ((rc = hd_agent_list(&members, st, c->team, err)) < 0)
		goto done;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    set_str(&s->team_id, t->id) < 0 ||
	    set_str(&s->request_id, c->request_id) < 0 ||
	    set_str(&s->requested_by, t->leader_agent_id) < 0 ||
	    set_str(&s->reason, c->reason) < 0 ||
	    set_str(&s->outcome, "pending") < 0) {
		rc = oom(err);
		goto done;
	}
	s->requested_at = now;
	s->deadline = now + c->timeout_ms;
	for (i = 0; i < members.n; i++) {
		const hd_agent *a = &members.items[i];

		/* invariant 4 */
		if ((t->autorun ? strcmp(a->status, "shutdown") == 0
				: strcmp(a->status, "working") != 0) ||
		    (t->leader_agent_id != NULL &&
			strcmp(a->id, t->leader_agent_id) == 0))
			continue;
		if (strs_push(&s->pending, &s->npending, a->id) < 0) {
			rc = oom(err);
			goto done;
		}
	}
	hd_events_append(st, "shutdown_requested", t->id, 0, t->leader_agent_id,
	    json_pack("{s:s, s:s?, s:o}", "request_id", s->request_id, "reason",
		c->reason, "pending", strs_json(s->pending, s->npending)));
	if (s->npending == 0) {
		if ((rc = hd_team_set_status(st, t->id, "shutdown", err)) < 0 ||
		    set_str(&s->outcome, "shutdown") < 0) {
			rc = rc < 0 ? rc : oom(err);
			goto done;
		}
		s->finished_at = now;
		hd_events_append(st, "shutdown_completed", t->id, 0, NULL,
		    json_pack("{s:s}", "request_id", s->request_id));
	} else {
		if ((rc = hd_team_set_status(st, t->id, "shutting_down", err)) <
			0 ||
		    (rc = sd_request_text(
			 &text, t->id, s->request_id, c->reason, err)) < 0)
			goto done;
		snprintf(summary, sizeof(summary), "Team %s is shutting down",
		    t->id);
		memset(&ms, 0, sizeof(ms));
		ms.team = t->id;
		ms.from = t->leader_agent_id;
		ms.type = "shutdown_request";
		ms.content = hd_buf_cstr(&text);
		ms.summary = summary;
		ms.request_id = s->request_id;
		ms.approve = -1;
		ms.reason = c->reason;
		for (i = 0; i < s->npending; i++) {
			ms.to = s->pending[i];
			if ((rc = hd_agent_set_status(st, s->pending[i],
				 "shutdown_requested", err)) < 0 ||
			    (rc = hd_mailbox__send(NULL, st, &ms,
				 t->leader_agent_id == NULL, err)) < 0)
				goto done;
		}
	}
	if ((rc = sd_save(st, s, err)) < 0)
		goto done;
	c->out = s;
	s = NULL;
done:
	hd_buf_dispose(&text);
	hd_agents_dispose(&members);
	hd_team_free(t);
	hd_shutdown_free(prev);
	hd_shutdown_free(s);
	return rc;
}

int
hd_shutdown__start(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, const char *reason, int64_t timeout_ms, hd_err *err)
{
	struct start_ctx c;
	char hex[17], request_id[32];
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (reason != NULL &&
	    (rc = hd_text_check("reason", reason, 0, SD_REASON_MAX, err)) < 0)
		return rc;
	if (timeout_ms < 0 || timeout_ms > HD_SHUTDOWN_TIMEOUT_MAX_MS)
		return hd_err_set(err, HD_EINVAL,
		    "shutdown timeout must be between 0 (default) and %d ms",
		    HD_SHUTDOWN_TIMEOUT_MAX_MS);
	if ((rc = hd_random_hex(hex, 8, err)) < 0)
		return rc;
	snprintf(request_id, sizeof(request_id), "shutdown-%s", hex);
	memset(&c, 0, sizeof(c));
	c.w = w;
	c.team = team;
	c.reason = reason != NULL && reason[0] != '\0' ? reason : NULL;
	c.timeout_ms = timeout_ms > 0 ? timeout_ms : HD_SHUTDOWN_TIMEOUT_MS;
	c.request_id = request_id;
	if ((rc = hd_store_write(st, start_txn, &c, err)) < 0) {
		hd_shutdown_free(c.out);
		return rc;
	}
	*out = c.out;
	return 0;
}

int
hd_shutdown__get(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, hd_err *err)
{
	hd_team *t = NULL;
	int rc;

	*out = NULL;
	if ((rc = hd_team_get(&t, st, team, err)) < 0)
		return rc;
	hd_team_free(t);
	if ((rc = hd_shutdown__expire(st, w, team, err)) < 0)
		return rc;
	return sd_load(out, st, team, err);
}

/* An answer names the request it answers. */
static int
request_id_check(const char *request_id, hd_err *err)
{
	if (request_id == NULL || request_id[0] == '\0')
		return hd_err_set(
		    err, HD_EINVAL, "shutdown_response needs a request_id");
	return 0;
}

/* ... and approves (1) or refuses (0) it, a refusal with a reason. */
static int
verdict_check(
    const char *request_id, int approve, const char *reason, hd_err *err)
{
	int rc;

	if ((rc = request_id_check(request_id, err)) < 0)
		return rc;
	if (approve != 0 && approve != 1)
		return hd_err_set(err, HD_EINVAL,
		    "shutdown_response needs approve (true or false)");
	if (!approve && (reason == NULL || reason[0] == '\0'))
		return hd_err_set(
		    err, HD_EINVAL, "a refused shutdown needs a reason");
	return 0;
}

/* Who asked request_id of agent in team, inside a transaction: *team_req
 * says it is the team's request (whose asker may be nobody). */
static int
requester_find(char **out, int *team_req, hd_store *st, const char *team,
    const char *agent, const char *request_id, hd_err *err)
{
	hd_shutdown *s = NULL;
	int rc;

	*out = NULL;
	*team_req = 0;
	if ((rc = sd_load(&s, st, team, err)) < 0)
		return rc;
	if (s != NULL && strcmp(s->request_id, request_id) == 0) {
		*team_req = 1;
		if (s->requested_by != NULL &&
		    (*out = strdup(s->requested_by)) == NULL)
			rc = oom(err);
	} else if ((rc = hd_mailbox__request_sender(
			out, st, team, agent, request_id, err)) == 0 &&
		   *out == NULL)
		rc = hd_err_set(err, HD_ENOTFOUND,
		    "no shutdown request \"%.128s\" in team %s", request_id,
		    team);
	hd_shutdown_free(s);
	return rc;
}

struct requester_ctx {
	const char *team;
	const char *agent;
	const char *request_id;
	char *out;
};

static int
requester_txn(hd_store *st, void *payload, hd_err *err)
{
	struct requester_ctx *c = payload;
	int team_req;

	free(c->out);
	return requester_find(
	    &c->out, &team_req, st, c->team, c->agent, c->request_id, err);
}

int
hd_shutdown_requester(char **out, hd_store *st, const char *team,
    const char *agent, const char *request_id, hd_err *err)
{
	struct requester_ctx c = {team, agent, request_id, NULL};
	int rc;

	*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = request_id_check(request_id, err)) < 0)
		return rc;
	if ((rc = hd_store_read(st, requester_txn, &c, err)) < 0) {
		free(c.out);
		return rc;
	}
	*out = c.out;
	return 0;
}

struct answer_ctx {
	const hd_work *w;
	const hd_message_spec *spec;
	hd_message *out;
};

/* (6): find the asker and send the answer to it, or record the answer
 * when the team's request had nobody to tell. */
static int
answer_txn(hd_store *st, void *payload, hd_err *err)
{
	struct answer_ctx *c = payload;
	const hd_message_spec *spec = c->spec;
	hd_message_spec ms = *spec;
	hd_message view;
	char *to = NULL;
	int rc, team_req;

	hd_message_free(c->out); /* a retried transaction starts over */
	c->out = NULL;
	if ((rc = hd_team_member_check(st, spec->team, spec->from, err)) < 0 ||
	    (rc = hd_shutdown__expire_txn(st, c->w, spec->team, err)) < 0 ||
	    (rc = requester_find(&to, &team_req, st, spec->team, spec->from,
		 spec->request_id, err)) < 0)
		goto done;
	if (to != NULL) {
		ms.to = to;
		ms.type = "shutdown_response";
		rc = hd_mailbox__send_then(
		    &c->out, st, &ms, 0, hd_shutdown__react, c->w, err);
		goto done;
	}
	/* the team's request, made without a leader: record it directly */
	memset(&view, 0, sizeof(view));
	view.team_id = (char *)spec->team;
	view.from_agent = (char *)spec->from;
	view.type = "shutdown_response";
	view.content = (char *)spec->content;
	view.request_id = (char *)spec->request_id;
	view.approve = spec->approve;
	view.reason = (char *)spec->reason;
	rc = hd_shutdown__react(st, &view, c->w, err);
done:
	free(to);
	return rc;
}

int
hd_shutdown__answer(hd_message **out, hd_store *st, const hd_work *w,
    const hd_message_spec *spec, hd_err *err)
{
	struct answer_ctx c = {w, spec, NULL};
	hd_message_spec ms;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (spec->type != NULL && strcmp(spec->type, "shutdown_response") != 0)
		return hd_err_set(err, HD_EINVAL,
		    "only a shutdown_response finds its own recipient, not a "
		    "%.64s",
		    spec->type);
	if (spec->to != NULL) {
		ms = *spec;
		ms.type = "shutdown_response";
		return hd_mailbox__send_then(
		    out, st, &ms, 0, hd_shutdown__react, w, err);
	}
	/* what the send would check, before looking anyone up */
	if (spec->team == NULL || spec->from == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "a shutdown_response needs a team and a sender");
	if ((rc = hd_slug_check("team", spec->team, err)) < 0 ||
	    (rc = hd_slug_check("agent", spec->from, err)) < 0 ||
	    (rc = hd_mailbox__check_content(spec->content, err)) < 0 ||
	    (rc = verdict_check(
		 spec->request_id, spec->approve, spec->reason, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, answer_txn, &c, err)) < 0) {
		hd_message_free(c.out);
		return rc;
	}
	if (out != NULL)
		*out = c.out;
	else
		hd_message_free(c.out);
	return 0;
}

int
hd_shutdown__respond(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, const char *agent, const char *request_id, int approve,
    const char *reason, hd_err *err)
{
	hd_message_spec ms;
	hd_shutdown *s = NULL;
	hd_buf text = HD_BUF_INIT(HD_MESSAGE_MAX);
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0 ||
	    (rc = verdict_check(request_id, approve, reason, err)) < 0)
		return rc;
	if ((rc = hd_team_exists(st, team, err)) < 0)
		return rc;
	if (approve)
		hd_buf_printf(
		    &text, "Approved shutdown request %s", request_id);
	else
		hd_buf_printf(&text, "Refused shutdown request %s: %s",
		    request_id, reason);
	if (hd_buf_failed(&text)) {
		rc = hd_buf_error(&text, "message", err);
		goto done;
	}
	memset(&ms, 0, sizeof(ms));
	ms.team = team;
	ms.from = agent;
	ms.type = "shutdown_response";
	ms.content = hd_buf_cstr(&text);
	ms.request_id = request_id;
	ms.approve = approve;
	ms.reason = approve ? NULL : reason;
	if ((rc = hd_shutdown__answer(NULL, st, w, &ms, err)) < 0 ||
	    out == NULL)
		goto done;
	/* the team's request afterwards; none for a one-to-one request */
	if ((rc = hd_shutdown__get(&s, st, w, team, err)) < 0)
		goto done;
	if (s != NULL && strcmp(s->request_id, request_id) == 0) {
		*out = s;
		s = NULL;
	}
done:
	hd_buf_dispose(&text);
	hd_shutdown_free(s);
	return rc;
}

int
hd_shutdown__wait(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, const char *request_id, int64_t timeout_ms, hd_err *err)
{
	hd_shutdown *s = NULL;
	int64_t start = hd_mono_ms(), limit = timeout_ms, left;
	int rc;

	*out = NULL;
	/*
	 * Polling (SD_POLL_US) is deliberate for now: each poll is one kv
	 * read, and evaluates the timeout itself, so the wait always ends by
	 * the deadline. When the cross-process change notification (inotify
	 * on the WAL, being built for the room) lands, wait on it instead.
	 */
	for (;;) {
		if ((rc = hd_shutdown__get(&s, st, w, team, err)) < 0)
			return rc;
		if (s == NULL || strcmp(s->request_id, request_id) != 0) {
			hd_shutdown_free(s);
			return hd_err_set(err, HD_ENOTFOUND,
			    "no shutdown request \"%.128s\" in team %s",
			    request_id, team);
		}
		if (strcmp(s->outcome, "pending") != 0) {
			*out = s;
			return 0;
		}
		if (limit <= 0) /* until the request's own deadline, + slack */
			limit = s->deadline - hd_now_ms() + 1000;
		hd_shutdown_free(s);
		s = NULL;
		left = limit - (hd_mono_ms() - start);
		if (left <= 0)
			return hd_err_set(err, HD_ETIMEOUT,
			    "shutdown request %s of team %s is still pending "
			    "after %lld ms",
			    request_id, team, (long long)limit);
		hd_sleep_us(
		    left * 1000 < SD_POLL_US ? left * 1000 : SD_POLL_US);
	}
}

int
hd_shutdown_team_purge(hd_store *st, const char *team, hd_err *err)
{
	char key[SD_KEY_MAX];

	sd_key(key, sizeof(key), team);
	return hd_store_kv_delete(st, key, 0, err);
}
