/*
 * test-pg.c -- the store on PostgreSQL (src/store/pg.c, watch_pg.c): the
 * SQL translator and the URL masking (always), and with HUDDLE_TEST_PG
 * set (a throwaway cluster's maintenance database, see testutil.c) the
 * statement interface on a fresh database per test: every column type,
 * errors, transactions, savepoints, the data version, serialized writers
 * on two connections, a busy budget spent waiting on another node's
 * writer, the change watch across connections, refusing a
 * newer schema and an unreachable server. Without HUDDLE_TEST_PG those
 * tests skip, saying so.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include <huddle/util.h>

#include "store/pg.h"
#include "store/store.h"
#include "testutil.h"

static int
have_pg(void)
{
	const char *v = getenv("HUDDLE_TEST_PG");

	return v != NULL && *v != '\0';
}

#define NEED_PG()                                                      \
	do {                                                           \
		if (!have_pg()) {                                      \
			print_message("HUDDLE_TEST_PG is unset: no "   \
				      "PostgreSQL to test against\n"); \
			skip();                                        \
		}                                                      \
	} while (0)

static int
pg_setup(void **state)
{
	*state = NULL;
	if (!have_pg())
		return 0;
	return hd_fixture_setup(state);
}

static int
pg_teardown(void **state)
{
	return hd_fixture_teardown(state);
}

/* ---- the translator: no server needed ---- */

static void
check_tr(const char *sql, const char *want, int want_np, int want_ret)
{
	static const char *const tables[] = { "events", "tasks" };
	static const char *const keys[] = { "seq", "id" };
	int np = -1, ret = -1;
	char *got = hd_pg_translate(sql, tables, keys, 2, &np, &ret);

	assert_non_null(got);
	if (strcmp(got, want) != 0)
		fail_msg("translating %s\n got: %s\nwant: %s", sql, got, want);
	assert_int_equal(np, want_np);
	assert_int_equal(ret, want_ret);
	free(got);
}

static void
test_pg__translates_placeholders(void **state)
{
	(void)state;
	check_tr("SELECT a FROM t WHERE b = ? AND c = ?",
	    "SELECT a FROM t WHERE b = $1 AND c = $2", 2, 0);
	check_tr("UPDATE t SET a = ?2 WHERE id = ?1 AND x = ?2",
	    "UPDATE t SET a = $2 WHERE id = $1 AND x = $2", 2, 0);
	/* a bare ? after ?N takes the next number, as SQLite numbers it */
	check_tr("SELECT ?3, ?", "SELECT $3, $4", 4, 0);
	/* nothing inside a string or a quoted name is touched */
	check_tr("SELECT 'a?b', \"q?\" FROM t WHERE x = ?",
	    "SELECT 'a?b', \"q?\" FROM t WHERE x = $1", 1, 0);
	check_tr("SELECT 'it''s ?' WHERE x = ?",
	    "SELECT 'it''s ?' WHERE x = $1", 1, 0);
}

static void
test_pg__translates_dialect(void **state)
{
	(void)state;
	check_tr("INSERT OR IGNORE INTO deps(a, b) VALUES (?, ?)",
	    "INSERT INTO deps(a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING", 2,
	    0);
	check_tr("INSERT OR IGNORE INTO x(a) VALUES (?) RETURNING a",
	    "INSERT INTO x(a) VALUES ($1) ON CONFLICT DO NOTHING RETURNING a",
	    1, 0);
	check_tr("SELECT instr(a, ?) FROM t ORDER BY created_at, rowid",
	    "SELECT strpos(a, $1) FROM t ORDER BY created_at, ctid", 1, 0);
	/* null-safe comparison with a value */
	check_tr("SELECT 1 WHERE owner IS ?1 AND b IS NOT ? AND c IS NULL",
	    "SELECT 1 WHERE owner IS NOT DISTINCT FROM $1 AND b IS DISTINCT "
	    "FROM $2 AND c IS NULL",
	    2, 0);
	/* SQLite's planner hint goes */
	check_tr("SELECT 1 FROM agents INDEXED BY agents_team WHERE a = ?",
	    "SELECT 1 FROM agents WHERE a = $1", 1, 0);
	/* whole words only */
	check_tr("SELECT instruction, rowids FROM t",
	    "SELECT instruction, rowids FROM t", 0, 0);
	/* last_id: RETURNING the generated key, unless the SQL has one */
	check_tr("INSERT INTO events(id, ts) VALUES (?, ?);",
	    "INSERT INTO events(id, ts) VALUES ($1, $2) RETURNING seq", 2, 1);
	check_tr("INSERT OR IGNORE INTO tasks (a) VALUES (?)",
	    "INSERT INTO tasks (a) VALUES ($1) ON CONFLICT DO NOTHING "
	    "RETURNING id",
	    1, 1);
	check_tr("INSERT INTO tasks(a) VALUES (1) RETURNING a",
	    "INSERT INTO tasks(a) VALUES (1) RETURNING a", 0, 0);
	check_tr("INSERT INTO kv(key) VALUES (?)",
	    "INSERT INTO kv(key) VALUES ($1)", 1, 0);
	check_tr("INSERT INTO events_x(a) VALUES (?)",
	    "INSERT INTO events_x(a) VALUES ($1)", 1, 0);
}

