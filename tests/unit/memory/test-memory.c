/*
 * test-memory.c -- team memory (src/memory/memory.c): who sees which
 * fact, bm25 ranking, limits and tag filters, expiry, forgetting, every
 * refusal of a save (nothing written), the FTS index kept in the fact's
 * own transaction, and facts surviving a reopen of the store. Teams: dev
 * (manager, coder, tester) and ops (boss, sre).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/memory.h>
#include <huddle/util.h>

#include <store/store.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "dev: manager coder tester; ops: boss sre");
}

static int64_t
save(hd_fixture *fx, const char *team, const char *agent, const char *scope,
    const char *text)
{
	hd_fact_spec fs = {.team = team, .agent = agent, .scope = scope,
	    .text = text};
	hd_err err = HD_ERR_INIT;
	hd_fact *f = NULL;
	int64_t id;

	assert_hd_ok(hd_memory_save(&f, fx->st, &fs, &err), &err);
	id = f->id;
	hd_fact_free(f);
	return id;
}

/* The ids of what q finds (search when text, else list), as "1 2 3". */
static void
ids_of(hd_fixture *fx, const char *team, const char *agent, const char *text,
    const char *tag, char *out, size_t len)
{
	hd_memory_query q = {.team = team, .agent = agent, .text = text,
	    .tag = tag, .limit = HD_MEMORY_LIMIT_MAX};
	hd_err err = HD_ERR_INIT;
	hd_facts l;
	size_t i, used = 0;

	if (text != NULL)
		assert_hd_ok(hd_memory_search(&l, fx->st, &q, &err), &err);
	else
		assert_hd_ok(hd_memory_list(&l, fx->st, &q, &err), &err);
	out[0] = '\0';
	for (i = 0; i < l.n; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%lld",
		    i ? " " : "", (long long)l.items[i].id);
	hd_facts_dispose(&l);
}

/* Sorted ids, so a set compares whatever the rank order. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void
set_of(hd_fixture *fx, const char *team, const char *agent, const char *text,
    char *out, size_t len)
{
	char ids[256], *p, *end;
	int64_t v[32];
	size_t n = 0, i, used = 0;

	ids_of(fx, team, agent, text, NULL, ids, sizeof(ids));
	for (p = ids; *p != '\0' && n < 32; p = end)
		v[n++] = strtoll(p, &end, 10);
	qsort(v, n, sizeof(v[0]), cmp_i64);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%lld",
		    i ? " " : "", (long long)v[i]);
}

/* Each reader sees its team's team facts, every global fact and its own
 * private ones -- never another team's, never another agent's private
 * ones -- in a search and in a list alike. */
static void
test_memory__readers_see_their_team_global_and_their_own(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_memory_query q = {.team = "dev", .agent = "sre", .text = "deploy"};
	hd_facts l;
	char got[256];

	/* 1 */ save(fx, "dev", "coder", NULL, "deploy from the dev branch");
	/* 2 */ save(fx, "dev", "coder", "agent", "coder: deploy slowly");
	/* 3 */ save(fx, "dev", "tester", "agent", "tester: deploy twice");
	/* 4 */ save(fx, "ops", "boss", "team", "ops: deploy on mondays");
	/* 5 */ save(fx, "ops", "boss", "global", "deploy needs a ticket");
	/* 6 */ save(fx, "ops", "boss", "agent", "boss: deploy myself");
	/* 7 */ save(fx, "dev", NULL, "team", "the user says: deploy at 9");

	set_of(fx, "dev", "coder", "deploy", got, sizeof(got));
	assert_string_equal(got, "1 2 5 7");
	set_of(fx, "dev", "tester", "deploy", got, sizeof(got));
	assert_string_equal(got, "1 3 5 7");
	set_of(fx, "dev", "manager", "deploy", got, sizeof(got));
	assert_string_equal(got, "1 5 7");
	set_of(fx, "dev", NULL, "deploy", got, sizeof(got)); /* the user */
	assert_string_equal(got, "1 5 7");
	set_of(fx, "ops", "boss", "deploy", got, sizeof(got));
	assert_string_equal(got, "4 5 6");
	set_of(fx, "ops", "sre", "deploy", got, sizeof(got));
	assert_string_equal(got, "4 5");
	/* a list, newest first */
	ids_of(fx, "dev", "coder", NULL, NULL, got, sizeof(got));
	assert_string_equal(got, "7 5 2 1");
	ids_of(fx, "ops", NULL, NULL, NULL, got, sizeof(got));
	assert_string_equal(got, "5 4");
	/* a reader outside the team reads nothing */
	assert_hd_err(hd_memory_search(&l, fx->st, &q, &err), HD_EREFUSED,
	    "no member \"sre\" in team dev", &err);
	q.team = "nope";
	q.agent = NULL;
	assert_hd_err(hd_memory_list(&l, fx->st, &q, &err), HD_ENOTFOUND,
	    "team \"nope\" not found", &err);
}

