/*
 * testutil.c -- the per-test fixture of testutil.h: a temporary home with
 * an open store, and the teams a test file asks for, created through the
 * team module as any caller would; plus the small checks and file helpers
 * several test files share (an agent's status, a missing agent, an event
 * count, a parse's description, a script or text file in the home). Each
 * helper asserts through cmocka, so a failure points at the test.
 *
 * On PostgreSQL: when HUDDLE_TEST_PG holds a libpq URL of a throwaway
 * cluster's maintenance database, each fixture gets a database of its
 * own, made with CREATE DATABASE ... TEMPLATE from a template this test
 * process migrated once (a copy is much faster than migrating), and
 * HUDDLE_STORE points at it before the store opens; teardown drops it
 * (WITH (FORCE)), and the template goes when the process exits.
 */
#include <ftw.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "testutil.h"

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
hd_rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The PostgreSQL side of the fixture (see the header comment). */
static PGconn *pg_admin;  /* the maintenance database */
static char pg_tpl[40];   /* this process's migrated template, or "" */
static unsigned pg_seq;   /* fixture databases made so far */

/* url with its database name replaced by db, into out. */
static void
pg_url_with_db(char *out, size_t len, const char *url, const char *db)
{
	const char *auth = strstr(url, "://"), *path, *query;

	auth = auth != NULL ? auth + 3 : url;
	path = auth + strcspn(auth, "/?");
	query = strchr(path, '?');
	snprintf(out, len, "%.*s/%s%s", (int)(path - url), url, db,
	    query != NULL ? query : "");
}

static int
pg_admin_exec(const char *sql)
{
	PGresult *res = PQexec(pg_admin, sql);
	int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

	if (!ok)
		fprintf(stderr, "HUDDLE_TEST_PG: %s: %s", sql,
		    PQerrorMessage(pg_admin));
	PQclear(res);
	return ok ? 0 : -1;
}

static void
pg_drop_template(void)
{
	char sql[128];

	if (pg_admin == NULL)
		return;
	if (pg_tpl[0] != '\0') {
		snprintf(sql, sizeof(sql),
		    "DROP DATABASE IF EXISTS %s WITH (FORCE)", pg_tpl);
		pg_admin_exec(sql);
	}
	PQfinish(pg_admin);
	pg_admin = NULL;
}

/* A fresh database for one fixture, HUDDLE_STORE pointing at it; its
 * name into db. 0, or -1 with the reason on stderr. */
static int
pg_fixture_db(const char *admin_url, char *db, size_t dblen)
{
	char sql[256], url[1024];
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;

	if (pg_admin == NULL) {
		pg_admin = PQconnectdb(admin_url);
		if (PQstatus(pg_admin) != CONNECTION_OK) {
			fprintf(stderr, "HUDDLE_TEST_PG=%s: %s", admin_url,
			    PQerrorMessage(pg_admin));
			PQfinish(pg_admin);
			pg_admin = NULL;
			return -1;
		}
		atexit(pg_drop_template);
	}
	if (pg_tpl[0] == '\0') {
		char tpl[40];

		snprintf(tpl, sizeof(tpl), "hd_tpl_%ld_%u", (long)getpid(),
		    hd_jitter(1000000));
		snprintf(sql, sizeof(sql), "CREATE DATABASE %s", tpl);
		if (pg_admin_exec(sql) < 0)
			return -1;
		snprintf(pg_tpl, sizeof(pg_tpl), "%s", tpl);
		pg_url_with_db(url, sizeof(url), admin_url, pg_tpl);
		setenv("HUDDLE_STORE", url, 1);
		if (hd_store_open(&st, "/tmp", &err) != 0) {
			fprintf(stderr, "migrating %s: %s\n", pg_tpl, err.msg);
			return -1;
		}
		hd_store_close(st);
	}
	snprintf(db, dblen, "%s_%u", pg_tpl, pg_seq++);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE %s", db,
	    pg_tpl);
	if (pg_admin_exec(sql) < 0)
		return -1;
	pg_url_with_db(url, sizeof(url), admin_url, db);
	setenv("HUDDLE_STORE", url, 1);
	return 0;
}

