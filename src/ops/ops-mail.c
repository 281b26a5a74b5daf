/*
 * ops-mail.c -- the mailbox's operations (ops.h): send_message and
 * inbox_read (SPEC 6, 10.2), and the CLI's broadcast and
 * shutdown-response. The sender is always the calling agent. A
 * shutdown_response without a recipient goes to whoever asked
 * (hd_shutdown_answer).
 *
 * mail.send is also POST /api/teams/:team/messages, whose body names the
 * sender "from" (rest_as) and answers {message} or, for type broadcast,
 * {recipients}; its one refusal for what is missing is `"from" and
 * "content" are required`. Over MCP the types are the tool's enum; REST
 * and the CLI pass any type on (shutdown_request, mention), for the
 * mailbox to judge. On the CLI it is `huddle send TEAM TEXT --as AGENT`
 * (the older --team/--from spell the same), where --approve / --refuse
 * are one answer implying --type shutdown_response, and a type broadcast
 * is sent as one message (`huddle broadcast` copies to everyone).
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

#define SEND_NEEDS                                                             \
	"'send' needs a team, --as and --to (--to is optional for a "         \
	"shutdown_response)"

/* The message spec of a send: the CLI's --approve / --refuse are one
 * three-way answer that implies --type shutdown_response. */
static void
send_spec(hd_message_spec *spec, const hd_op_call *c)
{
	json_t *approve = json_object_get(c->args, "approve");

	memset(spec, 0, sizeof(*spec));
	spec->team = c->team;
	spec->from = c->agent;
	spec->to = hd_op_str(c, "recipient");
	spec->type = hd_op_str(c, "type");
	spec->content = hd_op_str(c, "content");
	spec->summary = hd_op_str(c, "summary");
	spec->request_id = hd_op_str(c, "request_id");
	spec->reason = hd_op_str(c, "reason");
	spec->approve = approve != NULL ? json_is_true(approve) : -1;
	if (c->dialect != HD_OPS_CLI)
		return;
	spec->approve = hd_op_bool(c, "approve")  ? 1
			: hd_op_bool(c, "refuse") ? 0
						  : -1;
	if (spec->type == NULL && spec->approve >= 0)
		spec->type = "shutdown_response"; /* what else would it answer */
}

/*
 * {message, from, and recipients (a broadcast) or answered (a shutdown
 * answer)}. A broadcast is a type over MCP and REST (the CLI has its own
 * command); a shutdown_response goes to whoever asked (hd_shutdown_answer)
 * -- over MCP only when no recipient is named.
 */
