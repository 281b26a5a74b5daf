/*
 * complete.c -- `huddle complete -- WORD...`: the candidates for the last
 * word of a command line, for the shell completions
 * (completions/huddle.bash, completions/_huddle).
 *
 * Hidden: not in the command table, so `huddle --help` and the man page
 * never list it; main.c calls hd_cli_complete before anything else when
 * argv[1] is "complete". WORD... are the words after `huddle` up to and
 * including the one being completed (possibly empty).
 *
 * Invariants:
 *  (1) Everything offered comes from the tables the dispatcher parses
 *      (main.c's commands and common options, hd_cli_subs), so the
 *      completions cannot drift from --help: commands (also after
 *      `huddle help`), subcommands, long options (a non-repeatable one
 *      already given is not offered again), and values chosen by an
 *      option's metavariable or the command's positional synopsis: TEAM
 *      -> team ids, AGENT, AGENTS and OLD -> agent ids (of the team typed
 *      as the TEAM positional or --team/-t when there is one, else of
 *      every team), DIR and FILE -> the shell's own file completion,
 *      "a|b" -> a and b, a lowercase word in the synopsis ("TEAM | cancel
 *      TEAM") -> itself.
 *  (2) Output: one candidate per line, only those starting with the word
 *      being completed; or the single line ":dir" or ":file" asking the
 *      shell to complete a path. No candidate starts with ':'.
 *  (3) Ids are read from HUDDLE_HOME/huddle.db -- the home from --home on
 *      the line, else $HUDDLE_HOME, else ~/.huddle -- and only when that
 *      database exists: completing never creates a home or a database
 *      and writes nothing of its own (the store is opened as any command
 *      opens it). A --store on the line is applied as the command would
 *      apply it (store-select.c): a PostgreSQL URL is read from as it is,
 *      sqlite means the home's file; a value --store refuses, or an
 *      unusable HUDDLE_STORE, offers no ids. Nothing goes to stderr and the exit code is 0 whatever
 *      was typed, so a half-typed line cannot make the shell print noise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/agent.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "cli.h"

#define TOKENS_MAX 16

struct line {
	const char *cur;  /* the word being completed */
	const char *home; /* --home on the line, or NULL */
	const char *store; /* --store on the line, or NULL */
	const char *team; /* the team typed, or NULL */
};

static void
offer(const struct line *l, const char *cand)
{
	if (strncmp(cand, l->cur, strlen(l->cur)) == 0)
		printf("%s\n", cand);
}

/* Apply --store on the line, else check HUDDLE_STORE, as a command would
 * (invariant 3): 1 when the store can be read, 0 when it must not be. */
static int
use_store(const struct line *l)
{
	const char *v = l->store != NULL ? l->store : getenv("HUDDLE_STORE");

	if (v == NULL || (l->store == NULL && v[0] == '\0'))
		return 1;
	if (!hd_cli_store_url_ok(v))
		return 0;
	if (strcmp(v, "sqlite") == 0)
		return unsetenv("HUDDLE_STORE") == 0;
	return setenv("HUDDLE_STORE", v, 1) == 0;
}

/* The team or agent ids in the store, when it exists. */
static void
offer_ids(const struct line *l, int agents)
{
	hd_err err = HD_ERR_INIT;
	hd_store *st = NULL;
	hd_teams teams = {0};
	hd_agents as = {0};
	char *home, path[4096];
	size_t i;

	if (!use_store(l))
		return;
	if ((home = hd_home_resolve(l->home, &err)) == NULL)
		return;
	snprintf(path, sizeof(path), "%s/huddle.db", home);
	if ((!hd_cli_store_pg() && access(path, R_OK) != 0) ||
	    hd_store_open(&st, home, &err) < 0) {
		free(home);
		return;
	}
	free(home);
	if (!agents && hd_team_list(&teams, st, &err) == 0) {
		for (i = 0; i < teams.n; i++)
			offer(l, teams.items[i].id);
		hd_teams_dispose(&teams);
	}
	if (agents && hd_agent_list(&as, st, l->team, &err) == 0) {
		for (i = 0; i < as.n; i++)
			offer(l, as.items[i].id);
		hd_agents_dispose(&as);
	}
	hd_store_close(st);
}

