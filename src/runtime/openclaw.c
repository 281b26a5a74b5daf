/*
 * openclaw.c -- the `openclaw` runtime: an agent of an OpenClaw Gateway,
 * driven over the Gateway's WebSocket protocol as an operator client
 * (libwebsockets), one chat run per turn. A connected substrate (SPEC
 * 9.2): huddle gives it no home and keeps nothing of it; the agent, its
 * workspace, memory and sessions are the Gateway's. First the frame
 * parser (a state machine: frames in, runtime events and frames to send
 * out; no I/O, so the unit test and the fuzz target drive it), then the
 * WebSocket client, then the adapter.
 * What it follows, from OpenClaw's own documentation and source (the
 * `openclaw` npm package: docs/gateway/protocol/, dist/ of
 * packages/gateway-protocol and packages/gateway-client), checked against
 * a real Gateway (openclaw 2026.9.6, tests/e2e/test-openclaw.sh):
 *  (1) Frames are JSON text messages: requests {type:"req", id, method,
 *      params}, responses {type:"res", id, ok, payload | error:{code,
 *      message, details}}, events {type:"event", event, payload}.
 *  (2) The handshake: the Gateway's first frame is the event
 *      connect.challenge {nonce, ts}; the client answers with the
 *      request connect {minProtocol: 4, maxProtocol: 4, client: {id
 *      "gateway-client", mode "backend", version, platform "linux"},
 *      role "operator", scopes [operator.read, operator.write],
 *      auth: {token}, device} and the Gateway answers hello-ok. Every
 *      operator signs the challenge with a device identity: an Ed25519
 *      key (OpenSSL libcrypto), device.id the SHA-256 of the raw public
 *      key in hex, publicKey the raw key in base64url, signature the
 *      base64url Ed25519 signature of the v3 payload
 *      "v3|id|client.id|mode|role|scopes,joined|ts|token|nonce|platform|"
 *      (deviceFamily empty), signedAt the challenge's ts. The key is not
 *      stored anywhere (nothing is preserved): its seed is
 *      HMAC-SHA256(token, "huddle-openclaw-device" 0x1f team 0x1f agent),
 *      so an agent is one stable device to the Gateway, which pairs a
 *      loopback device by itself and asks for approval of others (its
 *      refusal is the turn's error, naming the device).
 *  (3) A turn is one request chat.send {sessionKey, message,
 *      idempotencyKey, agentId?, timeoutMs}: the key is a fresh UUID
 *      and is the run's id (the response's payload.runId). Then the
 *      events of that run: chat {runId, state} with state status (a
 *      startup phase: a status event), delta (deltaText: text_delta;
 *      a `replace` delta is a rewrite and is left to the final), final
 *      (message.content's text parts are the reply: emit_reply; done
 *      success), aborted and error (terminal, (5)); agent {runId,
 *      stream "tool", data {phase start|result, name, toolCallId, args |
 *      result, isError}}: tool_call and tool_result (the client
 *      advertises the tool-events capability to get them). Frames of
 *      other runs, other events (tick, health, presence) and responses
 *      to nothing asked are ignored; a frame that is not a JSON object is
 *      counted (-1) and ignored.
 *  (4) The Gateway's config is process-wide: it cannot carry a
 *      per-agent MCP binding, so an OpenClaw agent gets no huddle tools.
 *      Its capabilities say so (huddle_tools none) and the engines post
 *      its reply to the room as the agent (server-mediated); nothing here
 *      names the room.
 *  (5) Endings. final: success. error: `openclaw: <errorMessage>`. A
 *      refused connect or chat.send: `openclaw: the Gateway refused
 *      <what>: <message> (<details.code>)`. aborted that huddle did not
 *      ask for: `openclaw: the run was aborted on the Gateway`. When the
 *      turn's abort flag is set or its time runs out, the parser sends
 *      chat.abort {sessionKey, runId} and the turn ends aborted, or in
 *      error `openclaw: timed out after N s (the run was aborted on the
 *      Gateway)`, whatever comes after: a late final is not taken as a
 *      success. The connection ending first: `openclaw: <why>`. Every
 *      message from the Gateway is cut to one line without control
 *      characters before it is quoted.
 *  (6) The client: one libwebsockets context per turn, on the turn's own
 *      thread, destroyed before run() returns. Turns run on threads of
 *      their own and share nothing (runtime.c (5)); a context per turn
 *      keeps that (no service thread to start, own or stop, no lock),
 *      and a turn lasts seconds to minutes while a context costs
 *      microseconds. A scheduled callback every 100 ms bounds each
 *      lws_service() wait (it ignores its timeout since lws 3.2), so the
 *      abort flag and the deadline are seen promptly. After a cancel the
 *      Gateway has 5 s to end the run before the connection is dropped.
 *      chat.send's timeoutMs is the turn's limit plus those 5 s: huddle's
 *      abort comes first, and the Gateway stops the run by itself should
 *      huddle be gone.
 * Callers: runtime.c's adapter table; the parser also the unit test and
 * tests/fuzz/fuzz-openclaw-frames.c.
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <huddle/buf.h>
#include <huddle/log.h>
#include <huddle/runtime.h>
#include <huddle/util.h>
#include <huddle/version.h>

#include "runtime_int.h"

#define HD_LOG_COMPONENT "openclaw"

#define PROTOCOL 4
#define CLIENT_ID "gateway-client"
#define CLIENT_MODE "backend"
#define PLATFORM "linux"
#define SCOPES "operator.read,operator.write"
/* A message the Gateway sends is at most its policy.maxPayload, 25 MiB
 * by default; past this the connection is dropped. */
