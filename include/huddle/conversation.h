/*
 * conversation.h -- mention-routed conversations (SPEC 7).
 *
 * A user message to a team starts a conversation that flows between the
 * team's agents actor style: each agent handles one message at a time, in
 * arrival order; different agents run in parallel; replies that mention
 * teammates with tags ([@coder: ...]) send them messages, until nothing is
 * pending. Three parts:
 *
 *  - the pure functions (mentions.h): the tag parser (hd_mentions_parse),
 *    the delivered text (hd_mentions_delivery), the aggregate's rendering
 *    of a reply (hd_mentions_display) and the routing of the user's
 *    message (hd_conversation_route);
 *  - the durable state: conversations, their queued deliveries, their
 *    replies and files live in the database (conversation_store.h, the
 *    domain module src/conversation/), so a conversation whose process
 *    died is resumed by the next engine that starts;
 *  - the engine (hd_conversation_engine): per-agent worker threads that
 *    run turns through hd_runtime_run() and record each reply.
 *
 * Precise rules (where SPEC 7 leaves a choice, the choice is written here):
 *  (1) `pending` starts at 1 and, in the transaction that records a reply,
 *      grows by the mentions that reply enqueued and drops by 1 for the
 *      message answered; the conversation completes at 0. The
 *      conversation_reply event carries pending after the mentions were
 *      added and before the answered message is taken off, so a fan-out
 *      of three reads 1 (conversation_started), 4, 3, 2, 1 (the replies),
 *      0 (conversation_completed).
 *  (2) Loop guard: a reply's mentions are enqueued only when, counting
 *      that reply, the conversation has recorded fewer than max_messages
 *      replies (fixed when the conversation starts: the team's setting,
 *      default 15). A ping-pong therefore ends after exactly max_messages
 *      replies; messages already queued are still answered.
 *  (3) The pending note's N is computed when a mention is delivered, i.e.
 *      enqueued, in the transaction that records the reply carrying it:
 *      the number of distinct agents other than the recipient that have an
 *      unanswered message in the conversation at that moment (the other
 *      targets of the same reply included, the message being answered
 *      excluded). The delivered text is frozen then; a resumed
 *      conversation delivers exactly the same text.
 *  (4) A runtime failure becomes the reply `[error: <message>]`, counted
 *      like any reply; its text is never parsed for mentions. A reply is
 *      stored with invalid UTF-8 and NUL bytes made U+FFFD and trimmed at
 *      both ends; an empty reply is stored as `(no response)`.
 *  (5) Every message gets exactly one reply: a delivery is claimed
 *      (queued -> running) and answered (running -> done, with its reply,
 *      the new deliveries, the room post and the events) in two
 *      transactions; a turn cut short by a stopped engine or a killed
 *      process is put back in the queue and run again.
 *  (6) A reply (not an error reply) is recorded after its room and file
 *      tags are applied (conv_files.c): `[#team: msg]` is removed and its
 *      message posted to that team's room as the agent (dropped with a
 *      mention_dropped event, target `#team`, for an empty message, an
 *      unknown team or a team the agent is not in); `[send_file: path]`
 *      is removed and the file attached when it can be, else kept and
 *      followed by ` (file not attached: <why>)`. Mentions are parsed
 *      from what is left. Then an answer over HD_CONVERSATION_ANSWER_MAX
 *      characters is stored cut (hd_conversation_cut) and its whole text
 *      attached as answer-<seq>.md; the room post, the event and the
 *      aggregate show the stored, cut text. Files commit with the reply.
 */
#ifndef HUDDLE_CONVERSATION_H
#define HUDDLE_CONVERSATION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "conversation_store.h"
#include "err.h"
#include "mentions.h"
#include "store.h"

#define HD_CONVERSATION_MAX_MESSAGES_DEFAULT 15
#define HD_CONVERSATION_MAX_MESSAGES_LIMIT 1000

/* ---- reply tags: the room and files (pure parser) --------------------- */

