/*
 * tool-team.c -- team tools: team_create, team_state, teammate_spawn
 * (which also replaces a member), team_delegate, team_shutdown.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>
#include <huddle/shutdown.h>

#include "mcp.h"

static int
tool_team_create(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_team_spec spec = {0};
	hd_team *t = NULL;
	int rc;

	spec.id = hd_mcp_arg_str(c, "team_name");
	spec.name = hd_mcp_arg_str(c, "name");
	spec.description = hd_mcp_arg_str(c, "description");
	if ((rc = hd_team_create(&t, c->s->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "team", hd_team_to_json(t));
	hd_team_free(t);
	return 0;
}

static int
tool_team_state(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_team_snapshot snap;
	hd_shutdown *sd = NULL;
	char *text = NULL;
	int rc;

	if ((rc = hd_team_snapshot_get(&snap, c->s->st, c->team, err)) < 0)
		return rc;
	if ((rc = hd_team_state_render(&text, &snap, err)) < 0 ||
	    (rc = hd_shutdown_get(&sd, c->s->st, c->team, err)) < 0)
		goto done;
	*result = hd_team_snapshot_to_json(&snap);
	json_object_set_new(*result, "shutdown",
	    sd != NULL ? hd_shutdown_to_json(sd) : json_null());
	json_object_set_new(*result, "text", json_string(text));
done:
	free(text);
	hd_shutdown_free(sd);
	hd_team_snapshot_dispose(&snap);
	return rc;
}

static int
tool_teammate_spawn(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_spawn_spec spec;
	hd_agent *a = NULL;
	hd_tasks moved = {0};
	json_t *arr;
	size_t i;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.team = c->team;
	spec.caller = c->agent;
	spec.replaces = hd_mcp_arg_str(c, "replaces");
	spec.id = hd_mcp_arg_str(c, "name");
	spec.role = hd_mcp_arg_str(c, "role");
	spec.runtime = hd_mcp_arg_str(c, "runtime");
	spec.runtime_config = json_object_get(c->args, "runtime_config");
	spec.model = hd_mcp_arg_str(c, "model");
	spec.check = hd_runtime_check_config;
	spec.task = hd_mcp_arg_str(c, "task");
	if (spec.replaces == NULL)
		rc = hd_team_spawn(&a, c->s->st, &spec, err);
	else
		rc = hd_team_replace(&a, &moved, c->s->st, &spec, err);
	if (rc < 0)
		return rc;
	*result = json_pack("{s:o}", "agent", hd_agent_to_json(a));
	if (spec.replaces != NULL) {
		arr = json_array();
		for (i = 0; i < moved.n; i++)
			json_array_append_new(arr,
			    json_pack("{s:I, s:s, s:s}", "id",
				(json_int_t)moved.items[i].id, "subject",
				moved.items[i].subject, "status",
				moved.items[i].status));
		json_object_set_new(
		    *result, "replaced", json_string(spec.replaces));
		json_object_set_new(*result, "took_over", arr);
	}
	hd_tasks_dispose(&moved);
	hd_agent_free(a);
	return 0;
}

static int
tool_team_shutdown(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_shutdown *sd = NULL;
	int64_t timeout_s;
	int rc;

	hd_mcp_arg_int(c, "timeout_s", 0, &timeout_s);
	if (timeout_s < 0 || timeout_s > HD_SHUTDOWN_TIMEOUT_MAX_MS / 1000)
		return hd_err_set(err, HD_EINVAL,
		    "timeout_s must be between 1 and %d",
		    HD_SHUTDOWN_TIMEOUT_MAX_MS / 1000);
	if ((rc = hd_team_shutdown(&sd, c->s->st, c->team,
		 hd_mcp_arg_str(c, "reason"), timeout_s * 1000, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "shutdown", hd_shutdown_to_json(sd));
	hd_shutdown_free(sd);
	return 0;
}

/* As the leader: create a task, assign it to assignee and tell it, in one
 * act (hd_board_delegate). Not "agent": an unbound connection reads that
 * as who is acting. */
static int
tool_team_delegate(json_t **result, hd_mcp_call *c, hd_err *err)
{
	hd_task_spec spec = {0};
	const char *assignee = hd_mcp_arg_str(c, "assignee");
	hd_task *t = NULL;
	int64_t prio;
	int rc;

	spec.team = c->team;
	spec.subject = hd_mcp_arg_str(c, "task");
	spec.description = hd_mcp_arg_str(c, "description");
	hd_mcp_arg_int(c, "priority", 0, &prio);
	spec.priority = prio;
	spec.created_by = c->agent;
	if (hd_mcp_arg_int(c, "parent_task_id", 0, &spec.parent_id) &&
	    spec.parent_id <= 0)
		return hd_err_set(err, HD_EINVAL,
		    "parent_task_id must be a task id (a positive integer)");
	if ((rc = hd_board_delegate(&t, c->s->st, &spec, assignee, err)) < 0)
		return rc;
	*result = json_pack("{s:o, s:s}", "task", hd_task_to_json(t),
	    "assignee", t->owner);
	hd_task_free(t);
	return 0;
}

