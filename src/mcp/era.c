/*
 * era.c -- MCP's 2026-07-28 era: one request served stateless, beside
 * the 2025 era mcp.c keeps (mcp.c (7) decides which era a request is in).
 *
 * A request of this era is checked in this order, the first failure
 * answering it (the order the revision and its conformance suite give):
 *  (1) The _meta envelope: io.modelcontextprotocol/protocolVersion a
 *      string, io.modelcontextprotocol/clientCapabilities an object,
 *      io.modelcontextprotocol/clientInfo, when present, an object with a
 *      string name and version. Missing or malformed: -32602, HTTP 400.
 *      An initialize with no envelope but a 2026 MCP-Protocol-Version
 *      header is a header mismatch (-32020, 400).
 *  (2) Over HTTP, an MCP-Protocol-Version or Mcp-Method header that
 *      disagrees with the body: -32020, 400.
 *  (3) A protocol version this server does not speak in this era:
 *      -32022, 400, data {"supported":[...],"requested":"..."}.
 *  (4) Over HTTP, the headers the revision requires on every request:
 *      MCP-Protocol-Version, Mcp-Method, and for tools/call Mcp-Name,
 *      which (optional whitespace stripped, a =?base64?...?= value
 *      decoded) must name the body's tool: missing or different, -32020,
 *      400.
 *  (5) The method: server/discover, tools/list, tools/call and, where
 *      the transport streams (HTTP), subscriptions/listen; any other --
 *      the removed initialize, ping, logging/setLevel, resources/
 *      subscribe, and listen over stdio -- is -32601 with HTTP 404. A
 *      tools/call whose inputResponses is not an object of objects is
 *      -32602 (HTTP 200, as any bad params). Every result says
 *      "resultType":"complete"; tools/list and server/discover carry
 *      their cache hints.
 *  (6) subscriptions/listen: params.notifications must be an object
 *      (-32602). Of its filter keys huddle honours HD_MCP_FILTER_ROOM and
 *      HD_MCP_FILTER_MAIL (mcp.h), which only a bound agent may ask for:
 *      a read-only connection asking is refused, -32602 with HTTP 403,
 *      never streamed. The standard keys (list changes, resource
 *      updates) name nothing a tools-only server with a fixed tool list
 *      sends, so they are accepted and left out of the acknowledgement.
 *      An accepted listen gets no reply here: the session records it
 *      (s->listen) and the transport opens the stream (route-mcp.c).
 *  No huddle tool or method relies on a capability of the client (no
 *  sampling, elicitation or roots), so none is ever refused with -32021
 *  (MissingRequiredClientCapability): a method that comes to need one
 *  checks the envelope's clientCapabilities at (5) and answers -32021
 *  with HTTP 400 and data {"requiredCapabilities":{"<name>":{}}}.
 *
 * Nothing here touches the session's 2025 state (negotiated version,
 * initialized): the identity binding (signed URL, stdio --team/--agent)
 * and read-only rule apply as in the 2025 era, through the same tool
 * methods. Called only by hd_mcp_handle_http (mcp.c).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <huddle/buf.h>
#include <huddle/util.h>
#include <huddle/version.h>

#include "mcp_int.h"

/* How long a client may reuse tools/list and server/discover: the tools
 * are fixed for the life of the server, so this only bounds how late a
 * client hears of an upgraded one. Private: a read-only connection lists
 * fewer tools than a bound one. */
#define ERA_TTL_MS 300000

static char *
era_error(int *status, int http, const json_t *id, int code,
    const char *message, json_t *data)
{
	*status = http;
	return hd_mcp__reply_error(id, code, message, data);
}

/* (1): NULL when meta is a valid envelope, else what is wrong with it. */
static const char *
envelope_problem(const json_t *meta)
{
	const json_t *v, *info;

	if (!json_is_object(meta))
		return "Invalid params: the request has no _meta object; "
		       "2026-07-28 requests carry " HD_MCP_META_VERSION
		       " and " HD_MCP_META_CAPS " in params._meta";
	v = json_object_get(meta, HD_MCP_META_VERSION);
	if (v == NULL)
		return "Invalid params: _meta is missing " HD_MCP_META_VERSION;
	if (!json_is_string(v))
		return "Invalid params: _meta's " HD_MCP_META_VERSION
		       " must be a string";
	v = json_object_get(meta, HD_MCP_META_CAPS);
	if (v == NULL)
		return "Invalid params: _meta is missing " HD_MCP_META_CAPS;
	if (!json_is_object(v))
		return "Invalid params: _meta's " HD_MCP_META_CAPS
		       " must be an object";
	info = json_object_get(meta, HD_MCP_META_CLIENT);
	if (info != NULL &&
	    (!json_is_object(info) ||
		!json_is_string(json_object_get(info, "name")) ||
		!json_is_string(json_object_get(info, "version"))))
		return "Invalid params: _meta's " HD_MCP_META_CLIENT
		       " must be an object with a string name and version";
	return NULL;
}

