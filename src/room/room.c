/*
 * room.c -- the team room (SPEC 5): an append-only, ordered transcript of
 * posts, one room per team ("team:<team>"). Owns tables team_chat and
 * room_seqs; nothing else writes them (hd_room_team_purge deletes a team's
 * posts and its counter row when the team is removed with them).
 *  (1) A post's seq comes from its team's counter row in room_seqs (issue
 *      16): one upsert that creates the row at 1 or adds 1 to it and
 *      returns the new value, in the same transaction (hd_store_write)
 *      as the insert of the post. The row is the room's head: it equals
 *      MAX(seq) of the room's posts (migration 22 filled it from them),
 *      so the first post is 1, and posters in many processes, on either
 *      backend, never collide and never leave gaps: the upsert locks the
 *      row until the post commits or rolls back with it, never MAX+1
 *      read in a snapshot that a concurrent poster could share. UNIQUE
 *      (room_id, seq) would turn a broken promise into an error, never a
 *      duplicate. Reads (the head, a subscriber's next_seq) still take
 *      MAX(seq) of the posts, in their own snapshot.
 *  (2) Kind, author and body are checked before the write; the team and
 *      the author's membership are checked inside the same transaction as
 *      the insert, so no post is stored for a team or member that is gone.
 *      These checks are the only ones: every surface (CLI, MCP, REST, and the
 *      group commit of batch.c) hands the body over untouched, so an empty or
 *      blank body (hd_text_blank) is refused with the same text
 *      everywhere.
 *  (3) The team_chat_post event is appended in the same transaction: it
 *      exists exactly when the post does; so is the author's last
 *      activity (hd_agent_touch, at most once a second).
 *  (4) Reads return seq > since_seq, oldest first, from one snapshot. A
 *      subscriber's next_seq (the head, or the last post delivered when
 *      the limit cut the page) is computed in that same snapshot, so no
 *      post can fall between the page and the cursor; it never goes below
 *      since_seq.
 *  (5) Rows are never updated.
 *  (6) hd_room_read_each hands its callback views of the row (no copies);
 *      it remembers the last seq handed over, so a read the store runs
 *      again resumes after it instead of repeating posts.
 *  (7) The other reads start over when the store runs them again (a busy
 *      or lost database: store.c retries the transaction), dropping what
 *      the try before read, and a read that fails keeps nothing: the
 *      caller gets an empty list with the error, never posts to free.
 * Callers: the CLI (cmd-chat.c), the board's reflections, MCP and HTTP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/buf.h>
#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include <store/store.h>

#include "room_int.h"

#define POST_COLS                                                              \
	"id, room_id, team_id, author_agent_id, body, kind, created_at, seq"

/* What a post transaction needs and what it produces. */
typedef struct room_post_txn {
	const char *team;
	const char *kind;
	const char *author;
	const char *body;
	char room[HD_ROOM_ID_MAX];
	char id[37];
	int64_t created_at;
	int64_t seq; /* out */
} room_post_txn;

/* What a read transaction needs and what it produces. */
typedef struct room_read_txn {
	const char *team;
	char room[HD_ROOM_ID_MAX];
	int64_t since;
	int limit;
	const char *exclude; /* read: any post by this author */
	const char *agent;   /* subscribe: this agent's own peer posts */
	hd_posts *out;
	/* read_each (6) */
	hd_post_fn fn;
	void *ctx;
	int64_t visited; /* the last seq handed to fn */
} room_read_txn;

void
hd_room_id(char *out, size_t outlen, const char *team)
{
	size_t n = strlen(team), k;

	/* Every post and read names its room: copied rather than formatted,
	 * cut to outlen exactly as snprintf would cut it. */
	if (outlen == 0)
		return;
	k = outlen - 1 < 5 ? outlen - 1 : 5;
	memcpy(out, "team:", k);
	if (k == 5) {
		if (n > outlen - 6)
			n = outlen - 6;
		memcpy(out + 5, team, n);
		k += n;
	}
	out[k] = '\0';
}

static void
post_dispose(void *item)
{
	hd_post *p = item;

	free(p->id);
	free(p->room_id);
	free(p->team_id);
	free(p->author);
	free(p->body);
	free(p->kind);
}

void
hd_post_free(hd_post *p)
{
	if (p == NULL)
		return;
	post_dispose(p);
	free(p);
}

void
hd_posts_dispose(hd_posts *l)
{
	if (l == NULL)
		return;
	hd_store_rows_free(l->items, l->n, sizeof(*l->items), post_dispose);
	l->items = NULL;
	l->n = 0;
}

