/*
 * cmd-attach.c -- `huddle attach TEAM AGENT`: how to attach an agent's
 * runtime (Claude Code, Codex, any MCP client) to huddle as AGENT: a
 * signed Streamable HTTP URL (SPEC 10.4) or, with --stdio, a `huddle mcp
 * --team T --agent A` command. Older spellings stay: `attach AGENT` and
 * `attach TEAM --as AGENT`.
 *
 *  (1) Where: an explicit --public-url wins, then --host/--port; else the
 *      running server's record (HUDDLE_HOME/serve.json, presence.c: its
 *      --public-url, else its host and port); else the defaults
 *      (127.0.0.1:7340). The scheme is https when the running server
 *      speaks it (--host/--port keep it too), or as --public-url says.
 *      One stderr line says which (not under --json, where "server" in
 *      the output does, nor with --stdio, which needs no server).
 *  (2) The MCP server is named huddle-<agent>, so one project can hold
 *      several identities (the runtime adapters, claude.c and codex.c,
 *      keep their own name `huddle` in the configs they write per turn).
 *  (3) Secrets stay out of what people commit. The signed URL is printed
 *      once, as an `export HUDDLE_<AGENT>_URL=...` line marked as a secret
 *      (text, env, json); every other line names only the variables.
 *      What each runtime's CLI reads (the command that adds huddle, its
 *      config file, --format <runtime>) is its adapter's to write
 *      (runtime.h hd_runtime_attacher, in claude.c and codex.c): this
 *      file asks each adapter of the table in turn and names no runtime.
 *      The bearer token's value is never printed, only the variable that
 *      holds it.
 *  (4) Whether a token is needed: the running server's record says; with
 *      no server, whether the token variable (HUDDLE_TOKEN, or
 *      --token-env) is set, which is what `huddle serve` would use.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/attach.h>
#include <huddle/buf.h>

#include <http/http.h>
#include "cli.h"

#define ATTACH_URL_VAR_MAX 80

typedef struct attach_ctx {
	const char *team, *agent;
	char name[64];			    /* huddle-<agent> */
	char url_var[ATTACH_URL_VAR_MAX];   /* HUDDLE_<AGENT>_URL */
	const char *token_var;		    /* or NULL: no token needed */
	char base[1100];		    /* http://host:port or public */
	const char *source;		    /* running, defaults, options */
	long pid;			    /* of the running server, or 0 */
	char *url;			    /* the signed URL (a secret) */
	char exe[PATH_MAX], home[PATH_MAX]; /* for --stdio */
} attach_ctx;

static void
self_path(char *out, size_t outlen)
{
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);

	if (n <= 0)
		snprintf(out, outlen, "huddle");
	else
		out[n] = '\0';
}

/* What the adapters' attach writers read of x. */
static void
attach_view(hd_runtime_attach *v, const attach_ctx *x, int stdio)
{
	v->name = x->name;
	v->team = x->team;
	v->agent = x->agent;
	v->url_var = x->url_var;
	v->token_var = x->token_var;
	v->exe = x->exe;
	v->home = x->home;
	v->stdio = stdio;
}

static char *
export_line(const attach_ctx *x)
{
	hd_buf b = HD_BUF_INIT(0);

	hd_buf_printf(&b, "export %s=", x->url_var);
	hd_runtime_sh_word(&b, x->url);
	return hd_buf_detach(&b);
}

