/*
 * mailbox_int.h -- helpers of the mailbox module (mailbox.c) that the
 * team's protocol code in src/team/ (shutdown.c, spawn.c, activity.c)
 * also uses, and the one call the mailbox makes up into the team: the
 * shutdown protocol's reaction to a message, in the sending transaction.
 */
#ifndef HD_MAILBOX_INT_H
#define HD_MAILBOX_INT_H

#include <huddle/agent.h>
#include <huddle/mailbox.h>
#include <huddle/shutdown.h>

#include <store/store.h>

/*
 * hd_mailbox_send with one extra: when system is set the sender is
 * HD_MAILBOX_SYSTEM ("huddle") whatever spec->from says, it is not
 * checked for membership, and the message never drives the shutdown
 * protocol. The protocol notices (a timeout, a refusal
 * relayed to the leader) and messages from a team without a leader use it.
 */
int hd_mailbox__send(hd_message **out, hd_store *st,
    const hd_message_spec *spec, int system, hd_err *err);

/* The content rules of a message: `message must not be empty` (also for
 * a blank one: hd_text_blank), `message is N bytes; the limit is 100000`,
 * `message must be valid UTF-8`. */
int hd_mailbox__check_content(const char *content, hd_err *err);

/*
 * The sender of the newest shutdown_request in team with request_id that
 * was sent to `to` (a request sent one to one, SPEC 6), into *out
 * (malloc'd), or *out NULL when there is none. Read-only; works inside a
 * caller's transaction.
 */
int hd_mailbox__request_sender(char **out, hd_store *st, const char *team,
    const char *to, const char *request_id, hd_err *err);

/*
 * Defined in src/team/shutdown.c: the shutdown protocol's reaction to a
 * message just stored (inside the sending transaction): a shutdown_response answers the team's pending
 * request, an idle message from a member asked counts as approval. Other
 * types are ignored. `no shutdown request "x" in team dev` for a response
 * naming a request the team never had.
 */
int hd_shutdown__on_message(hd_store *st, const hd_message *m, hd_err *err);

#endif
