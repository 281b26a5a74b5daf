/*
 * test-flow.c -- conversations end to end in one process (SPEC 7), with
 * scripted agents (and exec agents where the prompt a runtime really got
 * must be seen): a linear chain with its room posts, statuses, aggregate,
 * JSON and transcript; a fan-out of three (pending 1 4 3 2 1 0, each
 * member's prompt ending with the note about the 2 others); backflow to
 * the leader; a ping-pong stopped by the loop guard after exactly 15
 * replies (and after N when the team says so); failing agents; dropped
 * mentions; 50 concurrent conversations with no reply lost or doubled;
 * one agent's messages never overlapping while two agents' do; refusals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/mailbox.h>
#include <huddle/room.h>
#include <huddle/runtime.h>
#include <huddle/util.h>

#include "conv-test.h"

static void
test_flow__a_linear_chain(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_posts posts;
	hd_agents agents;
	hd_event_list ev;
	ct_log log;
	hd_err err = HD_ERR_INIT;
	char id[37], *s, path[4096], want[2048], date[32], line[256];
	json_t *j;
	size_t i;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1, "[@coder: build the parser]");
	ct_scripted(
	    fx, "dev", "coder", 0, "Built it. [@tester: test the parser]");
	ct_scripted(fx, "dev", "tester", 0, "All tests pass.");
	ct_log_init(&log);
	e = ct_engine(fx, &log);
	ct_ask(fx, e, "dev", "please build the parser", id);
	hd_conversation_engine_stop(e);

	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_int_equal(c->pending, 0);
	assert_int_equal(c->total_messages, 3);
	assert_string_equal(c->target, "manager");
	assert_string_equal(c->origin, "test");
	s = ct_replies(c);
	assert_string_equal(s, "manager: [@coder: build the parser] | coder: "
			       "Built it. [@tester: test the parser] | tester: "
			       "All tests pass.");
	free(s);
	assert_string_equal(c->response,
	    "@manager: \xe2\x86\x92 @coder: build the parser\n\n------\n\n"
	    "@coder: Built it. \xe2\x86\x92 @tester: test the parser\n\n"
	    "------\n\n@tester: All tests pass.");
	/* what each agent received, exactly */
	assert_int_equal(c->ndeliveries, 3);
	assert_null(c->deliveries[0].from_agent);
	assert_string_equal(c->deliveries[0].prompt, "please build the parser");
	assert_string_equal(c->deliveries[1].prompt,
	    "[Message from teammate @manager]:\nbuild the parser");
	assert_string_equal(c->deliveries[2].prompt,
	    "[Message from teammate @coder]:\nBuilt it.\n\n------\n\n"
	    "Directed to you:\ntest the parser");
	for (i = 0; i < 3; i++) {
		assert_string_equal(c->deliveries[i].state, "done");
		assert_int_equal(
		    c->replies[i].delivery_id, c->deliveries[i].id);
	}

	/* pending from the events; the callback saw each reply once */
	s = ct_pending_trail(fx, id);
	assert_string_equal(s, "1 2 2 1 0");
	free(s);
	assert_int_equal(log.n, 3);
	snprintf(line, sizeof(line),
	    "%s|2|coder|Built it. [@tester: test the "
	    "parser]",
	    id);
	assert_string_equal(log.lines[1], line);

	/* the room: the user's message, then every reply as its agent */
	assert_hd_ok(
	    hd_room_read(&posts, fx->st, "dev", 0, 0, NULL, &err), &err);
	assert_int_equal(posts.n, 4);
	assert_string_equal(posts.items[0].kind, "user");
	assert_string_equal(posts.items[0].body, "please build the parser");
	assert_string_equal(posts.items[2].kind, "peer");
	assert_string_equal(posts.items[2].author, "coder");
	assert_string_equal(
	    posts.items[2].body, "Built it. [@tester: test the parser]");
	hd_posts_dispose(&posts);

	/* every agent went working and came back idle */
	assert_hd_ok(hd_agent_list(&agents, fx->st, "dev", &err), &err);
	for (i = 0; i < agents.n; i++)
		assert_string_equal(agents.items[i].status, "idle");
	hd_agents_dispose(&agents);
	ev = ct_events(fx, "agent_status", NULL);
	assert_int_equal(ev.n, 6);
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[0].data, "to")),
	    "working");
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[1].data, "to")), "idle");
	hd_event_list_dispose(&ev);

	/* the REST shape, keys in order */
	j = hd_conversation_to_json(c);
	s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT);
	assert_non_null(strstr(s, "{\"id\":\""));
	assert_non_null(
	    strstr(s, "\",\"teamId\":\"dev\",\"status\":\"completed\","
		      "\"pending\":0,\"totalMessages\":3,"
		      "\"replies\":[{\"agent\":\"manager\",\"body\":"
		      "\"[@coder: build the parser]\",\"at\":"));
	assert_non_null(strstr(s, "],\"response\":\"@manager: "));
	assert_non_null(strstr(s, ",\"createdAt\":"));
	assert_non_null(strstr(s, ",\"completedAt\":"));
	free(s);
	json_decref(j);

	/* the transcript, byte for byte */
	assert_hd_ok(hd_conversation_transcript_path(
			 path, sizeof(path), fx->home, c, &err),
	    &err);
	s = strrchr(path, '/');
	assert_int_equal(strlen(s), 1 + 15 + 1 + 36 + 3);
	assert_memory_equal(s + 17, id, 36);
	assert_string_equal(s + 17 + 36, ".md");
	hd_time_iso(date, sizeof(date), c->created_at);
	snprintf(want, sizeof(want),
	    "# Team Conversation: Dev team (@dev)\n\nDate: %s\nMessages: 3\n\n"
	    "## User\n\nplease build the parser\n\n"
	    "## manager\n\n[@coder: build the parser]\n\n"
	    "## coder\n\nBuilt it. [@tester: test the parser]\n\n"
	    "## tester\n\nAll tests pass.\n",
	    date);
	s = hd_read_text(path);
	assert_string_equal(s, want);
	free(s);
	hd_conversation_free(c);
	ct_log_dispose(&log);
}

