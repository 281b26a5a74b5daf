/*
 * test-post.c -- hd_room_post: every rule of SPEC 5 with its exact text,
 * the seq it assigns, and the event it leaves.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/room.h>

#include <store/store.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder; ops: opsbot");
}

static int64_t
head(hd_fixture *fx, const char *team)
{
	hd_err err = HD_ERR_INIT;
	int64_t h = -1;

	assert_hd_ok(hd_room_head(&h, fx->st, team, &err), &err);
	return h;
}

static void
test_post__peer_post_is_stored_with_seq_one(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_post *p = NULL;

	assert_hd_ok(hd_room_post(&p, fx->st, "dev", "peer", "coder",
			 "hello room", &err),
	    &err);
	assert_non_null(p);
	assert_int_equal(p->seq, 1);
	assert_int_equal(strlen(p->id), 36);
	assert_string_equal(p->room_id, "team:dev");
	assert_string_equal(p->team_id, "dev");
	assert_string_equal(p->author, "coder");
	assert_string_equal(p->kind, "peer");
	assert_string_equal(p->body, "hello room");
	assert_true(p->created_at > 1700000000000LL);
	hd_post_free(p);
	assert_int_equal(head(fx, "dev"), 1);
}

static void
test_post__seqs_count_up_per_room(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_post *p = NULL;
	int i;

	for (i = 1; i <= 5; i++) {
		assert_hd_ok(hd_room_post(&p, fx->st, "dev", "peer", "manager",
				 "x", &err),
		    &err);
		assert_int_equal(p->seq, i);
		hd_post_free(p);
	}
	/* another team's room starts at 1 */
	assert_hd_ok(
	    hd_room_post(&p, fx->st, "ops", "peer", "opsbot", "y", &err), &err);
	assert_int_equal(p->seq, 1);
	assert_string_equal(p->room_id, "team:ops");
	hd_post_free(p);
	assert_int_equal(head(fx, "dev"), 5);
	assert_int_equal(head(fx, "ops"), 1);
}

/* A post's seq comes from the room's counter row (room_seqs): the posts
 * of one team's room, and only those, move it on. */
static int64_t
counter(hd_fixture *fx, const char *team)
{
	hd_err err = HD_ERR_INIT;
	int64_t n = -1;

	if (hd_store_get_int(fx->st, &n, &err,
		"SELECT seq FROM room_seqs WHERE team_id = ?1",
		HD_TEXT(team)) == 0)
		return 0; /* no row */
	return n;
}

static void
post_seq(hd_fixture *fx, const char *team, const char *author, int64_t want)
{
	hd_err err = HD_ERR_INIT;
	hd_post *p = NULL;

	assert_hd_ok(
	    hd_room_post(&p, fx->st, team, "peer", author, "x", &err), &err);
	assert_int_equal(p->seq, want);
	hd_post_free(p);
	assert_int_equal(counter(fx, team), want);
}

/* Migration 22 starts each room's counter at its last post: a store
 * whose posts were made before the counter existed goes on from them. */
static void
test_post__the_counter_starts_at_the_posts_made_before_it(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_store *st = NULL;

	if (strcmp(hd_store_backend_name(fx->st), "postgresql") == 0) {
		print_message("SQLite only: rewinds the schema with PRAGMA "
			      "user_version (unit/store/pg-schema checks "
			      "migration 22's counters on PostgreSQL)\n");
		skip();
	}
	post_seq(fx, "dev", "coder", 1);
	post_seq(fx, "dev", "manager", 2);
	post_seq(fx, "ops", "opsbot", 1);
	/* back to the schema before 22, the posts kept */
	assert_hd_ok(hd_store_exec(fx->st,
			 "DROP TABLE room_seqs;"
			 "CREATE INDEX team_chat_team ON team_chat(team_id);"
			 "PRAGMA user_version = 21",
			 &err),
	    &err);
	hd_store_close(fx->st);
	fx->st = NULL;
	assert_hd_ok(hd_store_open(&st, fx->home, &err), &err);
	fx->st = st;
	assert_int_equal(counter(fx, "dev"), 2);
	assert_int_equal(counter(fx, "ops"), 1);
	post_seq(fx, "dev", "coder", 3);
	post_seq(fx, "ops", "opsbot", 2);
	assert_int_equal(head(fx, "dev"), 3);
}

/* A purge deletes the team's counter row with its posts: the room starts
 * again at 1, as it did when seq was MAX(seq)+1. */
static void
test_post__a_purged_room_starts_again_at_one(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;

	post_seq(fx, "dev", "coder", 1);
	post_seq(fx, "dev", "coder", 2);
	post_seq(fx, "ops", "opsbot", 1);
	assert_hd_ok(hd_room_team_purge(fx->st, "dev", &err), &err);
	assert_int_equal(counter(fx, "dev"), 0);
	assert_int_equal(head(fx, "dev"), 0);
	assert_int_equal(counter(fx, "ops"), 1);
	post_seq(fx, "dev", "coder", 1);
	post_seq(fx, "ops", "opsbot", 2);
}

