/*
 * cmd-events.c -- `huddle events`: the event log, newest last.
 */
#include <stdlib.h>

#include <huddle/events.h>

#include "cli.h"

static int
cmd_events(hd_cli *c)
{
	hd_event_filter f = {0};
	hd_event_list l;
	hd_store *st;
	int64_t limit = 0, after = 0;
	json_t *arr;
	size_t i;
	int rc;

	f.kind = hd_cli_opt_str(c, "kind");
	if ((rc = hd_cli_team_arg(c, 0, &f.team)) ||
	    (rc = hd_cli_opt_int(c, "limit", 1, HD_EVENTS_LIMIT_MAX, &limit)) ||
	    (rc = hd_cli_opt_int(c, "after", 0, INT64_MAX, &after)))
		return rc;
	f.limit = (int)limit;
	f.after_seq = after;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (hd_events_list(&l, st, &f, &c->err) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(arr, hd_event_to_json(&l.items[i]));
		hd_cli_json(arr);
	} else {
		for (i = 0; i < l.n; i++) {
			const hd_event *e = &l.items[i];
			char when[32], *data;

			hd_cli_time(when, sizeof(when), e->ts);
			data = json_dumps(e->data, JSON_COMPACT | JSON_PRESERVE_ORDER);
			printf("%6lld  %s  %-16s %s%s%s", (long long)e->seq, when,
			    e->kind, e->team_id ? "team=" : "",
			    e->team_id ? e->team_id : "", e->team_id ? " " : "");
			if (e->task_id)
				printf("task=%lld ", (long long)e->task_id);
			if (e->agent_id)
				printf("agent=%s ", e->agent_id);
			printf("%s\n", data && json_object_size(e->data) ? data : "");
			free(data);
		}
	}
	hd_event_list_dispose(&l);
	return HD_EXIT_OK;
}

static const hd_cli_opt events_opts[] = {
	{"team", 't', "TEAM", "the team (older spelling of the first argument)",
	    0},
	{"kind", 'k', "KIND", "only events of this kind (task_claimed, ...)", 0},
	{"limit", 'n', "N", "at most N events (default 100)", 0},
	{"after", 0, "SEQ", "events after seq SEQ, oldest first", 0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_events = {
	.name = "events",
	.args = "[TEAM]",
	.summary = "Show the event log (of every team, or only TEAM's)",
	.max_args = 1,
	.opts = events_opts,
	.fn = cmd_events,
	.details = "Without --after, shows the newest N events, oldest first.",
};
