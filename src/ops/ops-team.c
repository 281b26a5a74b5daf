/*
 * ops-team.c -- the team's operations (ops.h): team_create, team_state,
 * teammate_spawn (which also replaces a member) and team_shutdown.
 * team_delegate is a board operation (ops-board.c). team.create is also
 * POST /api/teams {id, ...} and `huddle team create`. team.state and
 * team.shutdown are also GET /api/teams/:team/state, POST
 * /api/teams/:team/shutdown and `huddle team state|shutdown` (whose
 * renderers, cmd-team.c, add what autorun holds and --wait).
 *
 * team.spawn is also POST /api/teams/:team/spawn (201 {agent}, and for a
 * replace replaced and took_over as over MCP; an unknown field refused
 * with the route's own list, rest_unknown) and `huddle agent spawn TEAM
 * NAME`; team.replace is `huddle agent replace TEAM OLD NEW`, the same
 * handler with replaces from a positional. On the CLI NAME is the id
 * (MCP's and REST's "name"), --name the display name (an argument of its
 * own, hidden from MCP and REST), --config the runtime_config, and
 * without --as the leader or a user spawns (the library's caller NULL).
 * The handler answers the tasks taken over whole; MCP and REST show
 * their id, subject and status (spawn_shown), the CLI's renderer
 * (cmd-agent.c) all of it.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/board.h>
#include <huddle/runtime.h>
#include <huddle/shutdown.h>
#include <huddle/spawn.h>
#include <huddle/team.h>
#include <huddle/team_state.h>

#include "ops.h"

static int
tool_team_create(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_team_spec spec = {0};
	hd_team *t = NULL;
	int rc;

	spec.id = hd_op_str(c, "team_name");
	spec.name = hd_op_str(c, "name");
	spec.description = hd_op_str(c, "description");
	spec.icon = hd_op_str(c, "icon");
	spec.color = hd_op_str(c, "color");
	if ((rc = hd_team_create(&t, c->st, &spec, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "team", hd_team_to_json(t));
	hd_team_free(t);
	return 0;
}

static int
tool_team_state(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_team_snapshot snap;
	hd_shutdown *sd = NULL;
	char *text = NULL;
	int rc;

	if ((rc = hd_team_snapshot_get(&snap, c->st, c->team, err)) < 0)
		return rc;
	if ((rc = hd_team_state_render(&text, &snap, err)) < 0 ||
	    (rc = hd_shutdown_get(&sd, c->st, c->team, err)) < 0)
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
tool_teammate_spawn(json_t **result, const hd_op_call *c, hd_err *err)
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
	spec.replaces = hd_op_str(c, "replaces");
	spec.id = hd_op_str(c, "name");
	spec.name = hd_op_str(c, "display_name"); /* the CLI's --name */
	spec.role = hd_op_str(c, "role");
	spec.runtime = hd_op_str(c, "runtime");
	spec.runtime_config = json_object_get(c->args, "runtime_config");
	spec.model = hd_op_str(c, "model");
	spec.check = hd_runtime_check_config;
	spec.task = hd_op_str(c, "task");
	if (spec.replaces == NULL)
		rc = hd_team_spawn(&a, c->st, &spec, err);
	else
		rc = hd_team_replace(&a, &moved, c->st, &spec, err);
	if (rc < 0)
		return rc;
	*result = json_pack("{s:o}", "agent", hd_agent_to_json(a));
	if (spec.replaces != NULL) {
		arr = json_array();
		for (i = 0; i < moved.n; i++)
			json_array_append_new(
			    arr, hd_task_to_json(&moved.items[i]));
		json_object_set_new(
		    *result, "replaced", json_string(spec.replaces));
		json_object_set_new(*result, "took_over", arr);
	}
	hd_tasks_dispose(&moved);
	hd_agent_free(a);
	return 0;
}

/* MCP and REST: a task taken over is its id, subject and status. */
static json_t *
spawn_shown(json_t *result)
{
	json_t *out = json_deep_copy(result), *arr, *t;
	const json_t *took = json_object_get(result, "took_over");
	size_t i;

	if (took == NULL)
		return out;
	arr = json_array();
	json_array_foreach (took, i, t)
		json_array_append_new(arr, json_pack("{s:O, s:O, s:O}", "id",
		    json_object_get(t, "id"), "subject",
		    json_object_get(t, "subject"), "status",
		    json_object_get(t, "status")));
	json_object_set_new(out, "took_over", arr);
	return out;
}

static int
tool_team_shutdown(json_t **result, const hd_op_call *c, hd_err *err)
{
	hd_shutdown *sd = NULL;
	int64_t timeout_s;
	int rc;

	hd_op_int(c, "timeout_s", 0, &timeout_s); /* its range: the table's */
	if ((rc = hd_team_shutdown(&sd, c->st, c->team,
		 hd_op_str(c, "reason"), timeout_s * 1000, err)) < 0)
		return rc;
	*result = json_pack("{s:o}", "shutdown", hd_shutdown_to_json(sd));
	hd_shutdown_free(sd);
	return 0;
}