static void
test_post__system_and_user_authors_are_forced(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_post *p = NULL;

	assert_hd_ok(hd_room_post(&p, fx->st, "dev", "system", "coder",
			 "Task #1 \"x\" created.", &err),
	    &err);
	assert_string_equal(p->author, "huddle");
	assert_string_equal(p->kind, "system");
	hd_post_free(p);
	assert_hd_ok(
	    hd_room_post(&p, fx->st, "dev", "user", NULL, "hi team", &err),
	    &err);
	assert_string_equal(p->author, "user");
	assert_string_equal(p->kind, "user");
	assert_int_equal(p->seq, 2);
	hd_post_free(p);
	/* out may be NULL */
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "system", NULL, "z", &err), &err);
	assert_int_equal(head(fx, "dev"), 3);
}

static void
test_post__refusals_have_exact_texts(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_post *p = (hd_post *)&err; /* must come back NULL */

	assert_hd_err(hd_room_post(&p, fx->st, "dev", "x", "coder", "b", &err),
	    HD_EINVAL, "invalid post kind \"x\": use peer, system or user",
	    &err);
	assert_null(p);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "dev", "Peer", "coder", "b", &err),
	    HD_EINVAL, "invalid post kind \"Peer\": use peer, system or user",
	    &err);
	assert_hd_err(hd_room_post(&p, fx->st, "dev", NULL, "coder", "b", &err),
	    HD_EINVAL, "invalid post kind \"\": use peer, system or user",
	    &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "dev", "peer", "ghost", "b", &err),
	    HD_EREFUSED, "no member \"ghost\" in team dev", &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "dev", "peer", "opsbot", "b", &err),
	    HD_EREFUSED, "no member \"opsbot\" in team dev", &err);
	assert_hd_err(hd_room_post(&p, fx->st, "dev", "peer", NULL, "b", &err),
	    HD_EINVAL, "a peer post needs an author agent", &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "ghost", "peer", "coder", "b", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "ghost", "system", NULL, "b", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "ghost", "user", NULL, "b", &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	assert_hd_err(hd_room_post(&p, fx->st, "Dev!", "user", NULL, "b", &err),
	    HD_EINVAL,
	    "invalid team name \"Dev!\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "dev", "peer", "coder", "", &err),
	    HD_EINVAL, "post body must not be empty", &err);
	assert_hd_err(
	    hd_room_post(&p, fx->st, "dev", "peer", "coder", NULL, &err),
	    HD_EINVAL, "post body must not be empty", &err);
	assert_hd_err(hd_room_post(&p, fx->st, "dev", "peer", "coder",
			  "bad \xff byte", &err),
	    HD_EINVAL, "post body must be valid UTF-8", &err);
	assert_hd_err(hd_room_post(&p, fx->st, "dev", "peer", "coder",
			  "overlong \xc0\xaf", &err),
	    HD_EINVAL, "post body must be valid UTF-8", &err);
	assert_hd_err(hd_room_post(&p, fx->st, "dev", "peer", "coder",
			  "cut \xe4\xb8", &err),
	    HD_EINVAL, "post body must be valid UTF-8", &err);
	assert_null(p);
	/* nothing was written by any refusal */
	assert_int_equal(head(fx, "dev"), 0);
	assert_int_equal(hd_count_events(fx->st, NULL, "team_chat_post"), 0);
}

static void
test_post__body_limit_is_100000_bytes(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char *body = malloc(HD_ROOM_BODY_MAX + 3);
	hd_post *p = NULL;

	assert_non_null(body);
	memset(body, 'a', HD_ROOM_BODY_MAX + 1);
	body[HD_ROOM_BODY_MAX + 1] = '\0';
	assert_hd_err(
	    hd_room_post(&p, fx->st, "dev", "peer", "coder", body, &err),
	    HD_ETOOBIG, "post body is 100001 bytes; the limit is 100000", &err);
	body[HD_ROOM_BODY_MAX] = '\0';
	assert_hd_ok(
	    hd_room_post(&p, fx->st, "dev", "peer", "coder", body, &err), &err);
	assert_int_equal(strlen(p->body), HD_ROOM_BODY_MAX);
	hd_post_free(p);
	/* bytes, not characters: 50001 two-byte characters are too many */
	for (int i = 0; i < HD_ROOM_BODY_MAX; i += 2) {
		body[i] = '\xc3';
		body[i + 1] = '\xa9';
	}
	body[HD_ROOM_BODY_MAX] = '\0';
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "user", NULL, body, &err), &err);
	memcpy(body + HD_ROOM_BODY_MAX, "\xc3\xa9", 3);
	assert_hd_err(hd_room_post(&p, fx->st, "dev", "user", NULL, body, &err),
	    HD_ETOOBIG, "post body is 100002 bytes; the limit is 100000", &err);
	free(body);
}

