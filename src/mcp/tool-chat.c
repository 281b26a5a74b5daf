/*
 * tool-chat.c -- how team_chat_post writes over MCP: the session's post
 * hooks (mcp.h), given to the chat.post operation (src/ops/ops-chat.c)
 * as its hd_op_call.post. The session may defer the post (defer_post:
 * the reply waits for hd_mcp_finish_post) or write it through another
 * connection's commit (post); without either it is hd_room_post.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/envelope.h>

#include "mcp.h"

json_t *
hd_mcp__chat_posted(const hd_post *p)
{
	return hd_ops_chat_posted(p);
}

int
hd_mcp__chat_post(void *ctx, hd_post **out, const char *team,
    const char *kind, const char *author, const char *text, hd_err *err)
{
	hd_mcp_session *s = ctx;

	if (s->defer_post != NULL &&
	    s->defer_post(s->post_ctx, team, author, text)) {
		s->deferred = 1; /* the reply waits for hd_mcp_finish_post */
		return 1;
	}
	if (s->post != NULL)
		return s->post(s->post_ctx, out, team, author, text, err);
	return hd_room_post(out, s->st, team, kind, author, text, err);
}
