/*
 * cmd-up.c -- `huddle up FILE`: apply a team file idempotently.
 */
#include <huddle/team.h>

#include "cli.h"

static int
cmd_up(hd_cli *c)
{
	hd_apply_report rep;
	hd_store *st;
	json_t *agents, *a, *w;
	size_t i;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_team_apply_file(
		&rep, st, c->argv[0], hd_runtime_check_config, &c->err) < 0)
		return hd_cli_fail(c);
	json_array_foreach(json_object_get(rep.json, "warnings"), i, w)
		hd_cli_warn("%s", json_string_value(w));
	if (c->json) {
		hd_cli_json(json_incref(rep.json));
		hd_apply_report_dispose(&rep);
		return HD_EXIT_OK;
	}
	printf("team %s: %s\n", json_string_value(json_object_get(rep.json,
	    "team")), json_string_value(json_object_get(rep.json, "action")));
	agents = json_object_get(rep.json, "agents");
	json_array_foreach(agents, i, a)
		printf("  agent %s: %s%s\n",
		    json_string_value(json_object_get(a, "id")),
		    json_string_value(json_object_get(a, "action")),
		    json_is_true(json_object_get(a, "leader")) ? " (leader)" : "");
	if (!rep.changed)
		printf("nothing to change\n");
	hd_apply_report_dispose(&rep);
	return HD_EXIT_OK;
}

const hd_cli_cmd hd_cli_cmd_up = {
	.name = "up",
	.args = "FILE",
	.summary = "Apply a team file: create what is missing, update what "
		   "changed, never delete",
	.min_args = 1,
	.max_args = 1,
	.fn = cmd_up,
	.details = "FILE is JSON: {\"team\": \"dev\", \"name\": \"Dev team\", "
		   "\"agents\": [{\"id\": \"manager\", \"leader\": true,\n"
		   "\"role\": \"team lead\", \"runtime\": \"scripted\", "
		   "\"runtime_config\": {...}}, ...]}.\n"
		   "The whole file is applied in one transaction; a malformed "
		   "file changes nothing.",
};
