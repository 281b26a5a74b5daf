/*
 * test-turn.c -- one turn of an exchange (SPEC 8.1): the prompt, byte for
 * byte, for a leader and a member; posts that land during a turn reach
 * the speaker next time; a busy room caught up within the prompt budget,
 * the rest next turn; the saved state; resume only on the same
 * runtime, with session lineage; what is posted for empty, failing,
 * malformed and oversized replies.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/activity.h>
#include <huddle/board.h>
#include <huddle/exchange.h>
#include <huddle/prompt.h>
#include <huddle/session.h>
#include <huddle/util.h>

#include <store/store.h>

#include "testutil.h"

#include "fake.h"

static hd_exchange_spec
spec_for(const char *stimulus, fake *f)
{
	hd_exchange_spec s;

	memset(&s, 0, sizeof(s));
	s.team = "dev";
	s.stimulus = stimulus;
	s.runner = fake_run;
	s.runner_ctx = f;
	return s;
}

static void
run_ok(hd_fixture *fx, hd_exchange_spec *s, int want_turns)
{
	hd_exchange_result res;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_exchange_run(&res, fx->st, s, &err), &err);
	assert_int_equal(res.turns_taken, want_turns);
	hd_exchange_result_dispose(&res);
}

/* The body of the post with seq. */
static char *
post_body(hd_fixture *fx, int64_t seq)
{
	hd_posts l;
	hd_err err = HD_ERR_INIT;
	char *body;

	assert_hd_ok(
	    hd_room_read(&l, fx->st, "dev", seq - 1, 1, NULL, &err), &err);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.items[0].seq, seq);
	body = strdup(l.items[0].body);
	hd_posts_dispose(&l);
	return body;
}

/* The manager assigns task 1 to coder during its first turn; coder
 * completes it during its own. */
/* The standing context of call i: the intro for agent, a blank line,
 * then block, exactly (prompt.h sections 1 and 2). */
static void
assert_context(
    fake *f, size_t i, const char *agent, int is_leader, const char *block)
{
	hd_buf want = HD_BUF_INIT(0);

	hd_prompt_intro(&want, agent, "dev", is_leader);
	hd_buf_puts(&want, "\n\n");
	hd_buf_puts(&want, block);
	assert_string_equal(f->contexts[i], hd_buf_cstr(&want));
	hd_buf_dispose(&want);
}

static void
assign_then_complete(fake *f, const hd_runtime_turn *in)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int rc = 0;

	if (strcmp(in->agent->id, "manager") == 0 && f->n == 1)
		rc = hd_board_assign(&t, f->st, 1, "coder", "manager", &err);
	else if (strcmp(in->agent->id, "coder") == 0)
		rc = hd_board_complete(&t, f->st, 1, "coder", "fixed", &err);
	if (rc != 0)
		fail_msg("board: %s", err.msg);
	hd_task_free(t);
}