#define FRAME_MAX (32 * 1024 * 1024)
#define DEFAULT_TIMEOUT_S 600
#define CANCEL_GRACE_MS 5000
#define TICK_MS 100

/* ---- the frame parser ---- */

enum {
	ST_CHALLENGE, /* waiting for connect.challenge */
	ST_HELLO,     /* connect sent */
	ST_SENT,      /* chat.send sent */
	ST_RUNNING,   /* chat.send accepted */
	ST_DONE,      /* done emitted */
};

struct hd_openclaw {
	int state;
	int cancel; /* 0, or HD_OPENCLAW_ABORT / HD_OPENCLAW_TIMEOUT */
	int64_t timeout_ms;
	char *token, *session, *agent_id, *message;
	char run_id[64];
	unsigned char seed[32];
	json_t *out; /* frames to send, oldest first (strings) */
	int nreq;
};

/* s as one clean line (hd_runtime__quote): control characters become
 * spaces, no trailing blank, at most max bytes (cut on a UTF-8
 * boundary); dflt when s is NULL or says nothing. */
static void
clean(char *out, size_t outlen, const char *s, size_t max, const char *dflt)
{
	hd_buf b = HD_BUF_INIT(0);

	if (outlen == 0)
		return;
	if (max > outlen - 1)
		max = outlen - 1;
	if (s == NULL || hd_runtime__quote(&b, s, strlen(s), max, 0) == 0 ||
	    hd_buf_failed(&b))
		snprintf(out, outlen, "%s", dflt);
	else
		memcpy(out, b.ptr, b.len + 1);
	hd_buf_dispose(&b);
}

/* End the turn in error (unless it ended): "openclaw: <msg>". */
static void
fail(hd_openclaw *oc, hd_runtime_emit *em, const char *msg)
{
	if (oc->state == ST_DONE)
		return;
	hd_runtime_emit_error(em, "openclaw: %s", msg);
	hd_runtime_emit_done(em, HD_DONE_ERROR, NULL, NULL);
	oc->state = ST_DONE;
}

/* The turn was cancelled by huddle: aborted, or timed out. */
static void
end_cancelled(hd_openclaw *oc, hd_runtime_emit *em)
{
	char msg[160], t[64];

	if (oc->state == ST_DONE)
		return;
	if (oc->cancel == HD_OPENCLAW_TIMEOUT) {
		hd_runtime__timeout_msg(t, sizeof(t), oc->timeout_ms);
		snprintf(msg, sizeof(msg),
		    "%s (the run was aborted on the Gateway)", t);
		fail(oc, em, msg);
		return;
	}
	hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, NULL);
	oc->state = ST_DONE;
}

static void
queue(hd_openclaw *oc, json_t *frame)
{
	char *s;

	if (frame == NULL)
		return;
	s = json_dumps(frame, JSON_COMPACT);
	json_decref(frame);
	if (s != NULL)
		json_array_append_new(oc->out, json_string(s));
	free(s);
}

/* A request frame; params stolen. */
static json_t *
request(hd_openclaw *oc, const char *method, json_t *params)
{
	char id[32];

	snprintf(id, sizeof(id), "%s-%d", method, ++oc->nreq);
	return json_pack("{s:s, s:s, s:s, s:o}", "type", "req", "id", id,
	    "method", method, "params", params);
}

