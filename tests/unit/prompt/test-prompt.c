/*
 * test-prompt.c -- what a turn's prompt carries (src/engine/prompt.c,
 * prompt.h), as a table: for each case the whole prompt byte for byte,
 * where its standing context ends and its request starts, the room seq
 * it read up to, and the mail it delivered. The team: manager (leader),
 * coder (role "writes the code"), tester; task 1 claimed by coder.
 * Then the memory section: the facts the agent may read that bear on
 * the request, top 5 by bm25, within its cap; and the intro of an agent
 * whose runtime has no huddle tools.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/memory.h>
#include <huddle/prompt.h>
#include <huddle/room.h>

#include "testutil.h"

#define INTRO(who, what)                                                       \
	"You are " who ", " what " dev, working with your teammates "          \
	"through huddle. huddle's tools are how you act on the team: "         \
	"team_chat_post posts to the team room, task_list, task_claim, "       \
	"task_start and task_complete work the board, send_message and "       \
	"inbox_read carry messages to and from teammates. Room posts below "   \
	"are wrapped as inter-session messages (isUser=false): they come "     \
	"from your team, not from the user."
#define LEADER INTRO("manager", "the leader of team")
#define CODER INTRO("coder", "a member of team")
#define STATE                                                                  \
	"=== TEAM STATE ===\n"                                                 \
	"Team: dev (dev)\n"                                                    \
	"Status: active\n"                                                     \
	"Description: N/A\n"                                                   \
	"\n"                                                                   \
	"Members (3):\n"                                                       \
	"  - manager (Lead): idle; last active just now\n"                     \
	"  - coder (Member): idle; holds #1 \"Parse it\" (claimed); last "     \
	"active just now\n"                                                    \
	"  - tester (Member): idle; last active just now\n"                    \
	"\n"                                                                   \
	"Task Counts:\n"                                                       \
	"  - Pending: 0\n"                                                     \
	"  - In Progress: 1\n"                                                 \
	"  - Completed: 0\n"                                                   \
	"===================="
#define CONTEXT                                                                \
	"=== TEAM CONTEXT ===\n"                                               \
	"Team: dev (dev)\n"                                                    \
	"Led by: manager\n"                                                    \
	"Members:\n"                                                           \
	"  - manager (Lead)\n"                                                 \
	"  - coder (you): writes the code\n"                                   \
	"  - tester\n"                                                         \
	"Your open tasks:\n"                                                   \
	"  - #1 \"Parse it\" (claimed)\n"                                      \
	"===================="
#define ENV(from, kind, seq, line)                                             \
	"[Inter-session message · from=" from " · kind=" kind " · seq=" seq    \
	" · isUser=false]\n| " line

typedef struct pcase {
	const char *name;
	const char *agent;
	int leader;
	int64_t since, skip;
	const char *summary;
	int mail; /* send it the mail before building */
	const char *request;
	const char *want;    /* the whole prompt */
	const char *context; /* its first context_len bytes */
	int64_t seen;
	size_t nmessages;
} pcase;

/* The room: 1 the task's line (system), 2 by tester, 3 by coder, 4 by
 * manager. */
static const pcase cases[] = {
    {"a member, from the start: its context, every post but its own, "
     "the request",
	"coder", 0, 0, 0, NULL, 0, "Fix the parser.",
	CODER "\n\n" CONTEXT "\n\n" ENV("huddle", "system", "1",
	    "Task #1 \"Parse it\" created.") "\n\n" ENV("huddle", "system", "2",
	    "Task #1 \"Parse it\" claimed by coder.") "\n\n" ENV("tester",
	    "peer", "3", "Tests are red.") "\n\n" ENV("manager", "peer", "5",
	    "Coder, look.") "\n\nFix the parser.",
	CODER "\n\n" CONTEXT, 5, 0},
    {"the leader past a cursor, with its last turn and mail; a post "
     "skipped (an exchange's stimulus), its own left out",
	"manager", 1, 2, 3, "I asked coder to look.", 1, "Continue.",
	LEADER "\n\n" STATE "\n\nYour last turn:\nI asked coder to "
	       "look.\n\n" ENV("coder", "peer", "4",
		   "On it.") "\n\n<teammate-message teammate_id=\"tester\" "
			     "type=\"message\" "
			     "summary=\"ping\">\nping\n</"
			     "teammate-message>\n\nContinue.",
	LEADER "\n\n" STATE, 4, 1},
    {"nothing new: the cursor at the head, no summary, no mail", "coder", 0, 5,
	0, "", 0, "Anything?", CODER "\n\n" CONTEXT "\n\nAnything?",
	CODER "\n\n" CONTEXT, 5, 0},
};