static int
post_kind_ok(const char *kind)
{
	return kind != NULL &&
	       (strcmp(kind, "peer") == 0 || strcmp(kind, "system") == 0 ||
		   strcmp(kind, "user") == 0);
}

static int
room_head_q(int64_t *out, hd_store *st, const char *room, hd_err *err)
{
	int rc;

	/* an aggregate: always one row */
	if ((rc = hd_store_get_int(st, out, err,
		 "SELECT COALESCE(MAX(seq), 0) FROM team_chat"
		 " WHERE room_id = ?",
		 HD_TEXT(room))) < 0)
		return rc;
	return 0;
}

/* (2) The author may post: for a peer post, a member of the team (one
 * indexed probe, hd_team_member_check); else the team exists. Not folded
 * into INSERT ... SELECT ... WHERE: a statement that may insert several
 * rows makes SQLite keep a statement journal, a copy of every page it
 * touches. */
static int
room_author_ok(hd_store *st, const room_post_txn *tx, hd_err *err)
{
	if (strcmp(tx->kind, "peer") != 0)
		return hd_team_exists(st, tx->team, err);
	return hd_team_member_check(st, tx->team, tx->author, err);
}

/* Append the n bytes of s at out + *len when they fit in outlen (with a
 * NUL after them); *len grows either way, so the caller sees an overflow
 * as *len >= outlen. */
static void
put(char *out, size_t outlen, size_t *len, const char *s, size_t n)
{
	if (*len < outlen && n < outlen - *len)
		memcpy(out + *len, s, n);
	*len += n;
}

/* The team_chat_post event's data, exactly as
 * {"seq":%lld,"roomId":"%s","author":"%s","kind":"%s"} would print it;
 * printed that way when it would not fit (it always does: a room id, an
 * agent id and a kind are short). */
static void
event_data(char *out, size_t outlen, const room_post_txn *tx)
{
	char digits[HD_I64_TEXT_MAX];
	size_t len = 0;

	put(out, outlen, &len, "{\"seq\":", 7);
	put(out, outlen, &len, digits, hd_i64_text(digits, tx->seq));
	put(out, outlen, &len, ",\"roomId\":\"", 11);
	put(out, outlen, &len, tx->room, strlen(tx->room));
	put(out, outlen, &len, "\",\"author\":\"", 12);
	put(out, outlen, &len, tx->author, strlen(tx->author));
	put(out, outlen, &len, "\",\"kind\":\"", 10);
	put(out, outlen, &len, tx->kind, strlen(tx->kind));
	put(out, outlen, &len, "\"}", 2);
	if (len < outlen)
		out[len] = '\0';
	else
		snprintf(out, outlen,
		    "{\"seq\":%lld,\"roomId\":\"%s\",\"author\":\"%s\","
		    "\"kind\":\"%s\"}",
		    (long long)tx->seq, tx->room, tx->author, tx->kind);
}

static int
room_post_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	room_post_txn *tx = payload;
	char data[HD_ROOM_ID_MAX + 192];
	int rc;

	/* (2) */
	if ((rc = room_author_ok(st, tx, err)) < 0 ||
	    (rc = hd_store_uuid(st, tx->id, err)) < 0)
		return rc;
	/* (1): the counter row moved on, then read back, then the post, in
	 * this transaction: the upsert holds the row (PostgreSQL: its row
	 * lock; SQLite: the write lock) until the post commits, so the
	 * value read is this post's alone. Two statements, not one with
	 * RETURNING: SQLite gathers RETURNING's rows in an ephemeral table
	 * made on every run, about 17,000 instructions more a post than
	 * this read (callgrind on bench_room), a fifth of a post. */
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO room_seqs(team_id, seq) VALUES (?, 1)"
		 " ON CONFLICT(team_id) DO UPDATE SET seq = room_seqs.seq + 1",
		 HD_TEXT(tx->team))) < 0 ||
	    (rc = hd_store_get_int(st, &tx->seq, err,
		 "SELECT seq FROM room_seqs WHERE team_id = ?",
		 HD_TEXT(tx->team))) < 0)
		return rc;
	if (rc == 0)
		return hd_err_set(err, HD_ERR,
		    "room %s: no seq counter row after its upsert", tx->room);
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO team_chat(" POST_COLS ")"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		 HD_TEXT(tx->id), HD_TEXT(tx->room), HD_TEXT(tx->team),
		 HD_TEXT(tx->author), HD_TEXT(tx->body), HD_TEXT(tx->kind),
		 HD_INT(tx->created_at), HD_INT(tx->seq))) < 0)
		return rc;
	/* (3) Every field is an integer or a checked name (room and author
	 * passed the slug rule or membership, kind the three-way check), so
	 * the event's JSON is written directly rather than built and dumped
	 * through a json_t, and pieced together rather than formatted: both
	 * showed in a post's profile (bench-room). */
	event_data(data, sizeof(data), tx);
	if (hd_events_append_raw(st, "team_chat_post", tx->team, 0,
		strcmp(tx->kind, "peer") == 0 ? tx->author : NULL, data) == 0)
		return hd_store_txn_failure(st, err);
	return strcmp(tx->kind, "peer") == 0
		   ? hd_agent_touch(st, tx->team, tx->author, err)
		   : 0;
}

