/*
 * fuzz-openclaw-frames.c -- the OpenClaw Gateway frame parser
 * (src/runtime/openclaw.c) under the turn driver, for any frames (one a
 * line): the checks of stream-fuzz.h. The connection's end is the
 * process's exit: its tail is what the client would say of it. A nonzero
 * exit status stands for a turn huddle cancelled: before the third frame
 * (the first that could end the run), the parser is told to abort (exit
 * 1) or that the time ran out (exit 2 or -1), so such a turn can never
 * succeed, as stream-fuzz.h (2) wants, and a late final must not make it.
 */
#include "stream-fuzz.h"

#define RUN "r-1"

typedef struct oc_fuzz {
	hd_openclaw *oc;
	int why; /* HD_OPENCLAW_*, or 0 */
	size_t n;
} oc_fuzz;

static void *
oc_open(uint8_t first)
{
	static const int whys[] = {
	    0, HD_OPENCLAW_ABORT, HD_OPENCLAW_TIMEOUT, HD_OPENCLAW_TIMEOUT};
	oc_fuzz *f = calloc(1, sizeof(*f));
	hd_openclaw_opts o;

	if (f == NULL)
		return NULL;
	memset(&o, 0, sizeof(o));
	o.token = (first / 12) % 2 ? "tok" : NULL;
	o.session = "huddle-dev-coder";
	o.agent_id = (first / 24) % 2 ? "main" : NULL;
	o.message = "do the thing";
	o.run_id = RUN;
	o.team = "dev";
	o.agent = "coder";
	o.timeout_ms = 1500;
	f->why = whys[first % 4];
	if ((f->oc = hd_openclaw__new(&o)) == NULL) {
		free(f);
		return NULL;
	}
	return f;
}

static void
drain(oc_fuzz *f)
{
	char *s;

	while ((s = hd_openclaw__next_out(f->oc)) != NULL) {
		json_t *j = json_loads(s, 0, NULL);

		check(json_is_object(j), "a frame to send that is not JSON");
		json_decref(j);
		free(s);
	}
}

static int
oc_line(void *p, hd_runtime_emit *em, const char *l, size_t n)
{
	oc_fuzz *f = p;
	int rc;

	if (++f->n == 3 && f->why != 0)
		hd_openclaw__cancel(f->oc, em, f->why);
	rc = hd_openclaw__frame(f->oc, em, l, n);
	drain(f);
	return rc;
}

static void
oc_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	oc_fuzz *f = p;

	(void)exit_code;
	if (f->why != 0)
		hd_openclaw__cancel(f->oc, em, f->why);
	drain(f);
	hd_openclaw__closed(f->oc, em, tail);
	check(hd_openclaw__done(f->oc), "the connection ended, the turn not");
}

static void
oc_close(void *p)
{
	oc_fuzz *f = p;

	hd_openclaw__free(f->oc);
	free(f);
}

static const stream_fuzz parser = {
    "openclaw: ", oc_open, oc_line, oc_finish, oc_close};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return stream_fuzz_one(&parser, data, size);
}

