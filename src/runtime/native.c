/*
 * native.c -- the `native` runtime: huddle's own agent loop, no external
 * CLI. A turn calls a model API (Anthropic Messages or any OpenAI-
 * compatible Chat Completions endpoint) over libcurl with a streamed
 * reply, runs the tools the model calls in this process as the agent,
 * and calls the model again until it answers without a tool call or
 * max_turns model calls are spent. The wire formats are native-wire.c's.
 *  (1) runtime_config holds exactly provider, model, base_url,
 *      api_key_env, system_prompt, max_turns, tools, prices and
 *      timeout_s; native_check refuses anything else, naming the key.
 *      The key itself is never in the config: api_key_env names the
 *      variable that holds it (none: a keyless local server).
 *  (2) Tools run in process through the tool host the surface registers
 *      (runtime.h hd_runtime_tool_host): the operation table's tools,
 *      bound to the turn's agent, so a model cannot act as anyone else.
 *      runtime_config.tools picks them (default NATIVE_DEFAULT_TOOLS).
 *      Arguments that are not a JSON object, an unknown tool and a tool
 *      that refuses are all answered to the model as a tool error
 *      (is_error) and the loop goes on; none ends the turn.
 *  (3) The transcript is one append-only JSON-lines file per native
 *      session in the agent's home (native/<session>.jsonl, 0600; the
 *      neutral messages of native.h), written as each message is made
 *      (native-transcript.c, which says what survives a crash).
 *      The session id is done's native_session_id; a turn given it
 *      resumes the file, resending at most HD_NATIVE_HISTORY_MAX messages
 *      and HD_NATIVE_HISTORY_BYTES of it, cut at a user message so no
 *      tool result is resent without its call; only the file's last
 *      HD_NATIVE_TAIL_BYTES are read, and only the lines resent are
 *      parsed, so a long-lived session costs a turn no more than a short
 *      one. A line that does not parse (a crash mid-write, or the first
 *      one read mid-file) is skipped. A process remembers what it last
 *      resent and wrote of a few sessions, so its next turn of one reads
 *      nothing back while the file is as that turn left it, and each
 *      message's wire form is serialised once: a model call's body is
 *      joined from those pieces (native-wire.c (6)), not rebuilt, and a
 *      turn's next model call extends the last one's body in place
 *      with the messages added since (a turn's messages only grow).
 *  (4) HTTP: one curl easy handle per turn (its connection reused from
 *      call to call). 429 and 5xx are retried with backoff (Retry-After
 *      honoured) while timeout_s allows; the abort flag and the time
 *      limit are checked during a transfer (the xferinfo callback) and
 *      between attempts. Any other status, a stream that ends before the
 *      provider's end of reply, or an error inside the stream ends the
 *      turn in error: `native: <provider>: HTTP 401: <its message>`.
 *  (5) Each model call's usage is a cost event, priced by
 *      runtime_config.prices, else native_prices (list prices by model
 *      prefix), else SPEC 8.2's default (price.c).
 *  (6) The reply is the last model call's text (hd_runtime_emit_reply);
 *      every call's text streamed as text_delta as it came.
 *  (7) The request body but its messages (model, tools, stream options)
 *      is serialised once and kept for the process (the last one made,
 *      reused while provider, model, system prompt and tools are equal):
 *      an agent's turns offer the same tools turn after turn.
 * Callers: runtime.c's adapter table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <huddle/buf.h>
#include <huddle/log.h>
#include <huddle/util.h>

#include "native.h"
#include "runtime_int.h"

#define HD_LOG_COMPONENT "native"

#define NATIVE_DEFAULT_TIMEOUT_S 600
#define NATIVE_DEFAULT_MAX_TURNS 16
#define NATIVE_ERROR_BODY_MAX (64 * 1024)
#define NATIVE_BACKOFF_MAX_MS 8000

/* (2): the room, the board's reading and claim/complete, the mailbox,
 * and the verdict a critic gives (refused to anyone but a task's critic,
 * so a native critic needs no tools list of its own) */
static const char *const NATIVE_DEFAULT_TOOLS[] = {"team_chat_post",
    "team_chat_subscribe", "task_list", "task_get", "task_claim",
    "task_complete", "send_message", "inbox_read", "verify_verdict", NULL};

