/*
 * remove.c -- a team's removal (team_remove.h): every domain module deletes
 * its own rows of the team, in one write transaction. Owns no table.
 *  (1) Each module that keeps rows per team says how many it keeps and
 *      deletes them itself (hd_<module>_team_count / _team_purge): this
 *      file names no table, so a module's tables stay its own.
 *  (2) Without purge, a team that still has tasks, posts, messages,
 *      conversations, facts (its memory, the global facts it saved
 *      too) or routines is refused before anything is deleted, naming
 *      the counts in that order; the rest (autorun rows, the shutdown record,
 *      sessions, settings) never makes a reason to refuse.
 *  (3) The team's own rows (hd_team_drop_rows: sessions, settings,
 *      agents, the team) go last, after every row that names them; the
 *      event log is never purged, and team_removed is appended in the
 *      same transaction.
 * Callers: the CLI (team rm) and REST (DELETE /api/teams/:id).
 */
#include <stdio.h>

#include <huddle/autorun.h>
#include <huddle/board.h>
#include <huddle/conversation_store.h>
#include <huddle/events.h>
#include <huddle/mailbox.h>
#include <huddle/memory.h>
#include <huddle/room.h>
#include <huddle/routine.h>
#include <huddle/shutdown.h>
#include <huddle/team.h>
#include <huddle/team_remove.h>
#include <huddle/util.h>

typedef int (*count_fn)(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
typedef int (*purge_fn)(hd_store *st, const char *team, hd_err *err);

/* (2) the rows that make a reason to refuse, in the message's order */
static const struct {
	const char *noun;
	count_fn count;
} counted[] = {
    {"task", hd_board_team_count},
    {"post", hd_room_team_count},
    {"message", hd_mailbox_team_count},
    {"conversation", hd_convstore_team_count},
    {"fact", hd_memory_team_count},
    {"routine", hd_routine_team_count},
};

/* (3) children before the rows they name; the team's own last */
static const purge_fn purges[] = {
    hd_board_team_purge,
    hd_room_team_purge,
    hd_mailbox_team_purge,
    hd_convstore_team_purge,
    hd_memory_team_purge,
    hd_routine_team_purge,
    hd_autorun_team_purge,
    hd_shutdown_team_purge,
    hd_team_drop_rows,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct team_rm {
	const char *id;
	int purge;
};

static int
team_rm_txn(hd_store *st, void *payload, hd_err *err)
{
	struct team_rm *r = payload;
	char why[256] = "";
	size_t i, len = 0;
	int rc;

	if ((rc = hd_team_exists(st, r->id, err)) < 0)
		return rc;
	for (i = 0; i < NELEM(counted) && !r->purge; i++) {
		int64_t n = 0;

		if ((rc = counted[i].count(&n, st, r->id, err)) < 0)
			return rc;
		if (n > 0 && len < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len,
			    "%s%lld %s%s", len ? ", " : "", (long long)n,
			    counted[i].noun, n == 1 ? "" : "s");
	}
	if (len > 0)
		return hd_err_set(err, HD_EREFUSED,
		    "team %s still has %s; pass --purge to delete them too",
		    r->id, why);
	for (i = 0; i < NELEM(purges); i++)
		if ((rc = purges[i](st, r->id, err)) < 0)
			return rc;
	hd_events_append(st, "team_removed", r->id, 0, NULL,
	    json_pack("{s:b}", "purge", r->purge));
	return 0;
}

int
hd_team_remove(hd_store *st, const char *id, int purge, hd_err *err)
{
	struct team_rm r = {id, purge};
	int rc;

	if ((rc = hd_slug_check("team", id, err)) < 0)
		return rc;
	return hd_store_write(st, team_rm_txn, &r, err);
}