static void
test_flow__a_fan_out_of_three(void **state)
{
	hd_fixture *fx = *state;
	static const char *const members[] = {"coder", "reviewer", "tester"};
	static const char *const asks[] = {
	    "what did you ship?", "anything blocking?", "how are the tests?"};
	hd_conversation_engine *e;
	hd_conversation *c;
	const char *script;
	char id[37], *s, path[700], want[1024];
	size_t i, k;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1,
	    "Hosting the stand-up. [@coder: what did you ship?] [@reviewer: "
	    "anything blocking?] [@tester: how are the tests?]");
	/* the members keep the prompt their runtime received */
	script = hd_fixture_script(fx, "member.sh",
	    "cat > \"$0.$HUDDLE_AGENT\"\necho \"ok from $HUDDLE_AGENT\"");
	for (i = 0; i < 3; i++)
		ct_exec(fx, "dev", members[i], 0, script);
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "dev", "@dev run the stand-up", id);
	hd_conversation_engine_stop(e);

	s = ct_pending_trail(fx, id);
	assert_string_equal(s, "1 4 3 2 1 0");
	free(s);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s.%s", script, members[i]);
		snprintf(want, sizeof(want),
		    "[Message from teammate @manager]:\nHosting the stand-up."
		    "\n\n------\n\nDirected to you:\n%s\n\n------\n\n[2 other "
		    "teammate response(s) are still being processed and will "
		    "be delivered when ready. Do not re-mention teammates who "
		    "haven't responded yet.]",
		    asks[i]);
		s = hd_read_text(path);
		/* the whole prompt (prompt.h): who it is, its team context,
		 * the room (the user's message) and the message, last; the
		 * leader's reply that carries it is said once, as the
		 * message, not again as a room post */
		snprintf(path, sizeof(path), "You are %s, a member of team dev",
		    members[i]);
		assert_int_equal(strncmp(s, path, strlen(path)), 0);
		assert_non_null(strstr(s, "\n\n=== TEAM CONTEXT ===\n"));
		assert_non_null(strstr(s,
		    "[Inter-session message · from=user · kind=user · seq=1 · "
		    "isUser=false]\n| @dev run the stand-up\n"));
		assert_null(strstr(s, "from=manager · kind=peer"));
		assert_true(strlen(s) > strlen(want) + 2);
		assert_string_equal(s + strlen(s) - strlen(want), want);
		assert_memory_equal(
		    s + strlen(s) - strlen(want) - 2, "\n\n", 2);
		free(s);
	}
	c = ct_get(fx, id);
	assert_string_equal(c->deliveries[0].prompt, "run the stand-up");
	assert_int_equal(c->nreplies, 4);
	assert_string_equal(c->replies[0].agent, "manager");
	/* the members in completion order, each once */
	for (i = 0; i < 3; i++) {
		int seen = 0;

		for (k = 1; k < 4; k++)
			seen += strcmp(c->replies[k].agent, members[i]) == 0;
		assert_int_equal(seen, 1);
	}
	snprintf(want, sizeof(want),
	    "@manager: Hosting the stand-up. \xe2\x86\x92 @coder: what did you "
	    "ship? \xe2\x86\x92 @reviewer: anything blocking? \xe2\x86\x92 "
	    "@tester: how are the tests?\n\n------\n\n@%s: ok from %s\n\n"
	    "------\n\n@%s: ok from %s\n\n------\n\n@%s: ok from %s",
	    c->replies[1].agent, c->replies[1].agent, c->replies[2].agent,
	    c->replies[2].agent, c->replies[3].agent, c->replies[3].agent);
	assert_string_equal(c->response, want);
	hd_conversation_free(c);
}

