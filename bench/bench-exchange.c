/*
 * bench-exchange.c -- the exchange engine's own cost per turn (SPEC 8).
 *
 * A team of P scripted agents runs E exchanges in a fresh home; each
 * exchange names every agent a first speaker, so it takes P turns (each
 * turn: the lease renewal and announcement, the turn state, the prompt
 * with the room posts since the speaker's last turn and its mailbox, the
 * runtime, the post with state, lineage, spend and events in one
 * transaction, and the board-derived obligations). Every turn goes
 * through a runner that calls hd_runtime_run() exactly as the engine
 * would and times it, so:
 *
 *   exchange: engine overhead per turn = (exchange time - time inside
 *             hd_runtime_run) / turns     (target < 200 us)
 *   baseline: one scripted turn through hd_runtime_run alone, the same
 *             agent and a prompt of the same size, in the same run
 *   ratio:    (overhead + baseline) / baseline, the cost of a whole
 *             exchange turn against the scripted turn alone
 *   exchange_turn_p50: the median engine time between the end of one
 *             turn and the start of the next in the same exchange (save,
 *             obligations, selection, announce, prompt); the mean above
 *             also carries each exchange's pre-checks, setup and end
 *             (the store checkpoints its WAL on its worker thread, past
 *             10,000 pages in the commit itself)
 *
 * The median of ROUNDS rounds is printed. Durability is the store's
 * default (WAL, synchronous=NORMAL), as in production.
 *
 * usage: bench_exchange [EXCHANGES] [AGENTS]   (default 50 and 8)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/exchange.h>
#include <huddle/log.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "bench.h"

#define ROUNDS 5

typedef struct timed {
	int64_t us; /* time spent in hd_runtime_run */
	long turns;
	size_t prompt_bytes;
	int64_t last_end; /* when the previous turn of this exchange ended */
	int64_t *gaps;    /* engine time between two turns of an exchange */
	long ngaps;
} timed;

