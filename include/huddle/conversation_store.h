/*
 * conversation_store.h -- the stored state of conversations (SPEC 7): the
 * domain module src/conversation/ that alone writes tables conversations,
 * conversation_deliveries (the conversation engine's queue, SPEC 9.4),
 * conversation_replies and conversation_files (migrations 5 and 14). The
 * engine (conversation.h) decides what happens and when; this module
 * holds the rows and the SQL, and decides nothing.
 *
 * Contract:
 *  (1) Each function is one statement (or one read of related rows) on
 *      st. Those documented "in a write" run inside the caller's
 *      hd_store_write, as a part of a bigger transaction (the engine's
 *      claim, reply, take-over or cancel); the reads here that stand
 *      alone open their own read transaction (hd_conversation_get).
 *  (2) Every transition of a delivery is a conditional UPDATE that names
 *      the state it leaves (queued -> running, running -> queued, running
 *      -> done, queued/running -> cancelled), and a conversation's owner
 *      changes only by compare-and-set on the owner seen: a caller that
 *      lost a race changes nothing and is told so (*changed 0).
 *  (3) A delivery that leaves running has its recorded process (host,
 *      boot, pid, start) cleared in the same UPDATE.
 *  (4) Not-found rows are `conversation "x" not found` (HD_ENOTFOUND);
 *      other failures are the database's (HD_EBUSY, HD_ERR ...).
 * Callers: the conversation engine (src/engine/conversation.c,
 * conv_*.c, cancel.c), the supervisor (busy agents), and the surfaces
 * (hd_conversation_get, the files) through conversation.h.
 */
#ifndef HUDDLE_CONVERSATION_STORE_H
#define HUDDLE_CONVERSATION_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "store.h"

#define HD_CONVERSATION_ID_LEN 36 /* a UUID */

/* ---- reading a conversation -------------------------------------------- */

typedef struct hd_conversation_reply {
	int64_t seq; /* completion order, from 1 */
	char *agent;
	char *body;
	int is_error; /* 1: `[error: ...]` */
	int64_t delivery_id;
	int64_t at; /* ms since the epoch */
} hd_conversation_reply;

/* A message for an agent: the user's (from NULL) or a mention. */
typedef struct hd_conversation_delivery {
	int64_t id; /* arrival order (global) */
	char *to_agent;
	char *from_agent; /* NULL: the user */
	char *body;       /* the directed part */
	char *prompt;     /* exactly what the agent's turn received */
	char *state;      /* queued | running | done | cancelled */
	int64_t created_at;
	int64_t started_at;  /* 0 until claimed */
	int64_t finished_at; /* 0 until answered */
} hd_conversation_delivery;

typedef struct hd_conversation {
	char *id;
	char *team_id;
	char *origin;  /* who started it: "cli", "http", "api", ... */
	char *status;  /* running | completed | failed | cancelled */
	char *message; /* the user's message as sent */
	char *target;  /* the agent it was routed to */
	int64_t pending;
	int64_t total_messages; /* replies recorded */
	int64_t max_messages;
	int64_t created_at;
	int64_t completed_at;           /* 0 while running */
	char *response;                 /* the aggregate; NULL while running */
	hd_conversation_reply *replies; /* completion order */
	size_t nreplies;
	hd_conversation_delivery *deliveries; /* arrival order */
	size_t ndeliveries;
	struct hd_conversation_file *files; /* attached, id order; no bytes */
	size_t nfiles;
} hd_conversation;

/* Fetch a conversation with its replies, deliveries and files (without
 * their bytes), in one read transaction.
 * `conversation "x" not found` (HD_ENOTFOUND). hd_conversation_free(). */
int hd_conversation_get(
    hd_conversation **out, hd_store *st, const char *id, hd_err *err);
void hd_conversation_free(hd_conversation *c);

/* The REST shape: {"id","teamId","status","pending","totalMessages",
 * "replies":[{"agent","body","at","seq"}],"files":[file_to_json...],
 * "response","createdAt","completedAt","message","waitingFor"} (response
 * and completedAt null while running; message is the user's; waitingFor
 * the agents with a message not answered yet, each once, in arrival
 * order, [] once completed). A new reference. */
json_t *hd_conversation_to_json(const hd_conversation *c);

/* The status of conversation id into out (running, completed, failed,
 * cancelled). `conversation "x" not found`. */
int hd_convstore_status(
    char *out, size_t outlen, hd_store *st, const char *id, hd_err *err);

/* The row of conversation id that a cancel reads. */
typedef struct hd_convstore_head {
	char status[16];
	char team[64];
	char *owner; /* NULL: released */
	int64_t owner_pid, owner_start;
	int64_t total_messages, pending;
} hd_convstore_head;