/* A view's text copied into p (cleared first): -1 when memory ran
 * out; p then holds what was copied, for post_dispose. */
static int
post_copy(hd_post *p, const hd_post *v)
{
	memset(p, 0, sizeof(*p));
	p->id = strdup(v->id);
	p->room_id = strdup(v->room_id);
	p->team_id = strdup(v->team_id);
	p->author = strdup(v->author);
	p->body = strdup(v->body);
	p->kind = strdup(v->kind);
	p->created_at = v->created_at;
	p->seq = v->seq;
	return p->id == NULL || p->room_id == NULL || p->team_id == NULL ||
		       p->author == NULL || p->body == NULL || p->kind == NULL
		   ? -1
		   : 0;
}

static int
post_fill(hd_post **out, const room_post_txn *tx)
{
	const hd_post v = {(char *)tx->id, (char *)tx->room, (char *)tx->team,
		(char *)tx->author, (char *)tx->body, (char *)tx->kind,
		tx->created_at, tx->seq};
	hd_post *p;

	if ((p = malloc(sizeof(*p))) == NULL)
		return -1;
	if (post_copy(p, &v) < 0) {
		hd_post_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* Validate a post and fill tx; everything that needs no database. */
static int
room_post_prepare(room_post_txn *tx, const char *team, const char *kind,
    const char *author, const char *body, hd_err *err)
{
	size_t len;
	int rc;

	memset(tx, 0, sizeof(*tx));
	if (!post_kind_ok(kind))
		return hd_err_set(err, HD_EINVAL,
		    "invalid post kind \"%.64s\": use peer, system or user",
		    kind != NULL ? kind : "");
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (strcmp(kind, "system") == 0)
		author = "huddle";
	else if (strcmp(kind, "user") == 0)
		author = "user";
	else if (author == NULL || author[0] == '\0')
		return hd_err_set(
		    err, HD_EINVAL, "a peer post needs an author agent");
	len = body != NULL ? strlen(body) : 0;
	if (hd_text_blank(body, len))
		return hd_err_set(
		    err, HD_EINVAL, "post body must not be empty");
	if (len > HD_ROOM_BODY_MAX)
		return hd_err_set(err, HD_ETOOBIG,
		    "post body is %zu bytes; the limit is %d", len,
		    HD_ROOM_BODY_MAX);
	if (!hd_utf8_ok(body, len))
		return hd_err_set(
		    err, HD_EINVAL, "post body must be valid UTF-8");
	tx->team = team;
	tx->kind = kind;
	tx->author = author;
	tx->body = body;
	hd_room_id(tx->room, sizeof(tx->room), team);
	tx->created_at = hd_now_ms();
	return 0;
}

/* One post in a transaction of its own (or the caller's): batch.c's
 * hd_room_post writes a batch of one, or a post inside a transaction,
 * through here. */
int
hd_room__post_one(hd_post **out, hd_store *st, const char *team,
    const char *kind, const char *author, const char *body, hd_err *err)
{
	room_post_txn tx;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = room_post_prepare(&tx, team, kind, author, body, err)) < 0)
		return rc;
	if ((rc = hd_store_write(st, room_post_txn_fn, &tx, err)) < 0)
		return rc;
	if (out != NULL && post_fill(out, &tx) < 0)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

struct room_many {
	hd_post_req *reqs;
	room_post_txn *txs;
	size_t n;
};

/* Each post in its own savepoint: a refused post rolls back alone and the
 * rest of the batch commits. */
static int
room_many_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct room_many *m = payload;
	size_t i;
	int rc;

	for (i = 0; i < m->n; i++) {
		hd_post_req *r = &m->reqs[i];

		if (r->rc < 0) /* refused before the transaction */
			continue;
		if ((rc = hd_store_savepoint(st, err)) < 0)
			return rc;
		hd_err_clear(&r->err);
		r->rc = room_post_txn_fn(st, &m->txs[i], &r->err);
		if (r->rc == HD_EBUSY || r->rc == HD_ENOMEM || r->rc == HD_ERR) {
			/* the transaction itself is in trouble: redo it all */
			*err = r->err;
			return r->rc;
		}
		if ((rc = hd_store_savepoint_end(st, r->rc >= 0, err)) < 0)
			return rc;
	}
	return 0;
}

