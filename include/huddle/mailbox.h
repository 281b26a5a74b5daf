/*
 * mailbox.h -- directed messages between agents (SPEC 6).
 *
 * (1) A recipient must be a member of the sender's team
 *     (`no member "x" in team t`); content is 1..100000 bytes
 *     (`message is 100001 bytes; the limit is 100000`).
 * (2) Reading marks messages delivered in the same transaction that
 *     returns them: across processes every message is delivered exactly
 *     once, in order, and waits durably until read.
 */
#ifndef HUDDLE_MAILBOX_H
#define HUDDLE_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_MESSAGE_MAX 100000
#define HD_MAILBOX_READ_MAX 10000 /* largest explicit read/peek limit */
#define HD_MAILBOX_SYSTEM "huddle" /* sender of protocol notices */

typedef struct hd_message {
	int64_t id;
	char *team_id;
	char *from_agent;
	char *to_agent;
	char *type; /* message | broadcast | shutdown_request |
		       shutdown_response | idle | task_update | mention */
	char *content;
	char *summary;	  /* never NULL once stored */
	char *request_id; /* or NULL */
	int approve;	  /* -1 unset, 0 false, 1 true */
	char *reason;	  /* or NULL */
	char *conversation_id; /* or NULL */
	int64_t created_at;
	int64_t delivered_at; /* 0 while waiting */
} hd_message;

typedef struct hd_messages {
	hd_message *items; /* oldest first */
	size_t n;
} hd_messages;

typedef struct hd_message_spec {
	const char *team;
	const char *from;
	const char *to; /* ignored by broadcast */
	const char *type; /* default "message" */
	const char *content;
	const char *summary; /* default: first 10 words + "..." */
	const char *request_id;
	int approve; /* shutdown_response: 1 approve, 0 refuse; -1 unset.
			Ignored (stored unset) for every other type, so a
			zero-initialised spec is safe. */
	const char *reason;
	const char *conversation_id;
} hd_message_spec;

/*
 * Send one message (the protocol's send, src/lifecycle/send.c: the
 * mailbox's own is below the protocol it drives). The sender and the
 * recipient must be members of
 * spec->team. Emits message_sent. *out (when non-NULL) is the stored
 * message: hd_message_free() it. Works inside a caller's transaction.
 * Refusals, checked in this order before anything is written:
 *   `invalid message type "x": use message, broadcast, shutdown_request,
 *   shutdown_response, idle, task_update or mention` (HD_EINVAL);
 *   `message must not be empty` (also when blank: hd_text_blank),
 *   `message is 100001 bytes; the limit is 100000` (HD_ETOOBIG),
 *   `message must be valid UTF-8`;
 *   `shutdown_request needs a request_id`, `shutdown_response needs a
 *   request_id`, `shutdown_response needs approve (true or false)`,
 *   `a refused shutdown needs a reason`; then, in the transaction,
 *   `team "t" not found` and `no member "x" in team t` (HD_EREFUSED) for
 *   the sender, then for the recipient.
 * A shutdown_response or idle message also drives a pending shutdown of
 * the team (shutdown.h) in the same transaction; a shutdown_response
 * naming a request the team never had is refused:
 *   `no shutdown request "shutdown-x" in team dev`.
 */
int hd_mailbox_send(hd_message **out, hd_store *st,
    const hd_message_spec *spec, hd_err *err);

/* hd_mailbox_send from HD_MAILBOX_SYSTEM ("huddle") whatever
 * spec->from says: for a notice on behalf of a user, who is no member
 * (the board's delegation). The recipient must be a member; the message
 * never drives the shutdown protocol. Works inside a caller's
 * transaction. */
int hd_mailbox_send_system(hd_message **out, hd_store *st,
    const hd_message_spec *spec, hd_err *err);

/* One copy to every member of spec->team except the sender, type
 * "broadcast"; *out_count is how many were sent. */
int hd_mailbox_broadcast(size_t *out_count, hd_store *st,
    const hd_message_spec *spec, hd_err *err);

/*
 * Take up to limit (0: all; at most HD_MAILBOX_READ_MAX) undelivered
 * messages of agent, oldest first, marking them delivered in the same
 * BEGIN IMMEDIATE transaction: across processes every message is returned
 * by exactly one read. `agent "x" not found`. Dispose *out with
 * hd_messages_dispose().
 */
int hd_mailbox_read(hd_messages *out, hd_store *st, const char *agent,
    int limit, hd_err *err);

/* The same without marking anything delivered. */
int hd_mailbox_peek(hd_messages *out, hd_store *st, const char *agent,
    int limit, hd_err *err);

/*
 * agent's messages with ids lo..hi, delivered or not, oldest first,
 * marking nothing: the messages one read delivered (a read takes an
 * agent's oldest undelivered first, so what it took is one id range).
 */
int hd_mailbox_range(hd_messages *out, hd_store *st, const char *agent,
    int64_t lo, int64_t hi, hd_err *err);

/* Who in a team has mail waiting that asks for a turn: every undelivered
 * message but an idle notice (SPEC 6: the leader never answers one). */
typedef struct hd_mail_waiting {
	char agent[64];
	int64_t newest;        /* the newest such message's id */
	int64_t newest_direct; /* the newest not a broadcast, or 0 */
} hd_mail_waiting;

/* One row per recipient in team with such mail, by agent id. Read-only;
 * free *out with hd_mail_waiting_dispose. */
int hd_mailbox_waiting(hd_mail_waiting **out, size_t *n, hd_store *st,
    const char *team, hd_err *err);
void hd_mail_waiting_dispose(hd_mail_waiting *w, size_t n);

/* The pure renderers (no database). */

/*
 * <teammate-message ...> blocks for msgs, in the order given (SPEC 6):
 *
 *   <teammate-message teammate_id="coder" type="message" summary="s">
 *   content
 *   </teammate-message>
 *
 * teammate_id is the sender. Attributes appear in the order teammate_id,
 * type, summary, request_id, approve ("true"/"false"), reason, each only
 * when set (non-NULL; request_id and reason also non-empty; approve not
 * -1); values escape & < > " as &amp; &lt; &gt; &quot;. In the content
 * every "<teammate-message" or "</teammate-message" (ASCII
 * case-insensitive) is written with "&lt;" for its "<"; nothing else is
 * changed. Blocks are joined by one blank line ("</teammate-message>\n\n
 * <teammate-message"), as in the design notes, and the text has no
 * trailing newline; no messages render as "". *out is malloc'd.
 */
int hd_mailbox_render(char **out, const hd_messages *msgs, hd_err *err);

/* The automatic summary: first 10 words + "..." when longer, else the
 * content. malloc'd. */
char *hd_mailbox_summary(const char *content);

void hd_message_free(hd_message *m);
void hd_messages_dispose(hd_messages *l);
json_t *hd_message_to_json(const hd_message *m);

/* A team's messages (team removal, src/lifecycle/remove.c, in its write
 * transaction): how many it keeps; delete them. */
int hd_mailbox_team_count(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
int hd_mailbox_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
