/*
 * cli-ops.c -- the CLI commands made from the operation table
 * (src/ops/ops.h). Every entry whose CLI words are "GROUP SUB" is a
 * subcommand SUB of the command GROUP, after the group's hand-written
 * ones, and every entry spelled in one word ("inbox") a command of its
 * own, after the hand-written commands (hd_cli_commands): its positional
 * synopsis and counts, its options (each argument spelled "--x", and --as
 * when the entry names its help) and its help text all come from the
 * entry, so main.c's dispatcher parses, checks and documents it like any
 * other command.
 *
 * Running one (run_op): the arguments come from hd_ops_cli_args (types,
 * ids and limits checked from the table; a bad one is a usage error,
 * exit 2), then the entry's cli_check (a usage error too); an
 * HD_OPW_AGENT operation needs --as. The actor is --as, else
 * the user; the team is the TEAM positional when the entry has one. The
 * handler's JSON is shown by the group's renderer for the entry
 * (hd_cli_render, e.g. cmd-task.c's), else printed as JSON.
 *
 * The generated tables are made once, on first use, and live as long as
 * the process. Callers: main.c (hd_cli_commands, hd_cli_subs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include <ops/ops.h>

#define GROUPS_MAX 8
#define SUBS_MAX 48

struct group {
	const hd_cli_cmd *cmd; /* the hand-written command */
	hd_cli_cmd *subs;      /* its subcommands, then the table's */
};

static struct group groups[GROUPS_MAX];
static size_t ngroups;

static const hd_cli_render *const render_tables[] = {
    hd_cli_renders_task,
    hd_cli_renders_agent,
    hd_cli_renders_chat,
    hd_cli_renders_team,
    hd_cli_renders_mail,
    hd_cli_renders_send,
    hd_cli_renders_shutdown,
    hd_cli_renders_memory,
    hd_cli_renders_routine,
    hd_cli_renders_spend,
    NULL,
};

static const hd_cli_render *
find_render(const char *op)
{
	const hd_cli_render *const *t;
	const hd_cli_render *r;

	for (t = render_tables; *t != NULL; t++)
		for (r = *t; r->op != NULL; r++)
			if (strcmp(r->op, op) == 0)
				return r;
	return NULL;
}

static const char *
opt_cb(void *ctx, const char *name)
{
	return hd_cli_opt_str(ctx, name);
}

static int
opts_cb(void *ctx, const char *name, const char *const **vals)
{
	return hd_cli_opt_all(ctx, name, vals);
}

/* The actor: --as, or its older spelling (hd_op.cli_more "as"); the two
 * disagreeing is a usage error (answered: -1). */
static int
acting(hd_cli *c, const hd_op *op, const char **as)
{
	const hd_op_cli_arg *m = hd_ops_cli_more(op, "as");
	const char *old = m != NULL ? hd_cli_opt_str(c, m->alias) : NULL;

	*as = hd_cli_opt_str(c, "as");
	if (*as != NULL && old != NULL && strcmp(*as, old) != 0) {
		hd_cli_usage(c, "--as %s and --%s %s name two %ss; give one (--as)",
		    *as, m->alias, old, m->noun);
		return -1;
	}
	if (*as == NULL)
		*as = old;
	return 0;
}

static int
run_op(hd_cli *c)
{
	const hd_op *op = hd_ops_find_cli(c->path);
	const hd_cli_render *rd;
	hd_op_call call;
	hd_store *st;
	json_t *args = NULL, *result = NULL;
	hd_err err = HD_ERR_INIT;
	int rc;

	if (op == NULL)
		return hd_cli_usage(c, "unknown command '%s'", c->path);
	memset(&call, 0, sizeof(call));
	if (acting(c, op, &call.agent) < 0)
		return HD_EXIT_USAGE;
	if (op->who == HD_OPW_AGENT && call.agent == NULL && op->cli_needs)
		return hd_cli_usage(c, "%s", op->cli_needs);
	if (op->who == HD_OPW_AGENT && call.agent == NULL)
		return hd_cli_usage(c, "'%s' needs --as AGENT", c->path);
	if (hd_ops_cli_read(&args, op, c->argc, c->argv, opt_cb, opts_cb, c,
		&err) < 0)
		return hd_cli_usage(c, "%s", err.msg);
	if (op->cli_check != NULL && op->cli_check(args, call.agent, &err) < 0) {
		json_decref(args);
		return hd_cli_usage(c, "%s", err.msg);
	}
	if (hd_cli_store(c, &st) != 0) {
		json_decref(args);
		return HD_EXIT_FAIL;
	}
	call.st = st;
	call.args = args;
	call.team = json_string_value(json_object_get(args, "team"));
	call.dialect = HD_OPS_CLI;
	if (hd_ops_run(&result, op, &call, &c->err) < 0) {
		json_decref(args);
		return hd_cli_fail(c);
	}
	if (result == NULL)
		result = json_object();
	if ((rd = find_render(op->name)) != NULL)
		rc = rd->fn(c, result, args);
	else {
		hd_cli_json(json_incref(result));
		rc = HD_EXIT_OK;
	}
	json_decref(result);
	json_decref(args);
	return rc;
}