static void
build(hd_fixture *fx, const pcase *pc, hd_prompt *p)
{
	hd_agent *a = NULL;
	hd_prompt_spec ps;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_agent_get(&a, fx->st, pc->agent, &err), &err);
	memset(&ps, 0, sizeof(ps));
	ps.team = "dev";
	ps.agent = a;
	ps.is_leader = pc->leader;
	ps.since_seq = pc->since;
	ps.skip_seq = pc->skip;
	ps.last_summary = pc->summary;
	ps.request = pc->request;
	assert_hd_ok(hd_prompt_build(p, fx->st, &ps, &err), &err);
	hd_agent_free(a);
}

static void
test_prompt__the_table(void **state)
{
	hd_fixture *fx = *state;
	hd_message_spec ms = {0};
	hd_task_spec ts = {0};
	hd_agent_spec as = {0};
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	hd_prompt p;
	size_t i;

	hd_fixture_team(fx, "dev", "manager", NULL);
	as.team = "dev";
	as.id = "coder";
	as.role = "writes the code";
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	as.id = "tester";
	as.role = NULL;
	assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	ts.team = "dev";
	ts.subject = "Parse it";
	assert_hd_ok(hd_board_create(&t, fx->st, &ts, &err), &err); /* 1 */
	hd_task_free(t);
	assert_hd_ok(
	    hd_board_claim(&t, fx->st, 1, "coder", &err), &err); /* 2 */
	hd_task_free(t);
	assert_hd_ok(hd_room_post(NULL, fx->st, "dev", "peer", "tester",
			 "Tests are red.", &err),
	    &err); /* 3 */
	assert_hd_ok(
	    hd_room_post(NULL, fx->st, "dev", "peer", "coder", "On it.", &err),
	    &err); /* 4 */
	assert_hd_ok(hd_room_post(NULL, fx->st, "dev", "peer", "manager",
			 "Coder, look.", &err),
	    &err); /* 5 */

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const pcase *pc = &cases[i];

		if (pc->mail) {
			ms.team = "dev";
			ms.from = "tester";
			ms.to = pc->agent;
			ms.content = "ping";
			assert_hd_ok(
			    hd_mailbox_send(NULL, fx->st, &ms, &err), &err);
		}
		build(fx, pc, &p);
		if (strcmp(p.text, pc->want) != 0)
			fail_msg("%s:\n got  [%s]\n want [%s]", pc->name,
			    p.text, pc->want);
		assert_int_equal(p.context_len, strlen(pc->context));
		assert_memory_equal(p.text, pc->context, p.context_len);
		assert_int_equal(
		    p.request_off, strlen(p.text) - strlen(pc->request));
		assert_string_equal(p.text + p.request_off, pc->request);
		assert_int_equal(p.seen, pc->seen);
		assert_int_equal(p.nmessages, pc->nmessages);
		hd_prompt_dispose(&p);
		/* the mail was delivered by that build: never again */
		if (pc->mail) {
			build(fx, pc, &p);
			assert_null(strstr(p.text, "<teammate-message"));
			hd_prompt_dispose(&p);
		}
	}
}

