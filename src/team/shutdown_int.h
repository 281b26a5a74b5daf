/*
 * shutdown_int.h -- helpers shared by the team's shutdown protocol and
 * the activity rule it asks (shutdown.c, activity.c), on top of the
 * mailbox helpers they send with (../mailbox/mailbox_int.h).
 */
#ifndef HD_SHUTDOWN_INT_H
#define HD_SHUTDOWN_INT_H

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/shutdown.h>

#include <mailbox/mailbox_int.h>

/* Evaluate the team's pending shutdown timeout inside the caller's write
 * transaction. */
int hd_shutdown__expire_txn(hd_store *st, const char *team, hd_err *err);

/* 1 in *busy when the member whose presence p is (agent.h) is in a turn
 * or holds a task in_progress: what `working` means (activity.c). */
int hd_activity__busy(int *busy, hd_store *st, const char *team,
    const hd_agent_presence *p, const char *agent, hd_err *err);

#endif