/* bm25: the fact holding more of the words, and the rarer ones, first;
 * limit cuts the tail; a tag matches as a word too. */
static void
test_memory__search_is_ranked_by_bm25_with_a_limit(void **state)
{
	hd_fixture *fx = *state;
	hd_memory_query q = {.team = "dev", .agent = "coder",
	    .text = "postgres replica lag", .limit = 2};
	hd_err err = HD_ERR_INIT;
	hd_facts l;
	char got[256];

	/* 1 */ save(fx, "dev", "coder", NULL, "postgres is version 16");
	/* 2 */ save(fx, "dev", "coder", NULL,
	    "postgres replica lag spikes during backups");
	/* 3 */ save(fx, "dev", "coder", NULL, "the replica is in eu-west");
	/* 4 */ save(fx, "dev", "coder", NULL, "nothing to see here");
	ids_of(fx, "dev", "coder", "postgres replica lag", NULL, got,
	    sizeof(got));
	assert_string_equal(strtok(got, " "), "2"); /* all three words */
	assert_hd_ok(hd_memory_search(&l, fx->st, &q, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].id, 2);
	assert_true(l.items[0].rank <= l.items[1].rank);
	assert_true(l.items[0].rank < 0); /* bm25: lower is better */
	hd_facts_dispose(&l);
	/* case and punctuation do not matter */
	ids_of(fx, "dev", "coder", "EU-WEST?", NULL, got, sizeof(got));
	assert_string_equal(got, "3");
	ids_of(fx, "dev", "coder", "absent words", NULL, got, sizeof(got));
	assert_string_equal(got, "");
}

static void
test_memory__a_tag_filters_search_and_list(void **state)
{
	hd_fixture *fx = *state;
	const char *db[] = {"db"}, *both[] = {"db", "staging"};
	hd_fact_spec fs = {.team = "dev", .agent = "coder",
	    .text = "the database listens on 5433", .tags = db, .ntags = 1};
	hd_memory_query q = {.team = "dev", .text = "database", .tag = "Bad"};
	hd_err err = HD_ERR_INIT;
	hd_fact *f = NULL;
	hd_facts l;
	char got[256];

	assert_hd_ok(hd_memory_save(&f, fx->st, &fs, &err), &err); /* 1 */
	assert_int_equal(f->ntags, 1);
	assert_string_equal(f->tags[0], "db");
	hd_fact_free(f);
	fs.tags = both;
	fs.ntags = 2;
	fs.text = "the staging database is small";
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err); /* 2 */
	fs.ntags = 0;
	fs.text = "the database docs are in the wiki";
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err); /* 3 */
	set_of(fx, "dev", NULL, "database", got, sizeof(got));
	assert_string_equal(got, "1 2 3");
	ids_of(fx, "dev", NULL, "database", "staging", got, sizeof(got));
	assert_string_equal(got, "2");
	ids_of(fx, "dev", NULL, NULL, "db", got, sizeof(got));
	assert_string_equal(got, "2 1");
	/* "db" is a tag of 1 and 2, not a word of their text: found as one */
	set_of(fx, "dev", NULL, "db", got, sizeof(got));
	assert_string_equal(got, "1 2");
	/* a tag that is part of another is not that tag */
	ids_of(fx, "dev", NULL, NULL, "stag", got, sizeof(got));
	assert_string_equal(got, "");
	assert_hd_err(hd_memory_search(&l, fx->st, &q, &err), HD_EINVAL,
	    "invalid tag \"Bad\": use 1-50 lowercase letters, digits, '-' or "
	    "'_'",
	    &err);
}