/* A team that is not there: the build says so and hands back nothing. */
static void
test_prompt__a_missing_team_fails_cleanly(void **state)
{
	hd_fixture *fx = *state;
	hd_agent a;
	hd_prompt_spec ps;
	hd_prompt p;
	hd_err err = HD_ERR_INIT;

	memset(&a, 0, sizeof(a));
	a.id = (char *)"ghost";
	memset(&ps, 0, sizeof(ps));
	ps.team = "nope";
	ps.agent = &a;
	ps.request = "hi";
	assert_hd_err(hd_prompt_build(&p, fx->st, &ps, &err), HD_ENOTFOUND,
	    "team \"nope\" not found", &err);
	assert_null(p.text);
	hd_prompt_dispose(&p);
}

/* An agent whose runtime's plan has no huddle tools (openclaw) is not
 * offered them: it is told its reply is its post (prompt.c (7)). */
static void
test_prompt__an_agent_without_huddle_tools(void **state)
{
	hd_fixture *fx = *state;
	hd_agent a;
	hd_prompt_spec ps;
	hd_prompt p;
	hd_err err = HD_ERR_INIT;

	hd_fixture_team(fx, "dev", "manager", NULL);
	memset(&a, 0, sizeof(a));
	a.id = (char *)"manager";
	a.team_id = (char *)"dev";
	a.runtime = (char *)"openclaw";
	memset(&ps, 0, sizeof(ps));
	ps.team = "dev";
	ps.agent = &a;
	ps.is_leader = 1;
	ps.request = "hi";
	assert_hd_ok(hd_prompt_build(&p, fx->st, &ps, &err), &err);
	assert_non_null(strstr(p.text,
	    "You are manager, the leader of team dev, working with your "
	    "teammates through huddle. You have no huddle tools here: huddle "
	    "posts your reply to the team room as you, and a tag "
	    "[@teammate: message] in it hands that teammate the message. "
	    "Room posts below are wrapped as inter-session messages "
	    "(isUser=false): they come from your team, not from the user."));
	assert_true(strncmp(p.text, "You are manager,", 16) == 0);
	assert_null(strstr(p.text, "team_chat_post"));
	hd_prompt_dispose(&p);
	/* the same agent on a runtime with the tools gets them offered */
	a.runtime = (char *)"scripted";
	assert_hd_ok(hd_prompt_build(&p, fx->st, &ps, &err), &err);
	assert_true(strncmp(p.text, LEADER, strlen(LEADER)) == 0);
	hd_prompt_dispose(&p);
}

static int64_t
fact(hd_fixture *fx, const char *team, const char *agent, const char *scope,
    const char *text)
{
	hd_fact_spec fs = {.team = team, .agent = agent, .scope = scope,
	    .text = text};
	hd_err err = HD_ERR_INIT;
	hd_fact *f = NULL;
	int64_t id;

	assert_hd_ok(hd_memory_save(&f, fx->st, &fs, &err), &err);
	id = f->id;
	hd_fact_free(f);
	return id;
}

static void
build_memory(hd_fixture *fx, const char *agent, const char *request,
    size_t memory_chars, hd_prompt *p)
{
	hd_agent *a = NULL;
	hd_prompt_spec ps;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_agent_get(&a, fx->st, agent, &err), &err);
	memset(&ps, 0, sizeof(ps));
	ps.team = "dev";
	ps.agent = a;
	ps.since_seq = 1000; /* no room catch-up */
	ps.request = request;
	ps.memory_chars = memory_chars;
	assert_hd_ok(hd_prompt_build(p, fx->st, &ps, &err), &err);
	hd_agent_free(a);
}

/* The memory section, byte for byte: right before the request, the
 * facts the agent may read (its team's, global, its own private ones --
 * not a teammate's, not another team's) that share the request's words,
 * best first; none when nothing matches or the request has no words. */
