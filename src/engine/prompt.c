/*
 * prompt.c -- a turn's prompt, for every runtime and both engines
 * (prompt.h has the sections). Owns no table: it reads the team, the
 * board, the room and the mailbox through their modules.
 *  (1) Context first, the request last: a model reads the standing
 *      context (who it is, its team) before what happened and what it
 *      must answer; context_len tells where that context ends and
 *      request_off where the request starts, so a runtime that matches on
 *      what is new (scripted) never matches the boilerplate.
 *  (2) seen is the last room seq the prompt included, the skipped post
 *      counting as included (it is heard as the request), and never below
 *      the cursor, so posts that land while the turn runs, and posts the
 *      budget left out, are delivered next time. The agent's own posts
 *      are never included (echo guard).
 *  (3) Mailbox messages are marked delivered by the same read that
 *      renders them (hd_mailbox_read), in the caller's transaction.
 *  (4) The prompt is capped at HD_PROMPT_MAX: past it the build fails with
 *      a clear error instead of handing a runtime an unbounded prompt.
 *  (5) The room catch-up keeps the prompt budget (prompt.h): each body
 *      cut to post_chars code points on a character boundary, the whole
 *      catch-up at most room_chars, oldest first, stopping at the first
 *      post that does not fit (the first post always goes in, so a
 *      cursor with posts after it always moves). The budget counts what
 *      the model reads: envelopes and the blank lines between them.
 *      A skipped post past the stop is shown as a room post next time.
 *  (6) The memory section is the agent's own memory search (memory.h:
 *      what it may read, never another team's or agent's private facts)
 *      for the request's words, top HD_PROMPT_MEMORY_FACTS by bm25,
 *      within memory_chars code points; a request with no words has no
 *      memory section. It comes right before the request, after the
 *      standing context, so a runtime matching on what is new sees it.
 *  (7) The intro offers huddle's tools only to an agent whose runtime's
 *      plan has them (runtime.h, huddle_tools); an agent without them
 *      (an OpenClaw Gateway's) is told its reply is its post, and its
 *      mention tags its way to hand a teammate work.
 * Callers: exchange turns (turn.c), conversation deliveries
 * (conv_engine.c), the supervisor's turns (supervisor.c).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/envelope.h>
#include <huddle/mailbox.h>
#include <huddle/memory.h>
#include <huddle/prompt.h>
#include <huddle/room.h>
#include <huddle/runtime.h>
#include <huddle/team_state.h>
#include <huddle/util.h>

/* (7): the intro, for an agent with huddle's tools or without them. */
static void
intro(hd_buf *b, const char *agent, const char *team, int is_leader,
    int tools)
{
	hd_buf_puts(b, "You are ");
	hd_buf_puts(b, agent);
	hd_buf_puts(
	    b, is_leader ? ", the leader of team " : ", a member of team ");
	hd_buf_puts(b, team);
	if (tools)
		hd_buf_puts(b,
		    ", working with your teammates through huddle. huddle's "
		    "tools are how you act on the team: team_chat_post posts "
		    "to the team room, task_list, task_claim, task_start and "
		    "task_complete work the board, send_message and "
		    "inbox_read carry messages to and from teammates.");
	else
		hd_buf_puts(b,
		    ", working with your teammates through huddle. You have "
		    "no huddle tools here: huddle posts your reply to the "
		    "team room as you, and a tag [@teammate: message] in it "
		    "hands that teammate the message.");
	hd_buf_puts(b,
	    " Room posts below are wrapped as inter-session messages "
	    "(isUser=false): they come from your team, not from the user.");
}

void
hd_prompt_intro(hd_buf *b, const char *agent, const char *team, int is_leader)
{
	intro(b, agent, team, is_leader, 1);
}

/* Whether the agent's runtime hands it huddle's tools: its plan
 * (runtime.h), never its name; a runtime this build lacks counts as
 * having them (its turn fails before it reads a prompt). */
static int
has_tools(const hd_agent *a)
{
	const hd_runtime_adapter *rt;
	hd_runtime_caps caps;
	hd_err err = HD_ERR_INIT;

	if (a->runtime == NULL || hd_runtime_find(&rt, a->runtime, &err) < 0)
		return 1;
	memset(&caps, 0, sizeof(caps));
	rt->capabilities(&caps);
	return hd_runtime_resolve_integration(&caps).huddle_tools;
}

/* Start a new section: sections are joined by one blank line. */
static void
section(hd_buf *b)
{
	if (b->len > 0)
		hd_buf_puts(b, "\n\n");
}

/* Append s without its trailing newlines. */
static void
put_trimmed(hd_buf *b, const char *s)
{
	size_t len = strlen(s);

	while (len > 0 && s[len - 1] == '\n')
		len--;
	hd_buf_put(b, s, len);
}