const hd_mcp_tool hd_mcp_tools_team[] = {
	{"team_state",
	    "Read your team's state: name, status, members (leader first) with "
	    "their status, task counts, and any shutdown in progress. Also "
	    "returned as the TEAM STATE text block.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"team_name\":{\"type\":\"string\",\"description\":\"unbound "
	    "connections only: the team\"}},"
	    "\"required\":[]}",
	    HD_TOOL_READ | HD_TOOL_NEEDS_TEAM, tool_team_state},
	{"teammate_spawn",
	    "Add a new agent to your team (it must be active); its first "
	    "mailbox message is the task you give, or an invitation to join. "
	    "You are recorded as the one who spawned it, and it is one level "
	    "deeper than you: a team limits how deep spawns may go (default "
	    "5). As the leader, name a failed member in replaces and the new "
	    "agent takes over its unfinished tasks (and its role, runtime and "
	    "runtime_config unless given); the member is shut down.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"name\":{\"type\":\"string\",\"description\":\"the new "
	    "agent's id: 1-50 lowercase letters, digits, '-' or '_'\"},"
	    "\"task\":{\"type\":\"string\",\"description\":\"its first "
	    "message\"},"
	    "\"role\":{\"type\":\"string\"},"
	    "\"runtime\":{\"type\":\"string\",\"description\":\"scripted "
	    "(default), exec, claude-code or codex\"},"
	    "\"runtime_config\":{\"type\":\"object\",\"description\":\"the "
	    "runtime's configuration object, checked as for huddle agent "
	    "add\"},"
	    "\"model\":{\"type\":\"string\",\"description\":\"the model "
	    "to run (sets runtime_config.model)\"},"
	    "\"replaces\":{\"type\":\"string\",\"description\":\"a "
	    "member it replaces: its claimed and in-progress tasks move to "
	    "the new agent\"},"
	    "\"authorAgentId\":{\"type\":\"string\"},"
	    "\"team_name\":{\"type\":\"string\"}},"
	    "\"required\":[\"name\"]}",
	    HD_TOOL_WRITE | HD_TOOL_NEEDS_TEAM, tool_teammate_spawn},
	{"team_delegate",
	    "As the team leader, delegate work in one act: create a task, "
	    "assign it to a member and send that member a task_update "
	    "message (You were delegated task #7 \"X\" by you: "
	    "<description>). A member that is not in the team, in error or "
	    "shutting down is refused, and then nothing is written.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"assignee\":{\"type\":\"string\",\"description\":\"the "
	    "member who gets the task\"},"
	    "\"task\":{\"type\":\"string\",\"description\":\"the task's "
	    "subject, 1-200 characters\"},"
	    "\"description\":{\"type\":\"string\",\"description\":\"what "
	    "needs doing; also sent to the assignee\"},"
	    "\"priority\":{\"type\":\"integer\",\"description\":\"higher "
	    "is claimed first (default 0)\"},"
	    "\"parent_task_id\":{\"type\":\"integer\",\"description\":\"make "
	    "it a subtask of this task (same team)\"},"
	    "\"authorAgentId\":{\"type\":\"string\"},"
	    "\"team_name\":{\"type\":\"string\"}},"
	    "\"required\":[\"assignee\",\"task\"]}",
	    HD_TOOL_WRITE | HD_TOOL_NEEDS_TEAM | HD_TOOL_NEEDS_AGENT,
	    tool_team_delegate},
	{"team_shutdown",
	    "Ask your team to shut down. With no member working it shuts down "
	    "at once; otherwise each working member gets a shutdown_request "
	    "to approve or refuse, and a refusal or timeout returns the team "
	    "to active. Nothing is deleted.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"reason\":{\"type\":\"string\"},"
	    "\"timeout_s\":{\"type\":\"integer\",\"description\":\"how "
	    "long members have to answer (default 60)\"},"
	    "\"team_name\":{\"type\":\"string\"}},"
	    "\"required\":[]}",
	    HD_TOOL_WRITE | HD_TOOL_NEEDS_TEAM, tool_team_shutdown},
	{"team_create",
	    "Create a new team (an id of 1-50 lowercase letters, digits, '-' "
	    "or '_'). Agents are added with teammate_spawn.",
	    "{\"type\":\"object\",\"properties\":{"
	    "\"team_name\":{\"type\":\"string\",\"description\":\"the new "
	    "team's id, e.g. docs-team\"},"
	    "\"name\":{\"type\":\"string\",\"description\":\"display name\"},"
	    "\"description\":{\"type\":\"string\",\"description\":\"what the "
	    "team is for\"}},"
	    "\"required\":[\"team_name\"]}",
	    HD_TOOL_WRITE, tool_team_create},
	{NULL, NULL, NULL, 0, NULL},
};
