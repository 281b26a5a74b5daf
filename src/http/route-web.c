/*
 * route-web.c -- the dashboard (SPEC 12): the files of web/, embedded at
 * build time (cmake/embed-web.cmake -> hd_web_assets[]), served from
 * memory. No file is read at run time, so no request can name a path on
 * disk.
 *  (1) GET / and every path that is neither an API path nor an asset
 *      answer index.html, so the page's own routes (/teams/dev) survive a
 *      reload; unknown paths under /api/ and /mcp/ stay 404 JSON.
 *  (2) GET /assets/<file> answers web/<file> with its content type.
 *  (3) Caching: everything is `no-cache` with a strong ETag from the
 *      file's SHA-256; a matching If-None-Match is answered 304 with no
 *      body. A browser therefore revalidates each load cheaply and never
 *      runs a script older than the binary serving it.
 *  (4) Every answer carries `X-Content-Type-Options: nosniff`; the page
 *      carries a Content-Security-Policy that allows only this server, so
 *      even a bug that let data reach markup could not load or run
 *      anything.
 */
#include <string.h>

#include <microhttpd.h>

#include "http.h"
#include "web-assets.h"

#define WEB_CSP                                                                \
	"default-src 'none'; script-src 'self'; style-src 'self'; "            \
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; "          \
	"form-action 'self'; frame-ancestors 'none'"

static const hd_web_asset *
asset_find(const char *path)
{
	const hd_web_asset *a;

	for (a = hd_web_assets; a->path != NULL; a++)
		if (strcmp(a->path, path) == 0)
			return a;
	return NULL;
}

/* 1 when an If-None-Match value names etag (weak comparison, as RFC 9110
 * asks for If-None-Match), or is "*". */
static int
etag_matches(const char *inm, const char *etag)
{
	return strcmp(inm, "*") == 0 || strstr(inm, etag) != NULL;
}

static void
serve(hd_http_req *r, const hd_web_asset *a)
{
	const char *inm = hd_http_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);

	r->cache_control = "no-cache"; /* (3) */
	hd_http_set_header(r, MHD_HTTP_HEADER_ETAG, a->etag);
	hd_http_set_header(r, "X-Content-Type-Options", "nosniff"); /* (4) */
	if (strncmp(a->content_type, "text/html", 9) == 0) {
		hd_http_set_header(r, "Content-Security-Policy", WEB_CSP);
		hd_http_set_header(r, "Referrer-Policy", "no-referrer");
	}
	if (inm != NULL && etag_matches(inm, a->etag))
		hd_http_raw(r, MHD_HTTP_NOT_MODIFIED, NULL, "", 0);
	else
		hd_http_raw(r, MHD_HTTP_OK, a->content_type, a->bytes, a->len);
}

static int
serve_page(hd_http_req *r)
{
	const hd_web_asset *a = asset_find("index.html");

	if (a == NULL)
		hd_http_error(
		    r, 500, "this binary was built without the dashboard");
	else
		serve(r, a);
	return 0;
}

static int
route_index(hd_http_req *r)
{
	return serve_page(r);
}

static int
route_asset(hd_http_req *r)
{
	const hd_web_asset *a = asset_find(r->params[0]);

	if (a == NULL) {
		hd_http_error(r, 404, "no such asset: %.100s", r->params[0]);
		hd_http_set_header(r, "X-Content-Type-Options", "nosniff");
	} else
		serve(r, a);
	return 0;
}

static int
has_prefix(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* (1) Any other GET: the page, unless the path belongs to an API. */
static int
route_fallback(hd_http_req *r)
{
	if (has_prefix(r->path, "/api") || has_prefix(r->path, "/mcp") ||
	    has_prefix(r->path, "/assets")) {
		hd_http_error(r, 404, "no such route");
		return 0;
	}
	return serve_page(r);
}

const hd_route hd_routes_web[] = {
	{"GET", "/", route_index},
	{"GET", "/assets/*", route_asset},
	{"GET", "/*", route_fallback},
	{NULL, NULL, NULL},
};
