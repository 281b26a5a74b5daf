/*
 * main.c -- `huddle`: the command table and the dispatcher.
 *
 * Every command goes through dispatch(): global options (--home, --store,
 * --json, --help, --version) may come before the command, and
 * --home/--store/--json/--help after it too; --store (or HUDDLE_STORE) is
 * checked and applied to the environment before the command runs
 * (store-select.c); getopt_long parses each command's own table; the
 * positional count is checked from the table. Errors are printed only by
 * hd_cli_fail/hd_cli_usage, as `huddle: <message>` on stderr (under --json,
 * given anywhere, as one JSON object with "error" and "code"). A mistyped
 * command, subcommand or option is answered with the closest name. A
 * command's subcommands are its own and the operation table's
 * (hd_cli_subs, cli-ops.c). `huddle complete -- WORD...`, the shells'
 * completion helper, is answered from the same tables (complete.c) and
 * is not listed in --help.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>
#include <huddle/version.h>

#include <mcp/mcp.h>

#include "cli.h"

static const hd_cli_cmd *const hand_table[] = {
	&hd_cli_cmd_init,
	&hd_cli_cmd_up,
	&hd_cli_cmd_team,
	&hd_cli_cmd_agent,
	&hd_cli_cmd_task,
	&hd_cli_cmd_chat,
	&hd_cli_cmd_memory,
	&hd_cli_cmd_events,
	&hd_cli_cmd_ask,
	&hd_cli_cmd_conversation,
	&hd_cli_cmd_mcp,
	&hd_cli_cmd_attach,
	&hd_cli_cmd_serve,
	&hd_cli_cmd_exchange,
	&hd_cli_cmd_budget,
	&hd_cli_cmd_routine,
	&hd_cli_cmd_demo,
	&hd_cli_cmd_doctor,
	&hd_cli_cmd_backup,
	&hd_cli_cmd_restore,
	NULL,
};

/* The hand-written commands, then the operation table's (cli-ops.c). */
#define cmd_table hd_cli_commands(hand_table)

static const hd_cli_opt common_opts[] = {
	{"home", 0, "DIR", "use DIR as HUDDLE_HOME (default: $HUDDLE_HOME, "
			   "else ~/.huddle)", 0},
	{"store", 0, "URL", "keep the data in PostgreSQL at a postgres:// URL, "
			    "or sqlite under the home (default: "
			    "$HUDDLE_STORE, else sqlite)", 0},
	{"json", 0, NULL, "print machine-readable JSON on stdout", 0},
	{"help", 'h', NULL, "show this help", 0},
	{NULL, 0, NULL, NULL, 0},
};

static void
print_opts(FILE *f, const hd_cli_opt *opts)
{
	const hd_cli_opt *o;
	char left[64];

	for (o = opts; o != NULL && o->name != NULL; o++) {
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name,
			    o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
			    o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-24s %s%s\n", left, o->help,
		    o->multi ? " (repeatable)" : "");
	}
}

static void
print_main_help(FILE *f)
{
	const hd_cli_cmd *const *cp;

	fprintf(f,
	    "usage: huddle [--home DIR] [--store URL] [--json] <command> "
	    "[options]\n\n"
	    "huddle: one shared place for a team of AI agents on different "
	    "runtimes:\n"
	    "a board of tasks, a room, mailboxes.\n\ncommands:\n");
	for (cp = cmd_table; *cp != NULL; cp++)
		fprintf(f, "  %-18s %s\n", (*cp)->name, (*cp)->summary);
	fprintf(f, "\noptions:\n");
	print_opts(f, common_opts);
	fprintf(f, "  %-24s %s\n", "    --version", "print the version");
	fprintf(f, "\nRun 'huddle <command> --help' for a command's options.\n");
}

static void
print_cmd_help(FILE *f, const char *path, const hd_cli_cmd *cmd)
{
	const hd_cli_cmd *sc;

	if (cmd->subs != NULL) {
		fprintf(f, "usage: huddle %s <subcommand> [options]\n\n%s.\n\n"
			   "subcommands:\n",
		    path, cmd->summary);
		for (sc = hd_cli_subs(cmd); sc->name != NULL; sc++)
			fprintf(f, "  %-12s %s\n", sc->name, sc->summary);
		fprintf(f, "\nRun 'huddle %s <subcommand> --help' for its "
			   "options.\n",
		    path);
		return;
	}
	fprintf(f, "usage: huddle %s%s%s [options]\n\n%s.\n", path,
	    cmd->args ? " " : "", cmd->args ? cmd->args : "", cmd->summary);
	if (cmd->details != NULL)
		fprintf(f, "\n%s\n", cmd->details);
	fprintf(f, "\noptions:\n");
	print_opts(f, cmd->opts);
	print_opts(f, common_opts);
}

