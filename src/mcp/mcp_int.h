/*
 * mcp_int.h -- what mcp.c (the dispatcher and the 2025 era) and era.c
 * (the 2026-07-28 era) share inside src/mcp. Not for other modules.
 */
#ifndef HD_MCP_INT_H
#define HD_MCP_INT_H

#include "mcp.h"

/* The first (and so far only) revision of the stateless era. */
#define HD_MCP_MODERN "2026-07-28"

/* The reserved _meta keys of a 2026-07-28 request and result. */
#define HD_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define HD_MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define HD_MCP_META_CLIENT "io.modelcontextprotocol/clientInfo"
#define HD_MCP_META_SERVER "io.modelcontextprotocol/serverInfo"

/* {"jsonrpc":"2.0","id":<id>,"result":<result>} from result's JSON text
 * (taken; NULL when it could not be made). */
char *hd_mcp__reply_text(const json_t *id, char *result);
/* The same with the result an object (taken). */
char *hd_mcp__reply_result(const json_t *id, json_t *result);
/* An error reply; data (taken) is the error's "data", or NULL for none. */
char *hd_mcp__reply_error(
    const json_t *id, int code, const char *message, json_t *data);

/* tools/list's result for s (new reference). */
json_t *hd_mcp__tools_list(const hd_mcp_session *s);
/* tools/call's result as text; *bad when params has no string name. */
char *hd_mcp__tools_call(hd_mcp_session *s, const json_t *params, int *bad);
/* What a model reads of tools/call name(args) (tool-host.c): its text
 * blocks joined by a newline, or its error's message (*is_error 1);
 * NULL when out of memory. */
char *hd_mcp__tools_call_text(hd_mcp_session *s, const char *name,
    const json_t *args, int *is_error);

/* The capabilities initialize and server/discover give s (new). */
json_t *hd_mcp__capabilities(const hd_mcp_session *s);

/* The instructions initialize and server/discover give. */
extern const char hd_mcp__instructions[];

/* era.c: answer one request of the 2026-07-28 era (NULL only for an
 * accepted subscriptions/listen, s->listen.open then set, or when out
 * of memory); *status is its HTTP status. */
char *hd_mcp__modern(int *status, hd_mcp_session *s, const json_t *id,
    const char *method, const json_t *params, const hd_mcp_headers *h);

#endif