static void
test_pg__masks_passwords(void **state)
{
	char *m;

	(void)state;
	m = hd_store_mask_url("postgresql://bob:s3cret@db.example/huddle");
	assert_string_equal(m, "postgresql://bob:***@db.example/huddle");
	free(m);
	m = hd_store_mask_url("postgres:///h?host=/run/pg&password=hunter2&x=1");
	assert_string_equal(m, "postgres:///h?host=/run/pg&password=***&x=1");
	free(m);
	m = hd_store_mask_url("postgresql://bob@db/huddle");
	assert_string_equal(m, "postgresql://bob@db/huddle");
	free(m);
	/* a password holding '@', and one of a single character */
	m = hd_store_mask_url("postgresql://bob:p@ss@db/huddle?password=x");
	assert_string_equal(m, "postgresql://bob:***@db/huddle?password=***");
	free(m);
}

static void
test_pg__refuses_other_urls(void **state)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	char *old = getenv("HUDDLE_STORE") != NULL
			? strdup(getenv("HUDDLE_STORE"))
			: NULL;

	(void)state;
	setenv("HUDDLE_STORE", "mysql://db/huddle", 1);
	assert_int_equal(hd_store_open(&st, "/tmp", &err), HD_EINVAL);
	assert_null(st);
	assert_non_null(strstr(err.msg, "HUDDLE_STORE: not a postgres:// URL: "
					"mysql://db/huddle"));
	if (old != NULL)
		setenv("HUDDLE_STORE", old, 1);
	else
		unsetenv("HUDDLE_STORE");
	free(old);
}

/* ---- on a server ---- */

static void
test_pg__is_postgresql(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;

	NEED_PG();
	fx = *state;
	assert_string_equal(hd_store_backend_name(fx->st), "postgresql");
	assert_non_null(strstr(hd_store_path(fx->st), fx->pgdb));
	assert_int_equal(hd_store_file_version(fx->st, &err),
	    hd_store_pg_nmigrations);
	assert_int_equal(hd_store_integrity(fx->st, &err), HD_EREFUSED);
	assert_non_null(strstr(err.msg, "pg_amcheck"));
	assert_int_equal(
	    hd_store_backup(fx->st, "/tmp/never.db", &err), HD_EREFUSED);
	assert_non_null(strstr(err.msg, "pg_dump"));
}

static int
mk_types(hd_store *st, void *p, hd_err *err)
{
	(void)p;
	return hd_store_exec(st,
	    "CREATE TABLE types (k TEXT PRIMARY KEY, i BIGINT, s TEXT,"
	    " b BYTEA, d DOUBLE PRECISION)",
	    err);
}