/* Where prompt_post puts the posts it is handed. */
typedef struct prompt_room {
	hd_buf *b;
	hd_buf one; /* the post being rendered, before it is known to fit */
	int64_t skip_seq;
	int64_t seen;
	size_t n;          /* posts handed over by this page */
	size_t room_chars; /* the budget (5) */
	size_t post_chars;
	size_t used;  /* code points of catch-up so far */
	size_t shown; /* posts in the catch-up */
	int full;     /* a post did not fit: the read was stopped */
} prompt_room;

/* The code points in the len bytes at s (valid UTF-8). */
static size_t
utf8_count(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* The bytes of s's first chars code points (all of s when shorter). */
static size_t
utf8_prefix(const char *s, size_t len, size_t chars)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && chars-- == 0)
			break;
	return i;
}

static int
prompt_post(void *ctx, const hd_post *p, hd_err *err)
{
	prompt_room *pr = ctx;
	size_t len = strlen(p->body), keep = len, chars;
	int rc;

	pr->n++;
	if (p->seq == pr->skip_seq) {
		if (p->seq > pr->seen)
			pr->seen = p->seq;
		return 0; /* heard as the request */
	}
	hd_buf_reset(&pr->one);
	if (pr->b->len > 0)
		hd_buf_puts(&pr->one, "\n\n"); /* as section() would */
	if (utf8_count(p->body, len) > pr->post_chars)
		keep = utf8_prefix(p->body, len,
		    pr->post_chars > 0 ? pr->post_chars - 1 : 0);
	if ((rc = hd_envelope_append(&pr->one, p->author, p->kind, p->seq,
		 p->body, keep, err)) < 0)
		return rc;
	if (keep < len)
		hd_buf_puts(&pr->one, "\xe2\x80\xa6"); /* "…" */
	if (hd_buf_failed(&pr->one))
		return hd_buf_error(&pr->one, "prompt", err);
	chars = utf8_count(pr->one.ptr, pr->one.len);
	if (pr->shown > 0 && pr->used + chars > pr->room_chars) {
		pr->full = 1;
		return hd_err_set(err, HD_EREFUSED, "prompt budget reached");
	}
	/* the prompt's own limit holds: checked once at the end (4) */
	hd_buf_put(pr->b, pr->one.ptr, pr->one.len);
	pr->used += chars;
	pr->shown++;
	if (p->seq > pr->seen)
		pr->seen = p->seq;
	return 0;
}

/* A budget: the spec's when set, else the environment's variable when it
 * holds a positive number, else the default. */
static size_t
budget(size_t given, const char *var, size_t dflt)
{
	const char *env = getenv(var);
	int64_t v;

	if (given > 0)
		return given;
	if (env != NULL && hd_parse_i64(&v, env, var, NULL) == 0 && v > 0)
		return (size_t)v;
	return dflt;
}

/* The room since the cursor, page by page, each post read straight from
 * its row into its envelope, within the budget (2, 5). */
static int
prompt_posts(hd_buf *b, hd_prompt *out, hd_store *st,
    const hd_prompt_spec *spec, hd_err *err)
{
	prompt_room pr;
	int64_t since = spec->since_seq > 0 ? spec->since_seq : 0;
	int rc = 0;

	memset(&pr, 0, sizeof(pr));
	pr.b = b;
	pr.skip_seq = spec->skip_seq;
	pr.seen = since;
	pr.room_chars = budget(spec->room_chars, "HUDDLE_PROMPT_ROOM_CHARS",
	    HD_PROMPT_ROOM_CHARS);
	pr.post_chars = budget(spec->post_chars, "HUDDLE_PROMPT_POST_CHARS",
	    HD_PROMPT_POST_CHARS);
	do {
		pr.n = 0;
		rc = hd_room_read_each(st, spec->team, since, HD_ROOM_READ_MAX,
		    spec->agent->id, prompt_post, &pr, &since, err);
	} while (rc == 0 && pr.n == HD_ROOM_READ_MAX);
	if (pr.full) {
		hd_err_clear(err);
		rc = 0;
		section(b);
		hd_buf_puts(b, HD_PROMPT_ROOM_CUT);
	}
	if (rc == 0) {
		out->seen = pr.seen;
		out->room_posts = pr.shown;
		out->room_cut = pr.full;
	}
	hd_buf_dispose(&pr.one);
	return rc;
}

