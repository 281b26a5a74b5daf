/*
 * cmd-exchange.c -- `huddle exchange TEAM --stimulus TEXT`: run one
 * bounded exchange in a team's room (SPEC 8, 14) and show each turn as it
 * happens.
 *
 * Human output, one block per turn, then the end:
 *   exchange in team:dev (up to 5 turns)
 *   [1] manager (round-robin, scripted)
 *       <reply, each line indented by four spaces>
 *   ended: no_pending_obligation after 1 turn (manager): nobody owes a
 *   turn on the board
 *     (an exchange follows the board, not @mentions; ...: huddle ask dev
 *     MESSAGE)
 * (the last two lines only for that end: the one that surprises, as the
 * question was meant for the team; the dashboard says the same and points
 * to Ask the team.)
 * The speaker line is printed (and flushed) when the speaker is chosen, so
 * a slow turn shows who is speaking; the reply follows when it is posted.
 * The same exchange run again after its process died (kill -9, a crash)
 * resumes from its last committed turn: the header then says
 * `exchange in team:dev (up to 5 turns), resumed after 2 turns`, the
 * turns already taken are not run again, and the end counts them.
 * On a terminal a status line on stderr (progress.c) shows the turn, who
 * is speaking and for how long.
 * Ctrl-C cancels: the running turn is stopped (its process group killed),
 * the exchange ends `cancelled` and the command exits 130; a second
 * Ctrl-C exits 130 at once. SIGTERM once stops after the running turn,
 * twice stops the turn too (`aborted`). `huddle exchange cancel TEAM`
 * (another process) cancels the exchange running in TEAM's room: the one
 * running it sees the request (cancel.h, its watch) and ends `cancelled`.
 * An aborted or cancelled exchange exits 1 (130 after Ctrl-C); every
 * other end exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/cancel.h>
#include <huddle/util.h>

#include <http/http.h>
#include "cli.h"

#define EXCH_EXIT_INTERRUPTED 130 /* 128 + SIGINT */
#define EXCH_CANCEL_WAIT_MS 15000

static atomic_int exch_abort;
static atomic_int exch_abort_turn;
static atomic_int exch_cancel;
static atomic_int exch_sigint; /* Ctrl-C seen */
static int exch_tty;            /* stderr is a terminal */

/* Async-signal-safe: flags and write(2) only. */
static void
exch_on_signal(int sig)
{
	static const char once[] = "\nhuddle: stopping after this turn "
				   "(SIGTERM again to stop it now)\n";
	static const char cancel[] = "\r\033[Khuddle: cancelling the "
				     "exchange (Ctrl-C again to quit at "
				     "once)\n";
	static const char plain[] = "\nhuddle: cancelling the exchange "
				    "(Ctrl-C again to quit at once)\n";
	ssize_t w = 0;

	if (sig == SIGINT) {
		if (atomic_exchange(&exch_sigint, 1)) {
			if (exch_tty) /* no status line left behind */
				w = write(2, "\r\033[K", 4);
			(void)w;
			_exit(EXCH_EXIT_INTERRUPTED); /* the second: at once */
		}
		atomic_store(&exch_cancel, 1);
		atomic_store(&exch_abort_turn, 1);
		if (exch_tty)
			w = write(2, cancel, sizeof(cancel) - 1);
		else
			w = write(2, plain, sizeof(plain) - 1);
	} else if (!atomic_exchange(&exch_abort, 1))
		w = write(2, once, sizeof(once) - 1);
	else
		atomic_store(&exch_abort_turn, 1);
	(void)w;
}

/* The CLI's view plus the status line around it. */
struct exch_cli_view {
	hd_cli_exchange_view view;
	hd_cli_progress *prog;
};

static void
exch_selected(const hd_exchange_step *s, void *payload)
{
	struct exch_cli_view *v = payload;
	hd_cli_progress_item it;
	char prefix[64];

	hd_cli_progress_hide(v->prog);
	hd_cli_exchange_selected(s, &v->view);
	hd_cli_progress_show(v->prog);
	memset(&it, 0, sizeof(it));
	snprintf(it.name, sizeof(it.name), "%s", s->speaker);
	it.working = 1;
	it.since_ms = hd_now_ms();
	snprintf(prefix, sizeof(prefix), "[turn %d/%d]", s->turn,
	    s->max_turns);
	hd_cli_progress_set(v->prog, prefix, &it, 1);
}

static void
exch_turn(const hd_exchange_step *s, void *payload)
{
	struct exch_cli_view *v = payload;

	hd_cli_progress_set(v->prog, NULL, NULL, 0);
	hd_cli_progress_hide(v->prog);
	hd_cli_exchange_turn(s, &v->view);
	hd_cli_progress_show(v->prog);
}

