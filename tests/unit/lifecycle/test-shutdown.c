/*
 * test-shutdown.c -- the team shutdown protocol (SPEC 6): immediate
 * shutdown, approvals, a refusal, idle as approval, the timeout, requests
 * sent one to one, answers that find whoever asked, and the refusals with
 * their exact texts. Waits are bounded generously; nothing
 * asserts how long anything took, and no answer races a deadline: a test
 * that needs an answer in before the timeout asks with a long one, and
 * then brings the stored deadline forward (expire_soon), as the clock
 * would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/shutdown.h>
#include <huddle/team_state.h>
#include <huddle/util.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "dev: manager coder tester writer");
}

/* agent holds a task it started: working by its work, not by hand */
static void
hold_started(hd_fixture *fx, const char *team, const char *agent)
{
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;

	ts.team = team;
	ts.subject = "Migrate the store";
	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err);
	assert_hd_ok(hd_board_claim(NULL, fx->st, t->id, agent, &err), &err);
	assert_hd_ok(hd_board_start(NULL, fx->st, t->id, agent, &err), &err);
	hd_task_free(t);
}

static void
expect_team_status(hd_fixture *fx, const char *team, const char *status)
{
	hd_team *t = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_team_get(&t, fx->st, team, &err), &err);
	assert_string_equal(t->status, status);
	hd_team_free(t);
}

/* The pending request of team, stored as shutdown.c keeps it (its kv
 * key "shutdown:<team>", hd_shutdown_to_json's members), has its deadline
 * moved to `ms` after it was made: where the clock stands then decides,
 * on the next read, answer or wait, as if that much time had been asked
 * for. An answer that has to arrive before the timeout then never races
 * it (on a loaded machine, or on PostgreSQL under ASan, the request and
 * an answer took over 30 ms apart). */
static void
expire_soon(hd_fixture *fx, const char *team, int64_t ms)
{
	char key[80], *text = NULL;
	json_t *o, *at;
	hd_err err = HD_ERR_INIT;

	snprintf(key, sizeof(key), "shutdown:%s", team);
	assert_hd_ok(hd_store_kv_get(&text, fx->st, key, &err), &err);
	assert_non_null(text);
	assert_non_null(o = json_loads(text, 0, NULL));
	free(text);
	assert_string_equal(
	    json_string_value(json_object_get(o, "outcome")), "pending");
	at = json_object_get(o, "requested_at");
	assert_true(json_is_integer(at));
	assert_int_equal(json_object_set_new(o, "deadline",
			     json_integer(json_integer_value(at) + ms)),
	    0);
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_non_null(text);
	json_decref(o);
	assert_hd_ok(hd_store_kv_put(fx->st, key, text, &err), &err);
	free(text);
}

static size_t
inbox_count(hd_fixture *fx, const char *agent)
{
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	size_t n;

	assert_hd_ok(hd_mailbox_peek(&l, fx->st, agent, 0, &err), &err);
	n = l.n;
	hd_messages_dispose(&l);
	return n;
}