/* (5): list prices as of 2026, USD per million tokens (input, cached
 * input, output), by model-name prefix. */
static const hd_price_row native_prices[] = {
    {"claude-opus-4", {15.00, 1.50, 75.00}},
    {"claude-sonnet-4", {3.00, 0.30, 15.00}},
    {"claude-haiku-4", {1.00, 0.10, 5.00}},
    {"claude-3-5-haiku", {0.80, 0.08, 4.00}},
    {"gpt-5-nano", {0.05, 0.005, 0.40}},
    {"gpt-5-mini", {0.25, 0.025, 2.00}},
    {"gpt-5", {1.25, 0.125, 10.00}},
    {"gpt-4.1-nano", {0.10, 0.025, 0.40}},
    {"gpt-4.1-mini", {0.40, 0.10, 1.60}},
    {"gpt-4.1", {2.00, 0.50, 8.00}},
    {"gpt-4o-mini", {0.15, 0.075, 0.60}},
    {"gpt-4o", {2.50, 1.25, 10.00}},
    {NULL, {0, 0, 0}},
};

/* ---- the tool host (runtime.h) ---- */

static const hd_runtime_tool_host *tool_host;

void
hd_runtime_set_tool_host(const hd_runtime_tool_host *host)
{
	tool_host = host;
}

const hd_runtime_tool_host *
hd_runtime_get_tool_host(void)
{
	return tool_host;
}

/* ---- the config (1) ---- */

static int
parse_provider(hd_native_provider *out, const char *s)
{
	if (s != NULL && strcmp(s, "anthropic") == 0)
		*out = HD_NATIVE_ANTHROPIC;
	else if (s != NULL && strcmp(s, "openai") == 0)
		*out = HD_NATIVE_OPENAI;
	else
		return -1;
	return 0;
}

static int
env_name_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9')))
			return 0;
	return i <= 128;
}

static int
native_check(const json_t *cfg, hd_err *err)
{
	static const char *const keys[] = {"provider", "model", "base_url",
	    "api_key_env", "system_prompt", "max_turns", "tools", "prices",
	    "timeout_s", NULL};
	hd_native_provider p;
	const char *url;
	hd_price price;
	int rc;

	if ((rc = hd_runtime__check_keys(cfg, keys, "native", err)) < 0)
		return rc;
	if (parse_provider(&p, json_string_value(
				   json_object_get(cfg, "provider"))) < 0)
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.provider must be \"anthropic\" or "
		    "\"openai\" (any OpenAI-compatible endpoint)");
	if (!json_is_string(json_object_get(cfg, "model")) ||
	    json_string_length(json_object_get(cfg, "model")) == 0)
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.model must name the model (a non-empty "
		    "string)");
	if ((rc = hd_runtime__check_string(cfg, "base_url", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "api_key_env", err)) < 0 ||
	    (rc = hd_runtime__check_string(cfg, "system_prompt", err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "max_turns", 1, 1000, err)) < 0 ||
	    (rc = hd_runtime__check_int(cfg, "timeout_s", 1, 86400, err)) <
		0 ||
	    (rc = hd_runtime__check_strings(cfg, "tools", err)) < 0 ||
	    (rc = hd_runtime__price(
		 &price, NULL, NULL, json_object_get(cfg, "prices"), err)) < 0)
		return rc;
	url = hd_runtime__cfg_str(cfg, "base_url", NULL);
	if (url != NULL && strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0)
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.base_url must be an http:// or https:// "
		    "URL");
	if (json_object_get(cfg, "api_key_env") != NULL &&
	    !env_name_ok(hd_runtime__cfg_str(cfg, "api_key_env", NULL)))
		return hd_err_set(err, HD_EINVAL,
		    "runtime_config.api_key_env must be the name of an "
		    "environment variable (letters, digits, _), not a key");
	return 0;
}

/* ---- one turn's state ---- */

