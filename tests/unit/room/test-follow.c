/*
 * test-follow.c -- hd_room_follow and the store's change watcher: a
 * follower wakes for a post committed by another process (also across a
 * WAL checkpoint that truncates the file), times out empty, and returns
 * early on a signal. No timing assertions: waits are bounded generously
 * only so a broken wake-up fails instead of hanging.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/room.h>
#include <huddle/util.h>

#include "store/sqlite.h"
#include "testutil.h"

#define WAIT_MS 30000 /* a generous bound, never a timing claim */

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder");
}

static void
sleep_ms(int ms)
{
	hd_sleep_us((int64_t)ms * 1000);
}

/* A child process: post `body` as coder after delay_ms; with truncate,
 * then checkpoint the WAL down to zero bytes and post `body2`. Exit codes
 * say what went wrong. */
static pid_t
spawn_poster(hd_fixture *fx, int delay_ms, const char *body, const char *body2)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	pid_t pid = fork();
	struct stat sb;
	char wal[300];
	int busy = -1;
	sqlite3_stmt *s;

	assert_true(pid >= 0);
	if (pid > 0)
		return pid;
	alarm(60);
	if (hd_store_open(&st, fx->home, &err) < 0)
		_exit(10);
	sleep_ms(delay_ms);
	if (hd_room_post(NULL, st, "dev", "peer", "coder", body, &err) < 0)
		_exit(11);
	if (body2 == NULL)
		_exit(0);
	sleep_ms(delay_ms);
	if (sqlite3_prepare_v2(hd_store_db(st),
		"PRAGMA wal_checkpoint(TRUNCATE)", -1, &s, NULL) != SQLITE_OK)
		_exit(12);
	if (sqlite3_step(s) == SQLITE_ROW)
		busy = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	snprintf(wal, sizeof(wal), "%s/huddle.db-wal", fx->home);
	if (busy != 0 || stat(wal, &sb) != 0 || sb.st_size != 0)
		_exit(13); /* the scenario did not happen */
	sleep_ms(delay_ms);
	if (hd_room_post(NULL, st, "dev", "peer", "coder", body2, &err) < 0)
		_exit(14);
	_exit(0);
}

static void
reap(pid_t pid)
{
	int status = -1;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void
test_follow__returns_existing_posts_at_once(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "peer", "coder", "a", &err),
	    &err);
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "user", NULL, "b", &err), &err);
	assert_hd_ok(hd_room_follow(&l, fx->st, "dev", 0, 0, 0, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].body, "a");
	assert_string_equal(l.items[1].body, "b");
	assert_int_equal(l.next_seq, 2);
	hd_posts_dispose(&l);
	assert_hd_ok(
	    hd_room_follow(&l, fx->st, "dev", 1, 1, WAIT_MS, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].seq, 2);
	hd_posts_dispose(&l);
}

static void
test_follow__times_out_empty(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	assert_hd_ok(hd_room_follow(&l, fx->st, "dev", 0, 0, 100, &err), &err);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.next_seq, 0);
	hd_posts_dispose(&l);
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "user", NULL, "b", &err), &err);
	assert_hd_ok(hd_room_follow(&l, fx->st, "dev", 1, 0, 50, &err), &err);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.next_seq, 1);
	hd_posts_dispose(&l);
}

static void
test_follow__refusals_have_exact_texts(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	assert_hd_err(hd_room_follow(&l, fx->st, "dev", 0, 501, 10, &err),
	    HD_EINVAL, "limit must be between 1 and 500", &err);
	assert_hd_err(hd_room_follow(&l, fx->st, "dev", -1, 0, 10, &err),
	    HD_EINVAL, "since_seq must not be negative", &err);
	assert_hd_err(hd_room_follow(&l, fx->st, "ghost", 0, 0, 10, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
}

static void
test_follow__wakes_for_a_post_from_another_process(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	pid_t pid;

	pid = spawn_poster(fx, 300, "from the child", NULL);
	assert_hd_ok(
	    hd_room_follow(&l, fx->st, "dev", 0, 0, WAIT_MS, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].body, "from the child");
	assert_string_equal(l.items[0].author, "coder");
	assert_int_equal(l.next_seq, 1);
	hd_posts_dispose(&l);
	reap(pid);
}

static void
test_follow__survives_a_wal_truncated_by_checkpoint(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	pid_t pid;

	if (strcmp(hd_store_backend_name(fx->st), "postgresql") == 0) {
		print_message("SQLite only: "
			      "a WAL checkpoint\n");
		skip();
	}

	pid = spawn_poster(fx, 200, "before", "after the checkpoint");
	assert_hd_ok(
	    hd_room_follow(&l, fx->st, "dev", 0, 0, WAIT_MS, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].body, "before");
	hd_posts_dispose(&l);
	assert_hd_ok(
	    hd_room_follow(&l, fx->st, "dev", 1, 0, WAIT_MS, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].body, "after the checkpoint");
	assert_int_equal(l.items[0].seq, 2);
	hd_posts_dispose(&l);
	reap(pid);
}

static volatile sig_atomic_t got_alarm;

static void
on_alarm(int sig)
{
	(void)sig;
	got_alarm = 1;
}

static void
test_follow__a_signal_ends_the_wait_empty(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	struct sigaction sa, old;
	struct itimerval every = {{0, 100000}, {0, 200000}},
			 off = {{0, 0}, {0, 0}};
	hd_posts l;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: the wait sees EINTR */
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	got_alarm = 0;
	/* a repeating timer: a signal that lands outside the sleep itself is
	 * followed by one that lands inside it */
	assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
	/* no limit on the wait: only a signal can end it */
	assert_hd_ok(hd_room_follow(&l, fx->st, "dev", 0, 0, -1, &err), &err);
	setitimer(ITIMER_REAL, &off, NULL);
	assert_int_equal(got_alarm, 1);
	assert_int_equal(l.n, 0);
	hd_posts_dispose(&l);
	sigaction(SIGALRM, &old, NULL);
}

static void
test_watch__cursor_moves_only_for_other_connections(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_store *other = NULL;
	uint64_t cur, before;

	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
	before = cur;
	/* nothing happened: a bounded wait times out */
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 50, &err), 0);
	assert_true(cur == before);
	/* our own commit does not count */
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "user", NULL, "own", &err), &err);
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 0, &err), 0);
	/* another connection's commit does, at once */
	assert_hd_ok(hd_store_open(&other, fx->home, &err), &err);
	assert_hd_ok(
	    hd_room_post(NULL, other, "dev", "user", NULL, "other", &err),
	    &err);
	assert_int_equal(hd_store_wait_change(fx->st, &cur, WAIT_MS, &err), 1);
	assert_true(cur != before);
	before = cur;
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 0, &err), 0);
	assert_true(cur == before);
	hd_store_close(other);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_follow__returns_existing_posts_at_once),
	    T(test_follow__times_out_empty),
	    T(test_follow__refusals_have_exact_texts),
	    T(test_follow__wakes_for_a_post_from_another_process),
	    T(test_follow__survives_a_wal_truncated_by_checkpoint),
	    T(test_follow__a_signal_ends_the_wait_empty),
	    T(test_watch__cursor_moves_only_for_other_connections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