/* A header value without its optional whitespace, into out (size n);
 * 0, or -1 when it does not fit. */
static int
strip_ows(char *out, size_t n, const char *v)
{
	size_t len;

	v += strspn(v, " \t");
	len = strlen(v);
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (len >= n)
		return -1;
	memcpy(out, v, len);
	out[len] = '\0';
	return 0;
}

/* (4): an Mcp-Name value as the name it stands for, into out (size n):
 * plain, or =?base64?<text>?= decoded; 0, or -1 when it is malformed. */
static int
decode_name(char *out, size_t n, const char *header)
{
	char v[512];
	size_t len, pad = 0;
	int got;

	if (strip_ows(v, sizeof(v), header) < 0)
		return -1;
	len = strlen(v);
	if (len < 12 || strncmp(v, "=?base64?", 9) != 0 ||
	    strcmp(v + len - 2, "?=") != 0) {
		if (len >= n)
			return -1;
		memcpy(out, v, len + 1);
		return 0;
	}
	v[len - 2] = '\0';
	len -= 11;
	if (len % 4 != 0 || len / 4 * 3 >= n)
		return -1;
	while (pad < 2 && pad < len && v[9 + len - 1 - pad] == '=')
		pad++;
	got = EVP_DecodeBlock((unsigned char *)out,
	    (const unsigned char *)v + 9, (int)len);
	if (got < 0 || (size_t)got < pad)
		return -1;
	out[got - (int)pad] = '\0';
	return strlen(out) == (size_t)got - pad ? 0 : -1;
}

/* (4): the headers every request carries, and Mcp-Name against the
 * body's tool; NULL when all is there, else the -32020 message. */
static const char *
header_missing(char *buf, size_t n, const hd_mcp_headers *h,
    const char *method, const json_t *params)
{
	const char *tool = json_string_value(json_object_get(params, "name"));
	char name[256];

	if (h == NULL)
		return NULL;
	if (h->protocol_version == NULL)
		return "Header mismatch: the required MCP-Protocol-Version "
		       "header is absent";
	if (h->method == NULL)
		return "Header mismatch: the required Mcp-Method header is "
		       "absent";
	if (strcmp(method, "tools/call") != 0 || tool == NULL)
		return NULL;
	if (h->name == NULL) {
		snprintf(buf, n,
		    "Header mismatch: the body calls tool \"%.64s\" but the "
		    "required Mcp-Name header is absent",
		    tool);
		return buf;
	}
	if (decode_name(name, sizeof(name), h->name) < 0 ||
	    strcmp(name, tool) != 0) {
		snprintf(buf, n,
		    "Header mismatch: the body calls tool \"%.64s\" but the "
		    "Mcp-Name header says \"%.64s\"",
		    tool, h->name);
		return buf;
	}
	return NULL;
}

/* (2): MCP-Protocol-Version and Mcp-Method against the body, which they
 * must repeat exactly; NULL or the -32020 message (in buf). */
static const char *
header_disagrees(char *buf, size_t n, const hd_mcp_headers *h,
    const char *version, const char *method)
{
	char v[128];

	if (h == NULL)
		return NULL;
	if (h->protocol_version != NULL &&
	    (strip_ows(v, sizeof(v), h->protocol_version) < 0 ||
		strcmp(v, version) != 0)) {
		snprintf(buf, n,
		    "Header mismatch: _meta names protocol version %.32s but "
		    "the MCP-Protocol-Version header says %.32s",
		    version, h->protocol_version);
		return buf;
	}
	if (h->method != NULL &&
	    (strip_ows(v, sizeof(v), h->method) < 0 ||
		strcmp(v, method) != 0)) {
		snprintf(buf, n,
		    "Header mismatch: the body's method is %.64s but the "
		    "Mcp-Method header says %.64s",
		    method, h->method);
		return buf;
	}
	return NULL;
}

/* (5): a tools/call's inputResponses, when present, is an object whose
 * every value is an object. huddle asks no input of a client, so it
 * reads none, but a malformed one is a protocol error, not a call. */
static int
input_responses_ok(const json_t *params)
{
	const json_t *in = json_object_get(params, "inputResponses"), *v;
	const char *key;

	if (in == NULL)
		return 1;
	if (!json_is_object(in))
		return 0;
	json_object_foreach ((json_t *)in, key, v) {
		if (!json_is_object(v))
			return 0;
	}
	return 1;
}

