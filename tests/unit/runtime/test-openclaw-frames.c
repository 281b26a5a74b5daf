/*
 * test-openclaw-frames.c -- the OpenClaw Gateway frame parser
 * (src/runtime/openclaw.c), driven through the real turn driver: a test
 * adapter feeds frames (samples recorded from a real Gateway, openclaw
 * 2026.9.6, in tests/unit/runtime/samples/, or frames written here) to
 * hd_openclaw__frame and ends with hd_openclaw__closed, the connection's
 * end. Each test asserts the exact event sequence, the reply and the
 * messages, and the frames the parser asked to send: the connect request
 * (its Ed25519 signature checked with libcrypto over the v3 payload),
 * chat.send and chat.abort.
 */
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "feed.h"

#define RUN "99da630e-c4eb-4302-aea3-fd3e9449a252"
#define RUN2 "2596fcaa-f512-4952-9f15-b70e945f7265"
#define MAX_OUT 8

/* The parser's settings for the next case, and what it sent. */
static const char *run_id = RUN;
static const char *agent_id;
static size_t cancel_at; /* before this frame (1-based): cancel; 0: never */
static int cancel_why;
static size_t nfed;
static json_t *sent[MAX_OUT];
static size_t nsent;

static void *
oc_open(void)
{
	hd_openclaw_opts o;

	memset(&o, 0, sizeof(o));
	o.token = "tok-123";
	o.session = "huddle-dev-coder";
	o.agent_id = agent_id;
	o.message = "do the thing";
	o.run_id = run_id;
	o.team = "dev";
	o.agent = "coder";
	o.timeout_ms = 2000;
	nfed = 0;
	return hd_openclaw__new(&o);
}

static void
drain(void *p)
{
	char *s;

	while ((s = hd_openclaw__next_out(p)) != NULL) {
		assert_true(nsent < MAX_OUT);
		sent[nsent] = json_loads(s, 0, NULL);
		assert_non_null(sent[nsent]);
		nsent++;
		free(s);
	}
}

static int
oc_line(void *p, hd_runtime_emit *em, const char *l, size_t n)
{
	int rc;

	if (++nfed == cancel_at)
		hd_openclaw__cancel(p, em, cancel_why);
	rc = hd_openclaw__frame(p, em, l, n);
	drain(p);
	return rc;
}

static void
oc_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	(void)exit_code;
	if (cancel_at == nfed + 1)
		hd_openclaw__cancel(p, em, cancel_why);
	drain(p);
	if (!hd_openclaw__done(p))
		hd_openclaw__closed(p, em, tail);
}

static const char *
oc_session(void *p)
{
	(void)p;
	return NULL;
}

static void
oc_close(void *p)
{
	hd_openclaw__free(p);
}

static const feed_parser oc_parser = {
    oc_open, oc_line, oc_finish, oc_session, oc_close};

static int
setup(void **state)
{
	(void)state;
	parser = &oc_parser;
	run_id = RUN;
	agent_id = NULL;
	cancel_at = 0;
	cancel_why = 0;
	nsent = 0;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	while (nsent > 0)
		json_decref(sent[--nsent]);
	return 0;
}

static const char *
str(const json_t *j, const char *path)
{
	const char *dot = strchr(path, '.');
	char key[64];

	if (dot == NULL)
		return json_string_value(json_object_get(j, path));
	snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
	return str(json_object_get(j, key), dot + 1);
}