/* What a metavariable or a synopsis word stands for (invariant 1). */
static void
offer_value(const struct line *l, const char *meta)
{
	char buf[128], *p, *save = NULL;

	if (strcmp(meta, "TEAM") == 0)
		offer_ids(l, 0);
	else if (strcmp(meta, "AGENT") == 0 || strcmp(meta, "AGENTS") == 0 ||
	    strcmp(meta, "OLD") == 0)
		offer_ids(l, 1);
	else if (strcmp(meta, "DIR") == 0)
		printf(":dir\n");
	else if (strcmp(meta, "FILE") == 0)
		printf(":file\n");
	else if (strchr(meta, '|') != NULL || (meta[0] >= 'a' && meta[0] <= 'z')) {
		snprintf(buf, sizeof(buf), "%s", meta);
		for (p = strtok_r(buf, "|", &save); p != NULL;
		     p = strtok_r(NULL, "|", &save))
			offer(l, p);
	}
}

/* A synopsis ("TEAM | cancel TEAM", "[TEAM] ID") as alternatives of
 * positional words, brackets dropped. Returns the number of alternatives. */
static int
synopsis(const char *args, char *buf, size_t len,
    char *alt[][TOKENS_MAX], int nalt_max, int *ntok)
{
	char *p, *save = NULL;
	int a = 0;

	snprintf(buf, len, "%s", args != NULL ? args : "");
	ntok[0] = 0;
	for (p = strtok_r(buf, " []", &save); p != NULL;
	     p = strtok_r(NULL, " []", &save)) {
		if (strcmp(p, "|") == 0) {
			if (a + 1 == nalt_max)
				break;
			ntok[++a] = 0;
			continue;
		}
		if (ntok[a] < TOKENS_MAX)
			alt[a][ntok[a]++] = p;
	}
	return a + 1;
}

static const hd_cli_opt *
find_opt(const hd_cli_opt *const *sets, const char *w)
{
	const hd_cli_opt *o;
	size_t n;
	int s;

	for (s = 0; sets[s] != NULL; s++)
		for (o = sets[s]; o->name != NULL; o++) {
			n = strlen(o->name);
			if (w[1] == '-' && strncmp(w + 2, o->name, n) == 0 &&
			    (w[2 + n] == '\0' || w[2 + n] == '='))
				return o;
			if (w[1] != '-' && o->short_name != 0 &&
			    w[1] == o->short_name && w[2] == '\0')
				return o;
		}
	return NULL;
}

/* 1 when the positionals typed match an alternative of the synopsis: its
 * lowercase words typed as they are, and room for one more when more is
 * being typed. */
static int
fits(char *const *alt, int ntok, const char *const *pos, int npos, int more)
{
	int k;

	if (npos + (more ? 1 : 0) > ntok)
		return 0;
	for (k = 0; k < npos; k++)
		if (alt[k][0] >= 'a' && alt[k][0] <= 'z' &&
		    strcmp(alt[k], pos[k]) != 0)
			return 0;
	return 1;
}

/* The values completion needs later: the home and the team. */
static void
remember(struct line *l, const hd_cli_opt *o, const char *v)
{
	if (strcmp(o->name, "home") == 0)
		l->home = v;
	else if (strcmp(o->name, "store") == 0)
		l->store = v;
	else if (strcmp(o->name, "team") == 0)
		l->team = v;
}

