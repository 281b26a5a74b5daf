/*
 * route-conversation.c -- conversations over REST (SPEC 7, 11):
 *   POST /api/teams/<team>/chat {"message": "..."}
 *     -> 202 {"conversationId": "..."} at once; the conversation runs on
 *        the server's engine threads (never on MHD's), its progress goes
 *        out as events over SSE (conversation_started, conversation_reply,
 *        mention_dropped, conversation_completed (or
 *        conversation_cancelled), agent_status,
 *        team_chat_post);
 *   GET /api/conversations/<id>
 *     -> {"id","teamId","status","pending","totalMessages",
 *         "replies":[{"agent","body","at","seq"}],"files":[...],
 *         "response","createdAt","completedAt"};
 *   GET /api/conversations/<id>/files
 *     -> {"conversationId","files":[{"id","seq","agent","name",
 *         "mediaType","size","createdAt"}]}: what its replies attached;
 *   GET /api/conversations/<id>/files/<file id>
 *     -> the file's bytes, with its media type as Content-Type and
 *        `Content-Disposition: attachment; filename="<name>";
 *        filename*=UTF-8''<name percent-encoded>` (the plain name with
 *        anything but printable ASCII, '"' and '\' as '_').
 *   POST /api/conversations/<id>/cancel
 *     -> cancels a running conversation (cancel.h): its engine stops the
 *        running turns and ends it `cancelled` (SSE
 *        conversation_cancelled); answered once it ended, 200 with the
 *        conversation as GET gives it, or after CANCEL_WAIT_MS, 202 with
 *        it still running; 409 `conversation x already ended
 *        (completed)`. The wait runs on a thread of its own
 *        (hd_http_defer), never on MHD's.
 * Refusals keep the library's text: 400 bad input, 404 unknown team or
 * conversation, 413 a message over 100000 bytes, 422 a team that is not
 * active or has no leader for the message.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/cancel.h>

#include "http.h"

static int
route_chat(hd_http_req *r)
{
	hd_conversation_spec spec;
	hd_err err = HD_ERR_INIT;
	char id[HD_CONVERSATION_ID_LEN + 1];
	hd_conversation_engine *e = hd_http_conversations(r->srv);
	json_t *body, *msg;

	if (e == NULL) {
		hd_http_error(r, 503, "the conversation engine is starting");
		return 0;
	}
	if ((body = hd_http_body_object(r)) == NULL)
		return 0;
	msg = json_object_get(body, "message");
	memset(&spec, 0, sizeof(spec));
	spec.team = r->params[0];
	spec.message = json_string_value(msg);
	spec.origin = "http";
	if (!json_is_string(msg))
		hd_http_error(r, 400, "\"message\" (a string) is required");
	else if (hd_conversation_start(id, e, r->st, &spec, &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, 202, json_pack("{s:s}", "conversationId", id));
	json_decref(body);
	return 0;
}

static int
route_get(hd_http_req *r)
{
	hd_conversation *c = NULL;
	hd_err err = HD_ERR_INIT;

	if (hd_conversation_get(&c, r->st, r->params[0], &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, 200, hd_conversation_to_json(c));
	hd_conversation_free(c);
	return 0;
}

static int
route_files(hd_http_req *r)
{
	hd_conversation *c = NULL;
	hd_err err = HD_ERR_INIT;
	json_t *files;
	size_t i;

	if (hd_conversation_get(&c, r->st, r->params[0], &err) < 0)
		hd_http_fail(r, &err);
	else {
		files = json_array();
		for (i = 0; i < c->nfiles; i++)
			json_array_append_new(files,
			    hd_conversation_file_to_json(&c->files[i]));
		hd_http_json(r, 200,
		    json_pack("{s:s, s:o}", "conversationId", c->id, "files",
			files));
	}
	hd_conversation_free(c);
	return 0;
}

/* Content-Disposition for name (a base name, UTF-8). */
static void
disposition(char *out, size_t outlen, const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0, i;

	n += (size_t)snprintf(out, outlen, "attachment; filename=\"");
	for (i = 0; name[i] != '\0' && n + 2 < outlen; i++) {
		unsigned char ch = (unsigned char)name[i];

		out[n++] = ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\'
			       ? '_'
			       : (char)ch;
	}
	n += (size_t)snprintf(
	    out + n, n < outlen ? outlen - n : 0, "\"; filename*=UTF-8''");
	for (i = 0; name[i] != '\0' && n + 4 < outlen; i++) {
		unsigned char ch = (unsigned char)name[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
		    ch == '_')
			out[n++] = (char)ch;
		else {
			out[n++] = '%';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		}
	}
	out[n < outlen ? n : outlen - 1] = '\0';
}

static int
route_file(hd_http_req *r)
{
	hd_conversation_file *f = NULL;
	hd_err err = HD_ERR_INIT;
	const char *type;
	char cd[600], *end;
	long long file_id;

	file_id = strtoll(r->params[1], &end, 10);
	if (*end != '\0' || end == r->params[1] || file_id <= 0) {
		hd_http_error(r, 400, "file id must be a positive integer");
		return 0;
	}
	if (hd_conversation_file_get(
		&f, r->st, r->params[0], (int64_t)file_id, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	disposition(cd, sizeof(cd), f->name);
	if ((type = hd_http_keep(r, f->media_type)) == NULL)
		type = "application/octet-stream";
	hd_http_raw(r, 200, type, f->content, (size_t)f->size);
	hd_http_set_header_copy(r, "Content-Disposition", cd);
	hd_http_set_header(r, "X-Content-Type-Options", "nosniff");
	hd_conversation_file_free(f);
	return 0;
}

#define CANCEL_WAIT_MS 10000

static void
cancel_wait(hd_http_req *r, void *payload)
{
	const char *id = payload;
	hd_conversation *c = NULL;
	hd_err err = HD_ERR_INIT;
	int rc = hd_conversation_cancel_wait(r->st, id, CANCEL_WAIT_MS, &err);

	if (rc < 0 && rc != HD_ETIMEOUT)
		hd_http_fail(r, &err);
	else if (hd_conversation_get(&c, r->st, id, &err) < 0)
		hd_http_fail(r, &err);
	else
		hd_http_json(r, rc == 0 ? 200 : 202, hd_conversation_to_json(c));
	hd_conversation_free(c);
}

static int
route_cancel(hd_http_req *r)
{
	hd_err err = HD_ERR_INIT;
	char *id;

	if (hd_conversation_cancel(NULL, r->st, r->params[0], NULL, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	if ((id = strdup(r->params[0])) == NULL) {
		hd_http_error(r, 500, "out of memory");
		return 0;
	}
	hd_http_defer(r, cancel_wait, id, free);
	return 0;
}

const hd_route hd_routes_conversation[] = {
    {"POST", "/api/teams/:team/chat", route_chat},
    {"GET", "/api/conversations/:id", route_get},
    {"GET", "/api/conversations/:id/files", route_files},
    {"GET", "/api/conversations/:id/files/:file", route_file},
    {"POST", "/api/conversations/:id/cancel", route_cancel},
    {NULL, NULL, NULL},
};
