/*
 * ops-board.c -- the board's operations (SPEC 4, 10.2, 11): task_* tools,
 * the /api/tasks and /api/teams/:team/{tasks,auto-claim,delegate} routes
 * and `huddle task ...`, one table entry each (ops.h). The list over
 * REST reads its query string (route-ops.c (1)): a flag is true unless
 * "0", and ?meta=KEY=VALUE is one metadata filter.
 *
 * An operation called with a team (MCP: the caller's) acts inside it: a
 * task of another team is reported as not found, so a bound agent can
 * neither read nor move another team's work. Called without one (REST
 * by task id, the CLI) it acts on the task wherever it is, as the acting
 * agent, or as the user (HD_BOARD_USER) who may assign, start, complete,
 * fail and release any task like a leader; the library checks roles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/board.h>
#include <huddle/runtime.h>
#include <huddle/verifier.h>
#include <huddle/verify.h>

#include "ops.h"

/* Who acts: the agent, or the user when none is named. */
static const char *
actor(const hd_op_call *c)
{
	return c->agent != NULL ? c->agent : HD_BOARD_USER;
}

/* task_id, checked to belong to the caller's team when there is one. */
static int
task_in_team(const hd_op_call *c, int64_t *id, hd_err *err)
{
	hd_task *t = NULL;
	int rc;

	hd_op_int(c, "task_id", 0, id);
	if (c->team == NULL)
		return 0;
	if ((rc = hd_board_get(&t, c->st, *id, err)) < 0)
		return rc;
	if (strcmp(t->team_id, c->team) != 0)
		rc = hd_err_set(err, HD_ENOTFOUND, "task %lld not found",
		    (long long)*id);
	hd_task_free(t);
	return rc;
}

/* The tool's result from what the move set in *t. t is passed by
 * address: callers write task_result(result, &t, hd_board_x(&t, ...)),
 * and C leaves the order of argument evaluation unspecified, so the task
 * must be read here, after the move ran -- never as an argument (with
 * clang it was read as NULL first; tests/fuzz/fuzz-jsonrpc.c found it). */
static int
task_result(json_t **result, hd_task **t, int rc)
{
	if (rc < 0)
		return rc;
	*result = json_pack("{s:o}", "task", hd_task_to_json(*t));
	hd_task_free(*t);
	*t = NULL;
	return 0;
}

/* The moves that need only the task and the acting agent. */
typedef int (*task_move_fn)(hd_task **out, hd_store *st, int64_t id,
    const char *actor, hd_err *err);

static int
task_move(json_t **result, const hd_op_call *c, task_move_fn fn, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, fn(&t, c->st, id, actor(c), err));
}

static int
tool_task_create(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task_spec spec;
	const json_t *deps = json_object_get(c->args, "depends_on"), *v;
	int64_t ids[HD_TASK_DEPS_MAX], prio;
	hd_task *t = NULL;
	size_t i;

	memset(&spec, 0, sizeof(spec));
	if (json_array_size(deps) > HD_TASK_DEPS_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "a task may depend on at most %d others", HD_TASK_DEPS_MAX);
	json_array_foreach(deps, i, v)
		ids[i] = (int64_t)json_integer_value(v);
	spec.team = c->team;
	spec.subject = hd_op_str(c, "subject");
	spec.description = hd_op_str(c, "description");
	spec.active_form = hd_op_str(c, "active_form");
	hd_op_int(c, "priority", 0, &prio);
	spec.priority = prio;
	spec.metadata = json_object_get(c->args, "metadata");
	spec.depends_on = ids;
	spec.ndepends_on = json_array_size(deps);
	spec.created_by = c->agent;
	hd_op_int(c, "parent_task_id", 0, &spec.parent_id);
	spec.gate = hd_op_str(c, "gate");
	spec.workdir = hd_op_str(c, "gate_workdir");
	hd_op_int(c, "gate_timeout_s", 0, &spec.gate_timeout_s);
	spec.critic = hd_op_str(c, "critic");
	spec.critic_runtime = hd_op_str(c, "critic_runtime");
	spec.critic_config = json_object_get(c->args, "critic_config");
	spec.critic_check = hd_runtime_check_config;
	hd_op_int(c, "critic_timeout_s", 0, &spec.critic_timeout_s);
	return task_result(result, &t, hd_board_create(&t, c->st, &spec, err));
}