/* base64url (no padding) decoded into out; its length. */
static size_t
unb64url(unsigned char *out, const char *in)
{
	char b[256];
	size_t n = strlen(in), i;
	int len;

	assert_true(n + 4 < sizeof(b));
	for (i = 0; i < n; i++)
		b[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	while (i % 4 != 0)
		b[i++] = '=';
	b[i] = '\0';
	len = EVP_DecodeBlock(out, (unsigned char *)b, (int)i);
	assert_true(len > 0);
	return (size_t)len - (n % 4 == 2 ? 2 : n % 4 == 3 ? 1 : 0);
}

/* The connect request: protocol 4, an operator with read and write, the
 * token, and a device whose id is its key's SHA-256 and whose signature
 * verifies over the v3 payload (openclaw.c (2)). */
static void
assert_connect(const json_t *f, const char *nonce, json_int_t ts)
{
	const json_t *p = json_object_get(f, "params");
	const json_t *dev = json_object_get(p, "device");
	unsigned char pub[64], sig[128], sum[SHA256_DIGEST_LENGTH];
	char id[2 * SHA256_DIGEST_LENGTH + 1], payload[512];
	EVP_PKEY *key;
	EVP_MD_CTX *md;
	int i;

	assert_string_equal(str(f, "type"), "req");
	assert_string_equal(str(f, "method"), "connect");
	assert_int_equal(json_integer_value(json_object_get(p, "minProtocol")), 4);
	assert_int_equal(json_integer_value(json_object_get(p, "maxProtocol")), 4);
	assert_string_equal(str(p, "role"), "operator");
	assert_string_equal(str(p, "client.id"), "gateway-client");
	assert_string_equal(str(p, "client.mode"), "backend");
	assert_string_equal(str(p, "auth.token"), "tok-123");
	assert_string_equal(str(dev, "nonce"), nonce);
	assert_int_equal(json_integer_value(json_object_get(dev, "signedAt")), ts);
	assert_int_equal(unb64url(pub, str(dev, "publicKey")), 32);
	SHA256(pub, 32, sum);
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(id + 2 * i, 3, "%02x", sum[i]);
	assert_string_equal(str(dev, "id"), id);
	snprintf(payload, sizeof(payload),
	    "v3|%s|gateway-client|backend|operator|operator.read,"
	    "operator.write|%lld|tok-123|%s|linux|",
	    id, (long long)ts, nonce);
	assert_int_equal(unb64url(sig, str(dev, "signature")), 64);
	key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, 32);
	assert_non_null(key);
	md = EVP_MD_CTX_new();
	assert_int_equal(EVP_DigestVerifyInit(md, NULL, NULL, NULL, key), 1);
	assert_int_equal(EVP_DigestVerify(md, sig, 64,
			     (unsigned char *)payload, strlen(payload)),
	    1);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
}

static void
test_openclaw__a_recorded_turn(void **state)
{
	turn_case c;

	(void)state;
	agent_id = "main";
	assert_int_equal(
	    case_feed_sample(&c, "openclaw-2026.9.6-chat.jsonl", 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "status,status,text_delta,text_delta,cost,done");
	assert_string_equal(ev_text(&c, 0), "openclaw: preparing_workspace");
	assert_string_equal(ev_text(&c, 1), "openclaw: starting_model");
	assert_string_equal(c.t.r.reply.ptr, "pong from fake");
	assert_string_equal(c.res.text, "pong from fake");
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	assert_int_equal(c.res.cost.estimated, 1);
	/* every frame was one: none was garbage */
	for (size_t i = 0; i < c.f.n; i++)
		assert_int_equal(c.f.rcs[i], 0);
	/* what it sent: connect, then chat.send */
	assert_int_equal(nsent, 2);
	assert_connect(
	    sent[0], "e87c1703-cc65-43b5-badd-bdfb9dca3683", 1795734056366);
	assert_string_equal(str(sent[0], "id"), "connect-1");
	assert_string_equal(str(sent[1], "method"), "chat.send");
	assert_string_equal(str(sent[1], "id"), "chat.send-2");
	assert_string_equal(str(sent[1], "params.sessionKey"), "huddle-dev-coder");
	assert_string_equal(str(sent[1], "params.message"), "do the thing");
	assert_string_equal(str(sent[1], "params.idempotencyKey"), RUN);
	assert_string_equal(str(sent[1], "params.agentId"), "main");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(sent[1], "params"), "timeoutMs")),
	    7000); /* the limit and the 5 s grace after an abort */
	case_dispose(&c);
}

