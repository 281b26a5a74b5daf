/*
 * test-select.c -- the pure parts of an exchange (SPEC 8): speaker
 * selection as a table of every rule and tie-break, the turn clamp, and
 * single-leader normalisation.
 */
#include <string.h>

#include <huddle/exchange.h>

#include "testutil.h"

#define MAXP 6

typedef struct select_case {
	const char *name;
	const char *ids[MAXP]; /* NULL-terminated participants */
	int leader;            /* index or -1 */
	const char *pending;   /* one '1'/'0' per participant */
	int turns[MAXP];
	int last; /* index or -1 */
	int want_speaker;
	hd_speaker_policy want_policy;
} select_case;

static const select_case cases[] = {
    /* rule 2 and 3: nothing pending */
    {"nothing pending: the leader is nominated", {"manager", "coder", "tester"},
	0, "000", {0, 0, 0}, -1, 0, HD_POLICY_LEADER_NOMINATED},
    {"nothing pending, a member spoke last: still the leader",
	{"manager", "coder", "tester"}, 0, "000", {1, 1, 0}, 1, 0,
	HD_POLICY_LEADER_NOMINATED},
    {"nothing pending, the leader spoke last: nobody",
	{"manager", "coder", "tester"}, 0, "000", {1, 0, 0}, 0, -1,
	HD_POLICY_NONE},
    {"nothing pending and no leader: nobody", {"coder", "tester"}, -1, "00",
	{0, 0}, -1, -1, HD_POLICY_NONE},
    {"a leader that is not first in the list is nominated",
	{"amy", "boss", "kim"}, 1, "000", {0, 0, 0}, 2, 1,
	HD_POLICY_LEADER_NOMINATED},
    /* rule 1: round-robin among the obligated */
    {"one pending: it speaks", {"manager", "coder", "tester"}, 0, "001",
	{0, 0, 0}, -1, 2, HD_POLICY_ROUND_ROBIN},
    {"a pending leader is served round-robin, not nominated",
	{"manager", "coder"}, 0, "10", {0, 0}, 1, 0, HD_POLICY_ROUND_ROBIN},
    {"ties are broken by id", {"manager", "tester", "coder"}, 0, "011",
	{0, 0, 0}, -1, 2, HD_POLICY_ROUND_ROBIN},
    {"ties are broken by byte order, not by number", {"a9", "a10"}, -1, "11",
	{0, 0}, -1, 1, HD_POLICY_ROUND_ROBIN},
    {"byte order: '-' (0x2d) sorts before '_' (0x5f)", {"coder_1", "coder-2"},
	-1, "11", {0, 0}, -1, 1, HD_POLICY_ROUND_ROBIN},
    {"the list order does not matter, only the ids", {"zed", "amy", "kim"}, -1,
	"111", {0, 0, 0}, -1, 1, HD_POLICY_ROUND_ROBIN},
    {"fewest turns first, before id order", {"amy", "bob", "cat"}, -1, "111",
	{2, 1, 3}, -1, 1, HD_POLICY_ROUND_ROBIN},
    {"fewest turns first: the leader cannot starve a member",
	{"manager", "coder"}, 0, "11", {3, 1}, -1, 1, HD_POLICY_ROUND_ROBIN},
    {"only the pending count: a quiet non-pending agent is skipped",
	{"amy", "bob", "cat"}, -1, "011", {0, 4, 2}, -1, 2,
	HD_POLICY_ROUND_ROBIN},
    {"self-repeat avoided within the tie group", {"amy", "bob"}, -1, "11",
	{1, 1}, 0, 1, HD_POLICY_ROUND_ROBIN},
    {"self-repeat avoided: the next id after the last speaker",
	{"amy", "bob", "cat"}, -1, "111", {1, 1, 1}, 0, 1,
	HD_POLICY_ROUND_ROBIN},
    {"self-repeat avoided: last speaker in the middle of the group",
	{"amy", "bob", "cat"}, -1, "111", {1, 1, 1}, 1, 0,
	HD_POLICY_ROUND_ROBIN},
    {"self-repeat allowed when it is the only one pending", {"amy", "bob"}, -1,
	"10", {1, 0}, 0, 0, HD_POLICY_ROUND_ROBIN},
    {"self-repeat allowed when it alone has the fewest turns", {"amy", "bob"},
	-1, "11", {0, 1}, 0, 0, HD_POLICY_ROUND_ROBIN},
    {"a last speaker outside the tie group changes nothing",
	{"amy", "bob", "cat"}, -1, "111", {2, 0, 0}, 0, 1,
	HD_POLICY_ROUND_ROBIN},
};

