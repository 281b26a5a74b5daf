/*
 * test-budget.c -- the prompt budget of the room catch-up (prompt.h): a
 * long post cut to 800 characters with "…" on a character boundary, a busy
 * room whose catch-up stops at 4,000 characters with the first post that
 * does not fit, and a cursor that resumes right after the last post shown,
 * so every post is delivered exactly once across prompts.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/prompt.h>
#include <huddle/room.h>

#include "testutil.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define HEAD1                                                                  \
	"[Inter-session message \xc2\xb7 from=manager \xc2\xb7 kind=peer "     \
	"\xc2\xb7 seq=1 \xc2\xb7 isUser=false]\n| "

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder tester");
}

/* coder's prompt after since; room_chars and post_chars 0: the defaults. */
static void
build(hd_fixture *fx, hd_prompt *p, int64_t since, size_t room_chars,
    size_t post_chars)
{
	hd_agent *a = NULL;
	hd_prompt_spec ps;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	memset(&ps, 0, sizeof(ps));
	ps.team = "dev";
	ps.agent = a;
	ps.since_seq = since;
	ps.request = "Go on.";
	ps.room_chars = room_chars;
	ps.post_chars = post_chars;
	assert_hd_ok(hd_prompt_build(p, fx->st, &ps, &err), &err);
	hd_agent_free(a);
}

static size_t
chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* The catch-up of p: from the end of the standing context to the cut note
 * or the request. */
static size_t
catchup_chars(const hd_prompt *p)
{
	const char *end = strstr(p->text, "\n\n" HD_PROMPT_ROOM_CUT);

	if (end == NULL)
		end = p->text + p->request_off - 2;
	return chars(p->text + p->context_len,
	    (size_t)(end - (p->text + p->context_len)));
}

static void
post(hd_fixture *fx, const char *author, const char *body)
{
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "peer", author, body, &err),
	    &err);
}

/* 5,000 two-byte characters: 799 of them and "…", cut between
 * characters, never inside one. */
static void
test_budget__a_long_post_is_cut_to_800_characters(void **state)
{
	hd_fixture *fx = *state;
	char *body = malloc(5000 * 2 + 1), *want;
	hd_prompt p;
	int i;

	assert_non_null(body);
	for (i = 0; i < 5000; i++)
		memcpy(body + 2 * i, "\xc3\xa9", 2); /* é */
	body[10000] = '\0';
	post(fx, "manager", body);
	build(fx, &p, 0, 0, 0);

	want = malloc(4096);
	assert_non_null(want);
	memcpy(want, HEAD1, strlen(HEAD1));
	i = (int)strlen(HEAD1);
	memcpy(want + i, body, 799 * 2);
	i += 799 * 2;
	memcpy(want + i, ELLIPSIS "\n\nGo on.", sizeof(ELLIPSIS "\n\nGo on."));
	assert_string_equal(p.text + p.context_len + 2, want);
	assert_int_equal(p.seen, 1);
	assert_int_equal(p.room_posts, 1);
	assert_int_equal(p.room_cut, 0);
	hd_prompt_dispose(&p);

	/* a post of exactly 800 characters is shown whole */
	body[1600] = '\0';
	post(fx, "manager", body);
	build(fx, &p, 1, 0, 0);
	assert_non_null(strstr(p.text, body));
	assert_null(strstr(p.text, ELLIPSIS));
	hd_prompt_dispose(&p);
	free(want);
	free(body);
}

/* 40 posts of 300 characters by manager and tester, with coder's own in
 * between: each prompt's catch-up keeps to 4,000 characters and stops at
 * the first post that does not fit; the next prompt starts right after
 * the last post shown. Across the prompts every post by the others comes
 * exactly once, in order, and coder's own never. */