static void
test_shutdown__nobody_working_shuts_down_at_once(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *again = NULL;
	hd_err err = HD_ERR_INIT;

	/* the leader is never asked */
	hd_set_agent_status(fx, "manager", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	assert_string_equal(s->outcome, "shutdown");
	assert_int_equal(s->npending, 0);
	assert_int_equal(strncmp(s->request_id, "shutdown-", 9), 0);
	assert_int_equal(strlen(s->request_id), 9 + 16);
	assert_string_equal(s->requested_by, "manager");
	assert_int_equal(s->deadline - s->requested_at, HD_SHUTDOWN_TIMEOUT_MS);
	expect_team_status(fx, "dev", "shutdown");
	assert_int_equal(inbox_count(fx, "coder"), 0);

	assert_hd_ok(hd_shutdown_get(&again, fx->st, "dev", &err), &err);
	assert_string_equal(again->request_id, s->request_id);
	assert_string_equal(again->outcome, "shutdown");
	hd_shutdown_free(again);
	again = NULL;

	assert_hd_err(hd_team_shutdown(&again, fx->st, "dev", NULL, 0, &err),
	    HD_EREFUSED, "team \"dev\" is already shut down", &err);
	assert_null(again);
	assert_hd_err(hd_team_shutdown(&again, fx->st, "ghost", NULL, 0, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	hd_shutdown_free(s);
}

static void
test_shutdown__two_working_members_approve(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *after = NULL;
	hd_message_spec ms;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char rid[64], text[256];

	hd_set_agent_status(fx, "coder", "working");
	hd_set_agent_status(fx, "tester", "working");
	assert_hd_ok(
	    hd_team_shutdown(&s, fx->st, "dev", "end of sprint", 0, &err),
	    &err);
	snprintf(rid, sizeof(rid), "%s", s->request_id);
	assert_string_equal(s->outcome, "pending");
	assert_int_equal(s->npending, 2);
	assert_string_equal(s->pending[0], "coder");
	assert_string_equal(s->pending[1], "tester");
	expect_team_status(fx, "dev", "shutting_down");
	hd_assert_agent_status(fx, "coder", "shutdown_requested");
	hd_assert_agent_status(fx, "writer", "idle");
	assert_int_equal(inbox_count(fx, "writer"), 0); /* not working */

	assert_hd_ok(hd_mailbox_read(&l, fx->st, "coder", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].type, "shutdown_request");
	assert_string_equal(l.items[0].from_agent, "manager");
	assert_string_equal(l.items[0].request_id, rid);
	assert_string_equal(l.items[0].reason, "end of sprint");
	assert_string_equal(l.items[0].summary, "Team dev is shutting down");
	hd_messages_dispose(&l);

	/* a second request while one is pending is refused */
	snprintf(text, sizeof(text),
	    "team \"dev\" is already shutting down (request %s)", rid);
	assert_hd_err(hd_team_shutdown(&after, fx->st, "dev", NULL, 0, &err),
	    HD_EREFUSED, text, &err);

	/* coder approves: still pending for tester */
	assert_hd_ok(hd_shutdown_respond(
			 &after, fx->st, "dev", "coder", rid, 1, NULL, &err),
	    &err);
	assert_string_equal(after->outcome, "pending");
	assert_int_equal(after->npending, 1);
	assert_string_equal(after->pending[0], "tester");
	assert_int_equal(after->napproved, 1);
	assert_string_equal(after->approved[0], "coder");
	hd_assert_agent_status(fx, "coder", "shutdown");
	expect_team_status(fx, "dev", "shutting_down");
	hd_shutdown_free(after);

	/* approving twice changes nothing (the answer is still delivered) */
	assert_hd_ok(hd_shutdown_respond(
			 &after, fx->st, "dev", "coder", rid, 1, NULL, &err),
	    &err);
	assert_int_equal(after->npending, 1);
	assert_int_equal(after->napproved, 1);
	hd_shutdown_free(after);

	/* tester approves through a plain shutdown_response message */
	memset(&ms, 0, sizeof(ms));
	ms.team = "dev";
	ms.from = "tester";
	ms.to = "manager";
	ms.type = "shutdown_response";
	ms.content = "ok, stopping";
	ms.request_id = rid;
	ms.approve = 1;
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	assert_hd_ok(hd_shutdown_get(&after, fx->st, "dev", &err), &err);
	assert_string_equal(after->outcome, "shutdown");
	assert_int_equal(after->npending, 0);
	assert_int_equal(after->napproved, 2);
	assert_true(after->finished_at > 0);
	hd_shutdown_free(after);
	expect_team_status(fx, "dev", "shutdown");
	hd_assert_agent_status(fx, "tester", "shutdown");

	/* the leader's mailbox holds every answer, in order */
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "manager", 0, &err), &err);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.items[0].from_agent, "coder");
	assert_string_equal(l.items[0].type, "shutdown_response");
	assert_int_equal(l.items[0].approve, 1);
	snprintf(text, sizeof(text), "Approved shutdown request %s", rid);
	assert_string_equal(l.items[0].content, text);
	assert_string_equal(l.items[1].from_agent, "coder");
	assert_string_equal(l.items[2].from_agent, "tester");
	assert_string_equal(l.items[2].content, "ok, stopping");
	hd_messages_dispose(&l);
	hd_shutdown_free(s);
}

