/*
 * fuzz-team-file.c -- the team file (src/team/apply.c, SPEC 3) as `huddle
 * up FILE` reads it: the input is written to a file in a real home
 * (store-fuzz.h) and applied with the runtime layer's config check. For
 * every input:
 *  (1) a refusal names the file first ("<path>:<line>:<col>: ..." or
 *      "<path>: <field>: ...") and writes nothing: the event log's head
 *      does not move;
 *  (2) a file that applied applies again as unchanged, writing nothing
 *      (apply.c (3)); its report names the team;
 *  (3) nothing crashes or leaks (ASan and UBSan).
 * Each applied team is removed again (purged), so the home stays small.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/runtime.h>
#include <huddle/events.h>
#include <huddle/team_remove.h>
#include <huddle/util.h>

#include "fuzz.h"
#include "store-fuzz.h"

/* check, showing what it is about (the error, the team) */
static void
check_on(int ok, const char *what, const char *detail)
{
	if (!ok)
		fprintf(stderr, "(%s)\n", detail != NULL ? detail : "");
	check(ok, what);
}

static int64_t
head(hd_store *st)
{
	hd_err err = HD_ERR_INIT;
	int64_t h = 0;

	if (hd_events_head(&h, st, &err) < 0)
		fuzz_die("events head", &err);
	return h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_store *st = fuzz_store();
	hd_apply_report rep, again;
	hd_err err = HD_ERR_INIT;
	char path[300];
	const char *team;
	int64_t before, after;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/team.json", fuzz_home_dir);
	if ((f = fopen(path, "wb")) == NULL)
		fuzz_die("cannot write the team file", NULL);
	if (size > 0 && fwrite(data, 1, size, f) != size)
		fuzz_die("cannot write the team file", NULL);
	fclose(f);
	memset(&rep, 0, sizeof(rep));
	memset(&again, 0, sizeof(again));
	before = head(st);
	rc = hd_team_apply_file(&rep, st, path, hd_runtime_check_config, &err);
	if (rc < 0) { /* (1) */
		check_on(strncmp(err.msg, path, strlen(path)) == 0 &&
			     (err.msg[strlen(path)] == ':'),
		    "a refusal does not name the file first", err.msg);
		check_on(head(st) == before, "a refused file wrote", err.msg);
		hd_apply_report_dispose(&rep);
		return 0;
	}
	/* (2) */
	team = json_string_value(json_object_get(rep.json, "team"));
	check_on(
	    team != NULL && hd_slug_ok(team), "the report names no team", NULL);
	before = head(st);
	rc = hd_team_apply_file(
	    &again, st, path, hd_runtime_check_config, &err);
	check_on(
	    rc == 0, "a file that applied is refused the second time", err.msg);
	after = head(st);
	check_on(!again.changed && after == before,
	    "applying the same file again changed something", team);
	if (hd_team_remove(st, team, 1, &err) < 0)
		fuzz_die("remove the team", &err);
	hd_apply_report_dispose(&again);
	hd_apply_report_dispose(&rep);
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "{\"team\": \"qa\", \"agents\": [{\"id\": \"a\", \"leader\": true}]}",
    "{\"team\": \"qa\", \"name\": \"QA\", \"description\": \"d\", "
    "\"agents\": [{\"id\": \"a\", \"leader\": true, \"role\": \"lead\", "
    "\"runtime\": \"scripted\", \"runtime_config\": {\"rules\": [{\"when\": "
    "\"x\", \"reply\": \"y\"}], \"default\": \"z\"}}, {\"id\": \"b\", "
    "\"leader\": true}], \"max_messages\": 10, \"autorun\": {\"on\": true, "
    "\"turns_per_hour\": 5}, \"max_spawn_depth\": 2, \"max_children\": 3}",
    "{\"team\": \"qa\", \"agents\": [{\"id\": \"a\", \"runtime\": \"exec\", "
    "\"runtime_config\": {\"command\": [\"cat\"], \"prompt\": \"stdin\"}}]}",
    "{\"team\": \"qa\", \"agents\": [{\"id\": \"a\"}, {\"id\": \"a\"}]}",
    "{\"team\": \"Bad!\"}",
    "{\"team\": \"qa\", \"agents\": {}}",
    "{\"team\": \"qa\",",
    "[]",
    "\n", /* an empty file (a seed cannot be empty: see replay.c) */
    "{\"team\": \"qa\", \"autorun\": \"yes\"}",
    "{\"team\": \"qa\", \"max_messages\": 0}",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "{", "}", "[", "]", ",", ":", "\"", "\"team\": \"qa\"", "\"name\": ",
    "\"description\": ", "\"agents\": [", "{\"id\": \"a\"", "{\"id\": \"b\"",
    "\"leader\": true", "\"role\": \"r\"", "\"runtime\": \"scripted\"",
    "\"runtime\": \"exec\"", "\"runtime\": \"claude-code\"",
    "\"runtime\": \"codex\"", "\"runtime_config\": {", "\"model\": \"m\"",
    "\"max_messages\": ", "\"autorun\": ", "\"max_spawn_depth\": ",
    "\"max_children\": ", "\"max_task_depth\": ", "\"max_new_roots\": ",
    "\"new_roots_window_s\": ", "\"on\": true", "\"turns_per_hour\": ",
    "\"park_after\": ", "true", "false", "null", "0", "1", "-1", "1000",
    "1e9", "\"\"", "\"\\u0000\"", "\xff", NULL,
};
