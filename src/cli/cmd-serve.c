/*
 * cmd-serve.c -- `huddle serve`: the HTTP server (MCP, REST, SSE).
 *
 * SIGINT and SIGTERM are blocked in every thread and taken here with
 * sigwait(), so shutdown runs in one place: stop accepting, let requests
 * in flight finish, end the event streams with a final event, exit 0.
 * Once listening it records where in HUDDLE_HOME/serve.json (presence.c:
 * host, bind address, port, --public-url, whether a token is required,
 * whether it speaks HTTPS), removed again at a clean exit; `huddle
 * attach`, ask and exchange read it.
 *
 * HTTPS: --tls-cert and --tls-key, both or neither (the server reads and
 * checks the files, src/http/tls.c). Bound beyond loopback without them,
 * it says once on stderr what travels in clear (the bearer token, the
 * signed attach URLs), and still serves.
 *
 * The connection limits (--max-connections, --max-per-address,
 * --max-followers, --header-timeout) are range-checked here; how they
 * fit together and with the open-file limit is checked by the server
 * (src/http/guard.c), which logs the effective values.
 *
 * The store: the one --store / HUDDLE_STORE selects (store-select.c), said
 * on stdout after the address as `store: sqlite HOME/huddle.db` or
 * `store: postgresql://user:***@host/db` (never a password). SQLite's
 * quick_check at start is for the SQLite file only; PostgreSQL checks its
 * own pages.
 *
 * Logging (stderr, for a terminal or the journal): one line per request
 * (server.c (6)) and per engine event (eventlog.c) at level info, set by
 * --log-level (default HUDDLE_LOG, else info) or --quiet (warn: neither
 * line), as text or, with --log-format json, one JSON object a line
 * (default HUDDLE_LOG_FORMAT, else text). Set here, before any thread.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/log.h>

#include <http/http.h>
#include "cli.h"

/* --public-url: an http(s) base with a host, no query or fragment; a
 * trailing slash is dropped so `<base>/mcp` is the MCP endpoint. 0 when
 * good (out filled), else a usage error. Also attach's (cli.h). */
int
hd_cli_public_url(hd_cli *c, const char *url, char *out, size_t outlen)
{
	size_t n;
	const char *rest;

	out[0] = '\0';
	if (url == NULL)
		return 0;
	rest = strncmp(url, "http://", 7) == 0	  ? url + 7
	    : strncmp(url, "https://", 8) == 0 ? url + 8
					       : NULL;
	if (rest == NULL || rest[0] == '\0' || rest[0] == '/' ||
	    strpbrk(url, "?#\"' \t\r\n") != NULL || strlen(url) >= outlen)
		return hd_cli_usage(c,
		    "--public-url must be an http:// or https:// URL with a "
		    "host and no query, like https://huddle.example.com, not "
		    "\"%s\"",
		    url);
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	snprintf(out, outlen, "%.*s", (int)n, url);
	return 0;
}

/* --log-level, --quiet and --log-format, applied (see the top). */
static int
log_args(hd_cli *c)
{
	const char *level = hd_cli_opt_str(c, "log-level");
	const char *format = hd_cli_opt_str(c, "log-format");
	hd_log_level lv;

	if (level != NULL && hd_cli_flag(c, "quiet"))
		return hd_cli_usage(c, "--quiet and --log-level do not go "
				       "together: --quiet is --log-level warn");
	if (level != NULL) {
		if (hd_log_level_parse(level, &lv) < 0)
			return hd_cli_usage(c,
			    "--log-level must be debug, info, warn, error or "
			    "off, not \"%.64s\"",
			    level);
		hd_log_set_level(lv);
	} else if (hd_cli_flag(c, "quiet"))
		hd_log_set_level(HD_LOG_WARN);
	if (format == NULL)
		return 0;
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
		return hd_cli_usage(c,
		    "--log-format must be text or json, not \"%.64s\"", format);
	hd_log_set_format(strcmp(format, "json") == 0 ? HD_LOG_JSON
						      : HD_LOG_TEXT);
	return 0;
}