/* The same agent is the same device: its key comes from the token, the
 * team and the agent, nothing stored. */
static void
test_openclaw__one_device_per_agent(void **state)
{
	turn_case c;
	char *first;

	(void)state;
	case_feed_sample(&c, "openclaw-2026.9.6-chat.jsonl", 0, "");
	first = strdup(str(sent[0], "params.device.id"));
	case_dispose(&c);
	teardown(state);
	case_feed_sample(&c, "openclaw-2026.9.6-chat.jsonl", 0, "");
	assert_string_equal(str(sent[0], "params.device.id"), first);
	free(first);
	case_dispose(&c);
}

static void
test_openclaw__aborted_by_huddle(void **state)
{
	turn_case c;

	(void)state;
	run_id = RUN2;
	cancel_at = 4; /* after chat.send was accepted */
	cancel_why = HD_OPENCLAW_ABORT;
	assert_int_equal(
	    case_feed_sample(&c, "openclaw-2026.9.6-aborted.jsonl", 0, ""), 0);
	assert_string_equal(rec_kinds(&c.t.r), "status,cost,done");
	assert_int_equal(c.res.reason, HD_DONE_ABORTED);
	assert_int_equal(nsent, 3);
	assert_string_equal(str(sent[2], "method"), "chat.abort");
	assert_string_equal(str(sent[2], "params.sessionKey"), "huddle-dev-coder");
	assert_string_equal(str(sent[2], "params.runId"), RUN2);
	case_dispose(&c);
}

static void
test_openclaw__timed_out(void **state)
{
	turn_case c;

	(void)state;
	run_id = RUN2;
	cancel_at = 4;
	cancel_why = HD_OPENCLAW_TIMEOUT;
	assert_true(
	    case_feed_sample(&c, "openclaw-2026.9.6-aborted.jsonl", 0, "") < 0);
	assert_string_equal(rec_kinds(&c.t.r), "status,error,cost,done");
	assert_string_equal(c.res.error,
	    "openclaw: timed out after 2 s (the run was aborted on the "
	    "Gateway)");
	assert_string_equal(str(sent[2], "method"), "chat.abort");
	case_dispose(&c);
}

/* Aborted by someone else (the Control UI, another client): an error. */
static void
test_openclaw__aborted_on_the_gateway(void **state)
{
	turn_case c;

	(void)state;
	run_id = RUN2;
	assert_true(
	    case_feed_sample(&c, "openclaw-2026.9.6-aborted.jsonl", 0, "") < 0);
	assert_string_equal(
	    c.res.error, "openclaw: the run was aborted on the Gateway");
	assert_int_equal(nsent, 2);
	case_dispose(&c);
}

/* A cancel before chat.send went: nothing to abort on the Gateway. */
static void
test_openclaw__cancelled_before_the_run(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"
	    "{\"nonce\":\"n-1\",\"ts\":5}}",
	    NULL};
	turn_case c;

	(void)state;
	cancel_at = 2; /* at the end */
	cancel_why = HD_OPENCLAW_ABORT;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_int_equal(c.res.reason, HD_DONE_ABORTED);
	assert_int_equal(nsent, 1); /* connect only */
	case_dispose(&c);
}