static void
test_post__emits_team_chat_post_event(void **state)
{
	hd_fixture *fx = *state;
	hd_event_filter f = {0};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	char *data;

	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "peer", "coder", "a", &err),
	    &err);
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "system", NULL, "b", &err), &err);
	f.kind = "team_chat_post";
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].team_id, "dev");
	assert_string_equal(l.items[0].agent_id, "coder");
	data = json_dumps(l.items[0].data, JSON_COMPACT);
	assert_string_equal(data, "{\"seq\":1,\"roomId\":\"team:dev\","
				  "\"author\":\"coder\",\"kind\":\"peer\"}");
	free(data);
	assert_null(l.items[1].agent_id);
	data = json_dumps(l.items[1].data, JSON_COMPACT);
	assert_string_equal(data, "{\"seq\":2,\"roomId\":\"team:dev\","
				  "\"author\":\"huddle\",\"kind\":\"system\"}");
	free(data);
	hd_event_list_dispose(&l);

	/* seqs of several digits, and a user post */
	for (int i = 3; i <= 120; i++)
		assert_hd_ok(hd_room_post(NULL, fx->st, "dev", "user", NULL,
				 "c", &err),
		    &err);
	f.limit = 200;
	assert_hd_ok(hd_events_list(&l, fx->st, &f, &err), &err);
	assert_int_equal(l.n, 120);
	data = json_dumps(l.items[9].data, JSON_COMPACT);
	assert_string_equal(data, "{\"seq\":10,\"roomId\":\"team:dev\","
				  "\"author\":\"user\",\"kind\":\"user\"}");
	free(data);
	data = json_dumps(l.items[119].data, JSON_COMPACT);
	assert_string_equal(data, "{\"seq\":120,\"roomId\":\"team:dev\","
				  "\"author\":\"user\",\"kind\":\"user\"}");
	free(data);
	hd_event_list_dispose(&l);
}

static void
test_post__json_has_the_rest_shape(void **state)
{
	hd_post p = {"0b0b7a4e-1c53-4f4e-9a53-2b5b9f0f6d11", "team:dev", "dev",
	    "coder", "line 1\nline \"2\"", "peer", 1763807343123LL, 42};
	json_t *j;
	char *s;

	(void)state;
	j = hd_post_to_json(&p);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s,
	    "{\"id\":\"0b0b7a4e-1c53-4f4e-9a53-2b5b9f0f6d11\","
	    "\"roomId\":\"team:dev\",\"teamId\":\"dev\","
	    "\"authorAgentId\":\"coder\",\"body\":\"line 1\\nline \\\"2\\\"\","
	    "\"kind\":\"peer\",\"createdAt\":1763807343123,\"seq\":42}");
	free(s);
	json_decref(j);
}

static void
test_post__room_id(void **state)
{
	char id[HD_ROOM_ID_MAX];

	(void)state;
	hd_room_id(id, sizeof(id), "dev");
	assert_string_equal(id, "team:dev");
	hd_room_id(id, sizeof(id),
	    "a1234567890123456789012345678901234567890123456789");
	assert_string_equal(
	    id, "team:a1234567890123456789012345678901234567890123456789");
	/* a short buffer is cut as snprintf would cut it: len - 1 bytes */
	for (size_t len = 1; len <= 14; len++) {
		char want[16], got[16];
		size_t keep = len - 1 < 12 ? len - 1 : 12;

		memcpy(want, "team:backend", keep);
		want[keep] = '\0';
		memset(got, 'x', sizeof(got));
		hd_room_id(got, len, "backend");
		assert_string_equal(got, want);
	}
}

static void
test_post__free_functions_take_null(void **state)
{
	hd_posts l = {NULL, 0, 0};

	(void)state;
	hd_post_free(NULL);
	hd_posts_dispose(NULL);
	hd_posts_dispose(&l);
	assert_null(l.items);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_post__peer_post_is_stored_with_seq_one, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__seqs_count_up_per_room, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__the_counter_starts_at_the_posts_made_before_it,
		setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__a_purged_room_starts_again_at_one, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__system_and_user_authors_are_forced, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__refusals_have_exact_texts, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__body_limit_is_100000_bytes, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_post__emits_team_chat_post_event, setup,
		hd_fixture_teardown),
	    cmocka_unit_test(test_post__json_has_the_rest_shape),
	    cmocka_unit_test(test_post__room_id),
	    cmocka_unit_test(test_post__free_functions_take_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
