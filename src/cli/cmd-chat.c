/*
 * cmd-chat.c -- `huddle chat post|read|tail`: the team room from the
 * command line (SPEC 5, 14). `chat post` and `chat read` are the
 * operation table's chat.post and chat.read (src/ops/ops-chat.c, made
 * commands by cli-ops.c); what is here of them is how they are shown
 * (hd_cli_renders_chat).
 *
 * Human output is one post per line, `#<seq> <time> <author> [<kind>]:
 * <body>`, continuation lines of a multi-line body indented under it, and
 * control characters other than tab shown as spaces so a post cannot drive
 * the terminal. --wrapped prints the exact envelope a runtime receives;
 * --json the REST shapes. `tail -f` flushes after every post so a reader
 * at the other end of a pipe sees it at once, and ends cleanly on SIGINT
 * or SIGTERM.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/envelope.h>

#include "cli.h"

#define TAIL_LINES_DEFAULT 10
#define TAIL_WAIT_MS 1000 /* how often -f looks at its stop flag */

static volatile sig_atomic_t chat_stop;

static void
chat_on_signal(int sig)
{
	(void)sig;
	chat_stop = 1;
}

/* Body text for people: tab kept, other control characters as spaces. */
static void
print_clean(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		putchar((ch < 0x20 && ch != '\t') || ch == 0x7f ? ' ' : ch);
	}
}

/* A post as hd_post_to_json has it, for people. */
static void
print_post(const json_t *p)
{
	const char *line = json_string_value(json_object_get(p, "body")), *nl;
	char when[32];

	hd_cli_time(when, sizeof(when),
	    json_integer_value(json_object_get(p, "createdAt")));
	printf("#%lld %s %s [%s]: ",
	    (long long)json_integer_value(json_object_get(p, "seq")), when,
	    json_string_value(json_object_get(p, "authorAgentId")),
	    json_string_value(json_object_get(p, "kind")));
	for (;;) {
		nl = strchr(line, '\n');
		print_clean(
		    line, nl != NULL ? (size_t)(nl - line) : strlen(line));
		putchar('\n');
		if (nl == NULL)
			break;
		line = nl + 1;
		fputs("    ", stdout);
	}
}

/* chat post is the table's chat.post (src/ops/ops-chat.c): its --json
 * is the post, its text one line. */
static int
render_posted(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *p = json_object_get(result, "post");

	(void)args;
	if (c->json)
		hd_cli_json(json_incref((json_t *)p));
	else
		printf("posted #%lld to %s as %s\n",
		    (long long)json_integer_value(json_object_get(p, "seq")),
		    json_string_value(json_object_get(p, "roomId")),
		    json_string_value(json_object_get(p, "authorAgentId")));
	return HD_EXIT_OK;
}

/* chat read is the table's chat.read: --json is REST's shape (with each
 * post's envelope under --wrapped), --wrapped prints the envelopes, else
 * one post a line. */
static int
render_read(hd_cli *c, const json_t *result, const json_t *args)
{
	const json_t *posts = json_object_get(result, "posts"), *p;
	size_t i;

	if (c->json)
		hd_cli_json(json_deep_copy(result));
	else if (json_is_true(json_object_get(args, "wrapped")))
		json_array_foreach (posts, i, p)
			printf("%s\n", json_string_value(
					   json_object_get(p, "wrapped")));
	else if (json_array_size(posts) == 0)
		printf("no posts after #%lld\n",
		    (long long)json_integer_value(
			json_object_get(args, "since")));
	else
		json_array_foreach (posts, i, p)
			print_post(p);
	return HD_EXIT_OK;
}

const hd_cli_render hd_cli_renders_chat[] = {
    {"chat.post", render_posted},
    {"chat.read", render_read},
    {NULL, NULL},
};

static void
tail_print(hd_cli *c, const hd_posts *l)
{
	char *s;
	size_t i;

	for (i = 0; i < l->n; i++) {
		json_t *o = hd_post_to_json(&l->items[i]);

		if (c->json) { /* one compact object per line, for pipes */
			s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
			if (s != NULL)
				printf("%s\n", s);
			free(s);
		} else
			print_post(o);
		json_decref(o);
	}
	fflush(stdout);
}

static int
cmd_chat_tail(hd_cli *c)
{
	const char *team = c->argv[0];
	int follow = hd_cli_flag(c, "follow");
	int64_t since = -1, lines = TAIL_LINES_DEFAULT, head;
	struct sigaction sa;
	hd_posts l;
	hd_store *st;
	int rc;

	if ((rc = hd_cli_opt_int(c, "since", 0, INT64_MAX, &since)) ||
	    (rc = hd_cli_opt_int(c, "lines", 0, 1000000, &lines)))
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (since < 0) { /* the last `lines` posts: seqs have no gaps */
		if (hd_room_head(&head, st, team, &c->err) < 0)
			return hd_cli_fail(c);
		since = head > lines ? head - lines : 0;
	}
	/* what is there now, in pages */
	for (;;) {
		if (hd_room_read(&l, st, team, since, HD_ROOM_READ_MAX, NULL,
			&c->err) < 0)
			return hd_cli_fail(c);
		tail_print(c, &l);
		since = l.next_seq;
		rc = l.n == HD_ROOM_READ_MAX;
		hd_posts_dispose(&l);
		if (!rc)
			break;
	}
	if (!follow)
		return HD_EXIT_OK;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = chat_on_signal; /* no SA_RESTART: wake the wait */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!chat_stop) {
		if (hd_room_follow(&l, st, team, since, HD_ROOM_READ_MAX,
			TAIL_WAIT_MS, &c->err) < 0)
			return hd_cli_fail(c);
		tail_print(c, &l);
		since = l.next_seq;
		hd_posts_dispose(&l);
	}
	return HD_EXIT_OK;
}

static const hd_cli_opt chat_tail_opts[] = {
    {"follow", 'f', NULL, "keep printing new posts until interrupted", 0},
    {"since", 0, "SEQ", "start after seq SEQ instead of the last posts", 0},
    {"lines", 'n', "N", "how many of the last posts to show (default 10)", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_cmd chat_subs[] = {
    {"tail", "TEAM", "Show the last posts, and with -f follow live", 1, 1,
	chat_tail_opts, cmd_chat_tail, NULL,
	"With --json, one post per line. -f wakes within milliseconds of "
	"a post from any process; Ctrl-C ends it."},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hd_cli_cmd hd_cli_cmd_chat = {
    .name = "chat",
    .summary = "Post to and read a team's room",
    .subs = chat_subs,
};
