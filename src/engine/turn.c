/*
 * turn.c -- one turn of an exchange, heartbeat-restore (SPEC 8.1), in
 * three parts: begin (announce and assemble) and save (post and record)
 * run inside a write transaction the loop opens (exchange.c), execute
 * (the runtime) outside any. Owns no table: the turn state lives in kv
 * under "turn:<room>:<agent>", the post in the room, lineage in sessions
 * (team/session.c), spend in budgets (team/budget.c).
 *  (1) State missing or malformed reads as zeros, field by field, so a
 *      damaged row costs one turn of context, never the exchange. While
 *      an exchange holds the room lock it is the only writer of its
 *      room's states, so the loop reads them once and keeps its copy
 *      (hd_exchange__turn_adopt) in step with what each save writes.
 *      The parse is kept in the store's memo with the text it came from
 *      (a save puts what it wrote once it committed, as the parse of that
 *      text would read it): a long-lived process reading a state it wrote
 *      or read before, unchanged, does not parse it again.
 *  (2) last_seen_seq becomes the last seq the prompt included (the
 *      stimulus post counts as included: it is the stimulus), so posts
 *      that land while the turn runs, and those the prompt budget left
 *      out (prompt.h), are delivered next time. The
 *      speaker's own posts are never included (echo guard).
 *  (3) The native session is resumed only when the stored runtime equals
 *      the agent's runtime now: a session id means nothing to another
 *      runtime.
 *  (4) The post, the state, the lineage, the spend and the turn's events
 *      commit in one transaction: a turn that is in the room is paid for
 *      and remembered, and one that is not left no trace but its
 *      speaker_selected and turn_started events.
 *  (5) The posted body is always a valid room body: invalid UTF-8 and NUL
 *      bytes become U+FFFD, surrounding whitespace is trimmed, empty
 *      output is HD_EXCHANGE_NO_RESPONSE, and a reply longer than the room
 *      allows is cut on a character boundary with a note.
 *  (6) The turn's own events carry only slugs, fixed names, integers and
 *      one real formatted by Jansson, so their data is printed directly
 *      (hd_events_append_raw) in exactly the form json_dumps gave.
 *  (7) begin writes nothing before the lease is known to be held: a lost
 *      lease (HD_ECONFLICT) leaves the transaction as begin found it, so
 *      the loop can still commit the previous turn's save with it.
 *  (8) While the runtime's command runs, its process group (pid and start
 *      time) is recorded with the room lock (room/lock.c (4)), in its own
 *      transaction once it started; the next step's progress clears it.
 *      A holder that died with the turn running leaves it for its
 *      successor to kill before the turn runs again.
 * Callers: exchange.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/attach.h>
#include <huddle/buf.h>
#include <huddle/budget.h>
#include <huddle/envelope.h>
#include <huddle/events.h>
#include <huddle/live.h>
#include <huddle/mailbox.h>
#include <huddle/prompt.h>
#include <huddle/room.h>
#include <huddle/session.h>
#include <huddle/util.h>

#include <huddle/store.h>
#include "exchange_int.h"

#define HD_LOG_COMPONENT "exchange"
#include <huddle/log.h>

#define REPLY_CUT_NOTE "\n[reply cut to fit the room]"
#define REPLACEMENT "\xef\xbf\xbd"

void
hd_exchange__state_key(
    char *out, size_t outlen, const char *room_id, const char *agent)
{
	snprintf(out, outlen, "turn:%s:%s", room_id, agent);
}

/* ---- state (1) ---- */

static int64_t
json_i64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0
		   ? (int64_t)json_integer_value(v)
		   : 0;
}

static char *
json_str_dup(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) && json_string_length(v) > 0
		   ? strdup(json_string_value(v))
		   : NULL;
}

/* A copy of in, as a parse would read it back: integers above zero or
 * zero, strings non-empty or NULL. 0, or -1 when memory ran out. */