typedef struct native_turn {
	const hd_runtime_turn *in;
	hd_runtime_emit *em;
	hd_native_provider provider;
	const char *pname;
	const char *model;
	const char *system;
	char url[2048];
	struct curl_slist *headers;
	CURL *curl;
	hd_price price;
	int64_t deadline; /* hd_mono_ms() */
	int64_t timeout_ms;
	int timed_out;
	json_t *messages; /* what is sent: the resent history and this turn */
	json_t *wire;     /* each message's serialised wire form, or null */
	char *envelope;   /* the body but its messages (native-wire.c (6)) */
	hd_native_body body; /* the last model call's, extended for the next */
	json_t *tools;    /* [{"name","description","input_schema"}] */
	void *sess;       /* the tool host's session, or NULL */
	hd_native_transcript tr;
} native_turn;

/* ---- the transcript (3): native-transcript.c ---- */

/* Append m (taken) to the messages sent and to the transcript. */
static void
transcript_add(native_turn *t, json_t *m)
{
	if (m == NULL)
		return;
	if (hd_native__transcript_add(&t->tr, m) < 0)
		hd_log_warn("native: cannot append to %s: %s", t->tr.path,
		    strerror(errno));
	if (json_array_append_new(t->messages, m) == 0 &&
	    json_array_append_new(t->wire, json_null()) < 0)
		json_array_clear(t->wire); /* kept parallel: all made again */
}

static int
transcript_open(native_turn *t, hd_err *err)
{
	const char *resume = t->in->resume_session_id;
	int rc;

	if ((rc = hd_native__transcript_open(
		 &t->tr, t->in->home_dir, resume, err)) < 0)
		return rc;
	if (t->tr.resumed) {
		json_decref(t->messages);
		json_decref(t->wire);
		t->messages = hd_native__transcript_history(
		    &t->tr, t->provider, &t->wire);
	} else if (resume != NULL && hd_native__session_ok(resume))
		hd_runtime_emit_status(t->em,
		    "native: the session to resume has no transcript here; "
		    "starting a new one");
	return 0;
}

/* ---- the body but its messages (7) ---- */

static pthread_mutex_t env_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	hd_native_provider provider;
	char *model, *system; /* system: NULL when none */
	json_t *tools;        /* a copy of its own, only read under env_mu */
	char *text;
} env_kept;

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	       (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* t's hd_native__envelope, malloc'd: the kept one when it was made from
 * the same provider, model, system prompt and tools, else made (and
 * kept in its place). NULL: no memory. */
static char *
envelope(const native_turn *t)
{
	char *out = NULL, *model, *system, *text;
	json_t *tools;

	pthread_mutex_lock(&env_mu);
	if (env_kept.text != NULL && env_kept.provider == t->provider &&
	    strcmp(env_kept.model, t->model) == 0 &&
	    same_str(env_kept.system, t->system) &&
	    json_equal(env_kept.tools, t->tools))
		out = strdup(env_kept.text);
	pthread_mutex_unlock(&env_mu);
	if (out != NULL ||
	    (out = hd_native__envelope(
		 t->provider, t->model, t->system, t->tools)) == NULL)
		return out;
	model = strdup(t->model);
	system = t->system != NULL ? strdup(t->system) : NULL;
	tools = json_deep_copy(t->tools);
	text = strdup(out);
	if (model == NULL || (t->system != NULL && system == NULL) ||
	    tools == NULL || text == NULL) {
		free(model);
		free(system);
		json_decref(tools);
		free(text);
		return out;
	}
	pthread_mutex_lock(&env_mu);
	free(env_kept.model);
	free(env_kept.system);
	json_decref(env_kept.tools);
	free(env_kept.text);
	env_kept.provider = t->provider;
	env_kept.model = model;
	env_kept.system = system;
	env_kept.tools = tools;
	env_kept.text = text;
	pthread_mutex_unlock(&env_mu);
	return out;
}

/* ---- HTTP (4) ---- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void
curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

typedef struct xfer {
	native_turn *t;
	hd_native_stream ns;
	hd_buf body; /* a failed call's body, capped */
	long status;
	int64_t retry_after_ms; /* -1: none */
} xfer;

static void
on_text(void *ctx, const char *text, size_t len)
{
	native_turn *t = ctx;

	hd_runtime_emit_text(t->em, text, len);
}

