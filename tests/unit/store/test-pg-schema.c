/*
 * test-pg-schema.c -- the PostgreSQL schema (src/store/schema_pg.c) agrees
 * with the SQLite one (schema.c): as many migrations, and after all of
 * them every table has the same columns on both: the same names, each
 * of the type schema_pg.c spells SQLite's as (INTEGER bigint, TEXT text,
 * BLOB bytea, REAL double precision) and NOT NULL on both or neither,
 * and the same indexes; so a module's statement means the same whichever
 * backend runs it. Migration 22 (the room's counter) is checked on
 * PostgreSQL with posts made before it.
 *
 * The PostgreSQL half needs a server: HUDDLE_TEST_PG is a libpq URL to a
 * throwaway cluster's maintenance database (e.g.
 * postgresql:///postgres?host=/abs/sockdir&user=postgres). The test makes
 * a scratch database there, applies hd_store_pg_migrations in order, one
 * transaction each, and drops it at the end. Without HUDDLE_TEST_PG those
 * tests are skipped, saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include <huddle/buf.h>

#include "store/sqlite.h"
#include "testutil.h"

/* Where the schemas depart on purpose (schema_pg.c, migration 17): on
 * PostgreSQL memory_facts carries its search column where SQLite has the
 * FTS5 table memory_fts (a virtual table, so not in the SQLite list). */
static const char *const PG_ONLY_COLUMNS[] = {
    "memory_facts.fts tsvector", NULL};
/* ... and the GIN index that searches it */
static const char *const PG_ONLY_INDEXES[] = {
    "memory_facts.memory_facts_fts", NULL};

typedef struct pg_fixture {
	hd_fixture *fx; /* the SQLite side: a fresh home, fully migrated */
	PGconn *admin;	/* the maintenance database */
	PGconn *db;	/* the scratch database */
	char name[64];	/* the scratch database's name */
} pg_fixture;

static int
setup(void **state)
{
	pg_fixture *pf = calloc(1, sizeof(*pf));
	void *fx = NULL;

	if (pf == NULL || hd_fixture_setup_sqlite(&fx) != 0)
		return -1;
	pf->fx = fx;
	*state = pf;
	return 0;
}

static int
teardown(void **state)
{
	pg_fixture *pf = *state;
	char sql[128];
	PGresult *r;
	void *fx = pf->fx;

	if (pf->db != NULL)
		PQfinish(pf->db);
	if (pf->admin != NULL) {
		if (pf->name[0] != '\0') {
			snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s",
			    pf->name);
			r = PQexec(pf->admin, sql);
			if (PQresultStatus(r) != PGRES_COMMAND_OK)
				fprintf(stderr, "test-pg-schema: %s: %s", sql,
				    PQerrorMessage(pf->admin));
			PQclear(r);
		}
		PQfinish(pf->admin);
	}
	free(pf);
	return hd_fixture_teardown(&fx);
}

static void
pg_ok(PGconn *c, PGresult *r, const char *what)
{
	ExecStatusType s = PQresultStatus(r);

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", PQerrorMessage(c));
		PQclear(r);
		fail_msg("%s: %s", what, msg);
	}
}

static void
pg_run(PGconn *c, const char *sql, const char *what)
{
	PGresult *r = PQexec(c, sql);

	pg_ok(c, r, what);
	PQclear(r);
}

/* Connect to HUDDLE_TEST_PG and make the scratch database, or skip. */
static void
pg_scratch(pg_fixture *pf)
{
	const char *url = getenv("HUDDLE_TEST_PG");
	const char *keys[] = {"dbname", "dbname", NULL};
	const char *vals[] = {url, pf->name, NULL};
	char sql[128];

	if (url == NULL || url[0] == '\0') {
		fprintf(stderr,
		    "test-pg-schema: skipped: set HUDDLE_TEST_PG to a libpq URL"
		    " of a throwaway cluster's maintenance database, e.g."
		    " postgresql:///postgres?host=/abs/sockdir"
		    "&user=postgres\n");
		skip();
	}
	pf->admin = PQconnectdb(url);
	if (PQstatus(pf->admin) != CONNECTION_OK)
		fail_msg("HUDDLE_TEST_PG=%s: %s", url,
		    PQerrorMessage(pf->admin));
	snprintf(pf->name, sizeof(pf->name), "hd_schema_%ld_%ld",
	    (long)getpid(), (long)time(NULL));
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", pf->name);
	pg_run(pf->admin, sql, sql);
	/* the URL's parameters with dbname replaced: a later keyword wins */
	pf->db = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(pf->db) != CONNECTION_OK)
		fail_msg("scratch database %s: %s", pf->name,
		    PQerrorMessage(pf->db));
	pg_run(pf->db, "SET client_min_messages = warning", "client_min");
}