static int
tool_task_list(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task_filter f;
	hd_tasks l;
	const json_t *meta = json_object_get(c->args, "metadata"), *v;
	const char *key;
	char pairs[16][256];
	const char *pp[17];
	json_t *arr;
	int64_t limit;
	size_t i = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	f.status = hd_op_str(c, "status");
	f.owner = hd_op_str(c, "owner");
	f.ready = json_is_true(json_object_get(c->args, "ready"));
	f.blocked = json_is_true(json_object_get(c->args, "blocked"));
	/* 0 (MCP) is the default; REST's ?limit= names one */
	if (((hd_op_int(c, "limit", 0, &limit) && limit == 0 &&
		 c->dialect == HD_OPS_REST) ||
		limit < 0 || limit > 10000) &&
	    c->dialect != HD_OPS_CLI) /* the table checked the CLI's */
		return hd_err_set(err, HD_EINVAL,
		    "limit must be between 1 and 10000");
	f.limit = (int)limit;
	json_object_foreach((json_t *)meta, key, v) {
		if (i == 16)
			return hd_err_set(err, HD_EINVAL,
			    "at most 16 metadata filters");
		if (!json_is_string(v))
			return hd_err_set(err, HD_EINVAL,
			    "metadata filter values must be strings");
		snprintf(pairs[i], sizeof(pairs[i]), "%s=%s", key,
		    json_string_value(v));
		pp[i] = pairs[i];
		i++;
	}
	if ((pp[i] = hd_op_str(c, "meta")) != NULL) /* REST: KEY=VALUE */
		i++;
	f.meta = pp;
	f.nmeta = i;
	if ((rc = hd_board_list(&l, c->st, c->team, &f, err)) < 0)
		return rc;
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_task_to_json(&l.items[i]));
	hd_tasks_dispose(&l);
	*result = json_pack("{s:o}", "tasks", arr);
	return 0;
}

static int
tool_task_get(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, hd_board_get(&t, c->st, id, err));
}

static int
tool_task_claim(json_t **result, const hd_op_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_claim, err);
}

static int
tool_task_auto_claim(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task *t = NULL;

	return task_result(result, &t,
	    hd_board_auto_claim(&t, c->st, c->team, c->agent, err));
}

/* As the leader (or the user): assign a task to assignee, or with auto
 * to the member the board picks (hd_board_assign_auto); exactly one of
 * the two (the table's one_of). Not "agent" over MCP: an unbound connection reads that as who
 * is acting (REST's key is "agent", the CLI's a positional). */
static int
tool_task_assign(json_t **result, const hd_op_call *c, hd_err *err)
{
	const char *agent = hd_op_str(c, "assignee");
	int automatic = hd_op_bool(c, "auto");
	hd_board_pick pick;
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	if (agent != NULL)
		rc = hd_board_assign(&t, c->st, id, agent, actor(c), err);
	else
		rc = hd_board_assign_auto(
		    &t, &pick, c->st, id, actor(c), err);
	if (rc < 0)
		return rc;
	*result = json_pack("{s:o, s:s}", "task", hd_task_to_json(t),
	    "assignee", t->owner);
	if (automatic)
		json_object_set_new(
		    *result, "picked_because", json_string(pick.reason));
	hd_task_free(t);
	return 0;
}

static int
tool_task_start(json_t **result, const hd_op_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_start, err);
}

static int
tool_task_complete(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, hd_board_complete(&t, c->st, id,
	    actor(c), hd_op_str(c, "result"), err));
}

static int
tool_verify_verdict(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task *t = NULL;
	const char *verdict = hd_op_str(c, "verdict");
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t,
	    hd_board_verdict(&t, c->st, id, actor(c),
		verdict != NULL && strcmp(verdict, "approve") == 0,
		hd_op_str(c, "reasons"), err));
}

/* Queue the verification again; on the CLI also run it here, now, in
 * the foreground (a server's verifier may take it first: then this one
 * finds nothing to run and says so). */
