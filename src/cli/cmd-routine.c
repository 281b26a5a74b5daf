/*
 * cmd-routine.c -- `huddle routine add|list|show|enable|disable|rm|
 * fire-now`: the subcommands are the operation table's routine.* entries
 * (src/ops/ops-routine.c, made commands by cli-ops.c); this file holds
 * the group and how each answer reads. Under --json each prints the
 * operation's answer as REST gives it. Times are shown in this machine's
 * local time (hd_cli_time), the schedule in its own zone.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

static json_int_t
num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* "cron '0 9 * * 1-5' Europe/Berlin" or "every 15m" */
static void
schedule(char *out, size_t len, const json_t *r)
{
	if (json_is_string(json_object_get(r, "cron")))
		snprintf(out, len, "cron '%s' %s", str(r, "cron"), str(r, "tz"));
	else {
		long long s = (long long)num(r, "every_s");

		if (s % 86400 == 0)
			snprintf(out, len, "every %lldd", s / 86400);
		else if (s % 3600 == 0)
			snprintf(out, len, "every %lldh", s / 3600);
		else if (s % 60 == 0)
			snprintf(out, len, "every %lldm", s / 60);
		else
			snprintf(out, len, "every %llds", s);
	}
}

static void
print_routine(const json_t *r)
{
	char sched[300], next[32], last[32];

	schedule(sched, sizeof(sched), r);
	hd_cli_time(next, sizeof(next), num(r, "next_fire_at"));
	hd_cli_time(last, sizeof(last), num(r, "last_fire_at"));
	printf("routine %s (team %s)%s\n", str(r, "name"), str(r, "team"),
	    json_is_true(json_object_get(r, "enabled")) ? "" : " [disabled]");
	printf("  agent:     %s\n", str(r, "agent"));
	printf("  schedule:  %s\n", sched);
	printf("  task:      %s (priority %lld)\n", str(r, "title"),
	    (long long)num(r, "priority"));
	if (str(r, "description")[0] != '\0')
		printf("  details:   %s\n", str(r, "description"));
	printf("  next fire: %s\n", next);
	printf("  last fire: %s", last);
	if (num(r, "last_task_id") > 0)
		printf(" (task #%lld)", (long long)num(r, "last_task_id"));
	printf("\n  fires:     %lld\n", (long long)num(r, "fires"));
}

static int
render_one(hd_cli *c, const json_t *result, const json_t *args)
{
	(void)args;
	if (c->json)
		hd_cli_json(json_incref((json_t *)result));
	else
		print_routine(json_object_get(result, "routine"));
	return HD_EXIT_OK;
}

static int
render_list(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *rs = json_object_get(result, "routines"), *r;
	char sched[300], next[32];
	size_t i;

	if (c->json) {
		hd_cli_json(json_incref((json_t *)result));
		return HD_EXIT_OK;
	}
	if (json_array_size(rs) == 0) {
		printf("no routines in team %s\n", str(args, "team"));
		return HD_EXIT_OK;
	}
	printf("%-20s %-16s %-19s %-8s %s\n", "NAME", "AGENT", "NEXT FIRE",
	    "STATE", "SCHEDULE");
	json_array_foreach (rs, i, r) {
		schedule(sched, sizeof(sched), r);
		hd_cli_time(next, sizeof(next), num(r, "next_fire_at"));
		printf("%-20s %-16s %-19s %-8s %s\n", str(r, "name"),
		    str(r, "agent"), next,
		    json_is_true(json_object_get(r, "enabled")) ? "enabled"
								 : "disabled",
		    sched);
	}
	return HD_EXIT_OK;
}

static int
render_rm(hd_cli *c, const json_t *result, const json_t *args)
{
	if (c->json)
		hd_cli_json(json_incref((json_t *)result));
	else
		printf("removed routine %s from team %s\n", str(result, "routine"),
		    str(args, "team"));
	return HD_EXIT_OK;
}

static int
render_fire(hd_cli *c, const json_t *result, const json_t *args)
{
	(void)args;
	if (c->json)
		hd_cli_json(json_incref((json_t *)result));
	else
		printf("routine %s fired: task #%lld\n", str(result, "routine"),
		    (long long)num(result, "task"));
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_routine[] = {
    {"routine.add", render_one},
    {"routine.list", render_list},
    {"routine.show", render_one},
    {"routine.enable", render_one},
    {"routine.disable", render_one},
    {"routine.rm", render_rm},
    {"routine.fire", render_fire},
    {NULL, NULL},
};

/* Every subcommand is the table's (cli-ops.c appends them). */
static const hd_cli_cmd routine_subs[] = {{.name = NULL}};

const hd_cli_cmd hd_cli_cmd_routine = {
    .name = "routine",
    .summary = "Recurring tasks: a team's routines and their schedules",
    .subs = routine_subs,
};