/* A stable name for an hd_err code, for `--json` errors. */
static const char *
code_key(int code)
{
	switch (code) {
	case HD_EINVAL: return "invalid";
	case HD_ENOTFOUND: return "not_found";
	case HD_EEXISTS: return "exists";
	case HD_ECONFLICT: return "conflict";
	case HD_EREFUSED: return "refused";
	case HD_ETOOBIG: return "too_big";
	case HD_EBUSY: return "busy";
	case HD_ENOMEM: return "out_of_memory";
	case HD_ETIMEOUT: return "timed_out";
	default: return "error";
	}
}

/* `{"error": msg, "code": code}` on one line on stderr. */
static void
json_error(const char *msg, const char *code)
{
	json_t *o = json_object();

	json_object_set_new(o, "error", json_string(msg));
	json_object_set_new(o, "code", json_string(code));
	json_dumpf(o, stderr, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', stderr);
	json_decref(o);
}

int
hd_cli_usage(hd_cli *c, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c != NULL && c->json) {
		json_error(msg, "usage");
		return HD_EXIT_USAGE;
	}
	fprintf(stderr, "huddle: %s", msg);
	if (c != NULL && c->path != NULL)
		fprintf(stderr, "\nsee 'huddle %s --help'\n", c->path);
	else
		fprintf(stderr, "\nsee 'huddle --help'\n");
	return HD_EXIT_USAGE;
}

/* Optimal string alignment distance (Levenshtein plus swapping two
 * neighbours), for "did you mean". Names longer than 63 bytes are far. */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[64][64], best;

	if (la > 63 || lb > 63)
		return 64;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* Keep the closest candidate so far: close means within 2 edits and a
 * third of the word (at least 1), so "tsk" finds "task" but "x" finds
 * nothing. */
static void
closest(const char *word, const char *cand, const char **best,
    size_t *bestd)
{
	size_t d = edit_distance(word, cand), limit = strlen(word) / 3;

	if (limit < 1)
		limit = 1;
	if (limit > 2)
		limit = 2;
	if (d <= limit && d < *bestd) {
		*best = cand;
		*bestd = d;
	}
}

/* `unknown option --optoin for 'x': did you mean "--option"?` */
static int
unknown_option(hd_cli *c, const hd_cli_opt *const *all, int n,
    const char *arg)
{
	char word[64], where[160];
	const char *best = NULL;
	size_t bestd = 64;
	int i;

	snprintf(word, sizeof(word), "%s", arg + strspn(arg, "-"));
	word[strcspn(word, "=")] = '\0';
	for (i = 0; i < n; i++)
		closest(word, all[i]->name, &best, &bestd);
	snprintf(where, sizeof(where), "%s%s%s", c->path ? " for '" : "",
	    c->path ? c->path : "", c->path ? "'" : "");
	if (best != NULL)
		return hd_cli_usage(c,
		    "unknown option %.64s%s: did you mean \"--%s\"?", arg, where,
		    best);
	return hd_cli_usage(c, "unknown option %.64s%s", arg, where);
}

