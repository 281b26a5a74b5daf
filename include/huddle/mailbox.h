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

#include "agent.h"
#include "board.h"
#include "err.h"
#include "store.h"
#include "team.h"

#define HD_MESSAGE_MAX 100000

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
	int approve; /* -1 unset */
	const char *reason;
	const char *conversation_id;
} hd_message_spec;

/*
 * Send one message. The sender and the recipient must be members of
 * spec->team. Emits message_sent. *out (when non-NULL) is the stored
 * message: hd_message_free() it. Works inside a caller's transaction.
 */
int hd_mailbox_send(hd_message **out, hd_store *st,
    const hd_message_spec *spec, hd_err *err);

/* One copy to every member of spec->team except the sender, type
 * "broadcast"; *out_count is how many were sent. */
int hd_mailbox_broadcast(size_t *out_count, hd_store *st,
    const hd_message_spec *spec, hd_err *err);

/* Take up to limit (0: all) undelivered messages of agent, oldest first,
 * marking them delivered in the same transaction. */
int hd_mailbox_read(hd_messages *out, hd_store *st, const char *agent,
    int limit, hd_err *err);

/* The same without marking anything delivered. */
int hd_mailbox_peek(hd_messages *out, hd_store *st, const char *agent,
    int limit, hd_err *err);

/* The pure renderers (no database). */

/* <teammate-message ...> blocks for msgs, oldest first (SPEC 6). */
int hd_mailbox_render(char **out, const hd_messages *msgs, hd_err *err);

/* The "=== TEAM STATE ===" block (SPEC 6) for a team, its members (leader
 * first) and its task counts. */
int hd_team_state_render(char **out, const hd_team *team,
    const hd_agents *members, const hd_task_counts *counts, hd_err *err);

/* The automatic summary: first 10 words + "..." when longer, else the
 * content. malloc'd. */
char *hd_mailbox_summary(const char *content);

void hd_message_free(hd_message *m);
void hd_messages_dispose(hd_messages *l);
json_t *hd_message_to_json(const hd_message *m);

#endif
