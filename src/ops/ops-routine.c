/*
 * ops-routine.c -- routines' operations (ops.h; routine.h): add, list,
 * show, enable, disable, rm and fire-now, each a REST route under
 * /api/teams/:team/routines and a `huddle routine` subcommand.
 *
 * None is an MCP tool: a routine is the team's standing configuration,
 * set by its user, and an agent that could schedule its own recurring
 * work could grow its own workload past the budgets' intent; agents see
 * what routines make as ordinary tasks. Every one is the user's: no --as.
 * Times are taken from hd_routine_now_ms (routine.h: the real clock, or
 * HUDDLE_CLOCK_FILE's). The CLI's renderers are cmd-routine.c's.
 */
#include <stdlib.h>

#include <huddle/routine.h>

#include "ops.h"

static json_t *
list_json(hd_routine *v, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, hd_routine_to_json(&v[i]));
	return arr;
}

static int
one(json_t **result, hd_routine *r)
{
	*result = json_pack("{s:o}", "routine", hd_routine_to_json(r));
	hd_routine_free(r);
	return 0;
}

static int
op_add(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_routine_spec spec = {0};
	hd_routine *r = NULL;
	int rc;

	spec.team = c->team;
	spec.name = hd_op_str(c, "name");
	spec.agent = hd_op_str(c, "agent");
	spec.cron = hd_op_str(c, "cron");
	spec.tz = hd_op_str(c, "tz");
	spec.every = hd_op_str(c, "every");
	spec.title = hd_op_str(c, "title");
	spec.description = hd_op_str(c, "description");
	hd_op_int(c, "priority", 0, &spec.priority);
	if ((rc = hd_routine_add(&r, c->st, &spec, hd_routine_now_ms(), err)) < 0)
		return rc;
	return one(result, r);
}

static int
op_list(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_routine *v = NULL;
	size_t n = 0;
	int rc;

	if ((rc = hd_routine_list(&v, &n, c->st, c->team, err)) < 0)
		return rc;
	*result = json_pack("{s:o, s:I}", "routines", list_json(v, n), "now",
	    (json_int_t)hd_routine_now_ms());
	hd_routine_list_free(v, n);
	return 0;
}

static int
op_show(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_routine *r = NULL;
	int rc;

	if ((rc = hd_routine_get(&r, c->st, c->team, hd_op_str(c, "name"),
		 err)) < 0)
		return rc;
	return one(result, r);
}

static int
set_enabled(json_t **result, const hd_op_call *c, int on, hd_err *err)
{
	hd_routine *r = NULL;
	int rc;

	if ((rc = hd_routine_set_enabled(&r, c->st, c->team,
		 hd_op_str(c, "name"), on, hd_routine_now_ms(), err)) < 0)
		return rc;
	return one(result, r);
}

static int
op_enable(json_t **result, const hd_op_call *c, hd_err *err)
{
	return set_enabled(result, c, 1, err);
}

static int
op_disable(json_t **result, const hd_op_call *c, hd_err *err)
{
	return set_enabled(result, c, 0, err);
}

static int
op_rm(json_t **result, const hd_op_call *c, hd_err *err)
{
	const char *name = hd_op_str(c, "name");
	int rc;

	if ((rc = hd_routine_remove(c->st, c->team, name, err)) < 0)
		return rc;
	*result = json_pack("{s:s, s:b}", "routine", name, "removed", 1);
	return 0;
}

static int
op_fire(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_routine_fire f;
	const char *name = hd_op_str(c, "name");
	int rc;

	if ((rc = hd_routine_fire_now(&f, c->st, c->team, name,
		 hd_routine_now_ms(), err)) < 0)
		return rc;
	*result = json_pack("{s:s, s:I, s:b}", "routine", name, "task",
	    (json_int_t)f.task_id, "manual", 1);
	return 0;
}

