/*
 * cmd-broadcast.c -- `huddle broadcast`: one copy to every other member.
 */
#include "cli.h"

static int
cmd_broadcast(hd_cli *c)
{
	hd_message_spec spec = {0};
	hd_store *st;
	size_t n = 0;
	int rc;

	if ((rc = hd_cli_team_text_as(c, &spec.team, &spec.from,
		 &spec.content)) != 0)
		return rc;
	spec.summary = hd_cli_opt_str(c, "summary");
	spec.approve = -1;
	if (spec.team == NULL || spec.from == NULL)
		return hd_cli_usage(c, "'broadcast' needs a team and --as");
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_mailbox_broadcast(&n, st, &spec, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:s, s:I}", "team", spec.team,
		    "from", spec.from, "sent", (json_int_t)n));
	else
		printf("broadcast from %s to %zu member%s of team %s\n",
		    spec.from, n, n == 1 ? "" : "s", spec.team);
	return HD_EXIT_OK;
}

static const hd_cli_opt broadcast_opts[] = {
	{"as", 0, "AGENT", "the sender (gets no copy)", 0},
	{"team", 't', "TEAM", "the team (older spelling of the first argument)",
	    0},
	{"from", 0, "AGENT", "the sender (older spelling of --as)", 0},
	{"summary", 0, "TEXT", "a short summary (default: the first 10 words)",
	    0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_broadcast = {
	.name = "broadcast",
	.args = "TEAM TEXT",
	.summary = "Send a message to every other member of a team",
	.min_args = 1,
	.max_args = 2,
	.opts = broadcast_opts,
	.fn = cmd_broadcast,
	.details = "Example: huddle broadcast dev --as manager 'standup in 5'\n"
		   "(huddle broadcast TEXT --team TEAM --from AGENT, the older "
		   "spelling, still works.)",
};
