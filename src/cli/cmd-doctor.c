/*
 * cmd-doctor.c -- `huddle doctor [TEAM]`: can each agent's turn run here?
 * For every agent (of one team, or of all), its runtime, the binary and
 * its version (or, for a native agent, which has none, the endpoint it
 * calls; for an openclaw agent the Gateway it connects to and its
 * session), the credentials it needs (names only; a keyless native agent
 * needs none), its home, and how its last turn ended; exit 1 when
 * anything would fail. First it names the store (store-select.c: `store:
 * sqlite HOME/huddle.db` or the PostgreSQL URL with its password masked;
 * "store" under --json), then a SQLite database gets PRAGMA
 * integrity_check (O(size), fine for a command run by hand; serve runs
 * the cheaper quick_check, see store.c (9)); PostgreSQL checks its own
 * pages.
 */
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>

#include "cli.h"

/* How the agent's last turn ended: its newest turn_completed (an
 * exchange's) or conversation_reply (a conversation's), or null. */
static json_t *
last_turn(hd_store *st, const char *agent)
{
	static const char *const kinds[] = {
	    "turn_completed", "conversation_reply"};
	hd_event_list l;
	hd_err err = HD_ERR_INIT;
	json_t *j = json_null();
	const hd_event *e;
	int failed;

	if (hd_events_last_of(&l, st, agent, kinds, 2, &err) < 0 || l.n == 0) {
		hd_event_list_dispose(&l);
		return j;
	}
	e = &l.items[0];
	failed = strcmp(e->kind, "turn_completed") == 0
		     ? json_is_true(json_object_get(e->data, "failed"))
		     : json_is_true(json_object_get(e->data, "error"));
	json_decref(j);
	j = json_pack("{s:s, s:s, s:I, s:s}", "status",
	    failed ? "error" : "success", "engine",
	    strcmp(e->kind, "turn_completed") == 0 ? "exchange"
						   : "conversation",
	    "at", (json_int_t)e->ts, "event", e->kind);
	if (failed && json_is_string(json_object_get(e->data, "reply")))
		json_object_set(j, "reply", json_object_get(e->data, "reply"));
	hd_event_list_dispose(&l);
	return j;
}

static void
print_report(const json_t *r)
{
	const json_t *bin = json_object_get(r, "binary");
	const json_t *ep = json_object_get(r, "endpoint");
	const json_t *gw = json_object_get(r, "gateway");
	const json_t *env = json_object_get(r, "env");
	const json_t *lt = json_object_get(r, "last_turn"), *v;
	size_t i;

	printf("%s %s (team %s): %s\n",
	    json_is_true(json_object_get(r, "ok")) ? "ok  " : "FAIL",
	    json_string_value(json_object_get(r, "agent")),
	    json_string_value(json_object_get(r, "team"))
		? json_string_value(json_object_get(r, "team"))
		: "none",
	    json_string_value(json_object_get(r, "label"))
		? json_string_value(json_object_get(r, "label"))
		: json_string_value(json_object_get(r, "runtime")));
	if (json_is_object(bin))
		printf("      binary  %s%s%s%s\n",
		    json_string_value(json_object_get(bin, "path"))
			? json_string_value(json_object_get(bin, "path"))
			: json_string_value(json_object_get(bin, "name")),
		    json_string_value(json_object_get(bin, "path"))
			? ""
			: " (missing)",
		    json_string_value(json_object_get(bin, "version")) ? " "
								       : "",
		    json_string_value(json_object_get(bin, "version"))
			? json_string_value(json_object_get(bin, "version"))
			: "");
	if (json_is_object(ep))
		printf("      endpoint %s %s (model %s)\n",
		    json_string_value(json_object_get(ep, "provider")),
		    json_string_value(json_object_get(ep, "base_url")),
		    json_string_value(json_object_get(ep, "model")));
	if (json_is_object(gw))
		printf("      gateway %s (session %s)\n",
		    json_string_value(json_object_get(gw, "url")),
		    json_string_value(json_object_get(gw, "session")));
	if (json_is_true(json_object_get(env, "keyless")))
		printf("      needs   %s\n",
		    json_string_value(json_object_get(env, "needs")));
	else if (json_is_object(env)) {
		printf("      needs   %s; set:",
		    json_string_value(json_object_get(env, "needs")));
		json_array_foreach (json_object_get(env, "present"), i, v)
			printf(" %s", json_string_value(v));
		if (json_array_size(json_object_get(env, "present")) == 0)
			printf(" none");
		printf("\n");
	}
	if (json_string_value(json_object_get(r, "home")))
		printf("      home    %s%s\n",
		    json_string_value(json_object_get(r, "home")),
		    json_is_true(json_object_get(r, "home_exists"))
			? ""
			: " (made at the first turn)");
	if (json_is_object(lt))
		printf("      last    %s (%s)\n",
		    json_string_value(json_object_get(lt, "status")),
		    json_string_value(json_object_get(lt, "engine")));
	else
		printf("      last    no turn yet\n");
	json_array_foreach (json_object_get(r, "problems"), i, v)
		printf("      problem %s\n", json_string_value(v));
}

