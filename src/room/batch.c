/*
 * batch.c -- group commit of room posts: hd_room_post.
 *
 * Every commit costs a WAL append and a lock round trip whatever it holds,
 * so posts that threads of one process make at the same time are written
 * together. Posters queue per database (its path); the first to find no
 * commit under way leads: it takes everything queued -- itself first --
 * writes it in one BEGIN IMMEDIATE transaction on its own connection
 * (hd_room_post_many, each post in a savepoint), settles every post, and
 * hands the lead to the first post queued meanwhile, which writes the
 * next batch on its connection. A lone poster (a CLI call, a runtime)
 * finds nobody queued and writes its post at once, as it always did.
 * Nobody waits for posts that have not arrived: a batch is what queued
 * while the previous one was being written.
 *  (1) A poster returns only once the transaction holding its post
 *      committed (or failed), with its own post and its own error: a
 *      refused post rolls back to its savepoint alone and the rest of the
 *      batch commits. An error that fails the whole transaction (busy,
 *      I/O) reaches every post of that batch that was not refused.
 *  (2) Posts keep their queue order, in a batch and from one batch to the
 *      next (one commit at a time per database), so one thread's posts
 *      get increasing seqs. seq itself is room.c's (1): the room's
 *      counter row, moved on in the post's transaction (in its savepoint:
 *      a refused post gives its seq back), so other processes' posts
 *      interleave without gaps.
 *  (3) A connection is one thread's: the leader writes on its own, never
 *      on a follower's, and a follower's connection sees the committed
 *      post in its next read (WAL). Which connection wrote a post changes
 *      nothing stored.
 *  (4) A poster inside a transaction of its own (hd_store_write: the
 *      board's reflections, an engine step) writes in that transaction,
 *      unbatched: its post commits or rolls back with the rest.
 *  (5) The queues live while someone posts: a database's queue is freed
 *      by its last poster out. A forked child starts with no queues (its
 *      parent's threads, and their leads, do not exist there).
 * Callers: every room post (the CLI, MCP over stdio and HTTP, REST, the
 * engines); the HTTP server's worker threads are where posts meet.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/room.h>

#include <store/store.h>
#include "room_int.h"

#define BATCH_MAX 256

enum { POST_WAIT, POST_LEAD, POST_DONE };

/* One poster, on its own stack. */
struct post_node {
	hd_post_req req;
	pthread_cond_t cv; /* signalled when state changes */
	int state;         /* guarded by batch_mu */
	struct post_node *next;
};

/* The posters of one database (5). */
struct post_queue {
	char *path;
	struct post_node *head, *tail; /* waiting, the leader first */
	int busy;  /* a leader is writing */
	int users; /* posters between arrival and return */
	struct post_queue *next;
};

static pthread_mutex_t batch_mu = PTHREAD_MUTEX_INITIALIZER;
static struct post_queue *queues; /* guarded by batch_mu */
static pthread_once_t batch_once = PTHREAD_ONCE_INIT;

/* (5): in a forked child nobody is writing, and batch_mu may have been
 * held at the fork; the parent's queues are left alone. */
static void
batch_atfork_child(void)
{
	pthread_mutex_init(&batch_mu, NULL);
	queues = NULL;
}

static void
batch_init(void)
{
	pthread_atfork(NULL, NULL, batch_atfork_child);
}

/* The queue of path, made on first use; NULL when out of memory. Called
 * with batch_mu held. */
static struct post_queue *
queue_get(const char *path)
{
	struct post_queue *q;

	for (q = queues; q != NULL; q = q->next)
		if (strcmp(q->path, path) == 0)
			return q;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	if ((q->path = strdup(path)) == NULL) {
		free(q);
		return NULL;
	}
	q->next = queues;
	queues = q;
	return q;
}