static void
test_pg__binds_and_reads_every_type(void **state)
{
	static const unsigned char blob[] = { 'a', 0, 'b', 0, 0xff, 0 };
	static const char *text = "it's \"quoted\" \\ and UTF-8: żółw ✓";
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	const void *p;
	size_t n;

	NEED_PG();
	fx = *state;
	assert_hd_ok(hd_store_write(fx->st, mk_types, NULL, &err), &err);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO types(k, i, s, b, d) VALUES (?, ?, ?, ?, "
			 "CAST(? AS DOUBLE PRECISION))",
			 HD_TEXT("max"), HD_INT(INT64_MAX), HD_TEXT(text),
			 HD_BLOB(blob, sizeof(blob)), HD_TEXT("2.5")),
	    &err);
	assert_int_equal(hd_store_changes(fx->st), 1);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO types(k, i, s, b) VALUES (?1, ?2, ?3, ?4)",
			 HD_TEXT("min"), HD_INT(INT64_MIN), HD_TEXTN("abcdef", 3),
			 HD_BLOB("", 0)),
	    &err);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO types(k, i, s, b) VALUES (?, ?, ?, ?)",
			 HD_TEXT("null"), HD_NULL, HD_TEXT(NULL),
			 HD_BLOB(NULL, 0)),
	    &err);

	assert_hd_ok(hd_store_query(fx->st, &s, &err,
			 "SELECT i, s, b, d, i > 0, k FROM types WHERE k IN "
			 "(?, ?, ?) ORDER BY k",
			 HD_TEXT("max"), HD_TEXT("min"), HD_TEXT("null")),
	    &err);
	assert_int_equal(hd_stmt_step(s), HD_ROW); /* max */
	assert_int_equal(hd_stmt_int(s, 0), INT64_MAX);
	assert_string_equal(hd_stmt_text(s, 1), text);
	p = hd_stmt_blob(s, 2, &n);
	assert_int_equal(n, sizeof(blob));
	assert_memory_equal(p, blob, sizeof(blob));
	assert_true(hd_stmt_double(s, 3) == 2.5);
	assert_int_equal(hd_stmt_int(s, 4), 1); /* a boolean is 1 or 0 */
	assert_false(hd_stmt_is_null(s, 0));
	assert_int_equal(hd_stmt_step(s), HD_ROW); /* min */
	assert_int_equal(hd_stmt_int(s, 0), INT64_MIN);
	assert_string_equal(hd_stmt_text(s, 1), "abc");
	p = hd_stmt_blob(s, 2, &n);
	assert_int_equal(n, 0);
	assert_false(hd_stmt_is_null(s, 2));
	assert_true(hd_stmt_is_null(s, 3));
	assert_int_equal(hd_stmt_int(s, 4), 0);
	assert_int_equal(hd_stmt_step(s), HD_ROW); /* null */
	assert_true(hd_stmt_is_null(s, 0));
	assert_int_equal(hd_stmt_int(s, 0), 0);
	assert_null(hd_stmt_text(s, 1));
	assert_null(hd_stmt_blob(s, 2, &n));
	assert_true(hd_stmt_is_null(s, 4));
	assert_string_equal(hd_stmt_text(s, 5), "null");
	assert_int_equal(hd_stmt_step(s), HD_DONE);
	hd_store_reset(s);
}

static int
untyped(hd_store *st, void *p, hd_err *err)
{
	int64_t n = 0;
	int rc;

	(void)p;
	if ((rc = hd_store_get_int(st, &n, err,
		 "SELECT COUNT(*) FROM events WHERE ?1 IS NULL OR ?2 IS NULL",
		 HD_NULL, HD_INT(7))) < 0)
		return rc;
	assert_int_equal(n, 2);
	return hd_store_kv_put(st, "after", "1", err);
}

