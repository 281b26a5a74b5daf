/*
 * cmd-attach.c -- `huddle attach AGENT`: print a ready MCP configuration
 * for an agent's runtime: a signed Streamable HTTP URL (SPEC 10.4) or,
 * with --stdio, a `huddle mcp --team T --agent A` command.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define HD_DEFAULT_PORT 7340

static void
self_path(char *out, size_t outlen)
{
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);

	if (n <= 0)
		snprintf(out, outlen, "huddle");
	else
		out[n] = '\0';
}

static int
cmd_attach(hd_cli *c)
{
	const char *format = hd_cli_opt_str(c, "format");
	const char *host = hd_cli_opt_str(c, "host");
	int stdio = hd_cli_flag(c, "stdio");
	int64_t port = HD_DEFAULT_PORT;
	hd_agent *a = NULL;
	hd_store *st;
	char *url = NULL, exe[PATH_MAX], home[PATH_MAX];
	json_t *args = NULL, *entry = NULL;
	int rc = HD_EXIT_FAIL;

	if (format == NULL)
		format = c->json ? "json" : "claude";
	if (strcmp(format, "claude") != 0 && strcmp(format, "codex") != 0 &&
	    strcmp(format, "json") != 0)
		return hd_cli_usage(c, "--format must be claude, codex or json");
	if ((rc = hd_cli_opt_int(c, "port", 1, 65535, &port)) != 0)
		return rc;
	if (host == NULL)
		host = "127.0.0.1";
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	rc = HD_EXIT_FAIL;
	if (hd_agent_get(&a, st, c->argv[0], &c->err) < 0 ||
	    hd_attach_url(&url, st, host, (int)port, c->argv[0], &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	self_path(exe, sizeof(exe));
	if (realpath(hd_store_home(st), home) == NULL)
		snprintf(home, sizeof(home), "%s", hd_store_home(st));
	args = json_pack("[s, s, s, s, s, s, s]", "--home", home, "mcp",
	    "--team", a->team_id, "--agent", a->id);

	if (strcmp(format, "claude") == 0) {
		if (stdio)
			entry = json_pack("{s:s, s:s, s:O}", "type", "stdio",
			    "command", exe, "args", args);
		else
			entry = json_pack("{s:s, s:s}", "type", "http", "url", url);
		hd_cli_json(json_pack("{s:{s:o}}", "mcpServers", "huddle", entry));
		entry = NULL;
	} else if (strcmp(format, "codex") == 0) {
		size_t i;

		printf("[mcp_servers.huddle]\n");
		if (stdio) {
			/* TOML basic strings: JSON string escaping is valid */
			json_t *s = json_string(exe);
			char *q = json_dumps(s, JSON_ENCODE_ANY);

			printf("command = %s\nargs = [", q);
			free(q);
			json_decref(s);
			for (i = 0; i < json_array_size(args); i++) {
				q = json_dumps(json_array_get(args, i),
				    JSON_ENCODE_ANY);
				printf("%s%s", i ? ", " : "", q);
				free(q);
			}
			printf("]\n");
		} else
			printf("url = \"%s\"\n", url);
		printf("default_tools_approval_mode = \"approve\"\n");
	} else {
		hd_cli_json(json_pack("{s:s, s:s, s:s, s:{s:s, s:O}}", "agent",
		    a->id, "team", a->team_id, "url", url, "stdio", "command",
		    exe, "args", args));
	}
	rc = HD_EXIT_OK;
done:
	json_decref(entry);
	json_decref(args);
	free(url);
	hd_agent_free(a);
	return rc;
}

static const hd_cli_opt attach_opts[] = {
	{"format", 'f', "FORMAT", "claude (default), codex or json", 0},
	{"stdio", 0, NULL, "use a `huddle mcp` command instead of the HTTP URL",
	    0},
	{"port", 'p', "PORT", "the server's port (default 7340)", 0},
	{"host", 0, "HOST", "the server's host (default 127.0.0.1)", 0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_attach = {
	.name = "attach",
	.args = "AGENT",
	.summary = "Print an MCP configuration that attaches a runtime as AGENT",
	.min_args = 1,
	.max_args = 1,
	.opts = attach_opts,
	.fn = cmd_attach,
	.details =
	    "claude: an mcpServers entry for Claude Code (.mcp.json or "
	    "--mcp-config).\ncodex: an [mcp_servers.huddle] block for "
	    "~/.codex/config.toml.\njson: the URL and the stdio command.\n"
	    "The URL carries sig = HMAC-SHA256 of the team and agent with "
	    "HUDDLE_HOME/secret;\na URL without a valid sig is served "
	    "read-only.",
};