int
hd_room_post_many(hd_store *st, hd_post_req *reqs, size_t n, hd_err *err)
{
	struct room_many m = {reqs, NULL, n};
	size_t i;
	int rc, live = 0;

	if (n == 0)
		return 0;
	if ((m.txs = calloc(n, sizeof(*m.txs))) == NULL)
		rc = hd_err_set(err, HD_ENOMEM, "out of memory");
	else {
		for (i = 0; i < n; i++) {
			reqs[i].out = NULL;
			hd_err_clear(&reqs[i].err);
			reqs[i].rc = room_post_prepare(&m.txs[i], reqs[i].team,
			    reqs[i].kind, reqs[i].author, reqs[i].body,
			    &reqs[i].err);
			live += reqs[i].rc == 0;
		}
		rc = live > 0 ? hd_store_write(st, room_many_txn_fn, &m, err) : 0;
	}
	for (i = 0; i < n; i++) {
		if (rc < 0 && reqs[i].rc == 0) {
			reqs[i].rc = rc;
			reqs[i].err = *err;
		}
		if (reqs[i].rc == 0 && post_fill(&reqs[i].out, &m.txs[i]) < 0)
			reqs[i].rc = hd_err_set(&reqs[i].err, HD_ENOMEM,
			    "out of memory");
	}
	free(m.txs);
	return rc;
}

/* The row of POST_COLS as a view, its text valid until the next step:
 * -1 when a text is NULL (an allocation SQLite could not make). */
static int
post_view(hd_post *p, hd_stmt *s)
{
	p->id = (char *)hd_stmt_text(s, 0);
	p->room_id = (char *)hd_stmt_text(s, 1);
	p->team_id = (char *)hd_stmt_text(s, 2);
	p->author = (char *)hd_stmt_text(s, 3);
	p->body = (char *)hd_stmt_text(s, 4);
	p->kind = (char *)hd_stmt_text(s, 5);
	p->created_at = hd_stmt_int(s, 6);
	p->seq = hd_stmt_int(s, 7);
	return p->id == NULL || p->room_id == NULL || p->team_id == NULL ||
		       p->author == NULL || p->body == NULL || p->kind == NULL
		   ? -1
		   : 0;
}

static int
post_row(void *item, hd_stmt *s, void *ctx)
{
	hd_post v;

	(void)ctx;
	memset(item, 0, sizeof(v));
	return post_view(&v, s) < 0 ? -1 : post_copy(item, &v);
}

/* A read's page: posts after ?2 not by ?3 (NULL: anyone), at most ?4. */
static const char *const sql_read =
    "SELECT " POST_COLS " FROM team_chat WHERE room_id = ?1"
    " AND seq > ?2 AND (?3 IS NULL OR author_agent_id <> ?3)"
    " ORDER BY seq LIMIT ?4";

/* The query of a read or subscribe, and next_seq (4); no team check. */
static int
room_query(hd_store *st, room_read_txn *tx, hd_err *err)
{
	static const char *const sql_subscribe =
	    "SELECT " POST_COLS " FROM team_chat WHERE room_id = ?1"
	    " AND seq > ?2 AND NOT (kind = 'peer' AND author_agent_id = ?3)"
	    " ORDER BY seq LIMIT ?4";
	hd_stmt *s;
	hd_post *items;
	void *rows;
	size_t n;
	/* subscribe fetches one row more than it returns, to see a cut page */
	int want = tx->limit + (tx->agent != NULL ? 1 : 0);
	int64_t next = 0;
	int rc;

	if ((rc = hd_store_query(st, &s, err,
		 tx->agent != NULL ? sql_subscribe : sql_read, HD_TEXT(tx->room),
		 HD_INT(tx->since),
		 HD_TEXT(tx->agent != NULL ? tx->agent : tx->exclude),
		 HD_INT(want))) < 0 ||
	    (rc = hd_store_rows(st, s, sizeof(hd_post), post_row, post_dispose,
		 NULL, &rows, &n, err)) < 0)
		return rc;
	items = rows;
	if (tx->agent == NULL) /* read: the last seq returned */
		next = n > 0 ? items[n - 1].seq : tx->since;
	else if (n > (size_t)tx->limit) { /* (4) the limit cut the page */
		post_dispose(&items[--n]);
		next = items[n - 1].seq;
	} else if ((rc = room_head_q(&next, st, tx->room, err)) < 0) {
		hd_store_rows_free(items, n, sizeof(*items), post_dispose);
		return rc;
	}
	tx->out->items = items;
	tx->out->n = n;
	tx->out->next_seq = next > tx->since ? next : tx->since;
	return 0;
}

