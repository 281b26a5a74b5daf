/*
 * commit.c -- group commit for room posts made over HTTP.
 *
 * Every commit costs a WAL append and a lock round trip whatever it holds,
 * so posts that arrive together are written together. There is no writer
 * thread: the first request thread that finds no commit in progress
 * becomes the leader, takes everything queued (its own post first, then
 * whatever arrived), writes it in one BEGIN IMMEDIATE transaction through
 * its own connection (hd_room_post_many), and wakes the followers with
 * their outcomes; followers that arrived meanwhile form the next batch.
 *  (1) A reply is sent only after its own post committed: a thread leaves
 *      only when the transaction holding its post has committed.
 *  (2) Posts keep their queue order, so one client's posts get increasing
 *      seqs; each post succeeds or fails on its own.
 *  (3) Alone, a post costs no hand-off: its own thread writes it at once.
 */
#include <stdlib.h>
#include <string.h>

#include "commit.h"

#define HD_LOG_COMPONENT "commit"
#include <huddle/log.h>

#define BATCH_MAX 256

struct commit_item {
	hd_post_req req;
	int done;
	struct commit_item *next;
};

struct hd_committer {
	pthread_mutex_t lock;
	pthread_cond_t done; /* followers wait here */
	struct commit_item *head, *tail;
	int leading; /* a leader is writing a batch */
	int64_t posts, commits; /* for the shutdown log line */
};

int
hd_committer_start(hd_committer **out, const char *home, hd_err *err)
{
	hd_committer *c;

	(void)home;
	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done, NULL);
	*out = c;
	return 0;
}

/* As leader: write queued batches until the queue is empty. Called and
 * returns with c->lock held. */
static void
lead(hd_committer *c, hd_store *st)
{
	hd_post_req reqs[BATCH_MAX];
	struct commit_item *batch[BATCH_MAX], *it;
	hd_err err = HD_ERR_INIT;
	size_t n, i;

	c->leading = 1;
	while (c->head != NULL) {
		for (n = 0; n < BATCH_MAX && c->head != NULL; n++) {
			it = c->head;
			c->head = it->next;
			batch[n] = it;
			reqs[n] = it->req;
		}
		if (c->head == NULL)
			c->tail = NULL;
		pthread_mutex_unlock(&c->lock);
		hd_room_post_many(st, reqs, n, &err);
		pthread_mutex_lock(&c->lock);
		for (i = 0; i < n; i++) {
			batch[i]->req = reqs[i];
			batch[i]->done = 1;
		}
		c->posts += (int64_t)n;
		c->commits++;
		pthread_cond_broadcast(&c->done);
	}
	c->leading = 0;
}

int
hd_committer_post(hd_committer *c, hd_store *st, hd_post **out,
    const char *team, const char *kind, const char *author, const char *body,
    hd_err *err)
{
	struct commit_item it;
	int rc;

	memset(&it, 0, sizeof(it));
	it.req.team = team;
	it.req.kind = kind;
	it.req.author = author;
	it.req.body = body;
	pthread_mutex_lock(&c->lock);
	if (c->tail != NULL)
		c->tail->next = &it;
	else
		c->head = &it;
	c->tail = &it;
	while (!it.done) {
		if (!c->leading)
			lead(c, st);
		else
			pthread_cond_wait(&c->done, &c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	rc = it.req.rc;
	if (rc < 0 && err != NULL)
		*err = it.req.err;
	if (out != NULL)
		*out = it.req.out;
	else
		hd_post_free(it.req.out);
	return rc;
}

void
hd_committer_stop(hd_committer *c)
{
	if (c == NULL)
		return;
	if (c->commits > 0)
		hd_log_info("group commit: %lld posts in %lld transactions "
			    "(%.1f per transaction)",
		    (long long)c->posts, (long long)c->commits,
		    (double)c->posts / (double)c->commits);
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
