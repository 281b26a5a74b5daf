/*
 * team_remove.h -- removing a team with everything the domain keeps for
 * it (SPEC 3), across the modules that own those rows.
 */
#ifndef HUDDLE_TEAM_REMOVE_H
#define HUDDLE_TEAM_REMOVE_H

#include "err.h"
#include "store.h"

/*
 * Remove a team and its agents. A team that still has tasks, posts,
 * messages or conversations is refused (HD_EREFUSED, `team dev still has
 * 2 posts; pass --purge to delete them too`) unless purge is set, which
 * deletes them too. The event log is kept; team_removed is appended.
 */
int hd_team_remove(hd_store *st, const char *id, int purge, hd_err *err);

#endif