static void
test_pg__last_id_and_changes(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	int64_t first, n = 0;

	NEED_PG();
	fx = *state;
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO events(id, ts, kind) VALUES (?, ?, ?)",
			 HD_TEXT("e1"), HD_INT(1), HD_TEXT("k")),
	    &err);
	first = hd_store_last_id(fx->st);
	assert_true(first >= 1);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT INTO events(id, ts, kind) VALUES (?, ?, ?)",
			 HD_TEXT("e2"), HD_INT(2), HD_TEXT("k")),
	    &err);
	assert_int_equal(hd_store_last_id(fx->st), first + 1);
	assert_int_equal(hd_store_get_int(fx->st, &n, &err,
			     "SELECT seq FROM events WHERE id = ?",
			     HD_TEXT("e2")),
	    1);
	assert_int_equal(n, first + 1);
	/* a statement with RETURNING of its own still returns its rows */
	assert_int_equal(hd_store_get_int(fx->st, &n, &err,
			     "UPDATE events SET ts = ts + 10 WHERE kind = ? "
			     "RETURNING ts",
			     HD_TEXT("k")),
	    1);
	assert_true(n == 11 || n == 12);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "UPDATE events SET ts = 0 WHERE kind = ?",
			 HD_TEXT("k")),
	    &err);
	assert_int_equal(hd_store_changes(fx->st), 2);
	/* a parameter only `IS NULL` looks at is typed text, also inside a
	 * transaction (a failed prepare must not abort it) */
	assert_hd_ok(hd_store_write(fx->st, untyped, NULL, &err), &err);
	/* INSERT OR IGNORE: nothing, no error, no new id */
	assert_hd_ok(hd_store_kv_put(fx->st, "k", "v", &err), &err);
	assert_hd_ok(hd_store_run(fx->st, &err,
			 "INSERT OR IGNORE INTO kv(key, value, updated_at) "
			 "VALUES (?, 'w', 0)",
			 HD_TEXT("k")),
	    &err);
	assert_int_equal(hd_store_changes(fx->st), 0);
}

static int
insert_twice(hd_store *st, void *p, hd_err *err)
{
	int rc;

	(void)p;
	if ((rc = hd_store_run(st, err,
		 "INSERT INTO kv(key, value, updated_at) VALUES (?, 'a', 0)",
		 HD_TEXT("dup"))) < 0)
		return rc;
	return hd_store_run(st, err,
	    "INSERT INTO kv(key, value, updated_at) VALUES (?, 'b', 0)",
	    HD_TEXT("dup"));
}

static void
test_pg__unique_violation_is_eexists_and_rolls_back(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	char *v = NULL;

	NEED_PG();
	fx = *state;
	assert_int_equal(
	    hd_store_write(fx->st, insert_twice, NULL, &err), HD_EEXISTS);
	assert_non_null(strstr(err.msg, "duplicate key"));
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "dup", &err), &err);
	assert_null(v); /* the first insert went with the transaction */
	/* and the connection works on */
	assert_hd_ok(hd_store_kv_put(fx->st, "dup", "c", &err), &err);
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "dup", &err), &err);
	assert_string_equal(v, "c");
	free(v);
}

static int
put_then_fail(hd_store *st, void *p, hd_err *err)
{
	int rc;

	if ((rc = hd_store_kv_put(st, "gone", "x", err)) < 0)
		return rc;
	if (p != NULL) { /* marked failed, body returns 0 */
		hd_err f = HD_ERR_INIT;

		hd_err_set(&f, HD_ENOTFOUND, "the event could not be logged");
		hd_store_fail_txn(st, &f);
		return 0;
	}
	return hd_err_set(err, HD_EINVAL, "the body refused");
}

static void
test_pg__failed_body_and_fail_txn_roll_back(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	char *v = NULL;
	int one = 1;

	NEED_PG();
	fx = *state;
	assert_int_equal(
	    hd_store_write(fx->st, put_then_fail, NULL, &err), HD_EINVAL);
	assert_string_equal(err.msg, "the body refused");
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "gone", &err), &err);
	assert_null(v);
	assert_int_equal(
	    hd_store_write(fx->st, put_then_fail, &one, &err), HD_ENOTFOUND);
	assert_string_equal(err.msg, "the event could not be logged");
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "gone", &err), &err);
	assert_null(v);
}

static int
savepoints(hd_store *st, void *p, hd_err *err)
{
	hd_err f = HD_ERR_INIT;
	int rc;

	(void)p;
	if ((rc = hd_store_kv_put(st, "outer", "1", err)) < 0 ||
	    (rc = hd_store_savepoint(st, err)) < 0 ||
	    (rc = hd_store_kv_put(st, "dropped", "1", err)) < 0)
		return rc;
	hd_err_set(&f, HD_ERR, "inside the savepoint");
	hd_store_fail_txn(st, &f);
	if ((rc = hd_store_savepoint_end(st, 0, err)) < 0)
		return rc;
	assert_int_equal(hd_store_txn_failure(st, NULL), 0);
	if ((rc = hd_store_savepoint(st, err)) < 0 ||
	    (rc = hd_store_kv_put(st, "kept", "1", err)) < 0 ||
	    (rc = hd_store_savepoint_end(st, 1, err)) < 0)
		return rc;
	/* a failed statement rolled back to a savepoint leaves the
	 * transaction usable, as on SQLite */
	if ((rc = hd_store_savepoint(st, err)) < 0)
		return rc;
	assert_int_equal(hd_store_run(st, err,
			     "INSERT INTO kv(key, value, updated_at) VALUES "
			     "(?, 'x', 0)",
			     HD_TEXT("kept")),
	    HD_EEXISTS);
	return hd_store_savepoint_end(st, 0, err);
}

