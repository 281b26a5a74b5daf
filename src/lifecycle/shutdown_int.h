/*
 * shutdown_int.h -- helpers shared by the team's shutdown protocol, the
 * activity rule it asks and the send that drives it (shutdown.c,
 * activity.c, send.c), on top of the mailbox helpers they send with
 * (<mailbox/mailbox_int.h>).
 */
#ifndef HD_SHUTDOWN_INT_H
#define HD_SHUTDOWN_INT_H

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/shutdown.h>

#include <mailbox/mailbox_int.h>

/*
 * The shutdown protocol's reaction to a message just stored (inside the
 * sending transaction; hd_mailbox_send hands it to the mailbox): a
 * shutdown_response answers the team's pending request, an idle message
 * from a member asked counts as approval. Other types are ignored. `no
 * shutdown request "x" in team dev` for a response naming a request the
 * team never had.
 */
int hd_shutdown__on_message(hd_store *st, const hd_message *m, hd_err *err);

/* Evaluate the team's pending shutdown timeout inside the caller's write
 * transaction. */
int hd_shutdown__expire_txn(hd_store *st, const char *team, hd_err *err);

/* 1 in *busy when the member whose presence p is (agent.h) is in a turn
 * or holds a task in_progress: what `working` means (activity.c). */
int hd_activity__busy(int *busy, hd_store *st, const char *team,
    const hd_agent_presence *p, const char *agent, hd_err *err);

#endif