static int
tool_task_verify(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_verifier_env env;
	hd_task *t = NULL;
	char runner[64];
	int64_t id;
	int rc, ran = 0;

	if ((rc = task_in_team(c, &id, err)) < 0 ||
	    (rc = hd_board_verify_retry(&t, c->st, id, actor(c), err)) < 0)
		return rc;
	if (c->dialect == HD_OPS_CLI) {
		hd_task_free(t);
		t = NULL;
		memset(&env, 0, sizeof(env));
		env.home = hd_store_home(c->st);
		snprintf(runner, sizeof(runner), "cli-%ld", (long)getpid());
		env.runner = runner;
		if ((rc = hd_verifier_run(&ran, c->st, &env, id, err)) < 0 ||
		    (rc = hd_board_get(&t, c->st, id, err)) < 0)
			return rc;
	}
	return task_result(result, &t, 0);
}

static int
tool_task_fail(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, hd_board_fail(&t, c->st, id, actor(c),
	    hd_op_str(c, "reason"), err));
}

static int
tool_task_release(json_t **result, const hd_op_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_release, err);
}

static int
tool_task_cancel(json_t **result, const hd_op_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_cancel, err);
}

static int
tool_task_retry(json_t **result, const hd_op_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_retry, err);
}

static int
tool_task_link(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id, dep;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	hd_op_int(c, "depends_on", 0, &dep);
	return task_result(result, &t,
	    hd_board_link(&t, c->st, id, dep, actor(c), err));
}

