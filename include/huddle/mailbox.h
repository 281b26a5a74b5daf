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
 * Send one message. The sender and the recipient must be members of
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

/*
 * Team operations that write mailboxes. They live with the mailbox
 * (src/mailbox/) because the team module sits below it.
 */

/* A task a member holds (claimed or in_progress), for the team state. */
typedef struct hd_held_task {
	int64_t id;
	char *subject;
	char *status;
	char *owner;
} hd_held_task;

/* Everything the team-state block shows, read in one snapshot. */
typedef struct hd_team_snapshot {
	hd_team *team;
	hd_agents members; /* leader first, then by id */
	hd_task_counts counts;
	hd_held_task *held; /* the members' open tasks, member by member,
			       oldest first */
	size_t nheld;
	int64_t read_at; /* when it was read (ms): "last active" is from it */
} hd_team_snapshot;

/*
 * The "=== TEAM STATE ===" block (SPEC 6) of a snapshot: the team, its
 * members (in the snapshot's order; each by id, "(Lead)" for the team's
 * leader, else "(Member)", then what it is doing) and its task counts
 * ("In Progress" = claimed + in_progress), byte for byte:
 *
 *   === TEAM STATE ===\n
 *   Team: Dev team (dev)\n
 *   Status: active\n
 *   Description: N/A\n            (N/A when the description is empty)
 *   \n
 *   Members (2):\n
 *     - manager (Lead): idle\n    (two spaces, "- ")
 *     - coder (Member): working; holds #5 "Docs" (in_progress); last
 *       active just now\n         (one line)
 *   \n
 *   Task Counts:\n
 *     - Pending: 5\n
 *     - In Progress: 2\n
 *     - Completed: 10\n
 *   ====================\n        (20 '='; the text ends with this \n)
 *
 * After a member's status: ": <reason>" when it has one (an error's, a
 * replaced member's); "; holds ..."
 * (its open tasks, oldest first) when it holds any; "; last active
 * just now" (under a minute before read_at), "N min ago", "N h ago" or
 * "N d ago" once it has acted. *out is malloc'd.
 */
int hd_team_state_render(
    char **out, const hd_team_snapshot *s, hd_err *err);

/*
 * Load a team, its members and its task counts in one read transaction,
 * after evaluating a pending shutdown's timeout (shutdown.h), so a team
 * whose shutdown timed out reads as active. `team "x" not found`.
 * Dispose with hd_team_snapshot_dispose().
 */
int hd_team_snapshot_get(hd_team_snapshot *out, hd_store *st,
    const char *team, hd_err *err);
void hd_team_snapshot_dispose(hd_team_snapshot *s);

/* {"team": {...}, "members": [... each with "tasks": [{"id", "subject",
 * "status"}], what it holds], "task_counts": {"pending",
 * "in_progress" (claimed + in_progress), "completed", "claimed",
 * "failed", "cancelled"}}. A new reference. */
json_t *hd_team_snapshot_to_json(const hd_team_snapshot *s);

/* hd_team_snapshot_get + hd_team_state_render: *out is malloc'd. */
int hd_team_state(char **out, hd_store *st, const char *team, hd_err *err);

/*
 * The shorter team context a member other than the leader gets in its
 * turns (SPEC 6), *out malloc'd:
 *
 *   === TEAM CONTEXT ===
 *   Team: Dev team (dev)
 *   Led by: manager
 *   Members:
 *     - manager (Lead): team lead
 *     - coder (you): engineer
 *   Your open tasks:
 *     - #5 "Write docs" (in_progress)
 *   ====================
 *
 * (a member without a role shows no ": role"; "Led by: nobody" without a
 * leader; "Your open tasks: none" without claimed or in_progress tasks).
 * `team "x" not found`.
 */
int hd_team_context(char **out, hd_store *st, const char *team,
    const char *agent, hd_err *err);

/* Teammate spawning (SPEC 3). */
typedef struct hd_spawn_spec {
	const char *team;
	const char *id;	    /* the new agent's id (a slug) */
	const char *caller; /* the member spawning it (spawned_by); NULL or
			       "user": no agent, and spawned_by is the
			       leader (or nobody when the team has none) */
	const char *name;   /* display name; default: the id */
	const char *role;
	const char *runtime; /* default "scripted" */
	const json_t *runtime_config; /* borrowed; default {} */
	const char *model; /* sets runtime_config.model (over one given
			      there); NULL: not given */
	hd_agent_runtime_check check; /* as hd_agent_spec.check */
	const char *task; /* the first message; default
			     "Join team <team> as <id>" */
	const char *replaces; /* a member it replaces (hd_team_replace), or
				 NULL */
} hd_spawn_spec;

/*
 * Add an agent to an active team with spawned_by = the caller and session
 * key "agent:<id>:teammate:<uuid>", and put its first message (the task,
 * or `Join team <team> as <id>`) in its mailbox, from the caller (from
 * "huddle" when the team has no leader and no caller was given), all in
 * one transaction. Its spawn_depth is the calling agent's + 1 (1 when no
 * agent calls); one past the team's max_spawn_depth is refused before
 * anything is written (HD_EREFUSED): `cannot spawn: depth 6 would exceed
 * team dev's spawn depth limit of 5 (researcher is at depth 5)`.
 * Other refusals: `team "ghost" not found`; `team "dev" is not active
 * (status: shutdown)` (HD_EREFUSED); `model must not be empty`; the
 * errors of hd_agent_add (the runtime and runtime_config, model set in
 * it, as check says) and hd_mailbox_send. *out (when non-NULL) is the new
 * agent: hd_agent_free(). With spec->replaces set it replaces that
 * member (hd_team_replace).
 */
int hd_team_spawn(hd_agent **out, hd_store *st, const hd_spawn_spec *spec,
    hd_err *err);

/*
 * Spawn spec->id to replace spec->replaces, a member that failed or is
 * to be retired, as hd_team_spawn spawns (same rules, same refusals) and
 * in the same transaction:
 *  - the new agent takes the replaced one's role, runtime and
 *    runtime_config unless the spec gives them (its runtime_config only
 *    when the runtime stays the same; model still applies);
 *  - every task the replaced one owns that is claimed or in_progress
 *    moves to the new one, status kept (hd_board_reassign_open), each with
 *    a comment by the caller (or "user"): `moved from coder to coder-2:
 *    coder is in error (exit status 1); coder-2 replaces it`;
 *  - the replaced one is set `shutdown`, status_reason `replaced by
 *    coder-2`; an agent_replaced event {replaces, by, tasks} is emitted;
 *  - the first message (the task, or the invitation) goes on with
 *    `You replace coder, who is in error (exit status 1). You took over
 *    its unfinished tasks:` and a line `  - #3 "X" (in_progress)` per
 *    task (or `It had no unfinished tasks.`).
 * Refusals, nothing written: `a replacement needs the agent it replaces`
 * (HD_EINVAL); `no member "x" in team dev`; `cannot replace the leader
 * (manager) of team dev` and `only the team leader or a user may replace
 * coder, not tester` (HD_EREFUSED); and hd_team_spawn's (`agent "x"
 * already exists in team dev`, the depth, the team not active, ...).
 * *out as hd_team_spawn's; *moved (when non-NULL) gets the tasks taken
 * over, by id ascending: hd_tasks_dispose() it. hd_team_spawn with
 * spec->replaces set does the same without *moved.
 */
int hd_team_replace(hd_agent **out, hd_tasks *moved, hd_store *st,
    const hd_spawn_spec *spec, hd_err *err);

#endif
