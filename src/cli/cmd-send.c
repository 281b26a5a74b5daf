/*
 * cmd-send.c -- `huddle send`: one message into a teammate's mailbox.
 */
#include <string.h>

#include "cli.h"

static int
cmd_send(hd_cli *c)
{
	hd_message_spec spec = {0};
	hd_message *m = NULL;
	hd_store *st;
	int approve = hd_cli_flag(c, "approve");
	int refuse = hd_cli_flag(c, "refuse");
	int answer, rc;

	if ((rc = hd_cli_team_text_as(c, &spec.team, &spec.from,
		 &spec.content)) != 0)
		return rc;
	spec.to = hd_cli_opt_str(c, "to");
	spec.type = hd_cli_opt_str(c, "type");
	spec.summary = hd_cli_opt_str(c, "summary");
	spec.request_id = hd_cli_opt_str(c, "request-id");
	spec.reason = hd_cli_opt_str(c, "reason");
	if (approve && refuse)
		return hd_cli_usage(c,
		    "--approve and --refuse cannot go together");
	spec.approve = approve ? 1 : refuse ? 0 : -1;
	if (spec.type == NULL && spec.approve >= 0)
		spec.type = "shutdown_response"; /* what else would it answer */
	answer = spec.type != NULL &&
		 strcmp(spec.type, "shutdown_response") == 0;
	if (spec.team == NULL || spec.from == NULL ||
	    (spec.to == NULL && !answer))
		return hd_cli_usage(c, "'send' needs a team, --as and --to "
				       "(--to is optional for a "
				       "shutdown_response)");
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if ((answer ? hd_shutdown_answer(&m, st, &spec, &c->err)
		    : hd_mailbox_send(&m, st, &spec, &c->err)) < 0)
		return hd_cli_fail(c);
	if (m == NULL) { /* a team without a leader: recorded, not sent */
		if (c->json)
			hd_cli_json(json_pack("{s:s, s:n}", "answered",
			    spec.request_id, "sent"));
		else
			printf("answered %s as %s (the team has no leader to "
			       "tell)\n",
			    spec.request_id, spec.from);
	} else if (c->json)
		hd_cli_json(hd_message_to_json(m));
	else
		printf("sent %s #%lld from %s to %s\n", m->type,
		    (long long)m->id, m->from_agent, m->to_agent);
	hd_message_free(m);
	return HD_EXIT_OK;
}

static const hd_cli_opt send_opts[] = {
	{"as", 0, "AGENT", "the sender", 0},
	{"team", 't', "TEAM", "the team (older spelling of the first argument)",
	    0},
	{"from", 0, "AGENT", "the sender (older spelling of --as)", 0},
	{"to", 0, "AGENT",
	    "the recipient (a shutdown_response: default whoever asked)", 0},
	{"type", 0, "TYPE",
	    "message (default), broadcast, shutdown_request, "
	    "shutdown_response, idle, task_update or mention",
	    0},
	{"summary", 0, "TEXT", "a short summary (default: the first 10 words)",
	    0},
	{"request-id", 0, "ID", "the shutdown request answered or made", 0},
	{"approve", 0, NULL,
	    "shutdown_response: approve (implies --type shutdown_response)", 0},
	{"refuse", 0, NULL,
	    "shutdown_response: refuse, with --reason (implies --type "
	    "shutdown_response)",
	    0},
	{"reason", 0, "TEXT", "why (a refusal needs one)", 0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_send = {
	.name = "send",
	.args = "TEAM TEXT",
	.summary = "Send a message to a teammate's mailbox",
	.min_args = 1,
	.max_args = 2,
	.opts = send_opts,
	.fn = cmd_send,
	.details = "Example: huddle send dev --as coder --to manager 'tests "
		   "pass'\n"
		   "(huddle send TEXT --team TEAM --from AGENT, the older "
		   "spelling, still works.)\n"
		   "A shutdown_response (--type shutdown_response --request-id "
		   "ID --approve,\nor --refuse --reason R) answers a pending "
		   "team shutdown, or a shutdown_request\nsent one to one; "
		   "without --to it goes to whoever asked. So does\n'huddle "
		   "shutdown-response'.",
};
