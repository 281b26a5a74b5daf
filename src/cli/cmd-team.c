/*
 * cmd-team.c -- `huddle team create|list|show|update|rm|state|shutdown`.
 * create, state and shutdown are the operation table's team.create,
 * team.state and team.shutdown (src/ops/ops-team.c, made commands by
 * cli-ops.c); what is here of them is how they are shown
 * (hd_cli_renders_team).
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/conversation.h>
#include <huddle/supervisor.h>
#include <huddle/team_remove.h>
#include <huddle/team_state.h>

#include "cli.h"

static void
print_agents(const hd_agents *al, const char *indent)
{
	hd_table *t = hd_table_new(5, "AGENT", "ROLE", "RUNTIME", "STATUS",
	    "LEADER");
	size_t i;

	for (i = 0; i < al->n; i++) {
		const hd_agent *a = &al->items[i];

		hd_table_row(t, a->id, a->role[0] ? a->role : "-", a->runtime,
		    a->status, a->is_leader ? "yes" : "");
	}
	hd_table_print(t, stdout, indent);
	hd_table_free(t);
}

static int
cmd_team_list(hd_cli *c)
{
	hd_teams l;
	hd_store *st;
	hd_table *t;
	json_t *arr;
	size_t i;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_team_list(&l, st, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(arr, hd_team_to_json(&l.items[i]));
		hd_cli_json(arr);
	} else if (l.n == 0)
		printf("no teams yet; create one with 'huddle team create' or "
		       "'huddle up FILE'\n");
	else {
		t = hd_table_new(5, "TEAM", "NAME", "AGENTS", "LEADER", "STATUS");
		for (i = 0; i < l.n; i++) {
			char n[24];

			snprintf(n, sizeof(n), "%lld",
			    (long long)l.items[i].agent_count);
			hd_table_row(t, l.items[i].id, l.items[i].name, n,
			    l.items[i].leader_agent_id, l.items[i].status);
		}
		hd_table_print(t, stdout, "");
		hd_table_free(t);
	}
	hd_teams_dispose(&l);
	return HD_EXIT_OK;
}

static int
cmd_team_show(hd_cli *c)
{
	hd_team *t = NULL;
	hd_agents al = {0};
	hd_store *st;
	json_t *o, *arr;
	char when[32];
	int64_t max = 0;
	size_t i;
	int rc = HD_EXIT_FAIL;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_team_get(&t, st, c->argv[0], &c->err) < 0 ||
	    hd_agent_list(&al, st, c->argv[0], &c->err) < 0 ||
	    hd_conversation_max_messages(&max, st, c->argv[0], &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json) {
		o = hd_team_to_json(t);
		json_object_set_new(o, "max_messages", json_integer(max));
		arr = json_array();
		for (i = 0; i < al.n; i++)
			json_array_append_new(arr, hd_agent_to_json(&al.items[i]));
		json_object_set_new(o, "agents", arr);
		hd_cli_json(o);
	} else {
		hd_cli_time(when, sizeof(when), t->created_at);
		printf("team %s: %s\n", t->id, t->name);
		printf("  status:       %s\n", t->status);
		printf("  leader:       %s\n",
		    t->leader_agent_id ? t->leader_agent_id : "(none)");
		printf("  description:  %s\n",
		    t->description[0] ? t->description : "(none)");
		printf("  created:      %s\n", when);
		printf("  max messages: %lld per conversation\n",
		    (long long)max);
		printf("  spawn depth:  at most %d\n", t->max_spawn_depth);
		printf("  subtasks:     at most %d per task, nested at most %d "
		       "deep\n",
		    t->max_children, t->max_task_depth);
		printf("  new roots:    at most %d per agent per %d s\n",
		    t->max_new_roots, t->new_roots_window_s);
		printf("  agents (%zu):\n", al.n);
		if (al.n > 0)
			print_agents(&al, "    ");
	}
	rc = HD_EXIT_OK;
done:
	hd_team_free(t);
	hd_agents_dispose(&al);
	return rc;
}

static int
cmd_team_update(hd_cli *c)
{
	hd_team_spec spec = {0};
	hd_autorun_spec ar;
	hd_team *t = NULL;
	hd_store *st;
	int64_t max = 0, depth = 0, children = 0, tdepth = 0, roots = 0;
	int64_t window = 0;
	int rc, autorun = 0;

	spec.id = c->argv[0];
	spec.name = hd_cli_opt_str(c, "name");
	spec.description = hd_cli_opt_str(c, "description");
	spec.icon = hd_cli_opt_str(c, "icon");
	spec.color = hd_cli_opt_str(c, "color");
	spec.leader = hd_cli_opt_str(c, "leader");
	if (hd_cli_flag(c, "no-leader")) {
		if (spec.leader != NULL)
			return hd_cli_usage(c,
			    "--leader and --no-leader cannot go together");
		spec.leader = "";
	}
	if ((rc = hd_cli_opt_int(c, "max-messages", 1,
		 HD_CONVERSATION_MAX_MESSAGES_LIMIT, &max)) != 0)
		return rc;
	if ((rc = hd_cli_opt_int(c, "max-spawn-depth", 1,
		 HD_TEAM_SPAWN_DEPTH_MAX, &depth)) != 0)
		return rc;
	spec.max_spawn_depth = (int)depth;
	if ((rc = hd_cli_opt_int(c, "max-children", 1,
		 HD_TEAM_MAX_CHILDREN_MAX, &children)) != 0 ||
	    (rc = hd_cli_opt_int(c, "max-task-depth", 1,
		 HD_TEAM_TASK_DEPTH_MAX, &tdepth)) != 0 ||
	    (rc = hd_cli_opt_int(c, "max-new-roots", 1, HD_TEAM_NEW_ROOTS_MAX,
		 &roots)) != 0 ||
	    (rc = hd_cli_opt_int(c, "new-roots-window", 1,
		 HD_TEAM_NEW_ROOTS_WINDOW_MAX, &window)) != 0)
		return rc;
	spec.max_children = (int)children;
	spec.max_task_depth = (int)tdepth;
	spec.max_new_roots = (int)roots;
	spec.new_roots_window_s = (int)window;
	if ((rc = hd_cli_autorun_opts(c, &ar, &autorun)) != 0)
		return rc;
	if (!spec.name && !spec.description && !spec.icon && !spec.color &&
	    !spec.leader && max == 0 && depth == 0 && children == 0 &&
	    tdepth == 0 && roots == 0 && window == 0 && !autorun)
		return hd_cli_usage(c, "nothing to update: pass --name, "
				       "--description, --icon, --color, "
				       "--leader, --max-messages, "
				       "--max-spawn-depth, --max-children, "
				       "--max-task-depth, --max-new-roots, "
				       "--new-roots-window or --autorun");
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (autorun && hd_autorun_set(NULL, st, spec.id, &ar, &c->err) < 0)
		return hd_cli_fail(c);
	if (max != 0 &&
	    hd_conversation_set_max_messages(st, spec.id, max, &c->err) < 0)
		return hd_cli_fail(c);
	if ((spec.name || spec.description || spec.icon || spec.color ||
		spec.leader || spec.max_spawn_depth || children || tdepth ||
		roots || window)
		? hd_team_update(&t, st, &spec, &c->err) < 0
		: hd_team_get(&t, st, spec.id, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_team_to_json(t));
	else
		printf("updated team %s\n", t->id);
	hd_team_free(t);
	return HD_EXIT_OK;
}

static int
cmd_team_rm(hd_cli *c)
{
	hd_store *st;
	int purge = hd_cli_flag(c, "purge");

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_team_remove(st, c->argv[0], purge, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:b}", "removed", c->argv[0],
		    "purged", purge));
	else
		printf("removed team %s%s\n", c->argv[0],
		    purge ? " and everything in it" : "");
	return HD_EXIT_OK;
}

/* team state is the table's team.state (src/ops/ops-team.c): the block,
 * then what autorun holds; --json the snapshot with its text, autorun's
 * settings and each agent's supervisor state (no shutdown: the block
 * tells it). */
