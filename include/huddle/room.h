/*
 * room.h -- the team room (SPEC 5): an append-only, ordered transcript per
 * team, narration only. Room id of team T is "team:T".
 *
 * (1) seq comes from the room's counter row, moved on by 1 in the post's
 *     own transaction: the first post is 1, and posters in many processes
 *     never collide and never leave gaps.
 * (2) A peer post's author must be a member of the team; a system post is
 *     authored "huddle", a user post "user". Bodies are 1..100000 bytes of
 *     valid UTF-8, not blank (only HD_TEXT_BLANK_CHARS).
 */
#ifndef HUDDLE_ROOM_H
#define HUDDLE_ROOM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_ROOM_BODY_MAX 100000
#define HD_ROOM_READ_MAX 500
#define HD_ROOM_READ_DEFAULT 100
#define HD_ROOM_ID_MAX 64 /* "team:" + a 50-byte id + NUL fits */

typedef struct hd_post {
	char *id; /* random UUID */
	char *room_id;
	char *team_id;
	char *author; /* agent id, "huddle" (system) or "user" */
	char *body;
	char *kind; /* peer | system | user */
	int64_t created_at;
	int64_t seq;
} hd_post;

typedef struct hd_posts {
	hd_post *items; /* oldest first */
	size_t n;
	int64_t next_seq; /* the cursor to pass as since_seq next time */
} hd_posts;

/* "team:<team>" into out. */
void hd_room_id(char *out, size_t outlen, const char *team);

/*
 * Post to team's room. kind is "peer" (author: a member agent), "system"
 * (author forced to "huddle") or "user" (author forced to "user"). Emits
 * team_chat_post {seq, roomId, author, kind} in the same transaction.
 * *out (when out is non-NULL) is the stored post: hd_post_free() it.
 * Refusals: `invalid post kind "x": use peer, system or user`,
 * `team "x" not found`, `no member "x" in team y`, `post body must not be
 * empty` (also for a blank body: hd_text_blank), `post body is N bytes; the limit is 100000` (HD_ETOOBIG),
 * `post body must be valid UTF-8`, `a peer post needs an author agent`.
 * Group commit: posts that threads of one process make at once (each on
 * its own st) are written in one transaction, on one of their
 * connections; each call returns once its own post committed, with its
 * own result. Inside an open transaction of st the post is written in
 * it, alone.
 */
int hd_room_post(hd_post **out, hd_store *st, const char *team,
    const char *kind, const char *author, const char *body, hd_err *err);

/* One post of a batch: inputs, then its own outcome. */
typedef struct hd_post_req {
	const char *team;
	const char *kind;
	const char *author;
	const char *body;
	hd_post *out; /* on success: the stored post (hd_post_free it) */
	int rc;	      /* 0 or the code hd_room_post would have returned */
	hd_err err;
} hd_post_req;

/*
 * Write every request in ONE transaction, in order, each
 * with the rules and errors of hd_room_post. A refused post fails alone;
 * the others commit. Returns 0, or the error that failed the whole
 * transaction (busy, I/O), which every not-yet-refused request then
 * carries too.
 */
int hd_room_post_many(hd_store *st, hd_post_req *reqs, size_t n,
    hd_err *err);

/* Posts with seq > since_seq, oldest first, at most limit (1..500; 0 means
 * 100), skipping exclude_author when non-NULL. next_seq is the last seq
 * returned, or since_seq when none. Dispose *out with hd_posts_dispose().
 * `limit must be between 1 and 500`, `since_seq must not be negative`,
 * `team "x" not found`. */
int hd_room_read(hd_posts *out, hd_store *st, const char *team,
    int64_t since_seq, int limit, const char *exclude_author, hd_err *err);

/* Called once per post, oldest first; a negative return stops the read
 * and is returned. p and its strings are valid only during the call. */
typedef int (*hd_post_fn)(void *ctx, const hd_post *p, hd_err *err);

/*
 * hd_room_read without copying: hands fn each post hd_room_read would
 * return, in order, straight from the row (no post is allocated), and
 * sets *next_seq (when non-NULL) as hd_room_read sets next_seq. A read
 * the store retries never hands fn a post twice. Errors as hd_room_read,
 * and fn's.
 */
int hd_room_read_each(hd_store *st, const char *team, int64_t since_seq,
    int limit, const char *exclude_author, hd_post_fn fn, void *ctx,
    int64_t *next_seq, hd_err *err);

/*
 * The read a runtime uses: excludes agent's own posts (echo guard: its
 * peer posts; system and user posts always come through). next_seq is the
 * seq of the last post delivered when limit cut the page, else the room's
 * head (so a subscriber whose own posts are newest never stalls); never
 * below since_seq. Page and cursor come from one snapshot.
 * Errors as hd_room_read, and `a subscriber needs an agent`.
 */
int hd_room_subscribe(hd_posts *out, hd_store *st, const char *team,
    const char *agent, int64_t since_seq, int limit, hd_err *err);

/* The room's highest seq (0 when empty). */
int hd_room_head(int64_t *out, hd_store *st, const char *team, hd_err *err);

/*
 * Wait until posts after since_seq exist, or timeout_ms passes (-1: no
 * limit), then read them as hd_room_read would. A post committed by any
 * process wakes the waiter within milliseconds, without busy polling
 * (see hd_store_wait_change). Returns 0 with out->n == 0 on timeout, or
 * when a signal interrupted the wait (so a caller can check its flags).
 */
int hd_room_follow(hd_posts *out, hd_store *st, const char *team,
    int64_t since_seq, int limit, int timeout_ms, hd_err *err);

/* The REST/MCP shape: {"id","roomId","teamId","authorAgentId","body",
 * "kind","createdAt","seq"}. A new reference. */
json_t *hd_post_to_json(const hd_post *p);

void hd_post_free(hd_post *p);
void hd_posts_dispose(hd_posts *l);

/* A team's posts, with its room's lock and the turn state the
 * exchange keeps per room in kv ("turn:<room>:<agent>") (team removal, src/lifecycle/remove.c, in its write
 * transaction): how many it keeps; delete them. */
int hd_room_team_count(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
int hd_room_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
