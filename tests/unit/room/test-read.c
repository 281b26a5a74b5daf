/*
 * test-read.c -- hd_room_read, hd_room_read_each, hd_room_subscribe and
 * hd_room_head: the posts returned, their order, and the next_seq cursor
 * rules of SPEC 5.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/room.h>
#include <huddle/team.h>
#include <huddle/team_remove.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder; ops: opsbot");
}

/* Post one line per author, in order: "manager coder coder ..." */
static void
post_as(hd_fixture *fx, const char *team, const char *authors)
{
	hd_err err = HD_ERR_INIT;
	char *copy = strdup(authors), *tok, *save = NULL;
	char body[64];
	int i = 0;

	assert_non_null(copy);
	for (tok = strtok_r(copy, " ", &save); tok != NULL;
	     tok = strtok_r(NULL, " ", &save)) {
		snprintf(body, sizeof(body), "%s says %d", tok, ++i);
		if (strcmp(tok, "huddle") == 0)
			assert_hd_ok(hd_room_post(NULL, fx->st, team, "system",
					 NULL, body, &err),
			    &err);
		else if (strcmp(tok, "user") == 0)
			assert_hd_ok(hd_room_post(NULL, fx->st, team, "user",
					 NULL, body, &err),
			    &err);
		else
			assert_hd_ok(hd_room_post(NULL, fx->st, team, "peer",
					 tok, body, &err),
			    &err);
	}
	free(copy);
}

/* The seqs of a page as "1 2 3", for compact exact comparisons. */
static const char *
seqs(const hd_posts *l)
{
	static char out[4096];
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; i < l->n && n < sizeof(out) - 24; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%lld",
		    i ? " " : "", (long long)l->items[i].seq);
	return out;
}

/* coder subscribes to dev after since (limit 0: the default): the page
 * holds the posts `want` ("1 3"; "" for none), and its next_seq is next. */
static void
expect_page(hd_fixture *fx, int64_t since, int limit, const char *want,
    int64_t next)
{
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	assert_hd_ok(
	    hd_room_subscribe(&l, fx->st, "dev", "coder", since, limit, &err),
	    &err);
	assert_string_equal(seqs(&l), want);
	assert_int_equal(l.next_seq, next);
	hd_posts_dispose(&l);
}

static void
test_read__empty_room(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	int64_t h = -1;

	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 0, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.next_seq, 0);
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 5, 0, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.next_seq, 5);
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_head(&h, fx->st, "dev", &err), &err);
	assert_int_equal(h, 0);
}

static void
test_read__since_and_limit(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	post_as(fx, "dev", "manager coder user huddle manager");
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 0, NULL, &err), &err);
	assert_string_equal(seqs(&l), "1 2 3 4 5");
	assert_int_equal(l.next_seq, 5);
	assert_string_equal(l.items[0].body, "manager says 1");
	assert_string_equal(l.items[2].author, "user");
	assert_string_equal(l.items[3].author, "huddle");
	assert_string_equal(l.items[3].kind, "system");
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 2, 0, NULL, &err), &err);
	assert_string_equal(seqs(&l), "3 4 5");
	assert_int_equal(l.next_seq, 5);
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 2, 2, NULL, &err), &err);
	assert_string_equal(seqs(&l), "3 4");
	assert_int_equal(l.next_seq, 4);
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 5, 2, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.next_seq, 5);
	hd_posts_dispose(&l);
	/* a cursor past the head stays where it is */
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 9, 2, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.next_seq, 9);
	hd_posts_dispose(&l);
	/* rooms are separate */
	assert_hd_ok(hd_room_read(&l, fx->st, "ops", 0, 0, NULL, &err), &err);
	assert_int_equal(l.n, 0);
	hd_posts_dispose(&l);
}