static void
test_shutdown__a_refusal_aborts(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *after = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char text[256];

	hold_started(fx, "dev", "coder");
	hd_set_agent_status(fx, "tester", "working");
	hd_set_agent_status(fx, "writer", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	assert_int_equal(s->npending, 3);
	assert_hd_ok(hd_shutdown_respond(NULL, fx->st, "dev", "writer",
			 s->request_id, 1, NULL, &err),
	    &err);
	assert_hd_err(hd_shutdown_respond(NULL, fx->st, "dev", "coder",
			  s->request_id, 0, NULL, &err),
	    HD_EINVAL, "a refused shutdown needs a reason", &err);
	assert_hd_ok(hd_shutdown_respond(&after, fx->st, "dev", "coder",
			 s->request_id, 0, "mid-migration", &err),
	    &err);
	assert_string_equal(after->outcome, "refused");
	assert_string_equal(after->refused_by, "coder");
	assert_string_equal(after->refusal_reason, "mid-migration");
	hd_shutdown_free(after);
	expect_team_status(fx, "dev", "active");
	/* those still asked go back to what their work says (coder holds a
	 * started task, tester nothing); the one who approved stays out */
	hd_assert_agent_status(fx, "coder", "working");
	hd_assert_agent_status(fx, "tester", "idle");
	hd_assert_agent_status(fx, "writer", "shutdown");

	/* the leader holds the refusal itself, once */
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "manager", 0, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].from_agent, "writer");
	assert_int_equal(l.items[0].approve, 1);
	assert_string_equal(l.items[1].from_agent, "coder");
	assert_string_equal(l.items[1].type, "shutdown_response");
	assert_string_equal(l.items[1].request_id, s->request_id);
	assert_int_equal(l.items[1].approve, 0);
	assert_string_equal(l.items[1].reason, "mid-migration");
	snprintf(text, sizeof(text),
	    "Refused shutdown request %s: mid-migration", s->request_id);
	assert_string_equal(l.items[1].content, text);
	hd_messages_dispose(&l);

	/* a late answer to the ended request is just a message */
	assert_hd_ok(hd_shutdown_respond(&after, fx->st, "dev", "tester",
			 s->request_id, 1, NULL, &err),
	    &err);
	assert_string_equal(after->outcome, "refused");
	hd_shutdown_free(after);
	expect_team_status(fx, "dev", "active");
	hd_assert_agent_status(fx, "tester", "idle");
	/* an unknown request is refused */
	assert_hd_err(hd_shutdown_respond(NULL, fx->st, "dev", "tester",
			  "shutdown-nope", 1, NULL, &err),
	    HD_ENOTFOUND, "no shutdown request \"shutdown-nope\" in team dev",
	    &err);
	/* the team can be asked again: coder, who still works, is asked */
	hd_shutdown_free(s);
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	assert_string_equal(s->outcome, "pending");
	assert_int_equal(s->npending, 1);
	assert_string_equal(s->pending[0], "coder");
	hd_shutdown_free(s);
}

