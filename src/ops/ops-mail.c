/*
 * ops-mail.c -- the mailbox's operations (ops.h): send_message and
 * inbox_read (SPEC 6, 10.2). The sender is always the calling agent. A
 * shutdown_response without a recipient goes to whoever asked
 * (hd_shutdown_answer).
 *
 * mail.inbox is also GET /api/agents/:agent/inbox (the path names the
 * mailbox; ?peek=1 leaves it undelivered) and `huddle inbox TEAM --as
 * AGENT` (the older `huddle inbox AGENT`: without --as the one argument
 * is the agent, in no team). Whose mailbox: the path's agent, else the
 * acting agent. In a team it must be a member: over MCP "no member ...",
 * on the CLI `agent "x" is not in team t` (an unknown agent is "not
 * found" first). Its result {agent, messages, rendered}: MCP shows
 * messages and rendered, REST messages only.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/mailbox.h>
#include <huddle/shutdown.h>
#include <huddle/team.h>

#include "ops.h"

static int
tool_send_message(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_message_spec spec;
	hd_message *m = NULL;
	json_t *approve = json_object_get(c->args, "approve");
	size_t n = 0;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.team = c->team;
	spec.from = c->agent;
	spec.to = hd_op_str(c, "recipient");
	spec.type = hd_op_str(c, "type");
	spec.content = hd_op_str(c, "content");
	spec.summary = hd_op_str(c, "summary");
	spec.request_id = hd_op_str(c, "request_id");
	spec.reason = hd_op_str(c, "reason");
	spec.approve = approve != NULL ? json_is_true(approve) : -1;
	if (spec.type != NULL && strcmp(spec.type, "broadcast") == 0) {
		if ((rc = hd_mailbox_broadcast(&n, c->st, &spec, err)) < 0)
			return rc;
		*result = json_pack("{s:{s:s, s:I}}", "sent", "type",
		    "broadcast", "recipients", (json_int_t)n);
		return 0;
	}
	if (spec.to == NULL && spec.type != NULL &&
	    strcmp(spec.type, "shutdown_response") == 0) {
		/* to whoever asked, found by request_id */
		if ((rc = hd_shutdown_answer(&m, c->st, &spec, err)) < 0)
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
	if ((rc = hd_mailbox_send(&m, c->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "sent", hd_message_to_json(m));
	hd_message_free(m);
	return 0;
}

/* The CLI's membership check: the agent first, then its team. */
static int
cli_member(const hd_op_call *c, const char *team, const char *agent,
    hd_err *err)
{
	hd_agent *a = NULL;
	int rc, ok;

	if ((rc = hd_agent_get(&a, c->st, agent, err)) < 0)
		return rc;
	ok = a->team_id != NULL && strcmp(a->team_id, team) == 0;
	hd_agent_free(a);
	if (!ok)
		return hd_err_set(err, HD_EREFUSED,
		    "agent \"%s\" is not in team %s", agent, team);
	return 0;
}

static int
tool_inbox_read(json_t **result, const hd_op_call *c, hd_err *err)
{
	const char *team = c->team, *whose = hd_op_str(c, "mailbox");
	hd_messages l;
	json_t *arr;
	char *text = NULL;
	int64_t limit;
	size_t i;
	int rc;

	hd_op_int(c, "limit", 0, &limit); /* its range: the table's */
	if (whose == NULL)
		whose = c->agent;
	if (c->dialect == HD_OPS_CLI && c->agent == NULL) {
		whose = team; /* the older `inbox AGENT` */
		team = NULL;
	}
	if (team != NULL &&
	    (rc = c->dialect == HD_OPS_CLI
		      ? cli_member(c, team, whose, err)
		      : hd_team_member_check(c->st, team, whose, err)) < 0)
		return rc;
	if ((rc = hd_op_bool(c, "peek")
		      ? hd_mailbox_peek(&l, c->st, whose, (int)limit, err)
		      : hd_mailbox_read(&l, c->st, whose, (int)limit, err)) < 0)
		return rc;
	if ((rc = hd_mailbox_render(&text, &l, err)) < 0) {
		hd_messages_dispose(&l);
		return rc;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_message_to_json(&l.items[i]));
	*result = json_pack("{s:s, s:o, s:s}", "agent", whose, "messages", arr,
	    "rendered", text);
	free(text);
	hd_messages_dispose(&l);
	return 0;
}

static json_t *
mcp_inbox(json_t *result)
{
	return json_pack("{s:O, s:O}", "messages",
	    json_object_get(result, "messages"), "rendered",
	    json_object_get(result, "rendered"));
}

static json_t *
rest_inbox(json_t *result)
{
	return json_pack(
	    "{s:O}", "messages", json_object_get(result, "messages"));
}

/* The CLI: a team, or the older agent, is named. */
static int
cli_check_inbox(const json_t *args, const char *as, hd_err *err)
{
	(void)as;
	if (json_object_get(args, "team") == NULL)
		return hd_err_set(err, HD_EINVAL, "'inbox' needs TEAM --as AGENT");
	return 0;
}

#define ARGS_END {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL}
#define S(n, desc) {n, HD_OPT_STR, 0, 0, 0, NULL, desc, NULL, NULL, 0, NULL, NULL, NULL}

static const char *const message_types[] = {"message", "broadcast",
    "shutdown_response", "idle", "task_update", NULL};

static const hd_op_arg send_args[] = {
    {"type", HD_OPT_ENUM, 0, 0, 0, message_types, "default message", NULL,
	NULL, 0, NULL, NULL, NULL},
    S("recipient", "the teammate's agent id (not for broadcast; for "
		   "shutdown_response, default: whoever sent the request)"),
    {"content", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the message, 1-100000 bytes, not only whitespace", NULL, NULL, 0,
	NULL, NULL, NULL},
    S("summary", "a short summary (default: the first 10 words)"),
    S("request_id", "for shutdown_response: the request being answered"),
    {"approve", HD_OPT_BOOL, 0, 0, 0, NULL, "for shutdown_response", NULL,
	NULL, 0, NULL, NULL, NULL},
    S("reason", "for a refused shutdown"),
    ARGS_END,
};

static const hd_op_arg inbox_args[] = {
    /* the CLI's first argument; over MCP the caller's, not on REST */
    {"team", HD_OPT_STR, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "", "TEAM", 0, NULL,
	NULL, "team"},
    /* REST: the path names the mailbox */
    {"mailbox", HD_OPT_STR, HD_OPA_NO_MCP, 0, 0, NULL, NULL, ":agent", NULL,
	0, NULL, NULL, "agent"},
    {"peek", HD_OPT_BOOL, HD_OPA_NO_MCP, 0, 0, NULL, NULL, NULL, "--peek", 0,
	"show without marking anything delivered", NULL, NULL},
    {"render", HD_OPT_BOOL, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "", "--render",
	0, "print <teammate-message> blocks, as a runtime sees them", NULL,
	NULL},
    {"limit", HD_OPT_INT, 0, 1, HD_MAILBOX_READ_MAX, NULL,
	"at most this many (default: all)", NULL, "--limit", 'n',
	"at most N messages (default: all)", "N", NULL},
    ARGS_END,
};

#define W (HD_OPF_WRITE | HD_OPF_NEEDS_TEAM | HD_OPF_NEEDS_AGENT)

const hd_op hd_ops_mail[] = {
    {.name = "mail.send", .who = HD_OPW_AGENT, .flags = W, .args = send_args,
	.fn = tool_send_message, .mcp = "send_message",
	.mcp_desc =
	    "Send a directed message from you to a teammate's mailbox (type "
	    "message), to every teammate (type broadcast, no recipient), or "
	    "answer a shutdown request (type shutdown_response with "
	    "request_id, approve, and a reason when refusing; it goes to "
	    "whoever asked, no recipient needed). Report that you are idle "
	    "with type idle.",
	.mcp_agent_desc = "the sender"},
    {.name = "mail.inbox", .who = HD_OPW_MEMBER, .flags = W,
	.args = inbox_args, .fn = tool_inbox_read,
	.shape = {[HD_OPS_MCP] = mcp_inbox, [HD_OPS_REST] = rest_inbox},
	.mcp = "inbox_read",
	.mcp_desc =
	    "Receive the messages waiting in your mailbox, oldest first. Each "
	    "is delivered exactly once: reading marks it delivered. Returns "
	    "them as JSON and rendered as <teammate-message> blocks.",
	.mcp_agent_desc = "whose mailbox", .method = "GET",
	.path = "/api/agents/:agent/inbox", .status = 200, .cli = "inbox",
	.cli_summary = "Read an agent's waiting messages, oldest first",
	.cli_details =
	    "Reading delivers: each message is returned by exactly one "
	    "read. --peek does not deliver.\nThe older spelling "
	    "`huddle inbox AGENT` (no --as) still works.\n"
	    "Example: huddle inbox dev --as coder --peek",
	.cli_as_help = "the agent whose mailbox it is (required with TEAM)",
	.cli_check = cli_check_inbox},
    {.name = NULL},
};
