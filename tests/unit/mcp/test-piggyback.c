/*
 * test-piggyback.c -- the tool-result piggyback (mcp.c (5)): a bound
 * agent's successful tool results carry up to 5 of its undelivered
 * mailbox messages as <teammate-message> blocks, oldest first, marked
 * delivered with the tool's own write, exactly once, never another
 * agent's; failed calls and unbound sessions carry none.
 */
#include <huddle/buf.h>
#include <huddle/mailbox.h>

#include "mcp-fx.h"

static void
send_to(struct mcp_fx *fx, const char *from, const char *to, const char *text)
{
	hd_message_spec ms = {0};
	hd_err err = HD_ERR_INIT;

	ms.team = "dev";
	ms.from = from;
	ms.to = to;
	ms.content = text;
	assert_hd_ok(hd_mailbox_send(NULL, fx->base.st, &ms, &err), &err);
}

/* How many of agent's messages are still undelivered. */
static size_t
undelivered(struct mcp_fx *fx, const char *agent)
{
	hd_messages m = {0};
	hd_err err = HD_ERR_INIT;
	size_t n;

	assert_hd_ok(hd_mailbox_peek(&m, fx->base.st, agent, 0, &err), &err);
	n = m.n;
	hd_messages_dispose(&m);
	return n;
}

/* The piggybacked text of a result (its second content block), or NULL
 * when it carries none; the first block is always the tool's own. */
static const char *
mail_of(json_t *res)
{
	json_t *content = json_object_get(res, "content");

	assert_true(json_is_array(content));
	assert_false(json_is_true(json_object_get(res, "isError")));
	if (json_array_size(content) == 1)
		return NULL;
	assert_int_equal(json_array_size(content), 2);
	return json_string_value(
	    json_object_get(json_array_get(content, 1), "text"));
}

static void
test_piggyback__five_at_a_time_oldest_first_exactly_once(void **state)
{
	struct mcp_fx *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_buf want = HD_BUF_INIT(0);
	char one[256];
	json_t *res;
	int i;

	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	for (i = 1; i <= 7; i++) {
		snprintf(one, sizeof(one), "note %d", i);
		send_to(fx, "manager", "coder", one);
	}
	send_to(fx, "coder", "manager", "not for coder");

	/* a read tool: the five oldest, as the mailbox renders them */
	res = tool(fx, "task_list", "{}");
	for (i = 1; i <= 5; i++)
		hd_buf_printf(&want,
		    "%s<teammate-message teammate_id=\"manager\" "
		    "type=\"message\" summary=\"note %d\">\nnote %d\n"
		    "</teammate-message>",
		    i > 1 ? "\n\n" : "", i, i);
	assert_string_equal(mail_of(res), hd_buf_cstr(&want));
	hd_buf_dispose(&want);
	/* the tool's own block is untouched, and there is no
	 * structuredContent, which a client would show instead */
	assert_non_null(strstr(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(res, "content"), 0), "text")),
	    "\"tasks\":"));
	assert_null(json_object_get(res, "structuredContent"));
	json_decref(res);
	assert_int_equal(undelivered(fx, "coder"), 2);

	/* a write tool: the last two, with its write */
	res = tool(fx, "task_create", "{\"subject\":\"Ship it\"}");
	assert_non_null(strstr(mail_of(res), "summary=\"note 6\""));
	assert_non_null(strstr(mail_of(res), "summary=\"note 7\""));
	assert_null(strstr(mail_of(res), "note 5"));
	json_decref(res);
	assert_int_equal(undelivered(fx, "coder"), 0);

	/* nothing left: one block only, with structuredContent again; the
	 * manager's mail stays its own */
	res = tool(fx, "task_list", "{}");
	assert_null(mail_of(res));
	assert_non_null(json_object_get(res, "structuredContent"));
	json_decref(res);
	assert_int_equal(undelivered(fx, "manager"), 1);
}

static void
test_piggyback__a_failed_call_takes_nothing(void **state)
{
	struct mcp_fx *fx = *state;
	hd_err err = HD_ERR_INIT;
	json_t *res;

	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	send_to(fx, "manager", "coder", "are you there?");
	res = tool(fx, "task_claim", "{\"task_id\":99}");
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_int_equal(json_array_size(json_object_get(res, "content")), 1);
	json_decref(res);
	assert_int_equal(undelivered(fx, "coder"), 1);
	/* a refused write rolls back with its mail: still there next time */
	res = tool(fx, "team_chat_post", "{\"text\":\"yes\"}");
	assert_non_null(strstr(mail_of(res), "are you there?"));
	json_decref(res);
	assert_int_equal(undelivered(fx, "coder"), 0);
}

static void
test_piggyback__unbound_sessions_carry_nothing(void **state)
{
	struct mcp_fx *fx = *state;
	json_t *res;

	send_to(fx, "manager", "coder", "unbound cannot read this");
	res = tool(fx, "task_list",
	    "{\"authorAgentId\":\"coder\",\"teamId\":\"dev\"}");
	assert_null(mail_of(res));
	json_decref(res);
	assert_int_equal(undelivered(fx, "coder"), 1);
}

/* A post commits on its own (hd_room_post's group commit, which may
 * write it on another thread's connection): its result takes the mail
 * after it, in a transaction of its own. */
static void
test_piggyback__a_post_written_elsewhere_still_carries_mail(void **state)
{
	struct mcp_fx *fx = *state;
	hd_err err = HD_ERR_INIT;
	json_t *res;

	assert_hd_ok(hd_mcp_session_bind(&fx->s, "dev", "coder", &err), &err);
	send_to(fx, "manager", "coder", "ping");
	res = tool(fx, "team_chat_post", "{\"text\":\"pong\"}");
	assert_non_null(strstr(mail_of(res), ">\nping\n</teammate-message>"));
	json_decref(res);
	assert_int_equal(undelivered(fx, "coder"), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_piggyback__five_at_a_time_oldest_first_exactly_once),
	    T(test_piggyback__a_failed_call_takes_nothing),
	    T(test_piggyback__unbound_sessions_carry_nothing),
	    T(test_piggyback__a_post_written_elsewhere_still_carries_mail),
	};
	return cmocka_run_group_tests_name(
	    "unit/mcp/piggyback", tests, NULL, NULL);
}