/*
 * Besides mentions, a reply may carry two more tags, parsed
 * outside mention tags only (a tag inside a mention's body is part of the
 * message to the teammate):
 *   `[#<team>: <message>]`  post message to that team's room as the agent
 *                           (team: one id, as a mention's, spaces around
 *                           it ignored, lower-cased);
 *   `[send_file: <path>]`   attach the file at path to the answer.
 * The body runs from the first `:` to the `]` that balances the tag's `[`
 * and is trimmed. A candidate that fails (`[#x no colon]`, `[send_file
 * x]`, unbalanced) is not a tag and scanning resumes right after its `[`.
 */
typedef enum hd_reply_tag_kind {
	HD_REPLY_TAG_ROOM = 1,
	HD_REPLY_TAG_FILE = 2,
} hd_reply_tag_kind;

typedef struct hd_reply_tag {
	hd_reply_tag_kind kind;
	size_t start; /* offset of its '[' */
	size_t end;   /* offset just past its ']' */
	char *team;   /* HD_REPLY_TAG_ROOM: lower-cased; else NULL */
	char *body;   /* the message, or the path; trimmed */
} hd_reply_tag;

typedef struct hd_reply_tags {
	hd_reply_tag *tags; /* in order */
	size_t n;
} hd_reply_tags;

/* Parse the len bytes at text. Dispose *out with hd_reply_tags_dispose()
 * (also on failure). Returns 0 or HD_ENOMEM. */
int hd_reply_tags_parse(
    hd_reply_tags *out, const char *text, size_t len, hd_err *err);
void hd_reply_tags_dispose(hd_reply_tags *t);

/* The longest answer a reply delivers, in characters (code points): a
 * longer one is cut and attached whole (hd_conversation_cut). */
#define HD_CONVERSATION_ANSWER_MAX 4000
/* The most bytes of files one reply attaches. */
#define HD_CONVERSATION_FILES_MAX (10 * 1024 * 1024)

/*
 * Cut a valid UTF-8 answer of more than max characters: *out is its first
 * max characters, then `… [the full answer, <N> characters, is attached
 * as <name>]` (N with thousands separators); NULL when text fits. *out is
 * malloc'd. Returns 0 or HD_ENOMEM.
 */
int hd_conversation_cut(char **out, const char *text, size_t max,
    const char *name, hd_err *err);

/* ---- conversations (durable state) ------------------------------------ */

/* The conversation as stored (hd_conversation, hd_conversation_get, its
 * files) is conversation_store.h's. */

/*
 * The aggregate (SPEC 7): one reply as it is; several as `@<agent>:
 * <reply>` in completion order, each reply through hd_mentions_display,
 * joined by `\n\n------\n\n`. "" for none. *out is malloc'd.
 */
int hd_conversation_aggregate(
    char **out, const hd_conversation *c, hd_err *err);

/*
 * The transcript, byte for byte:
 *   # Team Conversation: <team name> (@<team>)\n\n
 *   Date: <created_at as 2026-11-22T10:29:03.123Z>\n
 *   Messages: <total_messages>\n\n
 *   ## User\n\n<message>\n\n
 *   ## <agent>\n\n<reply>\n\n          (one per reply, completion order)
 * with the last section ending in a single \n. *out is malloc'd.
 */
int hd_conversation_transcript(
    char **out, const hd_conversation *c, const char *team_name, hd_err *err);

/* HUDDLE_HOME/chats/<team>/<YYYYMMDD-HHMMSS>-<id>.md, the time being
 * created_at in UTC. */
int hd_conversation_transcript_path(char *out, size_t outlen, const char *home,
    const hd_conversation *c, hd_err *err);

/*
 * The loop guard of a team (SPEC 7; kv `team:<id>:max_messages`): the
 * setting, or HD_CONVERSATION_MAX_MESSAGES_DEFAULT. Setting it: `team "x"
 * not found`; `max messages must be between 1 and 1000` (HD_EINVAL).
 */
int hd_conversation_max_messages(
    int64_t *out, hd_store *st, const char *team, hd_err *err);
int hd_conversation_set_max_messages(
    hd_store *st, const char *team, int64_t n, hd_err *err);

/* ---- the engine ------------------------------------------------------- */

typedef struct hd_conversation_engine hd_conversation_engine;

