/*
 * cmd-agent.c -- `huddle agent add|list|show|rm|spawn|set-status`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int
cmd_agent_add(hd_cli *c)
{
	hd_agent_spec spec = {0};
	hd_agent *a = NULL;
	hd_store *st;
	json_t *cfg = NULL;
	json_error_t jerr;
	const char *cfgtext = hd_cli_opt_str(c, "config");
	int rc = HD_EXIT_FAIL;

	spec.team = c->argv[0];
	spec.id = c->argv[1];
	spec.name = hd_cli_opt_str(c, "name");
	spec.role = hd_cli_opt_str(c, "role");
	spec.runtime = hd_cli_opt_str(c, "runtime");
	spec.leader = hd_cli_flag(c, "leader");
	if (cfgtext != NULL) {
		if ((cfg = json_loads(cfgtext, JSON_REJECT_DUPLICATES,
			 &jerr)) == NULL)
			return hd_cli_usage(c, "--config is not valid JSON: %s "
					       "(column %d)",
			    jerr.text, jerr.column);
		spec.runtime_config = cfg;
	}
	if (hd_cli_store(c, &st) != 0)
		goto done;
	if (hd_agent_add(&a, st, &spec, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json)
		hd_cli_json(hd_agent_to_json(a));
	else
		printf("added agent %s to team %s (runtime %s%s)\n", a->id,
		    a->team_id, a->runtime, a->is_leader ? ", leader" : "");
	rc = HD_EXIT_OK;
done:
	json_decref(cfg);
	hd_agent_free(a);
	return rc;
}

static int
cmd_agent_list(hd_cli *c)
{
	hd_agents l;
	hd_store *st;
	hd_table *t;
	json_t *arr;
	size_t i;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_list(&l, st, c->argc > 0 ? c->argv[0] : NULL,
		&c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(arr, hd_agent_to_json(&l.items[i]));
		hd_cli_json(arr);
	} else if (l.n == 0)
		printf("no agents\n");
	else {
		t = hd_table_new(6, "AGENT", "TEAM", "ROLE", "RUNTIME", "STATUS",
		    "LEADER");
		for (i = 0; i < l.n; i++) {
			const hd_agent *a = &l.items[i];

			hd_table_row(t, a->id, a->team_id,
			    a->role[0] ? a->role : "-", a->runtime, a->status,
			    a->is_leader ? "yes" : "");
		}
		hd_table_print(t, stdout, "");
		hd_table_free(t);
	}
	hd_agents_dispose(&l);
	return HD_EXIT_OK;
}

static int
cmd_agent_show(hd_cli *c)
{
	hd_agent *a = NULL;
	hd_store *st;
	char *cfg, when[32];

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_get(&a, st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_agent_to_json(a));
	else {
		cfg = json_dumps(a->runtime_config,
		    JSON_COMPACT | JSON_SORT_KEYS);
		hd_cli_time(when, sizeof(when), a->created_at);
		printf("agent %s: %s\n", a->id, a->name);
		printf("  team:      %s%s\n", a->team_id ? a->team_id : "(none)",
		    a->is_leader ? " (leader)" : "");
		printf("  role:      %s\n", a->role[0] ? a->role : "(none)");
		printf("  runtime:   %s%s\n", a->runtime,
		    strcmp(a->runtime, "scripted") == 0
			? " (scripted: canned replies, not a model)"
			: "");
		printf("  config:    %s\n", cfg ? cfg : "{}");
		printf("  status:    %s\n", a->status);
		printf("  created:   %s\n", when);
		free(cfg);
	}
	hd_agent_free(a);
	return HD_EXIT_OK;
}

static int
cmd_agent_rm(hd_cli *c)
{
	hd_store *st;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_remove(st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s}", "removed", c->argv[0]));
	else
		printf("removed agent %s\n", c->argv[0]);
	return HD_EXIT_OK;
}

static int
cmd_agent_spawn(hd_cli *c)
{
	hd_spawn_spec spec = {0};
	hd_agent *a = NULL;
	hd_store *st;
	json_t *cfg = NULL;
	json_error_t jerr;
	const char *cfgtext = hd_cli_opt_str(c, "config");
	int rc = HD_EXIT_FAIL;

	spec.team = c->argv[0];
	spec.id = c->argv[1];
	spec.name = hd_cli_opt_str(c, "name");
	spec.role = hd_cli_opt_str(c, "role");
	spec.runtime = hd_cli_opt_str(c, "runtime");
	spec.task = hd_cli_opt_str(c, "task");
	spec.caller = hd_cli_opt_str(c, "as");
	if (cfgtext != NULL) {
		if ((cfg = json_loads(cfgtext, JSON_REJECT_DUPLICATES,
			 &jerr)) == NULL)
			return hd_cli_usage(c, "--config is not valid JSON: %s "
					       "(column %d)",
			    jerr.text, jerr.column);
		spec.runtime_config = cfg;
	}
	if (hd_cli_store(c, &st) != 0)
		goto done;
	if (hd_team_spawn(&a, st, &spec, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json)
		hd_cli_json(hd_agent_to_json(a));
	else
		printf("spawned agent %s in team %s (runtime %s, spawned by %s, "
		       "session %s); its first message is waiting\n",
		    a->id, a->team_id, a->runtime,
		    a->spawned_by ? a->spawned_by : "nobody", a->session_key);
	rc = HD_EXIT_OK;
done:
	json_decref(cfg);
	hd_agent_free(a);
	return rc;
}

static int
cmd_agent_set_status(hd_cli *c)
{
	hd_agent *a = NULL;
	hd_store *st;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_set_status(st, c->argv[0], c->argv[1], &c->err) < 0 ||
	    hd_agent_get(&a, st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_agent_to_json(a));
	else
		printf("agent %s is %s\n", a->id, a->status);
	hd_agent_free(a);
	return HD_EXIT_OK;
}

static const hd_cli_opt agent_spawn_opts[] = {
	{"as", 0, "AGENT", "the member spawning it (default: the leader)", 0},
	{"task", 0, "TEXT",
	    "its first message (default: \"Join team TEAM as NAME\")", 0},
	{"name", 0, "TEXT", "display name (default: the id)", 0},
	{"role", 0, "TEXT", "free text, e.g. reviewer", 0},
	{"runtime", 0, "NAME",
	    "scripted (default), exec, claude-code, codex, hermes or openai", 0},
	{"config", 0, "JSON", "the runtime's configuration object", 0},
	{NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt agent_add_opts[] = {
	{"name", 0, "TEXT", "display name (default: the id)", 0},
	{"role", 0, "TEXT", "free text, e.g. reviewer", 0},
	{"runtime", 0, "NAME",
	    "scripted (default), exec, claude-code, codex, hermes or openai", 0},
	{"config", 0, "JSON", "the runtime's configuration object", 0},
	{"leader", 0, NULL, "make this agent the team's leader", 0},
	{NULL, 0, NULL, NULL, 0},
};

static const hd_cli_cmd agent_subs[] = {
	{"add", "TEAM AGENT", "Add an agent to a team", 2, 2, agent_add_opts,
	    cmd_agent_add, NULL,
	    "Example: huddle agent add dev coder --role coder --runtime exec "
	    "--config '{\"command\": [\"./agent.sh\"]}'"},
	{"list", "[TEAM]", "List agents, of one team or of all", 0, 1, NULL,
	    cmd_agent_list, NULL, NULL},
	{"show", "AGENT", "Show an agent", 1, 1, NULL, cmd_agent_show, NULL,
	    NULL},
	{"rm", "AGENT", "Remove an agent", 1, 1, NULL, cmd_agent_rm, NULL,
	    NULL},
	{"spawn", "TEAM NAME", "Spawn a teammate into an active team", 2, 2,
	    agent_spawn_opts, cmd_agent_spawn, NULL,
	    "The new agent gets session key agent:NAME:teammate:<uuid> and a "
	    "first message\nin its mailbox (--task, or \"Join team TEAM as "
	    "NAME\")."},
	{"set-status", "AGENT STATUS", "Set an agent's status", 2, 2, NULL,
	    cmd_agent_set_status, NULL,
	    "STATUS is idle, working, shutdown_requested, shutdown or error."},
	{NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_agent = {
	.name = "agent",
	.summary = "Add, list, show, remove and spawn agents",
	.subs = agent_subs,
};