/* Migrations from..to (1-based, inclusive), each in its own
 * transaction, as the store applies them. */
static void
pg_migrate(pg_fixture *pf, int from, int to)
{
	char what[64];
	int v;

	for (v = from; v <= to; v++) {
		snprintf(what, sizeof(what), "PostgreSQL migration %d", v);
		pg_run(pf->db, "BEGIN", what);
		pg_run(pf->db, hd_store_pg_migrations[v - 1], what);
		pg_run(pf->db, "COMMIT", what);
	}
}

static void
test_pg_schema__as_many_migrations_as_sqlite(void **state)
{
	(void)state;
	assert_int_equal(hd_store_pg_nmigrations, hd_store_nmigrations);
}

/* The rows of a one-column SQLite query, one per line ("" when none). */
static char *
sqlite_list(pg_fixture *pf, const char *sql)
{
	sqlite3 *db = hd_store_db(pf->fx->st);
	sqlite3_stmt *s;
	hd_buf b = HD_BUF_INIT(0);
	char *out;
	int src;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	while ((src = sqlite3_step(s)) == SQLITE_ROW)
		hd_buf_printf(
		    &b, "%s\n", (const char *)sqlite3_column_text(s, 0));
	assert_int_equal(src, SQLITE_DONE);
	sqlite3_finalize(s);
	assert_int_equal(b.failed, 0);
	assert_non_null(out = strdup(hd_buf_cstr(&b)));
	free(b.ptr);
	return out;
}

/* The rows of a one-column PostgreSQL query, one per line, without the
 * departures in only (NULL-terminated), each of which must be there. */
static char *
pg_list(pg_fixture *pf, const char *sql, const char *const *only)
{
	PGresult *r = PQexec(pf->db, sql);
	hd_buf b = HD_BUF_INIT(0);
	int seen[8] = {0}; /* only has fewer than 8 entries */
	int i, j, skip_it;
	char *out;

	pg_ok(pf->db, r, sql);
	for (i = 0; i < PQntuples(r); i++) {
		const char *row = PQgetvalue(r, i, 0);

		skip_it = 0;
		for (j = 0; j < 8 && only[j] != NULL; j++)
			if (strcmp(row, only[j]) == 0)
				skip_it = seen[j] = 1;
		if (!skip_it)
			hd_buf_printf(&b, "%s\n", row);
	}
	PQclear(r);
	for (j = 0; j < 8 && only[j] != NULL; j++)
		if (!seen[j])
			fail_msg("PostgreSQL has no %s", only[j]);
	assert_int_equal(b.failed, 0);
	assert_non_null(out = strdup(hd_buf_cstr(&b)));
	free(b.ptr);
	return out;
}

/* The two lists, both sorted bytewise (SQLite's BINARY, PostgreSQL's
 * "C"), are the same; else the first line where they part, named. */
static void
assert_same(const char *what, char *pg, char *lite)
{
	assert_true(strlen(lite) > 0);
	if (strcmp(pg, lite) != 0) {
		size_t i = 0, line = 0;

		while (pg[i] != '\0' && pg[i] == lite[i])
			if (pg[i++] == '\n')
				line = i;
		fail_msg("the %s part at: PostgreSQL \"%.*s\", SQLite"
			 " \"%.*s\"",
		    what, (int)strcspn(pg + line, "\n"), pg + line,
		    (int)strcspn(lite + line, "\n"), lite + line);
	}
	free(pg);
	free(lite);
}

/* Every "table.column type[ not null]", its SQLite type as PostgreSQL
 * would name it (a key column is never NULL on PostgreSQL, so it counts
 * as NOT NULL on SQLite too), of the ordinary tables only (pragma
 * table_list): neither SQLite's own tables nor a virtual table
 * (memory_fts) nor its shadow tables count. */