/* A read's posts handed to tx->fn as views of the row (6). */
static int
room_visit(hd_store *st, room_read_txn *tx, hd_err *err)
{
	hd_stmt *s;
	hd_post p;
	int64_t since = tx->visited > tx->since ? tx->visited : tx->since;
	int n = 0, rc = 0, src;

	/* a resumed read hands over what the first one did not */
	if ((rc = hd_store_query(st, &s, err, sql_read, HD_TEXT(tx->room),
		 HD_INT(since), HD_TEXT(tx->exclude),
		 HD_INT(tx->limit - (int)(tx->out->n)))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		if (post_view(&p, s) < 0) {
			rc = hd_err_set(err, HD_ENOMEM, "out of memory");
			break;
		}
		if ((rc = tx->fn(tx->ctx, &p, err)) < 0)
			break;
		tx->visited = p.seq;
		n++;
	}
	hd_store_reset(s);
	if (rc == 0 && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	tx->out->n += (size_t)n; /* a count only: no items */
	return rc;
}

static int
room_read_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	room_read_txn *tx = payload;
	size_t before;
	int rc;

	if (tx->fn == NULL) /* (7): a try again starts over */
		hd_posts_dispose(tx->out);
	before = tx->out->n;
	if ((rc = tx->fn != NULL ? room_visit(st, tx, err)
				 : room_query(st, tx, err)) < 0)
		return rc;
	/* Only a room that read as empty can be a missing team's: a team is
	 * removed with its posts or not at all. A probe, not a load: a reader
	 * only needs `team "x" not found`. */
	if (tx->out->n == before)
		return hd_team_exists(st, tx->team, err);
	return 0;
}

/* (7): the read of tx, into tx->out; nothing kept when it fails. */
static int
room_read_run(hd_store *st, room_read_txn *tx, hd_err *err)
{
	int rc = hd_store_read(st, room_read_txn_fn, tx, err);

	if (rc < 0 && tx->fn == NULL)
		hd_posts_dispose(tx->out);
	return rc;
}

static int
room_read_args(room_read_txn *tx, hd_posts *out, const char *team,
    int64_t since_seq, int limit, hd_err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	memset(tx, 0, sizeof(*tx));
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	if (limit == 0)
		limit = HD_ROOM_READ_DEFAULT;
	if (limit < 1 || limit > HD_ROOM_READ_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "limit must be between 1 and %d", HD_ROOM_READ_MAX);
	if (since_seq < 0)
		return hd_err_set(
		    err, HD_EINVAL, "since_seq must not be negative");
	tx->team = team;
	hd_room_id(tx->room, sizeof(tx->room), team);
	tx->since = since_seq;
	tx->limit = limit;
	tx->out = out;
	out->next_seq = since_seq;
	return 0;
}

int
hd_room_read(hd_posts *out, hd_store *st, const char *team, int64_t since_seq,
    int limit, const char *exclude_author, hd_err *err)
{
	room_read_txn tx;
	int rc;

	if ((rc = room_read_args(&tx, out, team, since_seq, limit, err)) < 0)
		return rc;
	tx.exclude = exclude_author;
	return room_read_run(st, &tx, err);
}

int
hd_room_read_each(hd_store *st, const char *team, int64_t since_seq,
    int limit, const char *exclude_author, hd_post_fn fn, void *ctx,
    int64_t *next_seq, hd_err *err)
{
	room_read_txn tx;
	hd_posts count; /* n counts the posts handed over; items stay NULL */
	int rc;

	if (next_seq != NULL)
		*next_seq = since_seq;
	if ((rc = room_read_args(&tx, &count, team, since_seq, limit, err)) < 0)
		return rc;
	if (fn == NULL)
		return hd_err_set(err, HD_EINVAL, "a post callback is required");
	tx.exclude = exclude_author;
	tx.fn = fn;
	tx.ctx = ctx;
	rc = hd_store_read(st, room_read_txn_fn, &tx, err);
	if (rc == 0 && next_seq != NULL && tx.visited > since_seq)
		*next_seq = tx.visited;
	return rc;
}

int
hd_room_subscribe(hd_posts *out, hd_store *st, const char *team,
    const char *agent, int64_t since_seq, int limit, hd_err *err)
{
	room_read_txn tx;
	int rc;

	if ((rc = room_read_args(&tx, out, team, since_seq, limit, err)) < 0)
		return rc;
	if (agent == NULL || agent[0] == '\0')
		return hd_err_set(
		    err, HD_EINVAL, "a subscriber needs an agent");
	tx.agent = agent;
	return room_read_run(st, &tx, err);
}

int
hd_room_head(int64_t *out, hd_store *st, const char *team, hd_err *err)
{
	char room[HD_ROOM_ID_MAX];
	int rc;

	*out = 0;
	if ((rc = hd_slug_check("team", team, err)) < 0)
		return rc;
	hd_room_id(room, sizeof(room), team);
	return room_head_q(out, st, room, err);
}

int
hd_room_follow(hd_posts *out, hd_store *st, const char *team, int64_t since_seq,
    int limit, int timeout_ms, hd_err *err)
{
	int64_t deadline = timeout_ms >= 0 ? hd_mono_ms() + timeout_ms : -1;
	int64_t left;
	uint64_t cursor;
	room_read_txn tx;
	int rc;

	if ((rc = room_read_args(&tx, out, team, since_seq, limit, err)) < 0)
		return rc;
	/* cursor first, then the read, then the wait: see store.h */
	if ((rc = hd_store_change_cursor(st, &cursor, err)) < 0)
		return rc;
	/* the first read checks the team; after a wake-up, one SELECT (a
	 * snapshot of its own) is all a follower needs, and it is what
	 * stands between the commit and the follower's answer */
	rc = room_read_run(st, &tx, err);
	for (;;) {
		if (rc < 0 || out->n > 0)
			return rc;
		left = -1;
		if (deadline >= 0 && (left = deadline - hd_mono_ms()) <= 0)
			return 0;
		if ((rc = hd_store_wait_change(st, &cursor, (int)left, err)) <
		    0)
			return rc;
		if (rc == 0) /* timed out, or a signal: let the caller look */
			return 0;
		if ((rc = room_query(st, &tx, err)) < 0)
			hd_posts_dispose(out); /* (7) */
	}
}

json_t *
hd_post_to_json(const hd_post *p)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(p->id));
	json_object_set_new(o, "roomId", json_string(p->room_id));
	json_object_set_new(o, "teamId", json_string(p->team_id));
	json_object_set_new(o, "authorAgentId", json_string(p->author));
	json_object_set_new(o, "body", json_string(p->body));
	json_object_set_new(o, "kind", json_string(p->kind));
	json_object_set_new(o, "createdAt", json_integer(p->created_at));
	json_object_set_new(o, "seq", json_integer(p->seq));
	return o;
}

