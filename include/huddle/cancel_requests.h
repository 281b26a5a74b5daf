/*
 * cancel_requests.h -- the requests to stop running work (table
 * cancel_requests, migration 15; src/conversation/cancel_requests.c, a
 * domain module). What a request does is the engines' (cancel.h); this
 * is only the rows.
 *
 * Contract:
 *  (1) A request is a row (kind, target): kind `conversation` with the
 *      conversation's id, or `exchange` with the holder of the room lock
 *      the exchange runs under. Asking twice is asking once (INSERT OR
 *      IGNORE); a request is never withdrawn.
 *  (2) The requests themselves refuse only what cannot be cancelled: an
 *      unknown conversation or team (HD_ENOTFOUND), a conversation no
 *      longer running, a room no exchange holds (HD_ECONFLICT); each in
 *      the caller's write transaction, so the check and the row commit
 *      together.
 *  (3) An exchange's request is asked and looked up through the room
 *      lock (room_lock.h: hd_room_lock_cancel, hd_room_lock_cancelled,
 *      hd_room_lock_cancelled_mine), which knows the holder: a request
 *      reaches only the holder it names.
 * Callers: src/engine/cancel.c (the requests, its watch, the end of a
 * cancelled conversation) and the claim of src/engine/conversation.c
 * (which skips cancelled conversations in SQL, conversation_store.h).
 */
#ifndef HUDDLE_CANCEL_REQUESTS_H
#define HUDDLE_CANCEL_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "conversation_store.h"
#include "err.h"
#include "store.h"

/*
 * Ask for running conversation id to be cancelled by by (NULL: the user),
 * in a write: `conversation "x" not found` (HD_ENOTFOUND), `conversation
 * x already ended (completed)` (HD_ECONFLICT). *head is the row as read
 * (free head->owner, also on failure).
 */
int hd_cancel_request_conversation(hd_convstore_head *head, hd_store *st,
    const char *id, const char *by, hd_err *err);

/* Ask for target (a kind's, (1)) to be cancelled, by by (NULL: the user),
 * for team: the row only, no check (the kind's own asker checks). */
int hd_cancel_request_add(hd_store *st, const char *kind, const char *target,
    const char *team, const char *by, hd_err *err);

/* *out 1 when a request names target (a kind's). */
int hd_cancel_request_exists(int *out, hd_store *st, const char *kind,
    const char *target, hd_err *err);

/* Who asked for conversation id to be cancelled: *by malloc'd, NULL for
 * the user or when there is no request. */
int hd_cancel_request_by(char **by, hd_store *st, const char *id, hd_err *err);

/* Up to max ids (HD_CONVERSATION_ID_LEN + 1 bytes each) of the running
 * conversations owner owns that a request cancels; *more 1 when there
 * were more than fit. */
int hd_cancel_requests_owned(char (*ids)[HD_CONVERSATION_ID_LEN + 1],
    size_t max, size_t *n, int *more, hd_store *st, const char *owner,
    hd_err *err);

#endif