static int
cmd_serve(hd_cli *c)
{
	hd_http_presence pres = {0};
	hd_http_config cfg = {0};
	hd_http_server *srv = NULL;
	hd_store *st;
	int64_t port = HD_HTTP_DEFAULT_PORT, threads = 8;
	int64_t max_conns = 0, per_addr = 0, followers = 0, header_s = 0;
	sigset_t set;
	char *home, store[1024];
	int sig, rc;

	if ((rc = log_args(c)) != 0)
		return rc;
	cfg.bind = hd_cli_opt_str(c, "bind");
	cfg.token = hd_cli_opt_str(c, "token");
	if (cfg.token == NULL)
		cfg.token = getenv("HUDDLE_TOKEN");
	if ((rc = hd_cli_opt_int(c, "port", 0, 65535, &port)) != 0 ||
	    (rc = hd_cli_opt_int(c, "threads", 1, 64, &threads)) != 0 ||
	    (rc = hd_cli_opt_int(c, "max-connections", 64, 1000000,
		 &max_conns)) != 0 ||
	    (rc = hd_cli_opt_int(c, "max-per-address", 1, 1000000,
		 &per_addr)) != 0 ||
	    (rc = hd_cli_opt_int(c, "max-followers", 1, 1000000,
		 &followers)) != 0 ||
	    (rc = hd_cli_opt_int(c, "header-timeout", 1, 3600, &header_s)) != 0)
		return rc;
	if ((rc = hd_cli_public_url(c, hd_cli_opt_str(c, "public-url"),
		 pres.public_url, sizeof(pres.public_url))) != 0)
		return rc;
	cfg.public_url = pres.public_url[0] != '\0' ? pres.public_url : NULL;
	cfg.tls_cert = hd_cli_opt_str(c, "tls-cert");
	cfg.tls_key = hd_cli_opt_str(c, "tls-key");
	if ((cfg.tls_cert == NULL) != (cfg.tls_key == NULL))
		return hd_cli_usage(c,
		    "HTTPS needs both --tls-cert FILE and --tls-key FILE");
	cfg.port = (int)port;
	cfg.threads = (int)threads;
	cfg.max_connections = (unsigned int)max_conns;
	cfg.max_per_address = (unsigned int)per_addr;
	cfg.max_followers = (unsigned int)followers;
	cfg.header_timeout = (unsigned int)header_s;
	/* Open once in the foreground: creates and migrates the home, so the
	 * server threads never race on a fresh database. */
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	/* A damaged database is refused here, once, before anything serves
	 * it: quick_check reads every page (see hd_store_quick_check), which
	 * a long-running server pays once but a CLI call would pay each time.
	 * SQLite's only: PostgreSQL checksums its own pages. */
	if (!hd_cli_store_pg() && hd_store_quick_check(st, &c->err) < 0)
		return hd_cli_fail(c);
	if ((rc = hd_cli_store_describe(c, store, sizeof(store))) != 0)
		return rc;
	if ((home = strdup(hd_store_home(st))) == NULL)
		return HD_EXIT_FAIL;
	cfg.home = home;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (hd_http_start(&srv, &cfg, &c->err) < 0) {
		free(home);
		return hd_cli_fail(c);
	}
	printf("huddle is running at %s://%s:%d\n",
	    hd_http_tls(srv) ? "https" : "http",
	    cfg.bind != NULL ? cfg.bind : "127.0.0.1", hd_http_port(srv));
	printf("store: %s\n", store);
	fflush(stdout);
	if (!hd_http_tls(srv) && cfg.bind != NULL &&
	    !hd_http_is_loopback(cfg.bind))
		hd_cli_warn("serving %s beyond loopback over plain HTTP: the "
			    "bearer token and the signed attach URLs travel in "
			    "clear, so anyone on the network path can read "
			    "them and act as your agents. Serve HTTPS with "
			    "--tls-cert and --tls-key (or behind a TLS proxy)",
		    cfg.bind);
	/* where the CLI's engines and `huddle attach` find it (presence.c) */
	snprintf(pres.bind, sizeof(pres.bind), "%s",
	    cfg.bind != NULL ? cfg.bind : "127.0.0.1");
	snprintf(pres.host, sizeof(pres.host), "%s",
	    strcmp(pres.bind, "0.0.0.0") == 0 || strcmp(pres.bind, "::") == 0
		? "127.0.0.1"
		: pres.bind);
	pres.port = hd_http_port(srv);
	pres.token = cfg.token != NULL && cfg.token[0] != '\0'; /* as server.c */
	pres.tls = hd_http_tls(srv);
	if (hd_http_presence_write(home, &pres, &c->err) < 0)
		hd_log_write(HD_LOG_WARN, "serve", "%s", c->err.msg);
	sigwait(&set, &sig);
	hd_log_write(HD_LOG_INFO, "serve", "%s received; shutting down",
	    sig == SIGINT ? "SIGINT" : "SIGTERM");
	hd_http_presence_remove(home);
	hd_http_stop(srv);
	free(home);
	return HD_EXIT_OK;
}