static void
test_flow__backflow_to_the_leader(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	char id[37], *s;

	ct_team(fx, "dev", "Dev team");
	ct_agent(fx, "dev", "manager", 1, "scripted",
	    "{\"rules\": [{\"when\": \"Message from teammate @coder\", "
	    "\"reply\": \"Thanks, coder.\"}], \"default\": \"[@coder: fix the "
	    "bug]\"}");
	ct_scripted(
	    fx, "dev", "coder", 0, "Fixed. [@manager: the bug is fixed]");
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "dev", "there is a bug", id);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	s = ct_replies(c);
	assert_string_equal(s,
	    "manager: [@coder: fix the bug] | coder: Fixed. "
	    "[@manager: the bug is fixed] | manager: Thanks, "
	    "coder.");
	free(s);
	assert_int_equal(c->ndeliveries, 3);
	assert_string_equal(c->deliveries[2].to_agent, "manager");
	assert_string_equal(c->deliveries[2].from_agent, "coder");
	assert_string_equal(c->deliveries[2].prompt,
	    "[Message from teammate @coder]:\nFixed.\n\n------\n\nDirected to "
	    "you:\nthe bug is fixed");
	hd_conversation_free(c);
	s = ct_pending_trail(fx, id);
	assert_string_equal(s, "1 2 2 1 0");
	free(s);
}

static void
test_flow__a_ping_pong_stops_at_the_loop_guard(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_event_list ev;
	hd_err err = HD_ERR_INIT;
	char id[37], *s;
	int64_t max = 0;
	size_t i;

	ct_team(fx, "pp", NULL);
	ct_scripted(fx, "pp", "ping", 1, "[@pong: ping]");
	ct_scripted(fx, "pp", "pong", 0, "[@ping: pong]");
	assert_hd_ok(
	    hd_conversation_max_messages(&max, fx->st, "pp", &err), &err);
	assert_int_equal(max, 15);
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "pp", "start", id);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_int_equal(c->total_messages, 15);
	assert_int_equal(c->nreplies, 15);
	assert_int_equal(c->ndeliveries, 15);
	for (i = 0; i < 15; i++)
		assert_string_equal(
		    c->replies[i].agent, i % 2 ? "pong" : "ping");
	hd_conversation_free(c);
	s = ct_pending_trail(fx, id);
	assert_string_equal(s, "1 2 2 2 2 2 2 2 2 2 2 2 2 2 2 1 0");
	free(s);
	ev = ct_events(fx, "mention_dropped", id);
	assert_int_equal(ev.n, 1);
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[0].data, "reason")),
	    "loop guard: the conversation has 15 replies");
	assert_string_equal(
	    json_string_value(json_object_get(ev.items[0].data, "target")),
	    "pong");
	hd_event_list_dispose(&ev);

	/* configurable per team */
	assert_hd_ok(
	    hd_conversation_set_max_messages(fx->st, "pp", 4, &err), &err);
	ct_ask(fx, e, "pp", "again", id);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	assert_int_equal(c->total_messages, 4);
	assert_int_equal(c->max_messages, 4);
	hd_conversation_free(c);
}