static int
cmd_doctor(hd_cli *c)
{
	const char *team;
	int rc;
	hd_agents agents = {0};
	hd_store *st;
	json_t *all, *r;
	char store[1024];
	size_t i, bad = 0;

	if ((rc = hd_cli_team_arg(c, 0, &team)) != 0)
		return rc;
	if ((rc = hd_cli_store_describe(c, store, sizeof(store))) != 0)
		return rc;
	if (!c->json) {
		printf("store: %s\n", store);
		fflush(stdout);
	}
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	/* the full check, every index entry too: doctor is run by hand */
	if ((!hd_cli_store_pg() && hd_store_integrity(st, &c->err) < 0) ||
	    (team != NULL && hd_team_exists(st, team, &c->err) < 0) ||
	    hd_agent_list(&agents, st, team, &c->err) < 0)
		return hd_cli_fail(c);
	if ((all = json_array()) == NULL) {
		hd_agents_dispose(&agents);
		hd_err_set(&c->err, HD_ENOMEM, "out of memory");
		return hd_cli_fail(c);
	}
	for (i = 0; i < agents.n; i++) {
		if (hd_runtime_doctor(
			&r, &agents.items[i], hd_store_home(st), &c->err) < 0) {
			hd_agents_dispose(&agents);
			json_decref(all);
			return hd_cli_fail(c);
		}
		json_object_set_new(
		    r, "last_turn", last_turn(st, agents.items[i].id));
		bad += !json_is_true(json_object_get(r, "ok"));
		if (!c->json)
			print_report(r);
		json_array_append_new(all, r);
	}
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:o, s:b, s:I}", "store", store,
		    "agents", all, "ok", bad == 0, "problems", (json_int_t)bad));
	else {
		if (agents.n == 0)
			printf("no agents%s%s\n", team ? " in team " : "",
			    team ? team : "");
		else
			printf("%zu agent%s checked, %zu with problems\n",
			    agents.n, agents.n == 1 ? "" : "s", bad);
		json_decref(all);
	}
	hd_agents_dispose(&agents);
	return bad == 0 ? HD_EXIT_OK : HD_EXIT_FAIL;
}

static const hd_cli_opt doctor_opts[] = {
    {"team", 't', "TEAM", "the team (older spelling of the first argument)",
	0},
    {NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_doctor = {
    .name = "doctor",
    .summary = "Check that every agent's runtime could run a turn here",
    .max_args = 1,
    .args = "[TEAM]",
    .opts = doctor_opts,
    .fn = cmd_doctor,
    .details =
	"For each agent: its runtime, the binary and its version (claude, "
	"codex,\nhermes, an exec command) or the endpoint a native agent "
	"calls, the\ncredentials it needs (variable names only, never "
	"values), its home, and\nhow its last turn ended. Nothing is "
	"changed and no model is called. First\nthe store (--store) is "
	"named; a SQLite database gets PRAGMA integrity_check;\na damaged "
	"one is named and nothing else is checked. Exit 1 when any agent has a problem.",
};