/* A fact past its expires_at is never returned, by search or list. */
static void
test_memory__expired_facts_are_never_returned(void **state)
{
	hd_fixture *fx = *state;
	int64_t now = hd_now_ms();
	hd_fact_spec fs = {.team = "dev", .text = "the demo box is up",
	    .expires_at = now + 60000};
	hd_memory_query q = {.team = "dev", .text = "demo box"};
	hd_err err = HD_ERR_INIT;
	hd_facts l;

	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err);
	fs.expires_at = 0;
	fs.text = "the demo script is in tools";
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err);
	q.now = now + 1000;
	assert_hd_ok(hd_memory_search(&l, fx->st, &q, &err), &err);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0].expires_at, now + 60000);
	hd_facts_dispose(&l);
	q.now = now + 60000; /* the instant it expires */
	assert_hd_ok(hd_memory_search(&l, fx->st, &q, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, 2);
	hd_facts_dispose(&l);
	assert_hd_ok(hd_memory_list(&l, fx->st, &q, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, 2);
	hd_facts_dispose(&l);
}

/* Forget: only what the caller may touch in its team; anything else is
 * "no fact", the same as a fact that does not exist. The index forgets
 * with the fact. */
static void
test_memory__forget_only_what_is_yours_to_forget(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t mine, theirs, global, team;
	char got[256];

	mine = save(fx, "dev", "coder", "agent", "coder keeps a journal");
	theirs = save(fx, "dev", "tester", "agent", "tester keeps a journal");
	global = save(fx, "ops", "boss", "global", "everyone keeps a journal");
	team = save(fx, "dev", "manager", "team", "the team journal is here");
	assert_hd_err(hd_memory_forget(fx->st, "dev", "coder", theirs, &err),
	    HD_ENOTFOUND, "no fact 2 in team dev", &err);
	assert_hd_err(hd_memory_forget(fx->st, "dev", "coder", global, &err),
	    HD_ENOTFOUND, "no fact 3 in team dev", &err);
	assert_hd_err(hd_memory_forget(fx->st, "dev", NULL, mine, &err),
	    HD_ENOTFOUND, "no fact 1 in team dev", &err);
	assert_hd_err(hd_memory_forget(fx->st, "dev", "coder", 99, &err),
	    HD_ENOTFOUND, "no fact 99 in team dev", &err);
	assert_hd_err(hd_memory_forget(fx->st, "dev", "boss", team, &err),
	    HD_EREFUSED, "no member \"boss\" in team dev", &err);
	assert_hd_err(hd_memory_forget(fx->st, "dev", "coder", 0, &err),
	    HD_EINVAL, "fact id must be a positive integer", &err);
	assert_hd_ok(hd_memory_forget(fx->st, "dev", "coder", mine, &err), &err);
	assert_hd_ok(hd_memory_forget(fx->st, "dev", NULL, team, &err), &err);
	assert_hd_ok(hd_memory_forget(fx->st, "ops", "sre", global, &err), &err);
	set_of(fx, "dev", "coder", "journal", got, sizeof(got));
	assert_string_equal(got, "");
	set_of(fx, "dev", "tester", "journal", got, sizeof(got));
	assert_string_equal(got, "2");
	/* the newest fact (4) was forgotten: its id names no other */
	assert_int_equal(save(fx, "dev", "coder", NULL, "a new fact"), 5);
}

/* How many rows the store holds in memory_facts, and how many index
 * entries match "zebra". */
static void
counts(hd_fixture *fx, int64_t *facts, int64_t *indexed)
{
	hd_err err = HD_ERR_INIT;

	assert_int_equal(hd_store_get_int(fx->st, facts, &err,
			     "SELECT COUNT(*) FROM memory_facts WHERE ?1",
			     HD_INT(1)),
	    1);
	/* the index: FTS5's table on SQLite, the tsvector column of
	 * memory_facts on PostgreSQL (schema_pg.c) */
	assert_int_equal(hd_store_get_int(fx->st, indexed, &err,
			     strcmp(hd_store_backend_name(fx->st),
				 "postgresql") == 0
				 ? "SELECT COUNT(*) FROM memory_facts WHERE"
				   " fts @@ to_tsquery('simple', ?1)"
				 : "SELECT COUNT(*) FROM memory_fts WHERE"
				   " memory_fts MATCH ?1",
			     HD_TEXT("zebra")),
	    1);
}

/* Every refusal names what is wrong and writes nothing. */
static void
test_memory__a_bad_save_is_refused_and_writes_nothing(void **state)
{
	hd_fixture *fx = *state;
	const char *tags17[HD_MEMORY_TAGS_MAX + 1], *dup[] = {"a", "a"},
						    *bad[] = {"No Spaces"};
	hd_fact_spec fs = {.team = "dev", .agent = "coder", .text = "zebra"};
	hd_err err = HD_ERR_INIT;
	hd_task_spec ts = {.team = "ops", .subject = "ops work"};
	hd_task *t = NULL;
	int64_t facts, indexed;
	size_t i;

	for (i = 0; i < HD_MEMORY_TAGS_MAX + 1; i++)
		tags17[i] = "t";
	fs.text = "  \n";
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "text must not be empty", &err);
	fs.text = "zebra key sk-ant-api03-Xy7Qm2pLk9Rt4Vn8Bc3Df6Gh";
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EREFUSED,
	    "the text looks like an Anthropic API key (sk-ant-...); memory "
	    "never stores secrets: leave the secret out, or say where it is "
	    "kept",
	    &err);
	assert_null(strstr(err.msg, "Xy7Qm2")); /* never the secret */
	fs.text = "zebra";
	fs.scope = "everyone";
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "scope must be team, global or agent, not \"everyone\"", &err);
	fs.scope = "agent";
	fs.agent = NULL;
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "scope agent needs an acting agent: a private fact is an agent's "
	    "own",
	    &err);
	fs.scope = NULL;
	fs.agent = "boss";
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EREFUSED,
	    "no member \"boss\" in team dev", &err);
	fs.agent = "coder";
	fs.tags = tags17;
	fs.ntags = HD_MEMORY_TAGS_MAX + 1;
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "a fact has at most 16 tags", &err);
	fs.tags = dup;
	fs.ntags = 2;
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "tag \"a\" is given twice", &err);
	fs.tags = bad;
	fs.ntags = 1;
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "invalid tag \"No Spaces\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	fs.ntags = 0;
	fs.expires_at = hd_now_ms() - 1;
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_EINVAL,
	    "expires is in the past", &err);
	fs.expires_at = 0;
	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err);
	fs.task = t->id; /* ops's task, saved in dev */
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_ENOTFOUND,
	    "task 1 not found", &err);
	hd_task_free(t);
	fs.team = "nope";
	fs.task = 0;
	assert_hd_err(hd_memory_save(NULL, fx->st, &fs, &err), HD_ENOTFOUND,
	    "team \"nope\" not found", &err);
	counts(fx, &facts, &indexed);
	assert_int_equal(facts, 0);
	assert_int_equal(indexed, 0);
}