static int
timed_run(
    void *ctx, hd_runtime_result *out, const hd_runtime_turn *in, hd_err *err)
{
	timed *t = ctx;
	int64_t t0 = hd_mono_us();
	int rc;

	if (t->last_end > 0)
		t->gaps[t->ngaps++] = t0 - t->last_end;
	rc = hd_runtime_run(out, in, NULL, NULL, err);
	t->last_end = hd_mono_us();
	t->us += t->last_end - t0;
	t->turns++;
	t->prompt_bytes += strlen(in->prompt);
	return rc;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One round: returns the engine overhead per turn; *alone_us gets the
 * scripted turn alone, *p50_us the median engine time between two turns
 * of one exchange (no setup, no teardown). */
static double
round_once(long exchanges, int agents, double *alone_us, double *p50_us)
{
	char home[256], id[32];
	const char *tmp = getenv("TMPDIR");
	const char **first;
	hd_store *st = NULL;
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_agent *a = NULL;
	hd_exchange_spec spec;
	hd_exchange_result res;
	hd_runtime_turn turn;
	hd_runtime_result rr;
	hd_err err = HD_ERR_INIT;
	json_t *cfg;
	timed t = {0, 0, 0, 0, NULL, 0};
	int64_t t0, total, max_turns = agents;
	char *prompt;
	long e, i, n;
	int k;

	snprintf(
	    home, sizeof(home), "%s/huddle-bench-XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(home) == NULL || hd_store_open(&st, home, &err) != 0)
		bench_die("home", &err);
	ts.id = "bench";
	if (hd_team_create(NULL, st, &ts, &err) != 0)
		bench_die("team", &err);
	cfg =
	    json_loads("{\"rules\": [{\"when\": \"deploy\", \"reply\": "
		       "\"Deploying now.\"}, {\"when\": \"status\", \"reply\": "
		       "\"All green, two tasks left.\"}], \"default\": "
		       "\"Noted; on it.\"}",
		0, NULL);
	first = calloc((size_t)agents, sizeof(*first));
	for (k = 0; k < agents; k++) {
		memset(&as, 0, sizeof(as));
		snprintf(id, sizeof(id), "agent-%02d", k);
		as.id = id;
		as.team = "bench";
		as.runtime_config = cfg;
		as.leader = k == 0;
		if (hd_agent_add(&a, st, &as, &err) != 0)
			bench_die("agent", &err);
		first[k] = strdup(a->id);
		hd_agent_free(a);
	}

	memset(&spec, 0, sizeof(spec));
	spec.team = "bench";
	spec.stimulus = "status, please: what is left before the deploy?";
	spec.first_speakers = first;
	spec.nfirst = (size_t)agents;
	spec.max_turns = &max_turns;
	spec.runner = timed_run;
	spec.runner_ctx = &t;
	if ((t.gaps = calloc((size_t)(exchanges * agents), sizeof(*t.gaps))) ==
	    NULL)
		bench_die("oom", NULL);
	t0 = hd_mono_us();
	for (e = 0; e < exchanges; e++) {
		t.last_end = 0;
		if (hd_exchange_run(&res, st, &spec, &err) != 0)
			bench_die("exchange", &err);
		if (res.turns_taken != agents)
			bench_die(
			    "exchange took the wrong number of turns", NULL);
		hd_exchange_result_dispose(&res);
	}
	total = hd_mono_us() - t0;
	qsort(t.gaps, (size_t)t.ngaps, sizeof(*t.gaps), bench_cmp_i64);
	*p50_us = t.ngaps > 0 ? (double)t.gaps[t.ngaps / 2] : 0;
	free(t.gaps);

	/* the scripted turn alone: same agent, a prompt of the mean size */
	n = t.turns;
	if ((prompt = malloc(t.prompt_bytes / (size_t)n + 1)) == NULL)
		bench_die("oom", NULL);
	for (i = 0; i < (long)(t.prompt_bytes / (size_t)n); i++)
		prompt[i] = "status report "[i % 14];
	prompt[i] = '\0';
	if (hd_agent_get(&a, st, first[0], &err) != 0)
		bench_die("agent", &err);
	memset(&turn, 0, sizeof(turn));
	turn.agent = a;
	turn.team = "bench";
	turn.prompt = prompt;
	turn.huddle_home = home;
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		if (hd_runtime_run(&rr, &turn, NULL, NULL, &err) != 0)
			bench_die("scripted turn", &err);
		hd_runtime_result_dispose(&rr);
	}
	*alone_us = (double)(hd_mono_us() - t0) / (double)n;

	hd_agent_free(a);
	free(prompt);
	for (k = 0; k < agents; k++)
		free((char *)first[k]);
	free(first);
	json_decref(cfg);
	hd_store_close(st);
	if (bench_rm_rf(home) != 0)
		fprintf(stderr, "bench_exchange: could not remove %s\n", home);
	return (double)(total - t.us) / (double)n;
}

int
main(int argc, char **argv)
{
	long exchanges = argc > 1 ? atol(argv[1]) : 50;
	int agents = argc > 2 ? atoi(argv[2]) : 8;
	double over[ROUNDS], alone[ROUNDS], p50[ROUNDS], o, b;
	int r;

	if (exchanges < 1 || agents < 1 || agents > 64) {
		fprintf(stderr, "usage: bench_exchange [EXCHANGES] [AGENTS]\n");
		return 2;
	}
	hd_log_set_level(HD_LOG_WARN);
	for (r = 0; r < ROUNDS; r++)
		over[r] = round_once(exchanges, agents, &alone[r], &p50[r]);
	qsort(over, ROUNDS, sizeof(over[0]), cmp_double);
	qsort(alone, ROUNDS, sizeof(alone[0]), cmp_double);
	qsort(p50, ROUNDS, sizeof(p50[0]), cmp_double);
	o = over[ROUNDS / 2];
	b = alone[ROUNDS / 2];
	printf(
	    "exchange: %.1f us/turn engine overhead | baseline %.1f us/turn "
	    "(scripted turn alone) | ratio %.2f (whole turn / scripted turn) "
	    "| %ld exchanges x %d turns, target < 200 us\n",
	    o, b, (o + b) / b, exchanges, agents);
	printf("exchange_turn_p50: %.1f us between two turns of an exchange "
	       "(median; the mean above adds each exchange's pre-checks, "
	       "setup and end)\n",
	    p50[ROUNDS / 2]);
	return 0;
}
