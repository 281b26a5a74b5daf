/*
 * tool-mail.c -- mailbox tools: send_message and inbox_read (SPEC 6,
 * 10.2). The sender is always the calling agent. A shutdown_response
 * without a recipient goes to whoever asked (hd_shutdown_answer).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/shutdown.h>

#include "mcp.h"

static int
tool_send_message(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_message_spec spec;
	hd_message *m = NULL;
	json_t *approve = json_object_get(c->args, "approve");
	size_t n = 0;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.team = c->team;
	spec.from = c->agent;
	spec.to = hd_mcp_arg_str(c, "recipient");
	spec.type = hd_mcp_arg_str(c, "type");
	spec.content = hd_mcp_arg_str(c, "content");
	spec.summary = hd_mcp_arg_str(c, "summary");
	spec.request_id = hd_mcp_arg_str(c, "request_id");
	spec.reason = hd_mcp_arg_str(c, "reason");
	spec.approve = approve != NULL ? json_is_true(approve) : -1;
	if (spec.type != NULL && strcmp(spec.type, "broadcast") == 0) {
		if ((rc = hd_mailbox_broadcast(&n, c->s->st, &spec, err)) < 0)
			return rc;
		*result = json_pack("{s:{s:s, s:I}}", "sent", "type",
		    "broadcast", "recipients", (json_int_t)n);
		return 0;
	}
	if (spec.to == NULL && spec.type != NULL &&
	    strcmp(spec.type, "shutdown_response") == 0) {
		/* to whoever asked, found by request_id */
		if ((rc = hd_shutdown_answer(&m, c->s->st, &spec, err)) < 0)
			return rc;
		*result = json_pack("{s:o, s:s}", "sent",
		    m != NULL ? hd_message_to_json(m) : json_null(), "answered",
		    spec.request_id);
		hd_message_free(m);
		return 0;
	}
	if (spec.to == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "recipient is required unless type is broadcast or "
		    "shutdown_response");
	if ((rc = hd_mailbox_send(&m, c->s->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "sent", hd_message_to_json(m));
	hd_message_free(m);
	return 0;
}

static int
tool_inbox_read(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_messages l;
	json_t *arr;
	char *text = NULL;
	int64_t limit;
	size_t i;
	int rc;

	hd_mcp_arg_int(c, "limit", 0, &limit);
	if (limit < 0 || limit > HD_MAILBOX_READ_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "limit must be between 1 and %d", HD_MAILBOX_READ_MAX);
	if ((rc = hd_team_member_check(c->s->st, c->team, c->agent, err)) < 0)
		return rc;
	if ((rc = hd_mailbox_read(&l, c->s->st, c->agent, (int)limit, err)) < 0)
		return rc;
	if ((rc = hd_mailbox_render(&text, &l, err)) < 0) {
		hd_messages_dispose(&l);
		return rc;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_message_to_json(&l.items[i]));
	*result = json_pack("{s:o, s:s}", "messages", arr, "rendered", text);
	free(text);
	hd_messages_dispose(&l);
	return 0;
}

const hd_mcp_tool hd_mcp_tools_mail[] = {
	{"send_message",
	    "Send a directed message from you to a teammate's mailbox (type "
	    "message), to every teammate (type broadcast, no recipient), or "
	    "answer a shutdown request (type shutdown_response with "
	    "request_id, approve, and a reason when refusing; it goes to "
	    "whoever asked, no recipient needed). Report that you are idle "
	    "with type idle.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"type\":{\"type\":\"string\",\"enum\":[\"message\",\"broadcast\","
	    "\"shutdown_response\",\"idle\",\"task_update\"],\"description\":"
	    "\"default message\"},"
	    "\"recipient\":{\"type\":\"string\",\"description\":\"the "
	    "teammate's agent id (not for broadcast; for shutdown_response, "
	    "default: whoever sent the request)\"},"
	    "\"content\":{\"type\":\"string\",\"description\":\"the message, "
	    "1-100000 bytes, not only whitespace\"},"
	    "\"summary\":{\"type\":\"string\",\"description\":\"a short "
	    "summary (default: the first 10 words)\"},"
	    "\"request_id\":{\"type\":\"string\",\"description\":\"for "
	    "shutdown_response: the request being answered\"},"
	    "\"approve\":{\"type\":\"boolean\",\"description\":\"for "
	    "shutdown_response\"},"
	    "\"reason\":{\"type\":\"string\",\"description\":\"for a refused "
	    "shutdown\"},"
	    "\"authorAgentId\":{\"type\":\"string\",\"description\":\"unbound "
	    "connections only: the sender\"},"
	    "\"teamId\":{\"type\":\"string\",\"description\":\"unbound "
	    "connections only: the team\"}},"
	    "\"required\":[\"content\"]}",
	    HD_TOOL_WRITE | HD_TOOL_NEEDS_TEAM | HD_TOOL_NEEDS_AGENT,
	    tool_send_message},
	{"inbox_read",
	    "Receive the messages waiting in your mailbox, oldest first. Each "
	    "is delivered exactly once: reading marks it delivered. Returns "
	    "them as JSON and rendered as <teammate-message> blocks.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"limit\":{\"type\":\"integer\",\"description\":\"at most this "
	    "many (default: all)\"},"
	    "\"authorAgentId\":{\"type\":\"string\",\"description\":\"unbound "
	    "connections only: whose mailbox\"},"
	    "\"teamId\":{\"type\":\"string\",\"description\":\"unbound "
	    "connections only: the team\"}},"
	    "\"required\":[]}",
	    HD_TOOL_WRITE | HD_TOOL_NEEDS_TEAM | HD_TOOL_NEEDS_AGENT,
	    tool_inbox_read},
	{NULL, NULL, NULL, 0, NULL},
};