/* Parse a leaf command's options and positionals, then run it. */
static int
run_leaf(hd_cli *c, const hd_cli_cmd *cmd, int argc, char **argv)
{
	struct option lopts[HD_CLI_MAX_OPTS + 4];
	const hd_cli_opt *all[HD_CLI_MAX_OPTS + 4], *o;
	char shorts[HD_CLI_MAX_OPTS * 2 + 4];
	size_t ns = 0;
	int n = 0, i, ch, idx, rc;

	shorts[ns++] = ':'; /* report missing arguments as ':' */
	for (i = 0; i < 2; i++) {
		for (o = i == 0 ? cmd->opts : common_opts;
		     o != NULL && o->name != NULL; o++) {
			if (n >= HD_CLI_MAX_OPTS + 3)
				break;
			all[n] = o;
			lopts[n].name = o->name;
			lopts[n].has_arg = o->arg ? required_argument : no_argument;
			lopts[n].flag = NULL;
			lopts[n].val = 1000 + n;
			if (o->short_name) {
				shorts[ns++] = (char)o->short_name;
				if (o->arg)
					shorts[ns++] = ':';
			}
			n++;
		}
	}
	memset(&lopts[n], 0, sizeof(lopts[n]));
	shorts[ns] = '\0';

	c->cmd = cmd;
	optind = 0; /* glibc: full re-initialisation */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		if (ch == '?') {
			if (optopt != 0 && optopt < 1000)
				return hd_cli_usage(c, "unknown option -%c for '%s'",
				    optopt, c->path);
			return unknown_option(c, all, n, argv[optind - 1]);
		}
		if (ch == ':')
			return hd_cli_usage(c, "option %s needs a value",
			    argv[optind - 1]);
		if (ch >= 1000)
			o = all[ch - 1000];
		else {
			o = NULL;
			for (i = 0; i < n; i++)
				if (all[i]->short_name == ch)
					o = all[i];
			if (o == NULL)
				return hd_cli_usage(c, "unknown option -%c", ch);
		}
		if (strcmp(o->name, "help") == 0) {
			print_cmd_help(stdout, c->path, cmd);
			return HD_EXIT_OK;
		}
		if (strcmp(o->name, "home") == 0) {
			c->home_opt = optarg;
			continue;
		}
		if (strcmp(o->name, "store") == 0) {
			c->store_opt = optarg;
			continue;
		}
		if (strcmp(o->name, "json") == 0) {
			c->json = 1;
			continue;
		}
		for (i = 0; i < c->nparsed; i++)
			if (c->parsed[i].opt == o)
				break;
		if (i == c->nparsed) {
			if (c->nparsed == HD_CLI_MAX_OPTS)
				return hd_cli_usage(c, "too many options");
			c->parsed[c->nparsed].opt = o;
			c->parsed[c->nparsed].n = 0;
			c->nparsed++;
		}
		if (c->parsed[i].n > 0 && !o->multi)
			c->parsed[i].n = 0; /* the last one wins */
		if (c->parsed[i].n == HD_CLI_MAX_VALS)
			return hd_cli_usage(c, "--%s given too many times",
			    o->name);
		c->parsed[i].vals[c->parsed[i].n++] = o->arg ? optarg : "";
	}
	c->argc = argc - optind;
	c->argv = argv + optind;
	if (c->argc < cmd->min_args)
		return hd_cli_usage(c, "'%s' needs %s", c->path,
		    cmd->args ? cmd->args : "more arguments");
	if (cmd->max_args >= 0 && c->argc > cmd->max_args)
		return hd_cli_usage(c, "unexpected argument \"%.64s\" for '%s'",
		    c->argv[cmd->max_args], c->path);
	/* before any store opens or thread starts (store-select.c (1)) */
	if ((rc = hd_cli_store_select(c)) != 0)
		return rc;
	return cmd->fn(c);
}

const char *
hd_cli_opt_str(hd_cli *c, const char *name)
{
	int i;

	for (i = 0; i < c->nparsed; i++)
		if (strcmp(c->parsed[i].opt->name, name) == 0 &&
		    c->parsed[i].n > 0)
			return c->parsed[i].vals[c->parsed[i].n - 1];
	return NULL;
}

int
hd_cli_team_arg(hd_cli *c, int pos, const char **team)
{
	const char *opt = hd_cli_opt_str(c, "team");

	*team = opt;
	if (pos < 0 || pos >= c->argc)
		return 0;
	if (opt != NULL && strcmp(opt, c->argv[pos]) != 0)
		return hd_cli_usage(c,
		    "the team is %s or %s? give it once, as the first argument",
		    c->argv[pos], opt);
	*team = c->argv[pos];
	return 0;
}

int
hd_cli_as(hd_cli *c, const char *alias, const char **as)
{
	const char *opt_as = hd_cli_opt_str(c, "as");
	const char *old = alias != NULL ? hd_cli_opt_str(c, alias) : NULL;

	if (opt_as != NULL && old != NULL && strcmp(opt_as, old) != 0)
		return hd_cli_usage(c,
		    "--as %s and --%s %s name two agents; give one (--as)",
		    opt_as, alias, old);
	*as = opt_as != NULL ? opt_as : old;
	return 0;
}

