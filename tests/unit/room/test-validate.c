/*
 * test-validate.c -- one validation rule for room posts on every surface.
 * The table below mirrors the ones in tests/e2e/test-post-validate.sh (CLI
 * and REST) and tests/e2e/mcp.test.mjs (team_chat_post): the same bad
 * inputs, the same error text, because every surface hands the body to
 * hd_room_post / hd_room_post_many untouched. Keep the three in step.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/room.h>
#include <huddle/util.h>

#include "testutil.h"

#define TOO_LONG "@too-long" /* stands for HD_ROOM_BODY_MAX + 1 bytes */

typedef struct bad_post {
	const char *name;
	const char *team;
	const char *author;
	const char *body;
	int code;
	const char *want;
} bad_post;

static const bad_post bad_posts[] = {
    {"empty", "dev", "coder", "", HD_EINVAL, "post body must not be empty"},
    {"spaces", "dev", "coder", "   ", HD_EINVAL, "post body must not be empty"},
    {"whitespace mix", "dev", "coder", " \t\r\n\v\f", HD_EINVAL,
	"post body must not be empty"},
    {"newlines", "dev", "coder", "\n\n", HD_EINVAL,
	"post body must not be empty"},
    {"too long", "dev", "coder", TOO_LONG, HD_ETOOBIG,
	"post body is 100001 bytes; the limit is 100000"},
    {"invalid utf-8", "dev", "coder", "bad \xff byte", HD_EINVAL,
	"post body must be valid UTF-8"},
    {"unknown team", "ghost", "coder", "hello", HD_ENOTFOUND,
	"team \"ghost\" not found"},
    {"non-member author", "dev", "sre", "hello", HD_EREFUSED,
	"no member \"sre\" in team dev"},
};

#define NBAD (sizeof(bad_posts) / sizeof(bad_posts[0]))

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder; ops: sre");
}

/* The row's body; TOO_LONG becomes a fresh body one byte over the limit. */
static char *
body_of(const bad_post *b)
{
	char *s;

	if (strcmp(b->body, TOO_LONG) != 0)
		return strdup(b->body);
	if ((s = malloc(HD_ROOM_BODY_MAX + 2)) == NULL)
		return NULL;
	memset(s, 'a', HD_ROOM_BODY_MAX + 1);
	s[HD_ROOM_BODY_MAX + 1] = '\0';
	return s;
}

static void
test_validate__post_refuses_the_table(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t h = -1;
	size_t i;

	for (i = 0; i < NBAD; i++) {
		char *body = body_of(&bad_posts[i]);
		hd_post *p = NULL;

		assert_non_null(body);
		print_message("%s\n", bad_posts[i].name);
		assert_hd_err(hd_room_post(&p, fx->st, bad_posts[i].team,
				  "peer", bad_posts[i].author, body, &err),
		    bad_posts[i].code, bad_posts[i].want, &err);
		assert_null(p);
		free(body);
	}
	assert_hd_ok(hd_room_head(&h, fx->st, "dev", &err), &err);
	assert_int_equal(h, 0);
}

/* The group commit's path (room/batch.c): each refusal fails alone, with
 * the text hd_room_post gives, and the good post between them commits. */
static void
test_validate__post_many_refuses_the_table(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_post_req reqs[NBAD + 1];
	char *bodies[NBAD];
	size_t i;

	memset(reqs, 0, sizeof(reqs));
	for (i = 0; i < NBAD; i++) {
		bodies[i] = body_of(&bad_posts[i]);
		assert_non_null(bodies[i]);
		reqs[i].team = bad_posts[i].team;
		reqs[i].kind = "peer";
		reqs[i].author = bad_posts[i].author;
		reqs[i].body = bodies[i];
	}
	reqs[NBAD].team = "dev";
	reqs[NBAD].kind = "peer";
	reqs[NBAD].author = "coder";
	reqs[NBAD].body = " ok ";
	assert_hd_ok(hd_room_post_many(fx->st, reqs, NBAD + 1, &err), &err);
	for (i = 0; i < NBAD; i++) {
		print_message("%s\n", bad_posts[i].name);
		assert_int_equal(reqs[i].rc, bad_posts[i].code);
		assert_string_equal(reqs[i].err.msg, bad_posts[i].want);
		assert_null(reqs[i].out);
		free(bodies[i]);
	}
	assert_int_equal(reqs[NBAD].rc, 0);
	assert_int_equal(reqs[NBAD].out->seq, 1);
	assert_string_equal(reqs[NBAD].out->body, " ok ");
	hd_post_free(reqs[NBAD].out);
}

/* Exactly the six ASCII whitespace characters are blank; text around
 * them, other Unicode spaces and a NUL inside the length are not. */
static void
test_validate__blank_is_ascii_whitespace(void **state)
{
	(void)state;
	assert_true(hd_text_blank("", 0));
	assert_true(hd_text_blank(NULL, 0));
	assert_true(hd_text_blank(" \t\n\v\f\r", 6));
	assert_false(hd_text_blank(" x ", 3));
	assert_false(hd_text_blank("\xc2\xa0", 2));     /* U+00A0 */
	assert_false(hd_text_blank("\xe3\x80\x80", 3)); /* U+3000 */
	assert_false(hd_text_blank(" \0 ", 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_validate__post_refuses_the_table, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_validate__post_many_refuses_the_table, setup,
		hd_fixture_teardown),
	    cmocka_unit_test(test_validate__blank_is_ascii_whitespace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
