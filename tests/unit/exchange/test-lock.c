/*
 * test-lock.c -- one exchange per room at a time, across processes
 * (SPEC 8): the room lock as an exchange holds it. Its renewal while a
 * long turn runs, a second exchange refused from another process, and a
 * holder killed (kill -9) mid-turn taken over at once. The lock's own
 * rules (lease, takeovers, rows written by hand):
 * tests/unit/room/test-lock.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/exchange.h>
#include <huddle/room_lock.h>
#include <huddle/util.h>

#include "testutil.h"

#include "fake.h"

/* ---- a holder in another process ---- */

typedef struct child_ctl {
	int ready_w; /* the child writes one byte here when its turn runs */
	int go_r;    /* then waits for a byte here (-1: pause forever) */
	int64_t sleep_ms; /* or sleeps this long instead */
} child_ctl;

static void
child_during(fake *f, const hd_runtime_turn *in)
{
	child_ctl *c = f->user;
	char ch = 'r';

	(void)in;
	if (write(c->ready_w, &ch, 1) != 1)
		_exit(20);
	if (c->sleep_ms > 0)
		hd_sleep_us(c->sleep_ms * 1000);
	else if (c->go_r >= 0) {
		if (read(c->go_r, &ch, 1) != 1)
			_exit(21);
	} else
		for (;;)
			pause();
}

/* Fork a process that runs an exchange on dev with lease_ms and the
 * given control; returns its pid once its turn is running. */
static pid_t
spawn_holder(hd_fixture *fx, int64_t lease_ms, int go_r, int64_t sleep_ms)
{
	int ready[2];
	pid_t pid;
	char ch;

	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		hd_store *st = NULL;
		hd_exchange_spec s;
		hd_exchange_result res;
		hd_err err = HD_ERR_INIT;
		child_ctl c = {ready[1], go_r, sleep_ms};
		fake f;
		int rc;

		close(ready[0]);
		if (hd_store_open(&st, fx->home, &err) != 0)
			_exit(10);
		fake_init(&f, NULL);
		f.during = child_during;
		f.user = &c;
		memset(&s, 0, sizeof(s));
		s.team = "dev";
		s.stimulus = "hold the room";
		s.lease_ms = lease_ms;
		s.runner = fake_run;
		s.runner_ctx = &f;
		rc = hd_exchange_run(&res, st, &s, &err);
		hd_exchange_result_dispose(&res);
		fake_dispose(&f);
		hd_store_close(st);
		_exit(rc == 0 ? 0 : 11);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &ch, 1), 1);
	close(ready[0]);
	return pid;
}

static int
try_exchange(hd_fixture *fx, hd_err *err)
{
	hd_exchange_spec s;
	hd_exchange_result res;
	fake f;
	int rc;

	fake_init(&f, fx->st);
	memset(&s, 0, sizeof(s));
	s.team = "dev";
	s.stimulus = "me too";
	s.runner = fake_run;
	s.runner_ctx = &f;
	rc = hd_exchange_run(&res, fx->st, &s, err);
	if (rc == 0)
		assert_int_equal(res.turns_taken, 1);
	hd_exchange_result_dispose(&res);
	fake_dispose(&f);
	return rc;
}

static void
test_lock__another_process_is_refused(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int go[2], status;
	pid_t pid;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_int_equal(pipe(go), 0);
	pid = spawn_holder(fx, 60000, go[0], 0);
	close(go[0]);
	assert_hd_err(try_exchange(fx, &err), HD_ECONFLICT,
	    "an exchange is already running for this room", &err);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the holder released it on the way out */
	assert_hd_ok(try_exchange(fx, &err), &err);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_bound_hit"), 2);
}

static void
test_lock__a_killed_holder_is_taken_over_at_once(void **state)
{
	hd_fixture *fx = *state;
	hd_room_lock row;
	hd_err err = HD_ERR_INIT;
	char host[256], boot[40];
	int found = 0, status;
	pid_t pid;

	hd_fixture_team(fx, "dev", "manager", NULL);
	pid = spawn_holder(fx, 600000, -1, 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));

	/* its row outlives it, and says where it ran */
	assert_hd_ok(hd_room_lock_get(&row, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 1);
	assert_int_equal(row.pid, pid);
	hd_host_name(host, sizeof(host));
	hd_boot_id(boot, sizeof(boot));
	assert_string_equal(row.host, host);
	assert_string_equal(row.boot_id, boot);
	assert_true(row.start > 0);
	/* a ten-minute lease, yet the room is free at once: its holder ran
	 * here and is gone */
	assert_true(hd_now_ms() + 500000 < row.expires_at);
	assert_hd_ok(try_exchange(fx, &err), &err);
	assert_hd_ok(hd_room_lock_get(&row, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 0);
	/* the dead holder's exchange never reached its end */
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_bound_hit"), 1);
}

static void
test_lock__a_turn_longer_than_the_lease_keeps_the_room(void **state)
{
	hd_fixture *fx = *state;
	hd_room_lock lk;
	hd_err err = HD_ERR_INIT;
	int status = 0, refused = 0, taken = 0;
	pid_t pid, done = 0;

	hd_fixture_team(fx, "dev", "manager", NULL);
	/* a 1.5 s lease, a 3.6 s turn: only renewal (every 500 ms) keeps it;
	 * the lease leaves a second of slack for a renewal delayed by a
	 * loaded machine or a sanitizer */
	pid = spawn_holder(fx, 1500, -1, 3600);
	while ((done = waitpid(pid, &status, WNOHANG)) == 0) {
		if (hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err) ==
		    0) {
			/* the holder's last step releases the lock with its
			 * turn_bound_hit event: taking the room before that
			 * event exists is taking it from a running exchange;
			 * after it, the holder is merely not gone yet */
			if (hd_count_events(fx->st, "dev", "turn_bound_hit") == 0)
				taken++;
			hd_room_lock_release(fx->st, &lk, &err);
		} else {
			assert_int_equal(err.code, HD_ECONFLICT);
			refused++;
		}
		hd_sleep_us(50000);
	}
	assert_int_equal(done, pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(taken, 0);
	assert_true(refused > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_lock__another_process_is_refused),
	    hd_fixture_test(test_lock__a_killed_holder_is_taken_over_at_once),
	    hd_fixture_test(
		test_lock__a_turn_longer_than_the_lease_keeps_the_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