static size_t
write_cb(char *data, size_t size, size_t nmemb, void *ctx)
{
	xfer *x = ctx;
	size_t n = size * nmemb;

	if (x->status == 0)
		curl_easy_getinfo(x->t->curl, CURLINFO_RESPONSE_CODE, &x->status);
	if (x->status == 200)
		hd_native__stream_feed(&x->ns, data, n);
	else if (x->body.len < NATIVE_ERROR_BODY_MAX)
		hd_buf_put(&x->body, data,
		    n < NATIVE_ERROR_BODY_MAX - x->body.len
			? n
			: NATIVE_ERROR_BODY_MAX - x->body.len);
	return n;
}

static size_t
header_cb(char *data, size_t size, size_t nmemb, void *ctx)
{
	xfer *x = ctx;
	size_t n = size * nmemb;
	char v[32];
	size_t k, m;
	long long secs;
	char *end;

	if (n > 12 && strncasecmp(data, "retry-after:", 12) == 0) {
		for (k = 12; k < n && data[k] == ' '; k++)
			;
		for (m = 0; k < n && m < sizeof(v) - 1 && data[k] != '\r' &&
			    data[k] != '\n';
		     k++)
			v[m++] = data[k];
		v[m] = '\0';
		errno = 0;
		secs = strtoll(v, &end, 10);
		if (errno == 0 && end != v && *end == '\0' && secs >= 0 &&
		    secs < 86400)
			x->retry_after_ms = secs * 1000;
	}
	return n;
}

static int
xferinfo_cb(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	native_turn *t = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	if (hd_runtime_aborted(t->in))
		return 1;
	if (hd_mono_ms() >= t->deadline) {
		t->timed_out = 1;
		return 1;
	}
	return 0;
}

/* Sleep ms, waking for the abort flag; 0, or -1 once aborted. */
static int
nap(native_turn *t, int64_t ms)
{
	int64_t until = hd_mono_ms() + ms;

	while (hd_mono_ms() < until) {
		if (hd_runtime_aborted(t->in))
			return -1;
		hd_sleep_us(20 * 1000);
	}
	return hd_runtime_aborted(t->in) ? -1 : 0;
}

static int
http_setup(native_turn *t, hd_err *err)
{
	const json_t *cfg = t->in->agent->runtime_config;
	const char *base = hd_runtime__cfg_str(cfg, "base_url", NULL);
	const char *keyvar = hd_runtime__cfg_str(cfg, "api_key_env", NULL);
	const char *key = keyvar != NULL ? getenv(keyvar) : NULL;
	hd_buf h = HD_BUF_INIT(0);
	size_t blen;

	pthread_once(&curl_once, curl_init_once);
	if (keyvar != NULL && (key == NULL || key[0] == '\0'))
		return hd_err_set(err, HD_EINVAL,
		    "native: %s: the API key variable %s "
		    "(runtime_config.api_key_env) is not set",
		    t->pname, keyvar);
	if (base == NULL)
		base = t->provider == HD_NATIVE_ANTHROPIC
			   ? "https://api.anthropic.com"
			   : "https://api.openai.com/v1";
	blen = strlen(base);
	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	snprintf(t->url, sizeof(t->url), "%.*s%s", (int)blen, base,
	    t->provider == HD_NATIVE_ANTHROPIC ? "/v1/messages"
					       : "/chat/completions");
	t->headers = curl_slist_append(NULL, "Content-Type: application/json");
	t->headers = curl_slist_append(t->headers, "Accept: text/event-stream");
	if (t->provider == HD_NATIVE_ANTHROPIC)
		t->headers =
		    curl_slist_append(t->headers, "anthropic-version: 2023-06-01");
	if (key != NULL && key[0] != '\0') {
		if (t->provider == HD_NATIVE_ANTHROPIC)
			hd_buf_printf(&h, "x-api-key: %s", key);
		else
			hd_buf_printf(&h, "Authorization: Bearer %s", key);
		t->headers = curl_slist_append(t->headers, hd_buf_cstr(&h));
		hd_buf_dispose(&h);
	}
	if ((t->curl = curl_easy_init()) == NULL || t->headers == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	return 0;
}

enum { CALL_OK = 0, CALL_ABORTED = 1, CALL_FAILED = -1 };

/* One attempt. 0 when it ran (read x->status), else CALL_ABORTED or
 * CALL_FAILED with err set. */
static int
http_attempt(
    native_turn *t, xfer *x, const char *body, size_t len, hd_err *err)
{
	CURL *c = t->curl;
	int64_t left = t->deadline - hd_mono_ms();
	CURLcode cc;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, t->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, t->headers);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(left > 1 ? left : 1));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, t);
	cc = curl_easy_perform(c);
	if (x->status == 0)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
	if (hd_runtime_aborted(t->in))
		return CALL_ABORTED;
	if (cc == CURLE_OPERATION_TIMEDOUT || t->timed_out ||
	    (cc != CURLE_OK && hd_mono_ms() >= t->deadline)) {
		char msg[64];

		hd_runtime__timeout_msg(msg, sizeof(msg), t->timeout_ms);
		return hd_err_set(err, HD_ETIMEOUT,
		    "native: %s: %s (runtime_config.timeout_s)", t->pname, msg);
	}
	if (cc != CURLE_OK && x->status == 200)
		return 0; /* cut mid-way: the reply says it is unfinished */
	if (cc != CURLE_OK)
		return hd_err_set(err, HD_ERR, "native: %s: cannot reach %s: %s",
		    t->pname, t->url, curl_easy_strerror(cc));
	return 0;
}

