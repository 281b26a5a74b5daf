/*
 * fuzz-rest-route.c -- REST routing and query strings (src/http/route.c)
 * on any request line. The input is "METHOD URL"; the URL is taken apart
 * the way libmicrohttpd does before our code sees it (path before '?',
 * then '&'-separated key=value pairs), each part decoded by our unescape
 * callback, and the path routed as dispatch() routes it. For every input:
 *  (1) decoding never lengthens, and never makes a NUL: the length it
 *      returns is the string's (%00 stays three characters);
 *  (2) the path check refuses exactly what is not UTF-8;
 *  (3) a route found has the request's method, and its pattern with the
 *      captures put back spells the path exactly; a ':' capture is
 *      non-empty and holds no '/';
 *  (4) "path known" (405, not 404) holds exactly when some exact pattern
 *      matches the path under another method;
 *  (5) the numbers and names handlers read from a query (limit, sinceSeq,
 *      team) parse or are refused with a message, and a parsed number
 *      prints back as one equal to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include <http/http.h>

#include "fuzz.h"

/* (1) */
static void
unescape(char *s)
{
	size_t before = strlen(s), n = hd_http_unescape(s);

	check(n <= before, "decoding lengthened");
	check(n == strlen(s), "decoding made a NUL");
}

/* (3): pattern with params put back. */
static void
check_spelling(const hd_route *rt, const char *path, const char **params,
    int nparams)
{
	char out[2048];
	const char *p = rt->pattern;
	size_t n = 0, len;
	int i = 0;

	while (*p != '\0') {
		if (*p == ':' || (*p == '*' && p[1] == '\0')) {
			check(i < nparams, "fewer captures than the pattern has");
			check(*p == '*' ||
				  (params[i][0] != '\0' &&
				      strchr(params[i], '/') == NULL),
			    "a capture is empty or holds a '/'");
			len = strlen(params[i]);
			check(n + len < sizeof(out), "a capture too long");
			memcpy(out + n, params[i++], len);
			n += len;
			if (*p == '*')
				break;
			while (*p != '\0' && *p != '/')
				p++;
			continue;
		}
		check(n + 1 < sizeof(out), "the path too long");
		out[n++] = *p++;
	}
	out[n] = '\0';
	check(i == nparams, "more captures than the pattern has");
	check(strcmp(out, path) == 0, "the route does not spell the path");
}

static void
query_value(const char *key, const char *value)
{
	hd_err err = HD_ERR_INIT;
	int64_t v = 0, again = 0;
	char printed[32];

	if (strcmp(key, "limit") == 0 || strcmp(key, "sinceSeq") == 0 ||
	    strcmp(key, "after") == 0) {
		if (hd_parse_i64(&v, value, key, &err) < 0) {
			check(err.msg[0] != '\0', "a refusal without a message");
			return;
		}
		snprintf(printed, sizeof(printed), "%lld", (long long)v);
		check(hd_parse_i64(&again, printed, key, &err) == 0 && again == v,
		    "a parsed number does not print back");
	} else if (strcmp(key, "team") == 0 || strcmp(key, "teamId") == 0) {
		if (hd_slug_check("team", value, &err) < 0)
			check(err.msg[0] != '\0', "a refusal without a message");
		else
			check(hd_utf8_ok(value, strlen(value)),
			    "a name that is not UTF-8");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET", "POST", "DELETE", "PUT"};
	const char *params[HD_ROUTE_PARAMS], *probe[HD_ROUTE_PARAMS];
	char *line, *url, *q, *pair, *eq, *save = NULL, msg[160], buf[1024];
	const hd_route *rt;
	int nparams, known, any, n, k;
	size_t i;

	if ((line = malloc(size + 1)) == NULL)
		return 0;
	for (i = 0; i < size; i++) /* MHD hands us C strings */
		line[i] = data[i] == '\0' ? ' ' : (char)data[i];
	line[size] = '\0';
	url = strchr(line, ' ');
	if (url == NULL) {
		free(line);
		return 0;
	}
	*url++ = '\0';
	if ((q = strchr(url, '?')) != NULL)
		*q++ = '\0';
	unescape(url);
	for (pair = q != NULL ? strtok_r(q, "&", &save) : NULL; pair != NULL;
	     pair = strtok_r(NULL, "&", &save)) {
		if ((eq = strchr(pair, '=')) != NULL)
			*eq++ = '\0';
		unescape(pair);
		if (eq != NULL) {
			unescape(eq);
			query_value(pair, eq);
		}
	}
	/* (2) */
	if (hd_http_path_check(url, msg, sizeof(msg)) < 0) {
		check(!hd_utf8_ok(url, strlen(url)), "a UTF-8 path refused");
		check(msg[0] != '\0', "a refused path without a message");
		free(line);
		return 0;
	}
	check(hd_utf8_ok(url, strlen(url)), "a path that is not UTF-8 passed");
	rt = hd_http_route_find(
	    line, url, params, &nparams, buf, sizeof(buf), &known);
	if (rt != NULL) { /* (3) */
		check(strcmp(rt->method, line) == 0, "a route of another method");
		check(nparams >= 0 && nparams <= HD_ROUTE_PARAMS,
		    "too many captures");
		check_spelling(rt, url, params, nparams);
	} else { /* (4) */
		any = 0;
		for (k = 0; k < 4; k++) {
			char b2[1024];
			int kn;
			const hd_route *o = hd_http_route_find(methods[k], url,
			    probe, &n, b2, sizeof(b2), &kn);

			if (o != NULL && o->pattern[strlen(o->pattern) - 1] != '*')
				any = 1;
		}
		check(known == any, "405 and 404 disagree with the routes");
	}
	free(line);
	return 0;
}

const char *const hd_fuzz_seeds[] = {
    "GET /api/teams",
    "POST /api/teams/dev/posts",
    "GET /api/teams/dev/tasks?status=pending&limit=5&owner=coder",
    "POST /api/tasks/12/claim",
    "GET /api/team-chat?teamId=dev&sinceSeq=3&limit=10",
    "GET /api/events?team=dev&after=-1&limit=100&stream=1",
    "GET /api/conversations/abc/files/7",
    "GET /api/teams/%ff%fe",
    "GET /api/teams/dev%00x",
    "GET /api/teams/%2e%2e%2fetc",
    "GET /api/teams//agents",
    "DELETE /api/teams/dev",
    "PUT /api/teams",
    "GET /mcp?roomTeamId=dev&postAuthorAgentId=lead&sig=00",
    "GET /assets/app.js",
    "GET /",
    "POST /nowhere",
    "GET /api/team-chat?limit=99999999999999999999",
    "GET /api/team-chat?teamId=%c3%a9",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    "GET ", "POST ", "DELETE ", "PUT ", "/api", "/teams", "/tasks", "/agents",
    "/dev", "/12", "/claim", "/posts", "/messages", "/inbox", "/events",
    "/team-chat", "/exchange", "/conversations", "/files", "/mcp", "/chat",
    "/state", "/spawn", "/delegate", "/auto-claim", "/", "//", "?", "&", "=",
    "%", "%00", "%2f", "%ff", "%c3%a9", "%e2%82", "%zz", "teamId=",
    "team=", "limit=", "sinceSeq=", "after=", "-", "9223372036854775807",
    "9223372036854775808", " ", "+1", "0x10", NULL,
};
