/*
 * test-mentions.c -- the pure functions of SPEC 7: the tag parser (the
 * table of the issue, each with its exact tags, targets and shared
 * context), the delivered text, the aggregate's display of tags, and the
 * routing of the user's message. Pathological inputs must parse in linear
 * time (a quadratic parser would not finish within the test's limit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/buf.h>
#include <huddle/conversation.h>

#include "testutil.h"

/* "tags: [ids|body] ...; targets: id=body ...; shared: <text>" */
static char *
describe(const char *text)
{
	hd_mentions m;
	hd_err err = HD_ERR_INIT;
	hd_buf b = HD_BUF_INIT(0);
	size_t i, j;

	assert_hd_ok(hd_mentions_parse(&m, text, strlen(text), &err), &err);
	hd_buf_puts(&b, "tags:");
	for (i = 0; i < m.ntags; i++) {
		hd_buf_puts(&b, " [");
		for (j = 0; j < m.tags[i].nids; j++)
			hd_buf_printf(
			    &b, "%s%s", j ? "," : "", m.tags[i].ids[j]);
		hd_buf_printf(&b, "|%s]", m.tags[i].body);
		/* the span is the tag, as written */
		assert_true(text[m.tags[i].start] == '[');
		assert_true(text[m.tags[i].end - 1] == ']');
	}
	hd_buf_puts(&b, "; targets:");
	for (i = 0; i < m.ntargets; i++)
		hd_buf_printf(
		    &b, " %s=%s", m.targets[i].target, m.targets[i].body);
	hd_buf_printf(&b, "; shared: %s", m.shared);
	hd_mentions_dispose(&m);
	assert_false(hd_buf_failed(&b));
	return hd_buf_detach(&b);
}

/* Parse text (a literal): its description must be want. */
#define expect_parse(text, want) hd_assert_parsed(text, describe(text), want)

static void
test_mentions__the_issue_table(void **state)
{
	(void)state;
	/* one tag */
	expect_parse("[@coder: fix the bug]",
	    "tags: [coder|fix the bug]; targets: coder=fix the bug; shared: ");
	/* shared context with two tags: every tag removed, trimmed at both
	 * ends, nothing else touched */
	expect_parse("Plan is ready. [@coder: build it] [@tester: test it] "
		     "Thanks.\n",
	    "tags: [coder|build it] [tester|test it]; targets: coder=build it "
	    "tester=test it; shared: Plan is ready.   Thanks.");
	/* several ids in one tag */
	expect_parse("[@coder,reviewer: same]",
	    "tags: [coder,reviewer|same]; targets: coder=same reviewer=same; "
	    "shared: ");
	/* spaces around ids */
	expect_parse("[@ coder , reviewer\t:  both of you  ]",
	    "tags: [coder,reviewer|both of you]; targets: coder=both of you "
	    "reviewer=both of you; shared: ");
	/* upper-case ids */
	expect_parse(
	    "[@Coder,REVIEWER: hi]", "tags: [coder,reviewer|hi]; targets: "
				     "coder=hi reviewer=hi; shared: ");
	/* nested brackets in a body */
	expect_parse("[@coder: fix a[0] and [b]] done",
	    "tags: [coder|fix a[0] and [b]]; targets: coder=fix a[0] and [b]; "
	    "shared: done");
	/* a tag inside a tag's body is part of that body */
	expect_parse("[@coder: ask [@reviewer: check it] later]",
	    "tags: [coder|ask [@reviewer: check it] later]; targets: coder=ask "
	    "[@reviewer: check it] later; shared: ");
	/* an unbalanced tag followed by a valid one: the valid one counts */
	expect_parse("[@coder: oops [@reviewer: review it]",
	    "tags: [reviewer|review it]; targets: reviewer=review it; shared: "
	    "[@coder: oops");
	/* the same target twice: the first wins */
	expect_parse("[@coder: first] then [@coder,tester: second]",
	    "tags: [coder|first] [coder,tester|second]; targets: coder=first "
	    "tester=second; shared: then");
	/* an empty body */
	expect_parse("[@coder:]", "tags: [coder|]; targets: coder=; shared: ");
	/* no colon: not a tag */
	expect_parse(
	    "[@coder no colon]", "tags:; targets:; shared: [@coder no colon]");
	/* a bare mention in prose: not a tag */
	expect_parse("ask @coder about it",
	    "tags:; targets:; shared: ask @coder about it");
	/* a body containing ':' */
	expect_parse("[@coder: note: use a:b]",
	    "tags: [coder|note: use a:b]; targets: coder=note: use a:b; "
	    "shared: ");
}

static void
test_mentions__what_is_not_a_tag(void **state)
{
	(void)state;
	expect_parse("[@: x]", "tags:; targets:; shared: [@: x]");
	expect_parse("[ @coder: x]", "tags:; targets:; shared: [ @coder: x]");
	expect_parse("[@coder,: x]", "tags:; targets:; shared: [@coder,: x]");
	expect_parse("[@co der: x]", "tags:; targets:; shared: [@co der: x]");
	expect_parse("[@coder.x: y]", "tags:; targets:; shared: [@coder.x: y]");
	expect_parse("[@coder: never closed",
	    "tags:; targets:; shared: [@coder: never closed");
	expect_parse("", "tags:; targets:; shared: ");
	expect_parse("[@", "tags:; targets:; shared: [@");
	/* a ']' before the tag does not close it; one inside closes early */
	expect_parse("] [@a: x] ]", "tags: [a|x]; targets: a=x; shared: ]  ]");
	/* an id list is cut by '[': the later tag still counts */
	expect_parse(
	    "[@a[@b: x]: y]", "tags: [b|x]; targets: b=x; shared: [@a: y]");
}

