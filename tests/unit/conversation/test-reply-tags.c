/*
 * test-reply-tags.c -- the pure functions of a reply's room and file tags: the
 * `[#team: ...]` and `[send_file: ...]` parser (what is a tag, what is
 * not, tags inside a mention's body left to the mention) and the long
 * answer's cut at a character boundary with its note.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/conversation.h>

#include "testutil.h"

/* "room(<team>|<body>) file(<path>) ...", each span checked. */
static char *
describe(const char *text)
{
	hd_reply_tags t;
	hd_err err = HD_ERR_INIT;
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	assert_hd_ok(hd_reply_tags_parse(&t, text, strlen(text), &err), &err);
	for (i = 0; i < t.n; i++) {
		if (t.tags[i].kind == HD_REPLY_TAG_ROOM)
			hd_buf_printf(&b, "%sroom(%s|%s)", i ? " " : "",
			    t.tags[i].team, t.tags[i].body);
		else
			hd_buf_printf(
			    &b, "%sfile(%s)", i ? " " : "", t.tags[i].body);
		assert_true(text[t.tags[i].start] == '[');
		assert_true(text[t.tags[i].end - 1] == ']');
	}
	hd_reply_tags_dispose(&t);
	hd_buf_puts(&b, "");
	assert_false(hd_buf_failed(&b));
	return hd_buf_detach(&b);
}

/* Parse text (a literal): its description must be want. */
#define expect_parse(text, want) hd_assert_parsed(text, describe(text), want)

static void
test_reply_tags__room_and_file_tags(void **state)
{
	(void)state;
	expect_parse("[#dev: build is green]", "room(dev|build is green)");
	expect_parse(
	    "Done. [# Dev :  shipped it  ] and more", "room(dev|shipped it)");
	expect_parse("[#dev:]", "room(dev|)");
	expect_parse("see [send_file: out/report.md]", "file(out/report.md)");
	expect_parse("[send_file:/tmp/a b.txt]", "file(/tmp/a b.txt)");
	expect_parse("[#dev: a [nested] note] [send_file: x[1].txt]",
	    "room(dev|a [nested] note) file(x[1].txt)");
	/* a tag in a tag's body is part of that body */
	expect_parse("[#dev: look [send_file: a.txt]]",
	    "room(dev|look [send_file: a.txt])");
}

static void
test_reply_tags__what_is_not_a_tag(void **state)
{
	(void)state;
	expect_parse("[#dev no colon]", "");
	expect_parse("[#: x]", "");
	expect_parse("[ #dev: x]", "");
	expect_parse("[#dev,ops: x]", "");
	expect_parse("[send_file x.txt]", "");
	expect_parse("[SEND_FILE: x.txt]", "");
	expect_parse("[#dev: never closed", "");
	expect_parse("#dev: plain prose", "");
	/* scanning resumes right after a failed '[' */
	expect_parse("[[#dev: x]", "room(dev|x)");
	/* inside a mention's body: the teammate's, not ours */
	expect_parse("[@coder: post [#dev: hi] and [send_file: a.txt]] "
		     "[#dev: mine]",
	    "room(dev|mine)");
}

static void
expect_cut(const char *text, size_t max, const char *want)
{
	hd_err err = HD_ERR_INIT;
	char *got = NULL;

	assert_hd_ok(
	    hd_conversation_cut(&got, text, max, "answer-3.md", &err), &err);
	if (want == NULL)
		assert_null(got);
	else
		assert_string_equal(got, want);
	free(got);
}

static void
test_reply_tags__a_long_answer_is_cut_at_a_character(void **state)
{
	char *big;
	size_t i;

	(void)state;
	expect_cut("abcd", 4, NULL);
	expect_cut("abcde", 4,
	    "abcd\xe2\x80\xa6 [the full answer, 5 characters, is attached as "
	    "answer-3.md]");
	/* é and € are one character each: never split */
	expect_cut("\xc3\xa9\xc3\xa9\xe2\x82\xac\xe2\x82\xac", 3,
	    "\xc3\xa9\xc3\xa9\xe2\x82\xac\xe2\x80\xa6 [the full answer, 4 "
	    "characters, is attached as answer-3.md]");
	expect_cut("\xc3\xa9\xc3\xa9\xe2\x82\xac", 3, NULL);
	big = malloc(12346);
	assert_non_null(big);
	for (i = 0; i < 12345; i++)
		big[i] = 'x';
	big[12345] = '\0';
	{
		hd_err err = HD_ERR_INIT;
		char *got = NULL;

		assert_hd_ok(
		    hd_conversation_cut(&got, big, HD_CONVERSATION_ANSWER_MAX,
			"answer-3.md", &err),
		    &err);
		assert_int_equal(strncmp(got, big, 4000), 0);
		assert_string_equal(got + 4000,
		    "\xe2\x80\xa6 [the full answer, 12,345 characters, is "
		    "attached as answer-3.md]");
		free(got);
	}
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reply_tags__room_and_file_tags),
	    cmocka_unit_test(test_reply_tags__what_is_not_a_tag),
	    cmocka_unit_test(
		test_reply_tags__a_long_answer_is_cut_at_a_character),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
