/*
 * test-cancel.c -- cancelling conversations (cancel.h): a conversation
 * whose engine runs is cancelled by a request its engine sees, which stops
 * the running turn, marks the unanswered message cancelled and ends the
 * conversation `cancelled` with the replies so far (response, transcript,
 * conversation_cancelled event); the agent is idle, not error, and takes
 * work again. A conversation no engine runs is ended by the request
 * itself. Refusals: unknown, already ended; an exchange cancel with none
 * running.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/cancel.h>

#include "conv-test.h"

static void
start(hd_fixture *fx, hd_conversation_engine *e, char id[37])
{
	hd_conversation_spec spec = {"dev", "fan out", "test"};
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_conversation_start(id, e, fx->st, &spec, &err), &err);
}

static void
test_cancel__a_running_turn_is_stopped_and_the_replies_kept(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	char id[37], id2[37], path[4096];
	int ended = -1;

	ct_slow_team(fx);
	e = ct_engine(fx, NULL);
	start(fx, e, id);
	ct_wait_coder_running(fx, id);
	hd_assert_agent_status(fx, "coder", "working");
	assert_hd_ok(hd_conversation_cancel(&ended, fx->st, id, NULL, &err),
	    &err);
	assert_int_equal(ended, 0); /* its engine ends it */
	assert_hd_ok(
	    hd_conversation_cancel_wait(fx->st, id, CT_WAIT_MS, &err), &err);

	c = ct_get(fx, id);
	assert_string_equal(c->status, "cancelled");
	assert_true(c->completed_at > 0);
	assert_int_equal(c->nreplies, 2); /* the manager's, the reviewer's */
	assert_string_equal(ct_state_of(c, "coder"), "cancelled");
	assert_non_null(c->response);
	assert_non_null(strstr(c->response, "@reviewer: reviewed"));
	assert_hd_ok(hd_conversation_transcript_path(
			 path, sizeof(path), fx->home, c, &err),
	    &err);
	assert_int_equal(access(path, R_OK), 0);
	hd_conversation_free(c);
	hd_assert_agent_status(fx, "coder", "idle"); /* not error */

	l = ct_events(fx, "conversation_cancelled", id);
	assert_int_equal(l.n, 1);
	assert_string_equal(json_string_value(json_object_get(
				l.items[0].data, "reason")),
	    HD_CANCEL_REASON);
	assert_int_equal(json_integer_value(
			     json_object_get(l.items[0].data, "total_messages")),
	    2);
	assert_string_equal(json_string_value(json_object_get(
				l.items[0].data, "transcript")),
	    path);
	hd_event_list_dispose(&l);
	l = ct_events(fx, "turn_failed", NULL);
	assert_int_equal(l.n, 0); /* a cancel is not a failure */
	hd_event_list_dispose(&l);

	/* ended: refused, and nothing changes */
	assert_int_equal(hd_conversation_cancel(NULL, fx->st, id, NULL, &err),
	    HD_ECONFLICT);
	assert_non_null(strstr(err.msg, "already ended (cancelled)"));

	/* the engine and the agents take work again */
	{
		hd_conversation_spec spec = {"dev", "@reviewer again", "test"};

		assert_hd_ok(
		    hd_conversation_start(id2, e, fx->st, &spec, &err), &err);
		assert_hd_ok(hd_conversation_wait(
				 e, fx->st, id2, CT_WAIT_MS, &err),
		    &err);
	}
	c = ct_get(fx, id2);
	assert_string_equal(c->status, "completed");
	hd_conversation_free(c);
	hd_conversation_engine_stop(e);
}

static void
test_cancel__with_no_engine_the_request_ends_it(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	char id[37];
	int ended = -1;

	ct_slow_team(fx);
	e = ct_engine(fx, NULL);
	start(fx, e, id);
	ct_wait_coder_running(fx, id);
	hd_conversation_engine_stop(e); /* the turn is put back, released */
	c = ct_get(fx, id);
	assert_string_equal(c->status, "running");
	assert_string_equal(ct_state_of(c, "coder"), "queued");
	hd_conversation_free(c);

	assert_hd_ok(
	    hd_conversation_cancel(&ended, fx->st, id, "manager", &err), &err);
	assert_int_equal(ended, 1);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "cancelled");
	assert_string_equal(ct_state_of(c, "coder"), "cancelled");
	hd_conversation_free(c);
	hd_assert_agent_status(fx, "coder", "idle");
	l = ct_events(fx, "conversation_cancelled", id);
	assert_int_equal(l.n, 1);
	assert_string_equal(
	    json_string_value(json_object_get(l.items[0].data, "by")),
	    "manager");
	hd_event_list_dispose(&l);

	/* a later engine has nothing to resume */
	{
		size_t adopted = 9;

		e = ct_engine(fx, NULL);
		assert_hd_ok(
		    hd_conversation_resume_all(&adopted, e, fx->st, &err),
		    &err);
		assert_int_equal(adopted, 0);
		hd_conversation_engine_stop(e);
	}
}

static void
test_cancel__refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	char room[HD_ROOM_ID_MAX];

	ct_slow_team(fx);
	assert_int_equal(
	    hd_conversation_cancel(NULL, fx->st, "nosuch", NULL, &err),
	    HD_ENOTFOUND);
	assert_string_equal(err.msg, "conversation \"nosuch\" not found");
	assert_int_equal(hd_exchange_cancel(room, fx->st, "dev", NULL, &err),
	    HD_ECONFLICT);
	assert_string_equal(
	    err.msg, "no exchange is running in team dev's room");
	assert_int_equal(
	    hd_exchange_cancel(room, fx->st, "ghost", NULL, &err),
	    HD_ENOTFOUND);
	/* nothing held: the wait is over at once */
	assert_hd_ok(hd_exchange_cancel_wait(fx->st, "dev", 1000, &err), &err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(
		test_cancel__a_running_turn_is_stopped_and_the_replies_kept),
	    hd_fixture_test(test_cancel__with_no_engine_the_request_ends_it),
	    hd_fixture_test(test_cancel__refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