static int
tool_send_message(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_message_spec spec;
	hd_message *m = NULL;
	size_t n = 0;
	int rc, is_answer;

	send_spec(&spec, c);
	if (spec.type != NULL && strcmp(spec.type, "broadcast") == 0 &&
	    c->dialect != HD_OPS_CLI) {
		if ((rc = hd_mailbox_broadcast(&n, c->st, &spec, err)) < 0)
			return rc;
		*result = json_pack("{s:n, s:s, s:I}", "message", "from",
		    spec.from, "recipients", (json_int_t)n);
		return 0;
	}
	is_answer = spec.type != NULL &&
		    strcmp(spec.type, "shutdown_response") == 0 &&
		    (spec.to == NULL || c->dialect != HD_OPS_MCP);
	if (spec.to == NULL && !is_answer)
		return hd_err_set(err, HD_EINVAL,
		    "%s is required unless type is broadcast or "
		    "shutdown_response",
		    c->dialect == HD_OPS_REST ? "\"to\"" : "recipient");
	if ((rc = is_answer ? hd_shutdown_answer(&m, c->st, &spec, err)
			    : hd_mailbox_send(&m, c->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:o, s:s}", "message",
	    m != NULL ? hd_message_to_json(m) : json_null(), "from", spec.from);
	if (is_answer)
		json_object_set_new(
		    *result, "answered", json_string(spec.request_id));
	hd_message_free(m);
	return 0;
}

/* MCP: {sent: the message, or {type: broadcast, recipients}} and, for an
 * answer to whoever asked, answered. */
static json_t *
mcp_sent(json_t *result)
{
	const json_t *n = json_object_get(result, "recipients");

	if (n != NULL)
		return json_pack("{s:{s:s, s:O}}", "sent", "type", "broadcast",
		    "recipients", n);
	return json_pack("{s:O, s:O*}", "sent",
	    json_object_get(result, "message"), "answered",
	    json_object_get(result, "answered"));
}

/* REST: {recipients} for a broadcast, else {message}. */
static json_t *
rest_sent(json_t *result)
{
	const json_t *n = json_object_get(result, "recipients");

	if (n != NULL)
		return json_pack("{s:O}", "recipients", n);
	return json_pack(
	    "{s:O}", "message", json_object_get(result, "message"));
}

/* The CLI: --approve and --refuse are one answer; only an answer may
 * leave out --to. */
static int
cli_check_send(const json_t *args, const char *as, hd_err *err)
{
	const char *type = json_string_value(json_object_get(args, "type"));
	int approve = json_is_true(json_object_get(args, "approve"));
	int refuse = json_is_true(json_object_get(args, "refuse"));

	(void)as;
	if (approve && refuse)
		return hd_err_set(err, HD_EINVAL,
		    "--approve and --refuse cannot go together");
	if (type == NULL && (approve || refuse))
		type = "shutdown_response";
	if (json_object_get(args, "recipient") == NULL &&
	    (type == NULL || strcmp(type, "shutdown_response") != 0))
		return hd_err_set(err, HD_EINVAL, "%s", SEND_NEEDS);
	return 0;
}

/* `huddle broadcast`: one copy to every other member. */
static int
tool_broadcast(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_message_spec spec;
	size_t n = 0;
	int rc;

	send_spec(&spec, c); /* its team, sender, content and summary */
	if ((rc = hd_mailbox_broadcast(&n, c->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:s, s:s, s:I}", "team", spec.team, "from",
	    spec.from, "sent", (json_int_t)n);
	return 0;
}

/* `huddle shutdown-response`: answer a shutdown request as a member; the
 * answer goes to whoever asked. {shutdown: the team's request, or null
 * for one sent one to one, request_id, by, to, approve}. */
static int
tool_shutdown_response(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_shutdown *s = NULL;
	char *asker = NULL;
	const char *rid = hd_op_str(c, "request_id");
	int approve = hd_op_bool(c, "approve"), rc;

	if ((rc = hd_shutdown_requester(&asker, c->st, c->team, c->agent, rid,
		 err)) < 0 ||
	    (rc = hd_shutdown_respond(&s, c->st, c->team, c->agent, rid,
		 approve, hd_op_str(c, "reason"), err)) < 0) {
		free(asker);
		return rc;
	}
	*result = json_pack("{s:o, s:s, s:s, s:s?, s:b}", "shutdown",
	    s != NULL ? hd_shutdown_to_json(s) : json_null(), "request_id", rid,
	    "by", c->agent, "to", asker, "approve", approve);
	free(asker);
	hd_shutdown_free(s);
	return 0;
}

static int
cli_check_shutdown_response(const json_t *args, const char *as, hd_err *err)
{
	(void)as;
	if (json_is_true(json_object_get(args, "refuse")) &&
	    json_object_get(args, "reason") == NULL)
		return hd_err_set(err, HD_EINVAL, "--refuse needs --reason");
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

static const char *const message_types[] = {"message", "broadcast",
    "shutdown_response", "idle", "task_update", NULL};

/* The team: the CLI's first argument (or the older --team), the REST
 * path's; over MCP the caller's. */
#define ARG_TEAM                                                               \
	{"team", HD_OPT_STR, HD_OPA_NO_MCP | HD_OPA_REQUIRED, 0, 0, NULL,      \
	    NULL, ":team", "TEAM", 0, NULL, NULL, "team"}
#define SUMMARY_HELP "a short summary (default: the first 10 words)"

static const hd_op_arg send_args[] = {
    ARG_TEAM,
    /* MCP offers these types; REST and the CLI any the mailbox takes */
    {"type", HD_OPT_ENUM, HD_OPA_OPEN_REST | HD_OPA_OPEN_CLI, 0, 0, message_types,
	"default message", NULL, "--type", 0,
	"message (default), broadcast, shutdown_request, shutdown_response, "
	"idle, task_update or mention",
	"TYPE", NULL},
    {"recipient", HD_OPT_STR, 0, 0, 0, NULL,
	"the teammate's agent id (not for broadcast; for shutdown_response, "
	"default: whoever sent the request)",
	"to", "--to", 0,
	"the recipient (a shutdown_response: default whoever asked)", "AGENT",
	NULL},
    {"content", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the message, 1-100000 bytes, not only whitespace", NULL, "TEXT", 0,
	NULL, NULL, NULL},
    {"summary", HD_OPT_STR, 0, 0, 0, NULL, SUMMARY_HELP, NULL, "--summary", 0,
	SUMMARY_HELP, "TEXT", NULL},
    {"request_id", HD_OPT_STR, 0, 0, 0, NULL,
	"for shutdown_response: the request being answered", NULL,
	"--request-id", 0, "the shutdown request answered or made", "ID",
	NULL},
    {"approve", HD_OPT_BOOL, 0, 0, 0, NULL, "for shutdown_response", NULL,
	"--approve", 0,
	"shutdown_response: approve (implies --type shutdown_response)", NULL,
	NULL},
    {"refuse", HD_OPT_BOOL, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "", "--refuse",
	0,
	"shutdown_response: refuse, with --reason (implies --type "
	"shutdown_response)",
	NULL, NULL},
    {"reason", HD_OPT_STR, 0, 0, 0, NULL, "for a refused shutdown", NULL,
	"--reason", 0, "why (a refusal needs one)", "TEXT", NULL},
    ARGS_END,
};

static const hd_op_arg broadcast_args[] = {
    ARG_TEAM,
    {"content", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, NULL, "", "TEXT", 0,
	NULL, NULL, NULL},
    {"summary", HD_OPT_STR, 0, 0, 0, NULL, NULL, "", "--summary", 0,
	SUMMARY_HELP, "TEXT", NULL},
    ARGS_END,
};

static const hd_op_arg shutdown_response_args[] = {
    ARG_TEAM,
    {"request_id", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, NULL, "",
	"--request-id", 0, "the request answered (shutdown-...)", "ID", NULL},
    {"approve", HD_OPT_BOOL, 0, 0, 0, NULL, NULL, "", "--approve", 0,
	"agree to shut down", NULL, NULL},
    {"refuse", HD_OPT_BOOL, 0, 0, 0, NULL, NULL, "", "--refuse", 0,
	"refuse (with --reason): the shutdown is aborted", NULL, NULL},
    {"reason", HD_OPT_STR, 0, 0, 0, NULL, NULL, "", "--reason", 0,
	"why you refuse", "TEXT", NULL},
    ARGS_END,
};

/* The older spellings: --team for the first argument, --from for --as. */
#define MORE_TEAM                                                              \
	{"team", "team", 't', "the team (older spelling of the first "        \
			      "argument)",                                    \
	    "team", 0, 0}
#define MORE_FROM                                                              \
	{"as", "from", 0, "the sender (older spelling of --as)", "sender", 0, 0}
#define MORE_END {NULL, NULL, 0, NULL, NULL, 0, 0}

static const hd_op_cli_arg send_more[] = {MORE_TEAM, MORE_FROM, MORE_END};
static const hd_op_cli_arg team_more[] = {MORE_TEAM, MORE_END};

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
	.fn = tool_send_message,
	.shape = {[HD_OPS_MCP] = mcp_sent, [HD_OPS_REST] = rest_sent},
	.mcp = "send_message",
	.mcp_desc =
	    "Send a directed message from you to a teammate's mailbox (type "
	    "message), to every teammate (type broadcast, no recipient), or "
	    "answer a shutdown request (type shutdown_response with "
	    "request_id, approve, and a reason when refusing; it goes to "
	    "whoever asked, no recipient needed). Report that you are idle "
	    "with type idle.",
	.mcp_agent_desc = "the sender", .method = "POST",
	.path = "/api/teams/:team/messages", .status = 201, .rest_as = "from",
	.rest_agent_required = "\"from\" and \"content\" are required",
	.rest_required = "\"from\" and \"content\" are required",
	.cli = "send", .cli_summary = "Send a message to a teammate's mailbox",
	.cli_details =
	    "Example: huddle send dev --as coder --to manager 'tests pass'\n"
	    "(huddle send TEXT --team TEAM --from AGENT, the older spelling, "
	    "still works.)\n"
	    "A shutdown_response (--type shutdown_response --request-id ID "
	    "--approve,\nor --refuse --reason R) answers a pending team "
	    "shutdown, or a shutdown_request\nsent one to one; without --to "
	    "it goes to whoever asked. So does\n'huddle shutdown-response'.",
	.cli_as_help = "the sender", .cli_needs = SEND_NEEDS,
	.cli_more = send_more, .cli_check = cli_check_send},
    {.name = "mail.broadcast", .who = HD_OPW_AGENT, .flags = HD_OPF_WRITE,
	.args = broadcast_args, .fn = tool_broadcast, .cli = "broadcast",
	.cli_summary = "Send a message to every other member of a team",
	.cli_details =
	    "Example: huddle broadcast dev --as manager 'standup in 5'\n"
	    "(huddle broadcast TEXT --team TEAM --from AGENT, the older "
	    "spelling, still works.)",
	.cli_as_help = "the sender (gets no copy)",
	.cli_needs = "'broadcast' needs a team and --as",
	.cli_more = send_more},
    {.name = "mail.shutdown_response", .who = HD_OPW_AGENT,
	.flags = HD_OPF_WRITE, .args = shutdown_response_args,
	.fn = tool_shutdown_response, .one_of = {"approve", "refuse"},
	.one_of_both = {[HD_OPS_CLI] = "pass exactly one of --approve and "
				       "--refuse"},
	.one_of_neither = {[HD_OPS_CLI] = "pass exactly one of --approve and "
					  "--refuse"},
	.cli = "shutdown-response",
	.cli_summary = "Answer a shutdown request as a member",
	.cli_details =
	    "The answer goes to whoever asked (the leader, for a team "
	    "shutdown; the\nsender of a shutdown_request sent one to one) as "
	    "a shutdown_response\nmessage. Approving a one-to-one request "
	    "shuts the member down.\nExample: huddle shutdown-response dev "
	    "--as coder --request-id shutdown-1 --approve",
	.cli_as_help = "the member answering",
	.cli_needs = "'shutdown-response' needs TEAM, --as and --request-id",
	.cli_more = team_more, .cli_check = cli_check_shutdown_response},
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
