/*
 * test-batch.c -- hd_room_post's group commit (room/batch.c): posters on
 * many threads, each with its own connection as the HTTP server's
 * workers have, post at once. Every post commits with a seq of its own
 * and no gaps, each thread's posts keep their order, one event per post,
 * a refused post fails alone, and posts that meet share a transaction.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/util.h>

#include "store/sqlite.h"
#include "testutil.h"

#define POSTERS 8
#define POSTS 40

struct poster {
	hd_fixture *fx;
	int id;
	int nposts;
	int fail_every; /* every n-th post is by a non-member (0: none) */
	pthread_barrier_t *go;
	atomic_int *commits; /* counted by a commit hook on our connection */
	int64_t seqs[POSTS];
	int rcs[POSTS];
	char errs[POSTS][HD_ERR_MSG_MAX];
	int setup_rc;
};

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: p0 p1 p2 p3 p4 p5 p6 p7");
}

static int
count_commit(void *ctx)
{
	atomic_fetch_add((atomic_int *)ctx, 1);
	return 0; /* let it commit */
}

static void *
poster_main(void *arg)
{
	struct poster *p = arg;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	char author[16], body[64];
	int i;

	p->setup_rc = hd_store_open(&st, p->fx->home, &err);
	if (p->setup_rc == 0 && p->commits != NULL)
		sqlite3_commit_hook(hd_store_db(st), count_commit, p->commits);
	pthread_barrier_wait(p->go);
	if (p->setup_rc < 0)
		return NULL;
	for (i = 0; i < p->nposts; i++) {
		hd_post *out = NULL;
		int bad = p->fail_every > 0 && i % p->fail_every == 0;

		snprintf(author, sizeof(author), bad ? "ghost%d" : "p%d", p->id);
		snprintf(body, sizeof(body), "post %d of p%d", i, p->id);
		hd_err_clear(&err);
		p->rcs[i] = hd_room_post(&out, st, "dev", "peer", author, body, &err);
		p->seqs[i] = out != NULL ? out->seq : 0;
		if (p->rcs[i] < 0)
			snprintf(p->errs[i], sizeof(p->errs[i]), "%s", err.msg);
		else if (out == NULL || strcmp(out->body, body) != 0 ||
			 strcmp(out->author, author) != 0)
			p->rcs[i] = -999; /* someone else's post came back */
		hd_post_free(out);
	}
	hd_store_close(st);
	return NULL;
}