static void
test_select__every_rule_and_tie_break(void **state)
{
	const char *ids[MAXP];
	unsigned char pending[MAXP];
	hd_speaker_pick pick;
	size_t c, n;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const select_case *k = &cases[c];

		for (n = 0; n < MAXP && k->ids[n] != NULL; n++) {
			ids[n] = k->ids[n];
			pending[n] = k->pending[n] == '1';
		}
		assert_int_equal(strlen(k->pending), n);
		pick = hd_exchange_select(
		    ids, n, k->leader, pending, k->turns, k->last);
		if (pick.speaker != k->want_speaker ||
		    pick.policy != k->want_policy)
			fail_msg("%s: got speaker %d (%s), wanted %d (%s)",
			    k->name, pick.speaker,
			    hd_speaker_policy_name(pick.policy),
			    k->want_speaker,
			    hd_speaker_policy_name(k->want_policy));
	}
}

static void
test_select__is_pure(void **state)
{
	const char *ids[] = {"amy", "bob", "cat"};
	unsigned char pending[] = {1, 1, 1};
	int turns[] = {1, 1, 1};
	hd_speaker_pick a, b;

	(void)state;
	a = hd_exchange_select(ids, 3, 0, pending, turns, 0);
	b = hd_exchange_select(ids, 3, 0, pending, turns, 0);
	assert_int_equal(a.speaker, b.speaker);
	assert_int_equal(a.policy, b.policy);
	/* the inputs are not touched */
	assert_int_equal(pending[0] + pending[1] + pending[2], 3);
	assert_int_equal(turns[0] + turns[1] + turns[2], 3);
}

static void
test_select__policy_names(void **state)
{
	(void)state;
	assert_string_equal(
	    hd_speaker_policy_name(HD_POLICY_ROUND_ROBIN), "round-robin");
	assert_string_equal(hd_speaker_policy_name(HD_POLICY_LEADER_NOMINATED),
	    "leader-nominated");
	assert_string_equal(hd_speaker_policy_name(HD_POLICY_NONE), "none");
	assert_string_equal(
	    hd_exchange_end_name(HD_EXCHANGE_ABORTED), "aborted");
	assert_string_equal(hd_exchange_end_name(HD_EXCHANGE_NO_PENDING),
	    "no_pending_obligation");
	assert_string_equal(
	    hd_exchange_end_name(HD_EXCHANGE_BUDGET_PAUSED), "budget_paused");
	assert_string_equal(
	    hd_exchange_end_name(HD_EXCHANGE_MAX_TURNS), "max_turns");
	assert_string_equal(
	    hd_exchange_end_name(HD_EXCHANGE_CANCELLED), "cancelled");
}

static void
test_select__turn_clamp(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(hd_exchange_max_turns(NULL, 1), 5);
	assert_int_equal(hd_exchange_max_turns(NULL, 4), 5);
	v = 0;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 1);
	v = -3;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 1);
	v = 1;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 1);
	v = 7;
	assert_int_equal(hd_exchange_max_turns(&v, 1), 5);
	v = 7;
	assert_int_equal(hd_exchange_max_turns(&v, 2), 7);
	v = 20;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 20);
	v = 21;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 20);
	v = INT64_MAX;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 20);
	v = INT64_MIN;
	assert_int_equal(hd_exchange_max_turns(&v, 4), 1);
}

static void
test_select__one_leader_is_kept(void **state)
{
	hd_agent items[3];
	hd_agents l = {items, 3};

	(void)state;
	memset(items, 0, sizeof(items));
	items[0].id = (char *)"amy";
	items[1].id = (char *)"boss";
	items[2].id = (char *)"kim";
	assert_int_equal(hd_exchange_normalise_leader(&l, "dev"), -1);
	items[1].is_leader = 1;
	items[2].is_leader = 1;
	assert_int_equal(hd_exchange_normalise_leader(&l, "dev"), 1);
	assert_int_equal(items[1].is_leader, 1);
	assert_int_equal(items[2].is_leader, 0); /* demoted to member */
	assert_int_equal(hd_exchange_normalise_leader(&l, "dev"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_select__every_rule_and_tie_break),
	    cmocka_unit_test(test_select__is_pure),
	    cmocka_unit_test(test_select__policy_names),
	    cmocka_unit_test(test_select__turn_clamp),
	    cmocka_unit_test(test_select__one_leader_is_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
