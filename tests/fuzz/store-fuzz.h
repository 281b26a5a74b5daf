/*
 * store-fuzz.h -- a store for the fuzz targets that need one: a fresh
 * HUDDLE_HOME made once per process (under /dev/shm when it exists, so a
 * commit costs no disk sync; else TMPDIR), opened once and removed at
 * exit, with team dev (lead, coder) applied from a team file. Inputs
 * share it: a target keeps what each input writes small, or undoes it.
 * Header-only; one target includes it once.
 */
#ifndef HD_STORE_FUZZ_H
#define HD_STORE_FUZZ_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/team.h>

static char fuzz_home_dir[256];
static hd_store *fuzz_st;

static int
fuzz_rm_one(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void
fuzz_store_cleanup(void)
{
	hd_store_close(fuzz_st);
	fuzz_st = NULL;
	if (fuzz_home_dir[0] != '\0')
		nftw(fuzz_home_dir, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
fuzz_die(const char *what, const hd_err *err)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, err != NULL ? err->msg : "");
	abort();
}

/* The shared store, made on first use. */
static hd_store *
fuzz_store(void)
{
	static const char team[] =
	    "{\"team\": \"dev\", \"name\": \"Dev\", \"agents\": ["
	    "{\"id\": \"lead\", \"leader\": true}, {\"id\": \"coder\"}]}";
	const char *tmp = getenv("TMPDIR");
	hd_apply_report rep;
	hd_err err = HD_ERR_INIT;
	json_t *doc;

	if (fuzz_st != NULL)
		return fuzz_st;
	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	snprintf(fuzz_home_dir, sizeof(fuzz_home_dir), "%s/huddle-fuzz-XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(fuzz_home_dir) == NULL) {
		fuzz_home_dir[0] = '\0';
		fuzz_die("mkdtemp", NULL);
	}
	atexit(fuzz_store_cleanup);
	if (hd_store_open(&fuzz_st, fuzz_home_dir, &err) < 0)
		fuzz_die("store open", &err);
	memset(&rep, 0, sizeof(rep));
	if ((doc = json_loads(team, 0, NULL)) == NULL ||
	    hd_team_apply_json(&rep, fuzz_st, doc, "fuzz", NULL, &err) < 0)
		fuzz_die("team", &err);
	hd_apply_report_dispose(&rep);
	json_decref(doc);
	return fuzz_st;
}

#endif
