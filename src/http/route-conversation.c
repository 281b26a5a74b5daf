/*
 * route-conversation.c -- conversations over REST (SPEC 7, 11):
 *   POST /api/teams/<team>/chat {"message": "..."}
 *     -> 202 {"conversationId": "..."} at once; the conversation runs on
 *        the server's engine threads (never on MHD's), its progress goes
 *        out as events over SSE (conversation_started, conversation_reply,
 *        mention_dropped, conversation_completed, agent_status,
 *        team_chat_post);
 *   GET /api/conversations/<id>
 *     -> {"id","teamId","status","pending","totalMessages",
 *         "replies":[{"agent","body","at","seq"}],"response","createdAt",
 *         "completedAt"}.
 * Refusals keep the library's text: 400 bad input, 404 unknown team or
 * conversation, 413 a message over 100000 bytes, 422 a team that is not
 * active or has no leader for the message.
 */
#include <stdlib.h>
#include <string.h>

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

const hd_route hd_routes_conversation[] = {
    {"POST", "/api/teams/:team/chat", route_chat},
    {"GET", "/api/conversations/:id", route_get},
    {NULL, NULL, NULL},
};
