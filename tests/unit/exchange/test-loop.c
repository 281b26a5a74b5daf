/*
 * test-loop.c -- the exchange loop (SPEC 8): pre-checks in order with
 * their exact errors, each of the four end reasons with exactly one
 * turn_bound_hit, the clamp, board-derived obligations, events and agent
 * status around turns.
 */
#include <string.h>

#include <huddle/activity.h>
#include <huddle/board.h>
#include <huddle/budget.h>
#include <huddle/buf.h>
#include <huddle/exchange.h>
#include <huddle/room_lock.h>
#include <huddle/team.h>

#include "testutil.h"

#include "fake.h"

static hd_exchange_spec
spec_for(const char *team, const char *stimulus, fake *f)
{
	hd_exchange_spec s;

	memset(&s, 0, sizeof(s));
	s.team = team;
	s.stimulus = stimulus;
	s.runner = fake_run;
	s.runner_ctx = f;
	return s;
}

/* Exactly one turn_bound_hit, with these fields. */
static void
assert_bound_hit(
    hd_store *st, const char *reason, int max_turns, int turns_taken)
{
	json_t *d;

	assert_int_equal(hd_count_events(st, "dev", "turn_bound_hit"), 1);
	d = last_event_data(st, "dev", "turn_bound_hit");
	assert_non_null(d);
	assert_string_equal(
	    json_string_value(json_object_get(d, "room_id")), "team:dev");
	assert_string_equal(
	    json_string_value(json_object_get(d, "reason")), reason);
	assert_int_equal(
	    json_integer_value(json_object_get(d, "max_turns")), max_turns);
	assert_int_equal(
	    json_integer_value(json_object_get(d, "turns_taken")), turns_taken);
	assert_int_equal(json_object_size(d), 4);
	json_decref(d);
}

/* Nothing happened: no turn event, no post, no lock left behind. */
static void
assert_nothing_ran(hd_fixture *fx)
{
	hd_room_lock lk;
	hd_err err = HD_ERR_INIT;
	int64_t head = -1;
	int found = 1;

	assert_int_equal(hd_count_events(fx->st, "dev", "speaker_selected"), 0);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_started"), 0);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_bound_hit"), 0);
	assert_hd_ok(hd_room_head(&head, fx->st, "dev", &err), &err);
	assert_int_equal(head, 0);
	assert_hd_ok(hd_room_lock_get(&lk, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 0);
}

/* Run the exchange of s: it must succeed and end `ended` after `turns`
 * turns, taken in order by `speakers` ("manager,coder"; NULL: not
 * checked). */
static void
expect_run(hd_fixture *fx, const hd_exchange_spec *s, hd_exchange_end ended,
    int turns, const char *speakers)
{
	hd_exchange_result res;
	hd_err err = HD_ERR_INIT;
	hd_buf b = HD_BUF_INIT(0);
	size_t i;

	assert_hd_ok(hd_exchange_run(&res, fx->st, s, &err), &err);
	assert_int_equal(res.ended, ended);
	assert_int_equal(res.turns_taken, turns);
	for (i = 0; speakers != NULL && i < res.nspeakers; i++)
		hd_buf_printf(&b, "%s%s", i ? "," : "", res.speakers[i]);
	if (speakers != NULL)
		assert_string_equal(hd_buf_cstr(&b), speakers);
	hd_buf_dispose(&b);
	hd_exchange_result_dispose(&res);
}

/* The exchange of s is refused before it starts: code, msg. */
static void
expect_refused(hd_fixture *fx, const hd_exchange_spec *s, int code,
    const char *msg)
{
	hd_exchange_result res;
	hd_err err = HD_ERR_INIT;

	assert_hd_err(hd_exchange_run(&res, fx->st, s, &err), code, msg, &err);
	hd_exchange_result_dispose(&res);
}

/* ---- pre-checks ---- */

static void
test_loop__prechecks_refuse_in_order(void **state)
{
	hd_fixture *fx = *state;
	hd_team_spec ts = {0};
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	fake f;
	const char *ghost[] = {"coder", "ghost"};

	fake_init(&f, fx->st);
	s = spec_for("ghost", "hello", &f);
	expect_refused(fx, &s, HD_ENOTFOUND, "team \"ghost\" not found");

	ts.id = "dev";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	s = spec_for("dev", "hello", &f);
	s.first_speakers = ghost; /* agents are checked before speakers */
	s.nfirst = 2;
	expect_refused(fx, &s, HD_EREFUSED, "team dev has no agents");

	hd_agent_spec as = {0};
	as.id = "coder";
	as.team = "dev";
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	s.first_speakers = NULL;
	s.nfirst = 0;
	expect_refused(
	    fx, &s, HD_EREFUSED, "team dev has no leader to speak first");

	s.first_speakers = ghost;
	s.nfirst = 2;
	expect_refused(fx, &s, HD_EREFUSED, "unknown first speaker: ghost");
	assert_int_equal(f.n, 0);
	assert_nothing_ran(fx);
}

