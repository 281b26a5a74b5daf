/*
 * cmd-send.c -- how `huddle send` and `huddle broadcast` show what they
 * did. Both commands are entries of the operation table (mail.send,
 * mail.broadcast in src/ops/ops-mail.c) made into commands by cli-ops.c:
 * `CMD TEAM TEXT --as AGENT`, with the older `CMD TEXT --team TEAM --from
 * AGENT` kept as an alias. A send prints the message (under --json, the
 * message as JSON); an answer to a team without a leader was recorded and
 * told nobody. A broadcast prints how many members got a copy.
 */
#include "cli.h"

static int
render_send(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *m = json_object_get(result, "message");
	const char *rid = json_string_value(json_object_get(result, "answered"));

	(void)args;
	if (json_is_null(m)) { /* a team without a leader: recorded */
		if (c->json)
			hd_cli_json(json_pack(
			    "{s:s?, s:n}", "answered", rid, "sent"));
		else
			printf("answered %s as %s (the team has no leader to "
			       "tell)\n",
			    rid, json_string_value(json_object_get(result, "from")));
	} else if (c->json)
		hd_cli_json(json_deep_copy(m));
	else
		printf("sent %s #%lld from %s to %s\n",
		    json_string_value(json_object_get(m, "type")),
		    (long long)json_integer_value(json_object_get(m, "id")),
		    json_string_value(json_object_get(m, "from_agent")),
		    json_string_value(json_object_get(m, "to_agent")));
	return HD_EXIT_OK;
}

static int
render_broadcast(hd_cli *c, const json_t *result, const json_t *args)
{
	json_int_t n = json_integer_value(json_object_get(result, "sent"));

	(void)args;
	if (c->json)
		hd_cli_json(json_deep_copy(result));
	else
		printf("broadcast from %s to %lld member%s of team %s\n",
		    json_string_value(json_object_get(result, "from")),
		    (long long)n, n == 1 ? "" : "s",
		    json_string_value(json_object_get(result, "team")));
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_send[] = {
    {"mail.send", render_send},
    {"mail.broadcast", render_broadcast},
    {NULL, NULL},
};