static void
test_flow__a_failing_agent_still_completes(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	const char *script;
	char id[37], *s;
	size_t i;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1,
	    "Try it. [@coder: run it] [@codex: review it]");
	script = hd_fixture_script(fx, "broken.sh",
	    "cat >/dev/null\necho 'partial output'\necho 'it broke' >&2\n"
	    "exit 3");
	ct_exec(fx, "dev", "coder", 0, script);
	/* a real runtime whose binary is not there */
	ct_agent(fx, "dev", "codex", 0, "codex",
	    "{\"bin\": \"huddle-test-no-such-codex\"}");
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "dev", "go", id);
	hd_conversation_engine_stop(e);
	c = ct_get(fx, id);
	assert_string_equal(c->status, "completed");
	assert_int_equal(c->total_messages, 3);
	assert_int_equal(c->nreplies, 3);
	for (i = 1; i < 3; i++) {
		assert_int_equal(c->replies[i].is_error, 1);
		if (strcmp(c->replies[i].agent, "coder") == 0)
			assert_string_equal(c->replies[i].body,
			    "[error: exit status 3: it broke]");
		else
			assert_string_equal(c->replies[i].body,
			    "[error: codex: 'huddle-test-no-such-codex' not "
			    "found on PATH (runtime_config.bin)]");
	}
	assert_non_null(strstr(c->response, "@coder: [error: exit status 3: "
					    "it broke]"));
	hd_conversation_free(c);
	s = ct_pending_trail(fx, id);
	assert_string_equal(s, "1 3 2 1 0");
	free(s);
}

static void
test_flow__self_unknown_and_other_team_mentions_are_dropped(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_event_list ev;
	char id[37], got[512] = "";
	size_t i;

	ct_team(fx, "dev", "Dev team");
	ct_team(fx, "ops", NULL);
	ct_scripted(fx, "dev", "manager", 1,
	    "Sorting it. [@manager: note to self] [@ghost: hello?] "
	    "[@outsider: hi] [@CODER: real work]");
	ct_scripted(fx, "dev", "coder", 0, "done");
	ct_scripted(fx, "ops", "outsider", 1, "never asked");
	e = ct_engine(fx, NULL);
	ct_ask(fx, e, "dev", "@ghost sort it", id);
	hd_conversation_engine_stop(e);

	c = ct_get(fx, id);
	assert_string_equal(c->target, "manager");
	assert_string_equal(c->deliveries[0].prompt, "@ghost sort it");
	assert_int_equal(c->ndeliveries, 2);
	assert_string_equal(c->deliveries[1].to_agent, "coder");
	assert_string_equal(c->deliveries[1].prompt,
	    "[Message from teammate @manager]:\nSorting it.\n\n------\n\n"
	    "Directed to you:\nreal work");
	assert_int_equal(c->total_messages, 2);
	hd_conversation_free(c);
	ev = ct_events(fx, "mention_dropped", id);
	for (i = 0; i < ev.n; i++) {
		json_t *d = ev.items[i].data;
		size_t len = strlen(got);

		snprintf(got + len, sizeof(got) - len, "%s%s>%s: %s",
		    i ? "; " : "",
		    json_is_string(json_object_get(d, "from"))
			? json_string_value(json_object_get(d, "from"))
			: "user",
		    json_string_value(json_object_get(d, "target")),
		    json_string_value(json_object_get(d, "reason")));
	}
	assert_string_equal(got,
	    "user>ghost: no member of that name: sent to the leader; "
	    "manager>manager: self-mention; manager>ghost: unknown agent; "
	    "manager>outsider: not in team dev");
	hd_event_list_dispose(&ev);
}