/* Read conversation id's head into *out (free out->owner). `conversation
 * "x" not found`. */
int hd_convstore_head_get(
    hd_convstore_head *out, hd_store *st, const char *id, hd_err *err);

/* ---- writing a conversation (in a write) -------------------------------- */

/* A new conversation, running, pending 1, owned by owner (pid, start). */
typedef struct hd_convstore_new {
	const char *id;
	const char *team;
	const char *origin;
	const char *message;
	const char *target; /* the agent it was routed to */
	int64_t max_messages;
	int64_t created_at;
	const char *owner;
	int64_t owner_pid, owner_start;
} hd_convstore_new;

int hd_convstore_insert(hd_store *st, const hd_convstore_new *n, hd_err *err);

/* After a reply: total_messages and pending as given. */
int hd_convstore_set_counts(
    hd_store *st, const char *id, int64_t total, int64_t pending, hd_err *err);

/* running -> completed with response, when pending is 0 and owner still
 * owns it: *changed 1 when it did. */
int hd_convstore_complete(int *changed, hd_store *st, const char *id,
    const char *response, int64_t now, const char *owner, hd_err *err);

/* running -> cancelled with response (whoever owns it). */
int hd_convstore_cancelled(hd_store *st, const char *id, const char *response,
    int64_t now, hd_err *err);

/* Take running conversation id over from old_owner (NULL: released), by
 * compare-and-set: *changed 0 when its owner changed meanwhile or it
 * ended. */
int hd_convstore_adopt(int *changed, hd_store *st, const char *id,
    const char *old_owner, const char *owner, int64_t pid, int64_t start,
    hd_err *err);

/* Release every running conversation owner owns. */
int hd_convstore_disown(hd_store *st, const char *owner, hd_err *err);

/* conversation id's pending count and team (left as they are when there
 * is no such row). */
int hd_convstore_pending_team(int64_t *pending, char *team, size_t teamlen,
    hd_store *st, const char *id, hd_err *err);

/* Running conversations owned by someone other than owner (or no one),
 * oldest first, read in one read transaction. */
typedef struct hd_convstore_foreign {
	char id[HD_CONVERSATION_ID_LEN + 1];
	char *owner; /* NULL: released */
	int64_t pid;
	int64_t start;
} hd_convstore_foreign;

int hd_convstore_foreign_list(hd_convstore_foreign **out, size_t *n,
    hd_store *st, const char *owner, hd_err *err);
void hd_convstore_foreign_free(hd_convstore_foreign *l, size_t n);

/* ---- the queue of deliveries -------------------------------------------- */

/* A claimed (or blocked) delivery: what the engine runs. */
typedef struct hd_convstore_claim {
	int64_t delivery_id;
	char conversation_id[HD_CONVERSATION_ID_LEN + 1];
	char team[64];
	char agent[64];
	char *prompt;
	int64_t post_seq; /* the room post carrying it, or 0 */
	/* blocked: the conversation whose running message blocks the agent,
	 * and its owner as read */
	char blocker[HD_CONVERSATION_ID_LEN + 1];
	char *blocker_owner;
	int64_t blocker_pid;
	int64_t blocker_start;
} hd_convstore_claim;

/* Lists of agent ids below are malloc'd arrays of malloc'd strings:
 * free them with hd_strv_free (util.h). */

/* Enqueue the user's message (in a write): from NULL, its prompt its
 * body, carried by room post post_seq (0: none). */
int hd_convstore_enqueue_user(hd_store *st, const char *conv, const char *to,
    const char *body, int64_t now, int64_t post_seq, hd_err *err);

/* Enqueue a mention from agent from (in a write); *id is its delivery. */
int hd_convstore_enqueue_mention(int64_t *id, hd_store *st, const char *conv,
    const char *to, const char *from, const char *body, const char *prompt,
    int64_t now, hd_err *err);

/* The oldest queued delivery for agent among the running conversations
 * owner owns that no cancel request names: *found 1 and c's delivery,
 * conversation, prompt, team, agent and post_seq set. */
int hd_convstore_next_queued(int *found, hd_convstore_claim *c, hd_store *st,
    const char *agent, const char *owner, hd_err *err);

/* A delivery for agent running anywhere: *found 1 and c's blocker,
 * blocker_owner (malloc'd), blocker_pid and blocker_start set. */
int hd_convstore_running_for(int *found, hd_convstore_claim *c, hd_store *st,
    const char *agent, hd_err *err);

/* *busy 1 while a delivery for agent is running, in any process. */
int hd_convstore_agent_busy(
    int *busy, hd_store *st, const char *agent, hd_err *err);

/* Delivery id queued -> running at now (in a write). */
int hd_convstore_start(hd_store *st, int64_t id, int64_t now, hd_err *err);