static void
test_openclaw__refusals_and_errors(void **state)
{
	static const char *const token[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"
	    "{\"nonce\":\"n-1\",\"ts\":5}}",
	    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":false,\"error\":{"
	    "\"code\":\"INVALID_REQUEST\",\"message\":\"unauthorized: gateway "
	    "token mismatch\\n(set gateway.remote.token)\",\"details\":{"
	    "\"code\":\"AUTH_TOKEN_MISMATCH\"}}}",
	    NULL};
	static const char *const send[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"
	    "{\"nonce\":\"n-1\",\"ts\":5}}",
	    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":true,\"payload\":{}}",
	    "{\"type\":\"res\",\"id\":\"chat.send-2\",\"ok\":false,\"error\":{"
	    "\"code\":\"INVALID_REQUEST\",\"message\":\"unknown agent id "
	    "\\\"ghost\\\"\"}}",
	    NULL};
	static const char *const failed[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"
	    "{\"nonce\":\"n-1\",\"ts\":5}}",
	    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":true,\"payload\":{}}",
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"seq\":3,\"state\":\"error\",\"errorMessage\":"
	    "\"HTTP 500:\\u0001 upstream\\ndown\",\"errorKind\":\"unknown\"}}",
	    NULL};
	static const char *const bad_challenge[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"
	    "{\"nonce\":\"n-1\",\"ts\":-3}}",
	    NULL};
	turn_case c;

	(void)state;
	assert_true(case_feed_lines(&c, token, 0, "") < 0);
	assert_string_equal(c.res.error,
	    "openclaw: the Gateway refused to connect: unauthorized: gateway "
	    "token mismatch (set gateway.remote.token) (AUTH_TOKEN_MISMATCH)");
	case_dispose(&c);
	teardown(state);
	assert_true(case_feed_lines(&c, send, 0, "") < 0);
	assert_string_equal(c.res.error,
	    "openclaw: the Gateway refused the message: unknown agent id "
	    "\"ghost\" (INVALID_REQUEST)");
	case_dispose(&c);
	teardown(state);
	assert_true(case_feed_lines(&c, failed, 0, "") < 0);
	assert_string_equal(c.res.error, "openclaw: HTTP 500:  upstream down");
	case_dispose(&c);
	teardown(state);
	assert_true(case_feed_lines(&c, bad_challenge, 0, "") < 0);
	assert_string_equal(c.res.error,
	    "openclaw: the Gateway's connect.challenge has no nonce and ts");
	assert_int_equal(nsent, 0);
	case_dispose(&c);
}

/* A long message from the Gateway is cut to 300 bytes on a character
 * boundary. */
static void
test_openclaw__a_long_message_is_cut_between_characters(void **state)
{
	char frame[600], want[400];
	const char *lines[4];
	turn_case c;

	(void)state;
	lines[0] = "{\"type\":\"event\",\"event\":\"connect.challenge\","
		   "\"payload\":{\"nonce\":\"n-1\",\"ts\":5}}";
	lines[1] = "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":true}";
	snprintf(frame, sizeof(frame),
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{"
	    "\"runId\":\"" RUN "\",\"state\":\"error\",\"errorMessage\":"
	    "\"%0299d\u00e9 and more\"}}",
	    0);
	lines[2] = frame;
	lines[3] = NULL;
	snprintf(want, sizeof(want), "openclaw: %0299d", 0);
	assert_true(case_feed_lines(&c, lines, 0, "") < 0);
	assert_string_equal(c.res.error, want);
	case_dispose(&c);
}

/* A message of nothing but blanks and control characters says nothing:
 * the error is the plain one, never a bare "openclaw:". */
