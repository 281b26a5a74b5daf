/*
 * test-rows.c -- rows into structs (src/store/rows.c): every row in order
 * into a growing array past its first growth, a skipped row, the first
 * row alone, and the two failures (a fill out of memory, a step the
 * database refuses) keeping nothing and leaving every element disposed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "store/store.h"
#include "testutil.h"

/* An element holding memory of its own, as a domain row does. */
typedef struct row {
	int64_t k;
	char *name;
} row;

static int disposed; /* elements disposed since the test began */

/* ctx: the k whose fill runs out of memory (0: none). Rows whose name is
 * NULL are skipped. */
static int
row_fill(void *item, hd_stmt *s, void *ctx)
{
	row *r = item;
	const int64_t *fail_at = ctx;

	memset(r, 0, sizeof(*r));
	if (hd_stmt_is_null(s, 1))
		return 1;
	r->k = hd_stmt_int(s, 0);
	r->name = hd_store_col_dup(s, 1);
	if (fail_at != NULL && r->k == *fail_at)
		return -1; /* as a failed strdup: what it set is disposed */
	return r->name == NULL ? -1 : 0;
}

static void
row_dispose(void *item)
{
	row *r = item;

	free(r->name);
	disposed++;
}

/* Twenty rows k = 1..20 named "rK", and k = 21 with no name. */
static void
rows_table(hd_fixture *fx)
{
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_store_exec(fx->st,
	    "CREATE TEMP TABLE r (k INTEGER PRIMARY KEY, name TEXT);"
	    " WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n"
	    " WHERE k < 20) INSERT INTO r SELECT k, 'r' || k FROM n;"
	    " INSERT INTO r VALUES (21, NULL)", &err), &err);
}

/* The store runs on PostgreSQL (HUDDLE_TEST_PG). */
static int
is_pg(hd_fixture *fx)
{
	return strcmp(hd_store_backend_name(fx->st), "postgresql") == 0;
}

/* An integer overflow in the database's words: SQLite's "integer
 * overflow", PostgreSQL's "bigint out of range". */
static int
overflow_msg(const char *msg)
{
	return strstr(msg, "overflow") != NULL ||
	    strstr(msg, "out of range") != NULL;
}

static void
test_rows__every_row_in_order_and_a_skipped_one_kept_nowhere(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	void *items = (void *)1;
	size_t n = 99, i;
	row *v;
	char want[32];

	rows_table(fx);
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k >= ?1 ORDER BY k", HD_INT(1)),
	    &err);
	assert_hd_ok(hd_store_rows(fx->st, s, sizeof(row), row_fill,
	    row_dispose, NULL, &items, &n, &err), &err);
	assert_int_equal(n, 20); /* row 21 skipped; the array grew twice */
	v = items;
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "r%zu", i + 1);
		assert_int_equal(v[i].k, (int64_t)i + 1);
		assert_string_equal(v[i].name, want);
	}
	disposed = 0;
	hd_store_rows_free(items, n, sizeof(row), row_dispose);
	assert_int_equal(disposed, 20);
	hd_store_rows_free(NULL, 0, sizeof(row), row_dispose);
	assert_int_equal(disposed, 20);

	/* no row: no array */
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k > ?1", HD_INT(100)), &err);
	assert_hd_ok(hd_store_rows(fx->st, s, sizeof(row), row_fill,
	    row_dispose, NULL, &items, &n, &err), &err);
	assert_null(items);
	assert_int_equal(n, 0);

	/* only a skipped row: no array either (nothing to free) */
	items = (void *)1;
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k = ?1", HD_INT(21)), &err);
	assert_hd_ok(hd_store_rows(fx->st, s, sizeof(row), row_fill,
	    row_dispose, NULL, &items, &n, &err), &err);
	assert_null(items);
	assert_int_equal(n, 0);
}

static void
test_rows__a_failing_fill_or_step_keeps_nothing_and_disposes_all(
    void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	void *items = (void *)1;
	size_t n = 99;
	int64_t fail_at = 12, count = 0;

	rows_table(fx);
	disposed = 0;
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k >= ?1 ORDER BY k", HD_INT(1)),
	    &err);
	assert_hd_err(hd_store_rows(fx->st, s, sizeof(row), row_fill,
	    row_dispose, &fail_at, &items, &n, &err), HD_ENOMEM,
	    "out of memory", &err);
	assert_null(items);
	assert_int_equal(n, 0);
	assert_int_equal(disposed, 12); /* the eleven kept and the failing one */

	/* the database refuses the fifth row (an integer overflow; SQLite
	 * steps row by row, PostgreSQL fails the statement before the
	 * first row) */
	hd_err_clear(&err);
	disposed = 0;
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, CASE WHEN k = ?1 THEN"
	    " CAST(abs(-9223372036854775807 - 1) AS TEXT) ELSE name END"
	    " FROM r ORDER BY k",
	    HD_INT(5)), &err);
	assert_int_equal(hd_store_rows(fx->st, s, sizeof(row), row_fill,
	    row_dispose, NULL, &items, &n, &err), HD_ERR);
	assert_true(overflow_msg(err.msg));
	assert_null(items);
	assert_int_equal(n, 0);
	assert_int_equal(disposed, is_pg(fx) ? 0 : 4);

	/* both statements were reset: the table takes a write at once */
	hd_err_clear(&err);
	assert_hd_ok(hd_store_run(fx->st, &err, "DELETE FROM r WHERE k > ?1",
	    HD_INT(10)), &err);
	assert_int_equal(hd_store_get_int(fx->st, &count, &err,
	    "SELECT COUNT(*) FROM r WHERE k > ?1", HD_INT(0)), 1);
	assert_int_equal(count, 10);
}

static void
test_rows__the_first_row_alone(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	row r = {-1, NULL};
	int64_t fail_at = 7;

	rows_table(fx);
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k >= ?1 ORDER BY k", HD_INT(3)),
	    &err);
	assert_int_equal(hd_store_row(fx->st, s, &r, row_fill, row_dispose,
	    NULL, &err), 1);
	assert_int_equal(r.k, 3);
	assert_string_equal(r.name, "r3");
	row_dispose(&r);

	/* none: untouched */
	r.k = -1;
	r.name = NULL;
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k = ?1", HD_INT(404)), &err);
	assert_int_equal(hd_store_row(fx->st, s, &r, row_fill, row_dispose,
	    NULL, &err), 0);
	assert_int_equal(r.k, -1);
	assert_null(r.name);

	/* a failing fill: disposed, out of memory */
	disposed = 0;
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, name FROM r WHERE k = ?1", HD_INT(7)), &err);
	assert_hd_err(hd_store_row(fx->st, s, &r, row_fill, row_dispose,
	    &fail_at, &err), HD_ENOMEM, "out of memory", &err);
	assert_int_equal(disposed, 1);

	/* a refused step: the database's error */
	hd_err_clear(&err);
	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT k, abs(-9223372036854775807 - 1) FROM r WHERE k = ?1",
	    HD_INT(1)), &err);
	assert_int_equal(hd_store_row(fx->st, s, &r, row_fill, row_dispose,
	    NULL, &err), HD_ERR);
	assert_true(overflow_msg(err.msg));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_rows__every_row_in_order_and_a_skipped_one_kept_nowhere,
		    hd_fixture_setup, hd_fixture_teardown),
		cmocka_unit_test_setup_teardown(
		    test_rows__a_failing_fill_or_step_keeps_nothing_and_disposes_all,
		    hd_fixture_setup, hd_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rows__the_first_row_alone,
		    hd_fixture_setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