/* `huddle exchange cancel TEAM [--as AGENT]`. */
static int
exch_cancel_cmd(hd_cli *c, const char *team)
{
	char room[HD_ROOM_ID_MAX];
	const char *as = NULL;
	hd_store *st;
	int rc;

	if ((rc = hd_cli_as(c, NULL, &as)) != 0)
		return rc;
	if (hd_cli_store(c, &st) != 0)
		return HD_EXIT_FAIL;
	if (as != NULL && (rc = hd_cli_agent_in(c, team, as)) != 0)
		return rc;
	if (hd_exchange_cancel(room, st, team, as, &c->err) < 0 ||
	    hd_exchange_cancel_wait(st, team, EXCH_CANCEL_WAIT_MS, &c->err) <
		0)
		return hd_cli_fail(c);
	if (c->json)
		hd_cli_json(json_pack("{s:s, s:s}", "room_id", room, "status",
		    "cancelled"));
	else
		printf("exchange in %s cancelled\n", room);
	return HD_EXIT_OK;
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
	const char *team;
	size_t i;

	printf("ended: %s after %d turn%s", hd_exchange_end_name(r->ended),
	    r->turns_taken, r->turns_taken == 1 ? "" : "s");
	for (i = 0; i < r->nspeakers; i++)
		printf("%s%s", i == 0 ? " (" : ", ", r->speakers[i]);
	printf("%s", r->nspeakers > 0 ? ")" : "");
	if (r->ended != HD_EXCHANGE_NO_PENDING) {
		putchar('\n');
		return;
	}
	/* the end a user most often does not expect: say what it means and
	 * what routes by @mentions instead */
	team = strncmp(r->room_id, "team:", 5) == 0 ? r->room_id + 5 : "TEAM";
	printf(": nobody owes a turn on the board\n"
	       "  (an exchange follows the board, not @mentions; to have the "
	       "team answer\n  by @mentions, ask it: huddle ask %s MESSAGE)\n",
	    team);
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
	struct exch_cli_view cv;
	hd_cli_exchange_view *vp = &cv.view;
	hd_exchange_watch *watch = NULL;
	struct sigaction sa, old_int, old_term;
	const char **first = NULL;
	char *first_buf = NULL;
	const char *mt = hd_cli_opt_str(c, "max-turns");
	int64_t max_turns = 0, timeout_s = 0;
	hd_store *st;
	size_t nfirst = 0;
	char mcp_host[256];
	int rc, mcp_port = 0;

	if (c->argc == 2) {
		if (strcmp(c->argv[0], "cancel") != 0)
			return hd_cli_usage(c,
			    "'exchange' takes TEAM, or 'cancel TEAM'");
		return exch_cancel_cmd(c, c->argv[1]);
	}
	memset(&spec, 0, sizeof(spec));
	memset(&cv, 0, sizeof(cv));
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
		vp->requested_turns = max_turns;
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
	vp->json = c->json;
	vp->header = 1;
	vp->turns = c->json ? json_array() : NULL;
	atomic_store(&exch_abort, 0);
	atomic_store(&exch_abort_turn, 0);
	atomic_store(&exch_cancel, 0);
	atomic_store(&exch_sigint, 0);
	spec.abort = &exch_abort;
	spec.abort_turn = &exch_abort_turn;
	spec.cancel = &exch_cancel;
	spec.on_selected = exch_selected;
	spec.on_turn = exch_turn;
	spec.payload = &cv;
	/* a cancel from another process (cancel.h) */
	if (hd_exchange_watch_start(&watch, hd_store_home(st), spec.team,
		&exch_cancel, &exch_abort_turn, NULL, &c->err) < 0) {
		rc = hd_cli_fail(c);
		goto done;
	}
	exch_tty = isatty(STDERR_FILENO);
	cv.prog = hd_cli_progress_start(c, hd_cli_flag(c, "quiet"));

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exch_on_signal; /* no SA_RESTART: wake waits */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = hd_exchange_run(&res, st, &spec, &c->err);
	hd_cli_progress_stop(cv.prog);
	cv.prog = NULL;
	hd_exchange_watch_stop(watch);
	watch = NULL;
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
			"maxTurns", res.max_turns, "turns", vp->turns));
	} else
		hd_cli_exchange_print_end(&res);
	rc = res.ended == HD_EXCHANGE_ABORTED ||
		     res.ended == HD_EXCHANGE_CANCELLED
		 ? HD_EXIT_FAIL
		 : HD_EXIT_OK;
	if (res.ended == HD_EXCHANGE_CANCELLED && atomic_load(&exch_sigint))
		rc = EXCH_EXIT_INTERRUPTED;
	/* the turns are printed and kept; a failed one still fails the
	 * command, so scripts see it */
	if (rc == HD_EXIT_OK && vp->failed > 0) {
		hd_err_set(&c->err, HD_ERR,
		    "%d of %zu turns failed (each is its [error: ...] reply "
		    "above)",
		    vp->failed, res.nspeakers);
		rc = hd_cli_fail(c);
	}
	hd_exchange_result_dispose(&res);
done:
	hd_exchange_watch_stop(watch);
	json_decref(vp->turns);
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
    {"quiet", 'q', NULL, "no status line on stderr while agents work", 0},
    {"as", 0, "AGENT", "with 'cancel': the member cancelling it", 0},
    {NULL, 0, NULL, NULL, 0},
};

const hd_cli_cmd hd_cli_cmd_exchange = {
    .name = "exchange",
    .args = "TEAM | cancel TEAM",
    .summary = "Run a bounded exchange of turns in a team's room",
    .min_args = 1,
    .max_args = 2,
    .opts = exchange_opts,
    .fn = cmd_exchange,
    .details =
	"The first speakers (default: the leader) owe the first turns; "
	"after each turn,\nthe board decides who owes the next: an agent "
	"assigned a task since it last\nspoke, or the leader when a task "
	"completed or failed since it last spoke.\nIt ends when nobody "
	"owes a turn, at the turn bound, when a cap budget trips,\nor when "
	"cancelled: Ctrl-C stops the running turn and exits 130 (again:\n"
	"at once); 'huddle exchange cancel TEAM' does it from another "
	"process. One\nexchange per room at a time. HUDDLE_EXCHANGE_LEASE_MS sets the room "
	"lock's lease\n(default 30000).\n"
	"Example: huddle exchange dev --stimulus 'Stand-up: what is "
	"blocked?' --first coder,tester",
};
