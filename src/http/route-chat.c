/*
 * route-chat.c -- the room over REST (SPEC 11): every route of it is the
 * operation table's now. GET /api/team-chat is chat.read and keeps its
 * compatibility shape exactly:
 *   {"roomId","posts":[{"id","roomId","teamId","authorAgentId","body",
 *    "kind","createdAt","seq"}],"nextSeq"}
 * with nextSeq the last returned seq, or sinceSeq when none; a post (POST
 * /api/teams/:team/posts) is chat.post (src/ops/ops-chat.c). Both are
 * served by route-ops.c; this table is left empty for the router.
 */
#include "http.h"

const hd_route hd_routes_chat[] = {
	{NULL, NULL, NULL},
};