/* (1): where the server is, and whether it wants a token (4). */
static int
resolve_server(
    hd_cli *c, attach_ctx *x, const char *token_env, int quiet)
{
	const char *host = hd_cli_opt_str(c, "host");
	int64_t port = 0;
	hd_http_presence p;
	char pub[sizeof(p.public_url)];
	int running, rc, v6;

	if ((rc = hd_cli_opt_int(c, "port", 1, 65535, &port)) != 0 ||
	    (rc = hd_cli_public_url(c, hd_cli_opt_str(c, "public-url"), pub,
		 sizeof(pub))) != 0)
		return rc;
	if (pub[0] != '\0' && (host != NULL || port != 0))
		return hd_cli_usage(c,
		    "give --public-url or --host/--port, not both");
	if (host != NULL &&
	    (host[0] == '\0' || strlen(host) > 200 ||
		strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
			     "YZ0123456789.-:") != strlen(host)))
		return hd_cli_usage(c,
		    "--host must be a host name or an IP address, not \"%s\"",
		    host);
	running = hd_http_presence_read(x->home, &p);
	if (running)
		x->pid = p.pid;
	if (pub[0] != '\0') {
		snprintf(x->base, sizeof(x->base), "%s", pub);
		x->source = "options";
	} else if (host != NULL || port != 0) {
		if (host == NULL)
			host = running ? p.host : "127.0.0.1";
		/* an IPv6 address goes in brackets */
		v6 = strchr(host, ':') != NULL;
		snprintf(x->base, sizeof(x->base), "%s://%s%s%s:%d",
		    running && p.tls ? "https" : "http", v6 ? "[" : "", host,
		    v6 ? "]" : "",
		    port != 0 ? (int)port
		    : running ? p.port
			      : HD_HTTP_DEFAULT_PORT);
		x->source = "options";
	} else if (running) {
		if (p.public_url[0] != '\0')
			snprintf(x->base, sizeof(x->base), "%s", p.public_url);
		else
			snprintf(x->base, sizeof(x->base), "%s://%s:%d",
			    p.tls ? "https" : "http", p.host, p.port);
		x->source = "running";
	} else {
		snprintf(x->base, sizeof(x->base), "http://127.0.0.1:%d",
		    HD_HTTP_DEFAULT_PORT);
		x->source = "defaults";
	}
	if (running)
		x->token_var = p.token ? token_env : NULL;
	else {
		const char *v = getenv(token_env);

		x->token_var = v != NULL && v[0] != '\0' ? token_env : NULL;
	}
	if (quiet)
		return 0;
	if (strcmp(x->source, "running") == 0)
		fprintf(stderr,
		    "huddle: using the running server at %s (pid %ld%s)\n",
		    x->base, p.pid,
		    p.public_url[0] != '\0' ? ", its --public-url" : "");
	else if (strcmp(x->source, "options") == 0)
		fprintf(stderr, "huddle: using %s, as given (%s)%s\n", x->base,
		    pub[0] != '\0' ? "--public-url" : "--host/--port",
		    running ? "" : "; no server is running for this home");
	else
		fprintf(stderr,
		    "huddle: no server is running for this home; using the "
		    "defaults: %s (start it with: huddle serve)\n",
		    x->base);
	if (x->token_var != NULL && running)
		fprintf(stderr,
		    "huddle: the server requires a bearer token: the configs "
		    "read it from $%s\n",
		    x->token_var);
	else if (x->token_var != NULL)
		fprintf(stderr,
		    "huddle: $%s is set, so huddle serve will require it as a "
		    "bearer token: the configs read it from $%s\n",
		    x->token_var, x->token_var);
	return 0;
}

static void
print_text(const attach_ctx *x, int stdio)
{
	const hd_runtime_adapter *const *rt;
	hd_runtime_attach v;
	hd_buf b = HD_BUF_INIT(0);
	char *exp = stdio ? NULL : export_line(x), *cmd;
	int step = 1;

	attach_view(&v, x, stdio);
	printf("# %s: agent %s of team %s, on %s\n", x->name, x->agent,
	    x->team, stdio ? "stdio (huddle mcp)" : x->base);
	if (!stdio) {
		printf("\n# 1. The signed URL. It is a SECRET: whoever holds it "
		       "acts as %s.\n#    Keep it in your shell profile or a "
		       "secrets manager, never in a file you commit.\n%s\n",
		    x->agent, exp);
		if (x->token_var != NULL)
			printf("#    The server requires a bearer token: export "
			       "%s with the token huddle serve was\n#    "
			       "started with (it is not printed here).\n",
			    x->token_var);
	}
	/* then each runtime's block, in the table's order (3) */
	for (rt = hd_runtime_adapters(); *rt != NULL; rt++) {
		if ((*rt)->attach == NULL)
			continue;
		cmd = (*rt)->attach->command(&v);
		(*rt)->attach->text(&b, &v, cmd != NULL ? cmd : "", ++step);
		free(cmd);
	}
	fputs(hd_buf_cstr(&b), stdout);
	hd_buf_dispose(&b);
	free(exp);
}