static void
test_turn__prompts_exact_for_leader_and_member(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec ms = {0};
	hd_task_spec ts = {0};
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_turn_state st;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	assert_hd_ok(hd_room_post(NULL, fx->st, "dev", "peer", "coder",
			 "Morning all.", &err),
	    &err); /* seq 1 */
	ts.team = "dev";
	ts.subject = "Fix the bug";
	assert_hd_ok(hd_board_create(NULL, fx->st, &ts, &err), &err); /* 2 */
	ms.team = "dev";
	ms.from = "coder";
	ms.to = "manager";
	ms.content = "Need a review";
	assert_hd_ok(hd_mailbox_send(NULL, fx->st, &ms, &err), &err);

	fake_init(&f, fx->st);
	f.during = assign_then_complete;
	fake_rule_add(&f, "manager",
	    "I'll take the plan.\nCoder: the bug is yours.", NULL, NULL, 0);
	fake_rule_add(&f, "coder", "Fixed it.", NULL, NULL, 0);
	s = spec_for("Plan the day.", &f); /* the stimulus is seq 3 */
	run_ok(fx, &s, 3);
	assert_int_equal(f.n, 3);

	/* 1: the leader, first turn: team state, posts by others (the
	 * stimulus post left out), its mailbox, the stimulus */
	assert_string_equal(f.agents[0], "manager");
	assert_context(&f, 0, "manager", 1,
	    "=== TEAM STATE ===\n"
	    "Team: dev (dev)\n"
	    "Status: active\n"
	    "Description: N/A\n"
	    "\n"
	    "Members (2):\n"
	    "  - manager (Lead): working; last active just now\n"
	    "  - coder (Member): idle; last active just now\n"
	    "\n"
	    "Task Counts:\n"
	    "  - Pending: 1\n"
	    "  - In Progress: 0\n"
	    "  - Completed: 0\n"
	    "====================");
	assert_string_equal(f.prompts[0],
	    "[Inter-session message · from=coder · kind=peer · seq=1 · "
	    "isUser=false]\n"
	    "| Morning all.\n"
	    "\n"
	    "[Inter-session message · from=huddle · kind=system · seq=2 · "
	    "isUser=false]\n"
	    "| Task #1 \"Fix the bug\" created.\n"
	    "\n"
	    "<teammate-message teammate_id=\"coder\" type=\"message\" "
	    "summary=\"Need a review\">\n"
	    "Need a review\n"
	    "</teammate-message>\n"
	    "\n"
	    "Plan the day.");

	/* 2: a member, first turn: its team context, with the task the
	 * leader assigned it during its turn; its own post left out; the
	 * assignment posted during the leader's turn is there */
	assert_string_equal(f.agents[1], "coder");
	assert_context(&f, 1, "coder", 0,
	    "=== TEAM CONTEXT ===\n"
	    "Team: dev (dev)\n"
	    "Led by: manager\n"
	    "Members:\n"
	    "  - manager (Lead)\n"
	    "  - coder (you)\n"
	    "Your open tasks:\n"
	    "  - #1 \"Fix the bug\" (claimed)\n"
	    "====================");
	assert_string_equal(f.prompts[1],
	    "[Inter-session message · from=huddle · kind=system · seq=2 · "
	    "isUser=false]\n"
	    "| Task #1 \"Fix the bug\" created.\n"
	    "\n"
	    "[Inter-session message · from=huddle · kind=system · seq=4 · "
	    "isUser=false]\n"
	    "| Task #1 \"Fix the bug\" assigned to coder by manager.\n"
	    "\n"
	    "[Inter-session message · from=manager · kind=peer · seq=5 · "
	    "isUser=false]\n"
	    "| I'll take the plan.\n"
	    "| Coder: the bug is yours.\n"
	    "\n"
	    "Plan the day.");

	/* 3: the leader again, owed a turn for the completion: its last
	 * turn, the post that landed during its first turn (seq 4), the
	 * rest, the board's notice in its mailbox, and the continuation */
	assert_string_equal(f.agents[2], "manager");
	assert_context(&f, 2, "manager", 1,
	    "=== TEAM STATE ===\n"
	    "Team: dev (dev)\n"
	    "Status: active\n"
	    "Description: N/A\n"
	    "\n"
	    "Members (2):\n"
	    "  - manager (Lead): working; last active just now\n"
	    "  - coder (Member): idle; last active just now\n"
	    "\n"
	    "Task Counts:\n"
	    "  - Pending: 0\n"
	    "  - In Progress: 0\n"
	    "  - Completed: 1\n"
	    "====================");
	assert_string_equal(f.prompts[2],
	    "Your last turn:\n"
	    "I'll take the plan.\n"
	    "Coder: the bug is yours.\n"
	    "\n"
	    "[Inter-session message · from=huddle · kind=system · seq=4 · "
	    "isUser=false]\n"
	    "| Task #1 \"Fix the bug\" assigned to coder by manager.\n"
	    "\n"
	    "[Inter-session message · from=huddle · kind=system · seq=6 · "
	    "isUser=false]\n"
	    "| Task #1 \"Fix the bug\" completed by coder.\n"
	    "\n"
	    "[Inter-session message · from=coder · kind=peer · seq=7 · "
	    "isUser=false]\n"
	    "| Fixed it.\n"
	    "\n"
	    "<teammate-message teammate_id=\"coder\" type=\"task_update\" "
	    "summary=\"Task #1 &quot;Fix the bug&quot; completed by coder: "
	    "fixed\">\n"
	    "Task #1 \"Fix the bug\" completed by coder: fixed\n"
	    "</teammate-message>\n"
	    "\n"
	    "<teammate-message teammate_id=\"coder\" type=\"idle\" "
	    "summary=\"coder is idle\">\n"
	    "coder is idle; last finished task #1 \"Fix the bug\" "
	    "(completed)\n"
	    "</teammate-message>\n"
	    "\n"
	    "Continue the team conversation: respond to the new messages "
	    "above.");

	/* the saved state: the highest seq each prompt included */
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_int_equal(st.last_seen_seq, 7);
	assert_int_equal(st.turn_index, 2);
	assert_string_equal(st.runtime, "scripted");
	assert_null(st.native_session_id);
	assert_string_equal(
	    st.last_summary, "I'll take the plan.\nCoder: the bug is yours.");
	assert_true(st.last_event_seq > 0);
	hd_turn_state_dispose(&st);
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "coder", &err), &err);
	assert_int_equal(st.last_seen_seq, 5);
	assert_int_equal(st.turn_index, 1);
	assert_string_equal(st.last_summary, "Fixed it.");
	hd_turn_state_dispose(&st);
	fake_dispose(&f);
}

