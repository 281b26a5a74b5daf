/*
 * mcp.h -- huddle's MCP server core (SPEC 10): one JSON-RPC dispatcher
 * shared by the stdio transport (`huddle mcp`) and Streamable HTTP
 * (`POST /mcp`), and the tool table.
 *
 * An hd_mcp_server is built once per process and is read-only afterwards,
 * so any number of threads may dispatch through it. An hd_mcp_session is
 * one client connection's state (its identity binding and negotiated
 * version) and belongs to one thread at a time, as does its store.
 */
#ifndef HD_MCP_H
#define HD_MCP_H

#include <stddef.h>

#include <jansson.h>

#include <huddle/room.h>

#define HD_MCP_NAME_MAX 64

typedef struct hd_mcp_server hd_mcp_server;

typedef struct hd_mcp_session {
	const hd_mcp_server *srv;
	hd_store *st; /* borrowed */
	int bound;    /* identity fixed at attach; arguments cannot change it */
	int read_only; /* unbound with a bad or missing sig (HTTP) */
	char team[HD_MCP_NAME_MAX];
	char agent[HD_MCP_NAME_MAX];
	char protocol[16]; /* negotiated at initialize */
	int initialized;
	/* How team_chat_post writes: NULL means hd_room_post on st; the HTTP
	 * server routes it through its group committer instead. */
	int (*post)(void *ctx, hd_post **out, const char *team,
	    const char *author, const char *text, hd_err *err);
	/* Or, when set, team_chat_post first offers its post here: 1 means
	 * taken -- written elsewhere, the reply waits (hd_mcp_handle leaves
	 * it pending, hd_mcp_finish_post makes it) -- 0 means write it now
	 * as above. team, author and text stay valid while pending. */
	int (*defer_post)(
	    void *ctx, const char *team, const char *author, const char *text);
	void *post_ctx;  /* for post and defer_post */
	int deferred;    /* set by team_chat_post when defer_post took it */
	json_t *pending; /* the request whose reply waits, or NULL */
} hd_mcp_session;

/* What a tool handler gets: the session, its arguments (validated against
 * the tool's inputSchema) and the identity resolved for this call. */
typedef struct hd_mcp_call {
	hd_mcp_session *s;
	json_t *args;
	const char *team;  /* NULL when the tool needs none and none given */
	const char *agent; /* likewise */
} hd_mcp_call;

/* A handler sets *result to a JSON object (a new reference) or fails with
 * err set; the message goes back to the model as an isError result. */
typedef int (*hd_mcp_tool_fn)(json_t **result, hd_mcp_call *call, hd_err *err);

enum {
	HD_TOOL_READ = 0,
	HD_TOOL_WRITE = 1 << 0,       /* refused on a read-only connection */
	HD_TOOL_NEEDS_TEAM = 1 << 1,  /* a team must be known */
	HD_TOOL_NEEDS_AGENT = 1 << 2, /* an agent must be known */
	/* its write may go through the session's post hooks (another
	 * connection's commit), so it cannot share a transaction */
	HD_TOOL_OWN_COMMIT = 1 << 3,
};

/* A bound agent's tool result carries at most this many of its
 * undelivered mailbox messages (the tool-result piggyback). */
#define HD_MCP_PIGGYBACK_MAX 5

typedef struct hd_mcp_tool {
	const char *name;
	const char *description;
	const char *schema; /* JSON: {"type":"object","properties":...} */
	int flags;
	hd_mcp_tool_fn fn;
} hd_mcp_tool;

/* The tool groups, each NULL-name terminated (tool-<group>.c). */
extern const hd_mcp_tool hd_mcp_tools_team[];
extern const hd_mcp_tool hd_mcp_tools_chat[];
extern const hd_mcp_tool hd_mcp_tools_board[];
extern const hd_mcp_tool hd_mcp_tools_mail[];

/* Build the server: parses every tool's schema once. */
int hd_mcp_server_new(hd_mcp_server **out, hd_err *err);
void hd_mcp_server_free(hd_mcp_server *srv);

/* A fresh, unbound session on st. */
void hd_mcp_session_init(
    hd_mcp_session *s, const hd_mcp_server *srv, hd_store *st);

/* Bind a session to (team, agent); both must be valid slugs. */
int hd_mcp_session_bind(
    hd_mcp_session *s, const char *team, const char *agent, hd_err *err);

/*
 * Handle one JSON-RPC message of len bytes. *reply is the malloc'd reply
 * text (one line, no newline), or NULL when the message needs none
 * (notifications, responses). Never fails: every error becomes a JSON-RPC
 * error reply.
 */
void hd_mcp_handle(
    char **reply, hd_mcp_session *s, const char *msg, size_t len);

/* 1 when the last hd_mcp_handle left its reply pending: a deferred
 * team_chat_post (defer_post). */
int hd_mcp_pending(const hd_mcp_session *s);

/* The pending reply, once its post is settled: rc and err are what
 * hd_room_post would have returned, p the post on success. Sets *reply
 * (malloc'd) exactly as hd_mcp_handle would have; the session is no
 * longer pending. */
void hd_mcp_finish_post(char **reply, hd_mcp_session *s, int rc,
    const hd_post *p, const hd_err *err);

/* Release what a session holds (a pending request). The session may be
 * used again after hd_mcp_session_init. */
void hd_mcp_session_dispose(hd_mcp_session *s);

/* 1 when msg is a JSON-RPC notification or response (so HTTP answers 202)
 * -- decided from the same parse hd_mcp_handle does. */
int hd_mcp_is_notification(const char *msg, size_t len);

/* team_chat_post's result for the stored post p (tool-chat.c). */
json_t *hd_mcp__chat_posted(const hd_post *p);

/* Helpers for tool handlers. */
const char *hd_mcp_arg_str(const hd_mcp_call *c, const char *name);
int hd_mcp_arg_int(
    const hd_mcp_call *c, const char *name, int64_t dflt, int64_t *out);

#endif