static void
test_loop__budgets_refuse_before_any_turn(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	fake f;
	const char *first[] = {"coder"};

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	fake_init(&f, fx->st);
	s = spec_for("dev", "hello", &f);

	/* a cap budget at its limit pauses: limit 0 is "at" from the start */
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "manager", 0, "cap", &err),
	    &err);
	expect_refused(fx, &s, HD_EREFUSED, "budget_paused:agent");

	/* only the first speakers' agent budgets count at the start */
	s.first_speakers = first;
	s.nfirst = 1;
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 0, "cap", &err), &err);
	/* the team's is checked before any agent's */
	expect_refused(fx, &s, HD_EREFUSED, "budget_paused:team");
	assert_int_equal(f.n, 0);
	assert_nothing_ran(fx);

	/* warn never pauses */
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 0, "warn", &err), &err);
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 1, "coder");
	fake_dispose(&f);
}

static void
test_loop__a_second_exchange_in_process_is_refused(void **state)
{
	hd_fixture *fx = *state;
	hd_room_lock lk;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(
	    hd_room_lock_acquire(&lk, fx->st, "dev", 60000, &err), &err);
	fake_init(&f, fx->st);
	s = spec_for("dev", "hello", &f);
	expect_refused(fx, &s, HD_ECONFLICT,
	    "an exchange is already running for this room");
	assert_int_equal(f.n, 0);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_bound_hit"), 0);
	assert_hd_ok(hd_room_lock_release(fx->st, &lk, &err), &err);
}

/* ---- end reasons ---- */

static void
test_loop__leader_alone_ends_no_pending_obligation(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_result res;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	json_t *d;
	char *text;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	fake_init(&f, fx->st);
	s = spec_for("dev", "Plan the release.", &f);
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_string_equal(res.room_id, "team:dev");
	assert_int_equal(res.ended, HD_EXCHANGE_NO_PENDING);
	assert_int_equal(res.turns_taken, 1);
	assert_int_equal(res.max_turns, 5);
	assert_int_equal(res.nspeakers, 1);
	assert_string_equal(res.speakers[0], "manager");
	d = hd_exchange_result_to_json(&res);
	text = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(text,
	    "{\"turnsTaken\":1,\"turnsFailed\":0,"
	    "\"endedReason\":\"no_pending_obligation\","
	    "\"speakers\":[\"manager\"]}");
	free(text);
	json_decref(d);
	hd_exchange_result_dispose(&res);
	assert_bound_hit(fx->st, "no_pending_obligation", 5, 1);

	/* one of each per-turn event */
	assert_int_equal(hd_count_events(fx->st, "dev", "speaker_selected"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_started"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_completed"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "cost"), 1);
	d = last_event_data(fx->st, "dev", "speaker_selected");
	assert_string_equal(
	    json_string_value(json_object_get(d, "speaker")), "manager");
	assert_string_equal(
	    json_string_value(json_object_get(d, "policy")), "round-robin");
	assert_int_equal(json_integer_value(json_object_get(d, "turn")), 1);
	json_decref(d);

	/* the room: the stimulus as the user, then the reply as the peer */
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 10, NULL, &err), &err);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0].kind, "user");
	assert_string_equal(l.items[0].author, "user");
	assert_string_equal(l.items[0].body, "Plan the release.");
	assert_string_equal(l.items[1].kind, "peer");
	assert_string_equal(l.items[1].author, "manager");
	assert_string_equal(l.items[1].body, "manager here");
	hd_posts_dispose(&l);

	/* working during the turn, idle after; the lock is gone */
	assert_string_equal(f.status_during[0], "working");
	hd_assert_agent_status(fx, "manager", "idle");
	hd_room_lock lk;
	int found = 1;
	assert_hd_ok(hd_room_lock_get(&lk, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 0);
	fake_dispose(&f);
}

static void
test_loop__first_speakers_each_speak_once(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	fake f;
	const char *first[] = {"tester", "coder"};

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	fake_init(&f, fx->st);
	s = spec_for("dev", "Go.", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	/* round-robin: equal turns, so by id */
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 2, "coder,tester");
	assert_bound_hit(fx->st, "no_pending_obligation", 5, 2);
	fake_dispose(&f);
}