/* (6): accept a listen into s->listen, or the error reply. */
static char *
listen_accept(
    int *status, hd_mcp_session *s, const json_t *id, const json_t *params)
{
	const json_t *f = json_object_get(params, "notifications");

	if (!json_is_object(f))
		return hd_mcp__reply_error(id, -32602,
		    "Invalid params: subscriptions/listen needs a "
		    "\"notifications\" filter object",
		    NULL);
	s->listen.room = json_is_true(json_object_get(f, HD_MCP_FILTER_ROOM));
	s->listen.mail = json_is_true(json_object_get(f, HD_MCP_FILTER_MAIL));
	if ((s->listen.room || s->listen.mail) && !s->bound)
		return era_error(status, 403, id, -32602,
		    "Invalid params: " HD_MCP_FILTER_ROOM " and " HD_MCP_FILTER_MAIL
		    " are delivered to a bound agent only; this connection is "
		    "read-only (connect through the signed URL `huddle attach` "
		    "prints)",
		    NULL);
	if ((s->listen.id = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY)) ==
	    NULL)
		return hd_mcp__reply_error(id, -32603, "out of memory", NULL);
	s->listen.open = 1;
	return NULL;
}

static json_t *
discover(const hd_mcp_session *s)
{
	return json_pack("{s:s, s:[s], s:o, s:s, s:i, s:s, s:{s:{s:s, "
			 "s:s}}}",
	    "resultType", "complete", "supportedVersions", HD_MCP_MODERN,
	    "capabilities", hd_mcp__capabilities(s), "instructions",
	    hd_mcp__instructions,
	    "ttlMs", ERA_TTL_MS, "cacheScope", "private", "_meta",
	    HD_MCP_META_SERVER, "name", "huddle", "version", hd_version());
}

/* A tool result's text with "resultType":"complete" put first. */
static char *
complete_text(char *text)
{
	hd_buf b = HD_BUF_INIT(0);

	if (text == NULL || text[0] != '{') {
		free(text);
		return NULL;
	}
	hd_buf_puts(&b, "{\"resultType\":\"complete\",");
	hd_buf_puts(&b, text + 1);
	free(text);
	if (hd_buf_failed(&b)) {
		hd_buf_dispose(&b);
		return NULL;
	}
	return hd_buf_detach(&b);
}

char *
hd_mcp__modern(int *status, hd_mcp_session *s, const json_t *id,
    const char *method, const json_t *params, const hd_mcp_headers *h)
{
	const json_t *meta = json_object_get(params, "_meta");
	const char *problem, *version;
	char buf[256];
	json_t *r;
	int bad = 0;

	*status = 200;
	if (strcmp(method, "initialize") == 0 &&
	    json_object_get(meta, HD_MCP_META_VERSION) == NULL)
		return era_error(status, 400, id, -32020,
		    "Header mismatch: an initialize (the 2025 handshake) came "
		    "with a 2026-07-28 MCP-Protocol-Version header",
		    NULL);
	/* (1) */
	if ((problem = envelope_problem(meta)) != NULL)
		return era_error(status, 400, id, -32602, problem, NULL);
	version = json_string_value(json_object_get(meta, HD_MCP_META_VERSION));
	/* (2) */
	if ((problem = header_disagrees(buf, sizeof(buf), h, version,
		 method)) != NULL)
		return era_error(status, 400, id, -32020, problem, NULL);
	/* (3) */
	if (strcmp(version, HD_MCP_MODERN) != 0) {
		snprintf(buf, sizeof(buf),
		    "Unsupported protocol version: %.64s (this server speaks "
		    "%s per request, and 2025-11-25, 2025-06-18 and "
		    "2025-03-26 through initialize)",
		    version, HD_MCP_MODERN);
		return era_error(status, 400, id, -32022, buf,
		    json_pack("{s:[s], s:s}", "supported", HD_MCP_MODERN,
			"requested", version));
	}
	/* (4) */
	if ((problem = header_missing(buf, sizeof(buf), h, method, params)) !=
	    NULL)
		return era_error(status, 400, id, -32020, problem, NULL);
	/* (5) */
	if (strcmp(method, "server/discover") == 0)
		return hd_mcp__reply_result(id, discover(s));
	if (strcmp(method, "subscriptions/listen") == 0 && s->can_listen)
		return listen_accept(status, s, id, params);
	if (strcmp(method, "tools/list") == 0) {
		r = hd_mcp__tools_list(s);
		json_object_set_new(r, "resultType", json_string("complete"));
		json_object_set_new(r, "ttlMs", json_integer(ERA_TTL_MS));
		json_object_set_new(r, "cacheScope", json_string("private"));
		return hd_mcp__reply_result(id, r);
	}
	if (strcmp(method, "tools/call") == 0) {
		char *text;

		if (!input_responses_ok(params))
			return hd_mcp__reply_error(id, -32602,
			    "Invalid params: inputResponses must be an object "
			    "of response objects",
			    NULL);
		text = hd_mcp__tools_call(s, params, &bad);

		if (bad)
			return hd_mcp__reply_error(id, -32602,
			    "Invalid params: tools/call needs a string "
			    "\"name\"",
			    NULL);
		return hd_mcp__reply_text(id, complete_text(text));
	}
	snprintf(buf, sizeof(buf), "Method not found: %.*s",
	    (int)hd_utf8_cut(method, 100), method);
	return era_error(status, 404, id, -32601, buf, NULL);
}