static void
test_flow__fifty_concurrent_conversations(void **state)
{
	hd_fixture *fx = *state;
	enum { N = 50 };
	hd_conversation_spec spec = {"dev", NULL, "test"};
	hd_conversation_engine *e;
	hd_conversation *c;
	hd_posts posts;
	ct_log log;
	hd_err err = HD_ERR_INIT;
	char ids[N][37], msg[32];
	size_t i, k, j;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1,
	    "Go. [@coder: a] [@reviewer: b] [@tester: c]");
	ct_scripted(fx, "dev", "coder", 0, "done coding");
	ct_scripted(fx, "dev", "reviewer", 0, "done reviewing");
	ct_scripted(fx, "dev", "tester", 0, "done testing");
	ct_log_init(&log);
	e = ct_engine(fx, &log);
	for (i = 0; i < N; i++) {
		snprintf(msg, sizeof(msg), "job %zu", i);
		spec.message = msg;
		assert_hd_ok(
		    hd_conversation_start(ids[i], e, fx->st, &spec, &err),
		    &err);
	}
	for (i = 0; i < N; i++)
		assert_hd_ok(
		    hd_conversation_wait(e, fx->st, ids[i], CT_WAIT_MS, &err),
		    &err);
	hd_conversation_engine_stop(e);

	for (i = 0; i < N; i++) {
		c = ct_get(fx, ids[i]);
		assert_string_equal(c->status, "completed");
		assert_int_equal(c->nreplies, 4);
		assert_int_equal(c->total_messages, 4);
		assert_int_equal(c->ndeliveries, 4);
		/* one reply per delivery, each delivery answered once */
		for (k = 0; k < 4; k++) {
			int n = 0;

			assert_string_equal(c->deliveries[k].state, "done");
			for (j = 0; j < 4; j++)
				n += c->replies[j].delivery_id ==
				     c->deliveries[k].id;
			assert_int_equal(n, 1);
		}
		assert_string_equal(c->replies[0].body,
		    "Go. [@coder: a] [@reviewer: b] [@tester: c]");
		hd_conversation_free(c);
	}
	/* the callback saw 200 replies, no (conversation, seq) twice */
	assert_int_equal(log.n, 4 * N);
	for (i = 0; i < log.n; i++)
		for (k = i + 1; k < log.n; k++) {
			size_t a = strcspn(log.lines[i], "|") + 1;

			a += strcspn(log.lines[i] + a, "|");
			if (strncmp(log.lines[i], log.lines[k], a) == 0 &&
			    log.lines[k][a] == '|')
				fail_msg("reply twice: %s", log.lines[i]);
		}
	assert_hd_ok(
	    hd_room_read(&posts, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_int_equal(posts.n, 5 * N);
	hd_posts_dispose(&posts);
	ct_log_dispose(&log);
}

static void
test_flow__one_agent_at_a_time_agents_in_parallel(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_spec spec = {"dev", NULL, "test"};
	const char *msgs[] = {"@coder one", "@coder two", "@reviewer three"};
	hd_conversation_engine *e;
	hd_conversation *c[3];
	hd_err err = HD_ERR_INIT;
	char ids[3][37];
	const hd_conversation_delivery *d1, *d2, *d3;
	hd_agent *a = NULL;
	hd_event_filter ef;
	hd_event_list el;
	hd_messages inbox;
	size_t i, n;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1, "unused");
	ct_agent(fx, "dev", "coder", 0, "scripted",
	    "{\"default\": \"coded\", \"delay_ms\": 1000}");
	ct_agent(fx, "dev", "reviewer", 0, "scripted",
	    "{\"default\": \"reviewed\", \"delay_ms\": 1000}");
	e = ct_engine(fx, NULL);
	for (i = 0; i < 3; i++) {
		spec.message = msgs[i];
		assert_hd_ok(
		    hd_conversation_start(ids[i], e, fx->st, &spec, &err),
		    &err);
	}
	for (i = 0; i < 3; i++) {
		assert_hd_ok(
		    hd_conversation_wait(e, fx->st, ids[i], CT_WAIT_MS, &err),
		    &err);
		c[i] = ct_get(fx, ids[i]);
		assert_int_equal(c[i]->ndeliveries, 1);
	}
	hd_conversation_engine_stop(e);
	d1 = &c[0]->deliveries[0];
	d2 = &c[1]->deliveries[0];
	d3 = &c[2]->deliveries[0];
	assert_string_equal(d1->to_agent, "coder");
	assert_string_equal(d2->to_agent, "coder");
	assert_string_equal(d3->to_agent, "reviewer");
	assert_true(d1->id < d2->id);
	/* coder: the first message, then the second, never both */
	assert_true(d1->started_at <= d1->finished_at);
	assert_true(d1->finished_at <= d2->started_at);
	/* coder and reviewer at the same time */
	assert_true(d1->started_at < d3->finished_at);
	assert_true(d3->started_at < d1->finished_at);
	for (i = 0; i < 3; i++)
		hd_conversation_free(c[i]);
	/* coder's two turns ran back to back: working throughout, then idle
	 * once, no turn left counted (activity.h) */
	assert_hd_ok(hd_agent_get(&a, fx->st, "coder", &err), &err);
	assert_string_equal(a->status, "idle");
	assert_int_equal(a->turns, 0);
	hd_agent_free(a);
	memset(&ef, 0, sizeof(ef));
	ef.team = "dev";
	ef.kind = "agent_status";
	assert_hd_ok(hd_events_list(&el, fx->st, &ef, &err), &err);
	for (i = 0, n = 0; i < el.n; i++)
		n += strcmp(el.items[i].agent_id, "coder") == 0;
	assert_int_equal(n, 2);
	hd_event_list_dispose(&el);
	assert_hd_ok(hd_mailbox_peek(&inbox, fx->st, "manager", 0, &err), &err);
	for (i = 0, n = 0; i < inbox.n; i++)
		n += strcmp(inbox.items[i].from_agent, "coder") == 0 &&
		     strcmp(inbox.items[i].type, "idle") == 0;
	assert_int_equal(n, 1);
	hd_messages_dispose(&inbox);
}