/* One model call with its retries (4): CALL_OK with x->ns holding the
 * finished reply, CALL_ABORTED, or CALL_FAILED with err set. */
static int
model_call(native_turn *t, xfer *x, hd_err *err)
{
	int attempt, rc = CALL_FAILED;
	char *msg;

	if (t->envelope == NULL ||
	    hd_native__body_make(&t->body, t->provider, t->envelope, t->system,
		t->messages, t->wire) < 0)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	for (attempt = 0;; attempt++) {
		int64_t wait, left;

		hd_native__stream_dispose(&x->ns);
		hd_native__stream_init(&x->ns, t->provider, on_text, t);
		hd_buf_reset(&x->body);
		x->status = 0;
		x->retry_after_ms = -1;
		if ((rc = http_attempt(t, x, t->body.text, t->body.len, err)) !=
		    0)
			break;
		if (x->status == 200) {
			hd_native__stream_end(&x->ns);
			if (x->ns.r.error != NULL)
				rc = hd_err_set(err, HD_ERR,
				    "native: %s: the stream reported an error: "
				    "%.300s",
				    t->pname, x->ns.r.error);
			else if (!x->ns.r.finished)
				rc = hd_err_set(err, HD_ERR,
				    "native: %s: the stream ended before the "
				    "reply did (cut mid-way%s)",
				    t->pname,
				    x->ns.r.malformed ? ", malformed events"
						      : "");
			break;
		}
		msg = hd_native__error_message(
		    hd_buf_cstr(&x->body), x->body.len);
		if (x->status == 429 || x->status >= 500) {
			wait = x->retry_after_ms >= 0
				   ? x->retry_after_ms
				   : (int64_t)500 << (attempt < 4 ? attempt : 4);
			if (wait > NATIVE_BACKOFF_MAX_MS &&
			    x->retry_after_ms < 0)
				wait = NATIVE_BACKOFF_MAX_MS;
			left = t->deadline - hd_mono_ms();
			if (wait < left) {
				char note[512];

				snprintf(note, sizeof(note),
				    "native: %s: HTTP %ld (%.200s), retrying "
				    "in %g s",
				    t->pname, x->status, msg ? msg : "no message",
				    (double)wait / 1000.0);
				hd_runtime_emit_status(t->em, note);
				free(msg);
				if (nap(t, wait) < 0) {
					rc = CALL_ABORTED;
					break;
				}
				continue;
			}
		}
		rc = hd_err_set(err, HD_ERR, "native: %s: HTTP %ld: %.300s%s",
		    t->pname, x->status, msg ? msg : "(no message)",
		    x->status == 429 || x->status >= 500
			? " (no time left to retry within timeout_s)"
			: "");
		free(msg);
		break;
	}
	return rc;
}

/* ---- tools (2) ---- */

