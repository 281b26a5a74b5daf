/*
 * test-pg-outage.c -- the store on PostgreSQL while its database cannot
 * be reached (src/store/watch_pg.c (4), (5); pg.c (6)), with HUDDLE_TEST_PG
 * set (a fresh database per test, testutil.c); without it the test skips,
 * saying so. The outage is the database refusing connections (ALTER
 * DATABASE ... ALLOW_CONNECTIONS false) and its sessions terminated, from
 * an admin connection: the cluster is shared with the tests running
 * beside this one, so it is never stopped here (tests/e2e/test-pg-nodes.sh
 * stops a cluster of its own).
 *  - a change wait lasts its timeout and then says the database is
 *    unreachable (it does not fail at once: callers loop on the wait, and
 *    would spin on connection attempts), and so does a read;
 *  - once the database takes connections again, the next wait wakes at
 *    once (whatever was missed must be read again), a commit of another
 *    connection wakes it again, and writes succeed on the same handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include <huddle/util.h>

#include "testutil.h"

#define WAIT_MS 300

static int
pg_setup(void **state)
{
	const char *v = getenv("HUDDLE_TEST_PG");

	*state = NULL;
	if (v == NULL || *v == '\0')
		return 0;
	return hd_fixture_setup(state);
}

static int
pg_teardown(void **state)
{
	return hd_fixture_teardown(state);
}

/* admin_exec: SQL on the cluster's maintenance database; fails the test,
 * with the server's message, when it fails. */
static void
admin_exec(PGconn *admin, const char *sql)
{
	PGresult *res = PQexec(admin, sql);
	ExecStatusType s = PQresultStatus(res);

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(admin));
	PQclear(res);
}

/* take the fixture's database away (accepting: 0) or give it back (1) */
static void
set_reachable(PGconn *admin, const char *db, int yes)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
	    "ALTER DATABASE %s WITH ALLOW_CONNECTIONS %s", db,
	    yes ? "true" : "false");
	admin_exec(admin, sql);
	if (yes)
		return;
	/* every session on it ends before this returns (PostgreSQL 14+:
	 * pg_terminate_backend waits up to its timeout) */
	snprintf(sql, sizeof(sql),
	    "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
	    "WHERE datname = '%s' AND pid <> pg_backend_pid()",
	    db);
	admin_exec(admin, sql);
}

static void
test_pg_outage__wait_lasts_then_recovers(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_store *other = NULL;
	PGconn *admin;
	uint64_t cur = 0;
	char *v = NULL;
	int64_t t0, took;
	int rc;

	if (fx == NULL) {
		print_message("HUDDLE_TEST_PG is unset: no PostgreSQL to test "
			      "against\n");
		skip();
	}
	admin = PQconnectdb(getenv("HUDDLE_TEST_PG"));
	assert_int_equal(PQstatus(admin), CONNECTION_OK);
	assert_hd_ok(hd_store_kv_put(fx->st, "k", "1", &err), &err);
	/* the cursor opens the listening connection */
	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);

	set_reachable(admin, fx->pgdb, 0);
	t0 = hd_mono_us();
	rc = hd_store_wait_change(fx->st, &cur, WAIT_MS, &err);
	took = hd_mono_us() - t0;
	assert_int_equal(rc, HD_EBUSY);
	assert_non_null(strstr(err.msg, "database unreachable: "));
	assert_non_null(strstr(err.msg, fx->pgdb));
	/* not at once: the whole timeout (a lower bound, never a speed) */
	assert_true(took >= (int64_t)WAIT_MS * 1000);
	hd_err_clear(&err);
	assert_true(hd_store_kv_get(&v, fx->st, "k", &err) < 0);
	assert_null(v);
	assert_non_null(strstr(err.msg, "database unreachable: "));

	set_reachable(admin, fx->pgdb, 1);
	/* the listener reopened is a wake-up: what was missed is read again */
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 10000, &err), 1);
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "k", &err), &err);
	assert_string_equal(v, "1");
	free(v);
	/* and it listens again: another connection's commit wakes it */
	assert_hd_ok(hd_store_open(&other, fx->home, &err), &err);
	assert_hd_ok(hd_store_kv_put(other, "k", "2", &err), &err);
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 10000, &err), 1);
	assert_hd_ok(hd_store_kv_put(fx->st, "k", "3", &err), &err);
	hd_store_close(other);
	PQfinish(admin);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_pg_outage__wait_lasts_then_recovers, pg_setup,
		    pg_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
