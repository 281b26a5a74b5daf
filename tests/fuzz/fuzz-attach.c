/*
 * fuzz-attach.c -- attach URLs and their signatures (src/team/attach.c,
 * SPEC 10.4), and the REST credential that reuses them
 * (src/http/identity.c), on a real home (store-fuzz.h: team dev with lead
 * and coder, and its secret). The first input byte picks the form:
 *   0: an attach URL; its query is taken apart as libmicrohttpd does and
 *      decoded by our unescape, and roomTeamId, postAuthorAgentId and sig
 *      (when all there) are verified;
 *   1: a credential, "TEAM/AGENT" '\n' SIG (the two REST headers);
 *   2: a valid signature with bytes of the input xor'ed into it.
 * For every input:
 *  (1) a signature verifies exactly when both names are valid and it is
 *      the HMAC hd_attach_sign gives for them, byte for byte;
 *  (2) a credential parses exactly when it is two valid names around one
 *      '/', and then they are those names;
 *  (3) a valid signature changed in any byte never verifies;
 *  (4) the attach URL of each agent of dev carries its team, its id and a
 *      sig that verifies (checked once, at start).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/attach.h>
#include <huddle/util.h>

#include <http/http.h>

#include "fuzz.h"
#include "store-fuzz.h"

static unsigned char key[HD_ATTACH_KEY_LEN];
static int have_key;

/* (1): what verification must say for (team, agent, sig). */
static void
check_verify(const char *team, const char *agent, const char *sig)
{
	char want[HD_ATTACH_SIG_HEX + 1];
	hd_err err = HD_ERR_INIT;
	int valid = 0, got;

	if (hd_slug_ok(team) && hd_slug_ok(agent)) {
		check(hd_attach_sign(want, fuzz_store(), team, agent, &err) == 0,
		    "signing valid names failed");
		valid = strcmp(want, sig) == 0;
	}
	got = hd_attach_verify_key(key, team, agent, sig);
	check(got == valid, valid ? "a valid sig did not verify"
				  : "a wrong sig verified");
}

/* (4) */
static void
check_urls(void)
{
	static const char *const agents[] = {"lead", "coder"};
	hd_err err = HD_ERR_INIT;
	char *url = NULL, want[256];
	const char *sig;
	size_t i;

	for (i = 0; i < 2; i++) {
		check(hd_attach_url(&url, fuzz_store(), "127.0.0.1", 7340,
			  agents[i], &err) == 0,
		    "no attach URL");
		snprintf(want, sizeof(want),
		    "http://127.0.0.1:7340/mcp?roomTeamId=dev&"
		    "postAuthorAgentId=%s&sig=",
		    agents[i]);
		check(strncmp(url, want, strlen(want)) == 0,
		    "the URL does not name its team and agent");
		sig = url + strlen(want);
		check(strlen(sig) == HD_ATTACH_SIG_HEX &&
			  hd_attach_verify_key(key, "dev", agents[i], sig),
		    "the URL's sig does not verify");
		free(url);
	}
}

static void
from_url(char *s)
{
	const char *team = NULL, *agent = NULL, *sig = NULL;
	char *q = strchr(s, '?'), *pair, *eq, *save = NULL;

	if (q == NULL)
		return;
	for (pair = strtok_r(q + 1, "&", &save); pair != NULL;
	     pair = strtok_r(NULL, "&", &save)) {
		if ((eq = strchr(pair, '=')) == NULL)
			continue;
		*eq++ = '\0';
		hd_http_unescape(pair);
		hd_http_unescape(eq);
		if (strcmp(pair, "roomTeamId") == 0)
			team = eq;
		else if (strcmp(pair, "postAuthorAgentId") == 0)
			agent = eq;
		else if (strcmp(pair, "sig") == 0)
			sig = eq;
	}
	if (team != NULL && agent != NULL && sig != NULL)
		check_verify(team, agent, sig);
}

static void
from_credential(char *s)
{
	char team[HD_HTTP_ACTOR_MAX], agent[HD_HTTP_ACTOR_MAX];
	char *nl = strchr(s, '\n'), *slash;
	const char *sig = "";
	int ok, want;

	if (nl != NULL) {
		*nl = '\0';
		sig = nl + 1;
	}
	ok = hd_http_credential_parse(s, team, agent) == 0;
	slash = strchr(s, '/');
	want = 0;
	if (slash != NULL) { /* (2) */
		*slash = '\0';
		want = strlen(s) < HD_HTTP_ACTOR_MAX &&
		       strlen(slash + 1) < HD_HTTP_ACTOR_MAX && hd_slug_ok(s) &&
		       hd_slug_ok(slash + 1);
		check(!ok || (strcmp(team, s) == 0 &&
				 strcmp(agent, slash + 1) == 0),
		    "the credential parsed into other names");
		*slash = '/';
	}
	check(ok == want, ok ? "a bad credential parsed"
			     : "a good credential was refused");
	if (ok)
		check_verify(team, agent, sig);
}

static void
flipped(const uint8_t *data, size_t size)
{
	char sig[HD_ATTACH_SIG_HEX + 1];
	hd_err err = HD_ERR_INIT;
	size_t i;
	int changed = 0;

	check(hd_attach_sign(sig, fuzz_store(), "dev", "lead", &err) == 0,
	    "signing failed");
	for (i = 0; i < size && i < HD_ATTACH_SIG_HEX; i++) {
		char c = (char)(sig[i] ^ data[i]);

		if (c == '\0')
			continue;
		changed |= c != sig[i];
		sig[i] = c;
	}
	check(hd_attach_verify_key(key, "dev", "lead", sig) == !changed,
	    changed ? "a changed sig verified" : "the valid sig did not verify");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hd_err err = HD_ERR_INIT;
	uint8_t mode = 0;
	char *s;
	size_t i;

	if (!have_key) {
		if (hd_attach_key(key, fuzz_store(), &err) < 0)
			fuzz_die("key", &err);
		have_key = 1;
		check_urls();
	}
	if (size > 0) {
		mode = data[0] % 3;
		data++;
		size--;
	}
	if (mode == 2) {
		flipped(data, size);
		return 0;
	}
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	for (i = 0; i < size; i++) /* headers and URLs are C strings */
		s[i] = data[i] == '\0' ? ' ' : (char)data[i];
	s[size] = '\0';
	if (mode == 0)
		from_url(s);
	else
		from_credential(s);
	free(s);
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "\x00http://127.0.0.1:7340/mcp?roomTeamId=dev&postAuthorAgentId=lead&"
    "sig=0000000000000000000000000000000000000000000000000000000000000000",
    "\x00/mcp?roomTeamId=dev&postAuthorAgentId=coder&sig=zz",
    "\x00/mcp?roomTeamId=d%65v&postAuthorAgentId=lead&sig=",
    "\x00/mcp?roomTeamId=dev%00&postAuthorAgentId=lead&sig=%ff",
    "\x01"
    "dev/lead\n0123",
    "\x01"
    "dev/lead/x\n",
    "\x01/lead\n",
    "\x01"
    "dev/\n",
    "\x01"
    "Dev/Lead\n",
    "\x02",
    "\x02\x01",
    "\x02                                                                 ",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "\x00", "\x01", "\x02", "http://127.0.0.1:7340/mcp", "?", "&", "=", "/",
    "\n", "roomTeamId", "postAuthorAgentId", "sig", "dev", "lead", "coder",
    "%", "%00", "%64", "%ff", "0", "f", "A", "-", "_",
    "0123456789abcdef0123456789abcdef", NULL,
};