/*
 * A board-driven ping-pong: the leader assigns a task to coder during its
 * turn; coder completes it during its own, so the leader owes a report.
 */
static void
ping_pong(fake *f, const hd_runtime_turn *in)
{
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t *last = f->user;

	if (strcmp(in->agent->id, "manager") == 0) {
		ts.team = "dev";
		ts.subject = "Do the next thing";
		ts.created_by = "manager";
		if (hd_board_create(&t, f->st, &ts, &err) == 0)
			*last = t->id;
		hd_task_free(t);
		t = NULL;
		if (hd_board_assign(
			&t, f->st, *last, "coder", "manager", &err) != 0)
			fail_msg("assign: %s", err.msg);
	} else if (hd_board_complete(&t, f->st, *last, "coder", "done", &err) !=
		   0)
		fail_msg("complete: %s", err.msg);
	hd_task_free(t);
}

/* Team dev (manager, coder) whose fake runtime plays ping_pong; the spec
 * of an exchange on stimulus. */
static hd_exchange_spec
ping_pong_team(hd_fixture *fx, fake *f, int64_t *last, const char *stimulus)
{
	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	fake_init(f, fx->st);
	f->during = ping_pong;
	f->user = last;
	return spec_for("dev", stimulus, f);
}

static void
test_loop__board_obligations_run_to_max_turns(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_result res;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	int64_t last = 0, four = 4;
	fake f;
	size_t i;

	s = ping_pong_team(fx, &f, &last, "Work through the backlog.");
	s.max_turns = &four;
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.ended, HD_EXCHANGE_MAX_TURNS);
	assert_int_equal(res.turns_taken, 4);
	assert_int_equal(res.max_turns, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(
		    res.speakers[i], i % 2 ? "coder" : "manager");
	hd_exchange_result_dispose(&res);
	assert_bound_hit(fx->st, "max_turns", 4, 4);
	assert_int_equal(hd_count_events(fx->st, "dev", "speaker_selected"), 4);
	fake_dispose(&f);
}

static void
test_loop__a_large_max_turns_is_clamped(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_result res;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	int64_t last = 0, many = 1000, zero = 0;
	fake f;

	s = ping_pong_team(fx, &f, &last, "Go.");
	s.max_turns = &many; /* 2 participants: at most 10 */
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.ended, HD_EXCHANGE_MAX_TURNS);
	assert_int_equal(res.max_turns, 10);
	assert_int_equal(res.turns_taken, 10);
	hd_exchange_result_dispose(&res);
	assert_bound_hit(fx->st, "max_turns", 10, 10);

	/* 0 is clamped up to 1 */
	s.max_turns = &zero;
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.max_turns, 1);
	assert_int_equal(res.turns_taken, 1);
	assert_int_equal(res.ended, HD_EXCHANGE_MAX_TURNS);
	hd_exchange_result_dispose(&res);
	fake_dispose(&f);
}

/* ping_pong's state (its task id first, so f->user is still the
 * int64_t * it reads) and the flag to raise during the turn. */
struct abort_ctx {
	int64_t last;
	atomic_int *flag;
};

static void
abort_during(fake *f, const hd_runtime_turn *in)
{
	struct abort_ctx *c = f->user;

	ping_pong(f, in);
	atomic_store(c->flag, 1);
}

/* A cancel (cancel.h) set during a turn ends the exchange `cancelled`
 * after it, though coder still owes a turn. */
static void
test_loop__cancel_ends_cancelled(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	atomic_int cancel;
	struct abort_ctx ctx = {0, &cancel};
	fake f;

	atomic_init(&cancel, 0);
	s = ping_pong_team(fx, &f, &ctx.last, "Go.");
	s.cancel = &cancel;
	f.during = abort_during;
	f.user = &ctx;
	expect_run(fx, &s, HD_EXCHANGE_CANCELLED, 1, NULL);
	assert_bound_hit(fx->st, "cancelled", 5, 1);
	fake_dispose(&f);
}