static void
test_shutdown__refusal_sent_elsewhere_is_relayed_to_the_leader(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL;
	hd_message_spec ms;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char text[256];

	hd_set_agent_status(fx, "coder", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	memset(&ms, 0, sizeof(ms));
	ms.team = "dev";
	ms.from = "coder";
	ms.to = "tester"; /* not the leader */
	ms.type = "shutdown_response";
	ms.content = "no";
	ms.request_id = s->request_id;
	ms.approve = 0;
	ms.reason = "busy";
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	expect_team_status(fx, "dev", "active");
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "manager", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].from_agent, "huddle");
	assert_string_equal(l.items[0].type, "shutdown_response");
	assert_int_equal(l.items[0].approve, 0);
	assert_string_equal(l.items[0].reason, "busy");
	assert_string_equal(l.items[0].request_id, s->request_id);
	snprintf(text, sizeof(text),
	    "Shutdown of team dev aborted: coder refused: busy");
	assert_string_equal(l.items[0].content, text);
	hd_messages_dispose(&l);
	hd_shutdown_free(s);
}

static void
test_shutdown__idle_counts_as_approval(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *after = NULL;
	hd_message_spec ms;
	hd_err err = HD_ERR_INIT;

	/* idle before any shutdown is an ordinary message */
	memset(&ms, 0, sizeof(ms));
	ms.team = "dev";
	ms.from = "coder";
	ms.to = "manager";
	ms.type = "idle";
	ms.content = "nothing to do";
	ms.approve = -1;
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);

	hd_set_agent_status(fx, "coder", "working");
	hd_set_agent_status(fx, "tester", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	/* an idle member that was not asked changes nothing */
	ms.from = "writer";
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	ms.from = "coder";
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	assert_hd_ok(hd_shutdown_get(&after, fx->st, "dev", &err), &err);
	assert_string_equal(after->outcome, "pending");
	assert_int_equal(after->npending, 1);
	assert_string_equal(after->approved[0], "coder");
	hd_shutdown_free(after);
	hd_assert_agent_status(fx, "coder", "shutdown");
	hd_assert_agent_status(fx, "writer", "idle");
	ms.from = "tester";
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	assert_hd_ok(hd_shutdown_get(&after, fx->st, "dev", &err), &err);
	assert_string_equal(after->outcome, "shutdown");
	hd_shutdown_free(after);
	expect_team_status(fx, "dev", "shutdown");
	hd_shutdown_free(s);
}

static void
test_shutdown__timeout_aborts(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *fin = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	hold_started(fx, "dev", "coder");
	hd_set_agent_status(fx, "tester", "working");
	/* tester's approval is in long before 60 s; the deadline then comes
	 * to 50 ms, past or about to be */
	assert_hd_ok(
	    hd_team_shutdown(&s, fx->st, "dev", NULL, 60000, &err), &err);
	assert_string_equal(s->outcome, "pending");
	assert_int_equal(s->deadline - s->requested_at, 60000);
	assert_hd_ok(hd_shutdown_respond(&fin, fx->st, "dev", "tester",
			 s->request_id, 1, NULL, &err),
	    &err);
	assert_string_equal(fin->outcome, "pending");
	hd_shutdown_free(fin);
	expire_soon(fx, "dev", 50);
	/* bounded generously: the 50 ms deadline ends it first */
	assert_hd_ok(hd_team_shutdown_wait(
			 &fin, fx->st, "dev", s->request_id, 30000, &err),
	    &err);
	assert_string_equal(fin->outcome, "timeout");
	assert_null(fin->refused_by);
	assert_int_equal(fin->npending, 1);
	assert_string_equal(fin->pending[0], "coder");
	hd_shutdown_free(fin);
	expect_team_status(fx, "dev", "active");
	hd_assert_agent_status(fx, "coder", "working");
	hd_assert_agent_status(fx, "tester", "shutdown");

	assert_hd_ok(hd_mailbox_read(&l, fx->st, "manager", 0, &err), &err);
	assert_int_equal(l.n, 2); /* tester's approval, then the timeout */
	assert_string_equal(l.items[1].from_agent, "huddle");
	assert_string_equal(l.items[1].type, "shutdown_response");
	assert_string_equal(l.items[1].request_id, s->request_id);
	assert_int_equal(l.items[1].approve, 0);
	assert_string_equal(l.items[1].reason, "timeout");
	assert_string_equal(l.items[1].content,
	    "Shutdown of team dev aborted: no answer from coder within 50 ms");
	hd_messages_dispose(&l);

	/* a late approval is just a message now */
	assert_hd_ok(hd_shutdown_respond(&fin, fx->st, "dev", "coder",
			 s->request_id, 1, NULL, &err),
	    &err);
	assert_string_equal(fin->outcome, "timeout");
	hd_shutdown_free(fin);
	expect_team_status(fx, "dev", "active");
	hd_shutdown_free(s);
}