/* Delivery id running -> queued (in a write). */
int hd_convstore_requeue(hd_store *st, int64_t id, hd_err *err);

/* Every running delivery of conv -> queued (in a write). */
int hd_convstore_requeue_all(hd_store *st, const char *conv, hd_err *err);

/* Delivery id running -> done at now (in a write). */
int hd_convstore_done(hd_store *st, int64_t id, int64_t now, hd_err *err);

/* Record where running delivery id's runtime process runs. */
int hd_convstore_run_record(hd_store *st, int64_t id, const char *host,
    const char *boot, int64_t pgid, int64_t start, hd_err *err);

/* Kill the process group each running delivery of conv recorded, when it
 * ran on this host in this boot (hd_proc_group_kill checks the recording
 * still names it); each kill is logged. */
int hd_convstore_kill_running(hd_store *st, const char *conv, hd_err *err);

/* The agents of conv's running deliveries (one per delivery) / of its
 * queued ones (each once), appended to *v. */
int hd_convstore_running_agents(
    char ***v, size_t *n, hd_store *st, const char *conv, hd_err *err);
int hd_convstore_queued_agents(
    char ***v, size_t *n, hd_store *st, const char *conv, hd_err *err);

/* The agents with an unanswered (queued or running) delivery in conv
 * other than delivery except, each once, appended to *v. */
int hd_convstore_unanswered(char ***v, size_t *n, hd_store *st,
    const char *conv, int64_t except, hd_err *err);

/* The deliveries of conv from agent from, first on, are carried by room
 * post post_seq (in a write). */
int hd_convstore_carry(hd_store *st, const char *conv, const char *from,
    int64_t first, int64_t post_seq, hd_err *err);

/* Delivery id running -> cancelled / every queued or running delivery
 * of conv -> cancelled, at now (in a write). */
int hd_convstore_cancel_delivery(
    hd_store *st, int64_t id, int64_t now, hd_err *err);
int hd_convstore_cancel_deliveries(
    hd_store *st, const char *conv, int64_t now, hd_err *err);

/* ---- replies ------------------------------------------------------------- */

/* Whether delivery id may be answered by owner: *ours 1 when it is
 * running and its conversation is owner's; the conversation's
 * total_messages, max_messages and pending as read. */
int hd_convstore_answerable(int *ours, int64_t *total, int64_t *max,
    int64_t *pending, hd_store *st, int64_t id, const char *owner, hd_err *err);

/* Reply seq of conv to delivery (in a write). */
typedef struct hd_convstore_reply {
	const char *conv;
	int64_t seq;
	int64_t delivery_id;
	const char *agent;
	const char *body;
	int is_error;
	int64_t created_at;
} hd_convstore_reply;

int hd_convstore_reply_add(
    hd_store *st, const hd_convstore_reply *r, hd_err *err);

/* ---- files a reply attached ---------------------------------------------- */

/* A file read for a reply, before its transaction. */
typedef struct hd_convstore_attach {
	char *name;             /* a base name */
	const char *media_type; /* static */
	unsigned char *content;
	size_t size;
} hd_convstore_attach;

/* Store files as attached by agent to reply seq of conv (in a write). */
int hd_convstore_files_add(hd_store *st, const char *conv, int64_t seq,
    const char *agent, const hd_convstore_attach *files, size_t n, hd_err *err);

/* A file a reply attached (table conversation_files). */
typedef struct hd_conversation_file {
	int64_t id;  /* unique across conversations */
	int64_t seq; /* the reply's seq */
	char *agent;
	char *name; /* a base name: no '/', never "." or ".." */
	char *media_type;
	int64_t size;
	unsigned char *content; /* size bytes, or NULL when not fetched */
	int64_t created_at;
} hd_conversation_file;

/* {"id","seq","agent","name","mediaType","size","createdAt"}: a new
 * reference. */
json_t *hd_conversation_file_to_json(const hd_conversation_file *f);

/*
 * One attached file with its bytes. `conversation "x" not found`, `file N
 * not found in conversation x` (HD_ENOTFOUND). Free *out with
 * hd_conversation_file_free().
 */
int hd_conversation_file_get(hd_conversation_file **out, hd_store *st,
    const char *id, int64_t file_id, hd_err *err);
void hd_conversation_file_free(hd_conversation_file *f);

/* A team's conversations (team removal, src/lifecycle/remove.c, in its
 * write transaction): how many it keeps; delete them, with the team's
 * cancel requests. */
int hd_convstore_team_count(
    int64_t *n, hd_store *st, const char *team, hd_err *err);
int hd_convstore_team_purge(hd_store *st, const char *team, hd_err *err);

#endif
