/*
 * tool-board.c -- board tools (SPEC 4, 10.2). Every tool acts inside the
 * caller's team: a task of another team is reported as not found, so a
 * bound agent can neither read nor move another team's work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>

#include "mcp.h"

/* Fetch task_id and check it belongs to the caller's team. */
static int
task_in_team(hd_mcp_call *c, int64_t *id, hd_err *err)
{
	hd_task *t = NULL;
	int rc;

	hd_mcp_arg_int(c, "task_id", 0, id);
	if ((rc = hd_board_get(&t, c->s->st, *id, err)) < 0)
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
task_move(json_t **result, hd_mcp_call *c, task_move_fn fn, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, fn(&t, c->s->st, id, c->agent, err));
}

static int
tool_task_create(json_t **result, hd_mcp_call *c, hd_err *err)
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
	spec.subject = hd_mcp_arg_str(c, "subject");
	spec.description = hd_mcp_arg_str(c, "description");
	spec.active_form = hd_mcp_arg_str(c, "active_form");
	hd_mcp_arg_int(c, "priority", 0, &prio);
	spec.priority = prio;
	spec.metadata = json_object_get(c->args, "metadata");
	spec.depends_on = ids;
	spec.ndepends_on = json_array_size(deps);
	spec.created_by = c->agent;
	if (hd_mcp_arg_int(c, "parent_task_id", 0, &spec.parent_id) &&
	    spec.parent_id <= 0)
		return hd_err_set(err, HD_EINVAL,
		    "parent_task_id must be a task id (a positive integer)");
	return task_result(result, &t, hd_board_create(&t, c->s->st, &spec, err));
}

static int
tool_task_list(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task_filter f;
	hd_tasks l;
	const json_t *meta = json_object_get(c->args, "metadata"), *v;
	const char *key;
	char pairs[16][256];
	const char *pp[16];
	json_t *arr;
	int64_t limit;
	size_t i = 0;
	int rc;

	memset(&f, 0, sizeof(f));
	f.status = hd_mcp_arg_str(c, "status");
	f.owner = hd_mcp_arg_str(c, "owner");
	f.ready = json_is_true(json_object_get(c->args, "ready"));
	f.blocked = json_is_true(json_object_get(c->args, "blocked"));
	hd_mcp_arg_int(c, "limit", 0, &limit);
	if (limit < 0 || limit > 10000)
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
	f.meta = pp;
	f.nmeta = i;
	if ((rc = hd_board_list(&l, c->s->st, c->team, &f, err)) < 0)
		return rc;
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_task_to_json(&l.items[i]));
	hd_tasks_dispose(&l);
	*result = json_pack("{s:o}", "tasks", arr);
	return 0;
}

static int
tool_task_get(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, hd_board_get(&t, c->s->st, id, err));
}

static int
tool_task_claim(json_t **result, hd_mcp_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_claim, err);
}

static int
tool_task_auto_claim(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task *t = NULL;

	return task_result(result, &t,
	    hd_board_auto_claim(&t, c->s->st, c->team, c->agent, err));
}

/* As the leader: assign a task to assignee, or with auto to the member
 * the board picks (hd_board_assign_auto); exactly one of the two. Not
 * "agent": an unbound connection reads that as who is acting. */
static int
tool_task_assign(json_t **result, hd_mcp_call *c, hd_err *err)
{
	const char *agent = hd_mcp_arg_str(c, "assignee");
	int automatic = json_is_true(json_object_get(c->args, "auto"));
	hd_board_pick pick;
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if (agent != NULL && automatic)
		return hd_err_set(err, HD_EINVAL,
		    "pass assignee or auto, not both");
	if (agent == NULL && !automatic)
		return hd_err_set(err, HD_EINVAL,
		    "pass assignee (a member) or auto: true");
	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	if (agent != NULL)
		rc = hd_board_assign(&t, c->s->st, id, agent, c->agent, err);
	else
		rc = hd_board_assign_auto(
		    &t, &pick, c->s->st, id, c->agent, err);
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
tool_task_start(json_t **result, hd_mcp_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_start, err);
}

static int
tool_task_complete(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, hd_board_complete(&t, c->s->st, id,
	    c->agent, hd_mcp_arg_str(c, "result"), err));
}

static int
tool_task_fail(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	return task_result(result, &t, hd_board_fail(&t, c->s->st, id, c->agent,
	    hd_mcp_arg_str(c, "reason"), err));
}

static int
tool_task_release(json_t **result, hd_mcp_call *c, hd_err *err)
{
	return task_move(result, c, hd_board_release, err);
}

static int
tool_task_link(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task *t = NULL;
	int64_t id, dep;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	hd_mcp_arg_int(c, "depends_on", 0, &dep);
	return task_result(result, &t,
	    hd_board_link(&t, c->s->st, id, dep, c->agent, err));
}