/* The last poster out frees the queue (5). Called with batch_mu held. */
static void
queue_leave(struct post_queue *q)
{
	struct post_queue **p;

	if (--q->users > 0)
		return;
	for (p = &queues; *p != NULL; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	free(q->path);
	free(q);
}

/* The leader's write: batch[0..n) (itself first) in one transaction (1),
 * without batch_mu. A batch of one is an ordinary post. */
static void
batch_write(hd_store *st, struct post_node **batch, size_t n)
{
	hd_post_req *reqs;
	hd_err err = HD_ERR_INIT;
	size_t i;

	if (n == 1) {
		hd_post_req *r = &batch[0]->req;

		r->rc = hd_room__post_one(&r->out, st, r->team, r->kind,
		    r->author, r->body, &r->err);
		return;
	}
	if ((reqs = malloc(n * sizeof(*reqs))) == NULL) {
		for (i = 0; i < n; i++) {
			batch[i]->req.out = NULL;
			batch[i]->req.rc = hd_err_set(
			    &batch[i]->req.err, HD_ENOMEM, "out of memory");
		}
		return;
	}
	for (i = 0; i < n; i++)
		reqs[i] = batch[i]->req;
	hd_room_post_many(st, reqs, n, &err);
	for (i = 0; i < n; i++)
		batch[i]->req = reqs[i];
	free(reqs);
}

/* Lead: write what is queued, settle it, pass the lead on. Called with
 * batch_mu held and me at the head of q; returns with it held. */
static void
batch_lead(hd_store *st, struct post_queue *q, struct post_node *me)
{
	struct post_node *batch[BATCH_MAX];
	size_t n, i;

	for (n = 0; n < BATCH_MAX && q->head != NULL; n++) {
		batch[n] = q->head;
		q->head = q->head->next;
	}
	if (q->head == NULL)
		q->tail = NULL;
	pthread_mutex_unlock(&batch_mu);
	batch_write(st, batch, n);
	pthread_mutex_lock(&batch_mu);
	for (i = 0; i < n; i++)
		if (batch[i] != me) {
			batch[i]->state = POST_DONE;
			pthread_cond_signal(&batch[i]->cv);
		}
	me->state = POST_DONE;
	if (q->head != NULL) { /* queued meanwhile: the next batch (2) */
		q->head->state = POST_LEAD;
		pthread_cond_signal(&q->head->cv);
	} else
		q->busy = 0;
}

int
hd_room_post(hd_post **out, hd_store *st, const char *team, const char *kind,
    const char *author, const char *body, hd_err *err)
{
	struct post_node me;
	struct post_queue *q;

	if (out != NULL)
		*out = NULL;
	if (hd_store_in_txn(st)) /* (4) */
		return hd_room__post_one(out, st, team, kind, author, body, err);
	pthread_once(&batch_once, batch_init);
	memset(&me, 0, sizeof(me));
	me.req.team = team;
	me.req.kind = kind;
	me.req.author = author;
	me.req.body = body;
	pthread_mutex_lock(&batch_mu);
	if ((q = queue_get(hd_store_path(st))) == NULL) {
		pthread_mutex_unlock(&batch_mu);
		return hd_room__post_one(out, st, team, kind, author, body, err);
	}
	q->users++;
	pthread_cond_init(&me.cv, NULL);
	if (q->tail != NULL)
		q->tail->next = &me;
	else
		q->head = &me;
	q->tail = &me;
	if (!q->busy) { /* nobody writing: lead at once */
		q->busy = 1;
		me.state = POST_LEAD;
	}
	while (me.state == POST_WAIT)
		pthread_cond_wait(&me.cv, &batch_mu);
	if (me.state == POST_LEAD)
		batch_lead(st, q, &me);
	queue_leave(q);
	pthread_mutex_unlock(&batch_mu);
	pthread_cond_destroy(&me.cv);
	if (me.req.rc < 0 && err != NULL)
		*err = me.req.err;
	if (out != NULL)
		*out = me.req.out;
	else
		hd_post_free(me.req.out);
	return me.req.rc;
}