static json_t *
attach_json(const attach_ctx *x, int stdio)
{
	const hd_runtime_adapter *const *rt;
	hd_runtime_attach v;
	char *exp = export_line(x);
	json_t *j, *commands;

	attach_view(&v, x, stdio);
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:{s:s, s:s, s:o}}",
	    "name", x->name, "agent", x->agent, "team", x->team, "url", x->url,
	    "url_env", x->url_var, "token_env", x->token_var, "server", "base",
	    x->base, "source", x->source, "pid",
	    x->pid != 0 ? json_integer(x->pid) : json_null());
	commands = json_pack("{s:s}", "export", exp);
	free(exp);
	if (j == NULL || commands == NULL) {
		json_decref(j);
		json_decref(commands);
		return NULL;
	}
	json_object_set(j, "commands", commands);
	/* each runtime's command, then what else each says (3) */
	for (rt = hd_runtime_adapters(); *rt != NULL; rt++)
		if ((*rt)->attach != NULL) {
			char *cmd = (*rt)->attach->command(&v);

			json_object_set_new(commands, (*rt)->attach->format,
			    cmd != NULL ? json_string(cmd) : json_null());
			free(cmd);
		}
	for (rt = hd_runtime_adapters(); *rt != NULL; rt++)
		if ((*rt)->attach != NULL && (*rt)->attach->json != NULL)
			(*rt)->attach->json(commands, j, &v);
	json_decref(commands);
	json_object_set_new(j, "stdio",
	    json_pack("{s:s, s:[s, s, s, s, s, s, s]}", "command", x->exe,
		"args", "--home", x->home, "mcp", "--team", x->team, "--agent",
		x->agent));
	return j;
}

/* TEAM AGENT, TEAM --as AGENT, or the older AGENT alone. */
static int
attach_args(hd_cli *c, const char **team, const char **agent)
{
	const char *as;
	int rc;

	if ((rc = hd_cli_as(c, NULL, &as)) != 0)
		return rc;
	*team = NULL;
	if (c->argc == 2) {
		if (as != NULL && strcmp(as, c->argv[1]) != 0)
			return hd_cli_usage(c,
			    "the agent is %s or %s? give it once: attach TEAM "
			    "AGENT",
			    c->argv[1], as);
		*team = c->argv[0];
		*agent = c->argv[1];
	} else if (as != NULL) {
		*team = c->argv[0];
		*agent = as;
	} else
		*agent = c->argv[0]; /* the older `attach AGENT` */
	if (*team != NULL)
		return hd_cli_agent_in(c, *team, *agent);
	return 0;
}

