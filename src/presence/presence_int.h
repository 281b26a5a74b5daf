/*
 * presence_int.h -- the status rule (activity.c) and the shutdown protocol
 * (shutdown.c), each told how to read a member's work (hd_work,
 * activity.h), for the domain modules above them: the board's reflection
 * hands in the board's own reader (src/board/reflect.c), and the public
 * functions of activity.h and shutdown.h that read a member's work are
 * these bound to it (src/lifecycle/presence.c). On top of the mailbox
 * helpers they send with (<mailbox/mailbox_int.h>).
 */
#ifndef HD_PRESENCE_INT_H
#define HD_PRESENCE_INT_H

#include <huddle/activity.h>
#include <huddle/agent.h>
#include <huddle/shutdown.h>

#include <mailbox/mailbox_int.h>

/* 1 in *busy when the member whose presence p is (agent.h) is in a turn
 * or holds a task in_progress (w->has_started): what `working` means. */
int hd_activity__busy(int *busy, hd_store *st, const hd_work *w,
    const char *team, const hd_agent_presence *p, const char *agent,
    hd_err *err);

/* Settle agent's status from its work, after something that may change
 * it (a task started, finished, released or moved): the board's
 * reflection, in the board write's transaction. */
int hd_activity__settle(hd_store *st, const hd_work *w, const char *team,
    const char *agent, hd_err *err);

/* hd_activity_turn_end, hd_activity_turn_abort, hd_activity_set_status
 * (activity.h), reading the member's work through w. */
int hd_activity__turn_end(hd_store *st, const hd_work *w, const char *team,
    const char *agent, const char *failure, hd_err *err);
int hd_activity__turn_abort(hd_store *st, const hd_work *w, const char *team,
    const char *agent, hd_err *err);
int hd_activity__set_status(hd_store *st, const hd_work *w, const char *agent,
    const char *status, hd_err *err);

/*
 * The shutdown protocol's reaction to a message just stored (inside the
 * sending transaction; hd_mailbox_send hands it to the mailbox, with the
 * board's hd_work as work): a shutdown_response answers the team's
 * pending request, an idle message from a member asked counts as
 * approval. Other types are ignored. `no shutdown request "x" in team
 * dev` for a response naming a request the team never had.
 */
int hd_shutdown__react(
    hd_store *st, const hd_message *m, const void *work, hd_err *err);

/* Evaluate the team's pending shutdown timeout inside the caller's write
 * transaction. */
int hd_shutdown__expire_txn(
    hd_store *st, const hd_work *w, const char *team, hd_err *err);

/* hd_team_shutdown, hd_shutdown_get, hd_shutdown_answer,
 * hd_shutdown_respond, hd_shutdown_expire and hd_team_shutdown_wait
 * (shutdown.h), reading the members' work through w. */
int hd_shutdown__start(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, const char *reason, int64_t timeout_ms, hd_err *err);
int hd_shutdown__get(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, hd_err *err);
int hd_shutdown__answer(hd_message **out, hd_store *st, const hd_work *w,
    const hd_message_spec *spec, hd_err *err);
int hd_shutdown__respond(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, const char *agent, const char *request_id, int approve,
    const char *reason, hd_err *err);
int hd_shutdown__expire(
    hd_store *st, const hd_work *w, const char *team, hd_err *err);
int hd_shutdown__wait(hd_shutdown **out, hd_store *st, const hd_work *w,
    const char *team, const char *request_id, int64_t timeout_ms, hd_err *err);

#endif
