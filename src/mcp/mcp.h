/*
 * mcp.h -- huddle's MCP server core (SPEC 10): one JSON-RPC dispatcher
 * shared by the stdio transport (`huddle mcp`) and Streamable HTTP
 * (`POST /mcp`). The tools are the operation table's entries that have
 * an MCP name (src/ops/ops.h): their list, schemas and argument checks
 * are derived from it.
 *
 * Two eras (SPEC 10.1): a client that starts with initialize is served as
 * in 2025-11-25; a request carrying 2026-07-28's per-request _meta is
 * served stateless under that revision's rules, decided per request.
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
#include <huddle/runtime.h>

#include <ops/ops.h>

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
	int handshake;	/* a 2025 initialize succeeded in this message */
	int can_listen; /* the transport streams notifications (HTTP) */
	/* A 2026-07-28 subscriptions/listen the dispatcher accepted: the
	 * transport opens the stream (and frees id); no reply is made. */
	struct {
		int open;
		int room, mail; /* HD_MCP_FILTER_ROOM / _MAIL asked for */
		char *id;	/* the request's id as JSON text */
	} listen;
} hd_mcp_session;

/*
 * Live delivery to a bound agent (SPEC 10.1): its team's room posts and
 * its mail as notifications, over GET /mcp (2025, with a session) and
 * subscriptions/listen (2026-07-28). The revision defines no generic
 * notification for either, so they are vendor methods; a 2026 listen
 * opts in to each with its filter key. Advertised under the capability
 * HD_MCP_LISTEN_CAP (in "experimental") where the transport streams.
 */
#define HD_MCP_LISTEN_CAP "huddle/listen"
#define HD_MCP_NOTE_ROOM "notifications/huddle/room"
#define HD_MCP_NOTE_MAIL "notifications/huddle/mail"
#define HD_MCP_FILTER_ROOM "huddle/room"
#define HD_MCP_FILTER_MAIL "huddle/mail"
#define HD_MCP_META_SUB "io.modelcontextprotocol/subscriptionId"

/* A bound agent's tool result carries at most this many of its
 * undelivered mailbox messages (the tool-result piggyback). */
#define HD_MCP_PIGGYBACK_MAX 5

/* Build the server: makes every tool's schema once. */
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

/* What an HTTP request's MCP headers say, each NULL when absent. */
typedef struct hd_mcp_headers {
	const char *protocol_version; /* MCP-Protocol-Version */
	const char *method;	      /* Mcp-Method */
	const char *name;	      /* Mcp-Name */
} hd_mcp_headers;

/*
 * hd_mcp_handle for POST /mcp: h (NULL on stdio) is checked against the
 * body in the 2026-07-28 era, and *status is the HTTP status the reply
 * goes out with: 200, or in that era 400 (bad _meta -32602, header
 * mismatch -32020, missing client capability -32021, unsupported version
 * -32022) and 404 (method not found -32601).
 */
void hd_mcp_handle_http(char **reply, int *status, hd_mcp_session *s,
    const char *msg, size_t len, const hd_mcp_headers *h);

/* 1 when msg is a JSON-RPC notification or response (so HTTP answers 202)
 * -- decided from the same parse hd_mcp_handle does. */
int hd_mcp_is_notification(const char *msg, size_t len);

/* The operation table's tools for the native runtime, run in process as
 * the turn's agent (tool-host.c): what main() registers with
 * hd_runtime_set_tool_host. Static. */
const hd_runtime_tool_host *hd_mcp_tool_host(void);

#endif