static void
test_read__default_limit_is_100_and_max_500(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	int i;

	for (i = 0; i < 520; i++)
		assert_hd_ok(
		    hd_room_post(NULL, fx->st, "dev", "user", NULL, "x", &err),
		    &err);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 0, NULL, &err), &err);
	assert_int_equal(l.n, 100);
	assert_int_equal(l.items[99].seq, 100);
	assert_int_equal(l.next_seq, 100);
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_int_equal(l.n, 500);
	assert_int_equal(l.next_seq, 500);
	hd_posts_dispose(&l);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 1, NULL, &err), &err);
	assert_string_equal(seqs(&l), "1");
	hd_posts_dispose(&l);
}

static void
test_read__refusals_have_exact_texts(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	assert_hd_err(hd_room_read(&l, fx->st, "dev", 0, 501, NULL, &err),
	    HD_EINVAL, "limit must be between 1 and 500", &err);
	assert_int_equal(l.n, 0);
	assert_hd_err(hd_room_read(&l, fx->st, "dev", 0, -1, NULL, &err),
	    HD_EINVAL, "limit must be between 1 and 500", &err);
	assert_hd_err(hd_room_read(&l, fx->st, "dev", -1, 10, NULL, &err),
	    HD_EINVAL, "since_seq must not be negative", &err);
	assert_hd_err(hd_room_read(&l, fx->st, "ghost", 0, 10, NULL, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(hd_room_read(&l, fx->st, "../etc", 0, 10, NULL, &err),
	    HD_EINVAL,
	    "invalid team name \"../etc\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
	assert_hd_err(
	    hd_room_subscribe(&l, fx->st, "dev", "coder", 0, 501, &err),
	    HD_EINVAL, "limit must be between 1 and 500", &err);
	assert_hd_err(
	    hd_room_subscribe(&l, fx->st, "dev", "coder", -3, 10, &err),
	    HD_EINVAL, "since_seq must not be negative", &err);
	assert_hd_err(
	    hd_room_subscribe(&l, fx->st, "ghost", "coder", 0, 10, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(hd_room_subscribe(&l, fx->st, "dev", NULL, 0, 10, &err),
	    HD_EINVAL, "a subscriber needs an agent", &err);
	assert_int_equal(l.n, 0);
}

/* What hd_room_read_each hands over, as "seq:author:kind:body;..." */
typedef struct each_log {
	char text[4096];
	size_t len;
	int stop_at; /* > 0: fail on this seq */
} each_log;

static int
each_add(void *ctx, const hd_post *p, hd_err *err)
{
	each_log *lg = ctx;

	if (p->seq == lg->stop_at)
		return hd_err_set(err, HD_EREFUSED, "stopped at %lld",
		    (long long)p->seq);
	assert_string_equal(p->room_id, "team:dev");
	assert_string_equal(p->team_id, "dev");
	assert_int_equal(strlen(p->id), 36);
	assert_true(p->created_at > 0);
	lg->len += (size_t)snprintf(lg->text + lg->len,
	    sizeof(lg->text) - lg->len, "%lld:%s:%s:%s;", (long long)p->seq,
	    p->author, p->kind, p->body);
	return 0;
}

static void
test_read_each__hands_over_what_read_returns(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	each_log lg;
	int64_t next = -1;

	post_as(fx, "dev", "manager coder user huddle manager");
	memset(&lg, 0, sizeof(lg));
	assert_hd_ok(hd_room_read_each(fx->st, "dev", 0, 0, NULL, each_add,
			 &lg, &next, &err),
	    &err);
	assert_string_equal(lg.text,
	    "1:manager:peer:manager says 1;2:coder:peer:coder says 2;"
	    "3:user:user:user says 3;4:huddle:system:huddle says 4;"
	    "5:manager:peer:manager says 5;");
	assert_int_equal(next, 5);
	/* since, limit and exclude as hd_room_read */
	memset(&lg, 0, sizeof(lg));
	assert_hd_ok(hd_room_read_each(fx->st, "dev", 1, 2, "coder", each_add,
			 &lg, &next, &err),
	    &err);
	assert_string_equal(
	    lg.text, "3:user:user:user says 3;4:huddle:system:huddle says 4;");
	assert_int_equal(next, 4);
	/* nothing new: the cursor stays */
	memset(&lg, 0, sizeof(lg));
	assert_hd_ok(hd_room_read_each(fx->st, "dev", 9, 0, NULL, each_add,
			 &lg, &next, &err),
	    &err);
	assert_int_equal(lg.len, 0);
	assert_int_equal(next, 9);
	/* the callback's error stops the read */
	memset(&lg, 0, sizeof(lg));
	lg.stop_at = 3;
	assert_hd_err(hd_room_read_each(fx->st, "dev", 0, 0, NULL, each_add,
			  &lg, &next, &err),
	    HD_EREFUSED, "stopped at 3", &err);
	assert_string_equal(lg.text,
	    "1:manager:peer:manager says 1;2:coder:peer:coder says 2;");
	/* refusals as hd_room_read */
	assert_hd_err(hd_room_read_each(fx->st, "ghost", 0, 0, NULL, each_add,
			  &lg, NULL, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(hd_room_read_each(fx->st, "dev", 0, 501, NULL, each_add,
			  &lg, NULL, &err),
	    HD_EINVAL, "limit must be between 1 and 500", &err);
	assert_hd_err(hd_room_read_each(fx->st, "dev", -1, 0, NULL, each_add,
			  &lg, NULL, &err),
	    HD_EINVAL, "since_seq must not be negative", &err);
	assert_hd_err(hd_room_read_each(
			  fx->st, "dev", 0, 0, NULL, NULL, &lg, NULL, &err),
	    HD_EINVAL, "a post callback is required", &err);
}

/* A team is removed with its posts or not at all, so only a room that
 * reads as empty is probed for its team: a removed team's room is not
 * found by any read, even where its posts would have matched. */
static void
test_read__removed_team_is_not_found(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	each_log lg;
	hd_posts l;

	post_as(fx, "ops", "opsbot user opsbot");
	assert_hd_ok(hd_team_remove(fx->st, "ops", 1, &err), &err);
	memset(&lg, 0, sizeof(lg));
	assert_hd_err(hd_room_read_each(fx->st, "ops", 0, 0, NULL, each_add,
			  &lg, NULL, &err),
	    HD_ENOTFOUND, "team \"ops\" not found", &err);
	assert_int_equal(lg.len, 0);
	assert_hd_err(hd_room_read(&l, fx->st, "ops", 0, 0, NULL, &err),
	    HD_ENOTFOUND, "team \"ops\" not found", &err);
	assert_hd_err(
	    hd_room_subscribe(&l, fx->st, "ops", "opsbot", 0, 10, &err),
	    HD_ENOTFOUND, "team \"ops\" not found", &err);
	/* an empty room of a team that is reads as empty */
	memset(&lg, 0, sizeof(lg));
	assert_hd_ok(hd_room_read_each(fx->st, "dev", 0, 0, "coder", each_add,
			 &lg, NULL, &err),
	    &err);
	assert_int_equal(lg.len, 0);
}

static void
test_read__exclude_author(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	post_as(fx, "dev", "manager coder coder manager");
	assert_hd_ok(
	    hd_room_read(&l, fx->st, "dev", 0, 0, "coder", &err), &err);
	assert_string_equal(seqs(&l), "1 4");
	assert_int_equal(l.next_seq, 4);
	hd_posts_dispose(&l);
	/* read's next_seq is the last returned seq, even if own posts follow */
	assert_hd_ok(
	    hd_room_read(&l, fx->st, "dev", 0, 0, "manager", &err), &err);
	assert_string_equal(seqs(&l), "2 3");
	assert_int_equal(l.next_seq, 3);
	hd_posts_dispose(&l);
}

static void
test_subscribe__echo_guard_hides_own_posts_only(void **state)
{
	hd_fixture *fx = *state;

	post_as(fx, "dev", "manager coder user huddle coder manager");
	expect_page(fx, 0, 0, "1 3 4 6", 6);
}

static void
test_subscribe__own_posts_newest_move_the_cursor_to_the_head(void **state)
{
	hd_fixture *fx = *state;

	post_as(fx, "dev", "manager coder coder");
	expect_page(fx, 0, 0, "1", 3); /* not 1: the subscriber never stalls */
	/* nothing new for coder: still the head */
	expect_page(fx, 3, 0, "", 3);
	/* a room of only own posts */
	expect_page(fx, 1, 0, "", 3);
}

static void
test_subscribe__page_cut_by_limit_stops_at_last_delivered(void **state)
{
	hd_fixture *fx = *state;

	post_as(fx, "dev", "manager manager manager manager manager coder");
	expect_page(fx, 0, 2, "1 2", 2);
	expect_page(fx, 2, 2, "3 4", 4);
	/* one other post left, then only coder's own: the head */
	expect_page(fx, 4, 2, "5", 6);
}

static void
test_subscribe__full_page_without_more_is_not_cut(void **state)
{
	hd_fixture *fx = *state;

	/* exactly `limit` posts by others, then own posts: nothing was left
	 * out, so the cursor goes to the head */
	post_as(fx, "dev", "manager manager coder coder");
	expect_page(fx, 0, 2, "1 2", 4);
	/* own posts between others, cut by the limit: the last delivered */
	post_as(fx, "dev", "manager coder manager");
	expect_page(fx, 0, 3, "1 2 5", 5);
}

static void
test_subscribe__empty_room_and_cursor_never_goes_back(void **state)
{
	hd_fixture *fx = *state;

	expect_page(fx, 0, 0, "", 0);
	expect_page(fx, 7, 0, "", 7); /* never below since_seq */
	post_as(fx, "dev", "manager coder");
	expect_page(fx, 10, 0, "", 10); /* head 2 is below the cursor */
}

static void
test_subscribe__agent_named_like_a_system_author(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_posts l;

	/* an agent called "user": the guard hides its peer posts only, never
	 * the user's posts */
	hd_fixture_team(fx, "lab", "user", "bob", NULL);
	assert_hd_ok(hd_room_post(NULL, fx->st, "lab", "peer", "user",
			 "from the agent", &err),
	    &err);
	post_as(fx, "lab", "bob");
	assert_hd_ok(hd_room_post(NULL, fx->st, "lab", "user", NULL,
			 "from a human", &err),
	    &err);
	assert_hd_ok(
	    hd_room_subscribe(&l, fx->st, "lab", "user", 0, 0, &err), &err);
	assert_string_equal(seqs(&l), "2 3");
	assert_string_equal(l.items[1].kind, "user");
	assert_int_equal(l.next_seq, 3);
	hd_posts_dispose(&l);
}

static void
test_head__counts_per_room(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t h = -1;

	post_as(fx, "dev", "manager coder manager");
	post_as(fx, "ops", "opsbot");
	assert_hd_ok(hd_room_head(&h, fx->st, "dev", &err), &err);
	assert_int_equal(h, 3);
	assert_hd_ok(hd_room_head(&h, fx->st, "ops", &err), &err);
	assert_int_equal(h, 1);
	assert_hd_err(hd_room_head(&h, fx->st, "Nope", &err), HD_EINVAL,
	    "invalid team name \"Nope\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, hd_fixture_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_read__empty_room),
	    T(test_read__since_and_limit),
	    T(test_read__default_limit_is_100_and_max_500),
	    T(test_read__refusals_have_exact_texts),
	    T(test_read__exclude_author),
	    T(test_read_each__hands_over_what_read_returns),
	    T(test_read__removed_team_is_not_found),
	    T(test_subscribe__echo_guard_hides_own_posts_only),
	    T(test_subscribe__own_posts_newest_move_the_cursor_to_the_head),
	    T(test_subscribe__page_cut_by_limit_stops_at_last_delivered),
	    T(test_subscribe__full_page_without_more_is_not_cut),
	    T(test_subscribe__empty_room_and_cursor_never_goes_back),
	    T(test_subscribe__agent_named_like_a_system_author),
	    T(test_head__counts_per_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