static int
tool_task_comment(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task_comment *cm = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	if ((rc = hd_board_comment(&cm, c->st, id, actor(c),
		 hd_op_str(c, "body"), err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "comment", hd_task_comment_to_json(cm));
	hd_task_comment_free(cm);
	return 0;
}

/* As the leader: create a task, assign it to assignee and tell it, in one
 * act (hd_board_delegate). Not "agent": an unbound connection reads that
 * as who is acting. */
static int
tool_team_delegate(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_task_spec spec = {0};
	const char *assignee = hd_op_str(c, "assignee");
	hd_task *t = NULL;
	int64_t prio;
	int rc;

	spec.team = c->team;
	spec.subject = hd_op_str(c, "task");
	spec.description = hd_op_str(c, "description");
	hd_op_int(c, "priority", 0, &prio);
	spec.priority = prio;
	spec.created_by = c->agent;
	hd_op_int(c, "parent_task_id", 0, &spec.parent_id);
	if ((rc = hd_board_delegate(&t, c->st, &spec, assignee, err)) < 0)
		return rc;
	*result = json_pack("{s:o, s:s}", "task", hd_task_to_json(t),
	    "assignee", t->owner);
	hd_task_free(t);
	return 0;
}

/* ---- the table -------------------------------------------------------- */

static const char *const task_statuses[] = {"pending", "claimed",
    "in_progress", "verifying", "completed", "failed", "cancelled", NULL};
static const char *const verdicts[] = {"approve", "reject", NULL};

/* the task an operation by id acts on: MCP task_id, REST /api/tasks/:id,
 * the CLI's first positional */
#define ARG_TASK_ID                                                           \
	{"task_id", HD_OPT_INT, HD_OPA_REQUIRED | HD_OPA_ID, 0, 0, NULL,      \
	    "the task's id", ":id", "ID", 0, NULL, NULL, "task id"}
/* the team an operation acts in: from identity over MCP */
#define ARG_TEAM                                                              \
	{"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL,     \
	    NULL, ":team", "TEAM", 0, NULL, NULL, "team"}
#define ARG_PARENT(mcp_desc)                                                  \
	{"parent_task_id", HD_OPT_INT, HD_OPA_ID | HD_OPA_NULL_OK, 0, 0,      \
	    NULL, mcp_desc, "parent_id", "--parent", 0,                       \
	    "make it a subtask of task ID (same team)", "ID", "task id"}
#define ARGS_END {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL}

#define W (HD_OPF_WRITE | HD_OPF_NEEDS_TEAM | HD_OPF_NEEDS_AGENT)
#define R (HD_OPF_NEEDS_TEAM)
#define AS_USER "act as AGENT (default: user)"

static const hd_op_arg create_args[] = {
    ARG_TEAM,
    {"subject", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, "1-200 characters",
	NULL, "SUBJECT", 0, NULL, NULL, NULL},
    {"description", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--description",
	'd', "what needs doing (up to 10000 chars)", "TEXT", NULL},
    {"active_form", HD_OPT_STR, 0, 0, 0, NULL,
	"what doing it is called, e.g. Writing docs", NULL, "--active-form",
	0, "what to show while it runs", "TEXT", NULL},
    {"priority", HD_OPT_INT, 0, 0, 0, NULL,
	"higher is claimed first (default 0)", NULL, "--priority", 'p',
	"higher is claimed first (default 0)", "N", NULL},
    {"metadata", HD_OPT_OBJECT, HD_OPA_PAIRS, 0, 0, NULL,
	"free-form key/value pairs", NULL, "--meta", 0,
	"a metadata entry (a string)", "KEY=VALUE", NULL},
    {"depends_on", HD_OPT_INTS, HD_OPA_ID, 0, 0, NULL,
	"ids of tasks this one waits for", NULL, "--depends-on", 0,
	"tasks of the same team this waits for", "ID,...", "task id"},
    ARG_PARENT("make it a subtask of this task (same team)"),
    {"gate", HD_OPT_STR, 0, 0, 0, NULL,
	"verification: a shell command that must exit 0 once the task is "
	"completed (it then waits in verifying)",
	NULL, "--gate", 0,
	"a shell command that must exit 0 before it counts as completed",
	"CMD", NULL},
    {"gate_workdir", HD_OPT_STR, 0, 0, 0, NULL,
	"where the gate runs (an absolute path; default: the owner's "
	"workdir)",
	NULL, "--gate-workdir", 0,
	"where the gate runs (absolute; default: the owner's workdir)", "DIR",
	NULL},
    {"gate_timeout_s", HD_OPT_INT, 0, 1, 86400, NULL,
	"seconds the gate may take (default 600)", NULL, "--gate-timeout", 0,
	"seconds the gate may take (default 600)", "SECONDS", NULL},
    {"critic", HD_OPT_STR, 0, 0, 0, NULL,
	"verification: the member (never the owner) who must approve the "
	"work with verify_verdict",
	NULL, "--critic", 0,
	"the member (never the owner) who must approve the work", "AGENT",
	NULL},
    {"critic_runtime", HD_OPT_STR, 0, 0, 0, NULL,
	"verification, instead of a member as critic: a runtime (e.g. "
	"claude-code) that runs a throwaway critic for each run, a fresh "
	"member with a home of its own, removed after",
	NULL, "--critic-runtime", 0,
	"a throwaway critic per run, on this runtime, instead of a member",
	"RUNTIME", NULL},
    {"critic_config", HD_OPT_OBJECT, 0, 0, 0, NULL,
	"the throwaway critic's runtime_config, checked as for an agent of "
	"that runtime",
	NULL, "--critic-config", 0,
	"the throwaway critic's runtime configuration object", "JSON", NULL},
    {"critic_timeout_s", HD_OPT_INT, 0, 1, 86400, NULL,
	"seconds the critic's turn may take (default 900)", NULL,
	"--critic-timeout", 0,
	"seconds the critic's turn may take (default 900)", "SECONDS", NULL},
    ARGS_END,
};

static const hd_op_arg verdict_args[] = {
    ARG_TASK_ID,
    {"verdict", HD_OPT_ENUM, HD_OPA_REQUIRED, 0, 0, verdicts,
	"approve: the work is done; reject: it goes back to its owner",
	NULL, "--verdict", 0, "approve or reject (required)", "VERDICT",
	NULL},
    {"reasons", HD_OPT_STR, 0, 0, 0, NULL,
	"why; required to reject: what must change", NULL, "--reasons", 'r',
	"why; required to reject: what must change", "TEXT", NULL},
    ARGS_END,
};

static const hd_op_arg list_args[] = {
    ARG_TEAM,
    /* the CLI leaves a status to the board (`unknown task status`) */
    {"status", HD_OPT_ENUM, HD_OPA_OPEN_CLI, 0, 0, task_statuses, NULL,
	NULL, "--status", 's', "only tasks in STATUS", "STATUS", NULL},
    {"owner", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--owner", 'o',
	"only tasks owned by AGENT", "AGENT", NULL},
    {"ready", HD_OPT_BOOL, 0, 0, 0, NULL, NULL, NULL, "--ready", 0,
	"only ready tasks (pending, unowned, unblocked)", NULL, NULL},
    {"blocked", HD_OPT_BOOL, 0, 0, 0, NULL, NULL, NULL, "--blocked", 0,
	"only tasks waiting on unfinished ones", NULL, NULL},
    {"metadata", HD_OPT_OBJECT, HD_OPA_PAIRS, 0, 0, NULL,
	"KEY: VALUE pairs the task's metadata must equal", "", "--meta", 0,
	"only tasks whose metadata KEY is VALUE", "KEY=VALUE", NULL},
    /* REST's one metadata filter, ?meta=KEY=VALUE */
    {"meta", HD_OPT_STR, HD_OPA_NO_MCP, 0, 0, NULL,
	"KEY=VALUE: only tasks whose metadata KEY is VALUE", NULL, NULL, 0,
	NULL, NULL, NULL},
    /* MCP and REST: 1-10000 (the handler's: MCP's 0 is the default);
     * the CLI's own range is list_more's */
    {"limit", HD_OPT_INT, 0, 0, 0, NULL, NULL, NULL, "--limit", 'n',
	"at most N tasks", "N", NULL},
    {"tree", HD_OPT_BOOL, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "", "--tree", 0,
	"show subtasks indented under their parents", NULL, NULL},
    ARGS_END,
};

/* The CLI's own limits: a priority is an int, a list may be long. */
static const hd_op_cli_arg create_more[] = {
    {"priority", NULL, 0, NULL, NULL, INT32_MIN, INT32_MAX},
    {NULL, NULL, 0, NULL, NULL, 0, 0},
};
static const hd_op_cli_arg list_more[] = {
    {"limit", NULL, 0, NULL, NULL, 1, 1000000},
    {NULL, NULL, 0, NULL, NULL, 0, 0},
};

/* The CLI words the cap on dependencies its own way. */
static int
cli_check_create(const json_t *args, const char *as, hd_err *err)
{
	(void)as;
	if (json_array_size(json_object_get(args, "depends_on")) >
	    HD_TASK_DEPS_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "--depends-on takes at most %d ids", HD_TASK_DEPS_MAX);
	return 0;
}

static const hd_op_arg id_args[] = {ARG_TASK_ID, ARGS_END};

static const hd_op_arg auto_claim_args[] = {ARG_TEAM, ARGS_END};

static const hd_op_arg assign_args[] = {
    ARG_TASK_ID,
    {"assignee", HD_OPT_STR, 0, 0, 0, NULL,
	"the member to assign it to (or use auto)", "agent", "AGENT", 0, NULL,
	NULL, NULL},
    {"auto", HD_OPT_BOOL, 0, 0, 0, NULL, "true: pick the member for me", NULL,
	"--auto", 0, "pick the member: idle, fewest open tasks, lowest id",
	NULL, NULL},
    ARGS_END,
};

static const hd_op_arg complete_args[] = {
    ARG_TASK_ID,
    {"result", HD_OPT_STR, 0, 0, 0, NULL, "what came of it", NULL, "--result",
	'r', "what came of it", "TEXT", NULL},
    ARGS_END,
};

static const hd_op_arg fail_args[] = {
    ARG_TASK_ID,
    {"reason", HD_OPT_STR, HD_OPA_REQ_MCP, 0, 0, NULL, NULL, NULL,
	"--reason", 'r', "why it failed", "TEXT", NULL},
    ARGS_END,
};

static const hd_op_arg link_args[] = {
    ARG_TASK_ID,
    {"depends_on", HD_OPT_INT, HD_OPA_REQUIRED | HD_OPA_ID, 0, 0, NULL, NULL,
	NULL, "--depends-on", 0, "the task ID must wait for (required)", "ID",
	"task id"},
    ARGS_END,
};

static const hd_op_arg comment_args[] = {
    ARG_TASK_ID,
    {"body", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, NULL, NULL, "TEXT", 0,
	NULL, NULL, "comment"},
    ARGS_END,
};

static const hd_op_arg delegate_args[] = {
    ARG_TEAM,
    {"assignee", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the member who gets the task", "to", "--to", 0,
	"the member who gets the task (required)", "AGENT", NULL},
    {"task", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the task's subject, 1-200 characters", "subject", "TITLE", 0, NULL,
	NULL, "title"},
    {"description", HD_OPT_STR, 0, 0, 0, NULL,
	"what needs doing; also sent to the assignee", NULL, "--description",
	'd', "what needs doing; also sent to AGENT", "TEXT", NULL},
    {"priority", HD_OPT_INT, 0, INT32_MIN, INT32_MAX, NULL,
	"higher is claimed first (default 0)", NULL, "--priority", 'p',
	"higher is claimed first (default 0)", "N", NULL},
    ARG_PARENT("make it a subtask of this task (same team)"),
    ARGS_END,
};

/* The body every POST /api/tasks/:id/<action> accepts, typed, whatever
 * the action uses of it (the dashboard sends one shape). */
static const hd_op_arg action_common[] = {
    {"agent", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL,
	NULL},
    {"result", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL,
	NULL},
    {"reason", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL,
	NULL},
    {"depends_on", HD_OPT_INT, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL,
	NULL, NULL},
    {"body", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL,
	NULL},
    {"auto", HD_OPT_BOOL, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL,
	NULL},
    ARGS_END,
};

const hd_op hd_ops_board[] = {
    {.name = "task.create", .who = HD_OPW_MEMBER, .flags = W,
	.args = create_args, .fn = tool_task_create, .mcp = "task_create",
	.mcp_desc =
	    "Create a task on your team's board. It starts pending; it is "
	    "ready to claim once every task in depends_on is completed. With "
	    "parent_task_id it is a subtask: the parent cannot complete while "
	    "it is open, and the team caps subtasks per task, their depth and "
	    "the root tasks you create per window.",
	.method = "POST", .path = "/api/teams/:team/tasks", .status = 201,
	.cli = "task create", .cli_summary = "Create a task",
	.cli_details =
	    "Example: huddle task create dev \"Write docs\" --depends-on 3,4 "
	    "--priority 2 --meta area=docs. With --parent ID it is a "
	    "subtask; the team's caps (huddle team update --max-children, "
	    "--max-task-depth, --max-new-roots) bound how many and how deep.",
	.cli_as_help = "create as AGENT, a member (default: user)",
	.cli_more = create_more, .cli_check = cli_check_create},
    {.name = "task.list", .flags = R, .args = list_args,
	.fn = tool_task_list, .mcp = "task_list",
	.mcp_desc =
	    "List your team's tasks, newest first, each with depends_on and "
	    "blocked_by. Filter by status, owner, ready (pending, unowned, "
	    "unblocked) or blocked, and metadata equality.",
	.method = "GET", .path = "/api/teams/:team/tasks", .status = 200,
	.cli = "task list", .cli_summary = "List a team's tasks, newest first",
	.cli_more = list_more},
    {.name = "task.get", .flags = R, .args = id_args, .fn = tool_task_get,
	.mcp = "task_get",
	.mcp_desc = "Get one task with its dependencies and comments.",
	.method = "GET", .path = "/api/tasks/:id", .status = 200,
	.cli = "task show",
	.cli_summary = "Show a task with its dependencies and comments"},
    {.name = "task.claim", .who = HD_OPW_AGENT, .flags = W, .args = id_args,
	.fn = tool_task_claim, .mcp = "task_claim",
	.mcp_desc =
	    "Claim a ready task for yourself. Atomic: of several agents "
	    "claiming at once exactly one wins; the others are told who did, "
	    "or why the task is not claimable.",
	.method = "POST", .path = "/api/tasks/:id/claim", .status = 200, .rest_common = action_common,
	.rest_agent_required =
	    "\"agent\" is required: an agent claims (the user assigns)",
	.cli = "task claim", .cli_summary = "Claim a ready task",
	.cli_details = "Atomic across processes: of many claimers one wins; "
		       "the others are told who.",
	.cli_as_help = "the claiming agent (required)"},
    {.name = "task.auto_claim", .who = HD_OPW_AGENT, .flags = W,
	.args = auto_claim_args, .fn = tool_task_auto_claim,
	.mcp = "task_auto_claim",
	.mcp_desc = "Claim the best ready task of your team: highest "
		    "priority, then oldest.",
	.method = "POST", .path = "/api/teams/:team/auto-claim", .status = 200,
	.rest_agent_required = "\"agent\" is required",
	.cli = "task auto-claim",
	.cli_summary = "Claim the team's best ready task",
	.cli_details = "Highest priority first, then the oldest.",
	.cli_as_help = "the claiming agent (required)"},
    {.name = "task.assign", .who = HD_OPW_LEADER, .flags = W,
	.args = assign_args, .fn = tool_task_assign,
	.one_of = {"assignee", "auto"},
	.one_of_both = {"pass assignee or auto, not both",
	    "pass \"agent\" or \"auto\", not both",
	    "give AGENT or --auto, not both"},
	.one_of_neither = {"pass assignee (a member) or auto: true",
	    "\"agent\" or \"auto\": true is required",
	    "'task assign' needs AGENT or --auto"},
	.mcp = "task_assign",
	.mcp_desc =
	    "As the team leader, give a ready task to a member: name it "
	    "(assignee), or pass auto: true and huddle picks the idle member "
	    "with the fewest open tasks (ties: the lowest id; never one that "
	    "is working, in error or shutting down). The answer names the "
	    "assignee and, with auto, why it was picked.",
	.method = "POST", .path = "/api/tasks/:id/assign", .status = 200, .rest_common = action_common,
	.cli = "task assign",
	.cli_summary = "Claim a task for AGENT (--auto: the board picks)",
	.cli_details =
	    "Only the team leader or a user may assign. With --auto instead "
	    "of AGENT the board picks the member, in the same transaction: an "
	    "idle one (never working, in error or shutting down) with the "
	    "fewest open tasks, then the lowest id; the leader only when it "
	    "is the only member. Example: huddle task assign 5 --auto --as "
	    "manager",
	.cli_as_help = AS_USER},
    {.name = "task.start", .who = HD_OPW_MEMBER, .flags = W, .args = id_args,
	.fn = tool_task_start, .mcp = "task_start",
	.mcp_desc = "Mark a task you own as in progress.", .method = "POST",
	.path = "/api/tasks/:id/start", .status = 200, .rest_common = action_common, .cli = "task start",
	.cli_summary = "Start a claimed task", .cli_as_help = AS_USER},
    {.name = "task.complete", .who = HD_OPW_MEMBER, .flags = W,
	.args = complete_args, .fn = tool_task_complete,
	.mcp = "task_complete",
	.mcp_desc =
	    "Complete a task you own, with an optional result. Tasks that "
	    "depended on it become ready; the answer's task.unblocked lists "
	    "the ids of those that did.",
	.method = "POST", .path = "/api/tasks/:id/complete", .status = 200, .rest_common = action_common,
	.cli = "task complete", .cli_summary = "Complete a task",
	.cli_details =
	    "A task created with --gate or --critic goes to verifying "
	    "instead: the gate runs, then the critic gives its verdict "
	    "(huddle task verdict); see huddle task verify.",
	.cli_as_help = AS_USER},
    {.name = "task.verdict", .who = HD_OPW_MEMBER, .flags = W,
	.args = verdict_args, .fn = tool_verify_verdict,
	.mcp = "verify_verdict",
	.mcp_desc =
	    "As a task's critic, give your verdict on its work while it is "
	    "verifying: approve completes it (tasks waiting on it become "
	    "ready); reject sends it back to its owner, in progress, with "
	    "your reasons as a comment and a message. Reasons are required "
	    "to reject. Only the task's critic (never its owner) may.",
	.method = "POST", .path = "/api/tasks/:id/verdict", .status = 200,
	.cli = "task verdict",
	.cli_summary = "Approve or reject a verifying task's work",
	.cli_details =
	    "Example: huddle task verdict 5 --verdict reject -r \"the parser "
	    "still drops blank lines\" --as reviewer. Only the task's critic, "
	    "or a user, may.",
	.cli_as_help = "the critic (default: user)"},
    {.name = "task.verify", .who = HD_OPW_MEMBER, .flags = W,
	.args = id_args, .fn = tool_task_verify, .mcp = "task_verify",
	.mcp_desc =
	    "Run a verifying task's verification again (after its gate could "
	    "not run, or its critic failed or timed out): the owner, the "
	    "leader or a user.",
	.method = "POST", .path = "/api/tasks/:id/verify", .status = 200,
	.rest_common = action_common,
	.cli = "task verify",
	.cli_summary = "Run a verifying task's verification again, now",
	.cli_details =
	    "Queues it and runs it here, in the foreground: the gate, then "
	    "the critic's turn. A running huddle serve runs queued "
	    "verifications by itself.",
	.cli_as_help = AS_USER},
    {.name = "task.fail", .who = HD_OPW_MEMBER, .flags = W,
	.args = fail_args, .fn = tool_task_fail, .mcp = "task_fail",
	.mcp_desc = "Mark a task you own as failed, saying why.",
	.method = "POST", .path = "/api/tasks/:id/fail", .status = 200, .rest_common = action_common,
	.cli = "task fail", .cli_summary = "Mark a task failed",
	.cli_as_help = AS_USER},
    {.name = "task.release", .who = HD_OPW_MEMBER, .flags = W,
	.args = id_args, .fn = tool_task_release, .mcp = "task_release",
	.mcp_desc =
	    "Give back a task you own: it returns to pending with no owner.",
	.method = "POST", .path = "/api/tasks/:id/release", .status = 200, .rest_common = action_common,
	.cli = "task release",
	.cli_summary = "Give a task back (owner cleared)",
	.cli_as_help = AS_USER},
    {.name = "task.cancel", .who = HD_OPW_LEADER, .flags = W, .args = id_args,
	.fn = tool_task_cancel, .method = "POST",
	.path = "/api/tasks/:id/cancel", .status = 200, .rest_common = action_common, .cli = "task cancel",
	.cli_summary = "Cancel a task", .cli_as_help = AS_USER},
    {.name = "task.retry", .who = HD_OPW_LEADER, .flags = W, .args = id_args,
	.fn = tool_task_retry, .method = "POST",
	.path = "/api/tasks/:id/retry", .status = 200, .rest_common = action_common, .cli = "task retry",
	.cli_summary = "Reopen a failed task", .cli_as_help = AS_USER},
    {.name = "task.link", .who = HD_OPW_MEMBER, .flags = W,
	.args = link_args, .fn = tool_task_link, .mcp = "task_link",
	.mcp_desc =
	    "Make a task wait for another (task_id depends on depends_on). A "
	    "link that would create a cycle is refused.",
	.method = "POST", .path = "/api/tasks/:id/link", .status = 200, .rest_common = action_common,
	.cli = "task link", .cli_summary = "Make a task wait for another",
	.cli_details = "A link that would close a cycle is refused.",
	.cli_as_help = AS_USER},
    {.name = "task.comment", .who = HD_OPW_MEMBER, .flags = W,
	.args = comment_args, .fn = tool_task_comment, .mcp = "task_comment",
	.mcp_desc = "Add a comment to a task.", .method = "POST",
	.path = "/api/tasks/:id/comment", .status = 201, .rest_common = action_common,
	.cli = "task comment", .cli_summary = "Comment on a task",
	.cli_as_help = AS_USER},
    {.name = "task.delegate", .who = HD_OPW_LEADER, .flags = W,
	.args = delegate_args, .fn = tool_team_delegate,
	.mcp = "team_delegate",
	.mcp_desc =
	    "As the team leader, delegate work in one act: create a task, "
	    "assign it to a member and send that member a task_update "
	    "message (You were delegated task #7 \"X\" by you: "
	    "<description>). A member that is not in the team, in error or "
	    "shutting down is refused, and then nothing is written.",
	.mcp_ids = HD_OPI_AGENT_TEAM_NAME, .method = "POST",
	.path = "/api/teams/:team/delegate", .status = 201,
	.cli = "task delegate",
	.cli_summary =
	    "Create a task, assign it and tell the assignee, in one act",
	.cli_details =
	    "Only the team leader or a user may delegate. An assignee in error "
	    "or shutting down is refused, and then nothing is written. The "
	    "assignee gets a task_update message: You were delegated task #7 "
	    "\"X\" by manager: <description>. Example: huddle task delegate "
	    "dev --to coder \"Fix the parser\" -d \"tests in tests/parse\" --as "
	    "manager",
	.cli_as_help = "delegate as AGENT, the leader (default: user)"},
    {.name = NULL},
};
