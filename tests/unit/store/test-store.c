/*
 * test-store.c -- the store: migrations, refusing a newer schema, the busy
 * budget against a writer in another process, kv, the writers' queue,
 * refusing what is not a database, storage errors that name the file.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <huddle/team.h>
#include <huddle/util.h>
#include <huddle/version.h>

#include "store/sqlite.h"
#include "testutil.h"

/* A test of the SQLite file itself (its pragmas, WAL, file modes, a
 * second process's sqlite3 connection): skipped when the fixture's store
 * is PostgreSQL (HUDDLE_TEST_PG; the PostgreSQL store's own tests are
 * test-pg.c). */
#define SQLITE_ONLY(fx_)                                                \
	do {                                                            \
		if (is_pg((hd_fixture *)(fx_))) {                       \
			print_message("SQLite only: the database file " \
				      "itself\n");                      \
			skip();                                         \
		}                                                       \
	} while (0)

static int
is_pg(hd_fixture *fx)
{
	return strcmp(hd_store_backend_name(fx->st), "postgresql") == 0;
}

static void
test_store__fresh_home_is_migrated_to_the_latest_schema(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;

	assert_int_equal(hd_store_file_version(fx->st, &err),
	    hd_store_schema_version());
	assert_true(hd_store_schema_version() >= 1);
	if (!is_pg(fx))
		assert_hd_ok(hd_store_integrity(fx->st, &err), &err);
}

static void
test_store__reopen_keeps_data_and_version(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "keep", .name = "Kept"};
	hd_store *st2 = NULL;
	hd_team *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	hd_store_close(fx->st);
	fx->st = NULL;
	assert_hd_ok(hd_store_open(&st2, fx->home, &err), &err);
	fx->st = st2;
	assert_int_equal(hd_store_file_version(fx->st, &err),
	    hd_store_schema_version());
	assert_hd_ok(hd_team_get(&t, fx->st, "keep", &err), &err);
	assert_string_equal(t->name, "Kept");
	hd_team_free(t);
}

static void
test_store__home_is_created_private(void **state)
{
	hd_fixture *fx = *state;
	char path[512];
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	struct stat sb;

	snprintf(path, sizeof(path), "%s/nested/home", fx->home);
	assert_hd_ok(hd_store_open(&st, path, &err), &err);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	hd_store_close(st);
}

static void
test_store__newer_schema_is_refused(void **state)
{
	hd_fixture *fx = *state;
	char dbpath[512], want[1024];
	sqlite3 *db;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;

	SQLITE_ONLY(*state);
	snprintf(dbpath, sizeof(dbpath), "%s/huddle.db", fx->home);
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL,
			     NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	snprintf(want, sizeof(want),
	    "%s has schema version 999 but this huddle (%s) knows only up to "
	    "%d; upgrade huddle",
	    dbpath, hd_version(), hd_store_schema_version());
	assert_hd_err(hd_store_open(&st, fx->home, &err), HD_EREFUSED, want,
	    &err);
	assert_null(st);
}

/*
 * A writer in another process holds BEGIN IMMEDIATE; our write retries for
 * the budget (2000 ms by default) and then gives up with the spec's text.
 */
static void
test_store__busy_writer_elsewhere_exhausts_the_budget(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "late"};
	char dbpath[512], c;
	int ready[2];
	int64_t t0, elapsed;
	hd_err err = HD_ERR_INIT;
	hd_team *t = NULL;
	pid_t pid;

	SQLITE_ONLY(*state);
	snprintf(dbpath, sizeof(dbpath), "%s/huddle.db", fx->home);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *db;

		close(ready[0]);
		if (sqlite3_open(dbpath, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
			SQLITE_OK)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause(); /* hold the write lock until killed */
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);

	t0 = hd_mono_ms();
	assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err), HD_EBUSY,
	    "database is busy: gave up after 2000 ms", &err);
	elapsed = hd_mono_ms() - t0;
	/* It tried for the whole budget and then stopped, not much later. */
	assert_true(elapsed >= 1900);
	assert_true(elapsed < 6000);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* The holder died without committing: the write now goes through. */
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	assert_hd_ok(hd_team_get(&t, fx->st, "late", &err), &err);
	hd_team_free(t);
}