static void
test_mentions__pathological_inputs_parse_in_linear_time(void **state)
{
	size_t n = 100000, unit, i;
	hd_mentions m;
	hd_err err = HD_ERR_INIT;
	char *text;
	const char *units[] = {"[@a:[[[[", "[@a:", "[@", "[@aaaaaaaa", "]["};

	(void)state;
	for (unit = 0; unit < sizeof(units) / sizeof(units[0]); unit++) {
		size_t ul = strlen(units[unit]);

		text = malloc(n * ul + 1);
		assert_non_null(text);
		for (i = 0; i < n; i++)
			memcpy(text + i * ul, units[unit], ul);
		text[n * ul] = '\0';
		assert_hd_ok(hd_mentions_parse(&m, text, n * ul, &err), &err);
		/* nothing ever balances a tag's '[' here */
		assert_int_equal(m.ntags, 0);
		assert_string_equal(m.shared, text);
		hd_mentions_dispose(&m);
		free(text);
	}
	/* 100k nested tags that all balance: one tag, the rest its body */
	text = malloc(n * 5 + n + 1);
	assert_non_null(text);
	for (i = 0; i < n; i++)
		memcpy(text + i * 5, "[@a: ", 5);
	memset(text + n * 5, ']', n);
	text[n * 6] = '\0';
	assert_hd_ok(hd_mentions_parse(&m, text, n * 6, &err), &err);
	assert_int_equal(m.ntags, 1);
	assert_int_equal(m.tags[0].end, n * 6);
	assert_string_equal(m.shared, "");
	hd_mentions_dispose(&m);
	free(text);
}

static void
test_mentions__delivered_text(void **state)
{
	hd_err err = HD_ERR_INIT;
	char *out = NULL;

	(void)state;
	assert_hd_ok(hd_mentions_delivery(&out, "manager", "Hosting now.",
			 "what did you ship?", 0, &err),
	    &err);
	assert_string_equal(out, "[Message from teammate @manager]:\nHosting "
				 "now.\n\n------\n\nDirected to you:\nwhat did "
				 "you ship?");
	free(out);
	assert_hd_ok(
	    hd_mentions_delivery(&out, "manager", "", "ship?", 0, &err), &err);
	assert_string_equal(out, "[Message from teammate @manager]:\nship?");
	free(out);
	assert_hd_ok(
	    hd_mentions_delivery(&out, "manager", NULL, "ship?", 2, &err),
	    &err);
	assert_string_equal(out,
	    "[Message from teammate @manager]:\nship?\n\n------\n\n[2 other "
	    "teammate response(s) are still being processed and will be "
	    "delivered when ready. Do not re-mention teammates who haven't "
	    "responded yet.]");
	free(out);
	assert_hd_ok(
	    hd_mentions_delivery(&out, "coder", "ctx", "b", 1, &err), &err);
	assert_string_equal(out,
	    "[Message from teammate @coder]:\nctx\n\n------\n\nDirected to "
	    "you:\nb\n\n------\n\n[1 other teammate response(s) are still "
	    "being processed and will be delivered when ready. Do not "
	    "re-mention teammates who haven't responded yet.]");
	free(out);
}

static void
test_mentions__display_rewrites_each_tag(void **state)
{
	hd_err err = HD_ERR_INIT;
	char *out = NULL;

	(void)state;
	assert_hd_ok(hd_mentions_display(&out,
			 "Hosting. [@Coder , reviewer: x [y]] and [@tester:] "
			 "[@nope] end",
			 &err),
	    &err);
	assert_string_equal(out, "Hosting. \xe2\x86\x92 @coder,reviewer: x [y] "
				 "and \xe2\x86\x92 @tester: [@nope] end");
	free(out);
	assert_hd_ok(hd_mentions_display(&out, "plain", &err), &err);
	assert_string_equal(out, "plain");
	free(out);
}

static void
expect_route(const char *msg, const char *leader, const char *agent,
    const char *text, const char *dropped)
{
	static const char *const members[] = {"manager", "coder", "reviewer"};
	hd_conversation_route_result r;

	hd_conversation_route(&r, msg, "dev", members, 3, leader);
	if (agent == NULL)
		assert_null(r.agent);
	else {
		assert_non_null(r.agent);
		assert_string_equal(r.agent, agent);
	}
	assert_string_equal(msg + r.offset, text);
	assert_string_equal(r.dropped, dropped);
}

static void
test_mentions__routing_the_user_message(void **state)
{
	(void)state;
	expect_route("@coder fix it", "manager", "coder", "fix it", "");
	expect_route("@Coder   fix it", "manager", "coder", "fix it", "");
	expect_route("@dev all hands", "manager", "manager", "all hands", "");
	expect_route("@manager hi", "manager", "manager", "hi", "");
	expect_route("hello team", "manager", "manager", "hello team", "");
	expect_route("hi @coder", "manager", "manager", "hi @coder", "");
	expect_route("@coder", "manager", "manager", "@coder", "");
	expect_route("@coder: hi", "manager", "manager", "@coder: hi", "");
	expect_route("@ghost hi", "manager", "manager", "@ghost hi", "ghost");
	expect_route("hello", NULL, NULL, "hello", "");
	expect_route("@coder hi", NULL, "coder", "hi", "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mentions__the_issue_table),
	    cmocka_unit_test(test_mentions__what_is_not_a_tag),
	    cmocka_unit_test(
		test_mentions__pathological_inputs_parse_in_linear_time),
	    cmocka_unit_test(test_mentions__delivered_text),
	    cmocka_unit_test(test_mentions__display_rewrites_each_tag),
	    cmocka_unit_test(test_mentions__routing_the_user_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
