/*
 * route.c -- the pure part of request routing, with no MHD and no
 * server state, so tests/fuzz/fuzz-rest-route.c can drive it on any
 * bytes. Callers: server.c (dispatch, and MHD's unescape callback).
 *  (1) Percent-decoding is MHD's own, except that %00 is left as the
 *      three characters "%00": a decoded NUL would silently cut a C
 *      string short, turning "dev%00x" into "dev". Left encoded, it fails
 *      every name check like any other bad character. The result is never
 *      longer than the input.
 *  (2) A decoded path must be valid UTF-8 (hd_http_path_check): every
 *      name in a path is, and an answer naming a path that is not could
 *      not be JSON.
 *  (3) Exact patterns match first, wherever they sit in the tables; a
 *      catch-all ("...*") answers only a path no exact pattern has, so it
 *      never hides a 405 and POST /nowhere stays 404. Captures point into
 *      the caller's buffer (a copy of the path); at most HD_ROUTE_PARAMS.
 *  (4) Every operation of the table (src/ops/ops.h) with a REST method
 *      is a route like the hand-written ones, its handler route-ops.c's;
 *      hd_http_route_op finds its entry again from the request.
 *  (5) hd_http_route_tables hands out the hand-written tables, so the
 *      route list in docs/rest.md is checked against what routing really
 *      matches (tests/tools/docs-dump.c, tests/e2e/test-docs.sh).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "http.h"

size_t
hd_http_unescape(char *s)
{
	char *r = s, *w = s;

	while (*r != '\0') {
		if (r[0] == '%' && isxdigit((unsigned char)r[1]) &&
		    isxdigit((unsigned char)r[2]) && !(r[1] == '0' && r[2] == '0')) {
			char hex[3] = {r[1], r[2], '\0'};

			*w++ = (char)strtol(hex, NULL, 16);
			r += 3;
		} else
			*w++ = *r++;
	}
	*w = '\0';
	return (size_t)(w - s);
}

int
hd_http_path_check(const char *path, char *msg, size_t msglen)
{
	if (hd_utf8_ok(path, strlen(path)))
		return 0;
	snprintf(msg, msglen, "the path is not valid UTF-8 once "
			      "percent-decoded: %%XX escapes must spell UTF-8 "
			      "text");
	return -1;
}

/* Match path against pattern, capturing :params (pointers into buf, a
 * copy of path). Returns 1 on a match. */
static int
route_match(const char *pattern, const char *path,
    const char *params[HD_ROUTE_PARAMS], int *nparams, char *buf,
    size_t buflen)
{
	const char *p = pattern;
	char *s;
	int n = 0;

	if (strlen(path) >= buflen)
		return 0;
	memcpy(buf, path, strlen(path) + 1);
	s = buf;
	for (;;) {
		if (p[0] == '*' && p[1] == '\0') {
			/* a catch-all takes the rest, possibly empty */
			if (n == HD_ROUTE_PARAMS)
				return 0;
			params[n++] = s;
			*nparams = n;
			return 1;
		}
		if (*p == '\0' || *s == '\0')
			break;
		if (*p == ':') {
			char *end = strchr(s, '/');

			if (n == HD_ROUTE_PARAMS || s[0] == '/' || s[0] == '\0')
				return 0;
			params[n++] = s;
			while (*p != '\0' && *p != '/')
				p++;
			if (end == NULL)
				s += strlen(s);
			else {
				*end = '\0';
				s = end + 1;
				if (*p != '/')
					return 0;
				p++;
			}
			continue;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	if (*p != '\0' || *s != '\0')
		return 0;
	*nparams = n;
	return 1;
}

static const hd_route *const route_tables[] = {
	hd_routes_mcp, hd_routes_teams, hd_routes_chat,
	hd_routes_exchange, hd_routes_conversation, hd_routes_web, NULL,
};

const hd_route *const *
hd_http_route_tables(void)
{
	return route_tables;
}

/* The table's operations as routes (4), made once. */
#define OPS_ROUTES_MAX 128
static hd_route ops_routes[OPS_ROUTES_MAX + 1];
static pthread_once_t ops_routes_once = PTHREAD_ONCE_INIT;

static void
ops_routes_build(void)
{
	const hd_op *const *o;
	size_t n = 0;

	for (o = hd_ops_all(); *o != NULL && n < OPS_ROUTES_MAX; o++)
		if ((*o)->method != NULL) {
			ops_routes[n].method = (*o)->method;
			ops_routes[n].pattern = (*o)->path;
			ops_routes[n].fn = hd_http_route_ops;
			n++;
		}
	memset(&ops_routes[n], 0, sizeof(ops_routes[n]));
}

const hd_route *
hd_http_routes_ops(void)
{
	pthread_once(&ops_routes_once, ops_routes_build);
	return ops_routes;
}

const hd_op *
hd_http_route_op(const char *method, const char *path)
{
	const hd_op *const *o;
	const char *probe[HD_ROUTE_PARAMS];
	char buf[2048];
	int n;

	for (o = hd_ops_all(); *o != NULL; o++)
		if ((*o)->method != NULL && strcmp((*o)->method, method) == 0 &&
		    route_match((*o)->path, path, probe, &n, buf, sizeof(buf)))
			return *o;
	return NULL;
}

static int
is_catch_all(const hd_route *rt)
{
	return rt->pattern[strlen(rt->pattern) - 1] == '*';
}

const hd_route *
hd_http_route_find(const char *method, const char *path,
    const char *params[HD_ROUTE_PARAMS], int *nparams, char *buf,
    size_t buflen, int *path_known)
{
	const hd_route *const *t;
	const hd_route *rt, *tables[16];
	const char *probe[HD_ROUTE_PARAMS];
	int pass, n, k = 0;

	*path_known = 0;
	*nparams = 0;
	tables[k++] = hd_http_routes_ops();
	for (t = route_tables; *t != NULL && k < 15; t++)
		tables[k++] = *t;
	tables[k] = NULL;
	for (pass = 0; pass < 2 && !*path_known; pass++)
		for (k = 0; tables[k] != NULL; k++)
			for (rt = tables[k]; rt->method != NULL; rt++) {
				if (is_catch_all(rt) != pass)
					continue;
				memset(probe, 0, sizeof(probe));
				n = 0;
				if (!route_match(rt->pattern, path, probe, &n, buf,
					buflen))
					continue;
				if (pass == 0)
					*path_known = 1;
				if (strcmp(rt->method, method) != 0)
					continue;
				memcpy(params, probe, sizeof(probe));
				*nparams = n;
				return rt;
			}
	return NULL;
}
