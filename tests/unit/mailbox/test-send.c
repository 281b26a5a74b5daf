/*
 * test-send.c -- sending, broadcasting, peeking and reading mailboxes
 * (SPEC 6): the rules with their exact texts, automatic summaries, order
 * and delivery.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/mailbox.h>

#include "testutil.h"
#include "store/store.h"

static hd_message_spec
spec_of(const char *from, const char *to, const char *content)
{
	hd_message_spec s;

	memset(&s, 0, sizeof(s));
	s.team = "msg-team";
	s.from = from;
	s.to = to;
	s.content = content;
	s.approve = -1;
	return s;
}

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "msg-team: lead worker-1 worker-2");
}

static void
test_send__stores_and_reads_back_once(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "lead", "tests pass");
	hd_message *m = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_mailbox_send(&m, fx->st, &s, &err), &err);
	assert_true(m->id > 0);
	assert_string_equal(m->type, "message");
	assert_string_equal(m->from_agent, "worker-1");
	assert_string_equal(m->to_agent, "lead");
	assert_string_equal(m->summary, "tests pass");
	assert_int_equal(m->approve, -1);
	assert_int_equal(m->delivered_at, 0);

	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, m->id);
	assert_int_equal(l.items[0].delivered_at, 0);
	hd_messages_dispose(&l);

	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].id, m->id);
	assert_string_equal(l.items[0].content, "tests pass");
	assert_true(l.items[0].delivered_at > 0);
	hd_messages_dispose(&l);

	/* delivered exactly once */
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 0);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 0);
	hd_message_free(m);
}

static void
test_send__read_is_oldest_first_and_honours_limit(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char text[16];
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "m%d", i);
		s = spec_of(i % 2 ? "worker-1" : "worker-2", "lead", text);
		assert_hd_ok(hd_mailbox_send(NULL, fx->st, &s, &err), &err);
	}
	/* another inbox is untouched */
	s = spec_of("lead", "worker-1", "other");
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &s, &err), &err);

	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 2, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].content, "m0");
	assert_string_equal(l.items[1].content, "m1");
	hd_messages_dispose(&l);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.items[0].content, "m2");
	assert_string_equal(l.items[2].content, "m4");
	hd_messages_dispose(&l);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.items[0].content, "m2");
	hd_messages_dispose(&l);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "worker-1", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].content, "other");
	assert_string_equal(l.items[0].from_agent, "lead");
	hd_messages_dispose(&l);
}

static void
test_send__recipient_must_be_a_member(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "wrker-1", "hello");
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EREFUSED,
	    "no member \"wrker-1\" in team msg-team", &err);
	/* an agent of another team is no member either */
	hd_fixture_team(fx, "other", "stranger", NULL);
	s.to = "stranger";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EREFUSED,
	    "no member \"stranger\" in team msg-team", &err);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "stranger", 0, &err), &err);
	assert_int_equal(l.n, 0);
}

static void
test_send__sender_must_be_a_member(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("ghost", "lead", "hello");
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EREFUSED,
	    "no member \"ghost\" in team msg-team", &err);
	s.team = "nope";
	s.from = "lead";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_ENOTFOUND,
	    "team \"nope\" not found", &err);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 0);
}

static void
test_send__content_limits(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "lead", "");
	hd_message *m = NULL;
	hd_err err = HD_ERR_INIT;
	char *big = malloc(HD_MESSAGE_MAX + 2);

	assert_non_null(big);
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "message must not be empty", &err);
	s.content = NULL;
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "message must not be empty", &err);
	s.content = " \t\r\n\v\f"; /* blank is empty (hd_text_blank) */
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "message must not be empty", &err);
	memset(big, 'a', HD_MESSAGE_MAX + 1);
	big[HD_MESSAGE_MAX + 1] = '\0';
	s.content = big;
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_ETOOBIG,
	    "message is 100001 bytes; the limit is 100000", &err);
	big[HD_MESSAGE_MAX] = '\0'; /* exactly the limit is fine */
	assert_hd_ok(hd_mailbox_send(&m, fx->st, &s, &err), &err);
	assert_int_equal(strlen(m->content), HD_MESSAGE_MAX);
	hd_message_free(m);
	s.content = "caf\xc3";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "message must be valid UTF-8", &err);
	free(big);
}