static int
tool_selected(const json_t *sel, const char *name)
{
	const json_t *v;
	size_t i;

	if (sel == NULL) {
		for (i = 0; NATIVE_DEFAULT_TOOLS[i] != NULL; i++)
			if (strcmp(NATIVE_DEFAULT_TOOLS[i], name) == 0)
				return 1;
		return 0;
	}
	json_array_foreach (sel, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

static int
tool_offered(const native_turn *t, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach (t->tools, i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")),
			name) == 0)
			return 1;
	return 0;
}

/* The tools offered: the host's, as runtime_config.tools picks them. An
 * unknown name in it ends the turn before any model call. The host's
 * list is read once (each tool's name looked up once), and the picked
 * names are checked against what was offered: a name the host has is
 * always among them. */
static int
tools_open(native_turn *t, hd_err *err)
{
	const hd_runtime_tool_host *h = tool_host;
	const json_t *sel = json_object_get(t->in->agent->runtime_config, "tools");
	json_t *all, *v;
	const char *team = t->in->team ? t->in->team : t->in->agent->team_id;
	size_t i;
	int rc;

	t->tools = json_array();
	if (json_array_size(sel) == 0 && sel != NULL)
		return 0; /* tools: [] -- none */
	if (h == NULL || t->in->huddle_home == NULL || team == NULL) {
		hd_runtime_emit_status(t->em,
		    "native: no huddle tools in this process; the model "
		    "answers without them");
		return 0;
	}
	if ((rc = h->open(&t->sess, t->in->huddle_home, team, t->in->agent->id,
		 err)) < 0)
		return rc;
	if ((all = h->list(t->sess)) == NULL)
		return hd_err_set(err, HD_ENOMEM, "out of memory");
	json_array_foreach (all, i, v)
		if (tool_selected(sel,
			json_string_value(json_object_get(v, "name"))))
			json_array_append(t->tools, v);
	json_decref(all);
	json_array_foreach (sel, i, v)
		if (!tool_offered(t, json_string_value(v)))
			return hd_err_set(err, HD_EINVAL,
			    "native: runtime_config.tools: unknown tool "
			    "\"%.64s\"",
			    json_string_value(v));
	return 0;
}

/* A JSON value of text when it is JSON, else the text as a string. */
static json_t *
as_json(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);

	return j != NULL ? j : json_string(text);
}

/* Run one call c ({"id","name","args"}) and record its result. */
static void
run_tool(native_turn *t, const json_t *c)
{
	const char *id = json_string_value(json_object_get(c, "id"));
	const char *name = json_string_value(json_object_get(c, "name"));
	const char *args = json_string_value(json_object_get(c, "args"));
	json_t *a = json_loads(args ? args : "", JSON_DECODE_ANY, NULL);
	hd_runtime_event ev;
	hd_buf b = HD_BUF_INIT(0);
	char *text = NULL;
	int is_error;
	json_t *data;

	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_TOOL_CALL;
	ev.name = name;
	ev.id = id;
	data = a != NULL ? json_incref(a) : json_string(args ? args : "");
	ev.data = data;
	hd_runtime_emit_event(t->em, &ev);
	json_decref(data);
	if (!json_is_object(a)) {
		hd_buf_printf(&b,
		    "invalid arguments for %.64s: they must be a JSON object "
		    "matching the tool's input schema",
		    name ? name : "the tool");
		text = hd_buf_detach(&b);
		is_error = 1;
	} else if (!tool_offered(t, name ? name : "")) {
		hd_buf_printf(&b, "unknown tool \"%.64s\"", name ? name : "");
		text = hd_buf_detach(&b);
		is_error = 1;
	} else {
		is_error = tool_host->call(t->sess, name, a, &text) != 0;
		if (text == NULL)
			text = strdup(is_error ? "the tool failed" : "{}");
	}
	json_decref(a);
	memset(&ev, 0, sizeof(ev));
	ev.kind = HD_RT_TOOL_RESULT;
	ev.name = name;
	ev.id = id;
	ev.is_error = is_error;
	data = as_json(text ? text : "");
	ev.data = data;
	hd_runtime_emit_event(t->em, &ev);
	json_decref(data);
	transcript_add(t, json_pack("{s:s, s:s, s:s, s:s, s:b}", "role", "tool",
			      "id", id ? id : "", "name", name ? name : "",
			      "text", text ? text : "", "is_error", is_error));
	free(text);
}