static void
test_shutdown__reading_team_state_evaluates_the_timeout(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *fin = NULL;
	hd_err err = HD_ERR_INIT;
	char *text = NULL;
	int i;

	hd_set_agent_status(fx, "coder", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 20, &err), &err);
	/* poll the state block only; it alone must notice the deadline */
	for (i = 0; i < 3000; i++) {
		assert_hd_ok(hd_team_state(&text, fx->st, "dev", &err), &err);
		if (strstr(text, "Status: active\n") != NULL)
			break;
		assert_non_null(strstr(text, "Status: shutting_down\n"));
		free(text);
		text = NULL;
		hd_sleep_us(10000);
	}
	assert_non_null(text);
	assert_non_null(strstr(text, "Status: active\n"));
	free(text);
	assert_hd_ok(hd_shutdown_get(&fin, fx->st, "dev", &err), &err);
	assert_string_equal(fin->outcome, "timeout");
	hd_shutdown_free(fin);
	hd_shutdown_free(s);
}

static void
test_shutdown__wait_bound_and_cancellation(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL, *fin = NULL;
	hd_err err = HD_ERR_INIT;
	char text[256];

	hd_set_agent_status(fx, "coder", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	snprintf(text, sizeof(text),
	    "shutdown request %s of team dev is still pending after 150 ms",
	    s->request_id);
	assert_hd_err(hd_team_shutdown_wait(
			  &fin, fx->st, "dev", s->request_id, 150, &err),
	    HD_ETIMEOUT, text, &err);
	assert_null(fin);
	assert_hd_err(
	    hd_team_shutdown_wait(&fin, fx->st, "dev", "shutdown-x", 150, &err),
	    HD_ENOTFOUND, "no shutdown request \"shutdown-x\" in team dev",
	    &err);
	/* a status changed by hand closes the request quietly */
	assert_hd_ok(hd_team_set_status(fx->st, "dev", "active", &err), &err);
	assert_hd_ok(hd_team_shutdown_wait(
			 &fin, fx->st, "dev", s->request_id, 30000, &err),
	    &err);
	assert_string_equal(fin->outcome, "cancelled");
	hd_shutdown_free(fin);
	hd_shutdown_free(s);
}

static void
test_shutdown__team_without_leader(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {0};
	hd_agent_spec as = {0};
	hd_shutdown *s = NULL, *after = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char *who = NULL;

	ts.id = "flat";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	as.team = "flat";
	as.id = "solo";
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	hd_set_agent_status(fx, "solo", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "flat", NULL, 0, &err), &err);
	assert_null(s->requested_by);
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "solo", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].from_agent, "huddle");
	assert_string_equal(l.items[0].type, "shutdown_request");
	hd_messages_dispose(&l);
	assert_hd_err(hd_shutdown_respond(NULL, fx->st, "flat", "coder",
			  s->request_id, 1, NULL, &err),
	    HD_EREFUSED, "no member \"coder\" in team flat", &err);
	assert_hd_ok(hd_shutdown_requester(
			 &who, fx->st, "flat", "solo", s->request_id, &err),
	    &err);
	assert_null(who); /* nobody asked: the answer is recorded */
	assert_hd_ok(hd_shutdown_respond(&after, fx->st, "flat", "solo",
			 s->request_id, 1, NULL, &err),
	    &err);
	assert_string_equal(after->outcome, "shutdown");
	hd_shutdown_free(after);
	expect_team_status(fx, "flat", "shutdown");
	hd_shutdown_free(s);
}

