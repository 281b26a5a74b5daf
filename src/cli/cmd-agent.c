/*
 * cmd-agent.c -- `huddle agent add|list|show|rm|set-status|
 *                 reset-session|run|wake|park|unpark` (the last three in
 *                 cmd-autorun.c), and the renderers of `agent spawn` and
 *                 `agent replace`, which are the operation table's
 *                 (cli-ops.c makes them subcommands after these).
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/activity.h>
#include <huddle/spawn.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "cli.h"

/* Parse --config (a JSON object, checked by the library) into *out; a
 * usage error naming the line, the column and what was expected when it
 * is not JSON. *out stays NULL without --config. */
static int
agent_config_opt(hd_cli *c, json_t **out)
{
	const char *text = hd_cli_opt_str(c, "config");
	json_error_t jerr;

	*out = NULL;
	if (text == NULL)
		return 0;
	if ((*out = json_loads(text, JSON_REJECT_DUPLICATES, &jerr)) == NULL)
		return hd_cli_usage(c, "--config: line %d, column %d: %s",
		    jerr.line, jerr.column, jerr.text);
	return 0;
}

static int
cmd_agent_add(hd_cli *c)
{
	hd_agent_spec spec = {0};
	hd_agent *a = NULL;
	hd_store *st;
	json_t *cfg = NULL;
	int rc = HD_EXIT_FAIL;

	spec.team = c->argv[0];
	spec.id = c->argv[1];
	spec.name = hd_cli_opt_str(c, "name");
	spec.role = hd_cli_opt_str(c, "role");
	spec.runtime = hd_cli_opt_str(c, "runtime");
	spec.leader = hd_cli_flag(c, "leader");
	if ((rc = agent_config_opt(c, &cfg)) != 0)
		return rc;
	rc = HD_EXIT_FAIL;
	spec.runtime_config = cfg;
	spec.check = hd_runtime_check_config;
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
	if (hd_agent_list(&l, st, c->argc > 0 ? c->argv[0] : NULL, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(
			    arr, hd_agent_to_json(&l.items[i]));
		hd_cli_json(arr);
	} else if (l.n == 0)
		printf("no agents\n");
	else {
		t = hd_table_new(
		    6, "AGENT", "TEAM", "ROLE", "RUNTIME", "STATUS", "LEADER");
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

/* "manager -> researcher -> scout": who spawned whom, down to a, as far
 * up as the spawners are still there. */
static void
print_spawn_chain(hd_store *st, const hd_agent *a)
{
	char *names[HD_TEAM_SPAWN_DEPTH_MAX + 2];
	hd_agent *up = NULL;
	hd_err err = HD_ERR_INIT;
	const int max = (int)(sizeof(names) / sizeof(names[0]));
	int n = 0, i;

	names[n++] = strdup(a->id);
	if (a->spawned_by != NULL)
		names[n++] = strdup(a->spawned_by);
	while (n > 1 && n < max && names[n - 1] != NULL &&
	    hd_agent_get(&up, st, names[n - 1], &err) == 0) {
		if (up->spawned_by == NULL) {
			hd_agent_free(up);
			break;
		}
		names[n++] = strdup(up->spawned_by);
		hd_agent_free(up);
	}
	for (i = n - 1; i >= 0; i--)
		printf("%s%s", names[i] != NULL ? names[i] : "?",
		    i > 0 ? " -> " : "");
	for (i = 0; i < n; i++)
		free(names[i]);
}

static int
cmd_agent_show(hd_cli *c)
{
	const hd_runtime_adapter *rt;
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
		cfg = json_dumps(
		    a->runtime_config, JSON_COMPACT | JSON_SORT_KEYS);
		hd_cli_time(when, sizeof(when), a->created_at);
		printf("agent %s: %s\n", a->id, a->name);
		printf("  team:      %s%s\n",
		    a->team_id ? a->team_id : "(none)",
		    a->is_leader ? " (leader)" : "");
		printf("  role:      %s\n", a->role[0] ? a->role : "(none)");
		printf("  runtime:   %s%s\n", a->runtime,
		    hd_runtime_find(&rt, a->runtime, NULL) == 0 &&
			    rt->is_scripted
			? " (scripted: canned replies, not a model)"
			: "");
		printf("  config:    %s\n", cfg ? cfg : "{}");
		printf("  status:    %s\n", a->status);
		if (a->spawned_by != NULL) {
			printf("  spawned:   by %s, depth %d (", a->spawned_by,
			    a->spawn_depth);
			print_spawn_chain(st, a);
			printf(")\n");
		}
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

/*
 * `agent spawn TEAM NAME` and `agent replace TEAM OLD NEW` are the
 * operation table's (team.spawn, team.replace: src/ops/ops-team.c); these
 * show what they answer, {agent, and for a replace replaced and
 * took_over (whole tasks)}. --json: a spawn the agent, a replace all of
 * it.
 */
static int
render_spawned(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *a = json_object_get(result, "agent");
	const char *by = json_string_value(json_object_get(a, "spawned_by"));

	(void)args;
	if (c->json) {
		hd_cli_json(json_incref((json_t *)a));
		return HD_EXIT_OK;
	}
	printf("spawned agent %s in team %s (runtime %s, spawned by %s at depth "
	       "%lld, session %s); its first message is waiting\n",
	    json_string_value(json_object_get(a, "id")),
	    json_string_value(json_object_get(a, "team_id")),
	    json_string_value(json_object_get(a, "runtime")),
	    by != NULL ? by : "nobody",
	    (long long)json_integer_value(json_object_get(a, "spawn_depth")),
	    json_string_value(json_object_get(a, "session_key")));
	return HD_EXIT_OK;
}

static int
render_replaced(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *a = json_object_get(result, "agent");
	const json_t *took = json_object_get(result, "took_over"), *t;
	const char *old = json_string_value(json_object_get(result, "replaced"));
	size_t i, n = json_array_size(took);

	(void)args;
	if (c->json) {
		hd_cli_json(json_incref((json_t *)result));
		return HD_EXIT_OK;
	}
	printf("%s replaces %s: ", json_string_value(json_object_get(a, "id")),
	    old);
	if (n == 0)
		printf("no unfinished tasks to take over\n");
	json_array_foreach (took, i, t)
		printf("%s#%lld \"%s\"%s", i ? ", " : "took over ",
		    (long long)json_integer_value(json_object_get(t, "id")),
		    json_string_value(json_object_get(t, "subject")),
		    i + 1 < n ? "" : "\n");
	printf("%s is shut down; %s (runtime %s, depth %lld) has its first "
	       "message waiting\n",
	    old, json_string_value(json_object_get(a, "id")),
	    json_string_value(json_object_get(a, "runtime")),
	    (long long)json_integer_value(json_object_get(a, "spawn_depth")));
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_agent[] = {
    {"team.spawn", render_spawned},
    {"team.replace", render_replaced},
    {NULL, NULL},
};

/* Ctrl-C aborts the turn (and kills the agent's process group) instead of
 * leaving it running behind us. */
static atomic_int run_abort;

static void
on_interrupt(int sig)
{
	(void)sig;
	atomic_store(&run_abort, 1);
}

struct run_view {
	int stream;  /* print deltas as they arrive */
	int ends_nl; /* the last byte printed was a newline */
	size_t printed;
};

static void
run_sink(const hd_runtime_event *ev, void *payload)
{
	struct run_view *v = payload;

	if (ev->kind != HD_RT_TEXT_DELTA || !v->stream || ev->len == 0)
		return;
	if (fwrite(ev->text, 1, ev->len, stdout) != ev->len ||
	    fflush(stdout) != 0) {
		v->stream = 0; /* the reader went away: stop the turn */
		atomic_store(&run_abort, 1);
		return;
	}
	v->printed += ev->len;
	v->ends_nl = ev->text[ev->len - 1] == '\n';
}

static int
cmd_agent_run(hd_cli *c)
{
	const hd_runtime_adapter *rt;
	hd_runtime_turn turn;
	hd_runtime_result res;
	struct run_view view = {0, 1, 0};
	struct sigaction sa, old_int, old_term;
	hd_agent *a = NULL;
	hd_store *st;
	char *home = NULL, *prompt = NULL;
	int64_t timeout_s = 0;
	int rc = HD_EXIT_FAIL, trc;

	if ((rc = hd_cli_opt_int(c, "timeout", 1, 86400, &timeout_s)) != 0)
		return rc;
	rc = HD_EXIT_FAIL;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_agent_get(&a, st, c->argv[0], &c->err) < 0 ||
	    hd_runtime_find(&rt, a->runtime, &c->err) < 0 ||
	    (home = hd_home_resolve(c->home_opt, &c->err)) == NULL) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (strcmp(c->argv[1], "-") == 0) {
		if (hd_read_file(
			&prompt, NULL, "/dev/stdin", 16 << 20, &c->err) < 0) {
			rc = hd_cli_fail(c);
			goto done;
		}
	} else if ((prompt = strdup(c->argv[1])) == NULL) {
		hd_err_set(&c->err, HD_ENOMEM, "out of memory");
		rc = hd_cli_fail(c);
		goto done;
	}
	if (rt->is_scripted)
		fprintf(stderr,
		    "note: %s runs the %s runtime: canned replies, "
		    "not a model\n",
		    a->id, rt->label);
	memset(&turn, 0, sizeof(turn));
	turn.agent = a;
	turn.team = a->team_id;
	turn.prompt = prompt;
	turn.huddle_home = home;
	turn.timeout_ms = timeout_s * 1000;
	turn.abort = &run_abort;
	view.stream = !c->json;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt; /* no SA_RESTART: wake the poll */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout aborts; see run_sink */
	trc = hd_runtime_run(&res, &turn, run_sink, &view, &c->err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);

	if (c->json) {
		json_t *j = hd_runtime_result_to_json(&res);

		json_object_set_new(j, "agent", json_string(a->id));
		json_object_set_new(j, "runtime", json_string(rt->name));
		json_object_set_new(
		    j, "scripted", json_boolean(rt->is_scripted));
		hd_cli_json(j);
	} else {
		if (view.printed > 0 && !view.ends_nl && isatty(1))
			fputc('\n', stdout);
		fflush(stdout);
		fprintf(stderr,
		    "[%s: %s in %.2f s, $%.6f %s (%lld in / %lld out "
		    "tokens)]\n",
		    rt->label, hd_runtime_done_name(res.reason),
		    (double)res.duration_ms / 1000.0, res.cost.usd,
		    res.cost.estimated ? "estimated" : "reported",
		    (long long)res.cost.input_tokens,
		    (long long)res.cost.output_tokens);
	}
	if (trc < 0)
		rc = hd_cli_fail(c);
	else if (res.reason == HD_DONE_ABORTED) {
		hd_err_set(&c->err, HD_ERR, "the turn was aborted");
		rc = hd_cli_fail(c);
	} else
		rc = HD_EXIT_OK;
	hd_runtime_result_dispose(&res);
done:
	free(prompt);
	free(home);
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
	if (hd_activity_set_status(st, c->argv[0], c->argv[1], &c->err) < 0 ||
	    hd_agent_get(&a, st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(hd_agent_to_json(a));
	else
		printf("agent %s is %s\n", a->id, a->status);
	hd_agent_free(a);
	return HD_EXIT_OK;
}

static int
cmd_agent_reset_session(hd_cli *c)
{
	hd_store *st;
	int had = 0;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_turn_state_reset_session(&had, st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(
		    json_pack("{s:s, s:b}", "agent", c->argv[0], "reset", had));
	else if (had)
		printf("agent %s starts a fresh native session on its next "
		       "turn\n",
		    c->argv[0]);
	else
		printf("agent %s has no native session to reset\n", c->argv[0]);
	return HD_EXIT_OK;
}

static const hd_cli_opt agent_run_opts[] = {
    {"timeout", 0, "S",
	"stop the turn after S seconds (default: the "
	"runtime's own limit)",
	0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt agent_wake_opts[] = {
    {"note", 0, "TEXT", "why, shown to the agent in its turn", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt agent_park_opts[] = {
    {"reason", 0, "TEXT", "why (default: \"parked by hand\")", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt agent_add_opts[] = {
    {"name", 0, "TEXT", "display name (default: the id)", 0},
    {"role", 0, "TEXT", "free text, e.g. reviewer", 0},
    {"runtime", 0, "NAME",
	"scripted (default), exec, claude-code, codex, native, hermes or openclaw", 0},
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
    {"show", "AGENT", "Show an agent", 1, 1, NULL, cmd_agent_show, NULL, NULL},
    {"rm", "AGENT", "Remove an agent", 1, 1, NULL, cmd_agent_rm, NULL, NULL},
    {"set-status", "AGENT STATUS", "Set an agent's status", 2, 2, NULL,
	cmd_agent_set_status, NULL,
	"STATUS is idle, working, shutdown_requested, shutdown or error."},
    {"reset-session", "AGENT", "Start the agent's native session afresh", 1, 1,
	NULL, cmd_agent_reset_session, NULL,
	"An agent resumes one native session (Claude Code's session, "
	"Codex's thread)\nacross every turn it takes, in conversations and "
	"exchanges alike. This\nforgets it: the next turn starts a new one. "
	"The lineage stays in the\nsessions table."},
    {"wake", "AGENT", "Queue one turn of the agent for the server to run", 1,
	1, agent_wake_opts, hd_cli_agent_wake, NULL,
	"The running 'huddle serve' takes it as it takes any wake: one turn "
	"at a time,\nwith the agent's mail and tasks in its prompt. A wake "
	"by hand runs even when\nthe team's autorun is off, and unparks the "
	"agent; a paused team waits."},
    {"park", "AGENT", "Stop waking the agent until it is unparked", 1, 1,
	agent_park_opts, hd_cli_agent_park, NULL,
	"A parked agent is woken again only by a message meant for it alone, "
	"a task\nassigned to it, a wake by hand, or 'huddle agent unpark'."},
    {"unpark", "AGENT", "Let the supervisor wake the agent again", 1, 1, NULL,
	hd_cli_agent_unpark, NULL, NULL},
    {"run", "AGENT PROMPT", "Run one turn of an agent's runtime by hand", 2, 2,
	agent_run_opts, cmd_agent_run, NULL,
	"The reply streams to stdout as it arrives; a summary line goes to "
	"stderr.\nPROMPT \"-\" reads the prompt from stdin. Nothing is "
	"posted to the team:\nthis only tries the runtime. Ctrl-C stops the "
	"turn."},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_agent = {
    .name = "agent",
    .summary = "Add, list, show, remove, spawn, replace and try agents",
    .subs = agent_subs,
};
