/*
 * conv_record.c -- recording the reply to a claimed delivery (SPEC 7,
 * conversation.h (1)-(6)): the reply cleaned, its room and file tags
 * applied, its mentions enqueued (loop guard, drops, the pending note),
 * the counters, the delivery done, the agent's status, turn state, spend
 * and the events, all in one transaction of the owning engine. The rows
 * are the domain module's (conversation_store.h); this file decides what
 * they say.
 *  (1) Only a delivery that is running and owned by this engine is
 *      answered (hd_convstore_answerable, inside the transaction): any
 *      other is HD_ECONFLICT and nothing changes (conversation.c (2), (4)).
 *  (2) A reply's mentions are enqueued only while, counting it, the
 *      conversation has fewer than max_messages replies; a refused target
 *      is dropped with a mention_dropped event (conversation.h (2)).
 *  (3) The pending note's N is computed when the mention is enqueued,
 *      and the delivered text is frozen then (conversation.h (3)).
 *  (4) Files are read before the transaction (conv_files.c) and stored
 *      in it, with the reply.
 * Callers: conv_engine.c (hd_conv__record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/budget.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/session.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "conversation_int.h"

#define NO_RESPONSE "(no response)"

static int
oom(hd_err *err)
{
	return hd_err_set(err, HD_ENOMEM, "out of memory");
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

/* ---- recording a reply -----------------------------------------------------
 */

void
hd_conv__recorded_dispose(hd_conv_recorded *r)
{
	hd_conv__claim_dispose(&r->next);
	free(r->body);
	hd_strv_free(r->targets, r->ntargets);
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
	int64_t id;
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
			hd_conv__drop_mention(st, c->conversation_id, c->team,
			    c->agent, target, why);
			continue;
		}
		if (strv_push(&out->targets, &out->ntargets, target) < 0)
			return oom(err);
	}
	if (out->ntargets == 0)
		return 0;
	/* the agents with an unanswered message in the conversation, except
	 * the one being answered: the "others" of conversation.h (3) */
	if ((rc = hd_convstore_unanswered(&busy, &nbusy, st,
		 c->conversation_id, c->delivery_id, err)) < 0)
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
		if ((rc = hd_convstore_enqueue_mention(&id, st,
			 c->conversation_id, out->targets[i], c->agent,
			 mt->body, prompt, hd_now_ms(), err)) < 0)
			goto done;
		if (t->first_mention == 0)
			t->first_mention = id;
		free(prompt);
		prompt = NULL;
	}
done:
	free(prompt);
	hd_strv_free(busy, nbusy);
	return rc;
}

/* The room post that carries deliveries from first on (the reply that
 * mentioned their agents): their prompts say it once, as the request. */
static int
mark_carried(hd_store *st, const hd_conv_claim *c, int64_t first,
    int64_t post_seq, hd_err *err)
{
	if (first == 0 || post_seq == 0)
		return 0;
	return hd_convstore_carry(
	    st, c->conversation_id, c->agent, first, post_seq, err);
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
			hd_conv__room_post(
			    st, r->team, "peer", c->agent, r->body);
			continue;
		}
		snprintf(target, sizeof(target), "#%s", r->team);
		hd_conv__drop_mention(
		    st, c->conversation_id, c->team, c->agent, target, why);
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

	if ((rc = hd_convstore_files_add(st, c->conversation_id, seq, c->agent,
		 t->tg->files, t->tg->nfiles, err)) < 0 ||
	    t->cut == NULL)
		return rc;
	snprintf(name, sizeof(name), "answer-%lld.md", (long long)seq);
	whole.name = name;
	whole.media_type = "text/markdown";
	whole.content = (unsigned char *)(uintptr_t)t->body;
	whole.size = strlen(t->body);
	return hd_convstore_files_add(
	    st, c->conversation_id, seq, c->agent, &whole, 1, err);
}

static int
record_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct record_txn *t = payload;
	const hd_conv_claim *c = t->c;
	hd_conv_recorded *out = t->out;
	hd_convstore_reply row;
	char *capped = NULL;
	const char *shown;
	int64_t total = 0, max = 0, pending = 0, now = hd_now_ms();
	int rc, ours;

	hd_strv_free(out->targets, out->ntargets);
	out->targets = NULL;
	out->ntargets = 0;
	t->first_mention = 0;
	if ((rc = hd_convstore_answerable(&ours, &total, &max, &pending, st,
		 c->delivery_id, t->me->token, err)) < 0)
		return rc;
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
	row.conv = c->conversation_id;
	row.seq = out->seq;
	row.delivery_id = c->delivery_id;
	row.agent = c->agent;
	row.body = shown;
	row.is_error = t->is_error;
	row.created_at = now;
	if ((rc = hd_convstore_reply_add(st, &row, err)) < 0)
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

	if ((rc = hd_convstore_set_counts(st, c->conversation_id, out->seq,
		 out->pending_after, err)) < 0 ||
	    (rc = hd_convstore_done(st, c->delivery_id, now, err)) < 0)
		return rc;
	out->next_result = HD_CONV_NONE;
	/* a failed turn puts the agent in error (the leader is told) until
	 * a turn of it begins again: maybe the next delivery, at once */
	if (t->aborted)
		hd_conv__activity(
		    st, c->team, c->agent, HD_CONV_ACT_ABORT, NULL);
	else if (t->is_error) {
		/* the reason, without the room's "[error: ...]" around it */
		size_t blen = strlen(t->body);
		char *why = NULL;

		if (blen > 9 && strncmp(t->body, "[error: ", 8) == 0 &&
		    t->body[blen - 1] == ']')
			why = strndup(t->body + 8, blen - 9);
		hd_conv__activity(st, c->team, c->agent, HD_CONV_ACT_END,
		    why != NULL ? why : t->body);
		free(why);
	}
	if (t->want_next && (rc = hd_conv__claim_in_txn(&out->next_result,
				 &out->next, st, c->agent, t->me, err)) < 0)
		return rc;
	if (out->next_result != HD_CONV_CLAIMED) {
		hd_conv__claim_dispose(&out->next);
		out->next_result = HD_CONV_NONE;
		/* a good turn with no next: idle, with the notice, unless it
		 * still holds a started task */
		if (!t->is_error && !t->aborted)
			hd_conv__activity(
			    st, c->team, c->agent, HD_CONV_ACT_END, NULL);
	} else if (!t->is_error && !t->aborted)
		/* the next began (counted in by its claim): this one is out,
		 * working throughout */
		hd_conv__activity(
		    st, c->team, c->agent, HD_CONV_ACT_CHAIN, NULL);
	if ((rc = mark_carried(st, c, t->first_mention,
		 hd_conv__room_post(st, c->team, "peer", c->agent, shown),
		 err)) < 0)
		return rc;
	if (t->turn != NULL && (rc = save_turn(st, c, t->turn, err)) < 0)
		return rc;
	if ((capped = hd_conv__cap_text(shown, HD_ROOM_BODY_MAX)) == NULL)
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
	rc = hd_conv__owner_write(st, me, record_txn_fn, &t, err);
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
