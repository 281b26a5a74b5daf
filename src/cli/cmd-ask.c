/*
 * cmd-ask.c -- `huddle ask TEAM MESSAGE`: a conversation (SPEC 7) run in
 * this process.
 *
 * Output: the team's answer, once: each reply as it is recorded, in
 * completion order, `@<agent>: <reply>` with its mention tags written as
 * the aggregate writes them (`→ @coder: ...`; a multi-line reply keeps its
 * lines; control characters other than newline and tab are shown as
 * spaces), then `=== answered: N replies ===`. The aggregate (the
 * response of --json and of the REST API) is these replies joined, so it
 * is not printed again. When replies attached files
 * ([send_file: ...], a cut answer's whole text), `=== attachments ===`
 * and one line per file, `file <id> from @<agent>: <name> (<size> bytes,
 * <media type>)`.
 * On stderr, notes: the conversation id, the scripted agents (canned
 * replies, not a model) and where the transcript went. --json prints only
 * the finished conversation ({"id","teamId",...} as the REST API gives
 * it, plus "transcript").
 *
 * While agents work, a terminal gets a status line on stderr (progress.c):
 * who works on the conversation and for how long, who has a message
 * waiting; read from the conversation's messages at each poll.
 *
 * Ctrl-C (SIGINT) cancels the conversation (cancel.h): the running turns
 * are stopped, the conversation ends `cancelled`, the replies so far are
 * printed and kept (`=== N replies (cancelled by the user) ===`), and the
 * command exits 130; a second Ctrl-C exits 130 at once. SIGTERM stops the
 * engine instead: the turn in progress is put back and the conversation
 * released, for `huddle serve` (or any engine that resumes) to finish;
 * the command then exits 1. A conversation cancelled from elsewhere
 * (`huddle conversation cancel`) ends the same way, exiting 1.
 *
 * Run again after it died mid-turn (kill -9, a crash), the same command
 * (same team and message) resumes the conversation it left running
 * instead of starting another: the replies already recorded are printed
 * and not asked again, the turn cut short runs once more (its command
 * died with the first process; what that command started is killed
 * first: conv_engine.c (9)).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <huddle/buf.h>
#include <huddle/cancel.h>

#include <http/http.h>
#include "cli.h"

#define ASK_POLL_MS 200
#define ASK_EXIT_INTERRUPTED 130 /* 128 + SIGINT */

/*
 * The engine's callback only signals; the main thread prints from the
 * database, in completion order and for this conversation only, so every
 * reply is out before the response, whichever worker recorded it.
 */
struct ask_view {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t gen; /* bumped by every recorded reply */
	size_t printed;
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

	(void)r;
	pthread_mutex_lock(&v->lock);
	v->gen++;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

/* Print the replies of c not printed yet, tags as the aggregate shows
 * them (the raw body should that fail: out of memory). */
static void
print_new(struct ask_view *v, const hd_conversation *c, hd_cli_progress *p)
{
	hd_err err = HD_ERR_INIT;
	char *shown;

	if (v->printed < c->nreplies)
		hd_cli_progress_hide(p);
	for (; v->printed < c->nreplies; v->printed++) {
		const hd_conversation_reply *r = &c->replies[v->printed];

		if (hd_mentions_display(&shown, r->body, &err) < 0)
			shown = NULL;
		printf("@%s: ", r->agent);
		print_body(shown != NULL ? shown : r->body);
		putchar('\n');
		free(shown);
	}
	fflush(stdout);
	hd_cli_progress_show(p);
}

/* The status line: each agent with a message of c running (working, since
 * it started) or queued (waiting), in arrival order, once each. */
static void
show_progress(hd_cli_progress *p, const hd_conversation *c)
{
	hd_cli_progress_item items[16];
	size_t i, j, n = 0;
	int working;

	if (p == NULL)
		return;
	for (i = 0; i < c->ndeliveries && n < 16; i++) {
		const hd_conversation_delivery *d = &c->deliveries[i];

		working = strcmp(d->state, "running") == 0;
		if (!working && strcmp(d->state, "queued") != 0)
			continue;
		for (j = 0; j < n; j++)
			if (strcmp(items[j].name, d->to_agent) == 0)
				break;
		if (j == n) {
			memset(&items[n], 0, sizeof(items[n]));
			snprintf(items[n].name, sizeof(items[n].name), "%s",
			    d->to_agent);
			n++;
		}
		if (working) {
			items[j].working = 1;
			items[j].since_ms = d->started_at;
		}
	}
	hd_cli_progress_set(p, NULL, items, n);
}

/* Wait up to ms for a reply after gen. */
static void
wait_reply(struct ask_view *v, uint64_t gen, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&v->lock);
	while (v->gen == gen &&
	       pthread_cond_timedwait(&v->cond, &v->lock, &ts) == 0)
		;
	pthread_mutex_unlock(&v->lock);
}