static int
render_state(hd_cli *c, const json_t *result, const json_t *args)
{
	const char *team = json_string_value(json_object_get(args, "team"));
	hd_store *st;
	json_t *o, *sv = NULL;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_supervisor_state(&sv, st, team, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		o = json_deep_copy(result);
		json_object_del(o, "shutdown");
		json_object_del(o, "text");
		json_object_set(o, "text", json_object_get(result, "text"));
		json_object_set(o, "autorun", json_object_get(sv, "autorun"));
		json_object_set(o, "supervisor", json_object_get(sv, "agents"));
		hd_cli_json(o);
	} else {
		fputs(json_string_value(json_object_get(result, "text")), stdout);
		hd_cli_autorun_print(sv);
	}
	json_decref(sv);
	return HD_EXIT_OK;
}

/* team shutdown is the table's team.shutdown: with --wait, a pending
 * request is waited out; an outcome other than pending or shutdown is
 * the command failing. */
/* The request's line (hd_cli_shutdown_describe reads its JSON). */
static void
describe(FILE *f, const hd_shutdown *s)
{
	json_t *j = hd_shutdown_to_json(s);

	hd_cli_shutdown_describe(f, j);
	json_decref(j);
}

static int
render_shutdown(hd_cli *c, const json_t *result, const json_t *args)
{
	const char *team = json_string_value(json_object_get(args, "team"));
	const json_t *made = json_object_get(result, "shutdown");
	hd_shutdown *s = NULL, *fin = NULL;
	hd_store *st;
	int rc = HD_EXIT_OK;

	/* the request just made, as a struct to describe: the team's latest */
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_shutdown_get(&s, st, team, &c->err) < 0)
		return hd_cli_fail(c);
	if (s == NULL)
		return hd_cli_fail(c);
	if (json_is_true(json_object_get(args, "wait")) &&
	    strcmp(s->outcome, "pending") == 0) {
		if (!c->json) {
			describe(stdout, s);
			fflush(stdout);
		}
		if (hd_team_shutdown_wait(&fin, st, team, s->request_id, 0,
			&c->err) < 0) {
			rc = hd_cli_fail(c);
			goto done;
		}
		hd_shutdown_free(s);
		s = fin;
		made = NULL;
	}
	if (c->json)
		hd_cli_json(made != NULL ? json_incref((json_t *)made)
					 : hd_shutdown_to_json(s));
	if (strcmp(s->outcome, "pending") == 0 ||
	    strcmp(s->outcome, "shutdown") == 0) {
		if (!c->json)
			describe(stdout, s);
	} else {
		/* --wait saw it fail: that is the command failing */
		fputs("huddle: ", stderr);
		describe(stderr, s);
		rc = HD_EXIT_FAIL;
	}