#define ARGS_END {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL}
#define ARG_TEAM                                                              \
	{"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL,     \
	    NULL, ":team", "TEAM", 0, NULL, NULL, "team"}
/* the routine named in the path, the CLI's NAME */
#define ARG_NAME                                                              \
	{"name", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL,     \
	    "the routine's name", ":name", "NAME", 0, NULL, NULL,              \
	    "routine name"}
#define OPT(n, cli, flags, help, meta)                                       \
	{n, HD_OPT_STR, HD_OPA_NO_MCP | (flags), 0, 0, NULL, NULL, NULL, cli,  \
	    0, help, meta, NULL}

static const hd_op_arg add_args[] = {
    ARG_TEAM,
    {"name", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL,
	"its name: 1-50 lowercase letters, digits, '-' or '_'", NULL, "NAME", 0,
	NULL, NULL, "routine name"},
    OPT("agent", "--agent", HD_OPA_REQUIRED, "the member its tasks go to",
	"AGENT"),
    OPT("cron", "--cron", 0,
	"a 5-field cron expression: minute hour day-of-month month "
	"day-of-week",
	"EXPR"),
    OPT("tz", "--tz", 0, "the cron's IANA time zone (default UTC)", "ZONE"),
    OPT("every", "--every", 0, "an interval instead: 15m, 2h, 1d (at least 1m)",
	"DURATION"),
    OPT("title", "--task", HD_OPA_REQUIRED, "the title of each task it creates",
	"TITLE"),
    OPT("description", "--description", 0, "the tasks' description", "TEXT"),
    {"priority", HD_OPT_INT, HD_OPA_NO_MCP, -1000, 1000, NULL, NULL, NULL,
	"--priority", 0, "the tasks' priority (default 0)", "N", NULL},
    ARGS_END,
};

static const hd_op_arg team_args[] = {ARG_TEAM, ARGS_END};
static const hd_op_arg named_args[] = {ARG_TEAM, ARG_NAME, ARGS_END};

#define SCHEDULE_DETAILS                                                      \
	"A cron routine fires at the wall-clock times its expression names "  \
	"in --tz\n(default UTC): a time skipped by a DST change fires once "  \
	"at the first valid\ntime after it, a time repeated fires once.\n"

const hd_op hd_ops_routine[] = {
    {.name = "routine.add", .flags = HD_OPF_WRITE, .args = add_args,
	.fn = op_add, .one_of = {"cron", "every"},
	.one_of_both = {"give cron or every, not both",
	    "give cron or every, not both", "give --cron or --every, not both"},
	.one_of_neither = {"give a schedule: cron or every",
	    "give a schedule: cron or every",
	    "give a schedule: --cron EXPR or --every DURATION"},
	.method = "POST", .path = "/api/teams/:team/routines", .status = 201,
	.cli = "routine add",
	.cli_summary = "Add a routine: a task created for AGENT on a schedule",
	.cli_details =
	    "Each fire delegates a new task (--task TITLE) to --agent, as "
	    "'task delegate' does.\n" SCHEDULE_DETAILS
	    "Example: huddle routine add dev standup --agent coder --cron "
	    "'0 9 * * mon-fri'\n  --tz Europe/Berlin --task 'Post the standup "
	    "notes'"},
    {.name = "routine.list", .args = team_args, .fn = op_list,
	.method = "GET", .path = "/api/teams/:team/routines", .status = 200,
	.cli = "routine list",
	.cli_summary = "List a team's routines with their next fire times"},
    {.name = "routine.show", .args = named_args, .fn = op_show,
	.method = "GET", .path = "/api/teams/:team/routines/:name",
	.status = 200, .cli = "routine show",
	.cli_summary = "Show one routine: schedule, task, last and next fire"},
    {.name = "routine.enable", .flags = HD_OPF_WRITE, .args = named_args,
	.fn = op_enable, .method = "POST",
	.path = "/api/teams/:team/routines/:name/enable", .status = 200,
	.cli = "routine enable",
	.cli_summary = "Enable a routine: it next fires at its next scheduled "
		       "time"},
    {.name = "routine.disable", .flags = HD_OPF_WRITE, .args = named_args,
	.fn = op_disable, .method = "POST",
	.path = "/api/teams/:team/routines/:name/disable", .status = 200,
	.cli = "routine disable",
	.cli_summary = "Disable a routine: it fires no more until enabled"},
    {.name = "routine.rm", .flags = HD_OPF_WRITE, .args = named_args,
	.fn = op_rm, .method = "DELETE",
	.path = "/api/teams/:team/routines/:name", .status = 200,
	.cli = "routine rm",
	.cli_summary = "Remove a routine (the tasks it made stay)"},
    {.name = "routine.fire", .flags = HD_OPF_WRITE, .args = named_args,
	.fn = op_fire, .method = "POST",
	.path = "/api/teams/:team/routines/:name/fire", .status = 201,
	.cli = "routine fire-now",
	.cli_summary = "Fire a routine now, by hand: one task, schedule "
		       "unchanged"},
    {.name = NULL},
};