/* A busy room before the exchange: the speaker's prompt carries only what
 * fits the prompt budget, and the cursor it saves is the last post shown,
 * not the room's head, so its next turn starts right after it. */
static void
test_turn__a_busy_room_is_caught_up_within_the_budget(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_turn_state st;
	const char *first[] = {"coder"};
	char body[301], mark[32];
	int64_t last;
	fake f;
	int i;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	memset(body, 'x', 300);
	body[300] = '\0';
	for (i = 0; i < 40; i++)
		assert_hd_ok(hd_room_post(NULL, fx->st, "dev", "peer", "tester",
				 body, &err),
		    &err);
	fake_init(&f, fx->st);
	s = spec_for("Status?", &f); /* seq 41 */
	s.first_speakers = first;
	s.nfirst = 1;
	run_ok(fx, &s, 1);
	assert_true(strlen(f.prompts[0]) < HD_PROMPT_ROOM_CHARS + 200);
	assert_non_null(strstr(f.prompts[0], HD_PROMPT_ROOM_CUT));
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "coder", &err), &err);
	last = st.last_seen_seq;
	hd_turn_state_dispose(&st);
	assert_true(last > 1 && last < 40);
	snprintf(mark, sizeof(mark), " seq=%lld ", (long long)last);
	assert_non_null(strstr(f.prompts[0], mark));
	snprintf(mark, sizeof(mark), " seq=%lld ", (long long)last + 1);
	assert_null(strstr(f.prompts[0], mark));

	s.stimulus = NULL; /* the next turn resumes right after it */
	run_ok(fx, &s, 1);
	assert_non_null(strstr(f.prompts[1], mark));
	snprintf(mark, sizeof(mark), " seq=%lld ", (long long)last);
	assert_null(strstr(f.prompts[1], mark));
	fake_dispose(&f);
}

/* During coder's turn, tester and the user post to the room. */
static void
post_during(fake *f, const hd_runtime_turn *in)
{
	hd_err err = HD_ERR_INIT;

	if (strcmp(in->agent->id, "coder") != 0 || f->n != 1)
		return;
	if (hd_room_post(NULL, f->st, "dev", "peer", "tester",
		"Landed while you were busy.", &err) != 0)
		fail_msg("post: %s", err.msg);
}

static void
test_turn__posts_during_a_turn_are_delivered_next_time(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_turn_state st;
	const char *first[] = {"coder"};
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	fake_init(&f, fx->st);
	f.during = post_during;
	s = spec_for("Status?", &f); /* seq 1 */
	s.first_speakers = first;
	s.nfirst = 1;
	run_ok(fx, &s, 1); /* tester posts seq 2 during; coder's reply is 3 */
	assert_string_equal(f.prompts[0], "Status?");
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "coder", &err), &err);
	assert_int_equal(st.last_seen_seq, 1);
	assert_int_equal(st.turn_index, 1);
	assert_string_equal(st.last_summary, "coder here");
	hd_turn_state_dispose(&st);

	s.stimulus = NULL; /* no stimulus: first turns continue */
	run_ok(fx, &s, 1);
	assert_string_equal(f.prompts[1],
	    "Your last turn:\n"
	    "coder here\n"
	    "\n"
	    "[Inter-session message · from=tester · kind=peer · seq=2 · "
	    "isUser=false]\n"
	    "| Landed while you were busy.\n"
	    "\n"
	    "Continue the team conversation: respond to the new messages "
	    "above.");
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "coder", &err), &err);
	assert_int_equal(st.last_seen_seq, 2); /* its own post is not sent */
	assert_int_equal(st.turn_index, 2);
	hd_turn_state_dispose(&st);
	fake_dispose(&f);
}