/* ---- the turn ---- */

static void
turn_dispose(native_turn *t)
{
	if (t->sess != NULL && tool_host != NULL)
		tool_host->close(t->sess);
	if (t->curl != NULL)
		curl_easy_cleanup(t->curl);
	curl_slist_free_all(t->headers);
	hd_native__transcript_sent(&t->tr, t->provider, t->messages, t->wire);
	json_decref(t->messages);
	json_decref(t->wire);
	free(t->envelope);
	hd_native__body_dispose(&t->body);
	json_decref(t->tools);
	hd_native__transcript_close(&t->tr);
}

static int
native_run(const hd_runtime_turn *in, hd_runtime_emit *em, hd_err *err)
{
	const json_t *cfg = in->agent->runtime_config;
	native_turn t;
	xfer x;
	hd_runtime_cost cost;
	int rc, call, max_turns;
	size_t i;

	memset(&t, 0, sizeof(t));
	memset(&x, 0, sizeof(x));
	t.tr.fd = -1;
	t.in = in;
	t.em = em;
	t.messages = json_array();
	t.wire = json_array();
	x.t = &t;
	x.body = (hd_buf)HD_BUF_INIT(0);
	hd_native__stream_init(&x.ns, HD_NATIVE_OPENAI, NULL, NULL);
	if (cfg == NULL || (rc = native_check(cfg, err)) < 0) {
		if (cfg == NULL)
			hd_err_set(err, HD_EINVAL,
			    "runtime_config needs provider and model");
		rc = hd_runtime__fail(em, err, "native: %s", err->msg);
		goto done;
	}
	parse_provider(&t.provider, hd_runtime__cfg_str(cfg, "provider", ""));
	t.pname = hd_native__provider_name(t.provider);
	t.model = hd_runtime__cfg_str(cfg, "model", "");
	t.system = hd_runtime__cfg_str(cfg, "system_prompt", NULL);
	max_turns = json_is_integer(json_object_get(cfg, "max_turns"))
			? (int)json_integer_value(json_object_get(cfg, "max_turns"))
			: NATIVE_DEFAULT_MAX_TURNS;
	t.timeout_ms = hd_runtime__timeout_ms(cfg, in, NATIVE_DEFAULT_TIMEOUT_S);
	t.deadline = hd_mono_ms() + t.timeout_ms;
	hd_runtime__price(&t.price, &hd_runtime__native, t.model,
	    json_object_get(cfg, "prices"), NULL);
	if ((rc = http_setup(&t, err)) < 0 || (rc = tools_open(&t, err)) < 0 ||
	    (rc = transcript_open(&t, err)) < 0 ||
	    ((t.envelope = envelope(&t)) == NULL &&
		(rc = hd_err_set(err, HD_ENOMEM, "out of memory")) < 0)) {
		rc = hd_runtime__fail(em, err, "%s%s",
		    strncmp(err->msg, "native: ", 8) == 0 ? "" : "native: ",
		    err->msg);
		goto done;
	}
	transcript_add(&t, json_pack("{s:s, s:s}", "role", "user", "text",
			       in->prompt));
	for (call = 0; call < max_turns; call++) {
		json_t *calls, *m;

		rc = model_call(&t, &x, err);
		if (x.ns.r.have_usage) {
			hd_runtime__price_cost(&cost, &t.price, x.ns.r.input,
			    x.ns.r.cached, x.ns.r.output);
			hd_runtime_emit_cost(em, &cost);
		}
		if (rc == CALL_ABORTED) {
			hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, t.tr.session);
			rc = 0;
			goto done;
		}
		if (rc < 0) {
			rc = hd_runtime__fail(em, err, "%s", err->msg);
			goto done;
		}
		calls = x.ns.r.calls;
		m = json_pack("{s:s, s:s%}", "role", "assistant", "text",
		    hd_buf_cstr(&x.ns.r.text), x.ns.r.text.len);
		if (m == NULL) /* not UTF-8: the model's text, made safe */
			m = json_pack("{s:s, s:s}", "role", "assistant", "text",
			    "");
		if (json_array_size(calls) > 0)
			json_object_set(m, "calls", calls);
		transcript_add(&t, m);
		if (json_array_size(calls) == 0) {
			hd_runtime_emit_reply(
			    em, hd_buf_cstr(&x.ns.r.text), x.ns.r.text.len);
			hd_runtime_emit_done(em, HD_DONE_SUCCESS, NULL, t.tr.session);
			rc = 0;
			goto done;
		}
		for (i = 0; i < json_array_size(calls); i++) {
			if (hd_runtime_aborted(in)) {
				/* the calls not run still get an answer, so
				 * the transcript stays well-formed (3) */
				const json_t *c = json_array_get(calls, i);

				transcript_add(&t,
				    json_pack("{s:s, s:s, s:s, s:s, s:b}", "role",
					"tool", "id",
					json_string_value(json_object_get(c, "id")),
					"name",
					json_string_value(
					    json_object_get(c, "name")),
					"text", "not run: the turn was aborted",
					"is_error", 1));
				continue;
			}
			run_tool(&t, json_array_get(calls, i));
		}
		if (hd_runtime_aborted(in)) {
			hd_runtime_emit_done(em, HD_DONE_ABORTED, NULL, t.tr.session);
			rc = 0;
			goto done;
		}
	}
	hd_runtime_emit_status(em, "native: max_turns model calls spent; the "
				   "model was still calling tools");
	hd_runtime_emit_done(em, HD_DONE_MAX_TURNS, NULL, t.tr.session);
	rc = 0;
