/*
 * cmd-exchange.c -- `huddle exchange TEAM --stimulus TEXT`: run one
 * bounded exchange in a team's room (SPEC 8, 14) and show each turn as it
 * happens.
 *
 * Human output, one block per turn, then the end:
 *   exchange in team:dev (up to 5 turns)
 *   [1] manager (round-robin, scripted)
 *       <reply, each line indented by four spaces>
 *   ended: no_pending_obligation after 1 turn (manager)
 * The speaker line is printed (and flushed) when the speaker is chosen, so
 * a slow turn shows who is speaking; the reply follows when it is posted.
 * The same exchange run again after its process died (kill -9, a crash)
 * resumes from its last committed turn: the header then says
 * `exchange in team:dev (up to 5 turns), resumed after 2 turns`, the
 * turns already taken are not run again, and the end counts them.
 * Ctrl-C once stops after the running turn; twice stops the running turn
 * too. An aborted exchange exits 1; every other end exits 0.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../http/http.h"
#include "cli.h"

static atomic_int exch_abort;
static atomic_int exch_abort_turn;

static void
exch_on_signal(int sig)
{
	static const char once[] = "\nhuddle: stopping after this turn "
				   "(Ctrl-C again to stop it now)\n";
	ssize_t w;

	(void)sig;
	if (!atomic_exchange(&exch_abort, 1))
		w = write(2, once, sizeof(once) - 1);
	else
		atomic_store(&exch_abort_turn, 1);
	(void)w;
}

void
hd_cli_print_indented(const char *text, const char *indent)
{
	const unsigned char *p = (const unsigned char *)text;
	int bol = 1; /* at the beginning of a line: indent before text */

	for (; *p != '\0'; p++) {
		if (*p == '\n') {
			putchar('\n');
			bol = 1;
			continue;
		}
		if (bol)
			fputs(indent, stdout);
		bol = 0;
		/* a reply cannot drive the terminal */
		putchar((*p < 0x20 && *p != '\t') || *p == 0x7f ? ' ' : *p);
	}
	putchar('\n');
}

void
hd_cli_exchange_selected(const hd_exchange_step *s, void *payload)
{
	hd_cli_exchange_view *v = payload;

	if (s->turn == 1 && v->requested_turns > s->max_turns)
		hd_cli_warn("--max-turns %lld lowered to %d (at most %d turns "
			    "per participant)",
		    (long long)v->requested_turns, s->max_turns,
		    HD_EXCHANGE_TURNS_PER_PARTICIPANT);
	if (v->json)
		return;
	if (!v->shown && v->header && s->resumed >= 0)
		printf("exchange in %s (up to %d turn%s), resumed after %d "
		       "turn%s\n",
		    s->room_id, s->max_turns, s->max_turns == 1 ? "" : "s",
		    s->resumed, s->resumed == 1 ? "" : "s");
	else if (!v->shown && v->header)
		printf("exchange in %s (up to %d turn%s)\n", s->room_id,
		    s->max_turns, s->max_turns == 1 ? "" : "s");
	v->shown = 1;
	printf("[%d] %s (%s, %s)\n", s->turn, s->speaker,
	    hd_speaker_policy_name(s->policy),
	    s->scripted ? "scripted" : s->runtime);
	fflush(stdout);
}

void
hd_cli_exchange_turn(const hd_exchange_step *s, void *payload)
{
	hd_cli_exchange_view *v = payload;

	v->failed += s->failed != 0;
	if (v->turns != NULL)
		json_array_append_new(v->turns,
		    json_pack("{s:i, s:s, s:s, s:s, s:b, s:s, s:I, s:b, s:f, "
			      "s:I}",
			"turn", s->turn, "speaker", s->speaker, "policy",
			hd_speaker_policy_name(s->policy), "runtime",
			s->runtime, "scripted", s->scripted, "reply", s->reply,
			"seq", (json_int_t)s->seq, "failed", s->failed,
			"cost_usd", s->cost.usd, "duration_ms",
			(json_int_t)s->duration_ms));
	if (v->json)
		return;
	hd_cli_print_indented(s->reply, "    ");
	fflush(stdout);
	if (v->after_turn != NULL)
		v->after_turn(s, v->after_payload);
}

void
hd_cli_exchange_print_end(const hd_exchange_result *r)
{
	size_t i;

	printf("ended: %s after %d turn%s", hd_exchange_end_name(r->ended),
	    r->turns_taken, r->turns_taken == 1 ? "" : "s");
	for (i = 0; i < r->nspeakers; i++)
		printf("%s%s", i == 0 ? " (" : ", ", r->speakers[i]);
	printf("%s\n", r->nspeakers > 0 ? ")" : "");
}

/* Split "a,b" (possibly repeated options) into out (pointers into a copy
 * kept in *buf). */
static int
split_first(hd_cli *c, const char ***out, size_t *n, char **buf)
{
	const char *const *vals;
	int nv = hd_cli_opt_all(c, "first", &vals), i;
	size_t total = 0, k = 0;
	char *p, *tok, *save = NULL;

	*out = NULL;
	*n = 0;
	*buf = NULL;
	for (i = 0; i < nv; i++)
		total += strlen(vals[i]) + 1;
	if (nv == 0)
		return 0;
	if ((*buf = malloc(total + 1)) == NULL ||
	    (*out = calloc(total + 1, sizeof(**out))) == NULL)
		return -1;
	p = *buf;
	for (i = 0; i < nv; i++) {
		size_t len = strlen(vals[i]);

		memcpy(p, vals[i], len);
		p[len] = ',';
		p += len + 1;
	}
	*p = '\0';
	for (tok = strtok_r(*buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save))
		(*out)[k++] = tok;
	*n = k;
	return 0;
}