static void
put_state(hd_fixture *fx, const char *agent, const char *json)
{
	hd_err err = HD_ERR_INIT;
	char key[128];

	snprintf(key, sizeof(key), "turn:team:dev:%s", agent);
	assert_hd_ok(hd_store_kv_put(fx->st, key, json, &err), &err);
}

static void
test_turn__resume_only_on_the_same_runtime(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_sessions l;
	hd_turn_state st;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	fake_init(&f, fx->st);
	fake_rule_add(&f, "manager", "one", "s-1", NULL, 0);
	s = spec_for("Go.", &f);
	run_ok(fx, &s, 1);
	assert_null(f.resumed[0]); /* nothing to resume yet */

	f.rules[0].native = "s-2"; /* the runtime rotates its session */
	run_ok(fx, &s, 1);
	assert_string_equal(f.resumed[1], "s-1");

	f.rules[0].native = NULL; /* reports none: the session goes on */
	run_ok(fx, &s, 1);
	assert_string_equal(f.resumed[2], "s-2");
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_string_equal(st.native_session_id, "s-2");
	assert_string_equal(st.runtime, "scripted");
	hd_turn_state_dispose(&st);

	/* a session left by another runtime is never handed over */
	put_state(fx, "manager",
	    "{\"last_seen_seq\":0,\"native_session_id\":\"s-9\","
	    "\"runtime\":\"codex\",\"last_summary\":\"\",\"turn_index\":3}");
	f.rules[0].native = "s-3";
	run_ok(fx, &s, 1);
	assert_null(f.resumed[3]);
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_string_equal(st.native_session_id, "s-3");
	assert_int_equal(st.turn_index, 4);
	hd_turn_state_dispose(&st);

	/* lineage: s-1 fresh, s-2 from s-1, (s-2 continued: nothing),
	 * s-3 fresh (the codex session is not its parent) */
	assert_hd_ok(hd_session_list(&l, fx->st, "manager", &err), &err);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.items[0].native_session_id, "s-1");
	assert_null(l.items[0].parent_session_id);
	assert_string_equal(l.items[1].native_session_id, "s-2");
	assert_string_equal(l.items[1].parent_session_id, "s-1");
	assert_string_equal(l.items[2].native_session_id, "s-3");
	assert_null(l.items[2].parent_session_id);
	assert_string_equal(l.items[2].runtime, "scripted");
	assert_string_equal(l.items[2].team_id, "dev");
	hd_sessions_dispose(&l);
	fake_dispose(&f);
}

static void
test_turn__malformed_state_reads_as_zeros(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_turn_state st;
	fake f;

	hd_fixture_team(fx, "dev", "manager", NULL);
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_int_equal(st.last_seen_seq, 0);
	assert_null(st.last_summary);
	hd_turn_state_dispose(&st);

	put_state(fx, "manager", "{oops");
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_int_equal(st.last_seen_seq, 0);
	assert_int_equal(st.turn_index, 0);
	assert_null(st.native_session_id);
	hd_turn_state_dispose(&st);

	/* field by field: a wrong type is a zero, the rest is kept */
	put_state(fx, "manager",
	    "{\"last_seen_seq\":\"12\",\"turn_index\":3,\"runtime\":7,"
	    "\"last_summary\":\"earlier\"}");
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_int_equal(st.last_seen_seq, 0);
	assert_int_equal(st.turn_index, 3);
	assert_null(st.runtime);
	assert_string_equal(st.last_summary, "earlier");
	hd_turn_state_dispose(&st);

	put_state(fx, "manager", "[1, 2]");
	fake_init(&f, fx->st);
	s = spec_for("Go.", &f);
	run_ok(fx, &s, 1);
	assert_non_null(strstr(f.contexts[0], "\n\n=== TEAM STATE ===\n"));
	assert_null(strstr(f.prompts[0], "Your last turn"));
	fake_dispose(&f);
}

/* Run one turn of manager replying text (or failing with error) and
 * return what was posted. */