static void
test_pg__savepoints(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	char *v = NULL;

	NEED_PG();
	fx = *state;
	assert_hd_ok(hd_store_write(fx->st, savepoints, NULL, &err), &err);
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "outer", &err), &err);
	assert_non_null(v);
	free(v);
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "kept", &err), &err);
	assert_non_null(v);
	free(v);
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "dropped", &err), &err);
	assert_null(v);
}

static hd_store *
open_second(hd_fixture *fx)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_store_open(&st, fx->home, &err), &err);
	return st;
}

static int
read_version(hd_store *st, void *p, hd_err *err)
{
	(void)err;
	return hd_store_data_version(st, p);
}

static void
test_pg__data_version_moves_with_every_commit(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	hd_store *other;
	uint32_t a = 0, b = 0, c = 0;

	NEED_PG();
	fx = *state;
	other = open_second(fx);
	assert_hd_ok(hd_store_read(fx->st, read_version, &a, &err), &err);
	assert_hd_ok(hd_store_read(fx->st, read_version, &b, &err), &err);
	assert_int_equal(a, b); /* nothing written in between */
	assert_hd_ok(hd_store_kv_put(other, "x", "1", &err), &err);
	assert_hd_ok(hd_store_read(fx->st, read_version, &c, &err), &err);
	assert_int_not_equal(b, c);
	assert_hd_ok(hd_store_kv_put(fx->st, "x", "2", &err), &err);
	assert_hd_ok(hd_store_data_version(fx->st, &a), &err);
	assert_int_not_equal(a, c);
	hd_store_close(other);
}

#define WRITERS_N 40

struct writer {
	hd_store *st;
	int failures;
};

static int
increment(hd_store *st, void *p, hd_err *err)
{
	char *v = NULL, buf[32];
	int rc;

	(void)p;
	if ((rc = hd_store_kv_get(&v, st, "counter", err)) < 0)
		return rc;
	snprintf(buf, sizeof(buf), "%ld", (v != NULL ? atol(v) : 0) + 1);
	free(v);
	hd_sleep_us(200); /* widen the window a lost update would need */
	return hd_store_kv_put(st, "counter", buf, err);
}

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	hd_err err = HD_ERR_INIT;
	int i;

	for (i = 0; i < WRITERS_N; i++)
		if (hd_store_write(w->st, increment, NULL, &err) < 0)
			w->failures++;
	return NULL;
}

static void
test_pg__writers_are_serialized(void **state)
{
	hd_fixture *fx;
	struct writer w[2];
	pthread_t t[2];
	hd_err err = HD_ERR_INIT;
	char *v = NULL;
	int i;

	NEED_PG();
	fx = *state;
	for (i = 0; i < 2; i++) {
		w[i].st = open_second(fx);
		w[i].failures = 0;
		hd_store_set_busy_budget(w[i].st, 10000);
		assert_int_equal(
		    pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].failures, 0);
		hd_store_close(w[i].st);
	}
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "counter", &err), &err);
	assert_non_null(v);
	assert_int_equal(atol(v), 2 * WRITERS_N); /* no update lost */
	free(v);
}

static void
test_pg__watch_wakes_on_other_commits_only(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	hd_store *other;
	uint64_t cur = 0;
	int64_t t0;

	NEED_PG();
	fx = *state;
	other = open_second(fx);
	assert_hd_ok(hd_store_change_cursor(fx->st, &cur, &err), &err);
	/* its own commit does not count */
	assert_hd_ok(hd_store_kv_put(fx->st, "mine", "1", &err), &err);
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 200, &err), 0);
	/* another connection's does, at once */
	assert_hd_ok(hd_store_kv_put(other, "theirs", "1", &err), &err);
	t0 = hd_mono_us();
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 5000, &err), 1);
	assert_true(hd_mono_us() - t0 < 1000000);
	/* seen: the next wait waits again */
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 100, &err), 0);
	/* a write outside any transaction wakes a waiter too */
	assert_hd_ok(hd_store_run(other, &err,
			 "UPDATE kv SET value = 'x' WHERE key = ?",
			 HD_TEXT("theirs")),
	    &err);
	assert_int_equal(hd_store_wait_change(fx->st, &cur, 5000, &err), 1);
	hd_store_close(other);
}