static const hd_cli_opt serve_opts[] = {
    {"bind", 'b', "ADDR", "listen address (default 127.0.0.1)", 0},
    {"port", 'p', "PORT", "listen port (default 7340; 0 picks a free one)", 0},
    {"token", 0, "TOKEN",
	"require `Authorization: Bearer TOKEN` (default $HUDDLE_TOKEN; "
	"needed beyond loopback)",
	0},
    {"public-url", 0, "URL",
	"the base URL clients reach this server at (its TLS host name, or "
	"a proxy or tunnel); huddle attach prints URLs under it",
	0},
    {"tls-cert", 0, "FILE",
	"serve HTTPS with this PEM certificate (chain, leaf first); needs "
	"--tls-key",
	0},
    {"tls-key", 0, "FILE", "the certificate's PEM private key, unencrypted",
	0},
    {"threads", 0, "N",
	"HTTP worker threads (default 8; a room post waits on its thread "
	"for its group commit)",
	0},
    {"max-connections", 0, "N",
	"connections at once (default 8192, lowered to fit ulimit -n); the "
	"last eighth only for loopback clients and token holders",
	0},
    {"max-per-address", 0, "N",
	"connections one address may have sending a request or idle "
	"(default 256)",
	0},
    {"max-followers", 0, "N",
	"live event streams at once (default half of --max-connections); "
	"one more is answered 503",
	0},
    {"header-timeout", 0, "S",
	"seconds a request has to arrive whole, headers and body, however "
	"slowly its bytes trickle in (default 10)",
	0},
    {"log-level", 0, "LEVEL",
	"debug, info (a line per request and per engine event), warn, "
	"error or off (default $HUDDLE_LOG, else info)",
	0},
    {"quiet", 'q', NULL, "log warnings and errors only: --log-level warn",
	0},
    {"log-format", 0, "FORMAT",
	"text, or json for one JSON object a line (default "
	"$HUDDLE_LOG_FORMAT, else text)",
	0},
    {NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_serve = {
    .name = "serve",
    .summary = "Serve MCP (POST /mcp), the REST API and live events over "
	       "HTTP",
    .max_args = 0,
    .opts = serve_opts,
    .fn = cmd_serve,
    .details = "Stops cleanly on SIGINT or SIGTERM. Attach an agent with "
	       "'huddle attach TEAM AGENT', which reads where this server "
	       "listens from HUDDLE_HOME/serve.json.\nFor agents on other "
	       "machines: --bind 0.0.0.0 --token ... --tls-cert F --tls-key F "
	       "--public-url https://NAME:PORT (NAME as the certificate "
	       "names it);\nbound beyond loopback without TLS, the token "
	       "and the signed URLs travel in clear, and serve warns so.\n"
	       "It prints where it listens and which store it serves: "
	       "sqlite HOME/huddle.db, or\n--store's PostgreSQL URL (its "
	       "password masked), which several servers, each with\nits own "
	       "HUDDLE_HOME, may share: an attach URL from one works on all.",
};
