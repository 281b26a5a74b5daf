/*
 * cmd-inbox.c -- how `huddle inbox TEAM --as AGENT` shows an agent's
 * waiting messages, oldest first: the command is the operation table's
 * mail.inbox (src/ops/ops-mail.c, made a command by cli-ops.c), which
 * takes (or with --peek peeks at) them; the older `huddle inbox AGENT`
 * (no --as: the one argument is the agent) still works.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The content, each line indented. */
static void
print_body(const char *s)
{
	const char *nl;

	for (;;) {
		nl = strchr(s, '\n');
		printf("    %.*s\n", nl ? (int)(nl - s) : (int)strlen(s), s);
		if (nl == NULL)
			break;
		s = nl + 1;
	}
}

static const char *
str(const json_t *m, const char *key)
{
	return json_string_value(json_object_get(m, key));
}

static void
print_message(const json_t *m)
{
	const json_t *approve = json_object_get(m, "approve");
	char when[32];

	hd_cli_time(when, sizeof(when),
	    json_integer_value(json_object_get(m, "created_at")));
	printf("#%lld  %s  from %s  [%s",
	    (long long)json_integer_value(json_object_get(m, "id")), when,
	    str(m, "from_agent"), str(m, "type"));
	if (str(m, "request_id") != NULL)
		printf(" request=%s", str(m, "request_id"));
	if (json_is_boolean(approve))
		printf(" approve=%s", json_is_true(approve) ? "true" : "false");
	if (str(m, "reason") != NULL && str(m, "reason")[0] != '\0')
		printf(" reason=\"%s\"", str(m, "reason"));
	printf("]\n");
	print_body(str(m, "content"));
}

static int
render_inbox(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *msgs = json_object_get(result, "messages"), *m;
	int render = json_is_true(json_object_get(args, "render"));
	int peek = json_is_true(json_object_get(args, "peek"));
	size_t i;

	if (c->json) {
		if (render)
			hd_cli_json(json_pack("{s:O, s:O}", "messages", msgs,
			    "rendered", json_object_get(result, "rendered")));
		else
			hd_cli_json(json_incref((json_t *)msgs));
	} else if (render) {
		if (json_array_size(msgs) > 0)
			printf("%s\n", str(result, "rendered"));
	} else if (json_array_size(msgs) == 0)
		printf("no %s messages for %s\n", peek ? "waiting" : "new",
		    str(result, "agent"));
	else
		json_array_foreach (msgs, i, m)
			print_message(m);
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_mail[] = {
    {"mail.inbox", render_inbox},
    {NULL, NULL},
};
