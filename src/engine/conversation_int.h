/*
 * conversation_int.h (private) -- what the engine's threads
 * (conv_engine.c) use of the conversation's transactions (conversation.c,
 * conv_record.c, conv_adopt.c), which call the domain module
 * src/conversation/ (conversation_store.h) for every row. Nothing outside
 * src/engine/ includes this.
 */
#ifndef HD_CONVERSATION_INT_H
#define HD_CONVERSATION_INT_H

#include <pthread.h>
#include <stdint.h>

#include <huddle/conversation.h>
#include <huddle/conversation_store.h>
#include <huddle/exchange.h>
#include <huddle/runtime.h>

#include <huddle/store.h>

/* Which engine runs a conversation: "<pid>:<process start>:<nonce>". */
typedef struct hd_conv_owner {
	char token[80];
	int64_t pid;
	int64_t start; /* the process's start time (/proc/<pid>/stat) */
	/* Held around each write transaction below (when non-NULL): the
	 * engine's threads queue here instead of meeting SQLITE_BUSY and
	 * sleeping through the store's backoff, which is meant for other
	 * processes. Never held while anything else runs. */
	pthread_mutex_t *wl;
} hd_conv_owner;


enum {
	HD_CONV_NONE = 0,    /* nothing queued for the agent here */
	HD_CONV_CLAIMED = 1, /* a message is ours to answer */
	HD_CONV_BLOCKED = 2, /* queued, but the agent is busy elsewhere */
};

/* A claimed delivery; with HD_CONV_BLOCKED, its blocker fields say which
 * conversation's running message blocks the agent. */
typedef hd_convstore_claim hd_conv_claim;

/* The claimed delivery's runtime process started: record it (host, boot,
 * its pid = process group id, start time) until the delivery leaves
 * running (conversation.c (6)). */
int hd_conv__running(hd_store *st, const hd_conv_claim *c,
    const hd_conv_owner *me, int64_t pgid, int64_t start, hd_err *err);

void hd_conv__claim_dispose(hd_conv_claim *c);

/* Claim the oldest queued message for agent among the conversations me
 * runs, unless the agent is running a message anywhere. *result is one of
 * the HD_CONV_* values; the agent becomes working when it was idle. */
int hd_conv__claim(int *result, hd_conv_claim *out, hd_store *st,
    const char *agent, const hd_conv_owner *me, hd_err *err);

/* *busy is 1 while a message for agent is running, in any process: the
 * supervisor takes no turn of it until it is done (supervisor.h (1)). */
int hd_conv__agent_busy(int *busy, hd_store *st, const char *agent,
    hd_err *err);

/* Put a claimed message back in the queue (a turn cut short). */
int hd_conv__release(
    hd_store *st, const hd_conv_claim *c, const hd_conv_owner *me, hd_err *err);

typedef struct hd_conv_recorded {
	int64_t seq;
	int64_t pending_mid;   /* after the mentions, before the answered */
	int64_t pending_after; /* what the conversation now has */
	char *body;            /* the reply as stored */
	char **targets;        /* agents sent a message, in order */
	size_t ntargets;
	/* with want_next: the agent's next message, claimed in the same
	 * transaction (the agent stays working) */
	int next_result; /* HD_CONV_NONE or HD_CONV_CLAIMED */
	hd_conv_claim next;
} hd_conv_recorded;

void hd_conv__recorded_dispose(hd_conv_recorded *r);

/*
 * A delivery's prompt (prompt.h) for agent a, whose turn state is *state:
 * its standing context, the room since its cursor, its mailbox (marked
 * delivered), and the delivered message last. In one write transaction
 * of me's. *context_len is where the message starts (the rest is
 * context, runtime.h), *seen as hd_prompt.
 */
int hd_conv__prompt(char **out, size_t *context_len, int64_t *seen,
    hd_store *st, const hd_conv_claim *c, const hd_agent *a,
    const hd_turn_state *state, const hd_conv_owner *me, hd_err *err);

/* What a delivery's turn leaves behind beside its reply: the agent's
 * turn state (cursor and native session, shared with exchanges), its
 * session lineage and its spend. */
typedef struct hd_conv_turn {
	const char *runtime;
	const char *native_session_id; /* what the turn ended in, or NULL */
	const char *resumed;           /* what it resumed, or NULL */
	int64_t seen;                  /* the room cursor after it */
	hd_runtime_cost cost;
} hd_conv_turn;

/*
 * Record the reply to a claimed message in one transaction: the reply,
 * the mentions it enqueues (loop guard, drops), pending, the message
 * done, the agent idle, the room post and the events, and (turn non-NULL:
 * a runtime ran) the agent's turn state, lineage, spend and cost event; with want_next,
 * also the claim of the agent's next message (out->next). HD_ECONFLICT
 * when the message is no longer this engine's to answer. is_error says
 * what the reply is: HD_CONV__REPLY, HD_CONV__FAILED (the runtime failed:
 * the agent goes to error, activity.h) or HD_CONV__ABORTED (the turn was
 * cut short: an error reply, but nothing the agent did wrong).
 */