static void
test_openclaw__a_blank_message_says_the_run_failed(void **state)
{
	const char *lines[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\","
	    "\"payload\":{\"nonce\":\"n-1\",\"ts\":5}}",
	    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":true}",
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{"
	    "\"runId\":\"" RUN "\",\"state\":\"error\",\"errorMessage\":"
	    "\"\\u007f \\t\\u0001\"}}",
	    NULL};
	turn_case c;

	(void)state;
	assert_true(case_feed_lines(&c, lines, 0, "") < 0);
	assert_string_equal(c.res.error, "openclaw: the run failed");
	case_dispose(&c);
}

/* The connection ending before a terminal frame: the caller's words. */
static void
test_openclaw__closed_mid_run(void **state)
{
	turn_case c;

	(void)state;
	case_init(&c);
	case_sample(&c, "openclaw-2026.9.6-chat.jsonl");
	c.f.n = 12; /* up to the first delta */
	assert_true(case_run(&c, 0,
			"the Gateway at ws://127.0.0.1:1 closed the connection "
			"before the run ended") < 0);
	assert_string_equal(rec_kinds(&c.t.r),
	    "status,status,text_delta,error,cost,done");
	assert_string_equal(c.res.error,
	    "openclaw: the Gateway at ws://127.0.0.1:1 closed the connection "
	    "before the run ended");
	assert_string_equal(c.res.text, "pong fr");
	case_dispose(&c);
}

/* Tool events of the run, other runs' frames and garbage. */
static void
test_openclaw__tools_other_runs_and_garbage(void **state)
{
	static const char *const lines[] = {
	    "{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"
	    "{\"nonce\":\"n-1\",\"ts\":5}}",
	    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":true,\"payload\":{}}",
	    "not json",
	    "[1,2]",
	    "{\"event\":\"chat\"}",
	    "{\"type\":\"res\",\"id\":\"nobody\",\"ok\":false}",
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{\"runId\":"
	    "\"other\",\"state\":\"final\",\"message\":{\"content\":\"no\"}}}",
	    "{\"type\":\"event\",\"event\":\"agent\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"stream\":\"tool\",\"data\":{\"phase\":\"start\","
	    "\"name\":\"exec\",\"toolCallId\":\"t1\",\"args\":{\"cmd\":\"ls\"}}}}",
	    "{\"type\":\"event\",\"event\":\"agent\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"stream\":\"tool\",\"data\":{\"phase\":\"update\","
	    "\"name\":\"exec\",\"toolCallId\":\"t1\"}}}",
	    "{\"type\":\"event\",\"event\":\"agent\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"stream\":\"tool\",\"data\":{\"phase\":\"result\","
	    "\"name\":\"exec\",\"toolCallId\":\"t1\",\"isError\":true,"
	    "\"result\":\"denied\"}}}",
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"state\":\"delta\",\"deltaText\":\"draft\","
	    "\"replace\":true}}",
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"state\":\"final\",\"message\":{\"content\":[{"
	    "\"type\":\"thinking\",\"text\":\"hm\"},{\"type\":\"text\","
	    "\"text\":\"done: \"},{\"type\":\"text\",\"text\":\"ok\"}]}}}",
	    "{\"type\":\"event\",\"event\":\"chat\",\"payload\":{\"runId\":"
	    "\"" RUN "\",\"state\":\"error\"}}",
	    NULL};
	turn_case c;

	(void)state;
	assert_int_equal(case_feed_lines(&c, lines, 0, ""), 0);
	assert_string_equal(
	    rec_kinds(&c.t.r), "tool_call,tool_result,cost,done");
	assert_int_equal(c.f.rcs[2], -1);
	assert_int_equal(c.f.rcs[3], -1);
	assert_int_equal(c.f.rcs[4], -1);
	assert_int_equal(c.f.rcs[5], 0);
	assert_tool(&c, 0, HD_RT_TOOL_CALL, "exec", "t1", "{\"cmd\":\"ls\"}", 0);
	assert_tool(&c, 1, HD_RT_TOOL_RESULT, "exec", "t1", "\"denied\"", 1);
	assert_string_equal(c.res.text, "done: ok");
	assert_int_equal(c.res.reason, HD_DONE_SUCCESS);
	case_dispose(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_openclaw__a_recorded_turn, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__one_device_per_agent, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__aborted_by_huddle, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__timed_out, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__aborted_on_the_gateway, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__cancelled_before_the_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__refusals_and_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__a_long_message_is_cut_between_characters, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__a_blank_message_says_the_run_failed, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__closed_mid_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_openclaw__tools_other_runs_and_garbage, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