static void
test_send__type_rules(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "lead", "x");
	hd_err err = HD_ERR_INIT;
	const char *ok[] = {"message", "broadcast", "shutdown_request",
	    "shutdown_response", "idle", "task_update", "mention"};
	hd_messages l = {0};
	size_t i;

	s.type = "chat";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "invalid message type \"chat\": use message, broadcast, "
	    "shutdown_request, shutdown_response, idle, task_update or mention",
	    &err);
	s.type = "shutdown_request";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "shutdown_request needs a request_id", &err);
	s.type = "shutdown_response";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "shutdown_response needs a request_id", &err);
	s.request_id = "shutdown-1";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "shutdown_response needs approve (true or false)", &err);
	s.approve = 0;
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_EINVAL,
	    "a refused shutdown needs a reason", &err);
	/* a response to a request the team never had goes nowhere */
	s.reason = "busy";
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &s, &err), HD_ENOTFOUND,
	    "no shutdown request \"shutdown-1\" in team msg-team", &err);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 0);

	/* every other type is accepted as is */
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (strcmp(ok[i], "shutdown_response") == 0)
			continue;
		s = spec_of("worker-1", "lead", ok[i]);
		s.type = ok[i];
		s.request_id = "r-1";
		assert_hd_ok(hd_mailbox_send(NULL, fx->st, &s, &err), &err);
	}
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 6);
	for (i = 0; i < l.n; i++)
		assert_string_equal(l.items[i].type, l.items[i].content);
	hd_messages_dispose(&l);
}

static void
test_send__fields_round_trip(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "lead", "hello");
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	json_t *j;

	s.type = "mention";
	s.summary = "greeting";
	s.request_id = "req-7";
	s.approve = 1;
	s.reason = "because";
	s.conversation_id = "conv-1";
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &s, &err), &err);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].team_id, "msg-team");
	assert_string_equal(l.items[0].type, "mention");
	assert_string_equal(l.items[0].summary, "greeting");
	assert_string_equal(l.items[0].request_id, "req-7");
	/* approve belongs to shutdown_response alone */
	assert_int_equal(l.items[0].approve, -1);
	assert_string_equal(l.items[0].reason, "because");
	assert_string_equal(l.items[0].conversation_id, "conv-1");
	assert_true(l.items[0].created_at > 0);
	j = hd_message_to_json(&l.items[0]);
	assert_string_equal(
	    json_string_value(json_object_get(j, "from_agent")), "worker-1");
	assert_string_equal(
	    json_string_value(json_object_get(j, "to_agent")), "lead");
	assert_true(json_is_null(json_object_get(j, "approve")));
	assert_int_equal(
	    json_integer_value(json_object_get(j, "id")), l.items[0].id);
	json_decref(j);
	hd_messages_dispose(&l);
}

static void
test_send__automatic_summary(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "lead",
	    "one two three four five six seven eight nine ten eleven twelve");
	hd_message *m = NULL;
	hd_err err = HD_ERR_INIT;
	char *sum;

	assert_hd_ok(hd_mailbox_send(&m, fx->st, &s, &err), &err);
	assert_string_equal(
	    m->summary, "one two three four five six seven eight nine ten...");
	hd_message_free(m);

	/* ten words or fewer: the content, as it is */
	sum = hd_mailbox_summary("  one two\nthree four five six seven eight "
				 "nine ten  ");
	assert_string_equal(sum, "  one two\nthree four five six seven eight "
				 "nine ten  ");
	free(sum);
	sum = hd_mailbox_summary("short");
	assert_string_equal(sum, "short");
	free(sum);
	/* more than ten: the first ten, single-spaced, then "..." */
	sum = hd_mailbox_summary("\ta  b\nc d e f g h i j k");
	assert_string_equal(sum, "a b c d e f g h i j...");
	free(sum);
	/* a given summary wins; an empty one means "make one" */
	s.summary = "mine";
	assert_hd_ok(hd_mailbox_send(&m, fx->st, &s, &err), &err);
	assert_string_equal(m->summary, "mine");
	hd_message_free(m);
	s.summary = "";
	s.content = "hi there";
	assert_hd_ok(hd_mailbox_send(&m, fx->st, &s, &err), &err);
	assert_string_equal(m->summary, "hi there");
	hd_message_free(m);
}