static void
test_flow__refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_conversation_spec spec = {"dev", NULL, NULL};
	hd_conversation_engine *e;
	hd_conversation *none = NULL;
	hd_err err = HD_ERR_INIT;
	char id[37], *big;

	ct_team(fx, "dev", "Dev team");
	ct_scripted(fx, "dev", "manager", 1, "ok");
	ct_scripted(fx, "dev", "coder", 0, "ok");
	ct_team(fx, "solo", NULL);
	ct_scripted(fx, "solo", "loner", 0, "alone");
	e = ct_engine(fx, NULL);

	spec.message = "";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EINVAL, "message must not be empty", &err);
	spec.message = "@coder ";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EINVAL, "message must not be empty", &err);
	spec.message = " \n\t";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EINVAL, "message must not be empty", &err);
	spec.message = "@coder \n ";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EINVAL, "message must not be empty", &err);
	big = malloc(100002);
	memset(big, 'x', 100001);
	big[100001] = '\0';
	spec.message = big;
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_ETOOBIG, "message is 100001 bytes; the limit is 100000", &err);
	free(big);
	spec.message = "bad \xff byte";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EINVAL, "message must be valid UTF-8", &err);
	spec.message = "hi";
	spec.team = "ghost";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_ENOTFOUND, "team \"ghost\" not found", &err);
	spec.team = "solo";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EREFUSED,
	    "team \"solo\" has no leader: address an agent with @<agent>",
	    &err);
	spec.message = "@loner hi";
	assert_hd_ok(hd_conversation_start(id, e, fx->st, &spec, &err), &err);
	assert_hd_ok(
	    hd_conversation_wait(e, fx->st, id, CT_WAIT_MS, &err), &err);
	assert_hd_ok(hd_team_set_status(fx->st, "dev", "shutdown", &err), &err);
	spec.team = "dev";
	spec.message = "hi";
	assert_hd_err(hd_conversation_start(id, e, fx->st, &spec, &err),
	    HD_EREFUSED, "team \"dev\" is not active (status: shutdown)", &err);
	assert_hd_err(hd_conversation_get(&none, fx->st, "nope", &err),
	    HD_ENOTFOUND, "conversation \"nope\" not found", &err);
	assert_hd_err(hd_conversation_set_max_messages(fx->st, "dev", 0, &err),
	    HD_EINVAL, "max messages must be between 1 and 1000", &err);
	assert_hd_err(
	    hd_conversation_set_max_messages(fx->st, "dev", 1001, &err),
	    HD_EINVAL, "max messages must be between 1 and 1000", &err);
	assert_hd_err(hd_conversation_set_max_messages(fx->st, "nope", 5, &err),
	    HD_ENOTFOUND, "team \"nope\" not found", &err);
	assert_hd_err(hd_conversation_wait(e, fx->st, "nope", 10, &err),
	    HD_ENOTFOUND, "conversation \"nope\" not found", &err);
	hd_conversation_engine_stop(e);
}

