/*
 * route-chat.c -- the room over REST (SPEC 11). GET /api/team-chat keeps
 * its compatibility shape exactly:
 *   {"roomId","posts":[{"id","roomId","teamId","authorAgentId","body",
 *    "kind","createdAt","seq"}],"nextSeq"}
 * with nextSeq the last returned seq, or sinceSeq when none. A post
 * (POST /api/teams/:team/posts) is the operation table's chat.post
 * (src/ops/ops-chat.c), served by route-ops.c.
 */
#include <stdlib.h>
#include <string.h>

#include <huddle/util.h>

#include "http.h"

static int
route_team_chat(hd_http_req *r)
{
	const char *team = hd_http_query(r, "teamId");
	const char *room = hd_http_query(r, "roomId");
	const char *since_s = hd_http_query(r, "sinceSeq");
	const char *limit_s = hd_http_query(r, "limit");
	int64_t since = 0, limit = HD_ROOM_READ_DEFAULT;
	hd_err err = HD_ERR_INIT;
	hd_posts l;
	json_t *posts;
	char room_id[80];
	size_t i;

	if (team == NULL && room != NULL && strncmp(room, "team:", 5) == 0)
		team = room + 5;
	if (team == NULL || team[0] == '\0') {
		hd_http_error(r, 400, "teamId or roomId is required");
		return 0;
	}
	if ((since_s != NULL &&
		hd_parse_i64(&since, since_s, "sinceSeq", &err) < 0) ||
	    (limit_s != NULL && hd_parse_i64(&limit, limit_s, "limit", &err) < 0) ||
	    hd_slug_check("team", team, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	if (limit < 1 || limit > HD_ROOM_READ_MAX) {
		hd_http_error(r, 400, "limit must be between 1 and %d",
		    HD_ROOM_READ_MAX);
		return 0;
	}
	if (hd_room_read(&l, r->st, team, since, (int)limit, NULL, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	posts = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(posts, hd_post_to_json(&l.items[i]));
	hd_room_id(room_id, sizeof(room_id), team);
	hd_http_json(r, 200, json_pack("{s:s, s:o, s:I}", "roomId", room_id,
	    "posts", posts, "nextSeq",
	    (json_int_t)(l.n > 0 ? l.items[l.n - 1].seq : since)));
	hd_posts_dispose(&l);
	return 0;
}

const hd_route hd_routes_chat[] = {
	{"GET", "/api/team-chat", route_team_chat},
	{NULL, NULL, NULL},
};