static int
state_copy(hd_turn_state *out, const hd_turn_state *in)
{
	memset(out, 0, sizeof(*out));
	out->last_seen_seq = in->last_seen_seq > 0 ? in->last_seen_seq : 0;
	out->turn_index = in->turn_index > 0 ? in->turn_index : 0;
	out->last_event_seq = in->last_event_seq > 0 ? in->last_event_seq : 0;
	if ((in->native_session_id != NULL && in->native_session_id[0] &&
		(out->native_session_id = strdup(in->native_session_id)) ==
		    NULL) ||
	    (in->runtime != NULL && in->runtime[0] &&
		(out->runtime = strdup(in->runtime)) == NULL) ||
	    (in->last_summary != NULL && in->last_summary[0] &&
		(out->last_summary = strdup(in->last_summary)) == NULL)) {
		hd_turn_state_dispose(out);
		return -1;
	}
	return 0;
}

static void
state_free(void *v)
{
	hd_turn_state_dispose(v);
	free(v);
}

/* Keep s in st's memo as the parse of text, under key (1). */
static void
state_memo_put(
    hd_store *st, const char *key, const char *text, const hd_turn_state *s)
{
	hd_turn_state *c = malloc(sizeof(*c));

	if (c != NULL && state_copy(c, s) == 0)
		hd_store_memo_put(st, key, text, c, state_free);
	else
		free(c);
}

static void
state_parse(hd_turn_state *out, const char *key, const char *raw)
{
	json_t *j = json_loads(raw, 0, NULL);

	if (!json_is_object(j)) {
		hd_log_debug(
		    "turn state %s is malformed; starting from zeros", key);
		json_decref(j);
		return;
	}
	out->last_seen_seq = json_i64(j, "last_seen_seq");
	out->native_session_id = json_str_dup(j, "native_session_id");
	out->runtime = json_str_dup(j, "runtime");
	out->last_summary = json_str_dup(j, "last_summary");
	out->turn_index = json_i64(j, "turn_index");
	out->last_event_seq = json_i64(j, "last_event_seq");
	json_decref(j);
}

int
hd_turn_state_get(hd_turn_state *out, hd_store *st, const char *team,
    const char *agent, hd_err *err)
{
	char room[HD_ROOM_ID_MAX], key[HD_ROOM_ID_MAX + 64];
	const hd_turn_state *kept;
	char *raw = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	hd_room_id(room, sizeof(room), team);
	hd_exchange__state_key(key, sizeof(key), room, agent);
	if ((rc = hd_store_kv_get(&raw, st, key, err)) < 0 || raw == NULL)
		return rc;
	if ((kept = hd_store_memo_get(st, key, raw)) != NULL) {
		if (state_copy(out, kept) < 0)
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	} else {
		state_parse(out, key, raw);
		state_memo_put(st, key, raw, out);
	}
	free(raw);
	return rc;
}