int
hd_cli_agent_in(hd_cli *c, const char *team, const char *agent)
{
	hd_agent *a = NULL;
	hd_store *st = NULL;
	int ok;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_get(&a, st, agent, &c->err) < 0)
		return hd_cli_fail(c);
	ok = a->team_id != NULL && strcmp(a->team_id, team) == 0;
	if (!ok)
		hd_err_set(&c->err, HD_EREFUSED, "agent \"%s\" is not in team %s",
		    agent, team);
	hd_agent_free(a);
	return ok ? 0 : hd_cli_fail(c);
}

int
hd_cli_flag(hd_cli *c, const char *name)
{
	return hd_cli_opt_str(c, name) != NULL;
}

int
hd_cli_opt_all(hd_cli *c, const char *name, const char *const **vals)
{
	int i;

	for (i = 0; i < c->nparsed; i++)
		if (strcmp(c->parsed[i].opt->name, name) == 0) {
			*vals = c->parsed[i].vals;
			return c->parsed[i].n;
		}
	*vals = NULL;
	return 0;
}

int
hd_cli_opt_int(hd_cli *c, const char *name, int64_t min, int64_t max,
    int64_t *out)
{
	const char *v = hd_cli_opt_str(c, name);
	hd_err err = HD_ERR_INIT;
	int64_t n;
	char what[64];

	if (v == NULL)
		return 0;
	snprintf(what, sizeof(what), "--%s", name);
	if (hd_parse_i64(&n, v, what, &err) < 0)
		return hd_cli_usage(c, "%s", err.msg);
	if (n < min || n > max)
		return hd_cli_usage(c, "--%s must be between %lld and %lld", name,
		    (long long)min, (long long)max);
	*out = n;
	return 0;
}

int
hd_cli_store(hd_cli *c, hd_store **out)
{
	char *home;

	if (c->st == NULL) {
		if ((home = hd_home_resolve(c->home_opt, &c->err)) == NULL)
			return hd_cli_fail(c);
		if (hd_store_open(&c->st, home, &c->err) < 0) {
			free(home);
			return hd_cli_fail(c);
		}
		free(home);
	}
	*out = c->st;
	return 0;
}

int
hd_cli_fail(hd_cli *c)
{
	const char *msg = c->err.msg[0] ? c->err.msg : hd_code_name(c->err.code);

	if (c->json)
		json_error(msg, code_key(c->err.code));
	else
		fprintf(stderr, "huddle: %s\n", msg);
	return HD_EXIT_FAIL;
}

void
hd_cli_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("huddle: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
hd_cli_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(v);
}

static const hd_cli_cmd *
find_cmd(const hd_cli_cmd *const *table, const hd_cli_cmd *subs,
    const char *name)
{
	const hd_cli_cmd *sc;

	if (table != NULL) {
		for (; *table != NULL; table++)
			if (strcmp((*table)->name, name) == 0)
				return *table;
		return NULL;
	}
	for (sc = subs; sc->name != NULL; sc++)
		if (strcmp(sc->name, name) == 0)
			return sc;
	return NULL;
}

static int
is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ||
	    strcmp(a, "help") == 0;
}

/* An option before the command: the common options and --version. */
static int
unknown_global(hd_cli *c, const char *arg)
{
	static const hd_cli_opt version = {"version", 0, NULL, "", 0};
	const hd_cli_opt *all[8];
	int n = 0;

	while (n < 7 && common_opts[n].name != NULL) {
		all[n] = &common_opts[n];
		n++;
	}
	all[n++] = &version;
	c->path = NULL;
	return unknown_option(c, all, n, arg);
}