enum { HD_CONV__REPLY = 0, HD_CONV__FAILED = 1, HD_CONV__ABORTED = 2 };

int hd_conv__record(hd_conv_recorded *out, hd_store *st, const hd_conv_claim *c,
    const char *reply, size_t len, int is_error, int want_next,
    const hd_conv_turn *turn, const hd_conv_owner *me, hd_err *err);

/* Complete a conversation with nothing pending: the aggregate, the
 * transcript file, status completed, conversation_completed. *done is 1
 * when it is completed now (by this call or before). */
int hd_conv__finish(int *done, hd_store *st, const char *id,
    const hd_conv_owner *me, hd_err *err);

/* Record a new conversation owned by me; out gets its id, agent the
 * agent it was routed to (>= 64 bytes). */
int hd_conv__create(char *out, char *agent, hd_store *st,
    const hd_conversation_spec *spec, const hd_conv_owner *me, hd_err *err);

/*
 * Take conversation id over from old_owner (compare-and-set: nothing
 * happens when its owner changed meanwhile): its running messages go back
 * in the queue. *agents (malloc'd ids, hd_strv_free) are the agents
 * with queued messages in it; *pending its pending count.
 */
int hd_conv__adopt(int *adopted, char ***agents, size_t *nagents,
    int64_t *pending, hd_store *st, const char *id, const char *old_owner,
    const hd_conv_owner *me, hd_err *err);

/* Release every running conversation me owns (engine stop). */
int hd_conv__disown(hd_store *st, const hd_conv_owner *me, hd_err *err);

/* Write a transcript file (mode 0600). */
int hd_conv__write_file(const char *path, const char *text, hd_err *err);

/* ---- shared by the engine's transaction files (conversation.c) ---- */

/* A write transaction of the engine me, under its lock (hd_conv_owner). */
int hd_conv__owner_write(hd_store *st, const hd_conv_owner *me,
    hd_store_txn_fn fn, void *payload, hd_err *err);

/* The claim, inside a write transaction: *result as hd_conv__claim. */
int hd_conv__claim_in_txn(int *result, hd_conv_claim *c, hd_store *st,
    const char *agent, const hd_conv_owner *me, hd_err *err);

/* s cut to at most max bytes (at a character boundary) with a note, for
 * the room and the event log; a copy of s when it fits. NULL: out of
 * memory. */
char *hd_conv__cap_text(const char *s, size_t max);

/* Post body (capped) to team's room under a savepoint; failures are
 * logged only (conversation.c (5)). The post's seq, or 0. */
int64_t hd_conv__room_post(hd_store *st, const char *team, const char *kind,
    const char *author, const char *body);

/* What a turn means for the agent's status (activity.h), logged when it
 * fails: a status is narration, not the conversation's state. */
enum hd_conv_act {
	HD_CONV_ACT_BEGIN,
	HD_CONV_ACT_END,
	HD_CONV_ACT_CHAIN,
	HD_CONV_ACT_ABORT
};
void hd_conv__activity(hd_store *st, const char *team, const char *agent,
    enum hd_conv_act step, const char *failure);

/* A mention of target (`#team` for a room tag) by from (NULL: the user)
 * dropped for reason: logged, and a mention_dropped event. */
void hd_conv__drop_mention(hd_store *st, const char *conv, const char *team,
    const char *from, const char *target, const char *reason);

/* ---- reply tags and files (conv_files.c) ---- */

/* A file read for a reply, before its transaction. */
typedef hd_convstore_attach hd_conv_attach;

/* A reply with its room and file tags applied (conv_files.c (2)). */
typedef struct hd_conv_tagged {
	char *text;         /* trimmed; `(no response)` when nothing is left */
	hd_reply_tag *room; /* the room tags, in order: team and body */
	size_t nroom;
	hd_conv_attach *files; /* attached, in order */
	size_t nfiles;
} hd_conv_tagged;

/* Apply the tags of reply (cleaned UTF-8) by agent: read the files it
 * sends from the agent's work directory, collect its room tags. Dispose
 * *out with hd_conv__tagged_dispose (also on failure). */
int hd_conv__tags_apply(hd_conv_tagged *out, hd_store *st, const char *agent,
    const char *reply, hd_err *err);
void hd_conv__tagged_dispose(hd_conv_tagged *t);
/* mentions.c's text helpers, shared with the reply tags (conv_files.c):
 * a malloc'd copy of s[0..n) trimmed of ASCII whitespace at both ends
 * (lower-cased when lc), NULL when memory ran out; and whether c may be
 * in an agent or team id. */
char *hd_conv__dup_trim(const char *s, size_t n, int lc);
int hd_conv__is_id_char(char c);

#endif