/* The value an alias of arg takes: its positional's name ("TEAM"), or
 * the option's. */
static const char *
alias_meta(const hd_op *op, const char *arg)
{
	const hd_op_arg *a;

	for (a = op->args; a->name != NULL; a++)
		if (strcmp(a->name, arg) == 0)
			return a->cli[0] != '-' ? a->cli
			       : a->cli_meta != NULL ? a->cli_meta
						     : "VALUE";
	return "VALUE";
}

/* The options of op: its "--x" arguments, then --as, then the older
 * spellings (aliases). */
static hd_cli_opt *
make_opts(const hd_op *op)
{
	const hd_op_cli_arg *m;
	const hd_op_arg *a;
	hd_cli_opt *o;
	size_t n = 0;

	for (a = op->args; a != NULL && a->name != NULL; a++)
		n++;
	for (m = op->cli_more; m != NULL && m->arg != NULL; m++)
		n++;
	if ((o = calloc(n + 2, sizeof(*o))) == NULL)
		return NULL;
	n = 0;
	for (a = op->args; a != NULL && a->name != NULL; a++) {
		if (a->cli == NULL || a->cli[0] != '-')
			continue;
		o[n].name = a->cli + 2;
		o[n].short_name = a->cli_short;
		o[n].arg = a->type == HD_OPT_BOOL ? NULL
			   : a->cli_meta != NULL  ? a->cli_meta
						  : "VALUE";
		o[n].help = a->cli_help != NULL ? a->cli_help : a->name;
		o[n].multi = (a->flags & HD_OPA_PAIRS) != 0 ||
			     a->type == HD_OPT_STRS;
		n++;
	}
	if (op->cli_as_help != NULL) {
		o[n].name = "as";
		o[n].arg = "AGENT";
		o[n].help = op->cli_as_help;
		n++;
	}
	for (m = op->cli_more; m != NULL && m->arg != NULL; m++) {
		if (m->alias == NULL)
			continue;
		o[n].name = m->alias;
		o[n].short_name = m->alias_short;
		o[n].arg = strcmp(m->arg, "as") == 0 ? "AGENT" : alias_meta(op, m->arg);
		o[n].help = m->alias_help;
		n++;
	}
	return o;
}

static int
make_sub(hd_cli_cmd *sc, const hd_op *op, const char *word)
{
	char syn[128];
	int min, max;

	hd_ops_cli_synopsis(op, syn, sizeof(syn), &min, &max);
	memset(sc, 0, sizeof(*sc));
	sc->name = word;
	sc->args = syn[0] != '\0' ? strdup(syn) : NULL;
	sc->summary = op->cli_summary != NULL ? op->cli_summary : op->name;
	sc->min_args = min;
	sc->max_args = max;
	sc->opts = make_opts(op);
	sc->fn = run_op;
	sc->details = op->cli_details;
	return (syn[0] != '\0' && sc->args == NULL) || sc->opts == NULL ? -1
									 : 0;
}

const hd_cli_cmd *
hd_cli_subs(const hd_cli_cmd *cmd)
{
	const hd_op *const *o;
	const hd_cli_cmd *h;
	hd_cli_cmd *subs;
	size_t i, n = 0, len = strlen(cmd->name);

	if (cmd->subs == NULL)
		return NULL;
	for (i = 0; i < ngroups; i++)
		if (groups[i].cmd == cmd)
			return groups[i].subs;
	if (ngroups == GROUPS_MAX ||
	    (subs = calloc(SUBS_MAX + 1, sizeof(*subs))) == NULL)
		return cmd->subs;
	for (h = cmd->subs; h->name != NULL && n < SUBS_MAX; h++)
		subs[n++] = *h;
	for (o = hd_ops_all(); *o != NULL && n < SUBS_MAX; o++) {
		const char *w = (*o)->cli;

		if (w == NULL || strncmp(w, cmd->name, len) != 0 ||
		    w[len] != ' ')
			continue;
		if (make_sub(&subs[n], *o, w + len + 1) == 0)
			n++;
	}
	groups[ngroups].cmd = cmd;
	groups[ngroups].subs = subs;
	ngroups++;
	return subs;
}

#define COMMANDS_MAX 48

const hd_cli_cmd *const *
hd_cli_commands(const hd_cli_cmd *const *hand)
{
	static const hd_cli_cmd *all[COMMANDS_MAX + 1];
	static hd_cli_cmd made[COMMANDS_MAX];
	static const hd_cli_cmd *const *from;
	const hd_op *const *o;
	size_t n = 0, m = 0;

	if (from == hand)
		return all;
	for (; hand[n] != NULL && n < COMMANDS_MAX; n++)
		all[n] = hand[n];
	for (o = hd_ops_all(); *o != NULL && n < COMMANDS_MAX; o++) {
		if ((*o)->cli == NULL || strchr((*o)->cli, ' ') != NULL)
			continue;
		if (make_sub(&made[m], *o, (*o)->cli) == 0)
			all[n++] = &made[m++];
	}
	all[n] = NULL;
	from = hand;
	return all;
}