/* The answer finds whoever asked: the team's leader, or the sender of a
 * request sent one to one; without a known request_id, a clear error. */
static void
test_shutdown__an_answer_finds_whoever_asked(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec ms = {0};
	hd_shutdown *s = NULL;
	hd_message *m = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char *who = NULL;

	hd_set_agent_status(fx, "coder", "working");
	assert_hd_ok(hd_team_shutdown(&s, fx->st, "dev", NULL, 0, &err), &err);
	assert_hd_ok(hd_shutdown_requester(
			 &who, fx->st, "dev", "coder", s->request_id, &err),
	    &err);
	assert_string_equal(who, "manager");
	free(who);

	/* tester asks writer alone, with a request id of its own */
	ms.team = "dev";
	ms.from = "tester";
	ms.to = "writer";
	ms.type = "shutdown_request";
	ms.content = "please stop, the branch is frozen";
	ms.request_id = "stop-writer-1";
	ms.approve = -1;
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	assert_hd_ok(hd_shutdown_requester(
			 &who, fx->st, "dev", "writer", "stop-writer-1", &err),
	    &err);
	assert_string_equal(who, "tester");
	free(who);
	/* a request sent to someone else is not coder's to answer */
	assert_hd_err(hd_shutdown_requester(
			  &who, fx->st, "dev", "coder", "stop-writer-1", &err),
	    HD_ENOTFOUND, "no shutdown request \"stop-writer-1\" in team dev",
	    &err);
	assert_null(who);

	/* the team's answer, no recipient given: to the leader */
	memset(&ms, 0, sizeof(ms));
	ms.team = "dev";
	ms.from = "coder";
	ms.content = "done, stopping";
	ms.request_id = s->request_id;
	ms.approve = 1;
	assert_hd_ok(hd_shutdown_answer(&m, fx->st, &ms, &err), &err);
	assert_string_equal(m->to_agent, "manager");
	assert_string_equal(m->type, "shutdown_response");
	hd_message_free(m);
	expect_team_status(fx, "dev", "shutdown");

	/* the one-to-one refusal, no recipient given: to tester */
	ms.from = "writer";
	ms.content = "not yet";
	ms.request_id = "stop-writer-1";
	ms.approve = 0;
	ms.reason = "mid-edit";
	assert_hd_ok(hd_shutdown_answer(&m, fx->st, &ms, &err), &err);
	assert_string_equal(m->to_agent, "tester");
	hd_message_free(m);
	hd_assert_agent_status(fx, "writer", "idle");
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "tester", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].reason, "mid-edit");
	assert_int_equal(l.items[0].approve, 0);
	hd_messages_dispose(&l);

	/* unknown request ids, and none at all, change nothing */
	ms.request_id = "stop-nobody";
	assert_hd_err(hd_shutdown_answer(&m, fx->st, &ms, &err), HD_ENOTFOUND,
	    "no shutdown request \"stop-nobody\" in team dev", &err);
	ms.request_id = NULL;
	assert_hd_err(hd_shutdown_answer(&m, fx->st, &ms, &err), HD_EINVAL,
	    "shutdown_response needs a request_id", &err);
	ms.request_id = "stop-writer-1";
	ms.from = "sre";
	assert_hd_err(hd_shutdown_answer(&m, fx->st, &ms, &err), HD_EREFUSED,
	    "no member \"sre\" in team dev", &err);
	ms.from = "writer";
	ms.type = "message";
	assert_hd_err(hd_shutdown_answer(&m, fx->st, &ms, &err), HD_EINVAL,
	    "only a shutdown_response finds its own recipient, not a message",
	    &err);
	assert_null(m);
	assert_int_equal(inbox_count(fx, "tester"), 0);
	hd_shutdown_free(s);
}