done:
	hd_shutdown_free(s);
	return rc;
}

/* team create is the table's team.create: --json the team itself. */
static int
render_created(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *t = json_object_get(result, "team");

	(void)args;
	if (c->json)
		hd_cli_json(json_incref((json_t *)t));
	else
		printf("created team %s (%s)\n",
		    json_string_value(json_object_get(t, "id")),
		    json_string_value(json_object_get(t, "name")));
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_team[] = {
    {"team.create", render_created},
    {"team.state", render_state},
    {"team.shutdown", render_shutdown},
    {NULL, NULL},
};

static const hd_cli_opt team_update_opts[] = {
	{"name", 0, "TEXT", "display name", 0},
	{"description", 0, "TEXT", "what the team is for", 0},
	{"icon", 0, "TEXT", "an icon", 0},
	{"color", 0, "TEXT", "a colour for the dashboard", 0},
	{"leader", 0, "AGENT", "make AGENT (a member) the leader", 0},
	{"no-leader", 0, NULL, "leave the team without a leader", 0},
	{"max-messages", 0, "N",
	    "a conversation stops routing mentions after N replies (1-1000; "
	    "default 15)",
	    0},
	{"max-spawn-depth", 0, "N",
	    "how deep a chain of spawns may go (1-100; default 5)", 0},
	{"max-children", 0, "N",
	    "at most N subtasks per task (1-1000; default 24)", 0},
	{"max-task-depth", 0, "N",
	    "subtasks nest at most N deep (1-20; default 2)", 0},
	{"max-new-roots", 0, "N",
	    "an agent creates at most N root tasks per window (1-10000; "
	    "default 30)",
	    0},
	{"new-roots-window", 0, "S",
	    "that window, in seconds (1-86400; default 300)", 0},
	{"autorun", 0, "on|off",
	    "'huddle serve' runs the team's agents when they have work", 0},
	{"turns-per-hour", 0, "N",
	    "autorun: at most N turns per agent per hour (default 30)", 0},
	{"park-after", 0, "N",
	    "autorun: park an agent after N turns in a row without progress "
	    "(default 3)",
	    0},
	{NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt team_rm_opts[] = {
	/* deliberately no short form: hard to hit by accident */
	{"purge", 0, NULL, "also delete the team's tasks, posts and messages", 0},
	{NULL, 0, NULL, NULL, 0},
};

static const hd_cli_cmd team_subs[] = {
	{"list", NULL, "List teams with their agent counts", 0, 0, NULL,
	    cmd_team_list, NULL, NULL},
	{"show", "TEAM", "Show a team and its agents", 1, 1, NULL,
	    cmd_team_show, NULL, NULL},
	{"update", "TEAM",
	    "Change a team's name, description, leader, loop guard, spawn "
	    "depth, board caps or autorun",
	    1, 1, team_update_opts, cmd_team_update, NULL, NULL},
	{"rm", "TEAM", "Remove a team and its agents", 1, 1, team_rm_opts,
	    cmd_team_rm, NULL,
	    "A team that still has tasks, posts or messages is refused unless "
	    "--purge is given.\nThe event log is kept."},
	{"pause", "TEAM", "Stop waking the team's agents (autorun)", 1, 1, NULL,
	    hd_cli_team_pause, NULL,
	    "Turns already running finish; nothing new starts until 'huddle "
	    "team resume'."},
	{"resume", "TEAM", "Wake the team's agents again after a pause", 1, 1,
	    NULL, hd_cli_team_resume, NULL, NULL},
	{NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_team = {
	.name = "team",
	.summary = "Create, list, show, update, remove and shut down teams",
	.subs = team_subs,
};