static int
save_then_fail(hd_store *st, void *payload, hd_err *err)
{
	hd_fact_spec fs = {.team = "dev", .agent = "coder",
	    .text = "zebra crossing"};
	int rc;

	(void)payload;
	if ((rc = hd_memory_save(NULL, st, &fs, err)) < 0)
		return rc;
	return hd_err_set(err, HD_ERR, "then something failed");
}

/* The index is written with the fact, in its transaction: a rolled back
 * save leaves neither, a kept one both, a forget removes both; FTS5's
 * own integrity check agrees with the table. */
static void
test_memory__the_index_commits_with_the_fact(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t facts, indexed, id;

	assert_int_equal(hd_store_atomic(fx->st, save_then_fail, NULL, &err),
	    HD_ERR);
	counts(fx, &facts, &indexed);
	assert_int_equal(facts, 0);
	assert_int_equal(indexed, 0);
	id = save(fx, "dev", "coder", NULL, "zebra crossing");
	counts(fx, &facts, &indexed);
	assert_int_equal(facts, 1);
	assert_int_equal(indexed, 1);
	/* FTS5's own check (PostgreSQL's generated column has none to do) */
	if (strcmp(hd_store_backend_name(fx->st), "postgresql") != 0)
		assert_hd_ok(hd_store_run(fx->st, &err,
				 "INSERT INTO memory_fts(memory_fts, rank)"
				 " VALUES ('integrity-check', ?1)",
				 HD_INT(1)),
		    &err);
	assert_hd_ok(hd_memory_forget(fx->st, "dev", "coder", id, &err), &err);
	counts(fx, &facts, &indexed);
	assert_int_equal(facts, 0);
	assert_int_equal(indexed, 0);
	if (strcmp(hd_store_backend_name(fx->st), "postgresql") != 0)
		assert_hd_ok(hd_store_run(fx->st, &err,
				 "INSERT INTO memory_fts(memory_fts, rank)"
				 " VALUES ('integrity-check', ?1)",
				 HD_INT(1)),
		    &err);
}