static int
put_busy(hd_store *st, void *p, hd_err *err)
{
	(void)p;
	return hd_store_kv_put(st, "busy", "1", err);
}

/* A writer holding the writers' lock elsewhere (any connection, any
 * node): the write waits out the busy budget and says so. */
static void
test_pg__busy_writer_elsewhere_exhausts_the_budget(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	PGconn *c;
	PGresult *res;
	int64_t t0, ms;

	NEED_PG();
	fx = *state;
	c = PQconnectdb(getenv("HUDDLE_STORE"));
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	res = PQexec(c, "BEGIN; SELECT pg_advisory_xact_lock(1215652964)");
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	PQclear(res);
	hd_store_set_busy_budget(fx->st, 300);
	t0 = hd_mono_us();
	assert_int_equal(
	    hd_store_write(fx->st, put_busy, NULL, &err), HD_EBUSY);
	ms = (hd_mono_us() - t0) / 1000;
	assert_string_equal(err.msg, "database is busy: gave up after 300 ms");
	assert_true(ms >= 250 && ms < 2000);
	PQclear(PQexec(c, "ROLLBACK"));
	PQfinish(c);
	assert_hd_ok(hd_store_write(fx->st, put_busy, NULL, &err), &err);
}

static void
test_pg__newer_schema_is_refused(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	hd_store *st = NULL;

	NEED_PG();
	fx = *state;
	assert_hd_ok(hd_store_exec(fx->st,
			 "UPDATE huddle_schema SET version = version + 1", &err),
	    &err);
	assert_int_equal(hd_store_open(&st, fx->home, &err), HD_EREFUSED);
	assert_null(st);
	assert_non_null(strstr(err.msg, "upgrade huddle"));
	assert_non_null(strstr(err.msg, fx->pgdb));
}

static void
test_pg__unreachable_server_is_named(void **state)
{
	hd_fixture *fx;
	hd_err err = HD_ERR_INIT;
	hd_store *st = NULL;
	char *old;

	NEED_PG();
	fx = *state;
	old = strdup(getenv("HUDDLE_STORE"));
	setenv("HUDDLE_STORE",
	    "postgresql:///huddle?host=/nonexistent/huddle-test&user=x", 1);
	assert_true(hd_store_open(&st, fx->home, &err) < 0);
	assert_null(st);
	assert_non_null(strstr(err.msg,
	    "database unreachable: /nonexistent/huddle-test: "));
	/* and the SQLite store cannot join a PostgreSQL process */
	unsetenv("HUDDLE_STORE");
	assert_int_equal(hd_store_open(&st, fx->home, &err), HD_EREFUSED);
	assert_non_null(strstr(err.msg, "one backend per process"));
	setenv("HUDDLE_STORE", old, 1);
	free(old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pg__translates_placeholders),
		cmocka_unit_test(test_pg__translates_dialect),
		cmocka_unit_test(test_pg__masks_passwords),
		cmocka_unit_test(test_pg__refuses_other_urls),
#define T(f) cmocka_unit_test_setup_teardown(f, pg_setup, pg_teardown)
		T(test_pg__is_postgresql),
		T(test_pg__binds_and_reads_every_type),
		T(test_pg__last_id_and_changes),
		T(test_pg__unique_violation_is_eexists_and_rolls_back),
		T(test_pg__failed_body_and_fail_txn_roll_back),
		T(test_pg__savepoints),
		T(test_pg__data_version_moves_with_every_commit),
		T(test_pg__writers_are_serialized),
		T(test_pg__watch_wakes_on_other_commits_only),
		T(test_pg__busy_writer_elsewhere_exhausts_the_budget),
		T(test_pg__newer_schema_is_refused),
		T(test_pg__unreachable_server_is_named),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