/* The memory section for the request (6). */
static int
prompt_memory(hd_buf *b, hd_prompt *out, hd_store *st,
    const hd_prompt_spec *spec, hd_err *err)
{
	size_t cap = budget(spec->memory_chars, "HUDDLE_PROMPT_MEMORY_CHARS",
	    HD_PROMPT_MEMORY_CHARS);
	hd_buf one = HD_BUF_INIT(0), sec = HD_BUF_INIT(0);
	hd_memory_query q;
	hd_facts l;
	size_t i, used = 0, chars, len, keep;
	int rc;

	memset(&q, 0, sizeof(q));
	q.team = spec->team;
	q.agent = spec->agent->id;
	q.text = spec->request;
	q.limit = HD_PROMPT_MEMORY_FACTS;
	if (q.text == NULL)
		return 0;
	if ((rc = hd_memory_search(&l, st, &q, err)) < 0) {
		if (rc != HD_EINVAL)
			return rc;
		hd_err_clear(err); /* no words: no memory */
		return 0;
	}
	for (i = 0; i < l.n; i++) {
		const hd_fact *f = &l.items[i];

		hd_buf_reset(&one);
		hd_buf_printf(&one, "\n- #%lld [%s] ", (long long)f->id, f->scope);
		chars = utf8_count(one.ptr, one.len);
		len = strlen(f->text);
		if (used + chars + utf8_count(f->text, len) > cap) {
			if (i > 0)
				break;
			/* the first always goes in, cut to fit */
			keep = cap > chars + 1 ? cap - chars - 1 : 0;
			hd_buf_put(&one, f->text, utf8_prefix(f->text, len, keep));
			hd_buf_puts(&one, "\xe2\x80\xa6"); /* "…" */
		} else
			hd_buf_put(&one, f->text, len);
		hd_buf_put(&sec, one.ptr, one.len);
		used += utf8_count(one.ptr, one.len);
		out->memory_facts++;
	}
	if (out->memory_facts > 0) {
		section(b);
		hd_buf_puts(b, HD_PROMPT_MEMORY_HEAD);
		hd_buf_put(b, sec.ptr, sec.len);
	}
	rc = hd_buf_failed(&one) || hd_buf_failed(&sec)
		 ? hd_err_set(err, HD_ENOMEM, "out of memory")
		 : 0;
	hd_buf_dispose(&one);
	hd_buf_dispose(&sec);
	hd_facts_dispose(&l);
	return rc;
}

int
hd_prompt_build(
    hd_prompt *out, hd_store *st, const hd_prompt_spec *spec, hd_err *err)
{
	hd_buf b = HD_BUF_INIT(HD_PROMPT_MAX);
	hd_messages msgs = {0};
	char *text = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	intro(&b, spec->agent->id, spec->team, spec->is_leader,
	    has_tools(spec->agent));
	rc = spec->is_leader
		 ? hd_team_state(&text, st, spec->team, err)
		 : hd_team_context(&text, st, spec->team, spec->agent->id, err);
	if (rc < 0)
		goto done;
	section(&b);
	put_trimmed(&b, text);
	free(text);
	text = NULL;
	out->context_len = b.len;
	if (spec->last_summary != NULL && spec->last_summary[0] != '\0') {
		section(&b);
		hd_buf_puts(&b, "Your last turn:\n");
		hd_buf_puts(&b, spec->last_summary);
	}
	if ((rc = prompt_posts(&b, out, st, spec, err)) < 0)
		goto done;
	if ((rc = hd_mailbox_read(&msgs, st, spec->agent->id, 0, err)) < 0)
		goto done;
	if (spec->redeliver != NULL && spec->redeliver->n > 0) {
		if ((rc = hd_mailbox_render(&text, spec->redeliver, err)) < 0)
			goto done;
		section(&b);
		hd_buf_puts(&b, text);
		free(text);
		text = NULL;
	}
	if (msgs.n > 0) {
		if ((rc = hd_mailbox_render(&text, &msgs, err)) < 0)
			goto done;
		section(&b);
		hd_buf_puts(&b, text);
		out->nmessages = msgs.n;
		out->first_message = msgs.items[0].id;
		out->last_message = msgs.items[msgs.n - 1].id;
	}
	if ((rc = prompt_memory(&b, out, st, spec, err)) < 0)
		goto done;
	section(&b);
	out->request_off = b.len;
	hd_buf_puts(&b, spec->request != NULL ? spec->request : "");
	if (hd_buf_failed(&b)) {
		rc = hd_buf_error(&b, "prompt", err);
		goto done;
	}
	out->text = hd_buf_detach(&b);
done:
	free(text);
	hd_messages_dispose(&msgs);
	hd_buf_dispose(&b);
	return rc;
}

void
hd_prompt_dispose(hd_prompt *p)
{
	if (p == NULL)
		return;
	free(p->text);
	memset(p, 0, sizeof(*p));
}