/* A reply just recorded (every pointer borrowed for the call). */
typedef struct hd_conversation_reply_info {
	const char *conversation_id;
	const char *team;
	const char *agent;
	const char *body;
	int64_t seq;
	int64_t pending; /* as in the conversation_reply event, (1) */
	int is_error;
} hd_conversation_reply_info;

/* Called on a worker thread after each reply commits; calls are
 * serialized by the engine, so the callback needs no lock of its own. */
typedef void (*hd_conversation_reply_fn)(
    const hd_conversation_reply_info *r, void *payload);

typedef struct hd_conversation_engine_config {
	const char *home; /* HUDDLE_HOME (resolved); required */
	hd_conversation_reply_fn on_reply; /* or NULL */
	void *payload;
	/* When set, each turn gets the agent's MCP attach URL on
	 * mcp_host:mcp_port and mcp_token (SPEC 10.4). */
	const char *mcp_host;
	int mcp_port;
	const char *mcp_token;
	int idle_ms; /* an idle worker thread exits after this; default 2000 */
} hd_conversation_engine_config;

/*
 * Start an engine: nothing runs until a conversation is started or
 * resumed. Each worker thread opens its own store on cfg->home. *out
 * belongs to the caller: hd_conversation_engine_stop() it.
 */
int hd_conversation_engine_start(hd_conversation_engine **out,
    const hd_conversation_engine_config *cfg, hd_err *err);

/*
 * Stop: turns in progress are aborted and their messages put back in the
 * queue, the worker threads are joined, and the conversations this engine
 * ran are released for the next engine to resume. e is freed: no other
 * call on e may be running or follow (stop it once its users are done).
 * NULL-safe.
 */
void hd_conversation_engine_stop(hd_conversation_engine *e);

typedef struct hd_conversation_spec {
	const char *team;
	const char *message; /* 1..100000 bytes of UTF-8 */
	const char *origin;  /* default "api" */
} hd_conversation_spec;

/*
 * Start a conversation on e: route the message, record the conversation
 * and its first delivery, post the message to the room (kind user), emit
 * conversation_started, and hand it to the agent's worker. Returns at
 * once; out (>= 37 bytes) gets the conversation id. Refusals:
 * `message must not be empty` (also when blank, or blank after the
 * routing prefix), `message is N bytes; the limit is 100000`
 * (HD_ETOOBIG), `message must be valid UTF-8`, `team "x" not found`,
 * `team "dev" is not active (status: shutdown)` and `team "dev" has no
 * leader: address an agent with @<agent>` (HD_EREFUSED).
 */
int hd_conversation_start(char *out, hd_conversation_engine *e, hd_store *st,
    const hd_conversation_spec *spec, hd_err *err);

/*
 * Wait until conversation id is completed (0), timeout_ms passes
 * (-1: no limit; HD_ETIMEOUT `conversation x is still running`) or the
 * engine stops (HD_ECONFLICT `the conversation engine is stopping`).
 */
int hd_conversation_wait(hd_conversation_engine *e, hd_store *st,
    const char *id, int timeout_ms, hd_err *err);

/*
 * Resume conversations left running by an engine that is gone (its
 * process died, or it was stopped): take them over, put their interrupted
 * messages back in the queue, and finish any whose replies are all in.
 * *adopted (when non-NULL) is how many were taken over. A worker blocked
 * by a dead engine's message does the same for that conversation, so
 * nothing waits for a restart to make progress.
 */
int hd_conversation_resume_all(
    size_t *adopted, hd_conversation_engine *e, hd_store *st, hd_err *err);

/*
 * The same conversation, started again: when a conversation of spec's
 * team, with spec's message and origin, is running under an engine that
 * is gone (its process died mid-turn), take it over as
 * hd_conversation_resume_all would (the process group its interrupted
 * turn recorded is killed, the turn queued again) and put its id in out
 * (HD_CONVERSATION_ID_LEN + 1 bytes); *found is 1 then, else 0 and
 * nothing changed. Its replies already recorded are kept: only the turns
 * cut short run again.
 */
int hd_conversation_resume_same(char *out, int *found,
    hd_conversation_engine *e, hd_store *st, const hd_conversation_spec *spec,
    hd_err *err);

#endif
