/*
 * cmd-chat.c -- `huddle chat post|read|tail`: the team room from the
 * command line (SPEC 5, 14). `chat post` is the operation table's
 * chat.post (src/ops/ops-chat.c, made a command by cli-ops.c); what is
 * here of it is how it is shown (hd_cli_renders_chat).
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

static void
print_post(const hd_post *p)
{
	const char *line = p->body, *nl;
	char when[32];

	hd_cli_time(when, sizeof(when), p->created_at);
	printf(
	    "#%lld %s %s [%s]: ", (long long)p->seq, when, p->author, p->kind);
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

/* The envelope of p, malloc'd; NULL with c->err set on failure. */
static char *
wrap_post(hd_cli *c, const hd_post *p)
{
	char *w = NULL;

	if (hd_envelope_wrap(&w, p->author, p->kind, p->seq, p->body,
		strlen(p->body), &c->err) < 0)
		return NULL;
	return w;
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

const hd_cli_render hd_cli_renders_chat[] = {
    {"chat.post", render_posted},
    {NULL, NULL},
};

static int
cmd_chat_read(hd_cli *c)
{
	const char *team = c->argv[0], *agent = hd_cli_opt_str(c, "for");
	int wrapped = hd_cli_flag(c, "wrapped");
	int64_t since = 0, limit = 0;
	hd_posts l;
	hd_store *st;
	json_t *arr, *o;
	char room[HD_ROOM_ID_MAX], *w;
	size_t i;
	int rc = HD_EXIT_OK;

	if ((rc = hd_cli_opt_int(c, "since", 0, INT64_MAX, &since)) ||
	    (rc = hd_cli_opt_int(c, "limit", 1, HD_ROOM_READ_MAX, &limit)))
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if ((agent != NULL ? hd_room_subscribe(&l, st, team, agent, since,
				 (int)limit, &c->err)
			   : hd_room_read(&l, st, team, since, (int)limit, NULL,
				 &c->err)) < 0)
		return hd_cli_fail(c);
	if (c->json) {
		arr = json_array();
		for (i = 0; i < l.n; i++) {
			o = hd_post_to_json(&l.items[i]);
			if (wrapped) {
				if ((w = wrap_post(c, &l.items[i])) == NULL) {
					json_decref(o);
					json_decref(arr);
					rc = hd_cli_fail(c);
					goto done;
				}
				json_object_set_new(
				    o, "wrapped", json_string(w));
				free(w);
			}
			json_array_append_new(arr, o);
		}
		hd_room_id(room, sizeof(room), team);
		hd_cli_json(json_pack("{s:s,s:o,s:I}", "roomId", room, "posts",
		    arr, "nextSeq", (json_int_t)l.next_seq));
	} else if (wrapped) {
		for (i = 0; i < l.n; i++) {
			if ((w = wrap_post(c, &l.items[i])) == NULL) {
				rc = hd_cli_fail(c);
				goto done;
			}
			printf("%s\n", w);
			free(w);
		}
	} else if (l.n == 0)
		printf("no posts after #%lld\n", (long long)since);
	else
		for (i = 0; i < l.n; i++)
			print_post(&l.items[i]);
done:
	hd_posts_dispose(&l);
	return rc;
}

static void
tail_print(hd_cli *c, const hd_posts *l)
{
	char *s;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (c->json) { /* one compact object per line, for pipes */
			json_t *o = hd_post_to_json(&l->items[i]);

			s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
			if (s != NULL)
				printf("%s\n", s);
			free(s);
			json_decref(o);
		} else
			print_post(&l->items[i]);
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

static const hd_cli_opt chat_read_opts[] = {
    {"since", 0, "SEQ", "posts after seq SEQ (default 0)", 0},
    {"limit", 'n', "N", "at most N posts, 1-500 (default 100)", 0},
    {"wrapped", 0, NULL, "print each post as the envelope a runtime gets", 0},
    {"for", 0, "AGENT",
	"read as AGENT subscribes: skip its own posts; nextSeq moves "
	"past them",
	0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_opt chat_tail_opts[] = {
    {"follow", 'f', NULL, "keep printing new posts until interrupted", 0},
    {"since", 0, "SEQ", "start after seq SEQ instead of the last posts", 0},
    {"lines", 'n', "N", "how many of the last posts to show (default 10)", 0},
    {NULL, 0, NULL, NULL, 0},
};

static const hd_cli_cmd chat_subs[] = {
    {"read", "TEAM", "Read a team's room, oldest first", 1, 1, chat_read_opts,
	cmd_chat_read, NULL,
	"Pass nextSeq (from --json) as --since to read on."},
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