/* Facts are on disk: a new connection (a restarted server) finds them. */
static void
test_memory__facts_survive_reopening_the_store(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char got[256];

	save(fx, "dev", "coder", "agent", "the flaky test is test_io");
	save(fx, "dev", "coder", "global", "release notes go in CHANGES");
	hd_store_close(fx->st);
	fx->st = NULL;
	assert_hd_ok(hd_store_open(&fx->st, fx->home, &err), &err);
	set_of(fx, "dev", "coder", "flaky test release", got, sizeof(got));
	assert_string_equal(got, "1 2");
}

/* The JSON every surface shows. */
static void
test_memory__a_fact_as_json(void **state)
{
	hd_fixture *fx = *state;
	const char *tags[] = {"ci"};
	hd_task_spec ts = {.team = "dev", .subject = "fix ci"};
	hd_fact_spec fs = {.team = "dev", .agent = "coder", .scope = "agent",
	    .text = "ci caches node_modules", .tags = tags, .ntags = 1};
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	hd_fact *f = NULL;
	json_t *o;
	char *s;

	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err);
	fs.task = t->id;
	hd_task_free(t);
	fs.expires_at = hd_now_ms() + 3600000;
	assert_hd_ok(hd_memory_save(&f, fx->st, &fs, &err), &err);
	o = hd_fact_to_json(f, 0);
	json_object_del(o, "created_at");
	json_object_del(o, "expires_at");
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(s,
	    "{\"id\":1,\"text\":\"ci caches node_modules\",\"scope\":\"agent\","
	    "\"team\":\"dev\",\"agent\":\"coder\",\"tags\":[\"ci\"],"
	    "\"source\":{\"agent\":\"coder\",\"task\":1}}");
	assert_int_equal(f->expires_at, fs.expires_at);
	free(s);
	json_decref(o);
	hd_fact_free(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, hd_fixture_teardown)
	    T(test_memory__readers_see_their_team_global_and_their_own),
	    T(test_memory__search_is_ranked_by_bm25_with_a_limit),
	    T(test_memory__a_tag_filters_search_and_list),
	    T(test_memory__expired_facts_are_never_returned),
	    T(test_memory__forget_only_what_is_yours_to_forget),
	    T(test_memory__a_bad_save_is_refused_and_writes_nothing),
	    T(test_memory__the_index_commits_with_the_fact),
	    T(test_memory__facts_survive_reopening_the_store),
	    T(test_memory__a_fact_as_json),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
