/*
 * commit.c -- group commit for room posts made over HTTP.
 *
 * Every commit costs a WAL append and a lock round trip whatever it holds,
 * so posts that arrive together are written together. One writer thread
 * with a connection of its own takes everything queued, writes it in one
 * BEGIN IMMEDIATE transaction (hd_room_post_many) and settles each post;
 * posts that arrive meanwhile form the next batch.
 *
 * Wait policy: the writer never waits for posts nobody announced. A
 * request that may post announces itself before it is parsed
 * (hd_committer_announce) and is counted until it queues its post or
 * withdraws. With posts queued and others announced, the writer holds
 * the batch until every announced post is queued, for at most HOLD_US:
 * those posts are already being handled on other threads, and writing
 * them in the same transaction costs far less than a commit of their
 * own. A lone post (nothing else announced) is written at once.
 *  (1) A post is settled -- its done callback runs, or its synchronous
 *      poster wakes -- only after the transaction holding it committed
 *      (or failed), and the writer never touches an item after settling
 *      it. Replies therefore go out only after their own post committed.
 *  (2) Posts keep their queue order, so one client's posts get increasing
 *      seqs; each post succeeds or fails on its own.
 *  (3) Only the writer uses its connection, and nothing else in the
 *      server writes room posts, so its page cache stays warm from one
 *      batch to the next.
 *  (4) Stopping writes everything already queued; a post queued after
 *      that is refused (HD_EBUSY). The server stops the committer only
 *      after MHD, so no request is left waiting.
 *  (5) A batch is held at most HOLD_US past its first post, and only
 *      while announced posts are outstanding.
 */
#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"

#define HD_LOG_COMPONENT "commit"
#include <huddle/log.h>

#define BATCH_MAX 256
#define HOLD_US 500 /* (5) */

struct hd_committer {
	pthread_mutex_t lock;
	pthread_cond_t work; /* the writer waits here for posts */
	pthread_cond_t done; /* synchronous posters wait here */
	hd_commit_item *head, *tail;
	size_t queued; /* items on the queue */
	int announced; /* posts announced, not yet queued or withdrawn */
	int holding;   /* the writer is holding a batch for them */
	int stopping;
	pthread_t thread;
	int started;
	hd_store *st;                /* the writer's own connection (3) */
	hd_post_req reqs[BATCH_MAX]; /* the writer's batch */
	int64_t posts, commits; /* for the shutdown log line */
};

/* Write one batch (items taken off the queue, in order) and settle each
 * post (1). Runs on the writer without the lock. Returns how many items
 * are synchronous posts still to be woken. */
static size_t
write_batch(hd_committer *c, hd_commit_item **batch, size_t n)
{
	hd_err err = HD_ERR_INIT;
	size_t i, waiters = 0;

	for (i = 0; i < n; i++)
		c->reqs[i] = batch[i]->req;
	hd_room_post_many(c->st, c->reqs, n, &err);
	for (i = 0; i < n; i++) {
		batch[i]->req = c->reqs[i];
		if (batch[i]->done != NULL) {
			batch[i]->done(batch[i]); /* the caller's again */
			batch[i] = NULL;
		} else
			waiters++;
	}
	return waiters;
}

/* Wait policy: with c->lock held and posts queued, wait while announced
 * posts are outstanding, up to HOLD_US (5). */
static void
hold_batch(hd_committer *c)
{
	struct timespec until;

	if (c->announced == 0 || c->stopping)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += HOLD_US * 1000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	c->holding = 1;
	while (c->announced > 0 && c->queued < BATCH_MAX && !c->stopping)
		if (pthread_cond_timedwait(&c->work, &c->lock, &until) ==
		    ETIMEDOUT)
			break;
	c->holding = 0;
}

static void *
writer_main(void *arg)
{
	hd_committer *c = arg;
	hd_commit_item *batch[BATCH_MAX];
	size_t n, i, waiters;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (c->head == NULL && !c->stopping)
			pthread_cond_wait(&c->work, &c->lock);
		if (c->head == NULL)
			break; /* stopping, and everything is written (4) */
		hold_batch(c);
		for (n = 0; n < BATCH_MAX && c->head != NULL; n++) {
			batch[n] = c->head;
			c->head = c->head->next;
		}
		c->queued -= n;
		if (c->head == NULL)
			c->tail = NULL;
		pthread_mutex_unlock(&c->lock);
		waiters = write_batch(c, batch, n);
		pthread_mutex_lock(&c->lock);
		c->posts += (int64_t)n;
		c->commits++;
		for (i = 0; i < n && waiters > 0; i++)
			if (batch[i] != NULL)
				batch[i]->finished = 1;
		if (waiters > 0)
			pthread_cond_broadcast(&c->done);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int
hd_committer_start(hd_committer **out, const char *home, hd_err *err)
{
	hd_committer *c;
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* for HOLD_US */
	pthread_cond_init(&c->work, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&c->done, NULL);
	if ((rc = hd_store_open(&c->st, home, err)) < 0) {
		hd_committer_stop(c);
		return rc;
	}
	if (pthread_create(&c->thread, NULL, writer_main, c) != 0) {
		hd_committer_stop(c);
		return hd_err_set(
		    err, HD_ERR, "cannot start the writer thread");
	}
	c->started = 1;
	*out = c;
	return 0;
}

void
hd_committer_announce(hd_committer *c)
{
	pthread_mutex_lock(&c->lock);
	c->announced++;
	pthread_mutex_unlock(&c->lock);
}

void
hd_committer_withdraw(hd_committer *c)
{
	pthread_mutex_lock(&c->lock);
	if (--c->announced == 0 && c->holding)
		pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->lock);
}

int
hd_committer_queue(
    hd_committer *c, hd_commit_item *it, int announced, hd_err *err)
{
	it->next = NULL;
	it->finished = 0;
	pthread_mutex_lock(&c->lock);
	if (announced)
		c->announced--;
	if (c->stopping) {
		pthread_mutex_unlock(&c->lock);
		return hd_err_set(err, HD_EBUSY, "the server is shutting down");
	}
	if (c->tail != NULL)
		c->tail->next = it;
	else
		c->head = it;
	c->tail = it;
	c->queued++;
	/* a holding writer waits for the last announced post or a full
	 * batch; else it may be asleep (cheap to signal when it is not) */
	if (!c->holding || c->announced == 0 || c->queued >= BATCH_MAX)
		pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int
hd_committer_post(hd_committer *c, hd_post **out, const char *team,
    const char *kind, const char *author, const char *body, hd_err *err)
{
	hd_commit_item it;
	int rc;

	memset(&it, 0, sizeof(it));
	it.req.team = team;
	it.req.kind = kind;
	it.req.author = author;
	it.req.body = body;
	if ((rc = hd_committer_queue(c, &it, 0, err)) < 0)
		return rc;
	pthread_mutex_lock(&c->lock);
	while (!it.finished)
		pthread_cond_wait(&c->done, &c->lock);
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
	if (c->started) {
		pthread_mutex_lock(&c->lock);
		c->stopping = 1;
		pthread_cond_signal(&c->work);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->thread, NULL);
	}
	if (c->commits > 0)
		hd_log_info("group commit: %lld posts in %lld transactions "
			    "(%.1f per transaction)",
		    (long long)c->posts, (long long)c->commits,
		    (double)c->posts / (double)c->commits);
	hd_store_close(c->st);
	pthread_cond_destroy(&c->done);
	pthread_cond_destroy(&c->work);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