/* A one-to-one request approved (through hd_shutdown_respond, as the CLI
 * answers) shuts the member down and leaves the team alone. */
static void
test_shutdown__one_to_one_approval_shuts_the_member_down(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec ms = {0};
	hd_shutdown *s = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;

	ms.team = "dev";
	ms.from = "manager";
	ms.to = "coder";
	ms.type = "shutdown_request";
	ms.content = "you are done for today";
	ms.request_id = "stop-coder";
	ms.approve = -1;
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
	assert_hd_ok(hd_shutdown_respond(&s, fx->st, "dev", "coder",
			 "stop-coder", 1, NULL, &err),
	    &err);
	assert_null(s); /* no team request involved */
	hd_assert_agent_status(fx, "coder", "shutdown");
	expect_team_status(fx, "dev", "active");
	assert_hd_ok(hd_mailbox_read(&l, fx->st, "manager", 0, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].from_agent, "coder");
	assert_string_equal(l.items[0].type, "shutdown_response");
	assert_string_equal(l.items[0].request_id, "stop-coder");
	assert_string_equal(
	    l.items[0].content, "Approved shutdown request stop-coder");
	hd_messages_dispose(&l);
	/* a response naming it from someone it was not sent to is refused */
	assert_hd_err(hd_shutdown_respond(NULL, fx->st, "dev", "tester",
			  "stop-coder", 1, NULL, &err),
	    HD_ENOTFOUND, "no shutdown request \"stop-coder\" in team dev",
	    &err);
	memset(&ms, 0, sizeof(ms));
	ms.team = "dev";
	ms.from = "tester";
	ms.to = "manager";
	ms.type = "shutdown_response";
	ms.content = "me too";
	ms.request_id = "stop-coder";
	ms.approve = 1;
	assert_hd_err(hd_mailbox_send(NULL, fx->st, &ms, &err), HD_ENOTFOUND,
	    "no shutdown request \"stop-coder\" in team dev", &err);
	hd_assert_agent_status(fx, "tester", "idle");
}

static void
test_shutdown__input_checks(void **state)
{
	hd_fixture *fx = *state;
	hd_shutdown *s = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_team_shutdown(&s, fx->st, "dev", NULL, -1, &err),
	    HD_EINVAL,
	    "shutdown timeout must be between 0 (default) and 86400000 ms",
	    &err);
	assert_hd_err(hd_team_shutdown(&s, fx->st, "Dev!", NULL, 0, &err),
	    HD_EINVAL,
	    "invalid team name \"Dev!\": use 1-50 lowercase letters, digits, "
	    "'-' or '_'",
	    &err);
	assert_hd_err(hd_shutdown_respond(
			  NULL, fx->st, "dev", "coder", "r", 2, NULL, &err),
	    HD_EINVAL, "shutdown_response needs approve (true or false)", &err);
	assert_hd_err(hd_shutdown_get(&s, fx->st, "ghost", &err), HD_ENOTFOUND,
	    "team \"ghost\" not found", &err);
	assert_hd_ok(hd_shutdown_get(&s, fx->st, "dev", &err), &err);
	assert_null(s); /* never asked */
	expect_team_status(fx, "dev", "active");
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, hd_fixture_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_shutdown__nobody_working_shuts_down_at_once),
	    T(test_shutdown__two_working_members_approve),
	    T(test_shutdown__a_refusal_aborts),
	    T(test_shutdown__refusal_sent_elsewhere_is_relayed_to_the_leader),
	    T(test_shutdown__idle_counts_as_approval),
	    T(test_shutdown__timeout_aborts),
	    T(test_shutdown__reading_team_state_evaluates_the_timeout),
	    T(test_shutdown__wait_bound_and_cancellation),
	    T(test_shutdown__team_without_leader),
	    T(test_shutdown__an_answer_finds_whoever_asked),
	    T(test_shutdown__one_to_one_approval_shuts_the_member_down),
	    T(test_shutdown__input_checks),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