#define ARGS_END {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL}
#define S(n, desc) {n, HD_OPT_STR, 0, 0, 0, NULL, desc, NULL, NULL, 0, NULL, NULL, NULL}

/* the team an operation acts in: from identity over MCP */
#define ARG_TEAM                                                              \
	{"team", HD_OPT_STR, HD_OPA_REQUIRED | HD_OPA_NO_MCP, 0, 0, NULL,     \
	    NULL, ":team", "TEAM", 0, NULL, NULL, "team"}

static const hd_op_arg state_args[] = {ARG_TEAM, ARGS_END};

#define NAME_DESC "the new agent's id: 1-50 lowercase letters, digits, '-' or '_'"
#define RUNTIMES "scripted (default), exec, claude-code, codex, native, hermes or openclaw"
#define MODEL_HELP "the model it runs (sets the config's \"model\")"
/* the CLI's --name: the display name (MCP's and REST's "name" is the id) */
#define ARG_DISPLAY_NAME                                                      \
	{"display_name", HD_OPT_STR, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "",     \
	    "--name", 0, "display name (default: the id)", "TEXT", NULL}

static const hd_op_arg spawn_args[] = {
    ARG_TEAM,
    {"name", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, NAME_DESC, NULL, "NAME",
	0, NULL, NULL, NULL},
    {"task", HD_OPT_STR, 0, 0, 0, NULL, "its first message", NULL, "--task",
	0, "its first message (default: \"Join team TEAM as NAME\")", "TEXT",
	NULL},
    ARG_DISPLAY_NAME,
    {"role", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--role", 0,
	"free text, e.g. reviewer", "TEXT", NULL},
    {"runtime", HD_OPT_STR, 0, 0, 0, NULL, RUNTIMES, NULL, "--runtime", 0,
	RUNTIMES, "NAME", NULL},
    {"runtime_config", HD_OPT_OBJECT, 0, 0, 0, NULL,
	"the runtime's configuration object, checked as for huddle agent add",
	NULL, "--config", 0, "the runtime's configuration object", "JSON",
	NULL},
    {"model", HD_OPT_STR, 0, 0, 0, NULL,
	"the model to run (sets runtime_config.model)", NULL, "--model", 0,
	MODEL_HELP, "MODEL", NULL},
    /* the CLI's is agent replace (team.replace) */
    S("replaces", "a member it replaces: its claimed and in-progress tasks "
		  "move to the new agent"),
    ARGS_END,
};

/* `agent replace TEAM OLD NEW`: the CLI's only */
static const hd_op_arg replace_args[] = {
    ARG_TEAM,
    {"replaces", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, NULL, NULL, "OLD",
	0, NULL, NULL, NULL},
    {"name", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL, NULL, NULL, "NEW", 0,
	NULL, NULL, NULL},
    {"task", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--task", 0,
	"what to do first (the tasks taken over are listed after it)", "TEXT",
	NULL},
    ARG_DISPLAY_NAME,
    {"role", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--role", 0,
	"its role (default: the replaced member's)", "TEXT", NULL},
    {"runtime", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--runtime", 0,
	"its runtime (default: the replaced member's)", "NAME", NULL},
    {"runtime_config", HD_OPT_OBJECT, 0, 0, 0, NULL, NULL, NULL, "--config",
	0,
	"the runtime's configuration object (default: the replaced "
	"member's, for the same runtime)",
	"JSON", NULL},
    {"model", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--model", 0,
	MODEL_HELP, "MODEL", NULL},
    ARGS_END,
};

static const hd_op_arg shutdown_args[] = {
    ARG_TEAM,
    {"reason", HD_OPT_STR, 0, 0, 0, NULL, NULL, NULL, "--reason", 0,
	"why, sent to every member asked", "TEXT", NULL},
    {"timeout_s", HD_OPT_INT, 0, 1, HD_SHUTDOWN_TIMEOUT_MAX_MS / 1000, NULL,
	"how long members have to answer (default 60)", NULL, "--timeout", 0,
	"seconds members have to answer (default 60)", "S", NULL},
    /* the CLI's: wait for the outcome (its renderer) */
    {"wait", HD_OPT_BOOL, HD_OPA_NO_MCP, 0, 0, NULL, NULL, "", "--wait", 'w',
	"wait until every member answered or time ran out", NULL, NULL},
    ARGS_END,
};

/* a team's field: REST may send null for it; the CLI's --x */
#define FIELD(n, mcp, help, flags)                                            \
	{n, HD_OPT_STR, HD_OPA_NULL_OK | (flags), 0, 0, NULL, mcp, NULL,      \
	    "--" n, 0, help, "TEXT", NULL}

static const hd_op_arg create_args[] = {
    {"team_name", HD_OPT_STR, HD_OPA_REQUIRED, 0, 0, NULL,
	"the new team's id, e.g. docs-team", "id", "TEAM", 0, NULL, NULL,
	"team"},
    FIELD("name", "display name", "display name (default: the id)", 0),
    FIELD("description", "what the team is for", "what the team is for", 0),
    /* the dashboard's: not MCP arguments */
    FIELD("icon", NULL, "an icon (an emoji, say)", HD_OPA_NO_MCP),
    FIELD("color", NULL, "a colour for the dashboard (#4f46e5)",
	HD_OPA_NO_MCP),
    ARGS_END,
};