static void
test_store__budget_is_configurable_and_named_in_the_error(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {.id = "quick"};
	char dbpath[512], c;
	int ready[2];
	hd_err err = HD_ERR_INIT;
	pid_t pid;

	SQLITE_ONLY(*state);
	snprintf(dbpath, sizeof(dbpath), "%s/huddle.db", fx->home);
	assert_int_equal(pipe(ready), 0);
	if ((pid = fork()) == 0) {
		sqlite3 *db;

		close(ready[0]);
		if (sqlite3_open(dbpath, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
			SQLITE_OK ||
		    write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	hd_store_set_busy_budget(fx->st, 150);
	assert_hd_err(hd_team_create(NULL, fx->st, &ts, &err), HD_EBUSY,
	    "database is busy: gave up after 150 ms", &err);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
test_store__kv_round_trips_and_overwrites(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *v = NULL;

	assert_hd_ok(hd_store_kv_get(&v, fx->st, "turn:team:dev:coder", &err),
	    &err);
	assert_null(v);
	assert_hd_ok(hd_store_kv_put(fx->st, "turn:team:dev:coder", "{\"a\":1}",
			 &err),
	    &err);
	assert_hd_ok(hd_store_kv_put(fx->st, "turn:team:dev:coder", "{\"a\":2}",
			 &err),
	    &err);
	assert_hd_ok(hd_store_kv_get(&v, fx->st, "turn:team:dev:coder", &err),
	    &err);
	assert_string_equal(v, "{\"a\":2}");
	free(v);
}

/* Migration 8 respelled the CHECK lists with OR: each still refuses a
 * value outside its list and still takes one inside it. */
static void
test_store__status_checks_still_refuse_unknown_values(void **state)
{
	hd_fixture *fx = *state;
	sqlite3 *db = hd_store_db(fx->st);
	static const char *const refused[] = {
	    "UPDATE teams SET status = 'gone'",
	    "UPDATE agents SET status = 'asleep'",
	    "INSERT INTO team_chat VALUES ('i', 'team:t', 't', 'a', 'b',"
	    " 'shout', 1, 1)",
	    "INSERT INTO messages (team_id, from_agent, to_agent, type,"
	    " content, created_at) VALUES ('t', 'a', 'b', 'memo', 'x', 1)",
	    "INSERT INTO tasks (team_id, subject, status, created_at,"
	    " updated_at) VALUES ('t', 's', 'done', 1, 1)",
	    NULL};
	hd_team_spec ts = {.id = "t"};
	hd_agent_spec as = {.id = "a", .team = "t"};
	hd_err err = HD_ERR_INIT;
	int i;

	SQLITE_ONLY(*state);
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	for (i = 0; refused[i] != NULL; i++)
		assert_int_equal(sqlite3_exec(db, refused[i], NULL, NULL, NULL),
		    SQLITE_CONSTRAINT_CHECK);
	assert_int_equal(sqlite3_exec(db,
			     "INSERT INTO team_chat VALUES ('i', 'team:t',"
			     " 't', 'a', 'b', 'system', 1, 1);"
			     "UPDATE agents SET status = 'shutdown_requested';"
			     "INSERT INTO tasks (team_id, subject, status,"
			     " created_at, updated_at)"
			     " VALUES ('t', 's', 'cancelled', 1, 1)",
			     NULL, NULL, NULL),
	    SQLITE_OK);
	assert_hd_ok(hd_store_integrity(fx->st, &err), &err);
}

/* The connection that ran migration 8 (the fixture's, on a fresh home)
 * compiles writes with the rewritten constraints, not the IN lists it
 * parsed before: no write program opens a temporary index. */
static void
test_store__migrating_connection_uses_the_rewritten_checks(void **state)
{
	hd_fixture *fx = *state;
	sqlite3 *db = hd_store_db(fx->st);
	static const char *const writes[] = {
	    "EXPLAIN UPDATE agents SET status = 'working'",
	    "EXPLAIN INSERT INTO team_chat VALUES ('i', 'team:t', 't', 'a',"
	    " 'b', 'peer', 1, 1)",
	    "EXPLAIN UPDATE tasks SET status = 'claimed'", NULL};
	sqlite3_stmt *s;
	int i, ephemeral;

	SQLITE_ONLY(*state);
	for (i = 0; writes[i] != NULL; i++) {
		assert_int_equal(
		    sqlite3_prepare_v2(db, writes[i], -1, &s, NULL), SQLITE_OK);
		ephemeral = 0;
		while (sqlite3_step(s) == SQLITE_ROW)
			ephemeral += strcmp((const char *)sqlite3_column_text(
						s, 1),
					 "OpenEphemeral") == 0;
		sqlite3_finalize(s);
		assert_int_equal(ephemeral, 0);
	}
}

/* Two queue handles on one home exclude each other, and leaving hands the
 * queue to the next writer. */
static void
test_store__queue_admits_one_writer_at_a_time(void **state)
{
	hd_fixture *fx = *state;
	hd_store_queue *a = hd_store__queue_open(fx->home);
	hd_store_queue *b = hd_store__queue_open(fx->home);
	char path[512];
	struct stat sb;

	assert_non_null(a);
	assert_non_null(b);
	snprintf(path, sizeof(path), "%s/huddle.db-writers", fx->home);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(hd_store__queue_enter(a, hd_mono_us() + 5000000), 0);
	/* b gives up at its deadline while a holds the queue */
	assert_int_equal(hd_store__queue_enter(b, hd_mono_us() + 50000), -1);
	hd_store__queue_leave(a);
	assert_int_equal(hd_store__queue_enter(b, hd_mono_us() + 5000000), 0);
	hd_store__queue_leave(b);
	hd_store__queue_close(a);
	hd_store__queue_close(b);
}

/* A writer killed while it holds the queue does not block the next one:
 * the robust mutex passes on at once (a lost queue would make the next
 * writer wait out its whole deadline and report -1). */
static void
test_store__queue_survives_a_holder_killed_mid_write(void **state)
{
	hd_fixture *fx = *state;
	hd_store_queue *q;
	int ready[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	if ((pid = fork()) == 0) {
		hd_store_queue *mine = hd_store__queue_open(fx->home);

		close(ready[0]);
		if (mine == NULL ||
		    hd_store__queue_enter(mine, hd_mono_us() + 5000000) != 0 ||
		    write(ready[1], "x", 1) != 1)
			_exit(1);
		pause(); /* hold the queue until killed */
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	q = hd_store__queue_open(fx->home);
	assert_non_null(q);
	assert_int_equal(hd_store__queue_enter(q, hd_mono_us() + 20000), -1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(hd_store__queue_enter(q, hd_mono_us() + 60000000), 0);
	hd_store__queue_leave(q);
	hd_store__queue_close(q);
}

/* The page size a connection reports for its main database. */
static int
page_size(sqlite3 *db)
{
	sqlite3_stmt *s;
	int n = -1;

	assert_int_equal(
	    sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* New stores get 2 KiB pages; a store written with 4 KiB pages (before
 * that choice) opens, migrates and keeps its pages and its rows. */
static void
test_store__new_stores_get_2k_pages_and_old_ones_keep_theirs(void **state)
{
	hd_fixture *fx = *state;
	char home[512], dbpath[600];
	sqlite3 *db;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	char *value = NULL;

	SQLITE_ONLY(*state);
	assert_int_equal(page_size(hd_store_db(fx->st)), 2048);

	snprintf(home, sizeof(home), "%s/old", fx->home);
	assert_int_equal(mkdir(home, 0700), 0);
	snprintf(dbpath, sizeof(dbpath), "%s/huddle.db", home);
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
			     "PRAGMA page_size=4096; PRAGMA journal_mode=WAL;"
			     "CREATE TABLE kept (v TEXT);"
			     "INSERT INTO kept VALUES ('before');",
			     NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);

	assert_hd_ok(hd_store_open(&st, home, &err), &err);
	assert_int_equal(page_size(hd_store_db(st)), 4096);
	assert_int_equal(
	    hd_store_file_version(st, &err), hd_store_schema_version());
	assert_hd_ok(hd_store_kv_put(st, "k", "v", &err), &err);
	assert_hd_ok(hd_store_kv_get(&value, st, "k", &err), &err);
	assert_string_equal(value, "v");
	free(value);
	assert_hd_ok(hd_store_integrity(st, &err), &err);
	hd_store_close(st);

	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(page_size(db), 4096);
	assert_int_equal(sqlite3_exec(db,
			     "SELECT 1 FROM kept WHERE v = 'before'", NULL,
			     NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
}

/* Ids come from a pool drawn in blocks; a forked child must draw its own,
 * or it would mint exactly the ids its parent mints next. */
static void
test_store__a_forked_child_never_mints_its_parents_next_id(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char first[37], mine[37], theirs[37] = "";
	int fds[2], status;
	pid_t pid;

	assert_hd_ok(hd_store_uuid(fx->st, first, &err), &err);
	assert_int_equal(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		char id[37];

		close(fds[0]);
		if (hd_store_uuid(fx->st, id, &err) != 0 ||
		    write(fds[1], id, sizeof(id)) != (ssize_t)sizeof(id))
			_exit(1);
		_exit(0);
	}
	assert_true(pid > 0);
	close(fds[1]);
	assert_int_equal(read(fds[0], theirs, sizeof(theirs)), sizeof(theirs));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_hd_ok(hd_store_uuid(fx->st, mine, &err), &err);
	assert_int_equal(strlen(theirs), 36);
	assert_string_not_equal(theirs, mine);
	assert_string_not_equal(theirs, first);
	assert_string_not_equal(mine, first);
}

/*
 * The huddle VFS gathers a commit's WAL frames and writes them in one call
 * when the commit's last frame arrives. When that write fails (here: the
 * file size limit, as a full disk would), the commit must fail with an
 * error, and every commit before it must survive intact.
 */
static void
test_store__a_commit_that_cannot_be_written_fails_and_loses_nothing(
    void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *big, *value = NULL;
	int status;
	pid_t pid;

	SQLITE_ONLY(*state);
	assert_hd_ok(hd_store_kv_put(fx->st, "before", "kept", &err), &err);
	hd_store_close(fx->st);
	fx->st = NULL;
	if ((pid = fork()) == 0) {
		hd_store *st = NULL;
		struct rlimit rl;
		struct stat sb;
		char wal[600];
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		if (hd_store_open(&st, fx->home, &err) != 0 ||
		    hd_store_kv_put(st, "first", "in", &err) != 0)
			_exit(10);
		snprintf(wal, sizeof(wal), "%s/huddle.db-wal", fx->home);
		if (stat(wal, &sb) != 0)
			_exit(11);
		/* room for a few more frames, not for a 64 KiB value */
		rl.rlim_cur = rl.rlim_max = (rlim_t)sb.st_size + 8192;
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0 ||
		    (big = malloc(65536)) == NULL)
			_exit(12);
		memset(big, 'x', 65535);
		big[65535] = '\0';
		rc = hd_store_kv_put(st, "lost", big, &err);
		/* the error names the file and the errno behind it */
		fprintf(stderr, "child: %s\n", err.msg);
		_exit(rc < 0 && strstr(err.msg, "/huddle.db") != NULL &&
			strstr(err.msg, " (EFBIG)") != NULL
			? 0
			: 13);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	assert_hd_ok(hd_store_open(&fx->st, fx->home, &err), &err);
	assert_hd_ok(hd_store_integrity(fx->st, &err), &err);
	assert_hd_ok(hd_store_kv_get(&value, fx->st, "before", &err), &err);
	assert_string_equal(value, "kept");
	free(value);
	assert_hd_ok(hd_store_kv_get(&value, fx->st, "first", &err), &err);
	assert_string_equal(value, "in");
	free(value);
	assert_hd_ok(hd_store_kv_get(&value, fx->st, "lost", &err), &err);
	assert_null(value);
	big = malloc(65536);
	assert_non_null(big);
	memset(big, 'y', 65535);
	big[65535] = '\0';
	assert_hd_ok(hd_store_kv_put(fx->st, "after", big, &err), &err);
	assert_hd_ok(hd_store_kv_get(&value, fx->st, "after", &err), &err);
	assert_string_equal(value, big);
	free(value);
	free(big);
}

/* HUDDLE_NO_WAL_BATCH=1 opens stores on SQLite's default VFS; they read
 * and write the same files. */
static void
test_store__the_wal_batching_vfs_can_be_turned_off(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_store *plain = NULL;
	char *value = NULL;

	SQLITE_ONLY(*state);
	assert_string_equal(hd_store__vfs_name(), "huddle");
	assert_hd_ok(hd_store_kv_put(fx->st, "batched", "1", &err), &err);
	setenv("HUDDLE_NO_WAL_BATCH", "1", 1);
	assert_null(hd_store__vfs_name());
	assert_hd_ok(hd_store_open(&plain, fx->home, &err), &err);
	unsetenv("HUDDLE_NO_WAL_BATCH");
	assert_hd_ok(hd_store_kv_get(&value, plain, "batched", &err), &err);
	assert_string_equal(value, "1");
	free(value);
	assert_hd_ok(hd_store_kv_put(plain, "plain", "2", &err), &err);
	assert_hd_ok(hd_store_kv_get(&value, fx->st, "plain", &err), &err);
	assert_string_equal(value, "2");
	free(value);
	hd_store_close(plain);
	assert_hd_ok(hd_store_integrity(fx->st, &err), &err);
}

/* Bytes in home/name; 0 when it is not there. */
static off_t
home_file_size(const hd_fixture *fx, const char *name)
{
	char path[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", fx->home, name);
	return stat(path, &sb) == 0 ? sb.st_size : 0;
}

/* Ten values of 1500 bytes in one commit: about ten WAL frames. */
static int
ten_values_txn(hd_store *st, void *payload, hd_err *err)
{
	char key[32], value[1501];
	int i, rc, round = *(int *)payload;

	memset(value, 'a' + round % 26, 1500);
	value[1500] = '\0';
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "ckpt-%d", i);
		if ((rc = hd_store_kv_put(st, key, value, err)) < 0)
			return rc;
	}
	return 0;
}

/* A checkpoint due is handed to a thread of the store's: the writer goes
 * on, the database file gets the pages, and under writes that never pause
 * the WAL still stops growing at HD_CKPT_BEHIND frames. */
static void
test_store__checkpoints_run_off_the_writer_and_the_wal_stays_bounded(
    void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	off_t db0, frame = 2048 + 24;
	int threads0 = hd_thread_count(), round, waited;
	char *value = NULL;

	SQLITE_ONLY(*state);
	db0 = home_file_size(fx, "huddle.db");
	/* past the threshold: one thread more, and the pages reach the file
	 * while the writer is idle */
	for (round = 0; round < 2 * HD_CKPT_FRAMES / 10; round++)
		assert_hd_ok(
		    hd_store_write(fx->st, ten_values_txn, &round, &err), &err);
	/* (a sanitizer may start a thread of its own with the first) */
	assert_true(hd_thread_count() >= threads0 + 1);
	for (waited = 0; waited < 500 &&
			 home_file_size(fx, "huddle.db") <= db0 + 10 * frame;
	     waited++)
		hd_sleep_us(10000);
	assert_true(home_file_size(fx, "huddle.db") > db0 + 10 * frame);
	/* writes that never pause: the WAL is bounded all the same */
	for (; round < 3 * HD_CKPT_BEHIND / 10; round++)
		assert_hd_ok(
		    hd_store_write(fx->st, ten_values_txn, &round, &err), &err);
	assert_true(home_file_size(fx, "huddle.db-wal") <
		    (off_t)(HD_CKPT_BEHIND + 100) * frame);
	assert_hd_ok(hd_store_kv_get(&value, fx->st, "ckpt-9", &err), &err);
	assert_int_equal(value[0], 'a' + (round - 1) % 26);
	free(value);
	assert_hd_ok(hd_store_integrity(fx->st, &err), &err);
}

/* HUDDLE_NO_BG_CHECKPOINT=1: every checkpoint inline, no thread. */
static void
test_store__background_checkpoints_can_be_turned_off(void **state)
{
	hd_fixture *fx = *state;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	int threads0 = hd_thread_count(), round;

	SQLITE_ONLY(*state);
	setenv("HUDDLE_NO_BG_CHECKPOINT", "1", 1);
	assert_hd_ok(hd_store_open(&st, fx->home, &err), &err);
	unsetenv("HUDDLE_NO_BG_CHECKPOINT");
	for (round = 0; round < 3 * HD_CKPT_FRAMES / 10; round++)
		assert_hd_ok(
		    hd_store_write(st, ten_values_txn, &round, &err), &err);
	assert_int_equal(hd_thread_count(), threads0);
	/* inline at SQLite's threshold: the WAL never got far past it */
	assert_true(home_file_size(fx, "huddle.db-wal") <
		    (off_t)(HD_CKPT_FRAMES + 100) * (2048 + 24));
	hd_store_close(st);
	assert_hd_ok(hd_store_integrity(fx->st, &err), &err);
}

static int memo_freed;

static void
memo_count_free(void *v)
{
	memo_freed++;
	free(v);
}

/* The memo hands a value back only for the exact text it was put with;
 * it owns its values, freeing a replaced one, every one when it starts
 * over past HD_STORE_MEMO_MAX, and the rest at close. */
static void
test_store__memo_answers_only_for_the_same_text(void **state)
{
	hd_fixture *fx = *state;
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	char key[32];
	int i;

	assert_hd_ok(hd_store_open(&st, fx->home, &err), &err);
	memo_freed = 0;
	assert_null(hd_store_memo_get(st, "k", "text"));
	hd_store_memo_put(st, "k", "text", strdup("parsed"), memo_count_free);
	assert_string_equal(hd_store_memo_get(st, "k", "text"), "parsed");
	assert_null(hd_store_memo_get(st, "k", "texT"));
	assert_null(hd_store_memo_get(st, "k", "tex"));
	assert_null(hd_store_memo_get(st, "k", "text "));
	assert_null(hd_store_memo_get(st, "other", "text"));
	assert_null(hd_store_memo_get(st, "k", NULL));
	/* replaced: the old value is freed, the new one answers */
	hd_store_memo_put(st, "k", "v2", strdup("second"), memo_count_free);
	assert_int_equal(memo_freed, 1);
	assert_null(hd_store_memo_get(st, "k", "text"));
	assert_string_equal(hd_store_memo_get(st, "k", "v2"), "second");
	/* full: it starts over, freeing what it held */
	for (i = 0; i < HD_STORE_MEMO_MAX; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		hd_store_memo_put(st, key, key, strdup(key), memo_count_free);
	}
	assert_int_equal(memo_freed, 1 + HD_STORE_MEMO_MAX);
	assert_null(hd_store_memo_get(st, "k", "v2"));
	assert_null(hd_store_memo_get(st, "key-0", "key-0"));
	snprintf(key, sizeof(key), "key-%d", HD_STORE_MEMO_MAX - 1);
	assert_string_equal(hd_store_memo_get(st, key, key), key);
	hd_store_close(st);
	assert_int_equal(memo_freed, 1 + HD_STORE_MEMO_MAX + 1);
	/* a put that cannot be kept still frees its value */
	memo_freed = 0;
	assert_hd_ok(hd_store_open(&st, fx->home, &err), &err);
	hd_store_memo_put(st, "k", NULL, strdup("x"), memo_count_free);
	assert_int_equal(memo_freed, 1);
	hd_store_close(st);
}

/* The data version inside a write transaction, and a write in it. */
static int
version_txn(hd_store *st, void *payload, hd_err *err)
{
	assert_int_equal(hd_store_data_version(st, payload), 0);
	return hd_store_kv_put(st, "v", "x", err);
}

static uint32_t
version_now(hd_store *st)
{
	uint32_t v = 0;

	assert_int_equal(hd_store_data_version(st, &v), 0);
	return v;
}

/* What the exchange loop relies on to skip its board scan: taken after a
 * commit and again in the next transaction, the data version is the same
 * exactly when nothing was written in between, by this connection or any
 * other. */
static void
test_store__data_version_says_whether_anything_was_written(void **state)
{
	hd_fixture *fx = *state;
	hd_store *other = NULL;
	hd_err err = HD_ERR_INIT;
	uint32_t after, inside;

	assert_hd_ok(hd_store_open(&other, fx->home, &err), &err);
	assert_hd_ok(hd_store_write(fx->st, version_txn, &inside, &err), &err);
	after = version_now(fx->st);
	/* nothing in between: the same */
	assert_hd_ok(hd_store_write(fx->st, version_txn, &inside, &err), &err);
	assert_int_equal(inside, after);
	after = version_now(fx->st);
	/* another connection committed: different */
	assert_hd_ok(hd_store_kv_put(other, "w", "y", &err), &err);
	assert_hd_ok(hd_store_write(fx->st, version_txn, &inside, &err), &err);
	assert_true(inside != after);
	after = version_now(fx->st);
	/* this connection wrote outside the loop's transactions: different */
	assert_hd_ok(hd_store_kv_put(fx->st, "w", "z", &err), &err);
	assert_hd_ok(hd_store_write(fx->st, version_txn, &inside, &err), &err);
	assert_true(inside != after);
	/* and a read between changes nothing */
	after = version_now(fx->st);
	{
		char *v = NULL;

		assert_hd_ok(hd_store_kv_get(&v, fx->st, "w", &err), &err);
		free(v);
	}
	assert_hd_ok(hd_store_write(fx->st, version_txn, &inside, &err), &err);
	assert_int_equal(inside, after);
	hd_store_close(other);
}

/* Put text (len bytes) where fx's store was, closing it first. */
static void
store_replace_db(hd_fixture *fx, const char *text, size_t len, char *dbpath,
    size_t n)
{
	FILE *f;

	hd_store_close(fx->st);
	fx->st = NULL;
	hd_rm_rf(fx->home);
	assert_int_equal(mkdir(fx->home, 0700), 0);
	snprintf(dbpath, n, "%s/huddle.db", fx->home);
	assert_non_null(f = fopen(dbpath, "w"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void
test_store__a_zero_byte_file_is_refused_not_replaced(void **state)
{
	hd_fixture *fx = *state;
	char dbpath[512], want[1024];
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	struct stat sb;

	SQLITE_ONLY(*state);
	store_replace_db(fx, "", 0, dbpath, sizeof(dbpath));
	snprintf(want, sizeof(want), "not a huddle database: %s (0 bytes)",
	    dbpath);
	assert_hd_err(hd_store_open(&st, fx->home, &err), HD_EREFUSED, want,
	    &err);
	assert_null(st);
	assert_int_equal(stat(dbpath, &sb), 0);
	assert_int_equal(sb.st_size, 0);
}

static void
test_store__a_text_file_is_refused_not_replaced(void **state)
{
	hd_fixture *fx = *state;
	const char text[] = "these are my notes, not a database\n";
	char dbpath[512], want[1024];
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	struct stat sb;

	SQLITE_ONLY(*state);
	store_replace_db(fx, text, sizeof(text) - 1, dbpath, sizeof(dbpath));
	snprintf(want, sizeof(want),
	    "not a huddle database: %s (file is not a database)", dbpath);
	assert_hd_err(hd_store_open(&st, fx->home, &err), HD_EREFUSED, want,
	    &err);
	assert_int_equal(stat(dbpath, &sb), 0);
	assert_int_equal(sb.st_size, sizeof(text) - 1);
}

static void
test_store__an_existing_database_keeps_its_mode(void **state)
{
	hd_fixture *fx = *state;
	char dbpath[512];
	hd_err err = HD_ERR_INIT;
	struct stat sb;

	SQLITE_ONLY(*state);
	snprintf(dbpath, sizeof(dbpath), "%s/huddle.db", fx->home);
	assert_int_equal(stat(dbpath, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600); /* new: private */
	hd_store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(chmod(dbpath, 0640), 0);
	assert_hd_ok(hd_store_open(&fx->st, fx->home, &err), &err);
	assert_hd_ok(hd_store_kv_put(fx->st, "k", "v", &err), &err);
	assert_int_equal(stat(dbpath, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
}

static void
test_store__one_call_statements_bind_each_kind_by_position(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_stmt *s;
	int64_t n = -7;
	size_t blen = 0;
	const void *b;
	static const unsigned char raw[3] = { 0, 1, 2 };

	assert_hd_ok(hd_store_exec(fx->st, is_pg(fx)
	    ? "CREATE TEMP TABLE one_call (id BIGINT PRIMARY KEY,"
	      " t TEXT UNIQUE, k BIGINT, b BYTEA)"
	    : "CREATE TEMP TABLE one_call (id INTEGER PRIMARY KEY,"
	      " t TEXT UNIQUE, k INTEGER, b BLOB)", &err), &err);
	assert_hd_ok(hd_store_run(fx->st, &err,
	    "INSERT INTO one_call (id, t, k, b) VALUES (?1, ?2, ?3, ?4)",
	    HD_INT(1), HD_TEXT("first"), HD_NULL, HD_BLOB(raw, 3)), &err);
	/* ?N numbering: the values are bound in order, whatever the SQL's
	 * own order; a length cuts the text; a NULL text is SQL NULL. */
	assert_hd_ok(hd_store_run(fx->st, &err,
	    "INSERT INTO one_call (k, t, id) VALUES (?3, ?2, ?1)",
	    HD_INT(2), HD_TEXTN("secondXX", 6), HD_INT_OR_NULL(1, 42)),
	    &err);
	assert_hd_ok(hd_store_run(fx->st, &err,
	    "INSERT INTO one_call (id, t, k) VALUES (?1, ?2, ?3)",
	    HD_INT(3), HD_TEXT(NULL), HD_INT_OR_NULL(0, 99)), &err);

	assert_hd_ok(hd_store_query(fx->st, &s, &err,
	    "SELECT t, k, b FROM one_call WHERE id = ?1", HD_INT(1)), &err);
	assert_int_equal(hd_stmt_step(s), HD_ROW);
	assert_string_equal(hd_stmt_text(s, 0), "first");
	assert_true(hd_stmt_is_null(s, 1));
	b = hd_stmt_blob(s, 2, &blen);
	assert_int_equal(blen, 3);
	assert_memory_equal(b, raw, 3);
	assert_int_equal(hd_stmt_step(s), HD_DONE);
	hd_store_reset(s);

	assert_int_equal(hd_store_get_int(fx->st, &n, &err,
	    "SELECT k FROM one_call WHERE t = ?1", HD_TEXT("second")), 1);
	assert_int_equal(n, 42);
	assert_int_equal(hd_store_get_int(fx->st, &n, &err,
	    "SELECT count(*) FROM one_call WHERE t IS NULL AND k IS NULL"
	    " AND id = ?1", HD_INT(3)), 1);
	assert_int_equal(n, 1);
	n = -7;
	assert_int_equal(hd_store_get_int(fx->st, &n, &err,
	    "SELECT k FROM one_call WHERE id = ?1", HD_INT(404)), 0);
	assert_int_equal(n, -7); /* no row: untouched */

	/* A failing run says what the database said and changes nothing. */
	assert_int_equal(hd_store_run(fx->st, &err,
	    "INSERT INTO one_call (id, t) VALUES (?1, ?2)", HD_INT(4),
	    HD_TEXT("first")), HD_EEXISTS);
	/* SQLite's "UNIQUE constraint failed", PostgreSQL's "duplicate key
	 * value violates unique constraint" */
	assert_true(strstr(err.msg, "UNIQUE") != NULL ||
	    strstr(err.msg, "unique") != NULL);
	hd_err_clear(&err);
	assert_int_equal(hd_store_get_int(fx->st, &n, &err,
	    "SELECT count(*) FROM one_call WHERE id >= ?1", HD_INT(0)), 1);
	assert_int_equal(n, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		hd_fixture_test(test_store__fresh_home_is_migrated_to_the_latest_schema),
		hd_fixture_test(test_store__reopen_keeps_data_and_version),
		hd_fixture_test(test_store__home_is_created_private),
		hd_fixture_test(test_store__newer_schema_is_refused),
		hd_fixture_test(test_store__a_zero_byte_file_is_refused_not_replaced),
		hd_fixture_test(test_store__a_text_file_is_refused_not_replaced),
		hd_fixture_test(test_store__an_existing_database_keeps_its_mode),
		hd_fixture_test(test_store__busy_writer_elsewhere_exhausts_the_budget),
		hd_fixture_test(test_store__budget_is_configurable_and_named_in_the_error),
		hd_fixture_test(test_store__kv_round_trips_and_overwrites),
		hd_fixture_test(test_store__status_checks_still_refuse_unknown_values),
		hd_fixture_test(test_store__migrating_connection_uses_the_rewritten_checks),
		hd_fixture_test(test_store__queue_admits_one_writer_at_a_time),
		hd_fixture_test(test_store__queue_survives_a_holder_killed_mid_write),
		hd_fixture_test(test_store__new_stores_get_2k_pages_and_old_ones_keep_theirs),
		hd_fixture_test(test_store__a_forked_child_never_mints_its_parents_next_id),
		hd_fixture_test(test_store__a_commit_that_cannot_be_written_fails_and_loses_nothing),
		hd_fixture_test(test_store__the_wal_batching_vfs_can_be_turned_off),
		hd_fixture_test(test_store__data_version_says_whether_anything_was_written),
		hd_fixture_test(test_store__memo_answers_only_for_the_same_text),
		hd_fixture_test(test_store__checkpoints_run_off_the_writer_and_the_wal_stays_bounded),
		hd_fixture_test(test_store__background_checkpoints_can_be_turned_off),
		hd_fixture_test(test_store__one_call_statements_bind_each_kind_by_position),
	};
	return cmocka_run_group_tests_name("unit/store", tests, NULL, NULL);
}
