/*
 * cmd-mcp.c -- `huddle mcp`: the MCP server over stdio.
 *
 * One JSON-RPC message per line on stdin, one reply per line on stdout,
 * nothing else on stdout (logs go to stderr), exit 0 on EOF. With --team
 * and --agent the session is bound: every tool acts as that agent. A line
 * longer than HD_MCP_LINE_MAX is answered with a parse error and skipped,
 * so a runaway client cannot make the server hold unbounded memory.
 * Each line is served in its own era (src/mcp/mcp.c (7)): a 2026-07-28
 * request, known by its _meta, is answered stateless beside a 2025
 * client's initialize, with no HTTP headers to check.
 */
#include <stdlib.h>
#include <string.h>

#include <mcp/mcp.h>
#include "cli.h"

#define HD_LOG_COMPONENT "mcp"
#include <huddle/log.h>
#include <huddle/buf.h>
#include <huddle/team.h>

#define HD_MCP_LINE_MAX (8 * 1024 * 1024)

static int
cmd_mcp(hd_cli *c)
{
	const char *team = hd_cli_opt_str(c, "team");
	const char *agent = hd_cli_opt_str(c, "agent");
	hd_mcp_server *srv = NULL;
	hd_mcp_session s;
	hd_store *st;
	hd_buf line = HD_BUF_INIT(0);
	char *reply;
	int ch, rc = HD_EXIT_FAIL, toolong = 0;

	if ((team == NULL) != (agent == NULL))
		return hd_cli_usage(c, "--team and --agent go together");
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_mcp_server_new(&srv, &c->err) < 0)
		return hd_cli_fail(c);
	hd_mcp_session_init(&s, srv, st);
	if (team != NULL &&
	    (hd_team_member_check(st, team, agent, &c->err) < 0 ||
		hd_mcp_session_bind(&s, team, agent, &c->err) < 0)) {
		rc = hd_cli_fail(c);
		goto done;
	}
	hd_log_info("serving MCP on stdio%s%s%s%s", team ? " as " : "",
	    agent ? agent : "", team ? " of team " : " (unbound)",
	    team ? team : "");
	for (;;) {
		ch = getchar();
		if (ch != '\n' && ch != EOF) {
			if (line.len >= HD_MCP_LINE_MAX)
				toolong = 1;
			else
				hd_buf_putc(&line, (char)ch);
			continue;
		}
		if (toolong)
			reply = strdup("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
				       "{\"code\":-32700,\"message\":\"Parse "
				       "error: message over 8 MiB\"}}");
		else if (line.len > 0 && strspn(hd_buf_cstr(&line), " \t\r") <
			     line.len)
			hd_mcp_handle(&reply, &s, hd_buf_cstr(&line), line.len);
		else
			reply = NULL; /* blank line */
		if (reply != NULL) {
			fputs(reply, stdout);
			fputc('\n', stdout);
			fflush(stdout);
			free(reply);
		}
		hd_buf_reset(&line);
		toolong = 0;
		if (ch == EOF)
			break;
	}
	rc = HD_EXIT_OK;
done:
	hd_buf_dispose(&line);
	hd_mcp_server_free(srv);
	return rc;
}

static const hd_cli_opt mcp_opts[] = {
	{"team", 0, "TEAM", "bind the session to this team (with --agent)", 0},
	{"agent", 0, "AGENT", "bind the session to this agent (with --team)", 0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_mcp = {
	.name = "mcp",
	.summary = "Serve MCP over stdio (one JSON-RPC message per line)",
	.max_args = 0,
	.opts = mcp_opts,
	.fn = cmd_mcp,
	.details = "Bound (--team T --agent A): every tool acts as A of T and "
		   "identity arguments are ignored.\nUnbound: tools take "
		   "authorAgentId and teamId from their arguments.\n"
		   "Print a ready configuration for a runtime with 'huddle "
		   "attach TEAM AGENT --stdio'.",
};