/* The files the replies attached, after the answer, and how to get
 * them. */
static void
print_files(const hd_conversation *c)
{
	size_t i;

	if (c->nfiles == 0)
		return;
	printf("=== attachments ===\n");
	for (i = 0; i < c->nfiles; i++) {
		const hd_conversation_file *f = &c->files[i];

		printf("file %lld from @%s: ", (long long)f->id, f->agent);
		print_body(f->name);
		printf(" (%lld bytes, %s)\n", (long long)f->size,
		    f->media_type);
	}
	fprintf(stderr,
	    "note: save the attachments with 'huddle conversation files %s "
	    "--save DIR'\n",
	    c->id);
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
			hd_buf_printf(
			    &b, "%s%s", b.len ? ", " : "", l.items[i].id);
	if (b.len > 0)
		fprintf(stderr,
		    "note: scripted agents (canned replies, not a "
		    "model): %s\n",
		    hd_buf_cstr(&b));
	hd_buf_dispose(&b);
	hd_agents_dispose(&l);
}

/* SIGINT or SIGTERM once pending (both are blocked here), else 0. */
static int
interrupted(const sigset_t *set)
{
	struct timespec zero = {0, 0};
	int sig = sigtimedwait(set, NULL, &zero);

	return sig > 0 ? sig : 0;
}