static void
test_budget__a_busy_room_is_delivered_in_budgeted_pieces(void **state)
{
	hd_fixture *fx = *state;
	char body[301], seqtxt[32];
	int64_t since = 0, want_next = 1;
	size_t prompts = 0, total = 0;
	hd_prompt p;
	int i;

	for (i = 1; i <= 40; i++) {
		memset(body, 'a' + i % 26, 300);
		body[300] = '\0';
		post(fx,
		    i % 7 == 0 ? "coder"
		    : i % 2    ? "manager"
			       : "tester",
		    body);
	}
	for (;;) {
		const char *at;
		size_t n = 0;

		build(fx, &p, since, 0, 0);
		prompts++;
		assert_true(catchup_chars(&p) <= HD_PROMPT_ROOM_CHARS);
		for (at = p.text; (at = strstr(at, " seq=")) != NULL; at++) {
			int64_t seq = strtoll(at + 5, NULL, 10);

			while (want_next % 7 == 0) /* coder's own: never */
				want_next++;
			assert_int_equal(seq, want_next);
			want_next++;
			n++;
		}
		assert_int_equal(n, p.room_posts);
		total += n;
		if (n == 0) {
			assert_int_equal(p.seen, since);
			hd_prompt_dispose(&p);
			break;
		}
		/* the cursor is the last post shown, not the room's head */
		snprintf(
		    seqtxt, sizeof(seqtxt), " seq=%lld ", (long long)p.seen);
		assert_non_null(strstr(p.text, seqtxt));
		if (p.room_cut) {
			assert_non_null(strstr(p.text, HD_PROMPT_ROOM_CUT));
			/* the next post would not have fitted: the smallest
			 * is "\n\n", tester's 73-character header, "\n| " and
			 * 300 characters */
			assert_true(catchup_chars(&p) + 2 + 73 + 3 + 300 >
				    HD_PROMPT_ROOM_CHARS);
		} else
			assert_null(strstr(p.text, HD_PROMPT_ROOM_CUT));
		since = p.seen;
		hd_prompt_dispose(&p);
	}
	assert_int_equal(total, 40 - 5); /* 7, 14, 21, 28, 35 are coder's */
	assert_true(prompts >= 4);       /* 35 x ~380 chars in 4,000 pieces */
}

/* The two numbers come from the spec, else the environment: a catch-up
 * budget smaller than one post still shows that post (cut to
 * post_chars), one per prompt. */
static void
test_budget__the_numbers_are_configurable(void **state)
{
	hd_fixture *fx = *state;
	hd_prompt p;

	post(fx, "manager", "0123456789abcdef");
	post(fx, "tester", "short");
	build(fx, &p, 0, 10, 8);
	assert_non_null(strstr(p.text, "isUser=false]\n| 0123456" ELLIPSIS
				       "\n\n" HD_PROMPT_ROOM_CUT "\n\nGo on."));
	assert_int_equal(p.seen, 1);
	assert_int_equal(p.room_posts, 1);
	assert_int_equal(p.room_cut, 1);
	hd_prompt_dispose(&p);
	build(fx, &p, 1, 10, 8);
	assert_non_null(strstr(p.text, "isUser=false]\n| short\n\nGo on."));
	assert_int_equal(p.seen, 2);
	assert_int_equal(p.room_cut, 0);
	hd_prompt_dispose(&p);

	/* or from the environment when the spec leaves them 0 */
	setenv("HUDDLE_PROMPT_ROOM_CHARS", "10", 1);
	setenv("HUDDLE_PROMPT_POST_CHARS", "8", 1);
	build(fx, &p, 0, 0, 0);
	unsetenv("HUDDLE_PROMPT_ROOM_CHARS");
	unsetenv("HUDDLE_PROMPT_POST_CHARS");
	assert_non_null(strstr(p.text, "isUser=false]\n| 0123456" ELLIPSIS
				       "\n\n" HD_PROMPT_ROOM_CUT "\n\nGo on."));
	assert_int_equal(p.seen, 1);
	hd_prompt_dispose(&p);
	/* the spec wins over the environment; nonsense there is ignored */
	setenv("HUDDLE_PROMPT_POST_CHARS", "lots", 1);
	build(fx, &p, 0, 0, 0);
	unsetenv("HUDDLE_PROMPT_POST_CHARS");
	assert_non_null(strstr(p.text, "| 0123456789abcdef\n\n"));
	assert_int_equal(p.seen, 2);
	hd_prompt_dispose(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_budget__a_long_post_is_cut_to_800_characters, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_budget__a_busy_room_is_delivered_in_budgeted_pieces, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_budget__the_numbers_are_configurable, setup,
		hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
