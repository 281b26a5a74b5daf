/*
 * testutil.h -- shared test fixture: a fresh HUDDLE_HOME in a temporary
 * directory per test, an open store, the teams a test file works in,
 * assertions that print the library's error message when a call fails,
 * and the small checks more than one test file makes.
 */
#ifndef HD_TESTUTIL_H
#define HD_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <huddle/store.h>

typedef struct hd_fixture {
	char home[256];
	hd_store *st;
	char pgdb[64]; /* HUDDLE_TEST_PG: the fixture's database, else "" */
} hd_fixture;

/* cmocka setup/teardown: a fresh home with an open store in *state (with
 * HUDDLE_TEST_PG set, on a fresh PostgreSQL database: testutil.c). */
int hd_fixture_setup(void **state);
int hd_fixture_teardown(void **state);
/* hd_fixture_setup on SQLite whatever HUDDLE_TEST_PG says: for a test
 * that compares the SQLite store with a PostgreSQL database of its own. */
int hd_fixture_setup_sqlite(void **state);

/* Remove a directory tree (test homes). */
void hd_rm_rf(const char *path);

/* Create team `team` with agents given as NULL-terminated ids; the first
 * is the leader. */
void hd_fixture_team(hd_fixture *fx, const char *team, ...);

/* hd_fixture_setup, then the teams `teams` describes: "dev: manager
 * coder; ops: boss" is team dev led by manager with coder, and team ops
 * led by boss (as hd_fixture_team, in that order). */
int hd_fixture_setup_teams(void **state, const char *teams);

/* Write an executable sh script running `body` as <home>/name; returns
 * its path (static storage, one of 8 slots used in turn). */
const char *hd_fixture_script(
    hd_fixture *fx, const char *name, const char *body);

/* Assert that agent's status (hd_agent.status) is `status`. */
void hd_assert_agent_status(
    hd_fixture *fx, const char *agent, const char *status);

/* Assert that `got` (malloc'd; freed here), what a parse of `input` came
 * to, is `want`; a failure shows the input, what came and what was due. */
void hd_assert_parsed(const char *input, char *got, const char *want);

/* Assert that there is no agent id (hd_agent_get: not found). */
void hd_assert_no_agent(hd_fixture *fx, const char *id);

/* How many events of kind the log holds for team (NULL: any team, any
 * kind). */
size_t hd_count_events(hd_store *st, const char *team, const char *kind);

/* Write text to path (created or truncated). */
void hd_write_file(const char *path, const char *text);

/* The text of path (up to 1 MiB), malloc'd. */
char *hd_read_text(const char *path);

/* Set agent's status by hand (hd_agent_set_status). */
void hd_set_agent_status(
    hd_fixture *fx, const char *agent, const char *status);

/* Threads in this process, as the kernel counts them. */
int hd_thread_count(void);

/* A test run on a fresh fixture (hd_fixture_setup/_teardown). */
#define hd_fixture_test(f)                                                    \
	cmocka_unit_test_setup_teardown(f, hd_fixture_setup, hd_fixture_teardown)

#define assert_hd_ok(call, errp)                                              \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_ != 0)                                                 \
			fail_msg("%s returned %d: %s", #call, rc_,            \
			    (errp)->msg);                                     \
	} while (0)

#define assert_hd_err(call, code, text, errp)                                 \
	do {                                                                  \
		int rc_ = (call);                                             \
		assert_int_equal(rc_, (code));                                \
		assert_string_equal((errp)->msg, (text));                     \
	} while (0)

#endif