static void
test_loop__abort_ends_between_turns(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	atomic_int stop;
	struct abort_ctx ctx = {0, &stop};
	fake f;

	atomic_init(&stop, 1);
	s = ping_pong_team(fx, &f, &ctx.last, "Go.");
	s.abort = &stop;
	/* the caller is already gone: no turn at all */
	expect_run(fx, &s, HD_EXCHANGE_ABORTED, 0, NULL);
	assert_bound_hit(fx->st, "aborted", 5, 0);
	assert_int_equal(f.n, 0);

	/* it goes away during the first turn, with coder owing a turn: the
	 * running turn finishes and is posted, the next never starts */
	atomic_store(&stop, 0);
	f.during = abort_during;
	f.user = &ctx;
	expect_run(fx, &s, HD_EXCHANGE_ABORTED, 1, NULL);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_bound_hit"), 2);
	json_t *d = last_event_data(fx->st, "dev", "turn_bound_hit");
	assert_string_equal(
	    json_string_value(json_object_get(d, "reason")), "aborted");
	json_decref(d);
	fake_dispose(&f);
}

static void
test_loop__cap_budget_pauses_after_the_turn_that_crossed_it(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_budget *b = NULL;
	int64_t last = 0, ten = 10;
	fake f;

	s = ping_pong_team(fx, &f, &last, "Go.");
	s.max_turns = &ten;
	/* each turn reports 0.6 cents; the team's cap is 1 cent: the second
	 * turn crosses it */
	fake_rule_add(&f, NULL, NULL, NULL, NULL, 600000);
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 1, "cap", &err), &err);
	expect_run(fx, &s, HD_EXCHANGE_BUDGET_PAUSED, 2, NULL);
	assert_bound_hit(fx->st, "budget_paused", 10, 2);
	assert_hd_ok(hd_budget_get(&b, fx->st, "team", "dev", &err), &err);
	assert_int_equal(b->spent_microcents, 1200000);
	assert_int_equal(hd_budget_tripped(b), 1);
	hd_budget_free(b);
	assert_hd_ok(hd_budget_get(&b, fx->st, "agent", "coder", &err), &err);
	assert_int_equal(b->spent_microcents, 600000);
	assert_int_equal(b->limit_cents, -1); /* tracked, no limit */
	hd_budget_free(b);
	assert_int_equal(hd_count_events(fx->st, "dev", "budget_exceeded"), 1);

	/* now it refuses to start */
	expect_refused(fx, &s, HD_EREFUSED, "budget_paused:team");

	/* the same limit as warn runs to the turn bound */
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "team", "dev", 1, "warn", &err), &err);
	expect_run(fx, &s, HD_EXCHANGE_MAX_TURNS, 10, NULL);
	fake_dispose(&f);
}

static void
test_loop__an_obligated_speaker_over_its_cap_pauses(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	int64_t last = 0;
	fake f;

	s = ping_pong_team(fx, &f, &last, "Go.");
	/* coder is owed a turn after the leader's, but its cap is spent */
	assert_hd_ok(
	    hd_budget_set(NULL, fx->st, "agent", "coder", 0, "cap", &err),
	    &err);
	expect_run(fx, &s, HD_EXCHANGE_BUDGET_PAUSED, 1, "manager");
	assert_int_equal(f.n, 1);
	assert_bound_hit(fx->st, "budget_paused", 5, 1);
	fake_dispose(&f);
}

/* ---- obligations come from the board ---- */

static void
test_loop__prose_creates_no_obligation(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	fake_init(&f, fx->st);
	fake_rule_add(&f, "manager",
	    "[@coder: please fix the bug] coder, you owe me a turn!", NULL,
	    NULL, 0);
	s = spec_for("dev", "Go.", &f);
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 1, NULL);
	fake_dispose(&f);
}

static void
test_loop__open_tasks_and_completions_oblige(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id1, id2;
	fake f;

	hd_fixture_team(
	    fx, "dev", "manager", "coder", "reviewer", "tester", NULL);
	ts.team = "dev";
	ts.subject = "Fix the bug";
	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err);
	id1 = t->id;
	hd_task_free(t);
	ts.subject = "Test the fix";
	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err);
	id2 = t->id;
	hd_task_free(t);
	/* tester and coder own open tasks (one claimed, one in progress);
	 * reviewer owns none */
	assert_hd_ok(
	    hd_board_assign(&t, fx->st, id1, "tester", "manager", &err), &err);
	hd_task_free(t);
	assert_hd_ok(
	    hd_board_assign(&t, fx->st, id2, "coder", "manager", &err), &err);
	hd_task_free(t);
	assert_hd_ok(hd_board_start(&t, fx->st, id2, "coder", &err), &err);
	hd_task_free(t);

	fake_init(&f, fx->st);
	s = spec_for("dev", "Stand-up.", &f);
	/* manager first; then coder and tester (by id), who never spoke and
	 * own open tasks; the leader had spoken after nothing completed */
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 3, "manager,coder,tester");

	/* A second exchange: they have spoken since their tasks were
	 * assigned, so nobody owes anything until the board moves. */
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 1, NULL);

	/* tester completes its task between exchanges: the leader owes a
	 * turn after the first speaker's */
	const char *first[] = {"reviewer"};
	assert_hd_ok(
	    hd_board_complete(&t, fx->st, id1, "tester", "green", &err), &err);
	hd_task_free(t);
	s.first_speakers = first;
	s.nfirst = 1;
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 2, "reviewer,manager");
	fake_dispose(&f);
}