static int
fixture_setup(void **state, int pg)
{
	hd_fixture *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	hd_err err = HD_ERR_INIT;

	if (fx == NULL)
		return -1;
	snprintf(fx->home, sizeof(fx->home), "%s/huddle-test-XXXXXX",
	    tmp ? tmp : "/tmp");
	if (mkdtemp(fx->home) == NULL) {
		free(fx);
		return -1;
	}
	if (pg && getenv("HUDDLE_TEST_PG") != NULL &&
	    *getenv("HUDDLE_TEST_PG") != '\0' &&
	    pg_fixture_db(getenv("HUDDLE_TEST_PG"), fx->pgdb,
		sizeof(fx->pgdb)) < 0) {
		hd_rm_rf(fx->home);
		free(fx);
		return -1;
	}
	if (hd_store_open(&fx->st, fx->home, &err) != 0) {
		fprintf(stderr, "store open: %s\n", err.msg);
		hd_rm_rf(fx->home);
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

int
hd_fixture_setup(void **state)
{
	return fixture_setup(state, 1);
}

int
hd_fixture_setup_sqlite(void **state)
{
	return fixture_setup(state, 0);
}

int
hd_fixture_teardown(void **state)
{
	hd_fixture *fx = *state;

	if (fx == NULL)
		return 0;
	hd_store_close(fx->st);
	if (fx->pgdb[0] != '\0' && pg_admin != NULL) {
		char sql[128];

		snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)",
		    fx->pgdb);
		pg_admin_exec(sql);
	}
	hd_rm_rf(fx->home);
	free(fx);
	return 0;
}

/* Team `team` with agents ids[0..n), ids[0] its leader. */
static void
make_team(hd_fixture *fx, const char *team, char *const *ids, size_t n)
{
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_err err = HD_ERR_INIT;
	size_t i;

	ts.id = team;
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	for (i = 0; i < n; i++) {
		memset(&as, 0, sizeof(as));
		as.id = ids[i];
		as.team = team;
		as.leader = i == 0;
		assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	}
}

void
hd_fixture_team(hd_fixture *fx, const char *team, ...)
{
	char *ids[32];
	size_t n = 0;
	va_list ap;

	va_start(ap, team);
	while ((ids[n] = va_arg(ap, char *)) != NULL)
		assert_true(++n < 32);
	va_end(ap);
	make_team(fx, team, ids, n);
}

/* One team of hd_fixture_setup_teams: "id: leader member ...". */
static void
team_of(hd_fixture *fx, const char *desc, size_t len)
{
	char buf[256], *ids[32], *save = NULL, *team, *colon;
	size_t n = 0;

	assert_true(len < sizeof(buf));
	memcpy(buf, desc, len);
	buf[len] = '\0';
	colon = strchr(buf, ':');
	assert_non_null(colon);
	*colon = '\0';
	team = strtok_r(buf, " ", &save);
	assert_non_null(team);
	for (ids[n] = strtok_r(colon + 1, " ", &save); ids[n] != NULL;
	     ids[n] = strtok_r(NULL, " ", &save))
		assert_true(++n < 32);
	make_team(fx, team, ids, n);
}

int
hd_fixture_setup_teams(void **state, const char *teams)
{
	const char *p = teams, *end;

	if (hd_fixture_setup(state) != 0)
		return -1;
	while (*p != '\0') {
		end = strchr(p, ';');
		if (end == NULL)
			end = p + strlen(p);
		team_of(*state, p, (size_t)(end - p));
		p = *end == ';' ? end + 1 : end;
	}
	return 0;
}

const char *
hd_fixture_script(hd_fixture *fx, const char *name, const char *body)
{
	static char paths[8][600];
	static int next;
	char *p = paths[next++ % 8];
	FILE *f;

	snprintf(p, 600, "%s/%s", fx->home, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

void
hd_assert_agent_status(hd_fixture *fx, const char *agent, const char *status)
{
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_agent_get(&a, fx->st, agent, &err), &err);
	assert_string_equal(a->status, status);
	hd_agent_free(a);
}

void
hd_assert_parsed(const char *input, char *got, const char *want)
{
	if (strcmp(got, want) != 0)
		fail_msg("parse of [%s]\n got: %s\nwant: %s", input, got, want);
	free(got);
}

int
hd_thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Threads:", 8) == 0)
			n = atoi(line + 8);
	fclose(f);
	return n;
}

size_t
hd_count_events(hd_store *st, const char *team, const char *kind)
{
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	size_t n;

	f.team = team;
	f.kind = kind;
	f.limit = HD_EVENTS_LIMIT_MAX;
	assert_hd_ok(hd_events_list(&l, st, &f, &err), &err);
	n = l.n;
	hd_event_list_dispose(&l);
	return n;
}

void
hd_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

void
hd_assert_no_agent(hd_fixture *fx, const char *id)
{
	hd_agent *a = NULL;
	hd_err err = HD_ERR_INIT;
	char want[128];

	snprintf(want, sizeof(want), "agent \"%s\" not found", id);
	assert_hd_err(hd_agent_get(&a, fx->st, id, &err), HD_ENOTFOUND, want,
	    &err);
	assert_null(a);
}

char *
hd_read_text(const char *path)
{
	char *text = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_read_file(&text, NULL, path, 1 << 20, &err), &err);
	return text;
}

void
hd_set_agent_status(hd_fixture *fx, const char *agent, const char *status)
{
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_agent_set_status(fx->st, agent, status, &err), &err);
}
