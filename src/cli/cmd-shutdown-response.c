/*
 * cmd-shutdown-response.c -- `huddle shutdown-response`: answer a pending
 * team shutdown as one of the members asked, or a shutdown_request sent
 * one to one; the answer goes to whoever asked. Also holds the one-line
 * description of a shutdown request that `team shutdown` prints too.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
print_names(FILE *f, char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", v[i]);
}

void
hd_cli_shutdown_describe(FILE *f, const hd_shutdown *s)
{
	char span[32];
	int64_t ms = s->deadline - s->requested_at;

	if (ms % 1000 == 0)
		snprintf(span, sizeof(span), "%lld s", (long long)(ms / 1000));
	else
		snprintf(span, sizeof(span), "%lld ms", (long long)ms);
	if (strcmp(s->outcome, "pending") == 0) {
		fprintf(f, "team %s is shutting down: request %s waits for ",
		    s->team_id, s->request_id);
		print_names(f, s->pending, s->npending);
		fprintf(f, " to approve (timeout %s)\n", span);
	} else if (strcmp(s->outcome, "shutdown") == 0) {
		fprintf(f, "team %s is shut down", s->team_id);
		if (s->napproved > 0) {
			fprintf(f, " (approved by ");
			print_names(f, s->approved, s->napproved);
			fprintf(f, ")\n");
		} else
			fprintf(f, " (no member was working)\n");
	} else if (strcmp(s->outcome, "refused") == 0)
		fprintf(f,
		    "shutdown of team %s was refused by %s: %s; the team is "
		    "active again\n",
		    s->team_id, s->refused_by ? s->refused_by : "?",
		    s->refusal_reason ? s->refusal_reason : "");
	else if (strcmp(s->outcome, "timeout") == 0) {
		fprintf(f, "shutdown of team %s timed out: no answer from ",
		    s->team_id);
		print_names(f, s->pending, s->npending);
		fprintf(f, " within %s; the team is active again\n", span);
	} else
		fprintf(f, "shutdown request %s of team %s was %s\n",
		    s->request_id, s->team_id, s->outcome);
}

static int
cmd_shutdown_response(hd_cli *c)
{
	hd_shutdown *s = NULL;
	hd_store *st;
	char *asker = NULL;
	const char *team, *agent;
	const char *rid = hd_cli_opt_str(c, "request-id");
	const char *reason = hd_cli_opt_str(c, "reason");
	int approve = hd_cli_flag(c, "approve");
	int refuse = hd_cli_flag(c, "refuse");
	int rc;

	if ((rc = hd_cli_team_arg(c, 0, &team)) ||
	    (rc = hd_cli_as(c, NULL, &agent)))
		return rc;
	if (team == NULL || agent == NULL || rid == NULL)
		return hd_cli_usage(c, "'shutdown-response' needs TEAM, --as "
				       "and --request-id");
	if (approve == refuse)
		return hd_cli_usage(c, "pass exactly one of --approve and "
				       "--refuse");
	if (refuse && reason == NULL)
		return hd_cli_usage(c, "--refuse needs --reason");
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_shutdown_requester(&asker, st, team, agent, rid, &c->err) < 0 ||
	    hd_shutdown_respond(&s, st, team, agent, rid, approve, reason,
		&c->err) < 0) {
		free(asker);
		return hd_cli_fail(c);
	}
	if (c->json)
		/* a one-to-one request has no team record: the answer */
		hd_cli_json(s != NULL ? hd_shutdown_to_json(s)
				      : json_pack("{s:s, s:s, s:s?, s:b}",
					    "request_id", rid, "by", agent,
					    "to", asker, "approve", approve));
	else if (s != NULL) {
		printf("%s %s as %s\n", approve ? "approved" : "refused", rid,
		    agent);
		hd_cli_shutdown_describe(stdout, s);
	} else
		printf("%s %s as %s; the answer went to %s\n",
		    approve ? "approved" : "refused", rid, agent,
		    asker != NULL ? asker : "nobody");
	free(asker);
	hd_shutdown_free(s);
	return HD_EXIT_OK;
}

static const hd_cli_opt shutdown_response_opts[] = {
	{"team", 't', "TEAM", "the team (older spelling of the first argument)",
	    0},
	{"as", 0, "AGENT", "the member answering", 0},
	{"request-id", 0, "ID", "the request answered (shutdown-...)", 0},
	{"approve", 0, NULL, "agree to shut down", 0},
	{"refuse", 0, NULL, "refuse (with --reason): the shutdown is aborted",
	    0},
	{"reason", 0, "TEXT", "why you refuse", 0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_shutdown_response = {
	.name = "shutdown-response",
	.args = "TEAM",
	.summary = "Answer a shutdown request as a member",
	.max_args = 1,
	.opts = shutdown_response_opts,
	.fn = cmd_shutdown_response,
	.details = "The answer goes to whoever asked (the leader, for a "
		   "team shutdown; the\nsender of a shutdown_request sent one "
		   "to one) as a shutdown_response\nmessage. Approving a "
		   "one-to-one request shuts the member down.\nExample: huddle "
		   "shutdown-response dev --as coder --request-id shutdown-1 "
		   "--approve",
};