static int
tool_task_comment(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task_comment *cm = NULL;
	int64_t id;
	int rc;

	if ((rc = task_in_team(c, &id, err)) < 0)
		return rc;
	if ((rc = hd_board_comment(&cm, c->s->st, id, c->agent,
		 hd_mcp_arg_str(c, "body"), err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "comment", hd_task_comment_to_json(cm));
	hd_task_comment_free(cm);
	return 0;
}

#define ID_PROPS                                                              \
	"\"authorAgentId\":{\"type\":\"string\",\"description\":\"unbound "   \
	"connections only: the acting agent\"},"                              \
	"\"teamId\":{\"type\":\"string\",\"description\":\"unbound "          \
	"connections only: the team\"}"
#define TASK_ID_PROP                                                          \
	"\"task_id\":{\"type\":\"integer\",\"description\":\"the task's "     \
	"id\"},"

#define W (HD_TOOL_WRITE | HD_TOOL_NEEDS_TEAM | HD_TOOL_NEEDS_AGENT)
#define R (HD_TOOL_READ | HD_TOOL_NEEDS_TEAM)

const hd_mcp_tool hd_mcp_tools_board[] = {
	{"task_create",
	    "Create a task on your team's board. It starts pending; it is "
	    "ready to claim once every task in depends_on is completed. With "
	    "parent_task_id it is a subtask: the parent cannot complete while "
	    "it is open, and the team caps subtasks per task, their depth and "
	    "the root tasks you create per window.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"subject\":{\"type\":\"string\",\"description\":\"1-200 "
	    "characters\"},"
	    "\"description\":{\"type\":\"string\"},"
	    "\"active_form\":{\"type\":\"string\",\"description\":\"what doing "
	    "it is called, e.g. Writing docs\"},"
	    "\"priority\":{\"type\":\"integer\",\"description\":\"higher is "
	    "claimed first (default 0)\"},"
	    "\"metadata\":{\"type\":\"object\",\"description\":\"free-form "
	    "key/value pairs\"},"
	    "\"depends_on\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"integer\"},\"description\":\"ids of tasks this one waits "
	    "for\"},"
	    "\"parent_task_id\":{\"type\":\"integer\",\"description\":\"make "
	    "it a subtask of this task (same team)\"}," ID_PROPS
	    "},\"required\":[\"subject\"]}",
	    W, tool_task_create},
	{"task_list",
	    "List your team's tasks, newest first, each with depends_on and "
	    "blocked_by. Filter by status, owner, ready (pending, unowned, "
	    "unblocked) or blocked, and metadata equality.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"claimed\","
	    "\"in_progress\",\"completed\",\"failed\",\"cancelled\"]},"
	    "\"owner\":{\"type\":\"string\"},"
	    "\"ready\":{\"type\":\"boolean\"},"
	    "\"blocked\":{\"type\":\"boolean\"},"
	    "\"metadata\":{\"type\":\"object\",\"description\":\"KEY: VALUE "
	    "pairs the task's metadata must equal\"},"
	    "\"limit\":{\"type\":\"integer\"}," ID_PROPS "},\"required\":[]}",
	    R, tool_task_list},
	{"task_get",
	    "Get one task with its dependencies and comments.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP ID_PROPS
	    "},\"required\":[\"task_id\"]}",
	    R, tool_task_get},
	{"task_claim",
	    "Claim a ready task for yourself. Atomic: of several agents "
	    "claiming at once exactly one wins; the others are told who did, "
	    "or why the task is not claimable.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP ID_PROPS
	    "},\"required\":[\"task_id\"]}",
	    W, tool_task_claim},
	{"task_auto_claim",
	    "Claim the best ready task of your team: highest priority, then "
	    "oldest.",
	    "{\"type\":\"object\",\"properties\":{" ID_PROPS "},\"required\":[]}",
	    W, tool_task_auto_claim},
	{"task_assign",
	    "As the team leader, give a ready task to a member: name it "
	    "(assignee), or pass auto: true and huddle picks the idle member "
	    "with the fewest open tasks (ties: the lowest id; never one that "
	    "is working, in error or shutting down). The answer names the "
	    "assignee and, with auto, why it was picked.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP
	    "\"assignee\":{\"type\":\"string\",\"description\":\"the "
	    "member to assign it to (or use auto)\"},"
	    "\"auto\":{\"type\":\"boolean\",\"description\":\"true: pick "
	    "the member for me\"}," ID_PROPS "},\"required\":[\"task_id\"]}",
	    W, tool_task_assign},
	{"task_start",
	    "Mark a task you own as in progress.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP ID_PROPS
	    "},\"required\":[\"task_id\"]}",
	    W, tool_task_start},
	{"task_complete",
	    "Complete a task you own, with an optional result. Tasks that "
	    "depended on it become ready; the answer's task.unblocked lists "
	    "the ids of those that did.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP
	    "\"result\":{\"type\":\"string\",\"description\":\"what came of "
	    "it\"}," ID_PROPS "},\"required\":[\"task_id\"]}",
	    W, tool_task_complete},
	{"task_fail",
	    "Mark a task you own as failed, saying why.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP
	    "\"reason\":{\"type\":\"string\"}," ID_PROPS
	    "},\"required\":[\"task_id\",\"reason\"]}",
	    W, tool_task_fail},
	{"task_release",
	    "Give back a task you own: it returns to pending with no owner.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP ID_PROPS
	    "},\"required\":[\"task_id\"]}",
	    W, tool_task_release},
	{"task_link",
	    "Make a task wait for another (task_id depends on depends_on). A "
	    "link that would create a cycle is refused.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP
	    "\"depends_on\":{\"type\":\"integer\"}," ID_PROPS
	    "},\"required\":[\"task_id\",\"depends_on\"]}",
	    W, tool_task_link},
	{"task_comment",
	    "Add a comment to a task.",
	    "{\"type\":\"object\",\"properties\":{" TASK_ID_PROP
	    "\"body\":{\"type\":\"string\"}," ID_PROPS
	    "},\"required\":[\"task_id\",\"body\"]}",
	    W, tool_task_comment},
	{NULL, NULL, NULL, 0, NULL},
};