static void
test_flow__max_messages_from_a_team_file(void **state)
{
	hd_fixture *fx = *state;
	hd_apply_report rep;
	hd_err err = HD_ERR_INIT;
	int64_t max = 0;
	json_t *doc;

	doc = json_pack("{s:s, s:i, s:[{s:s, s:b}]}", "team", "pp",
	    "max_messages", 7, "agents", "id", "ping", "leader", 1);
	assert_hd_ok(
	    hd_team_apply_json(
		&rep, fx->st, doc, "pp.json", hd_runtime_check_config, &err), &err);
	assert_int_equal(rep.changed, 1);
	hd_apply_report_dispose(&rep);
	assert_hd_ok(
	    hd_conversation_max_messages(&max, fx->st, "pp", &err), &err);
	assert_int_equal(max, 7);
	/* unchanged: nothing written */
	assert_hd_ok(
	    hd_team_apply_json(
		&rep, fx->st, doc, "pp.json", hd_runtime_check_config, &err), &err);
	assert_int_equal(rep.changed, 0);
	hd_apply_report_dispose(&rep);
	json_object_set_new(doc, "max_messages", json_integer(9));
	assert_hd_ok(
	    hd_team_apply_json(
		&rep, fx->st, doc, "pp.json", hd_runtime_check_config, &err), &err);
	assert_int_equal(rep.changed, 1);
	assert_string_equal(
	    json_string_value(json_object_get(rep.json, "action")), "updated");
	hd_apply_report_dispose(&rep);
	assert_hd_ok(
	    hd_conversation_max_messages(&max, fx->st, "pp", &err), &err);
	assert_int_equal(max, 9);
	json_object_set_new(doc, "max_messages", json_integer(0));
	assert_hd_err(hd_team_apply_json(
		&rep, fx->st, doc, "pp.json", hd_runtime_check_config, &err),
	    HD_EINVAL,
	    "pp.json: max_messages must be an integer from 1 to 1000", &err);
	hd_apply_report_dispose(&rep);
	json_decref(doc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_flow__a_linear_chain),
	    hd_fixture_test(test_flow__a_fan_out_of_three),
	    hd_fixture_test(test_flow__backflow_to_the_leader),
	    hd_fixture_test(test_flow__a_ping_pong_stops_at_the_loop_guard),
	    hd_fixture_test(test_flow__a_failing_agent_still_completes),
	    hd_fixture_test(
		test_flow__self_unknown_and_other_team_mentions_are_dropped),
	    hd_fixture_test(test_flow__fifty_concurrent_conversations),
	    hd_fixture_test(test_flow__one_agent_at_a_time_agents_in_parallel),
	    hd_fixture_test(test_flow__refusals),
	    hd_fixture_test(test_flow__max_messages_from_a_team_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