/* The positionals, options and values of a leaf command's words. */
static void
complete_leaf(struct line *l, const hd_cli_cmd *cmd,
    const hd_cli_opt *common, int n, char **w)
{
	const hd_cli_opt *const sets[] = {cmd->opts ? cmd->opts : common,
	    cmd->opts ? common : NULL, NULL};
	const hd_cli_opt *given[64], *o;
	const char *pos[TOKENS_MAX], *v, *meta = NULL;
	char buf[256], *alt[4][TOKENS_MAX];
	int ntok[4], nalt, npos = 0, ngiven = 0, i, a, s, k, dashdash = 0;

	for (i = 0; i < n - 1; i++) {
		if (!dashdash && strcmp(w[i], "--") == 0) {
			dashdash = 1;
			continue;
		}
		if (dashdash || w[i][0] != '-' || w[i][1] == '\0') {
			if (npos < TOKENS_MAX)
				pos[npos++] = w[i];
			continue;
		}
		if ((o = find_opt(sets, w[i])) == NULL)
			continue;
		if (ngiven < 64)
			given[ngiven++] = o;
		if (o->arg == NULL)
			continue;
		if ((v = strchr(w[i], '=')) != NULL) { /* --home=DIR */
			remember(l, o, v + 1);
			continue;
		}
		if (i + 1 == n - 1) { /* completing this option's value */
			meta = o->arg;
			break;
		}
		remember(l, o, w[++i]);
	}
	nalt = synopsis(cmd->args, buf, sizeof(buf), alt, 4, ntok);
	/* The team typed as the TEAM positional of an alternative that fits
	 * what was typed ("exchange cancel dev": the second). */
	for (a = 0; a < nalt && l->team == NULL; a++)
		if (fits(alt[a], ntok[a], pos, npos, meta == NULL))
			for (k = 0; k < npos; k++)
				if (strcmp(alt[a][k], "TEAM") == 0) {
					l->team = pos[k];
					break;
				}
	if (meta != NULL) {
		offer_value(l, meta);
		return;
	}
	if (!dashdash && l->cur[0] == '-') {
		for (s = 0; sets[s] != NULL; s++)
			for (o = sets[s]; o->name != NULL; o++) {
				for (i = 0; i < ngiven && (given[i] != o || o->multi);
				     i++)
					;
				if (i < ngiven)
					continue;
				snprintf(buf, sizeof(buf), "--%s", o->name);
				offer(l, buf);
			}
		return;
	}
	for (a = 0; a < nalt; a++)
		if (fits(alt[a], ntok[a], pos, npos, 1))
			offer_value(l, alt[a][npos]);
}

int
hd_cli_complete(const hd_cli_cmd *const *table, const hd_cli_opt *common,
    int argc, char **argv)
{
	static const char *const globals[] = {"--home", "--store", "--json",
	    "--help", "--version", NULL};
	struct line l = {"", NULL, NULL, NULL};
	const hd_cli_cmd *const *cp, *cmd = NULL, *sc;
	int i = 0, k;

	if (argc > 0 && strcmp(argv[0], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc == 0)
		return HD_EXIT_OK;
	l.cur = argv[argc - 1];
	/* global options before the command */
	for (; i < argc - 1 && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--home") == 0) {
			if (i + 1 == argc - 1) {
				printf(":dir\n");
				return HD_EXIT_OK;
			}
			l.home = argv[++i];
		} else if (strncmp(argv[i], "--home=", 7) == 0)
			l.home = argv[i] + 7;
		else if (strcmp(argv[i], "--store") == 0) {
			if (i + 1 == argc - 1) {
				offer(&l, "sqlite");
				return HD_EXIT_OK;
			}
			l.store = argv[++i];
		} else if (strncmp(argv[i], "--store=", 8) == 0)
			l.store = argv[i] + 8;
	}
	if (i == argc - 1) {
		if (l.cur[0] == '-')
			for (k = 0; globals[k] != NULL; k++)
				offer(&l, globals[k]);
		else
			for (cp = table; *cp != NULL; cp++)
				offer(&l, (*cp)->name);
		return HD_EXIT_OK;
	}
	if (strcmp(argv[i], "help") == 0) { /* `huddle help CMD` */
		if (i + 1 == argc - 1)
			for (cp = table; *cp != NULL; cp++)
				offer(&l, (*cp)->name);
		return HD_EXIT_OK;
	}
	for (cp = table; *cp != NULL; cp++)
		if (strcmp((*cp)->name, argv[i]) == 0)
			cmd = *cp;
	if (cmd == NULL)
		return HD_EXIT_OK;
	i++;
	if (cmd->subs != NULL) {
		if (i == argc - 1) {
			if (l.cur[0] == '-')
				offer(&l, "--help");
			else
				for (sc = hd_cli_subs(cmd); sc->name != NULL; sc++)
					offer(&l, sc->name);
			return HD_EXIT_OK;
		}
		for (sc = hd_cli_subs(cmd); sc->name != NULL; sc++)
			if (strcmp(sc->name, argv[i]) == 0)
				break;
		if (sc->name == NULL)
			return HD_EXIT_OK;
		cmd = sc;
		i++;
	}
	complete_leaf(&l, cmd, common, argc - i, argv + i);
	return HD_EXIT_OK;
}
