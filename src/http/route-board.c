/*
 * route-board.c -- the board over REST (SPEC 4, 11): the list, read from
 * the query string. Every other board route -- create, get, auto-claim,
 * delegate and each task action (claim, assign, start, complete, fail,
 * release, cancel, retry, link, comment) -- is an entry of the operation
 * table (src/ops/ops-board.c) served by route-ops.c, which says how the
 * acting identity is read. GET /api/tasks/:id is the whole task
 * (hd_board_get): its comments and its dependents too, which the list
 * leaves out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/util.h>

#include "http.h"

static int
route_tasks_list(hd_http_req *r)
{
	hd_task_filter f;
	hd_tasks l;
	hd_err err = HD_ERR_INIT;
	const char *meta = hd_http_query(r, "meta");
	const char *limit = hd_http_query(r, "limit");
	int64_t n = 0;
	json_t *arr;
	size_t i;

	memset(&f, 0, sizeof(f));
	f.status = hd_http_query(r, "status");
	f.owner = hd_http_query(r, "owner");
	f.ready = hd_http_query(r, "ready") != NULL;
	f.blocked = hd_http_query(r, "blocked") != NULL;
	if (meta != NULL) {
		f.meta = &meta;
		f.nmeta = 1;
	}
	if (limit != NULL && (hd_parse_i64(&n, limit, "limit", &err) < 0 ||
				 n < 1 || n > 10000)) {
		hd_http_error(r, 400, "limit must be between 1 and 10000");
		return 0;
	}
	f.limit = (int)n;
	if (hd_board_list(&l, r->st, r->params[0], &f, &err) < 0) {
		hd_http_fail(r, &err);
		return 0;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, hd_task_to_json(&l.items[i]));
	hd_tasks_dispose(&l);
	hd_http_json(r, 200, json_pack("{s:o}", "tasks", arr));
	return 0;
}

const hd_route hd_routes_board[] = {
	{"GET", "/api/teams/:team/tasks", route_tasks_list},
	{NULL, NULL, NULL},
};