static char *
one_reply(hd_fixture *fx, const char *text, const char *error)
{
	hd_exchange_spec s;
	hd_exchange_result res;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	fake f;
	char *body;

	/* a failed turn before left manager in error: reset, as by hand */
	assert_hd_ok(
	    hd_activity_set_status(fx->st, "manager", "idle", &err), &err);
	fake_init(&f, fx->st);
	fake_rule_add(&f, "manager", text, NULL, error, 0);
	s = spec_for(NULL, &f);
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.turns_taken, 1);
	assert_int_equal(res.turns_failed, error != NULL);
	hd_exchange_result_dispose(&res);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_true(l.n > 0);
	body = strdup(l.items[l.n - 1].body);
	assert_string_equal(l.items[l.n - 1].author, "manager");
	hd_posts_dispose(&l);
	fake_dispose(&f);
	return body;
}

static void
test_turn__what_is_posted(void **state)
{
	hd_fixture *fx = *state;
	hd_turn_state st;
	hd_err err = HD_ERR_INIT;
	char *body, *big;
	size_t i;

	hd_fixture_team(fx, "dev", "manager", NULL);
	body = one_reply(fx, "", NULL);
	assert_string_equal(body, "(no response)");
	free(body);
	body = one_reply(fx, " \n\t\r\n ", NULL);
	assert_string_equal(body, "(no response)");
	free(body);
	body = one_reply(fx, "\n  Done: shipped.\n\n", NULL);
	assert_string_equal(body, "Done: shipped.");
	free(body);
	body = one_reply(fx, NULL, "model overloaded");
	assert_string_equal(body, "[error: model overloaded]");
	free(body);
	/* invalid UTF-8 never reaches the room */
	body = one_reply(fx, "ok \xff\xfe then \xc3", NULL);
	assert_string_equal(
	    body, "ok \xef\xbf\xbd\xef\xbf\xbd then \xef\xbf\xbd");
	free(body);

	/* a reply longer than the room allows is cut on a character */
	big = malloc(150001);
	for (i = 0; i < 150000; i += 2)
		memcpy(big + i, "\xc3\xa9", 2); /* é */
	big[150000] = '\0';
	body = one_reply(fx, big, NULL);
	assert_int_equal(strlen(body), 100000);
	assert_true(hd_utf8_ok(body, strlen(body)));
	assert_string_equal(
	    body + strlen(body) - 28, "\n[reply cut to fit the room]");
	free(body);
	/* last_summary: the first 400 characters */
	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	assert_int_equal(strlen(st.last_summary), 800);
	assert_int_equal(hd_utf8_chars(st.last_summary), 400);
	hd_turn_state_dispose(&st);
	free(big);
}

static void
test_turn__real_runtimes_error_and_reply(void **state)
{
	hd_fixture *fx = *state;
	hd_agent_spec as = {0};
	hd_exchange_spec s;
	hd_exchange_result res;
	hd_err err = HD_ERR_INIT;
	json_t *cfg;
	const char *first[] = {"broken"};
	char *body;

	hd_fixture_team(fx, "dev", "manager", NULL);
	cfg = json_pack("{s:[s,s,s]}", "command", "sh", "-c",
	    "echo 'disk on fire' >&2; exit 3");
	as.id = "broken";
	as.team = "dev";
	as.runtime = "exec";
	as.runtime_config = cfg;
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	json_decref(cfg);

	memset(&s, 0, sizeof(s));
	s.team = "dev";
	s.stimulus = "Report.";
	/* no runner: hd_runtime_run with the agents' real runtimes */
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	assert_int_equal(res.turns_taken, 1);
	hd_exchange_result_dispose(&res);
	body = post_body(fx, 2);
	assert_string_equal(
	    body, "(scripted agent manager has no reply for this)");
	free(body);

	s.first_speakers = first;
	s.nfirst = 1;
	assert_hd_ok(hd_exchange_run(&res, fx->st, &s, &err), &err);
	hd_exchange_result_dispose(&res);
	body = post_body(fx, 4);
	assert_int_equal(strncmp(body, "[error: ", 8), 0);
	assert_non_null(strstr(body, "disk on fire"));
	assert_int_equal(body[strlen(body) - 1], ']');
	free(body);
}

/* The data text of the last event of kind, as stored. */
static char *
last_event_text(hd_fixture *fx, const char *kind)
{
	hd_stmt *s;
	hd_err err = HD_ERR_INIT;
	char *text = NULL;

	assert_hd_ok(hd_store_prepare(fx->st, &s,
			 "SELECT data FROM events WHERE kind = ?"
			 " ORDER BY seq DESC LIMIT 1",
			 &err),
	    &err);
	hd_stmt_bind_text(s, 1, kind);
	if (hd_stmt_step(s) == HD_ROW)
		text = strdup(hd_stmt_text(s, 0));
	hd_store_reset(s);
	assert_non_null(text);
	return text;
}