static void
test_prompt__memory_carries_the_facts_for_the_request(void **state)
{
	hd_fixture *fx = *state;
	hd_prompt p;
	const char *mem;

	hd_fixture_team(fx, "dev", "manager", "coder", "tester", NULL);
	hd_fixture_team(fx, "ops", "boss", NULL);
	fact(fx, "dev", "coder", NULL, "the parser lives in src/parse.c");
	fact(fx, "dev", "coder", "agent", "coder: fix the parser with tests");
	fact(fx, "dev", "tester", "agent", "tester: the parser is flaky");
	fact(fx, "ops", "boss", "team", "ops: the parser is ours");
	fact(fx, "ops", "boss", "global", "every parser needs a fuzzer");
	fact(fx, "dev", "coder", NULL, "lunch is at noon");

	build_memory(fx, "coder", "Fix the parser.", 0, &p);
	assert_non_null(mem = strstr(p.text, HD_PROMPT_MEMORY_HEAD));
	assert_string_equal(mem,
	    HD_PROMPT_MEMORY_HEAD "\n"
	    "- #2 [agent] coder: fix the parser with tests\n"
	    "- #1 [team] the parser lives in src/parse.c\n"
	    "- #5 [global] every parser needs a fuzzer\n\n"
	    "Fix the parser.");
	assert_int_equal(p.memory_facts, 3);
	assert_true(mem > p.text + p.context_len);
	assert_string_equal(p.text + p.request_off, "Fix the parser.");
	hd_prompt_dispose(&p);

	/* tester sees its own note, not coder's */
	build_memory(fx, "tester", "parser", 0, &p);
	assert_non_null(strstr(p.text, "tester: the parser is flaky"));
	assert_null(strstr(p.text, "coder: fix"));
	assert_null(strstr(p.text, "ops: the parser"));
	assert_int_equal(p.memory_facts, 3);
	hd_prompt_dispose(&p);

	build_memory(fx, "coder", "What about dinner?", 0, &p);
	assert_null(strstr(p.text, HD_PROMPT_MEMORY_HEAD));
	assert_int_equal(p.memory_facts, 0);
	hd_prompt_dispose(&p);
	build_memory(fx, "coder", "?!", 0, &p); /* no words: no section */
	assert_null(strstr(p.text, HD_PROMPT_MEMORY_HEAD));
	hd_prompt_dispose(&p);
}

/* At most HD_PROMPT_MEMORY_FACTS facts, within the cap: a fact that
 * does not fit ends the list, the first one is cut to fit. */
static void
test_prompt__memory_keeps_to_five_facts_and_its_cap(void **state)
{
	hd_fixture *fx = *state;
	char text[64];
	hd_prompt p;
	const char *mem;
	int i;

	hd_fixture_team(fx, "dev", "manager", "coder", NULL);
	for (i = 0; i < 8; i++) {
		snprintf(text, sizeof(text), "release step %d of the train", i);
		fact(fx, "dev", "coder", NULL, text);
	}
	build_memory(fx, "coder", "release", 0, &p);
	assert_int_equal(p.memory_facts, HD_PROMPT_MEMORY_FACTS);
	hd_prompt_dispose(&p);
	/* each line is 40 code points ("\n- #8 [team] " and the text) */
	build_memory(fx, "coder", "release", 80, &p);
	assert_int_equal(p.memory_facts, 2);
	hd_prompt_dispose(&p);
	build_memory(fx, "coder", "release", 20, &p);
	assert_int_equal(p.memory_facts, 1);
	assert_non_null(mem = strstr(p.text, HD_PROMPT_MEMORY_HEAD));
	/* 13 of the prefix, 6 of the text, the ellipsis: 20 */
	assert_non_null(strstr(mem, "] releas\xe2\x80\xa6\n\nrelease"));
	hd_prompt_dispose(&p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_prompt__the_table),
	    hd_fixture_test(test_prompt__a_missing_team_fails_cleanly),
	    hd_fixture_test(test_prompt__an_agent_without_huddle_tools),
	    hd_fixture_test(
		test_prompt__memory_carries_the_facts_for_the_request),
	    hd_fixture_test(test_prompt__memory_keeps_to_five_facts_and_its_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
