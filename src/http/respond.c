/*
 * respond.c -- the request helpers route handlers use (http.h): reading
 * a request's query and headers, setting its response (JSON, raw bytes,
 * errors with their status, extra headers) and parsing its JSON body.
 * Split from server.c along that seam; they touch only the hd_http_req
 * they are given (and MHD's lookup for its connection), never the
 * server's shared state, so any handler thread may call them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include <huddle/util.h>

#include "http.h"

const char *
hd_http_query(hd_http_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *
hd_http_header(hd_http_req *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

void
hd_http_raw(hd_http_req *r, int status, const char *content_type,
    const void *data, size_t len)
{
	free(r->resp);
	r->resp = malloc(len ? len : 1);
	if (r->resp == NULL) {
		r->status = 500;
		r->resp_len = 0;
		return;
	}
	memcpy(r->resp, data, len);
	r->resp_len = len;
	r->status = status;
	r->content_type = content_type;
}

void
hd_http_json(hd_http_req *r, int status, json_t *body)
{
	char *text = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(body);
	free(r->resp);
	r->resp = text;
	r->resp_len = text != NULL ? strlen(text) : 0;
	r->status = text != NULL ? status : 500;
	r->content_type = "application/json";
}

/* msg made valid UTF-8 for JSON (server.c (9)): a message quoting what a
 * client sent (a name cut at a byte count, a percent-decoded query value)
 * may not be; then every non-ASCII byte becomes '?'. */
static const char *
error_text(char *msg)
{
	char *p;

	if (hd_utf8_ok(msg, strlen(msg)))
		return msg;
	for (p = msg; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	return msg;
}

void
hd_http_error(hd_http_req *r, int status, const char *fmt, ...)
{
	char msg[HD_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hd_http_json(r, status, json_pack("{s:s}", "error", error_text(msg)));
}

void
hd_http_fail(hd_http_req *r, const hd_err *err)
{
	int status;

	switch (err->code) {
	case HD_EINVAL: status = 400; break;
	case HD_ENOTFOUND: status = 404; break;
	case HD_EEXISTS:
	case HD_ECONFLICT: status = 409; break;
	case HD_ETOOBIG: status = 413; break;
	case HD_EREFUSED: status = 422; break;
	case HD_EBUSY: status = 503; break;
	default: status = 500; break;
	}
	hd_http_error(r, status, "%s",
	    err->msg[0] ? err->msg : hd_code_name(err->code));
}

void
hd_http_set_header(hd_http_req *r, const char *name, const char *value)
{
	if (r->nheaders == HD_HTTP_HEADERS_MAX)
		return;
	r->headers[r->nheaders][0] = name;
	r->headers[r->nheaders][1] = value;
	r->nheaders++;
}

const char *
hd_http_keep(hd_http_req *r, const char *s)
{
	size_t n = strlen(s) + 1;
	char *at = r->header_copy + r->header_copy_len;

	if (n > sizeof(r->header_copy) - r->header_copy_len)
		return NULL;
	memcpy(at, s, n);
	r->header_copy_len += n;
	return at;
}

int
hd_http_set_header_copy(hd_http_req *r, const char *name, const char *value)
{
	const char *kept;

	if (r->nheaders == HD_HTTP_HEADERS_MAX ||
	    (kept = hd_http_keep(r, value)) == NULL)
		return -1;
	hd_http_set_header(r, name, kept);
	return 0;
}

json_t *
hd_http_body_object(hd_http_req *r)
{
	json_error_t jerr;
	json_t *j;

	if (r->body_len == 0) {
		hd_http_error(r, 400, "a JSON object body is required");
		return NULL;
	}
	j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL) {
		hd_http_error(r, 400, "body is not valid JSON: %s (line %d, "
				      "column %d)",
		    jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		hd_http_error(r, 400, "body must be a JSON object");
		return NULL;
	}
	return j;
}