/* `unknown command "tsk": did you mean "task"?`; subs for a subcommand. */
static int
unknown_command(hd_cli *c, const hd_cli_cmd *parent, const char *name)
{
	const hd_cli_cmd *const *cp;
	const hd_cli_cmd *sc;
	const char *best = NULL;
	size_t bestd = 64;
	char what[96];

	if (parent == NULL) {
		for (cp = cmd_table; *cp != NULL; cp++)
			closest(name, (*cp)->name, &best, &bestd);
		snprintf(what, sizeof(what), "command");
	} else {
		for (sc = hd_cli_subs(parent); sc->name != NULL; sc++)
			closest(name, sc->name, &best, &bestd);
		snprintf(what, sizeof(what), "subcommand");
	}
	if (best != NULL)
		return hd_cli_usage(c, "unknown %s \"%.64s\"%s%s%s: did you "
				       "mean \"%s\"?",
		    what, name, parent ? " for '" : "",
		    parent ? parent->name : "", parent ? "'" : "", best);
	return hd_cli_usage(c, "unknown %s \"%.64s\"%s%s%s", what, name,
	    parent ? " for '" : "", parent ? parent->name : "",
	    parent ? "'" : "");
}

/* Take leading --home/--store/--json/--help/--version, then dispatch. */
int
main(int argc, char **argv)
{
	static char pathbuf[128];
	hd_cli c;
	const hd_cli_cmd *cmd, *sub;
	int i = 1, rc;

	memset(&c, 0, sizeof(c));
	/* native agents' turns run huddle's tools in this process */
	hd_runtime_set_tool_host(hd_mcp_tool_host());
	/* The shells' completion helper, hidden from --help (complete.c). */
	if (argc >= 2 && strcmp(argv[1], "complete") == 0)
		return hd_cli_complete(cmd_table, common_opts, argc - 2,
		    argv + 2);
	/* --json anywhere makes every error JSON, even one found before the
	 * option itself is parsed. */
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			c.json = 1;
	i = 1;
	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--json") == 0)
			c.json = 1;
		else if (strcmp(argv[i], "--home") == 0 && i + 1 < argc)
			c.home_opt = argv[++i];
		else if (strncmp(argv[i], "--home=", 7) == 0)
			c.home_opt = argv[i] + 7;
		else if (strcmp(argv[i], "--store") == 0 && i + 1 < argc)
			c.store_opt = argv[++i];
		else if (strncmp(argv[i], "--store=", 8) == 0)
			c.store_opt = argv[i] + 8;
		else if (strcmp(argv[i], "--home") == 0 ||
		    strcmp(argv[i], "--store") == 0) {
			c.path = NULL;
			return hd_cli_usage(&c, "option %s needs a value",
			    argv[i]);
		} else if (is_help(argv[i])) {
			print_main_help(stdout);
			return HD_EXIT_OK;
		} else if (strcmp(argv[i], "--version") == 0) {
			if (c.json)
				printf("{\"version\":\"%s\",\"commit\":\"%s\"}\n",
				    hd_version(), hd_version_commit());
			else
				printf("huddle %s (%s)\n", hd_version(),
				    hd_version_commit());
			return HD_EXIT_OK;
		} else
			return unknown_global(&c, argv[i]);
		i++;
	}
	if (i >= argc) {
		print_main_help(stderr);
		return HD_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		if (i + 1 < argc &&
		    (cmd = find_cmd(cmd_table, NULL, argv[i + 1])) != NULL)
			print_cmd_help(stdout, cmd->name, cmd);
		else
			print_main_help(stdout);
		return HD_EXIT_OK;
	}
	if ((cmd = find_cmd(cmd_table, NULL, argv[i])) == NULL)
		return unknown_command(&c, NULL, argv[i]);
	snprintf(pathbuf, sizeof(pathbuf), "%s", cmd->name);
	c.path = pathbuf;
	if (cmd->subs != NULL) {
		if (i + 1 >= argc) {
			print_cmd_help(stderr, cmd->name, cmd);
			return HD_EXIT_USAGE;
		}
		if (is_help(argv[i + 1])) {
			print_cmd_help(stdout, cmd->name, cmd);
			return HD_EXIT_OK;
		}
		if ((sub = find_cmd(NULL, hd_cli_subs(cmd), argv[i + 1])) ==
		    NULL) {
			return unknown_command(&c, cmd, argv[i + 1]);
		}
		snprintf(pathbuf, sizeof(pathbuf), "%s %s", cmd->name, sub->name);
		cmd = sub;
		i++;
	}
	rc = run_leaf(&c, cmd, argc - i, argv + i);
	hd_store_close(c.st);
	return rc;
}