static void
test_broadcast__one_copy_to_each_other_member(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", NULL, "standup in 5");
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	size_t n = 99;

	assert_hd_ok(hd_mailbox_broadcast(&n, fx->st, &s, &err), &err);
	assert_int_equal(n, 2);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "lead", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].type, "broadcast");
	assert_string_equal(l.items[0].from_agent, "worker-1");
	assert_string_equal(l.items[0].content, "standup in 5");
	hd_messages_dispose(&l);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "worker-2", 0, &err), &err);
	assert_int_equal(l.n, 1);
	hd_messages_dispose(&l);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "worker-1", 0, &err), &err);
	assert_int_equal(l.n, 0); /* not to the sender */

	s.from = "ghost";
	assert_hd_err(hd_mailbox_broadcast(&n, fx->st, &s, &err), HD_EREFUSED,
	    "no member \"ghost\" in team msg-team", &err);
	assert_int_equal(n, 0);
}

static void
test_read__unknown_agent_and_bad_limit(void **state)
{
	hd_fixture *fx = *state;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_mailbox_read(&l, fx->st, "nobody", 0, &err),
	    HD_ENOTFOUND, "agent \"nobody\" not found", &err);
	assert_hd_err(hd_mailbox_peek(&l, fx->st, "nobody", 0, &err),
	    HD_ENOTFOUND, "agent \"nobody\" not found", &err);
	assert_hd_err(hd_mailbox_read(&l, fx->st, "lead", -1, &err), HD_EINVAL,
	    "limit must be between 0 (all) and 10000, not -1", &err);
	assert_hd_err(hd_mailbox_read(&l, fx->st, "Bad Name", 0, &err),
	    HD_EINVAL,
	    "invalid agent name \"Bad Name\": use 1-50 lowercase letters, "
	    "digits, '-' or '_'",
	    &err);
}

struct batch {
	int n;
};

static int
batch_txn(hd_store *st, void *payload, hd_err *err)
{
	struct batch *b = payload;
	hd_message_spec s = spec_of("lead", "worker-2", "batched");
	int i, rc;

	for (i = 0; i < b->n; i++)
		if ((rc = hd_mailbox_send(NULL, st, &s, err)) < 0)
			return rc;
	if (b->n == 3)
		return hd_err_set(err, HD_EREFUSED, "changed my mind");
	return 0;
}

static void
test_send__inside_a_callers_transaction(void **state)
{
	hd_fixture *fx = *state;
	struct batch b = {2};
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_store_write(fx->st, batch_txn, &b, &err), &err);
	/* the caller's rollback takes the messages with it */
	b.n = 3;
	assert_hd_err(hd_store_write(fx->st, batch_txn, &b, &err), HD_EREFUSED,
	    "changed my mind", &err);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "worker-2", 0, &err), &err);
	assert_int_equal(l.n, 2);
	hd_messages_dispose(&l);
}

static void
test_send__emits_message_sent(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec s = spec_of("worker-1", "lead", "ping");
	hd_message *m = NULL;
	hd_event_filter f = {0};
	hd_event_list ev = {0};
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_mailbox_send(&m, fx->st, &s, &err), &err);
	f.kind = "message_sent";
	assert_hd_ok(hd_events_list(&ev, fx->st, &f, &err), &err);
	assert_int_equal(ev.n, 1);
	assert_string_equal(ev.items[0].team_id, "msg-team");
	assert_string_equal(ev.items[0].agent_id, "worker-1");
	assert_int_equal(
	    json_integer_value(json_object_get(ev.items[0].data, "id")), m->id);
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[0].data, "to")), "lead");
	hd_event_list_dispose(&ev);
	hd_message_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_send__stores_and_reads_back_once, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__read_is_oldest_first_and_honours_limit, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__recipient_must_be_a_member, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__sender_must_be_a_member, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__content_limits, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__type_rules, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__fields_round_trip, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__automatic_summary, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_broadcast__one_copy_to_each_other_member, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_read__unknown_agent_and_bad_limit, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__inside_a_callers_transaction, setup,
		hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_send__emits_message_sent, setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