static void
test_pg_schema__every_table_has_the_same_columns(void **state)
{
	pg_fixture *pf = *state;

	pg_scratch(pf);
	pg_migrate(pf, 1, hd_store_pg_nmigrations);
	assert_same("columns",
	    pg_list(pf,
		"SELECT col FROM (SELECT table_name || '.' || column_name"
		" || ' ' || data_type || CASE is_nullable WHEN 'NO'"
		" THEN ' not null' ELSE '' END AS col"
		" FROM information_schema.columns"
		" WHERE table_schema = 'public') c ORDER BY col COLLATE \"C\"",
		PG_ONLY_COLUMNS),
	    sqlite_list(pf,
		"SELECT t.name || '.' || c.name || ' ' ||"
		" CASE upper(c.type) WHEN 'INTEGER' THEN 'bigint'"
		" WHEN 'TEXT' THEN 'text' WHEN 'BLOB' THEN 'bytea'"
		" WHEN 'REAL' THEN 'double precision'"
		" ELSE 'unmapped ' || c.type END ||"
		" CASE WHEN c.\"notnull\" OR c.pk > 0"
		" THEN ' not null' ELSE '' END"
		" FROM pragma_table_list t, pragma_table_info(t.name) c"
		" WHERE t.schema = 'main' AND t.type = 'table'"
		" AND t.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
		" ORDER BY 1"));
}

/* Every index made by CREATE INDEX, as "table.index[ unique][ partial]":
 * the same on both after all the migrations (7 and 10 drop some), so a
 * unique partial index that is a rule (autorun_turns_running: one turn
 * running per agent) holds on both. The indexes behind a PRIMARY KEY or
 * UNIQUE are not listed: their columns are the CREATE TABLE's, the same
 * text on both. */
static void
test_pg_schema__every_table_has_the_same_indexes(void **state)
{
	pg_fixture *pf = *state;

	pg_scratch(pf);
	pg_migrate(pf, 1, hd_store_pg_nmigrations);
	assert_same("indexes",
	    pg_list(pf,
		"SELECT ix FROM (SELECT t.relname || '.' || i.relname ||"
		" CASE WHEN x.indisunique THEN ' unique' ELSE '' END ||"
		" CASE WHEN x.indpred IS NOT NULL THEN ' partial' ELSE ''"
		" END AS ix FROM pg_index x"
		" JOIN pg_class i ON i.oid = x.indexrelid"
		" JOIN pg_class t ON t.oid = x.indrelid"
		" JOIN pg_namespace n ON n.oid = t.relnamespace"
		" WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1"
		" FROM pg_constraint k WHERE k.conindid = x.indexrelid)) s"
		" ORDER BY ix COLLATE \"C\"",
		PG_ONLY_INDEXES),
	    sqlite_list(pf,
		"SELECT t.name || '.' || i.name ||"
		" CASE WHEN i.\"unique\" THEN ' unique' ELSE '' END ||"
		" CASE WHEN i.partial THEN ' partial' ELSE '' END"
		" FROM pragma_table_list t, pragma_index_list(t.name) i"
		" WHERE t.schema = 'main' AND t.type = 'table'"
		" AND i.origin = 'c' ORDER BY 1"));
}

/* Migration 22 starts each room's counter at its last post, and the
 * room's upsert (room.c) goes on from there on PostgreSQL too. */
static void
test_pg_schema__room_seqs_start_at_each_rooms_last_post(void **state)
{
	pg_fixture *pf = *state;
	PGresult *r;

	pg_scratch(pf);
	pg_migrate(pf, 1, 21);
	pg_run(pf->db,
	    "INSERT INTO team_chat(id, room_id, team_id, author_agent_id,"
	    " body, kind, created_at, seq) VALUES"
	    " ('a', 'team:dev', 'dev', 'user', 'x', 'user', 1, 1),"
	    " ('b', 'team:dev', 'dev', 'user', 'y', 'user', 2, 2),"
	    " ('c', 'team:ops', 'ops', 'user', 'z', 'user', 3, 1)",
	    "posts before migration 22");
	pg_migrate(pf, 22, hd_store_pg_nmigrations);
	r = PQexec(pf->db,
	    "SELECT string_agg(team_id || '=' || seq, ' ' ORDER BY team_id)"
	    " FROM room_seqs");
	pg_ok(pf->db, r, "room_seqs");
	assert_string_equal(PQgetvalue(r, 0, 0), "dev=2 ops=1");
	PQclear(r);
	r = PQexec(pf->db,
	    "INSERT INTO room_seqs(team_id, seq) VALUES ('dev', 1)"
	    " ON CONFLICT(team_id) DO UPDATE SET seq = room_seqs.seq + 1"
	    " RETURNING seq");
	pg_ok(pf->db, r, "the room's upsert");
	assert_int_equal(PQntuples(r), 1);
	assert_string_equal(PQgetvalue(r, 0, 0), "3");
	PQclear(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pg_schema__as_many_migrations_as_sqlite),
		cmocka_unit_test_setup_teardown(
		    test_pg_schema__every_table_has_the_same_columns, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_pg_schema__every_table_has_the_same_indexes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_pg_schema__room_seqs_start_at_each_rooms_last_post,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