int
hd_turn_state_put(hd_store *st, const char *team, const char *agent,
    const hd_turn_state *s, hd_err *err)
{
	char room[HD_ROOM_ID_MAX], key[HD_ROOM_ID_MAX + 64], *text;
	json_t *j;
	int rc;

	if ((rc = hd_slug_check("team", team, err)) < 0 ||
	    (rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	hd_room_id(room, sizeof(room), team);
	hd_exchange__state_key(key, sizeof(key), room, agent);
	/* the key order of state_text, so both writers print alike */
	j = json_pack("{s:I, s:o, s:o, s:o, s:I, s:I}", "last_seen_seq",
	    (json_int_t)(s->last_seen_seq > 0 ? s->last_seen_seq : 0),
	    "native_session_id",
	    s->native_session_id ? json_string(s->native_session_id)
				 : json_null(),
	    "runtime", s->runtime ? json_string(s->runtime) : json_null(),
	    "last_summary",
	    s->last_summary ? json_string(s->last_summary) : json_null(),
	    "turn_index", (json_int_t)(s->turn_index > 0 ? s->turn_index : 0),
	    "last_event_seq",
	    (json_int_t)(s->last_event_seq > 0 ? s->last_event_seq : 0));
	text = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER)
			 : NULL;
	json_decref(j);
	if (text == NULL)
		return hd_err_set(
		    err, HD_ENOMEM, "cannot save the turn state of %s", agent);
	rc = hd_store_kv_put(st, key, text, err);
	free(text);
	return rc;
}

typedef struct reset_ctx {
	const char *agent;
	int had;
} reset_ctx;

static int
reset_txn(hd_store *st, void *payload, hd_err *err)
{
	reset_ctx *c = payload;
	hd_turn_state s;
	hd_agent *a = NULL;
	int rc;

	c->had = 0;
	if ((rc = hd_agent_get(&a, st, c->agent, err)) < 0)
		return rc;
	if (a->team_id == NULL)
		goto done;
	if ((rc = hd_turn_state_get(&s, st, a->team_id, a->id, err)) < 0)
		goto done;
	if (s.native_session_id != NULL) {
		c->had = 1;
		free(s.native_session_id);
		s.native_session_id = NULL;
		rc = hd_turn_state_put(st, a->team_id, a->id, &s, err);
		if (rc == 0)
			hd_events_append(st, "session_reset", a->team_id, 0,
			    a->id, json_pack("{s:s}", "runtime", a->runtime));
	}
	hd_turn_state_dispose(&s);
done:
	hd_agent_free(a);
	return rc;
}

int
hd_turn_state_reset_session(
    int *had, hd_store *st, const char *agent, hd_err *err)
{
	reset_ctx c = {agent, 0};
	int rc;

	if ((rc = hd_slug_check("agent", agent, err)) < 0)
		return rc;
	rc = hd_store_write(st, reset_txn, &c, err);
	if (had != NULL)
		*had = c.had;
	return rc;
}

void
hd_turn_state_dispose(hd_turn_state *s)
{
	if (s == NULL)
		return;
	free(s->native_session_id);
	free(s->runtime);
	free(s->last_summary);
	memset(s, 0, sizeof(*s));
}

/* ---- text ---- */

/* Length of the valid UTF-8 sequence at p (avail bytes), or 0. */
static size_t
utf8_seq(const unsigned char *p, size_t avail)
{
	size_t n;

	if (p[0] == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	n = (p[0] & 0xe0) == 0xc0   ? 2
	    : (p[0] & 0xf0) == 0xe0 ? 3
	    : (p[0] & 0xf8) == 0xf0 ? 4
				    : 0;
	if (n == 0 || n > avail || !hd_utf8_ok((const char *)p, n))
		return 0;
	return n;
}

/* (5): the body to post for a successful reply, malloc'd. */
char *
hd_exchange__reply_body(const char *text, size_t len)
{
	hd_buf b = HD_BUF_INIT(0);
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0, n, lim, cut;

	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' ||
			      p[len - 1] == '\n' || p[len - 1] == '\r'))
		len--;
	while (i < len &&
	       (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	while (i < len) {
		if ((n = utf8_seq(p + i, len - i)) == 0) {
			hd_buf_puts(&b, REPLACEMENT);
			i++;
			continue;
		}
		hd_buf_put(&b, p + i, n);
		i += n;
	}
	if (b.len == 0)
		hd_buf_puts(&b, HD_EXCHANGE_NO_RESPONSE);
	if (!hd_buf_failed(&b) && b.len > HD_ROOM_BODY_MAX) {
		lim = HD_ROOM_BODY_MAX - strlen(REPLY_CUT_NOTE);
		cut = lim;
		while (cut > 0 && ((unsigned char)b.ptr[cut] & 0xc0) == 0x80)
			cut--;
		b.len = cut;
		b.ptr[cut] = '\0';
		hd_buf_puts(&b, REPLY_CUT_NOTE);
	}
	return hd_buf_detach(&b);
}

/* The first max code points of s, malloc'd. */
static char *
first_chars(const char *s, size_t max)
{
	size_t i = 0, n = 0;
	char *out;

	while (s[i] != '\0') {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == max)
			break;
		i++;
	}
	if ((out = malloc(i + 1)) == NULL)
		return NULL;
	memcpy(out, s, i);
	out[i] = '\0';
	return out;
}

/* ---- the prompt (prompt.h) ---- */

static int
prompt_build(hd_exchange__turn *t, const hd_turn_state *state, hd_err *err)
{
	hd_prompt_spec ps;
	hd_prompt p;
	int rc;

	memset(&ps, 0, sizeof(ps));
	ps.team = t->team;
	ps.agent = t->agent;
	ps.is_leader = t->is_leader;
	ps.since_seq = state->last_seen_seq;
	ps.skip_seq = t->skip_seq;
	ps.last_summary = state->last_summary;
	ps.request = t->first && t->spec->stimulus != NULL &&
			     t->spec->stimulus[0] != '\0'
			 ? t->spec->stimulus
			 : HD_EXCHANGE_CONTINUE;
	if ((rc = hd_prompt_build(&p, t->st, &ps, err)) == 0) {
		t->prompt = p.text;
		t->context_len = p.context_len;
		t->seen = p.seen;
		p.text = NULL;
	}
	hd_prompt_dispose(&p);
	return rc;
}

/* ---- JSON text through Jansson, into a caller's buffer when it fits
 * (a dump to the heap grows a buffer step by step, then copies it) ---- */

/* json_dumps(j, flags), in buf when it fits (*out == buf), else malloc'd
 * (*out != buf: free it). NULL: Jansson refused the value or memory ran
 * out, exactly when json_dumps would return NULL. */
static char *
dump_in(const json_t *j, size_t flags, char *buf, size_t size)
{
	size_t n = j != NULL ? json_dumpb(j, buf, size - 1, flags) : 0;

	if (n > 0 && n < size) {
		buf[n] = '\0';
		return buf;
	}
	return j != NULL && n > 0 ? json_dumps(j, flags) : NULL;
}

static void
dump_free(char *text, const char *buf)
{
	if (text != buf)
		free(text);
}

/* s as a JSON string (NULL: null), through Jansson, so it is escaped
 * exactly as a dump escapes it and refused exactly when Jansson refuses
 * it. -1 when it was refused or memory ran out. */
static int
put_string(hd_buf *b, const char *s)
{
	json_t *j;
	char buf[512], *text;

	if (s == NULL) {
		hd_buf_puts(b, "null");
		return 0;
	}
	j = json_string(s);
	if ((text = dump_in(j, JSON_ENCODE_ANY, buf, sizeof(buf))) != NULL)
		hd_buf_puts(b, text);
	dump_free(text, buf);
	json_decref(j);
	return text != NULL ? 0 : -1;
}

/* The turn state as json_pack("{s:I, s:o, s:s, s:s, s:I, s:I}") and a
 * compact dump print it, built without the object: the strings through
 * put_string, the integers and keys printed directly. Building and
 * dumping the object cost about 21k instructions a turn, this about a
 * third. Returns 0, or -1 when a string was refused or memory ran out. */
static int
state_text(hd_buf *b, const hd_exchange__turn *t)
{
	hd_buf_puts(b, "{\"last_seen_seq\":");
	hd_buf_put_i64(b, t->seen);
	hd_buf_puts(b, ",\"native_session_id\":");
	if (put_string(b, t->native) < 0)
		return -1;
	hd_buf_puts(b, ",\"runtime\":");
	if (put_string(b, t->agent->runtime) < 0)
		return -1;
	hd_buf_puts(b, ",\"last_summary\":");
	if (put_string(b, t->summary) < 0)
		return -1;
	hd_buf_puts(b, ",\"turn_index\":");
	hd_buf_put_i64(b, t->state->turn_index + 1);
	hd_buf_puts(b, ",\"last_event_seq\":");
	hd_buf_put_i64(b, t->event_mark);
	hd_buf_puts(b, "}");
	return hd_buf_failed(b) ? -1 : 0;
}

/* ---- event data: slugs, fixed names and integers only, printed as
 * json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER) would (6) ---- */

static int64_t
event_raw(
    hd_store *st, const char *kind, const hd_exchange__turn *t, const hd_buf *b)
{
	return hd_events_append_raw(st, kind, t->team, 0, t->agent->id,
	    hd_buf_failed(b) ? NULL : b->ptr);
}

static void
emit_selected(hd_store *st, const hd_exchange__turn *t)
{
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	hd_buf_puts(&b, "{\"room_id\":\"");
	hd_buf_puts(&b, t->room_id);
	hd_buf_puts(&b, "\",\"speaker\":\"");
	hd_buf_puts(&b, t->agent->id);
	hd_buf_puts(&b, "\",\"policy\":\"");
	hd_buf_puts(&b, hd_speaker_policy_name(t->policy));
	hd_buf_puts(&b, "\",\"turn\":");
	hd_buf_put_i64(&b, t->turn_no);
	hd_buf_puts(&b, ",\"pending\":[");
	for (i = 0; i < t->npending; i++) {
		hd_buf_puts(&b, i > 0 ? ",\"" : "\"");
		hd_buf_puts(&b, t->pending[i]);
		hd_buf_puts(&b, "\"");
	}
	hd_buf_puts(&b, "]}");
	event_raw(st, "speaker_selected", t, &b);
	hd_buf_dispose(&b);
}

static void
emit_started(hd_store *st, const hd_exchange__turn *t)
{
	hd_buf b = HD_BUF_INIT(0);

	hd_buf_puts(&b, "{\"room_id\":\"");
	hd_buf_puts(&b, t->room_id);
	hd_buf_puts(&b, "\",\"turn\":");
	hd_buf_put_i64(&b, t->turn_no);
	hd_buf_puts(&b, "}");
	event_raw(st, "turn_started", t, &b);
	hd_buf_dispose(&b);
}

static void
emit_cost(hd_store *st, const hd_exchange__turn *t)
{
	const hd_runtime_cost *c = &t->cost;
	hd_buf b = HD_BUF_INIT(0);
	json_t *usd = json_real(c->usd);
	char buf[64], *real;

	/* the real through Jansson, so it reads exactly as before; a value
	 * Jansson refuses (NaN, infinity) left the whole object empty */
	if ((real = dump_in(usd, JSON_ENCODE_ANY, buf, sizeof(buf))) != NULL) {
		hd_buf_puts(&b, "{\"room_id\":\"");
		hd_buf_puts(&b, t->room_id);
		hd_buf_puts(&b, "\",\"turn\":");
		hd_buf_put_i64(&b, t->turn_no);
		hd_buf_puts(&b, ",\"usd\":");
		hd_buf_puts(&b, real);
		hd_buf_puts(&b, ",\"microcents\":");
		hd_buf_put_i64(&b, c->microcents);
		hd_buf_puts(&b, ",\"input_tokens\":");
		hd_buf_put_i64(&b, c->input_tokens);
		hd_buf_puts(&b, ",\"output_tokens\":");
		hd_buf_put_i64(&b, c->output_tokens);
		hd_buf_puts(&b, c->estimated ? ",\"estimated\":true}"
					     : ",\"estimated\":false}");
	} else
		hd_buf_puts(&b, "{}");
	event_raw(st, "cost", t, &b);
	hd_buf_dispose(&b);
	dump_free(real, buf);
	json_decref(usd);
}

/* The turn's last event: its seq, or 0 when it was dropped. */
static int64_t
emit_completed(hd_store *st, const hd_exchange__turn *t)
{
	hd_buf b = HD_BUF_INIT(0);
	int64_t seq;

	hd_buf_puts(&b, "{\"room_id\":\"");
	hd_buf_puts(&b, t->room_id);
	hd_buf_puts(&b, "\",\"turn\":");
	hd_buf_put_i64(&b, t->turn_no);
	hd_buf_puts(&b, ",\"seq\":");
	hd_buf_put_i64(&b, t->seq);
	hd_buf_puts(&b, ",\"reason\":\"");
	hd_buf_puts(&b, t->done_name);
	hd_buf_puts(&b, t->failed ? "\",\"failed\":true,\"duration_ms\":"
				  : "\",\"failed\":false,\"duration_ms\":");
	hd_buf_put_i64(&b, t->duration_ms);
	hd_buf_puts(&b, "}");
	seq = event_raw(st, "turn_completed", t, &b);
	hd_buf_dispose(&b);
	return seq;
}

/* ---- before the runtime: announce and assemble ---- */

int
hd_exchange__turn_begin(hd_exchange__turn *t, hd_err *err)
{
	const hd_exchange_spec *spec = t->spec;
	hd_store *st = t->st;
	const char *which = NULL;
	int rc;

	/* a retried transaction starts over */
	free(t->prompt);
	free(t->url);
	t->prompt = NULL;
	t->url = NULL;
	t->paused = 0;
	t->set_working = 0;
	t->seen = 0;
	if (spec->mcp_port > 0 &&
	    (rc = hd_attach_url(&t->url, st,
		 spec->mcp_host ? spec->mcp_host : "127.0.0.1", spec->mcp_port,
		 t->agent->id, err)) < 0)
		return rc;
	if ((rc = hd_budget_paused(&which, st, t->team_read ? NULL : t->team,
		 t->agent->id, err)) < 0)
		return rc;
	if (which != NULL) {
		t->paused = 1;
		return 0;
	}
	/* A lease renewed less than a third of its length ago cannot have
	 * been taken over (only an expired one can), and the renewal thread
	 * keeps it alive through a long turn: renew here only past that.
	 * Nothing is written before this point, so a lost lease leaves no
	 * trace of the turn. */
	if (hd_now_ms() >= t->lock->expires_at - t->lease_ms * 2 / 3 &&
	    (rc = hd_room_lock_renew(st, t->lock, t->lease_ms, err)) < 0)
		return rc;
	emit_selected(st, t);
	/* never over a shutdown, nor over another engine's working; an
	 * agent whose last turn failed works again */
	if ((rc = hd_activity_turn_begin(
		 &t->set_working, st, t->team, t->agent->id, err)) < 0)
		return rc;
	emit_started(st, t);
	return prompt_build(t, t->state, err);
}

/* ---- the runtime ---- */

typedef struct spawned {
	const hd_room_lock *lock;
	int64_t pgid, start;
} spawned;

static int
spawned_txn(hd_store *st, void *payload, hd_err *err)
{
	spawned *sp = payload;

	return hd_room_lock_running(st, sp->lock, sp->pgid, sp->start, err);
}

/* (8) The turn's process group, recorded with the room lock while it
 * runs: a successor that takes over a dead holder kills it before the
 * turn runs again. The loop's own connection: no transaction is open
 * while the runtime runs. */
static void
turn_spawned(void *ctx, int64_t pgid, int64_t start)
{
	hd_exchange__turn *t = ctx;
	spawned sp = {t->lock, pgid, start};
	hd_err err = HD_ERR_INIT;

	if (hd_store_write(t->st, spawned_txn, &sp, &err) < 0)
		hd_log_warn("%s: the running turn's process is not recorded: "
			    "%s",
		    t->room_id, err.msg);
}

int
hd_exchange__turn_execute(hd_exchange__turn *t, hd_err *err)
{
	const hd_exchange_spec *spec = t->spec;
	const hd_agent *ag = t->agent;
	const hd_turn_state *state = t->state;
	hd_runtime_turn in;
	hd_err rerr = HD_ERR_INIT;
	const char *msg;
	char *body = NULL;
	int64_t t0;
	int rrc;

	if (state->runtime != NULL && strcmp(state->runtime, ag->runtime) == 0)
		t->resumed = state->native_session_id; /* (3) */
	memset(&in, 0, sizeof(in));
	in.agent = ag;
	in.team = t->team;
	in.prompt = t->prompt;
	in.context_len = t->context_len;
	in.resume_session_id = t->resumed;
	in.huddle_home = hd_store_home(t->st);
	in.mcp_url = t->url;
	in.timeout_ms = spec->turn_timeout_ms;
	in.abort = spec->abort_turn;
	in.on_spawn = turn_spawned;
	in.spawn_ctx = t;
	memset(&t->res, 0, sizeof(t->res));
	t0 = hd_mono_ms();
	if (spec->runner != NULL)
		rrc = spec->runner(spec->runner_ctx, &t->res, &in, &rerr);
	else {
		hd_live live = {t->st, t->team, ag->id, ag->runtime, NULL};

		rrc = hd_runtime_run(&t->res, &in, hd_live_sink, &live, &rerr);
	}
	t->duration_ms = hd_mono_ms() - t0;
	t->cost = t->res.cost;
	t->done_name = hd_runtime_done_name(t->res.reason);

	if (rrc < 0 || t->res.reason == HD_DONE_ERROR ||
	    t->res.reason == HD_DONE_ABORTED) {
		hd_buf b = HD_BUF_INIT(0);

		t->failed = 1;
		t->aborted = t->res.reason == HD_DONE_ABORTED;
		msg = t->res.reason == HD_DONE_ABORTED ? "the turn was aborted"
		      : t->res.error != NULL           ? t->res.error
		      : rerr.msg[0] != '\0'            ? rerr.msg
						       : "the runtime failed";
		hd_buf_printf(&b, "[error: %s]", msg);
		free(t->failure);
		if ((t->failure = strdup(msg)) == NULL)
			return hd_err_set(err, HD_ENOMEM, "out of memory");
		if ((body = hd_buf_detach(&b)) != NULL) {
			t->body = hd_exchange__reply_body(body, strlen(body));
			free(body);
		}
	} else
		t->body =
		    hd_exchange__reply_body(t->res.text ? t->res.text : "", t->res.text_len);
	if (t->body == NULL || (t->summary = first_chars(t->body,
				    HD_EXCHANGE_SUMMARY_CHARS)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	/* the session to remember: the new one, else the one resumed */
	t->native =
	    t->res.native_session_id ? t->res.native_session_id : t->resumed;
	return 0;
}

/* ---- after the runtime: post and save (4) ---- */

int
hd_exchange__turn_save(hd_exchange__turn *t, hd_err *err)
{
	hd_store *st = t->st;
	hd_post *p = NULL;
	hd_buf state = HD_BUF_INIT(0);
	char key[HD_ROOM_ID_MAX + 64];
	int rc;

	t->paused_after = NULL;
	if ((rc = hd_room_post(
		 &p, st, t->team, "peer", t->agent->id, t->body, err)) < 0)
		goto done;
	t->seq = p->seq;
	/* the spend, and whether it tripped a cap (read with it) */
	if ((rc = hd_budget_charge_paused(&t->crossed, &t->paused_after, st,
		 t->team, t->agent->id, t->cost.microcents, err)) < 0)
		goto done;
	emit_cost(st, t);
	if ((rc = hd_session_record(st, t->agent->id, t->team,
		 t->agent->runtime, t->res.native_session_id, t->resumed,
		 err)) < 0)
		goto done;
	/* a failed turn leaves the agent in error until a good one (and
	 * tells the leader); a good one idle, unless it holds started work */
	if ((rc = t->aborted ? hd_activity_turn_abort(
				  st, t->team, t->agent->id, err)
			     : hd_activity_turn_end(st, t->team, t->agent->id,
				   t->failed ? t->failure : NULL, err)) < 0)
		goto done;
	/* the mark is the event head once the turn is recorded: the seq of
	 * turn_completed, its last event, in this write transaction */
	if ((t->event_mark = emit_completed(st, t)) == 0 &&
	    (rc = hd_events_head(&t->event_mark, st, err)) < 0)
		goto done;
	/* the state save writes (8.1 step 5), in this key order */
	if (state_text(&state, t) < 0) {
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
		goto done;
	}
	hd_exchange__state_key(key, sizeof(key), t->room_id, t->agent->id);
	if ((rc = hd_store_kv_put(st, key, state.ptr, err)) == 0) {
		free(t->state_text); /* a retried transaction starts over */
		t->state_text = hd_buf_detach(&state);
	}
done:
	hd_buf_dispose(&state);
	hd_post_free(p);
	return rc;
}

int
hd_exchange__turn_adopt(hd_turn_state *out, hd_exchange__turn *t)
{
	hd_turn_state s;

	memset(&s, 0, sizeof(s));
	s.last_seen_seq = t->seen;
	s.turn_index = t->state->turn_index + 1;
	s.last_event_seq = t->event_mark;
	if ((t->native != NULL &&
		(s.native_session_id = strdup(t->native)) == NULL) ||
	    (s.runtime = strdup(t->agent->runtime)) == NULL) {
		hd_turn_state_dispose(&s);
		return HD_ENOMEM;
	}
	s.last_summary = t->summary;
	t->summary = NULL;
	if (t->state_text != NULL) { /* committed: what a read would parse */
		char key[HD_ROOM_ID_MAX + 64];

		hd_exchange__state_key(
		    key, sizeof(key), t->room_id, t->agent->id);
		state_memo_put(t->st, key, t->state_text, &s);
	}
	hd_turn_state_dispose(out);
	*out = s;
	return 0;
}

void
hd_exchange__turn_dispose(hd_exchange__turn *t)
{
	if (t == NULL)
		return;
	hd_runtime_result_dispose(&t->res);
	free(t->prompt);
	free(t->url);
	free(t->body);
	free(t->summary);
	free(t->state_text);
	free(t->failure);
	t->prompt = t->url = t->body = t->summary = t->state_text = NULL;
	t->failure = NULL;
	t->resumed = t->native = NULL;
}
