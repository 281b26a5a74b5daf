/*
 * cmd-demo.c -- `huddle demo`: the example team of scripted agents plays
 * the all-hands stand-up in a fresh temporary home, and the home is kept
 * for a look around afterwards.
 *
 *  1. The all-hands (a conversation, SPEC 7): the user asks the manager to
 *     host an all-hands; the manager's reply mentions coder, reviewer and
 *     tester; the reviewer's reply sends the coder a note (backflow); the
 *     replies are shown as they arrive, then the aggregate.
 *  2. The follow-up (an exchange, SPEC 8): the user files two tasks and
 *     starts an exchange; the board decides who speaks after the manager.
 *     Scripted agents cannot use tools, so after each reply the demo makes
 *     the board move that reply announces, as that agent, and says so; the
 *     exchange then derives the next obligations from the board.
 *  3. The board, and where the home is.
 * The team is examples/dev-team.json, embedded at build time. Replies are
 * the scripted agents' canned ones; everything else (routing, mentions,
 * the room, the board, obligations) is the real engines at work.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/conversation.h>
#include <huddle/team.h>

#include "cli.h"

extern const unsigned char hd_demo_team_json[];
extern const size_t hd_demo_team_json_len;

#define DEMO_TEAM "dev"
#define DEMO_ASK                                                               \
	"@dev Please host an all hands: what shipped, what is "                \
	"blocked, how are the tests?"
#define DEMO_STIMULUS                                                          \
	"Follow-up from the all-hands: fix the null check the reviewer found " \
	"(#1) and add a regression test for it (#2). Report back when done."

typedef struct demo {
	hd_store *st;
	int64_t fix_id;
	int64_t test_id;
	int failed; /* a board move failed */
	hd_err err;
} demo;

static void
demo_section(const char *title)
{
	printf("\n== %s ==\n", title);
}

/* ---- 1. the all-hands: a conversation ---- */

/* How long the all-hands may take (scripted replies take milliseconds). */
#define DEMO_CONVERSATION_MS 60000

/* Each reply as it is recorded (on an engine thread; calls are
 * serialized), tags shown as `→ @coder: ...`. */
static void
demo_on_reply(const hd_conversation_reply_info *r, void *payload)
{
	hd_err err = HD_ERR_INIT;
	char *shown = NULL, line[80];

	(void)payload;
	if (hd_mentions_display(&shown, r->body, &err) < 0)
		shown = NULL;
	snprintf(line, sizeof(line), "@%s: ", r->agent);
	fputs(line, stdout);
	hd_cli_print_indented(shown != NULL ? shown : r->body, "");
	fflush(stdout);
	free(shown);
}

static int
demo_all_hands(demo *d, const char *home)
{
	hd_conversation_engine_config cfg;
	hd_conversation_engine *e = NULL;
	hd_conversation_spec spec;
	hd_conversation *conv = NULL;
	char id[HD_CONVERSATION_ID_LEN + 1], path[4096];
	int rc;

	printf("The user asks the team: %s\n\n", DEMO_ASK);
	fflush(stdout);
	memset(&cfg, 0, sizeof(cfg));
	cfg.home = home;
	cfg.on_reply = demo_on_reply;
	memset(&spec, 0, sizeof(spec));
	spec.team = DEMO_TEAM;
	spec.message = DEMO_ASK;
	spec.origin = "demo";
	if ((rc = hd_conversation_engine_start(&e, &cfg, &d->err)) < 0 ||
	    (rc = hd_conversation_start(id, e, d->st, &spec, &d->err)) < 0 ||
	    (rc = hd_conversation_wait(
		 e, d->st, id, DEMO_CONVERSATION_MS, &d->err)) < 0 ||
	    (rc = hd_conversation_get(&conv, d->st, id, &d->err)) < 0 ||
	    (rc = hd_conversation_transcript_path(
		 path, sizeof(path), home, conv, &d->err)) < 0)
		goto done;
	printf("\n-- what the user receives: %lld messages, aggregated --\n",
	    (long long)conv->total_messages);
	hd_cli_print_indented(
	    conv->response != NULL ? conv->response : "", "  ");
	printf("transcript: %s\n", path);
done:
	hd_conversation_engine_stop(e);
	hd_conversation_free(conv);
	return rc;
}