static int
cmd_attach(hd_cli *c)
{
	const char *format = hd_cli_opt_str(c, "format");
	const char *token_env = hd_cli_opt_str(c, "token-env");
	int stdio = hd_cli_flag(c, "stdio");
	const hd_runtime_adapter *const *rt;
	const hd_runtime_attacher *own = NULL;
	hd_buf formats = HD_BUF_INIT(0);
	attach_ctx x = {0};
	hd_agent *a = NULL;
	hd_store *st;
	size_t i, n;
	int rc;

	if (format == NULL)
		format = c->json ? "json" : "text";
	/* text, each runtime's own format (3), json or env */
	hd_buf_puts(&formats, "text, ");
	for (rt = hd_runtime_adapters(); *rt != NULL; rt++)
		if ((*rt)->attach != NULL) {
			hd_buf_printf(&formats, "%s, ", (*rt)->attach->format);
			if (strcmp(format, (*rt)->attach->format) == 0)
				own = (*rt)->attach;
		}
	hd_buf_puts(&formats, "json or env");
	if (own == NULL && strcmp(format, "text") != 0 &&
	    strcmp(format, "json") != 0 && strcmp(format, "env") != 0) {
		rc = hd_cli_usage(c, "--format must be %s, not \"%s\"",
		    hd_buf_cstr(&formats), format);
		hd_buf_dispose(&formats);
		return rc;
	}
	hd_buf_dispose(&formats);
	if (token_env == NULL)
		token_env = "HUDDLE_TOKEN";
	for (i = 0; token_env[i] != '\0'; i++)
		if (!(isupper((unsigned char)token_env[i]) ||
			token_env[i] == '_' ||
			(i > 0 && isdigit((unsigned char)token_env[i]))))
			break;
	if (i == 0 || token_env[i] != '\0' || i > 60)
		return hd_cli_usage(c,
		    "--token-env must be a variable name like HUDDLE_TOKEN "
		    "(capital letters, digits, _), not \"%s\"",
		    token_env);
	if ((rc = attach_args(c, &x.team, &x.agent)) != 0)
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_get(&a, st, x.agent, &c->err) < 0)
		return hd_cli_fail(c);
	x.agent = a->id;
	x.team = a->team_id;
	if (x.team == NULL) {
		hd_err_set(&c->err, HD_EREFUSED, "agent %s is not in a team",
		    a->id);
		rc = hd_cli_fail(c);
		goto done;
	}
	snprintf(x.name, sizeof(x.name), "huddle-%s", a->id);
	n = (size_t)snprintf(x.url_var, sizeof(x.url_var), "HUDDLE_%s_URL",
	    a->id);
	for (i = 0; i < n; i++)
		x.url_var[i] = x.url_var[i] == '-'
		    ? '_'
		    : (char)toupper((unsigned char)x.url_var[i]);
	self_path(x.exe, sizeof(x.exe));
	if (realpath(hd_store_home(st), x.home) == NULL)
		snprintf(x.home, sizeof(x.home), "%s", hd_store_home(st));
	if ((rc = resolve_server(c, &x, token_env, c->json || stdio)) != 0)
		goto done;
	if (hd_attach_url_base(&x.url, st, x.base, a->id, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	rc = HD_EXIT_OK;
	if (strcmp(format, "text") == 0)
		print_text(&x, stdio);
	else if (strcmp(format, "env") == 0) {
		char *exp = export_line(&x);

		printf("%s\n", exp);
		free(exp);
	} else if (own != NULL) { /* the runtime's own format (3) */
		hd_runtime_attach v;
		hd_buf out = HD_BUF_INIT(0);
		json_t *doc = NULL;

		attach_view(&v, &x, stdio);
		if (own->config(&v, &doc, &out, &c->err) < 0)
			rc = hd_cli_fail(c);
		else if (doc != NULL)
			hd_cli_json(doc);
		else
			fputs(hd_buf_cstr(&out), stdout);
		hd_buf_dispose(&out);
	} else
		hd_cli_json(attach_json(&x, stdio));
done:
	free(x.url);
	hd_agent_free(a);
	return rc;
}

static const hd_cli_opt attach_opts[] = {
	{"as", 0, "AGENT", "the agent (or give it as the second argument)", 0},
	{"format", 'f', "FORMAT",
	    "text (default: the commands to run), claude (.mcp.json), codex "
	    "(codex mcp add), json, env (the export line)",
	    0},
	{"stdio", 0, NULL, "use a `huddle mcp` command instead of the HTTP URL",
	    0},
	{"port", 'p', "PORT",
	    "the server's port (default: the running server's, else 7340)", 0},
	{"host", 0, "HOST",
	    "the server's host (default: the running server's, else "
	    "127.0.0.1)",
	    0},
	{"public-url", 0, "URL",
	    "the base URL the agent reaches the server at, like "
	    "https://huddle.example.com:7340 (default: the running server's "
	    "--public-url)",
	    0},
	{"token-env", 0, "VAR",
	    "the variable holding the server's bearer token (default "
	    "HUDDLE_TOKEN)",
	    0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_attach = {
	.name = "attach",
	.args = "TEAM AGENT",
	.summary = "Print how to attach a runtime (Claude Code, Codex) as AGENT",
	.min_args = 1,
	.max_args = 2,
	.opts = attach_opts,
	.fn = cmd_attach,
	.details =
	    "Reads where the server listens from HUDDLE_HOME/serve.json "
	    "(written by huddle serve), else uses the defaults, and says which "
	    "on stderr.\nThe MCP server is named huddle-AGENT. The signed URL "
	    "is a secret: it is printed once, to export as HUDDLE_AGENT_URL; "
	    "the\nconfigs refer to that variable and to $HUDDLE_TOKEN, never "
	    "holding either value.\ntext: the export line, `claude mcp add` "
	    "and `codex mcp add` commands.\nclaude: an mcpServers file for "
	    "Claude Code (.mcp.json), with ${VAR} references.\ncodex: the "
	    "`codex mcp add` command (Codex expands no variable in a url).\n"
	    "json: all of it, machine-readable. env: the export line, for "
	    "eval.\nThe URL carries sig = HMAC-SHA256 of the team and agent "
	    "with the store's secret\n(shared by every server on the same "
	    "database); a URL without a valid sig is served "
	    "read-only. Older spellings: attach AGENT, attach TEAM --as AGENT.",
};