static int
cmd_ask(hd_cli *c)
{
	hd_conversation_engine_config cfg;
	hd_conversation_engine *e = NULL;
	hd_conversation_spec spec;
	hd_conversation *conv = NULL;
	struct ask_view view;
	hd_cli_progress *prog = NULL;
	hd_store *st;
	sigset_t set, old;
	char id[HD_CONVERSATION_ID_LEN + 1], path[4096], mcp_host[256];
	uint64_t gen;
	size_t i, nfailed;
	int rc = HD_EXIT_FAIL, sig, cancelling = 0, resumed = 0;

	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	memset(&view, 0, sizeof(view));
	pthread_mutex_init(&view.lock, NULL);
	pthread_cond_init(&view.cond, NULL);
	/* workers inherit the mask: the signals come to this thread only */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN); /* a reader gone: the answer still lands */

	memset(&cfg, 0, sizeof(cfg));
	cfg.home = hd_store_home(st);
	cfg.on_reply = ask_on_reply;
	cfg.payload = &view;
	/* a server running on this home: agents attach to it over HTTP */
	if (hd_http_presence_find(
		cfg.home, mcp_host, sizeof(mcp_host), &cfg.mcp_port))
		cfg.mcp_host = mcp_host;
	memset(&spec, 0, sizeof(spec));
	spec.team = c->argv[0];
	spec.message = c->argv[1];
	spec.origin = "cli";
	if (hd_conversation_engine_start(&e, &cfg, &c->err) < 0 ||
	    hd_conversation_resume_same(id, &resumed, e, st, &spec, &c->err) <
		0 ||
	    (!resumed &&
		hd_conversation_start(id, e, st, &spec, &c->err) < 0)) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (!c->json) {
		fprintf(stderr, "note: conversation %s%s\n", id,
		    resumed ? " (resumed: it was interrupted; the replies "
			      "already in are not asked again)"
			    : "");
		note_scripted(st, spec.team);
	}
	prog = hd_cli_progress_start(c, hd_cli_flag(c, "quiet"));
	for (;;) {
		pthread_mutex_lock(&view.lock);
		gen = view.gen;
		pthread_mutex_unlock(&view.lock);
		hd_conversation_free(conv);
		if (hd_conversation_get(&conv, st, id, &c->err) < 0) {
			hd_cli_progress_stop(prog); /* erased before the error */
			prog = NULL;
			rc = hd_cli_fail(c);
			goto done;
		}
		if (!c->json)
			print_new(&view, conv, prog);
		if (strcmp(conv->status, "running") != 0)
			break;
		show_progress(prog, conv);
		sig = interrupted(&set);
		if (sig == SIGINT && cancelling) {
			hd_cli_progress_stop(prog);
			fputs("huddle: interrupted\n", stderr);
			_exit(ASK_EXIT_INTERRUPTED); /* the second: at once */
		}
		if (sig == SIGINT) {
			/* the engine (ours) stops the turns and ends it */
			cancelling = 1;
			hd_cli_progress_hide(prog);
			if (hd_conversation_cancel(NULL, st, id, NULL, &c->err) <
				0 &&
			    c->err.code != HD_ECONFLICT) {
				hd_cli_progress_stop(prog);
				prog = NULL;
				rc = hd_cli_fail(c);
				goto done;
			}
			fprintf(stderr,
			    "huddle: cancelling conversation %s (Ctrl-C again "
			    "to quit at once)\n",
			    id);
			hd_cli_progress_show(prog);
		} else if (sig == SIGTERM) {
			hd_cli_progress_stop(prog);
			prog = NULL;
			hd_conversation_engine_stop(e);
			e = NULL;
			hd_err_set(&c->err, HD_ERR,
			    "interrupted: conversation %s is left for "
			    "'huddle serve' to finish",
			    id);
			rc = hd_cli_fail(c);
			goto done;
		}
		wait_reply(&view, gen, ASK_POLL_MS);
	}
	hd_cli_progress_stop(prog);
	prog = NULL;
	if (hd_conversation_transcript_path(
		path, sizeof(path), hd_store_home(st), conv, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json) {
		json_t *j = hd_conversation_to_json(conv);

		json_object_set_new(j, "transcript", json_string(path));
		hd_cli_json(j);
	} else {
		/* the replies above are the answer: no second copy */
		if (strcmp(conv->status, "cancelled") == 0)
			printf("=== %zu repl%s (" HD_CANCEL_REASON ") ===\n",
			    conv->nreplies, conv->nreplies == 1 ? "y" : "ies");
		else
			printf("=== answered: %zu repl%s ===\n", conv->nreplies,
			    conv->nreplies == 1 ? "y" : "ies");
		print_files(conv);
		fflush(stdout);
		fprintf(stderr, "note: transcript: %s\n", path);
	}
	rc = HD_EXIT_OK;
	if (strcmp(conv->status, "cancelled") == 0) {
		/* the replies so far are printed and kept */
		if (cancelling) {
			rc = ASK_EXIT_INTERRUPTED;
			goto done;
		}
		hd_err_set(&c->err, HD_ERR, "conversation %s was cancelled",
		    id);
		rc = hd_cli_fail(c);
		goto done;
	}
	/* the answer is printed and kept; a failed turn still fails the
	 * command, so scripts see it */
	for (i = nfailed = 0; i < conv->nreplies; i++)
		nfailed += conv->replies[i].is_error != 0;
	if (nfailed > 0) {
		hd_err_set(&c->err, HD_ERR,
		    "%zu of %zu replies failed (each is its [error: ...] reply "
		    "above)",
		    nfailed, conv->nreplies);
		rc = hd_cli_fail(c);
	}
done:
	hd_cli_progress_stop(prog);
	hd_conversation_engine_stop(e);
	hd_conversation_free(conv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_destroy(&view.lock);
	pthread_cond_destroy(&view.cond);
	return rc;
}

static const hd_cli_opt ask_opts[] = {
    {"quiet", 'q', NULL, "no status line on stderr while agents work", 0},
    {NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_ask = {
    .name = "ask",
    .args = "TEAM MESSAGE",
    .summary = "Ask a team: a conversation routed by @mentions",
    .min_args = 2,
    .max_args = 2,
    .opts = ask_opts,
    .fn = cmd_ask,
    .details = "The message goes to the team's leader, or to the agent it "
	       "starts with\n(\"@coder fix the build\"). Agents reply and "
	       "mention teammates with\n[@id: message] tags; each reply is "
	       "printed once, as it arrives:\ntogether they are the answer "
	       "(--json has them joined as \"response\").\nThe "
	       "transcript is saved under HUDDLE_HOME/chats/TEAM/.\n"
	       "[#TEAM: message] in a reply posts to the room; [send_file: "
	       "path] attaches\na file from the agent's workdir; an answer "
	       "over 4000 characters is cut\nand attached whole. Attachments "
	       "are listed after the answer: save them\nwith 'huddle "
	       "conversation files ID --save DIR'.\n"
	       "On a terminal, a status line on stderr shows who is working "
	       "and for how\nlong (--quiet: none). Ctrl-C cancels the "
	       "conversation: the running turns\nstop, the replies so far "
	       "are printed and kept, and the command exits 130.",
};
