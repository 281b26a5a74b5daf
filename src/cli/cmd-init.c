/*
 * cmd-init.c -- `huddle init`: create HUDDLE_HOME and its database.
 */
#include "cli.h"

static int
cmd_init(hd_cli *c)
{
	hd_store *st;
	int v;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if ((v = hd_store_file_version(st, &c->err)) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:s, s:i}", "home",
		    hd_store_home(st), "database", hd_store_path(st),
		    "schema_version", v));
	else
		printf("huddle home is %s (database %s, schema v%d)\n",
		    hd_store_home(st), hd_store_path(st), v);
	return HD_EXIT_OK;
}

const hd_cli_cmd hd_cli_cmd_init = {
	.name = "init",
	.summary = "Create HUDDLE_HOME and its database (safe to repeat)",
	.max_args = 0,
	.fn = cmd_init,
};