/* ---- 2. the follow-up: an exchange ---- */

static int
demo_file_tasks(demo *d)
{
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	int rc;

	ts.team = DEMO_TEAM;
	ts.created_by = HD_BOARD_USER;
	ts.subject = "Fix the null check on owner in the claim path";
	if ((rc = hd_board_create(&t, d->st, &ts, &d->err)) < 0)
		return rc;
	d->fix_id = t->id;
	printf("The user files task #%lld \"%s\".\n", (long long)t->id,
	    t->subject);
	hd_task_free(t);
	ts.subject = "Add a regression test for a null owner";
	if ((rc = hd_board_create(&t, d->st, &ts, &d->err)) < 0)
		return rc;
	d->test_id = t->id;
	printf("The user files task #%lld \"%s\".\n", (long long)t->id,
	    t->subject);
	hd_task_free(t);
	return 0;
}

static void
board_move(demo *d, int rc, const char *what)
{
	if (rc < 0) {
		d->failed = 1;
		return;
	}
	printf("    board: %s\n", what);
}

/* After each reply: the move that reply announces, made as its author. */
static void
demo_after_turn(const hd_exchange_step *s, void *payload)
{
	demo *d = payload;
	hd_task *t = NULL;
	char what[160];
	int rc;

	if (d->failed || s->failed)
		return;
	if (strcmp(s->speaker, "manager") == 0 && s->turn == 1) {
		rc = hd_board_assign(
		    &t, d->st, d->fix_id, "coder", "manager", &d->err);
		hd_task_free(t);
		t = NULL;
		snprintf(what, sizeof(what), "manager assigns #%lld to coder",
		    (long long)d->fix_id);
		board_move(d, rc, what);
		if (rc < 0)
			return;
		rc = hd_board_assign(
		    &t, d->st, d->test_id, "tester", "manager", &d->err);
		snprintf(what, sizeof(what), "manager assigns #%lld to tester",
		    (long long)d->test_id);
	} else if (strcmp(s->speaker, "coder") == 0) {
		rc = hd_board_complete(
		    &t, d->st, d->fix_id, "coder", "null check added", &d->err);
		snprintf(what, sizeof(what), "coder completes #%lld",
		    (long long)d->fix_id);
	} else if (strcmp(s->speaker, "tester") == 0) {
		rc = hd_board_complete(&t, d->st, d->test_id, "tester",
		    "regression test added", &d->err);
		snprintf(what, sizeof(what), "tester completes #%lld",
		    (long long)d->test_id);
	} else
		return;
	hd_task_free(t);
	board_move(d, rc, what);
}

static int
demo_follow_up(demo *d, hd_exchange_result *res)
{
	hd_exchange_spec spec;
	hd_cli_exchange_view view;
	int rc;

	if ((rc = demo_file_tasks(d)) < 0)
		return rc;
	printf("The user starts an exchange: %s\n", DEMO_STIMULUS);
	printf("(Scripted agents cannot use tools: after each reply the demo "
	       "makes the board\nmove that reply announces, as its author. "
	       "Who speaks next comes from the board.)\n\n");
	memset(&view, 0, sizeof(view));
	view.header = 1;
	view.after_turn = demo_after_turn;
	view.after_payload = d;
	memset(&spec, 0, sizeof(spec));
	spec.team = DEMO_TEAM;
	spec.stimulus = DEMO_STIMULUS;
	spec.on_selected = hd_cli_exchange_selected;
	spec.on_turn = hd_cli_exchange_turn;
	spec.payload = &view;
	if ((rc = hd_exchange_run(res, d->st, &spec, &d->err)) < 0)
		return rc;
	if (d->failed)
		return d->err.code;
	hd_cli_exchange_print_end(res);
	return 0;
}

/* ---- 3. the board ---- */