/* The stored state of manager is what json_dumps prints for its fields,
 * in their order; the cost event's data too, its real included. */
static void
expect_stored_as_jansson_prints(
    hd_fixture *fx, const char *native, int64_t microcents)
{
	hd_err err = HD_ERR_INIT;
	hd_turn_state st;
	json_t *want;
	char *raw = NULL, *text, *got;

	assert_hd_ok(
	    hd_turn_state_get(&st, fx->st, "dev", "manager", &err), &err);
	want = json_pack("{s:I, s:o, s:s, s:s, s:I, s:I}", "last_seen_seq",
	    (json_int_t)st.last_seen_seq, "native_session_id",
	    native ? json_string(native) : json_null(), "runtime", "scripted",
	    "last_summary", st.last_summary, "turn_index",
	    (json_int_t)st.turn_index, "last_event_seq",
	    (json_int_t)st.last_event_seq);
	text = json_dumps(want, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_hd_ok(
	    hd_store_kv_get(&raw, fx->st, "turn:team:dev:manager", &err), &err);
	assert_string_equal(raw, text);
	free(raw);
	free(text);
	json_decref(want);
	want = json_pack("{s:s, s:i, s:f, s:I, s:I, s:I, s:b}", "room_id",
	    "team:dev", "turn", 1, "usd", (double)microcents / 1e8,
	    "microcents", (json_int_t)microcents, "input_tokens", (json_int_t)0,
	    "output_tokens", (json_int_t)0, "estimated", 0);
	text = json_dumps(want, JSON_COMPACT | JSON_PRESERVE_ORDER);
	got = last_event_text(fx, "cost");
	assert_string_equal(got, text);
	free(got);
	free(text);
	json_decref(want);
	hd_turn_state_dispose(&st);
}

static void
test_turn__state_and_cost_are_stored_as_jansson_prints_them(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	char reply[1024];
	size_t i;
	fake f;

	hd_fixture_team(fx, "dev", "manager", NULL);
	fake_init(&f, fx->st);
	fake_rule_add(&f, "manager", "short \"and\" sweet", "s\\1", NULL, 5400);
	s = spec_for("Go.", &f);
	run_ok(fx, &s, 1);
	expect_stored_as_jansson_prints(fx, "s\\1", 5400);
	/* a summary of control characters and quotes: every one escaped,
	 * longer than any buffer a state is first printed into */
	for (i = 0; i < 450; i++)
		reply[i] = i % 4 == 3 ? '"' : '\x01';
	memcpy(reply + 450, "end", 4);
	f.rules[0].text = reply;
	f.rules[0].native = NULL;
	f.rules[0].microcents = 123456789;
	run_ok(fx, &s, 1);
	expect_stored_as_jansson_prints(fx, "s\\1", 123456789);
	fake_dispose(&f);
}

/* Every field of each agent's state, through this store (whose memo kept
 * what the saves wrote) and through a fresh connection (which parses the
 * stored text), is the same. */
static void
expect_states_read_alike(hd_fixture *fx, const char *const *agents)
{
	hd_store *fresh = NULL;
	hd_turn_state a, b;
	hd_err err = HD_ERR_INIT;
	size_t i;

	assert_hd_ok(hd_store_open(&fresh, fx->home, &err), &err);
	for (i = 0; agents[i] != NULL; i++) {
		assert_hd_ok(
		    hd_turn_state_get(&a, fx->st, "dev", agents[i], &err),
		    &err);
		assert_hd_ok(
		    hd_turn_state_get(&b, fresh, "dev", agents[i], &err), &err);
		assert_int_equal(a.last_seen_seq, b.last_seen_seq);
		assert_int_equal(a.turn_index, b.turn_index);
		assert_int_equal(a.last_event_seq, b.last_event_seq);
		if (a.native_session_id == NULL || b.native_session_id == NULL)
			assert_ptr_equal(
			    a.native_session_id, b.native_session_id);
		else
			assert_string_equal(
			    a.native_session_id, b.native_session_id);
		assert_string_equal(a.runtime, b.runtime);
		assert_string_equal(a.last_summary, b.last_summary);
		hd_turn_state_dispose(&a);
		hd_turn_state_dispose(&b);
	}
	hd_store_close(fresh);
}

/* A long-lived process keeps the parses of the states it saved and of the
 * configs it ran (the store's memo): what it reads back is what parsing
 * the stored text gives, an empty session id included, and a config
 * changed in between is the one that runs. */
static void
test_turn__kept_parses_read_as_the_stored_text(void **state)
{
	hd_fixture *fx = *state;
	static const char *const agents[] = {"manager", "coder", NULL};
	const char *first[] = {"manager", "coder"};
	hd_exchange_spec s;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	fake_init(&f, fx->st);
	fake_rule_add(&f, "manager", "planned", "", NULL, 0);
	fake_rule_add(&f, "coder", "built \"it\"\n\tok", "s-1", NULL, 0);
	s = spec_for("Go.", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	run_ok(fx, &s, 2);
	expect_states_read_alike(fx, agents);
	run_ok(fx, &s, 2); /* its states come from the memo */
	expect_states_read_alike(fx, agents);
	fake_dispose(&f);

	/* the scripted runtime, its config changed between two exchanges */
	assert_hd_ok(hd_store_exec(fx->st,
			 "UPDATE agents SET runtime_config = "
			 "'{\"default\": \"first\"}' WHERE id = 'manager'",
			 &err),
	    &err);
	memset(&s, 0, sizeof(s));
	s.team = "dev";
	s.stimulus = "Go.";
	run_ok(fx, &s, 1);
	assert_hd_ok(hd_store_exec(fx->st,
			 "UPDATE agents SET runtime_config = "
			 "'{\"default\": \"second\"}' WHERE id = 'manager'",
			 &err),
	    &err);
	run_ok(fx, &s, 1);
	assert_hd_ok(hd_room_read(&l, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_true(l.n >= 2);
	assert_string_equal(l.items[l.n - 1].body, "second");
	assert_string_equal(l.items[l.n - 3].body, "first");
	hd_posts_dispose(&l);
}

/* The turn's own events are printed, not dumped: their text is what a
 * compact dump in key order gives, with the values of the turn. */
static void
test_turn__turn_events_read_as_jansson_prints_them(void **state)
{
	hd_fixture *fx = *state;
	hd_exchange_spec s;
	const char *first[] = {"coder", "manager"};
	char want[512];
	char *text, *again;
	json_t *j;
	fake f;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	fake_init(&f, fx->st);
	s = spec_for("Go.", &f);
	s.first_speakers = first;
	s.nfirst = 2;
	run_ok(fx, &s, 2);
	text = last_event_text(fx, "speaker_selected");
	assert_string_equal(text,
	    "{\"room_id\":\"team:dev\",\"speaker\":\"manager\","
	    "\"policy\":\"round-robin\",\"turn\":2,\"pending\":[\"manager\"]}");
	free(text);
	text = last_event_text(fx, "turn_started");
	assert_string_equal(text, "{\"room_id\":\"team:dev\",\"turn\":2}");
	free(text);
	text = last_event_text(fx, "turn_completed");
	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	again = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(text, again);
	snprintf(want, sizeof(want),
	    "{\"room_id\":\"team:dev\",\"turn\":2,\"seq\":3,"
	    "\"reason\":\"success\",\"failed\":false,\"duration_ms\":%lld}",
	    (long long)json_integer_value(json_object_get(j, "duration_ms")));
	assert_string_equal(text, want);
	free(again);
	free(text);
	json_decref(j);
	fake_dispose(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_turn__prompts_exact_for_leader_and_member),
	    hd_fixture_test(
		test_turn__a_busy_room_is_caught_up_within_the_budget),
	    hd_fixture_test(
		test_turn__posts_during_a_turn_are_delivered_next_time),
	    hd_fixture_test(test_turn__resume_only_on_the_same_runtime),
	    hd_fixture_test(test_turn__malformed_state_reads_as_zeros),
	    hd_fixture_test(test_turn__what_is_posted),
	    hd_fixture_test(test_turn__real_runtimes_error_and_reply),
	    hd_fixture_test(
		test_turn__state_and_cost_are_stored_as_jansson_prints_them),
	    hd_fixture_test(test_turn__turn_events_read_as_jansson_prints_them),
	    hd_fixture_test(test_turn__kept_parses_read_as_the_stored_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