/* Run POSTERS threads of nposts each; the caller checks the outcome. */
static void
run_posters(hd_fixture *fx, struct poster *ps, int nposts, int fail_every,
    atomic_int *commits)
{
	pthread_t th[POSTERS];
	pthread_barrier_t go;
	int i;

	pthread_barrier_init(&go, NULL, POSTERS);
	for (i = 0; i < POSTERS; i++) {
		memset(&ps[i], 0, sizeof(ps[i]));
		ps[i].fx = fx;
		ps[i].id = i;
		ps[i].nposts = nposts;
		ps[i].fail_every = fail_every;
		ps[i].go = &go;
		ps[i].commits = commits;
		assert_int_equal(
		    pthread_create(&th[i], NULL, poster_main, &ps[i]), 0);
	}
	for (i = 0; i < POSTERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	for (i = 0; i < POSTERS; i++)
		assert_int_equal(ps[i].setup_rc, 0);
}

/* The room holds exactly the posts that succeeded, seq 1..n without a
 * gap, each the post its poster was answered with. */
static void
check_room(hd_fixture *fx, struct poster *ps, int nposts, size_t want)
{
	hd_posts l;
	hd_err err = HD_ERR_INIT;
	int64_t since = 0;
	size_t seen = 0, k;
	int i, j;

	do {
		assert_hd_ok(hd_room_read(&l, fx->st, "dev", since,
				 HD_ROOM_READ_MAX, NULL, &err),
		    &err);
		for (k = 0; k < l.n; k++) {
			const hd_post *p = &l.items[k];
			int found = 0;

			assert_int_equal(p->seq, (int64_t)(seen + k + 1));
			for (i = 0; i < POSTERS; i++)
				for (j = 0; j < nposts; j++)
					if (ps[i].rcs[j] == 0 &&
					    ps[i].seqs[j] == p->seq) {
						char body[64];

						snprintf(body, sizeof(body),
						    "post %d of p%d", j, i);
						assert_string_equal(p->body, body);
						found++;
					}
			assert_int_equal(found, 1);
		}
		seen += l.n;
		since = l.next_seq;
		k = l.n;
		hd_posts_dispose(&l);
	} while (k > 0);
	assert_int_equal(seen, want);
	assert_int_equal(hd_count_events(fx->st, NULL, "team_chat_post"), want);
}

static void
test_batch__concurrent_posts_all_commit_in_order_without_gaps(void **state)
{
	hd_fixture *fx = *state;
	struct poster ps[POSTERS];
	int i, j;

	run_posters(fx, ps, POSTS, 0, NULL);
	for (i = 0; i < POSTERS; i++)
		for (j = 0; j < POSTS; j++) {
			assert_int_equal(ps[i].rcs[j], 0);
			/* (2): one thread's posts keep their order */
			if (j > 0)
				assert_true(ps[i].seqs[j] > ps[i].seqs[j - 1]);
		}
	check_room(fx, ps, POSTS, (size_t)POSTERS * POSTS);
}

static void
test_batch__a_refused_post_fails_alone(void **state)
{
	hd_fixture *fx = *state;
	struct poster ps[POSTERS];
	size_t ok = 0;
	char want[64];
	int i, j;

	run_posters(fx, ps, POSTS, 4, NULL);
	for (i = 0; i < POSTERS; i++) {
		snprintf(want, sizeof(want), "no member \"ghost%d\" in team dev",
		    i);
		for (j = 0; j < POSTS; j++) {
			if (j % 4 == 0) {
				assert_int_equal(ps[i].rcs[j], HD_EREFUSED);
				assert_string_equal(ps[i].errs[j], want);
				continue;
			}
			assert_int_equal(ps[i].rcs[j], 0);
			ok++;
		}
	}
	assert_int_equal(ok, (size_t)POSTERS * POSTS * 3 / 4);
	check_room(fx, ps, POSTS, ok);
}

/* Hold the write lock on another connection while the posters start:
 * the first to arrive leads and waits for the lock; the others queue
 * behind it and are written together once it is free. */
struct holder {
	hd_store *st;
	pthread_barrier_t *ready;
	int rc;
};

static int
hold_fn(hd_store *st, void *payload, hd_err *err)
{
	(void)st;
	(void)err;
	pthread_barrier_wait(payload); /* the posters may start */
	hd_sleep_us(300000);
	return 0;
}

static void *
holder_main(void *arg)
{
	struct holder *h = arg;
	hd_err err = HD_ERR_INIT;

	h->rc = hd_store_write(h->st, hold_fn, h->ready, &err);
	return NULL;
}

static void
test_batch__posts_that_meet_share_a_transaction(void **state)
{
	hd_fixture *fx = *state;
	struct poster ps[POSTERS];
	atomic_int commits;
	pthread_barrier_t ready;
	pthread_t th;
	struct holder h;
	hd_err err = HD_ERR_INIT;
	int i;

	if (strcmp(hd_store_backend_name(fx->st), "postgresql") == 0) {
		print_message("SQLite only: "
			      "counts commits with sqlite3_commit_hook\n");
		skip();
	}

	atomic_init(&commits, 0);
	pthread_barrier_init(&ready, NULL, 2);
	memset(&h, 0, sizeof(h));
	h.ready = &ready;
	assert_hd_ok(hd_store_open(&h.st, fx->home, &err), &err);
	assert_int_equal(pthread_create(&th, NULL, holder_main, &h), 0);
	pthread_barrier_wait(&ready); /* the lock is held */
	run_posters(fx, ps, 1, 0, &commits);
	pthread_join(th, NULL);
	hd_store_close(h.st);
	pthread_barrier_destroy(&ready);
	assert_int_equal(h.rc, 0);
	for (i = 0; i < POSTERS; i++)
		assert_int_equal(ps[i].rcs[0], 0);
	check_room(fx, ps, 1, POSTERS);
	/* eight posts, far fewer commits: the first alone, then the rest */
	assert_true(atomic_load(&commits) < POSTERS);
}

/* (4): a post made inside the caller's transaction is part of it. */
static int
post_then_fail(hd_store *st, void *payload, hd_err *err)
{
	int rc;

	(void)payload;
	if ((rc = hd_room_post(NULL, st, "dev", "peer", "p0", "rolled back",
		 err)) < 0)
		return rc;
	return hd_err_set(err, HD_ECONFLICT, "changed my mind");
}

static void
test_batch__a_post_inside_a_transaction_goes_with_it(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t h = -1;

	assert_hd_err(hd_store_write(fx->st, post_then_fail, NULL, &err),
	    HD_ECONFLICT, "changed my mind", &err);
	assert_hd_ok(hd_room_head(&h, fx->st, "dev", &err), &err);
	assert_int_equal(h, 0);
	assert_int_equal(hd_count_events(fx->st, NULL, "team_chat_post"), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_batch__concurrent_posts_all_commit_in_order_without_gaps),
	    T(test_batch__a_refused_post_fails_alone),
	    T(test_batch__posts_that_meet_share_a_transaction),
	    T(test_batch__a_post_inside_a_transaction_goes_with_it),
	};
	return cmocka_run_group_tests_name("unit/room/batch", tests, NULL, NULL);
}
