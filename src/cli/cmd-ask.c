/*
 * cmd-ask.c -- `huddle ask TEAM MESSAGE`: a conversation (SPEC 7) run in
 * this process.
 *
 * Output: each reply as it is recorded, `@<agent>: <reply>` (a multi-line
 * reply keeps its lines; control characters other than newline and tab
 * are shown as spaces), then a line `=== response ===` and the aggregate.
 * On stderr, notes: the conversation id, the scripted agents (canned
 * replies, not a model) and where the transcript went. --json prints only
 * the finished conversation ({"id","teamId",...} as the REST API gives
 * it, plus "transcript").
 *
 * SIGINT or SIGTERM stops the engine: the turn in progress is put back
 * and the conversation released, for `huddle serve` (or any engine that
 * resumes) to finish; the command then exits 1.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define ASK_POLL_MS 200

struct ask_view {
	int quiet; /* --json: nothing until the end */
};

static void
print_body(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		putchar((ch < 0x20 && ch != '\t' && ch != '\n') || ch == 0x7f
			? ' '
			: ch);
	}
}

static void
ask_on_reply(const hd_conversation_reply_info *r, void *payload)
{
	struct ask_view *v = payload;

	if (v->quiet)
		return;
	printf("@%s: ", r->agent);
	print_body(r->body);
	putchar('\n');
	fflush(stdout);
}

/* Name the team's scripted agents on stderr (SPEC 9.4: say so). */
static void
note_scripted(hd_store *st, const char *team)
{
	const hd_runtime_adapter *rt;
	hd_agents l = {NULL, 0};
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	if (hd_agent_list(&l, st, team, NULL) < 0)
		return;
	for (i = 0; i < l.n; i++)
		if (hd_runtime_find(&rt, l.items[i].runtime, NULL) == 0 &&
		    rt->is_scripted)
			hd_buf_printf(&b, "%s%s", b.len ? ", " : "",
			    l.items[i].id);
	if (b.len > 0)
		fprintf(stderr, "note: scripted agents (canned replies, not a "
				"model): %s\n",
		    hd_buf_cstr(&b));
	hd_buf_dispose(&b);
	hd_agents_dispose(&l);
}

/* 1 once SIGINT or SIGTERM is pending (both are blocked here). */
static int
interrupted(const sigset_t *set)
{
	struct timespec zero = {0, 0};

	return sigtimedwait(set, NULL, &zero) > 0;
}

static int
cmd_ask(hd_cli *c)
{
	hd_conversation_engine_config cfg;
	hd_conversation_engine *e = NULL;
	hd_conversation_spec spec;
	hd_conversation *conv = NULL;
	struct ask_view view = {c->json};
	hd_store *st;
	sigset_t set, old;
	char id[HD_CONVERSATION_ID_LEN + 1], path[4096];
	int rc = HD_EXIT_FAIL, wrc;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	/* workers inherit the mask: the signals come to this thread only */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);

	memset(&cfg, 0, sizeof(cfg));
	cfg.home = hd_store_home(st);
	cfg.on_reply = ask_on_reply;
	cfg.payload = &view;
	memset(&spec, 0, sizeof(spec));
	spec.team = c->argv[0];
	spec.message = c->argv[1];
	spec.origin = "cli";
	if (hd_conversation_engine_start(&e, &cfg, &c->err) < 0 ||
	    hd_conversation_start(id, e, st, &spec, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (!c->json) {
		fprintf(stderr, "note: conversation %s\n", id);
		note_scripted(st, spec.team);
	}
	for (;;) {
		wrc = hd_conversation_wait(e, st, id, ASK_POLL_MS, &c->err);
		if (wrc == 0)
			break;
		if (wrc != HD_ETIMEOUT) {
			rc = hd_cli_fail(c);
			goto done;
		}
		if (interrupted(&set)) {
			hd_conversation_engine_stop(e);
			e = NULL;
			hd_err_set(&c->err, HD_ERR,
			    "interrupted: conversation %s is left for "
			    "'huddle serve' to finish",
			    id);
			rc = hd_cli_fail(c);
			goto done;
		}
	}
	if (hd_conversation_get(&conv, st, id, &c->err) < 0 ||
	    hd_conversation_transcript_path(path, sizeof(path),
		hd_store_home(st), conv, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json) {
		json_t *j = hd_conversation_to_json(conv);

		json_object_set_new(j, "transcript", json_string(path));
		hd_cli_json(j);
	} else {
		printf("=== response ===\n");
		print_body(conv->response != NULL ? conv->response : "");
		putchar('\n');
		fflush(stdout);
		fprintf(stderr, "note: transcript: %s\n", path);
	}
	rc = HD_EXIT_OK;
done:
	hd_conversation_engine_stop(e);
	hd_conversation_free(conv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

const hd_cli_cmd hd_cli_cmd_ask = {
	.name = "ask",
	.args = "TEAM MESSAGE",
	.summary = "Ask a team: a conversation routed by @mentions",
	.min_args = 2,
	.max_args = 2,
	.fn = cmd_ask,
	.details = "The message goes to the team's leader, or to the agent it "
		   "starts with\n(\"@coder fix the build\"). Agents reply and "
		   "mention teammates with\n[@id: message] tags; each reply is "
		   "printed as it arrives, then the\naggregate response. The "
		   "transcript is saved under HUDDLE_HOME/chats/TEAM/.",
};