/* base64url without padding, of n bytes, into out (4*ceil(n/3)+1). */
static void
b64url(char *out, const unsigned char *in, int n)
{
	int len = EVP_EncodeBlock((unsigned char *)out, in, n), i;

	while (len > 0 && out[len - 1] == '=')
		len--;
	out[len] = '\0';
	for (i = 0; i < len; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
}

/* The device block of connect (2), or NULL when libcrypto failed. */
static json_t *
device(hd_openclaw *oc, const char *nonce, json_int_t ts)
{
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	unsigned char pub[32], sum[SHA256_DIGEST_LENGTH], sig[64];
	size_t publen = sizeof(pub), siglen = sizeof(sig);
	char id[2 * SHA256_DIGEST_LENGTH + 1], pub64[48], sig64[96];
	hd_buf payload = HD_BUF_INIT(0);
	json_t *dev = NULL;
	int i;

	key = EVP_PKEY_new_raw_private_key(
	    EVP_PKEY_ED25519, NULL, oc->seed, sizeof(oc->seed));
	if (key == NULL || EVP_PKEY_get_raw_public_key(key, pub, &publen) != 1 ||
	    publen != sizeof(pub))
		goto done;
	SHA256(pub, sizeof(pub), sum);
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(id + 2 * i, 3, "%02x", sum[i]);
	hd_buf_printf(&payload, "v3|%s|%s|%s|operator|%s|%lld|%s|%s|%s|", id,
	    CLIENT_ID, CLIENT_MODE, SCOPES, (long long)ts,
	    oc->token ? oc->token : "", nonce, PLATFORM);
	if (hd_buf_failed(&payload) || (md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(md, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (unsigned char *)payload.ptr,
		payload.len) != 1)
		goto done;
	b64url(pub64, pub, sizeof(pub));
	b64url(sig64, sig, (int)siglen);
	dev = json_pack("{s:s, s:s, s:s, s:I, s:s}", "id", id, "publicKey",
	    pub64, "signature", sig64, "signedAt", ts, "nonce", nonce);
done:
	hd_buf_dispose(&payload);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	return dev;
}

static void
on_challenge(hd_openclaw *oc, hd_runtime_emit *em, const json_t *payload)
{
	const char *nonce =
	    json_string_value(json_object_get(payload, "nonce"));
	const json_t *ts = json_object_get(payload, "ts");
	json_t *dev, *params;

	if (nonce == NULL || nonce[0] == '\0' || !json_is_integer(ts) ||
	    json_integer_value(ts) < 0) {
		fail(oc, em, "the Gateway's connect.challenge has no nonce "
			     "and ts");
		return;
	}
	if ((dev = device(oc, nonce, json_integer_value(ts))) == NULL) {
		fail(oc, em, "cannot sign the connect challenge (libcrypto)");
		return;
	}
	params = json_pack("{s:i, s:i, s:{s:s, s:s, s:s, s:s}, s:s, "
			   "s:[s, s], s:[s], s:o}",
	    "minProtocol", PROTOCOL, "maxProtocol", PROTOCOL, "client", "id",
	    CLIENT_ID, "version", hd_version(), "platform", PLATFORM, "mode",
	    CLIENT_MODE, "role", "operator", "scopes", "operator.read",
	    "operator.write", "caps", "tool-events", "device", dev);
	if (params != NULL && oc->token != NULL)
		json_object_set_new(
		    params, "auth", json_pack("{s:s}", "token", oc->token));
	queue(oc, request(oc, "connect", params));
	oc->state = ST_HELLO;
}

static void
send_chat(hd_openclaw *oc)
{
	json_t *params = json_pack("{s:s, s:s, s:s}", "sessionKey",
	    oc->session, "message", oc->message, "idempotencyKey", oc->run_id);

	if (params != NULL && oc->agent_id != NULL)
		json_object_set_new(
		    params, "agentId", json_string(oc->agent_id));
	/* the Gateway's own limit, later than huddle's, so huddle's abort
	 * ends the run and the Gateway's stops it should huddle be gone */
	if (params != NULL && oc->timeout_ms > 0)
		json_object_set_new(params, "timeoutMs",
		    json_integer(oc->timeout_ms + CANCEL_GRACE_MS));
	queue(oc, request(oc, "chat.send", params));
	oc->state = ST_SENT;
}

/* A refused request: "the Gateway refused <what>: message (code)". */
static void
refused(hd_openclaw *oc, hd_runtime_emit *em, const char *what,
    const json_t *error)
{
	const char *m = json_string_value(json_object_get(error, "message"));
	const char *code = json_string_value(
	    json_object_get(json_object_get(error, "details"), "code"));
	char cm[400], cc[80], msg[600];

	if (code == NULL)
		code = json_string_value(json_object_get(error, "code"));
	clean(cm, sizeof(cm), m, 300, "no reason given");
	clean(cc, sizeof(cc), code, 60, "");
	snprintf(msg, sizeof(msg), "the Gateway refused %s: %s%s%s%s", what,
	    cm, cc[0] ? " (" : "", cc, cc[0] ? ")" : "");
	fail(oc, em, msg);
}

static void
on_response(hd_openclaw *oc, hd_runtime_emit *em, const json_t *f)
{
	const char *id = json_string_value(json_object_get(f, "id"));
	int ok = json_is_true(json_object_get(f, "ok"));
	const json_t *payload = json_object_get(f, "payload");
	const char *rid;

	if (id == NULL)
		return;
	if (oc->state == ST_HELLO && strncmp(id, "connect-", 8) == 0) {
		if (!ok)
			refused(oc, em, "to connect",
			    json_object_get(f, "error"));
		else
			send_chat(oc);
	} else if (oc->state == ST_SENT && strncmp(id, "chat.send-", 10) == 0) {
		if (!ok) {
			refused(oc, em, "the message",
			    json_object_get(f, "error"));
			return;
		}
		rid = json_string_value(json_object_get(payload, "runId"));
		if (rid != NULL && rid[0] != '\0' &&
		    strlen(rid) < sizeof(oc->run_id))
			snprintf(oc->run_id, sizeof(oc->run_id), "%s", rid);
		oc->state = ST_RUNNING;
	}
}

/* The text parts of a chat message ({role, content: [{type: text,
 * text}]} or content a string), joined, into b; 0 when it has none. */
static int
message_text(hd_buf *b, const json_t *msg)
{
	const json_t *content = json_object_get(msg, "content"), *part;
	size_t i;
	int any = 0;

	if (json_is_string(content)) {
		hd_buf_put(b, json_string_value(content),
		    json_string_length(content));
		return 1;
	}
	json_array_foreach(content, i, part)
	{
		const json_t *t = json_object_get(part, "text");
		const char *type =
		    json_string_value(json_object_get(part, "type"));

		if (json_is_string(t) && type != NULL &&
		    strcmp(type, "text") == 0) {
			hd_buf_put(b, json_string_value(t),
			    json_string_length(t));
			any = 1;
		}
	}
	return any;
}

static void
on_chat(hd_openclaw *oc, hd_runtime_emit *em, const json_t *p)
{
	const char *state = json_string_value(json_object_get(p, "state"));
	const json_t *delta = json_object_get(p, "deltaText");
	const char *phase, *m;
	hd_buf b = HD_BUF_INIT(HD_RUNTIME_OUTPUT_MAX + 1);
	char cm[400], msg[500];

	if (state == NULL)
		return;
	if (oc->cancel != 0 && (strcmp(state, "final") == 0 ||
				   strcmp(state, "aborted") == 0 ||
				   strcmp(state, "error") == 0)) {
		end_cancelled(oc, em); /* (5) */
		return;
	}
	if (strcmp(state, "delta") == 0) {
		if (json_is_string(delta) && json_string_length(delta) > 0 &&
		    !json_is_true(json_object_get(p, "replace")))
			hd_runtime_emit_text(em, json_string_value(delta),
			    json_string_length(delta));
	} else if (strcmp(state, "status") == 0) {
		phase = json_string_value(json_object_get(p, "phase"));
		clean(cm, sizeof(cm), phase, 80, "");
		if (cm[0] != '\0') { /* a phase that says something */
			snprintf(msg, sizeof(msg), "openclaw: %s", cm);
			hd_runtime_emit_status(em, msg);
		}
	} else if (strcmp(state, "final") == 0) {
		if (message_text(&b, json_object_get(p, "message")) &&
		    !hd_buf_failed(&b))
			hd_runtime_emit_reply(em, b.ptr ? b.ptr : "", b.len);
		hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, NULL);
		oc->state = ST_DONE;
	} else if (strcmp(state, "aborted") == 0) {
		fail(oc, em, "the run was aborted on the Gateway");
	} else if (strcmp(state, "error") == 0) {
		m = json_string_value(json_object_get(p, "errorMessage"));
		clean(cm, sizeof(cm), m, 300, "the run failed");
		fail(oc, em, cm);
	}
	hd_buf_dispose(&b);
}

static void
on_agent(hd_runtime_emit *em, const json_t *p)
{
	const json_t *data = json_object_get(p, "data");
	const char *stream = json_string_value(json_object_get(p, "stream"));
	const char *phase = json_string_value(json_object_get(data, "phase"));
	hd_runtime_event ev;

	if (stream == NULL || strcmp(stream, "tool") != 0 || phase == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.name = json_string_value(json_object_get(data, "name"));
	ev.id = json_string_value(json_object_get(data, "toolCallId"));
	if (strcmp(phase, "start") == 0) {
		ev.kind = HD_RT_TOOL_CALL;
		ev.data = json_object_get(data, "args");
	} else if (strcmp(phase, "result") == 0) {
		ev.kind = HD_RT_TOOL_RESULT;
		ev.data = json_object_get(data, "result");
		ev.is_error = json_is_true(json_object_get(data, "isError"));
	} else
		return;
	hd_runtime_emit_event(em, &ev);
}

hd_openclaw *
hd_openclaw__new(const hd_openclaw_opts *o)
{
	hd_openclaw *oc = calloc(1, sizeof(*oc));
	unsigned int n = 32;
	hd_buf who = HD_BUF_INIT(0);

	if (oc == NULL)
		return NULL;
	oc->state = ST_CHALLENGE;
	oc->timeout_ms = o->timeout_ms;
	oc->token = o->token ? strdup(o->token) : NULL;
	oc->session = strdup(o->session ? o->session : "");
	oc->agent_id = o->agent_id ? strdup(o->agent_id) : NULL;
	oc->message = strdup(o->message ? o->message : "");
	oc->out = json_array();
	snprintf(oc->run_id, sizeof(oc->run_id), "%s", o->run_id);
	hd_buf_printf(&who, "huddle-openclaw-device\x1f%s\x1f%s",
	    o->team ? o->team : "", o->agent ? o->agent : "");
	if ((o->token && oc->token == NULL) || oc->session == NULL ||
	    (o->agent_id && oc->agent_id == NULL) || oc->message == NULL ||
	    oc->out == NULL || hd_buf_failed(&who) ||
	    HMAC(EVP_sha256(), oc->token ? oc->token : "",
		oc->token ? (int)strlen(oc->token) : 0,
		(unsigned char *)who.ptr, who.len, oc->seed, &n) == NULL) {
		hd_buf_dispose(&who);
		hd_openclaw__free(oc);
		return NULL;
	}
	hd_buf_dispose(&who);
	return oc;
}

void
hd_openclaw__free(hd_openclaw *oc)
{
	if (oc == NULL)
		return;
	free(oc->token);
	free(oc->session);
	free(oc->agent_id);
	free(oc->message);
	json_decref(oc->out);
	free(oc);
}

int
hd_openclaw__frame(
    hd_openclaw *oc, hd_runtime_emit *em, const char *text, size_t len)
{
	json_t *f = json_loadb(text, len, 0, NULL);
	const char *type = json_string_value(json_object_get(f, "type"));
	const json_t *p = json_object_get(f, "payload");
	const char *ev = json_string_value(json_object_get(f, "event"));
	const char *rid = json_string_value(json_object_get(p, "runId"));

	if (!json_is_object(f) || type == NULL) {
		json_decref(f);
		return -1;
	}
	if (oc->state == ST_DONE)
		;
	else if (strcmp(type, "res") == 0)
		on_response(oc, em, f);
	else if (strcmp(type, "event") != 0 || ev == NULL)
		;
	else if (strcmp(ev, "connect.challenge") == 0) {
		if (oc->state == ST_CHALLENGE)
			on_challenge(oc, em, p);
	} else if (oc->state >= ST_SENT && rid != NULL &&
		   strcmp(rid, oc->run_id) == 0) {
		if (strcmp(ev, "chat") == 0)
			on_chat(oc, em, p);
		else if (strcmp(ev, "agent") == 0)
			on_agent(em, p);
	}
	json_decref(f);
	return 0;
}

char *
hd_openclaw__next_out(hd_openclaw *oc)
{
	char *s;

	if (json_array_size(oc->out) == 0)
		return NULL;
	s = strdup(json_string_value(json_array_get(oc->out, 0)));
	json_array_remove(oc->out, 0);
	return s;
}

void
hd_openclaw__cancel(hd_openclaw *oc, hd_runtime_emit *em, int why)
{
	json_t *params;

	if (oc->state == ST_DONE || oc->cancel != 0)
		return;
	oc->cancel = why;
	if (oc->state < ST_SENT) { /* nothing runs on the Gateway yet */
		end_cancelled(oc, em);
		return;
	}
	params = json_pack("{s:s, s:s}", "sessionKey", oc->session, "runId",
	    oc->run_id);
	queue(oc, request(oc, "chat.abort", params));
}

void
hd_openclaw__closed(hd_openclaw *oc, hd_runtime_emit *em, const char *why)
{
	char cw[400];

	if (oc->cancel != 0) {
		end_cancelled(oc, em);
		return;
	}
	clean(cw, sizeof(cw), why, 300, "the connection ended");
	fail(oc, em, cw);
}

int
hd_openclaw__done(const hd_openclaw *oc)
{
	return oc->state == ST_DONE;
}

int
hd_openclaw__cancelled(const hd_openclaw *oc)
{
	return oc->cancel;
}

/* ---- the WebSocket client (6) ---- */

typedef struct client {
	hd_openclaw *oc;
	hd_runtime_emit *em;
	const hd_runtime_turn *in;
	struct lws_context *ctx;
	struct lws *wsi;
	lws_sorted_usec_list_t sul;
	hd_buf rx;
	const char *url;
	int ended;     /* the connection is gone (or given up on) */
	char why[512]; /* why, for the turn's error */
	int64_t deadline, grace;
} client;

static pthread_once_t lws_log_once = PTHREAD_ONCE_INIT;

static void
lws_log(int level, const char *line)
{
	(void)level;
	hd_log_debug("libwebsockets: %.*s", (int)strcspn(line, "\n"), line);
}

static void
lws_log_init(void)
{
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log);
}

static void ended(client *c, const char *fmt, ...) HD_PRINTFLIKE(2, 3);

static void
ended(client *c, const char *fmt, ...)
{
	va_list ap;

	if (c->ended)
		return;
	c->ended = 1;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static void
want_write(client *c)
{
	if (c->wsi != NULL && !c->ended)
		lws_callback_on_writable(c->wsi);
}

static int
write_one(client *c)
{
	char *s = hd_openclaw__next_out(c->oc);
	unsigned char *b;
	size_t n;
	int w;

	if (s == NULL)
		return 0;
	n = strlen(s);
	hd_log_debug("openclaw: send %.200s", s);
	if ((b = malloc(LWS_PRE + n)) == NULL) {
		free(s);
		ended(c, "out of memory");
		return -1;
	}
	memcpy(b + LWS_PRE, s, n);
	w = lws_write(c->wsi, b + LWS_PRE, n, LWS_WRITE_TEXT);
	free(b);
	free(s);
	if (w < (int)n) {
		ended(c, "cannot write to the Gateway at %s", c->url);
		return -1;
	}
	want_write(c); /* the next one, if any */
	return 0;
}

static int
ws_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
    void *in, size_t len)
{
	client *c = wsi ? lws_get_opaque_user_data(wsi) : NULL;

	if (c == NULL)
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		c->wsi = NULL;
		ended(c, "cannot connect to the Gateway at %s: %s", c->url,
		    in ? (const char *)in : "connection failed");
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		hd_log_debug("openclaw: connected to %s", c->url);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		hd_buf_put(&c->rx, in, len);
		if (hd_buf_failed(&c->rx)) {
			ended(c, "the Gateway sent a message over 32 MiB");
			return -1;
		}
		if (!lws_is_final_fragment(wsi))
			return 0;
		if (hd_openclaw__frame(c->oc, c->em, c->rx.ptr ? c->rx.ptr : "",
			c->rx.len) < 0)
			hd_log_debug("openclaw: not a frame: %.200s",
			    c->rx.ptr ? c->rx.ptr : "");
		hd_buf_reset(&c->rx);
		want_write(c);
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return write_one(c) < 0 ? -1 : 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		ended(c, "the Gateway at %s closed the connection before the "
			 "run ended",
		    c->url);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		c->wsi = NULL;
		ended(c, "the connection to the Gateway at %s ended", c->url);
		return 0;
	default: break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {"openclaw-gateway", ws_cb, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* Every TICK_MS: the abort flag, the deadline, the grace after a
 * cancel, frames waiting to go. */
static void
tick(lws_sorted_usec_list_t *sul)
{
	client *c = lws_container_of(sul, client, sul);
	int64_t now = hd_mono_ms();

	if (hd_openclaw__cancelled(c->oc) == 0) {
		if (hd_runtime_aborted(c->in))
			hd_openclaw__cancel(c->oc, c->em, HD_OPENCLAW_ABORT);
		else if (now >= c->deadline)
			hd_openclaw__cancel(c->oc, c->em, HD_OPENCLAW_TIMEOUT);
		if (hd_openclaw__cancelled(c->oc) != 0)
			c->grace = now + CANCEL_GRACE_MS;
	} else if (now >= c->grace)
		ended(c, "no answer to chat.abort");
	want_write(c);
	lws_sul_schedule(c->ctx, 0, &c->sul, tick, TICK_MS * LWS_US_PER_MS);
}

/* Run the turn's connection until the parser ended the turn or the
 * connection is gone; then end the turn if the parser has not. */
static void
converse(client *c, const char *url)
{
	struct lws_context_creation_info ci;
	struct lws_client_connect_info cc;
	char copy[1024], path[1024], host[1100];
	const char *prot, *ads, *p;
	int port;

	pthread_once(&lws_log_once, lws_log_init);
	snprintf(copy, sizeof(copy), "%s", url);
	if (lws_parse_uri(copy, &prot, &ads, &port, &p) != 0) {
		ended(c, "runtime_config.url %s is not a ws:// URL", url);
		return;
	}
	/* lws_parse_uri drops the path's leading '/', and gives "/" for
	 * none */
	snprintf(path, sizeof(path), "%s%s", p[0] == '/' ? "" : "/", p);
	snprintf(host, sizeof(host), "%s:%d", ads, port);
	memset(&ci, 0, sizeof(ci));
	ci.port = CONTEXT_PORT_NO_LISTEN;
	ci.protocols = protocols;
	ci.gid = -1;
	ci.uid = -1;
	ci.connect_timeout_secs = 10;
	ci.timeout_secs = 10;
	if (strcmp(prot, "wss") == 0)
		ci.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	if ((c->ctx = lws_create_context(&ci)) == NULL) {
		ended(c, "cannot start a WebSocket client (libwebsockets)");
		return;
	}
	memset(&cc, 0, sizeof(cc));
	cc.context = c->ctx;
	cc.address = ads;
	cc.port = port;
	cc.path = path;
	cc.host = host;
	cc.ssl_connection = strcmp(prot, "wss") == 0 ? LCCSCF_USE_SSL : 0;
	cc.local_protocol_name = protocols[0].name;
	cc.opaque_user_data = c;
	cc.pwsi = &c->wsi;
	lws_sul_schedule(c->ctx, 0, &c->sul, tick, TICK_MS * LWS_US_PER_MS);
	if (lws_client_connect_via_info(&cc) == NULL && !c->ended)
		ended(c, "cannot connect to the Gateway at %s", url);
	while (!c->ended && !hd_openclaw__done(c->oc))
		if (lws_service(c->ctx, 0) < 0)
			ended(c, "the WebSocket client failed");
	lws_sul_cancel(&c->sul);
	c->ended = 1; /* callbacks during the teardown change nothing */
	lws_context_destroy(c->ctx);
	c->ctx = NULL;
}

/* ---- the adapter ---- */

static const char *const keys[] = {
    "url", "token_env", "agent_id", "session", "timeout_s", NULL};

static int
openclaw_check(const json_t *cfg, hd_err *err)
{
	const char *url;
	int rc;

	if (cfg == NULL)
		return 0;
	if ((rc = hd_runtime__check_keys(cfg, keys, "openclaw", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "url", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "token_env", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "agent_id", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "session", err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "timeout_s", 1, 86400, err)) < 0)
		return rc;
	url = hd_runtime__cfg_str(cfg, "url", NULL);
	if (url != NULL && strncmp(url, "ws://", 5) != 0 &&
	    strncmp(url, "wss://", 6) != 0)
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.url must be a ws:// or wss:// URL, not "
		    "\"%.200s\"",
		    url);
	if (url != NULL && strlen(url) > 1000)
		return hd_err_set(
		    err, HD_EINVAL, "runtime_config.url is over 1000 bytes");
	return 0;
}

/* (4): connected, no home, nothing kept, the Gateway's own channels, no
 * huddle tools. */
static void
openclaw_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_CONNECTED_SUBSTRATE;
	out->native_home.scope = HD_HOME_SCOPE_NONE;
	out->native_memory = HD_NATIVE_NONE;
	out->native_skills = HD_NATIVE_NONE;
	out->native_channels = HD_CHANNELS_GATEWAY;
	out->huddle_tools = HD_TOOLS_NONE;
}

#define DEFAULT_URL "ws://127.0.0.1:18789"
#define DEFAULT_TOKEN_ENV "OPENCLAW_GATEWAY_TOKEN"

/* The session key: runtime_config.session, else huddle-<team>-<agent>. */
static void
session_key(char *out, size_t outlen, const hd_runtime_turn *in)
{
	const char *s =
	    hd_runtime__cfg_str(in->agent->runtime_config, "session", NULL);
	const char *team = in->team ? in->team : in->agent->team_id;

	if (s != NULL)
		snprintf(out, outlen, "%s", s);
	else
		snprintf(out, outlen, "huddle-%s-%s", team ? team : "",
		    in->agent->id);
}

static int
openclaw_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config;
	const char *url = hd_runtime__cfg_str(cfg, "url", DEFAULT_URL);
	const char *var =
	    hd_runtime__cfg_str(cfg, "token_env", DEFAULT_TOKEN_ENV);
	hd_openclaw_opts o;
	char session[512], run_id[37], msg[700];
	client c;
	int rc;

	if ((rc = openclaw_check(cfg, err)) < 0)
		return hd_runtime__fail(em, err, "openclaw: %s", err->msg);
	memset(&o, 0, sizeof(o));
	o.token = getenv(var);
	if ((o.token == NULL || o.token[0] == '\0') &&
	    hd_runtime__cfg_str(cfg, "token_env", NULL) != NULL)
		return hd_runtime__fail(em, err,
		    "openclaw: $%s is not set (runtime_config.token_env)", var);
	if (o.token != NULL && o.token[0] == '\0')
		o.token = NULL;
	if ((rc = hd_uuid(run_id, err)) < 0)
		return hd_runtime__fail(em, err, "openclaw: %s", err->msg);
	session_key(session, sizeof(session), in);
	o.session = session;
	o.agent_id = hd_runtime__cfg_str(cfg, "agent_id", NULL);
	o.message = in->prompt;
	o.run_id = run_id;
	o.team = in->team ? in->team : in->agent->team_id;
	o.agent = in->agent->id;
	o.timeout_ms = hd_runtime__timeout_ms(cfg, in, DEFAULT_TIMEOUT_S);
	memset(&c, 0, sizeof(c));
	c.rx = (hd_buf)HD_BUF_INIT(FRAME_MAX);
	c.in = in;
	c.em = em;
	c.url = url;
	c.deadline = hd_mono_ms() + o.timeout_ms;
	if ((c.oc = hd_openclaw__new(&o)) == NULL)
		return hd_runtime__fail(em, err, "openclaw: out of memory");
	hd_log_debug("openclaw: %s, session %s, run %s", url, session, run_id);
	converse(&c, url);
	if (!hd_openclaw__done(c.oc))
		hd_openclaw__closed(c.oc, em, c.why);
	rc = 0;
	if (hd_openclaw__cancelled(c.oc) == HD_OPENCLAW_TIMEOUT) {
		hd_runtime__timeout_msg(msg, sizeof(msg), o.timeout_ms);
		rc = hd_err_set(err, HD_ETIMEOUT,
		    "openclaw: %s (the run was aborted on the Gateway)", msg);
	}
	hd_openclaw__free(c.oc);
	hd_buf_dispose(&c.rx);
	return rc;
}