static int
cmd_exchange(hd_cli *c)
{
	hd_exchange_spec spec;
	hd_exchange_result res;
	hd_cli_exchange_view view;
	struct sigaction sa, old_int, old_term;
	const char **first = NULL;
	char *first_buf = NULL;
	const char *mt = hd_cli_opt_str(c, "max-turns");
	int64_t max_turns = 0, timeout_s = 0;
	hd_store *st;
	size_t nfirst = 0;
	char mcp_host[256];
	int rc, mcp_port = 0;

	memset(&spec, 0, sizeof(spec));
	memset(&view, 0, sizeof(view));
	spec.team = c->argv[0];
	spec.stimulus = hd_cli_opt_str(c, "stimulus");
	if (spec.stimulus == NULL)
		return hd_cli_usage(c, "'exchange' needs --stimulus TEXT");
	if (mt != NULL) {
		/* refused below 1; above 5 x participants the engine lowers
		 * it, and hd_cli_exchange_selected says so */
		if (hd_parse_i64(&max_turns, mt, "--max-turns", &c->err) < 0)
			return hd_cli_usage(c, "%s", c->err.msg);
		if (max_turns < 1)
			return hd_cli_usage(c,
			    "--max-turns must be between 1 and 5 x the "
			    "participants (%d each), not %lld",
			    HD_EXCHANGE_TURNS_PER_PARTICIPANT,
			    (long long)max_turns);
		spec.max_turns = &max_turns;
		view.requested_turns = max_turns;
	}
	if ((rc = hd_cli_opt_int(c, "timeout", 1, 86400, &timeout_s)) != 0)
		return rc;
	spec.turn_timeout_ms = timeout_s * 1000;
	if (split_first(c, &first, &nfirst, &first_buf) < 0) {
		hd_err_set(&c->err, HD_ENOMEM, "out of memory");
		rc = hd_cli_fail(c);
		goto done;
	}
	if (hd_cli_flag(c, "first") && nfirst == 0) {
		rc = hd_cli_usage(
		    c, "--first needs agent ids, e.g. coder,tester");
		goto done;
	}
	spec.first_speakers = first;
	spec.nfirst = nfirst;
	if (hd_cli_store(c, &st) != 0) {
		rc = HD_EXIT_FAIL;
		goto done;
	}
	/* a server running on this home: agents attach to it over HTTP */
	if (hd_http_presence_find(
		hd_store_home(st), mcp_host, sizeof(mcp_host), &mcp_port)) {
		spec.mcp_host = mcp_host;
		spec.mcp_port = mcp_port;
	}
	view.json = c->json;
	view.header = 1;
	view.turns = c->json ? json_array() : NULL;
	atomic_store(&exch_abort, 0);
	atomic_store(&exch_abort_turn, 0);
	spec.abort = &exch_abort;
	spec.abort_turn = &exch_abort_turn;
	spec.on_selected = hd_cli_exchange_selected;
	spec.on_turn = hd_cli_exchange_turn;
	spec.payload = &view;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exch_on_signal; /* no SA_RESTART: wake waits */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = hd_exchange_run(&res, st, &spec, &c->err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc < 0) {
		hd_exchange_result_dispose(&res);
		rc = hd_cli_fail(c);
		goto done;
	}
	if (c->json) {
		hd_cli_json(
		    json_pack("{s:b, s:s, s:o, s:i, s:O}", "ok", 1, "roomId",
			res.room_id, "result", hd_exchange_result_to_json(&res),
			"maxTurns", res.max_turns, "turns", view.turns));
	} else
		hd_cli_exchange_print_end(&res);
	rc = res.ended == HD_EXCHANGE_ABORTED ? HD_EXIT_FAIL : HD_EXIT_OK;
	/* the turns are printed and kept; a failed one still fails the
	 * command, so scripts see it */
	if (rc == HD_EXIT_OK && view.failed > 0) {
		hd_err_set(&c->err, HD_ERR,
		    "%d of %zu turns failed (each is its [error: ...] reply "
		    "above)",
		    view.failed, res.nspeakers);
		rc = hd_cli_fail(c);
	}
	hd_exchange_result_dispose(&res);
done:
	json_decref(view.turns);
	free(first);
	free(first_buf);
	return rc;
}

static const hd_cli_opt exchange_opts[] = {
    {"stimulus", 's', "TEXT", "what starts it (a user message; required)", 0},
    {"first", 0, "AGENTS",
	"who owes the first turns, comma-separated (default: the leader)", 1},
    {"max-turns", 0, "N",
	"the turn bound, 1 to 5 x participants (default 5; a larger one "
	"is lowered, with a warning)", 0},
    {"timeout", 0, "S", "stop any one turn after S seconds", 0},
    {NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_exchange = {
    .name = "exchange",
    .args = "TEAM",
    .summary = "Run a bounded exchange of turns in a team's room",
    .min_args = 1,
    .max_args = 1,
    .opts = exchange_opts,
    .fn = cmd_exchange,
    .details =
	"The first speakers (default: the leader) owe the first turns; "
	"after each turn,\nthe board decides who owes the next: an agent "
	"assigned a task since it last\nspoke, or the leader when a task "
	"completed or failed since it last spoke.\nIt ends when nobody "
	"owes a turn, at the turn bound, when a cap budget trips,\nor on "
	"Ctrl-C (once: after the running turn; twice: at once). One "
	"exchange\nper room at a time. HUDDLE_EXCHANGE_LEASE_MS sets the room "
	"lock's lease\n(default 30000).\n"
	"Example: huddle exchange dev --stimulus 'Stand-up: what is "
	"blocked?' --first coder,tester",
};
