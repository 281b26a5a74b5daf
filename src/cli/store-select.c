/*
 * store-select.c -- which store a command uses: `--store URL` (a global
 * option of every command) and HUDDLE_STORE.
 *
 * The store layer picks the backend from HUDDLE_STORE at every
 * hd_store_open (a postgres:// or postgresql:// URL: PostgreSQL; unset or
 * empty: SQLite under HUDDLE_HOME), and every thread opens its own
 * connection, so the choice is made once here, in the environment, for the
 * whole process.
 *  (1) hd_cli_store_select runs before a command's function and before any
 *      store opens or thread starts (main.c's run_leaf): --store (the last
 *      one given, before or after the command) is set as HUDDLE_STORE
 *      (setenv), `--store sqlite` unsets it; without --store, HUDDLE_STORE
 *      from the environment gets the same check. So every connection the
 *      process opens, on any thread, uses the one store named.
 *  (2) Accepted: a postgres:// or postgresql:// URL (libpq's URI form)
 *      with no space or control character, or the word sqlite (the
 *      embedded default). Anything else -- another scheme, an empty
 *      --store, a bare word -- is a usage error naming the value and
 *      where it came from (--store or HUDDLE_STORE). An empty HUDDLE_STORE
 *      is unset, as the store layer reads it.
 *  (3) A URL is never printed with its password: hd_cli_store_describe
 *      shows it through the store's hd_store_mask_url.
 * Callers: main.c (select), cmd-serve.c and cmd-doctor.c (describe, and
 * hd_cli_store_pg to leave out SQLite's own file checks), complete.c
 * (hd_cli_store_url_ok, for --store on a line being completed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/store.h>
#include <huddle/util.h>

#include "cli.h"

#define STORE_ENV "HUDDLE_STORE"

static int
pg_scheme(const char *v)
{
	return strncmp(v, "postgres://", 11) == 0 ||
	    strncmp(v, "postgresql://", 13) == 0;
}

int
hd_cli_store_url_ok(const char *v)
{
	const unsigned char *p;

	if (v == NULL)
		return 0;
	if (strcmp(v, "sqlite") == 0)
		return 1;
	if (!pg_scheme(v))
		return 0;
	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if (*p <= ' ' || *p == 0x7f)
			return 0;
	return 1;
}

/* Set or unset HUDDLE_STORE for the value v (already checked). */
static int
apply(hd_cli *c, const char *v)
{
	int rc = strcmp(v, "sqlite") == 0 ? unsetenv(STORE_ENV)
					  : setenv(STORE_ENV, v, 1);

	if (rc != 0) {
		hd_err_set(&c->err, HD_ENOMEM, "cannot set " STORE_ENV);
		return hd_cli_fail(c);
	}
	return 0;
}

int
hd_cli_store_select(hd_cli *c)
{
	const char *env = getenv(STORE_ENV);
	const char *v = c->store_opt;
	const char *from = "--store";

	if (v == NULL) {
		if (env == NULL)
			return 0;
		if (env[0] == '\0')
			return apply(c, "sqlite");
		v = env;
		from = STORE_ENV;
	}
	if (!hd_cli_store_url_ok(v))
		return hd_cli_usage(c,
		    "%s must be a postgres:// or postgresql:// URL (PostgreSQL) "
		    "or sqlite (the embedded default), not \"%.200s\"",
		    from, v);
	return apply(c, v);
}

int
hd_cli_store_pg(void)
{
	const char *env = getenv(STORE_ENV);

	return env != NULL && pg_scheme(env);
}

int
hd_cli_store_describe(hd_cli *c, char *out, size_t len)
{
	char *home;

	if (hd_cli_store_pg()) {
		char *masked = hd_store_mask_url(getenv(STORE_ENV));

		if (masked == NULL) {
			hd_err_set(&c->err, HD_ENOMEM, "out of memory");
			return hd_cli_fail(c);
		}
		snprintf(out, len, "%s", masked);
		free(masked);
		return 0;
	}
	if ((home = hd_home_resolve(c->home_opt, &c->err)) == NULL)
		return hd_cli_fail(c);
	snprintf(out, len, "sqlite %s/huddle.db", home);
	free(home);
	return 0;
}
