/*
 * cmd-inbox.c -- `huddle inbox TEAM --as AGENT`: take (or peek at) an
 * agent's waiting messages, oldest first. The older `huddle inbox AGENT`
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

static void
print_message(const hd_message *m)
{
	char when[32];

	hd_cli_time(when, sizeof(when), m->created_at);
	printf("#%lld  %s  from %s  [%s", (long long)m->id, when, m->from_agent,
	    m->type);
	if (m->request_id != NULL)
		printf(" request=%s", m->request_id);
	if (m->approve >= 0)
		printf(" approve=%s", m->approve ? "true" : "false");
	if (m->reason != NULL && m->reason[0] != '\0')
		printf(" reason=\"%s\"", m->reason);
	printf("]\n");
	print_body(m->content);
}

static int
cmd_inbox(hd_cli *c)
{
	hd_messages l = {0};
	hd_store *st;
	int64_t limit = 0;
	int peek = hd_cli_flag(c, "peek"), render = hd_cli_flag(c, "render");
	char *text = NULL;
	const char *agent;
	json_t *arr, *o;
	size_t i;
	int rc;

	if ((rc = hd_cli_opt_int(c, "limit", 1, HD_MAILBOX_READ_MAX, &limit)) ||
	    (rc = hd_cli_as(c, NULL, &agent)))
		return rc;
	if (agent == NULL)
		agent = c->argv[0]; /* the older `inbox AGENT` */
	else if ((rc = hd_cli_agent_in(c, c->argv[0], agent)) != 0)
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	rc = peek ? hd_mailbox_peek(&l, st, agent, (int)limit, &c->err)
		  : hd_mailbox_read(&l, st, agent, (int)limit, &c->err);
	if (rc < 0)
		return hd_cli_fail(c);
	rc = HD_EXIT_OK;
	if (render && hd_mailbox_render(&text, &l, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++)
			json_array_append_new(arr,
			    hd_message_to_json(&l.items[i]));
		if (render) {
			o = json_object();
			json_object_set_new(o, "messages", arr);
			json_object_set_new(o, "rendered", json_string(text));
			hd_cli_json(o);
		} else
			hd_cli_json(arr);
	} else if (render) {
		if (l.n > 0)
			printf("%s\n", text);
	} else if (l.n == 0)
		printf("no %s messages for %s\n", peek ? "waiting" : "new",
		    agent);
	else
		for (i = 0; i < l.n; i++)
			print_message(&l.items[i]);
done:
	free(text);
	hd_messages_dispose(&l);
	return rc;
}

static const hd_cli_opt inbox_opts[] = {
	{"as", 0, "AGENT", "the agent whose mailbox it is (required with TEAM)",
	    0},
	{"peek", 0, NULL, "show without marking anything delivered", 0},
	{"render", 0, NULL,
	    "print <teammate-message> blocks, as a runtime sees them", 0},
	{"limit", 'n', "N", "at most N messages (default: all)", 0},
	{NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_inbox = {
	.name = "inbox",
	.args = "TEAM",
	.summary = "Read an agent's waiting messages, oldest first",
	.min_args = 1,
	.max_args = 1,
	.opts = inbox_opts,
	.fn = cmd_inbox,
	.details = "Reading delivers: each message is returned by exactly one "
		   "read. --peek does not deliver.\nThe older spelling "
		   "`huddle inbox AGENT` (no --as) still works.\n"
		   "Example: huddle inbox dev --as coder --peek",
};