const hd_op hd_ops_team[] = {
    {.name = "team.state", .who = HD_OPW_MEMBER, .flags = HD_OPF_NEEDS_TEAM,
	.args = state_args, .fn = tool_team_state, .mcp = "team_state",
	.mcp_desc =
	    "Read your team's state: name, status, members (leader first) with "
	    "their status, task counts, and any shutdown in progress. Also "
	    "returned as the TEAM STATE text block.",
	.mcp_ids = HD_OPI_TEAM_NAME, .method = "GET",
	.path = "/api/teams/:team/state", .status = 200, .cli = "team state",
	.cli_summary =
	    "Show the TEAM STATE block a leader sees, and what autorun holds",
	.cli_details =
	    "After the block: autorun's settings and, per agent, its wake "
	    "queue, the turn\nit is running and its last turn."},
    {.name = "team.spawn", .who = HD_OPW_MEMBER,
	.flags = HD_OPF_WRITE | HD_OPF_NEEDS_TEAM, .args = spawn_args,
	.fn = tool_teammate_spawn, .mcp = "teammate_spawn",
	.mcp_desc =
	    "Add a new agent to your team (it must be active); its first "
	    "mailbox message is the task you give, or an invitation to join. "
	    "You are recorded as the one who spawned it, and it is one level "
	    "deeper than you: a team limits how deep spawns may go (default "
	    "5). As the leader, name a failed member in replaces and the new "
	    "agent takes over its unfinished tasks (and its role, runtime and "
	    "runtime_config unless given); the member is shut down.",
	.mcp_ids = HD_OPI_AGENT_TEAM_NAME,
	.shape = {[HD_OPS_MCP] = spawn_shown, [HD_OPS_REST] = spawn_shown},
	.method = "POST", .path = "/api/teams/:team/spawn", .status = 201,
	.rest_unknown = "use name, as, task, role, runtime, runtime_config, "
			"model or replaces",
	.cli = "agent spawn",
	.cli_summary = "Spawn a teammate into an active team",
	.cli_details =
	    "The new agent gets session key agent:NAME:teammate:<uuid> and a "
	    "first message\nin its mailbox (--task, or \"Join team TEAM as "
	    "NAME\"). It is one level deeper than\nthe member spawning it (1 "
	    "when no --as); past the team's limit (huddle team\nupdate "
	    "--max-spawn-depth) the spawn is refused.",
	.cli_as_help = "the member spawning it (default: the leader)"},
    {.name = "team.replace", .who = HD_OPW_MEMBER, .flags = HD_OPF_WRITE,
	.args = replace_args, .fn = tool_teammate_spawn,
	.cli = "agent replace",
	.cli_summary =
	    "Spawn NEW to take over a failed member's unfinished tasks",
	.cli_details =
	    "In one transaction: NEW is spawned as 'agent spawn' spawns it, "
	    "with OLD's role,\nruntime and config unless given; every task OLD "
	    "has claimed or in progress\nmoves to NEW (same status, a comment "
	    "saying why); OLD is shut down (replaced\nby NEW); NEW's first "
	    "message lists the tasks it took over. Only the leader\n(--as) or a "
	    "user replaces, and never the leader.\nExample: huddle agent "
	    "replace dev coder coder-2 --as manager --model sonnet",
	.cli_as_help = "the leader replacing it (default: a user)"},
    {.name = "team.shutdown", .who = HD_OPW_MEMBER,
	.flags = HD_OPF_WRITE | HD_OPF_NEEDS_TEAM, .args = shutdown_args,
	.fn = tool_team_shutdown, .mcp = "team_shutdown",
	.mcp_desc =
	    "Ask your team to shut down. With no member working it shuts down "
	    "at once; otherwise each working member gets a shutdown_request "
	    "to approve or refuse, and a refusal or timeout returns the team "
	    "to active. Nothing is deleted.",
	.mcp_ids = HD_OPI_TEAM_NAME, .method = "POST",
	.path = "/api/teams/:team/shutdown", .status = 200,
	.cli = "team shutdown",
	.cli_summary = "Shut a team down, asking working members first",
	.cli_details =
	    "No member working: the team is shut down at once. Otherwise each "
	    "working member\ngets a shutdown_request; the team is shut down "
	    "when all approve, and back to\nactive when one refuses or time "
	    "runs out. Nothing is deleted.\nMembers answer with 'huddle "
	    "shutdown-response'."},
    {.name = "team.create", .flags = HD_OPF_WRITE, .args = create_args,
	.fn = tool_team_create, .mcp = "team_create",
	.mcp_desc =
	    "Create a new team (an id of 1-50 lowercase letters, digits, '-' "
	    "or '_'). Agents are added with teammate_spawn.",
	.mcp_ids = HD_OPI_NONE, .method = "POST", .path = "/api/teams",
	.status = 201, .cli = "team create", .cli_summary = "Create a team",
	.cli_details = "TEAM is 1-50 lowercase letters, digits, '-' or '_'."},
    {.name = NULL},
};