#define CHALLENGE                                                              \
	"{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":"     \
	"{\"nonce\":\"n-1\",\"ts\":1795734056366}}\n"
#define HELLO                                                                  \
	"{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":true,\"payload\":{"     \
	"\"type\":\"hello-ok\",\"protocol\":4}}\n"
#define SENT                                                                   \
	"{\"type\":\"res\",\"id\":\"chat.send-2\",\"ok\":true,\"payload\":{"   \
	"\"runId\":\"" RUN "\",\"status\":\"started\"}}\n"
#define CHAT(rest)                                                             \
	"{\"type\":\"event\",\"event\":\"chat\",\"payload\":{\"runId\":\"" RUN \
	"\",\"sessionKey\":\"agent:main:huddle-dev-coder\"," rest "}}\n"
#define TOOL(rest)                                                             \
	"{\"type\":\"event\",\"event\":\"agent\",\"payload\":{\"runId\":\""    \
	RUN "\",\"stream\":\"tool\",\"data\":{" rest "}}}\n"

const char *const hd_fuzz_seeds[] = {
    "\x00",
    "\x00" CHALLENGE HELLO SENT CHAT("\"state\":\"status\",\"phase\":"
				     "\"starting_model\"")
	CHAT("\"state\":\"delta\",\"deltaText\":\"pong \"")
	    CHAT("\"state\":\"final\",\"message\":{\"role\":\"assistant\","
		 "\"content\":[{\"type\":\"text\",\"text\":\"pong ok\"}]}"),
    "\x01" CHALLENGE HELLO SENT CHAT("\"state\":\"delta\",\"deltaText\":"
				     "\"half\"")
	CHAT("\"state\":\"aborted\",\"stopReason\":\"rpc\""),
    "\x02" CHALLENGE HELLO SENT CHAT("\"state\":\"final\",\"message\":"
				     "{\"content\":\"late\"}"),
    "\x04" CHALLENGE HELLO SENT TOOL(
	"\"phase\":\"start\",\"name\":\"exec\",\"toolCallId\":\"t1\","
	"\"args\":{\"cmd\":\"ls\"}")
	TOOL("\"phase\":\"result\",\"name\":\"exec\",\"toolCallId\":\"t1\","
	     "\"isError\":true,\"result\":[1]")
	    CHAT("\"state\":\"error\",\"errorMessage\":\"HTTP 500:\\u0001 "
		 "down\\nnow\""),
    "\x00" CHALLENGE
    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":false,\"error\":{"
    "\"code\":\"INVALID_REQUEST\",\"message\":\"token\\u0000mismatch\","
    "\"details\":{\"code\":\"AUTH_TOKEN_MISMATCH\"}}}\n",
    "\x00" CHALLENGE HELLO
    "{\"type\":\"res\",\"id\":\"chat.send-2\",\"ok\":false,\"error\":{}}\n",
    "\x00{\"type\":\"event\",\"event\":\"connect.challenge\",\"payload\":{"
    "\"nonce\":\"\",\"ts\":1e300}}\n",
    "\x00not json\n[1]\n{}\n{\"type\":7}\n\n\r\n" CHALLENGE CHALLENGE,
    "\x08" CHALLENGE HELLO SENT CHAT("\"state\":\"delta\",\"deltaText\":"
				     "\"\\u00e2\\u0080\",\"replace\":false"),
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    STREAM_FUZZ_JSON_TOKENS,
    CHALLENGE,
    HELLO,
    SENT,
    CHAT("\"state\":\"status\",\"phase\":\"preparing_workspace\""),
    CHAT("\"state\":\"delta\",\"deltaText\":\"a\"") ,
    CHAT("\"state\":\"delta\",\"deltaText\":\"b\",\"replace\":true"),
    CHAT("\"state\":\"final\""),
    CHAT("\"state\":\"final\",\"message\":{\"content\":[{\"type\":"
	 "\"text\",\"text\":\"x\"},{\"type\":\"image\"}]}"),
    CHAT("\"state\":\"aborted\""),
    CHAT("\"state\":\"error\",\"errorMessage\":\"e\\n\""),
    TOOL("\"phase\":\"start\",\"name\":\"n\",\"toolCallId\":\"t\""),
    TOOL("\"phase\":\"result\",\"isError\":true"),
    "{\"type\":\"event\",\"event\":\"tick\",\"payload\":{\"ts\":1}}\n",
    "{\"type\":\"res\",\"id\":\"chat.abort-3\",\"ok\":true}\n",
    "{\"type\":\"res\",\"id\":\"connect-1\",\"ok\":false,\"error\":{",
    "\"message\":\"m\",",
    "\"details\":{\"code\":\"PAIRING_REQUIRED\"},",
    "\"runId\":\"" RUN "\",",
    "\"runId\":\"other\",",
    "\"state\":\"final\",",
    "\"state\":\"delta\",",
    "\"deltaText\":\"t\",",
    "\"x\":0}}\n",
    NULL,
};
