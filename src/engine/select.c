/*
 * select.c -- the pure parts of an exchange (SPEC 8): who speaks next,
 * the turn bound, and single-leader normalisation. Owns no table.
 *  (1) hd_exchange_select depends on its arguments alone: no clock, no
 *      randomness, no store. The same inputs always give the same pick,
 *      so a richer policy can replace it without touching the loop.
 *  (2) Ties are broken by strcmp, which compares bytes as unsigned char:
 *      "byte order" of the ids, whatever the locale.
 * Callers: exchange.c, the tests.
 */
#include <string.h>

#include <huddle/exchange.h>

#define HD_LOG_COMPONENT "exchange"
#include <huddle/log.h>

const char *
hd_speaker_policy_name(hd_speaker_policy p)
{
	switch (p) {
	case HD_POLICY_ROUND_ROBIN: return "round-robin";
	case HD_POLICY_LEADER_NOMINATED: return "leader-nominated";
	case HD_POLICY_NONE: break;
	}
	return "none";
}

hd_speaker_pick
hd_exchange_select(const char *const *participants, size_t n, int leader,
    const unsigned char *pending, const int *turns, int last_speaker)
{
	hd_speaker_pick pick = {-1, HD_POLICY_NONE};
	int fewest = -1, best = -1, best_other = -1;
	size_t i;

	/* 1: the fewest turns among the obligated */
	for (i = 0; i < n; i++)
		if (pending[i] && (fewest < 0 || turns[i] < fewest))
			fewest = turns[i];
	if (fewest >= 0) {
		/* The tie group is the pending with `fewest` turns. best is its
		 * first id; best_other its first id that is not the last
		 * speaker. */
		for (i = 0; i < n; i++) {
			if (!pending[i] || turns[i] != fewest)
				continue;
			if (best < 0 ||
			    strcmp(participants[i], participants[best]) < 0)
				best = (int)i;
			if ((int)i != last_speaker &&
			    (best_other < 0 ||
				strcmp(participants[i],
				    participants[best_other]) < 0))
				best_other = (int)i;
		}
		pick.policy = HD_POLICY_ROUND_ROBIN;
		pick.speaker = best_other >= 0 ? best_other : best;
		return pick;
	}
	/* 2: nothing owed: the leader drives, unless it just spoke */
	if (leader >= 0 && (size_t)leader < n && leader != last_speaker) {
		pick.policy = HD_POLICY_LEADER_NOMINATED;
		pick.speaker = leader;
	}
	return pick; /* 3: nobody */
}

int
hd_exchange_max_turns(const int64_t *requested, size_t participants)
{
	int64_t hi = (int64_t)participants * HD_EXCHANGE_TURNS_PER_PARTICIPANT;

	if (requested == NULL)
		return HD_EXCHANGE_DEFAULT_TURNS;
	if (hi < 1)
		hi = 1;
	if (*requested < 1)
		return 1;
	return (int)(*requested > hi ? hi : *requested);
}

int
hd_exchange_normalise_leader(hd_agents *agents, const char *team)
{
	int leader = -1, extra = 0;
	size_t i;

	for (i = 0; i < agents->n; i++) {
		if (!agents->items[i].is_leader)
			continue;
		if (leader < 0) {
			leader = (int)i;
			continue;
		}
		agents->items[i].is_leader = 0;
		extra++;
	}
	if (extra > 0)
		hd_log_warn("multiple leaders flagged for team %s; keeping the "
			    "first (%s)",
		    team, agents->items[leader].id);
	return leader;
}
