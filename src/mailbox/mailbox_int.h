/*
 * mailbox_int.h -- helpers of the mailbox module (mailbox.c) for the domain
 * modules above it: the status rule and the shutdown protocol in
 * src/presence/ (activity.c, shutdown.c), the team's lifecycle in
 * src/lifecycle/ (send.c, spawn.c) and the board's reflection. The
 * mailbox calls none of them: a reaction to a message is handed in by
 * its caller (hd_mailbox__send_then).
 */
#ifndef HD_MAILBOX_INT_H
#define HD_MAILBOX_INT_H

#include <huddle/agent.h>
#include <huddle/mailbox.h>
#include <huddle/shutdown.h>

#include <store/store.h>

/* What a message just stored sets off, inside the sending transaction
 * (after the sender's hd_agent_touch), with the ctx handed to
 * hd_mailbox__send_then; a failure refuses the send. */
typedef int (*hd_mailbox__react_fn)(
    hd_store *st, const hd_message *m, const void *ctx, hd_err *err);

/*
 * The mailbox's send: hd_mailbox_send's checks, rows and event, then
 * react (NULL: none) on the stored message and ctx in the same
 * transaction. When system is set the sender is HD_MAILBOX_SYSTEM
 * ("huddle") whatever spec->from says, it is not checked for membership,
 * and react is not called. hd_mailbox_send (src/lifecycle/send.c) is this
 * with the shutdown protocol's reaction (src/presence/shutdown.c).
 */
int hd_mailbox__send_then(hd_message **out, hd_store *st,
    const hd_message_spec *spec, int system, hd_mailbox__react_fn react,
    const void *ctx, hd_err *err);

/*
 * hd_mailbox__send_then without a reaction: the message drives no
 * protocol. For a type no protocol reacts to (the board's task_update),
 * and, with system set, the protocol notices (a timeout, a refusal
 * relayed to the leader) and messages from a team without a leader.
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

#endif