int
hd_room_team_count(int64_t *n, hd_store *st, const char *team, hd_err *err)
{
	char room[HD_ROOM_ID_MAX];
	int rc;

	/* by the room (UNIQUE (room_id, seq)'s index): a team's posts are
	 * its room's, and no index on team_id is kept (migration 22) */
	hd_room_id(room, sizeof(room), team);
	rc = hd_store_get_int(st, n, err,
	    "SELECT COUNT(*) FROM team_chat WHERE room_id = ?1", HD_TEXT(room));
	return rc < 0 ? rc : 0;
}

int
hd_room_team_purge(hd_store *st, const char *team, hd_err *err)
{
	char room[HD_ROOM_ID_MAX], turns[HD_ROOM_ID_MAX + 10];
	int rc;

	hd_room_id(room, sizeof(room), team);
	snprintf(turns, sizeof(turns), "turn:%s:", room);
	if ((rc = hd_store_run(st, err,
		 "DELETE FROM team_chat WHERE room_id = ?1", HD_TEXT(room))) < 0 ||
	    (rc = hd_store_run(st, err,
		 "DELETE FROM room_seqs WHERE team_id = ?1",
		 HD_TEXT(team))) < 0 ||
	    (rc = hd_room__lock_purge(st, room, err)) < 0)
		return rc;
	return hd_store_kv_delete(st, turns, 1, err);
}