done:
	hd_native__stream_dispose(&x.ns);
	hd_buf_dispose(&x.body);
	turn_dispose(&t);
	return rc;
}

static void
native_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime_class = HD_RUNTIME_NATIVE;
	out->native_home.scope = HD_HOME_SCOPE_PER_IDENTITY;
	out->native_home.persist = 1; /* its transcripts (3) */
	out->native_memory = HD_NATIVE_PRESERVE;
	out->native_skills = HD_NATIVE_NONE;
	out->native_channels = HD_CHANNELS_NONE;
	out->native_scheduler = 0;
}

/* huddle doctor: no binary; the endpoint and whether the key variable
 * is set (its name only, never its value). Without api_key_env no key
 * is sent (a keyless local server): env says so, and that is no
 * problem. */
static void
native_doctor(const hd_agent *a, const char *home_dir, json_t *report)
{
	const json_t *cfg = a->runtime_config;
	const char *var = hd_runtime__cfg_str(cfg, "api_key_env", NULL);
	const char *names[] = {var, NULL};
	hd_err err = HD_ERR_INIT;
	char needs[300];

	(void)home_dir;
	if (cfg == NULL || native_check(cfg, &err) < 0)
		hd_runtime__doctor_problem(report, "%s",
		    cfg == NULL ? "runtime_config needs provider and model"
				: err.msg);
	if (var != NULL) {
		snprintf(needs, sizeof(needs), "%.200s (runtime_config."
					       "api_key_env)",
		    var);
		hd_runtime__doctor_needs(report, a, needs, names, 0);
	} else
		json_object_set_new(report, "env",
		    json_pack("{s:s, s:[], s:b}", "needs",
			"no key: runtime_config.api_key_env is not set, so "
			"none is sent (a keyless server)",
			"present", "keyless", 1));
	json_object_set_new(report, "endpoint",
	    json_pack("{s:s, s:s, s:s}", "provider",
		hd_runtime__cfg_str(cfg, "provider", ""), "model",
		hd_runtime__cfg_str(cfg, "model", ""), "base_url",
		hd_runtime__cfg_str(cfg, "base_url",
		    strcmp(hd_runtime__cfg_str(cfg, "provider", ""),
			"anthropic") == 0
			? "https://api.anthropic.com"
			: "https://api.openai.com/v1")));
}

const hd_runtime_adapter hd_runtime__native = {
    .name = "native",
    .label = "native",
    .is_scripted = 0,
    .capabilities = native_caps,
    .check_config = native_check,
    .prices = native_prices,
    .attach = NULL,
    .run = native_run,
    .doctor = native_doctor,
};