/* While reviewer's turn runs, a task is assigned to coder, who has
 * spoken: through another connection (f->user set) or the engine's own. */
static void
assign_during(fake *f, const hd_runtime_turn *in)
{
	hd_task_spec ts = {0};
	hd_task *t = NULL;
	hd_store *st = f->st;
	hd_err err = HD_ERR_INIT;
	int64_t id;

	if (strcmp(in->agent->id, "reviewer") != 0)
		return;
	if (f->user != NULL &&
	    hd_store_open(&st, hd_store_home(f->st), &err) != 0)
		fail_msg("open: %s", err.msg);
	ts.team = "dev";
	ts.subject = "Fix what review found";
	if (hd_board_create(&t, st, &ts, &err) != 0)
		fail_msg("create: %s", err.msg);
	id = t->id;
	hd_task_free(t);
	if (hd_board_assign(&t, st, id, "coder", "manager", &err) != 0)
		fail_msg("assign: %s", err.msg);
	hd_task_free(t);
	if (st != f->st)
		hd_store_close(st);
}

/* What the CLI hands as on_turn: the save then commits alone first. */
static void
on_turn_noop(const hd_exchange_step *step, void *payload)
{
	(void)step;
	(void)payload;
}

/* A claim that lands while a turn runs obliges its owner at the next
 * step, whichever connection wrote it, and with on_turn set too (the
 * save then commits in a step of its own, which scans nothing): the loop
 * skips the board scan only when nothing at all was written since its
 * last scanning step (exchange.c (8)). */
static void
test_loop__a_claim_during_a_turn_obliges(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	const char *first[] = {"coder", "reviewer"};
	int other;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", "reviewer", NULL);
	for (other = 0; other < 3; other++) {
		fake_init(&f, fx->st);
		f.during = assign_during;
		f.user = other ? fx : NULL;
		s = spec_for("dev", "Review it.", &f);
		s.first_speakers = first;
		s.nfirst = 2;
		if (other == 2)
			s.on_turn = on_turn_noop;
		expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 3,
		    "coder,reviewer,coder");
		fake_dispose(&f);
	}
	/* and with nothing written by anyone, no one owes a turn: the
	 * exchange ends after the first speakers */
	fake_init(&f, fx->st);
	s = spec_for("dev", "Anything else?", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	expect_run(fx, &s, HD_EXCHANGE_NO_PENDING, 2, NULL);
	fake_dispose(&f);
}

static void
test_loop__status_goes_idle_working_idle_and_nothing_else(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_result res;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	const char *first[] = {"coder", "tester"};
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	/* coder is busy elsewhere (another engine's turn, still running
	 * when the exchange's ends); tester is shut down: neither status is
	 * the exchange's to change */
	assert_hd_ok(
	    hd_activity_turn_begin(NULL, fx->st, "dev", "coder", &err), &err);
	assert_hd_ok(
	    hd_agent_set_status(fx->st, "tester", "shutdown", &err), &err);
	fake_init(&f, fx->st);
	s = spec_for("dev", "Go.", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.turns_taken, 2);
	hd_exchange_result_dispose(&res);
	assert_string_equal(f.status_during[0], "working");
	assert_string_equal(f.status_during[1], "shutdown");
	hd_assert_agent_status(fx, "coder", "working");
	hd_assert_agent_status(fx, "tester", "shutdown");
	fake_dispose(&f);
}

/* During the second turn: the first turn's record and the second's
 * announcement are committed together, before the runtime runs. */
