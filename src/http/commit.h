/*
 * commit.h -- the server's group committer for room posts (commit.c).
 */
#ifndef HD_COMMIT_H
#define HD_COMMIT_H

#include <pthread.h>

#include <huddle/room.h>

typedef struct hd_committer hd_committer;

/*
 * One post handed over without waiting (hd_committer_queue). The caller
 * fills req's inputs (team, kind, author, body: they must stay valid until
 * done runs) and done. Once the transaction holding the post has committed
 * -- or failed -- the writer thread sets req's outcome (rc, err, out) and
 * calls done(it); from that call on the item is the caller's again and the
 * committer never touches it. The other fields are the committer's.
 */
typedef struct hd_commit_item {
	hd_post_req req;
	void (*done)(struct hd_commit_item *it);
	struct hd_commit_item *next;
	int finished; /* for hd_committer_post's waiter */
} hd_commit_item;

/* A committer for the database under home: opens the writer's own
 * connection and starts the writer thread. */
int hd_committer_start(hd_committer **out, const char *home, hd_err *err);

/* A request that may post is being handled (commit.c, wait policy):
 * the writer holds a batch a moment for it. Every announce is matched by
 * one hd_committer_queue with announced set, or one withdraw. */
void hd_committer_announce(hd_committer *c);
void hd_committer_withdraw(hd_committer *c);

/* Queue one post; it->done is called (on the writer thread) once it is
 * settled. announced: this post was announced (and is no longer pending
 * then, whatever the outcome). Returns 0, or HD_EBUSY when the committer
 * is stopping (done is then never called). */
int hd_committer_queue(
    hd_committer *c, hd_commit_item *it, int announced, hd_err *err);

/* Queue one post and return once the transaction holding it committed.
 * Same contract and errors as hd_room_post. */
int hd_committer_post(hd_committer *c, hd_post **out, const char *team,
    const char *kind, const char *author, const char *body, hd_err *err);

/* Write what is queued, stop the writer and free (after every poster has
 * returned). NULL-safe. */
void hd_committer_stop(hd_committer *c);

#endif