static int
demo_board(demo *d)
{
	hd_tasks l;
	hd_table *t;
	char id[24];
	size_t i;
	int rc;

	if ((rc = hd_board_list(&l, d->st, DEMO_TEAM, NULL, &d->err)) < 0)
		return rc;
	t = hd_table_new(5, "ID", "STATUS", "OWNER", "SUBJECT", "RESULT");
	for (i = l.n; i-- > 0;) { /* oldest first */
		const hd_task *k = &l.items[i];

		snprintf(id, sizeof(id), "#%lld", (long long)k->id);
		hd_table_row(t, id, k->status, k->owner, k->subject, k->result);
	}
	hd_table_print(t, stdout, "  ");
	hd_table_free(t);
	hd_tasks_dispose(&l);
	return 0;
}

static int
demo_apply_team(demo *d)
{
	hd_apply_report rep = {0};
	json_error_t jerr;
	json_t *doc;
	int rc;

	doc = json_loadb(
	    (const char *)hd_demo_team_json, hd_demo_team_json_len, 0, &jerr);
	if (doc == NULL)
		return hd_err_set(&d->err, HD_ERR,
		    "the embedded demo team is not valid JSON: %s", jerr.text);
	rc = hd_team_apply_json(&rep, d->st, doc, "examples/dev-team.json",
	    hd_runtime_check_config, &d->err);
	json_decref(doc);
	hd_apply_report_dispose(&rep);
	return rc;
}

static int
cmd_demo(hd_cli *c)
{
	char home[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	hd_exchange_result res;
	demo d;
	int rc;

	memset(&res, 0, sizeof(res));
	memset(&d, 0, sizeof(d));
	if (c->home_opt != NULL)
		return hd_cli_usage(c,
		    "the demo makes a fresh home of its own; "
		    "run it without --home");
	snprintf(home, sizeof(home), "%s/huddle-demo-XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(home) == NULL) {
		hd_err_set(&c->err, HD_ERR, "cannot create a home in %s",
		    tmp != NULL ? tmp : "/tmp");
		return hd_cli_fail(c);
	}
	if (hd_store_open(&d.st, home, &d.err) < 0 || demo_apply_team(&d) < 0)
		goto fail;

	printf("huddle demo: a scripted team (canned replies, not a model) in "
	       "a fresh home\nhome: %s\nteam: %s -- manager (lead), coder, "
	       "reviewer, tester\n",
	    home, DEMO_TEAM);
	demo_section("1. The all-hands stand-up (a conversation)");
	if (demo_all_hands(&d, home) < 0)
		goto fail;
	demo_section("2. The follow-up (an exchange driven by the board)");
	if (demo_follow_up(&d, &res) < 0)
		goto fail;
	demo_section("3. The board");
	if (demo_board(&d) < 0)
		goto fail;
	demo_section("Where it is");
	printf("The demo's home is %s (kept; remove it when done).\n"
	       "Look around:\n"
	       "  huddle --home %s chat read %s\n"
	       "  huddle --home %s task list %s\n"
	       "  huddle --home %s events\n"
	       "  huddle --home %s serve        (the dashboard)\n",
	    home, home, DEMO_TEAM, home, DEMO_TEAM, home, home);
	rc = HD_EXIT_OK;
	goto done;
fail:
	c->err = d.err;
	fflush(stdout);
	fprintf(stderr, "huddle: the demo's home is %s\n", home);
	rc = hd_cli_fail(c);
done:
	hd_exchange_result_dispose(&res);
	hd_store_close(d.st);
	return rc;
}

const hd_cli_cmd hd_cli_cmd_demo = {
    .name = "demo",
    .summary = "Play the all-hands stand-up with a scripted team in a "
	       "fresh home",
    .max_args = 0,
    .fn = cmd_demo,
    .details = "Makes a fresh home under $TMPDIR (or /tmp), applies the "
	       "example team\n(examples/dev-team.json: scripted agents, "
	       "canned replies, not a model),\nplays a conversation and an "
	       "exchange, prints them and the board, and\nkeeps the home so "
	       "you can look around with --home.",
};