static void
check_step_committed(fake *f, const hd_runtime_turn *in)
{
	hd_budget *b = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t head = 0;

	(void)in;
	if (f->n != 2)
		return;
	assert_hd_ok(hd_room_head(&head, f->st, "dev", &err), &err);
	assert_int_equal(head, 2); /* the stimulus, the first reply */
	assert_int_equal(hd_count_events(f->st, "dev", "turn_completed"), 1);
	assert_int_equal(hd_count_events(f->st, "dev", "cost"), 1);
	assert_int_equal(hd_count_events(f->st, "dev", "speaker_selected"), 2);
	assert_int_equal(hd_count_events(f->st, "dev", "turn_started"), 2);
	assert_hd_ok(
	    hd_budget_get(&b, f->st, "agent", f->agents[0], &err), &err);
	assert_int_equal(b->spent_microcents, 500);
	hd_budget_free(b);
}

static void
test_loop__a_turn_commits_with_the_next_announcement(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_result res;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	const char *first[] = {"coder", "tester"};
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	fake_init(&f, fx->st);
	fake_rule_add(&f, NULL, NULL, NULL, NULL, 500);
	f.during = check_step_committed;
	s = spec_for("dev", "Go.", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.turns_taken, 2);
	hd_exchange_result_dispose(&res);
	assert_int_equal(f.n, 2);
	assert_bound_hit(fx->st, "no_pending_obligation", 5, 2);
	fake_dispose(&f);
}

/* During the first turn: spoil the store's attach secret (kv
 * "attach.secret", attach.h), so the second turn's begin fails. */
static void
break_secret(fake *f, const hd_runtime_turn *in)
{
	hd_err err = HD_ERR_INIT;
	hd_store *st = NULL;

	if (f->n != 1)
		return;
	assert_hd_ok(hd_store_open(&st, in->huddle_home, &err), &err);
	assert_hd_ok(
	    hd_store_kv_put(st, "attach.secret", "not a secret", &err), &err);
	hd_store_close(st);
}

static void
test_loop__a_failed_begin_keeps_the_turn_that_ran(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_result res;
	hd_exchange_spec s;
	hd_room_lock lk;
	hd_err err = HD_ERR_INIT;
	const char *first[] = {"coder", "tester"};
	int64_t head = 0;
	int found = 1;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	fake_init(&f, fx->st);
	f.during = break_secret;
	s = spec_for("dev", "Go.", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	s.mcp_port = 7340;
	assert_true(hd_exchange_run(&res, fx->st, &s, &err) < 0);
	assert_non_null(strstr(err.msg, "secret"));
	hd_exchange_result_dispose(&res);
	assert_int_equal(f.n, 1);
	/* the first turn is in the room, paid and complete */
	assert_hd_ok(hd_room_head(&head, fx->st, "dev", &err), &err);
	assert_int_equal(head, 2);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_completed"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "cost"), 1);
	/* the second left nothing, and the exchange ended on its error */
	assert_int_equal(hd_count_events(fx->st, "dev", "speaker_selected"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_started"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "error"), 1);
	assert_int_equal(hd_count_events(fx->st, "dev", "turn_bound_hit"), 0);
	hd_assert_agent_status(fx, "coder", "idle");
	hd_assert_agent_status(fx, "tester", "idle");
	assert_hd_ok(hd_room_lock_get(&lk, &found, fx->st, "dev", &err), &err);
	assert_int_equal(found, 0);
	fake_dispose(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_loop__prechecks_refuse_in_order),
	    hd_fixture_test(test_loop__budgets_refuse_before_any_turn),
	    hd_fixture_test(test_loop__a_second_exchange_in_process_is_refused),
	    hd_fixture_test(test_loop__leader_alone_ends_no_pending_obligation),
	    hd_fixture_test(test_loop__first_speakers_each_speak_once),
	    hd_fixture_test(test_loop__board_obligations_run_to_max_turns),
	    hd_fixture_test(test_loop__a_large_max_turns_is_clamped),
	    hd_fixture_test(test_loop__cancel_ends_cancelled),
	    hd_fixture_test(test_loop__abort_ends_between_turns),
	    hd_fixture_test(
		test_loop__cap_budget_pauses_after_the_turn_that_crossed_it),
	    hd_fixture_test(
		test_loop__an_obligated_speaker_over_its_cap_pauses),
	    hd_fixture_test(test_loop__prose_creates_no_obligation),
	    hd_fixture_test(test_loop__open_tasks_and_completions_oblige),
	    hd_fixture_test(test_loop__a_claim_during_a_turn_obliges),
	    hd_fixture_test(
		test_loop__status_goes_idle_working_idle_and_nothing_else),
	    hd_fixture_test(
		test_loop__a_turn_commits_with_the_next_announcement),
	    hd_fixture_test(test_loop__a_failed_begin_keeps_the_turn_that_ran),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
