/*
 * cancel.h -- stopping running work from anywhere: a conversation (SPEC
 * 7) or an exchange (SPEC 8), by the user or an agent, from the process
 * that runs it (Ctrl-C) or any other (the CLI, REST).
 *
 * A cancel is a request (table cancel_requests) that the engine running
 * the work polls for: it sees it within about a second, stops the running
 * turns (their runtime process groups get SIGTERM, then SIGKILL), and ends
 * the work `cancelled`. A cancel is not a failure: the agents whose turns
 * were stopped go back to idle, never to error (activity.h, turn abort).
 *  - A conversation ends with status `cancelled`, its replies so far kept
 *    as its response and transcript, its unanswered messages `cancelled`,
 *    and a conversation_cancelled event {conversation_id, reason, by,
 *    total_messages, pending, response, transcript}. One whose engine is
 *    gone (or released it) is ended by the request itself.
 *  - An exchange ends `cancelled` (turn_bound_hit reason, exchange.h);
 *    the request names the room lock it holds, so it never reaches the
 *    room's next exchange.
 */
#ifndef HUDDLE_CANCEL_H
#define HUDDLE_CANCEL_H

#include <stdatomic.h>
#include <stddef.h>

#include "err.h"
#include "room.h"
#include "store.h"

#define HD_CANCEL_REASON "cancelled by the user"

/*
 * Ask for conversation id to be cancelled (by: the acting agent, or NULL
 * for the user). `conversation "x" not found` (HD_ENOTFOUND);
 * `conversation x already ended (completed)` (HD_ECONFLICT). *ended
 * (when non-NULL) is 1 when the request ended it itself (no engine ran
 * it); else its engine ends it.
 */
int hd_conversation_cancel(
    int *ended, hd_store *st, const char *id, const char *by, hd_err *err);

/*
 * Wait until conversation id is no longer running (0) or timeout_ms
 * passes (HD_ETIMEOUT `conversation x is still stopping`).
 */
int hd_conversation_cancel_wait(
    hd_store *st, const char *id, int timeout_ms, hd_err *err);

/*
 * Ask for the exchange running in team's room to be cancelled. room
 * (HD_ROOM_ID_MAX bytes, when non-NULL) gets the room id. `team "x" not
 * found` (HD_ENOTFOUND); `no exchange is running in team dev's room`
 * (HD_ECONFLICT).
 */
int hd_exchange_cancel(char *room, hd_store *st, const char *team,
    const char *by, hd_err *err);

/*
 * Wait until team's room lock is free (the exchange ended: 0) or
 * timeout_ms passes (HD_ETIMEOUT `the exchange in team:x is still
 * stopping`).
 */
int hd_exchange_cancel_wait(
    hd_store *st, const char *team, int timeout_ms, hd_err *err);

/*
 * The watch a caller of hd_exchange_run keeps while it runs (a thread
 * with its own connection on home): once a request names the room lock
 * this process holds for team, it sets *cancel and *turn_abort (the
 * spec's cancel and abort_turn). mirror (or NULL): a flag of the caller's
 * copied into *turn_abort when set (a server's stop). Stop it after the
 * exchange returns.
 */
typedef struct hd_exchange_watch hd_exchange_watch;

int hd_exchange_watch_start(hd_exchange_watch **out, const char *home,
    const char *team, atomic_int *cancel, atomic_int *turn_abort,
    const atomic_int *mirror, hd_err *err);
void hd_exchange_watch_stop(hd_exchange_watch *w);

#endif
