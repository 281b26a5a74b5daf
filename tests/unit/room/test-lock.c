/*
 * test-lock.c -- the room lock (room_lock.h, SPEC 8) on its own: the
 * lease row, its refusal of a second holder, its expiry and renewal, a
 * holder that lost its lease unable to touch its successor's, rooms
 * independent; and who is taken over when: a holder on this host whose
 * process is gone or was replaced (same pid, another start time) at once,
 * with the process group of its running turn killed; a live holder never;
 * a holder on another host only after its lease. The lock as an exchange
 * holds it, across processes: tests/unit/exchange/test-lock.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <huddle/room_lock.h>
#include <huddle/util.h>

#include "testutil.h"

static void
test_lock__lease_refuses_renews_and_is_taken_over(void **state)
{
	hd_fixture *fx = *state;
	hd_room_lock a, b, row;
	hd_err err = HD_ERR_INIT;
	int found = 0;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_ok(
	    hd_room_lock_acquire(&a, fx->st, "dev", 60000, &err), &err);
	assert_string_equal(a.room_id, "team:dev");
	assert_int_equal(a.pid, getpid());
	assert_int_equal(strlen(a.holder), 32);
	assert_hd_err(hd_room_lock_acquire(&b, fx->st, "dev", 60000, &err),
	    HD_ECONFLICT, "an exchange is already running for this room", &err);
	assert_hd_ok(hd_room_lock_get(&row, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 1);
	assert_string_equal(row.holder, a.holder);
	assert_int_equal(row.expires_at, a.expires_at);

	/* an expired lease belongs to nobody */
	assert_hd_ok(hd_room_lock_renew(fx->st, &a, 1, &err), &err);
	hd_sleep_us(5000);
	assert_hd_ok(
	    hd_room_lock_acquire(&b, fx->st, "dev", 60000, &err), &err);
	assert_string_not_equal(a.holder, b.holder);
	/* the old holder can neither extend nor drop its successor's lease */
	assert_hd_err(hd_room_lock_renew(fx->st, &a, 60000, &err), HD_ECONFLICT,
	    "the exchange lost its room lock", &err);
	assert_hd_ok(hd_room_lock_release(fx->st, &a, &err), &err);
	assert_hd_ok(hd_room_lock_get(&row, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 1);
	assert_string_equal(row.holder, b.holder);
	assert_hd_ok(hd_room_lock_release(fx->st, &b, &err), &err);
	assert_hd_ok(hd_room_lock_get(&row, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 0);

	/* rooms are independent */
	hd_fixture_team(fx, "ops", "lead", NULL);
	assert_hd_ok(
	    hd_room_lock_acquire(&a, fx->st, "dev", 60000, &err), &err);
	assert_hd_ok(
	    hd_room_lock_acquire(&b, fx->st, "ops", 60000, &err), &err);
	assert_hd_ok(hd_room_lock_release(fx->st, &a, &err), &err);
	assert_hd_ok(hd_room_lock_release(fx->st, &b, &err), &err);
}

/* ---- rows written by hand: any holder, anywhere ---- */

/* Put a holder row for dev's room as another process would have. */
static void
put_row(hd_fixture *fx, int64_t pid, int64_t start, const char *host,
    int64_t expires_at, int64_t run_pid, int64_t run_start)
{
	char path[1024], boot[40];
	sqlite3 *db;
	sqlite3_stmt *s;

	hd_boot_id(boot, sizeof(boot));
	snprintf(path, sizeof(path), "%s/huddle.db", fx->home);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_prepare_v2(db,
			     "INSERT OR REPLACE INTO room_locks(room_id, "
			     "holder, pid, expires_at, host, boot_id, start, "
			     "run_pid, run_start) VALUES ('team:dev', "
			     "'0123456789abcdef0123456789abcdef', ?, ?, ?, ?, "
			     "?, ?, ?)",
			     -1, &s, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(s, 1, pid);
	sqlite3_bind_int64(s, 2, expires_at);
	sqlite3_bind_text(s, 3, host, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, boot, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, start);
	if (run_pid > 0) {
		sqlite3_bind_int64(s, 6, run_pid);
		sqlite3_bind_int64(s, 7, run_start);
	}
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* A pid that named a process of ours, now reaped: gone. */
static pid_t
dead_pid(void)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return pid;
}

/* A process leading its own group, sleeping until killed. */
static pid_t
group_leader(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(pid, pid); /* either side may win; both mean the same */
	return pid;
}

static void
test_lock__who_is_taken_over_and_when(void **state)
{
	hd_fixture *fx = *state;
	hd_room_lock lk;
	hd_err err = HD_ERR_INIT;
	char host[256];
	int64_t far = hd_now_ms() + 600000, me = getpid(), until;
	int64_t my_start = hd_proc_start(me);
	pid_t leader;
	int status;

	if (strcmp(hd_store_backend_name(fx->st), "postgresql") == 0) {
		print_message("SQLite only: holder rows written by sqlite3\n");
		skip();
	}

	hd_fixture_team(fx, "dev", "manager", NULL);
	hd_host_name(host, sizeof(host));
	assert_true(my_start > 0);

	/* a live holder on this host: refused, whoever it is (this process
	 * included) */
	put_row(fx, me, my_start, host, far, 0, 0);
	assert_hd_err(hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err),
	    HD_ECONFLICT, "an exchange is already running for this room", &err);

	/* the same pid with another start time: the number was reused, the
	 * holder is gone; taken at once */
	put_row(fx, me, my_start + 1, host, far, 0, 0);
	assert_hd_ok(
	    hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err), &err);
	assert_hd_ok(hd_room_lock_release(fx->st, &lk, &err), &err);

	/* a dead pid here: taken at once, and the process group its turn
	 * was running is killed first */
	leader = group_leader();
	put_row(fx, dead_pid(), 12345, host, far, leader,
	    hd_proc_start(leader));
	assert_hd_ok(
	    hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err), &err);
	assert_int_equal(waitpid(leader, &status, 0), leader);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_hd_ok(hd_room_lock_release(fx->st, &lk, &err), &err);

	/* a recorded group whose leader's pid now names another process (its
	 * start time differs) is left alone */
	leader = group_leader();
	put_row(fx, dead_pid(), 12345, host, far, leader,
	    hd_proc_start(leader) + 1);
	assert_hd_ok(
	    hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err), &err);
	hd_sleep_us(50000);
	assert_int_equal(waitpid(leader, &status, WNOHANG), 0);
	assert_int_equal(kill(leader, SIGKILL), 0);
	assert_int_equal(waitpid(leader, &status, 0), leader);
	assert_hd_ok(hd_room_lock_release(fx->st, &lk, &err), &err);

	/* a dead pid on another host cannot be judged from here: its lease
	 * decides, and its group is not ours to kill */
	until = hd_now_ms() + 1500;
	leader = group_leader();
	put_row(fx, dead_pid(), 12345, "elsewhere.invalid", until, leader,
	    hd_proc_start(leader));
	if (hd_now_ms() < until)
		assert_hd_err(
		    hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err),
		    HD_ECONFLICT,
		    "an exchange is already running for this room", &err);
	while (hd_now_ms() <= until)
		hd_sleep_us(20000);
	assert_hd_ok(
	    hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err), &err);
	assert_int_equal(waitpid(leader, &status, WNOHANG), 0);
	assert_int_equal(kill(leader, SIGKILL), 0);
	assert_int_equal(waitpid(leader, &status, 0), leader);
	assert_hd_ok(hd_room_lock_release(fx->st, &lk, &err), &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_lock__lease_refuses_renews_and_is_taken_over),
	    hd_fixture_test(test_lock__who_is_taken_over_and_when),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