/* huddle doctor: the Gateway's URL and session, and whether the token's
 * variable is set. It does not connect: whether the Gateway is up shows
 * on the first turn, as a clear error naming the URL. */
static void
openclaw_doctor(const hd_agent *a, const char *home_dir, json_t *report)
{
	const json_t *cfg = a->runtime_config;
	const char *var =
	    hd_runtime__cfg_str(cfg, "token_env", DEFAULT_TOKEN_ENV);
	const char *names[] = {var, NULL};
	char needs[300], session[512];

	(void)home_dir;
	snprintf(needs, sizeof(needs),
	    "the Gateway's token in $%.200s (runtime_config.token_env)", var);
	hd_runtime__doctor_needs(report, a, needs, names,
	    hd_runtime__cfg_str(cfg, "token_env", NULL) == NULL);
	if (hd_runtime__cfg_str(cfg, "session", NULL) != NULL)
		snprintf(session, sizeof(session), "%s",
		    hd_runtime__cfg_str(cfg, "session", NULL));
	else
		snprintf(session, sizeof(session), "huddle-%s-%s",
		    a->team_id ? a->team_id : "", a->id);
	json_object_set_new(report, "gateway",
	    json_pack("{s:s, s:s}", "url",
		hd_runtime__cfg_str(cfg, "url", DEFAULT_URL), "session",
		session));
}

const hd_runtime_adapter hd_runtime__openclaw = {
    .name = "openclaw",
    .label = "openclaw",
    .is_scripted = 0,
    .capabilities = openclaw_caps,
    .check_config = openclaw_check,
    .prices = NULL,
    .attach = NULL,
    .run = openclaw_run,
    .doctor = openclaw_doctor,
};
