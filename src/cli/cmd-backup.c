/*
 * cmd-backup.c -- `huddle backup FILE` and `huddle restore FILE`.
 *
 * backup copies the database with SQLite's online backup, so it runs while
 * the server and other CLI calls write. restore swaps a backup in for
 * HUDDLE_HOME/huddle.db (the old one stays as huddle.db.before-restore)
 * and refuses while a server runs for the home: the server's connections
 * would keep the old file open and never see the swap.
 */
#include <stdlib.h>

#include <huddle/util.h>

#include <http/http.h>
#include "cli.h"

static int
cmd_backup(hd_cli *c)
{
	hd_store *st;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_store_backup(st, c->argv[0], &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:s}", "database",
		    hd_store_path(st), "backup", c->argv[0]));
	else
		printf("backed up %s to %s\n", hd_store_path(st), c->argv[0]);
	return HD_EXIT_OK;
}

static int
cmd_restore(hd_cli *c)
{
	char *home;
	long pid;
	int rc = HD_EXIT_OK;

	if ((home = hd_home_resolve(c->home_opt, &c->err)) == NULL)
		return hd_cli_fail(c);
	if ((pid = hd_http_presence_alive(home)) != 0) {
		hd_err_set(&c->err, HD_EREFUSED,
		    "huddle serve (pid %ld) is running for %s; stop it before "
		    "restoring",
		    pid, home);
		rc = hd_cli_fail(c);
		goto done;
	}
	if (hd_store_restore(home, c->argv[0], &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json)
		hd_cli_json(json_pack(
		    "{s:s, s:s}", "home", home, "restored", c->argv[0]));
	else
		printf("restored %s into %s (the old database is "
		       "huddle.db.before-restore)\n",
		    c->argv[0], home);
done:
	free(home);
	return rc;
}

const hd_cli_cmd hd_cli_cmd_backup = {
    .name = "backup",
    .args = "FILE",
    .summary = "Copy the database to a new FILE (safe while huddle runs)",
    .min_args = 1,
    .max_args = 1,
    .fn = cmd_backup,
};

const hd_cli_cmd hd_cli_cmd_restore = {
    .name = "restore",
    .args = "FILE",
    .summary = "Replace the database with the backup FILE (server stopped)",
    .min_args = 1,
    .max_args = 1,
    .fn = cmd_restore,
    .details = "The old database is kept as huddle.db.before-restore.",
};
