/*
 * board-test.h -- small helpers the board's test files share (static
 * inline, so each test executable takes only what it uses).
 */
#ifndef HD_BOARD_TEST_H
#define HD_BOARD_TEST_H

#include <stdlib.h>
#include <string.h>

#include <huddle/board.h>
#include <huddle/room.h>

#include "testutil.h"

/* Create a task in team as "user" with the given deps; returns its id. */
static inline int64_t
bt_task(hd_fixture *fx, const char *team, const char *subject,
    const int64_t *deps, size_t ndeps)
{
	hd_task_spec spec;
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int64_t id;

	memset(&spec, 0, sizeof(spec));
	spec.team = team;
	spec.subject = subject;
	spec.depends_on = deps;
	spec.ndepends_on = ndeps;
	assert_hd_ok(hd_board_create(&t, fx->st, &spec, &err), &err);
	id = t->id;
	hd_task_free(t);
	return id;
}

/* The status of task id, malloc'd. */
static inline char *
bt_status(hd_fixture *fx, int64_t id)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	char *s;

	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	s = strdup(t->status);
	hd_task_free(t);
	return s;
}

#define assert_status(fx, id, want)                                            \
	do {                                                                   \
		char *s_ = bt_status((fx), (id));                              \
		assert_string_equal(s_, (want));                               \
		free(s_);                                                      \
	} while (0)

/* blocked_by of task id as "3,4" ("" when none), into buf. */
static inline const char *
bt_blocked(hd_fixture *fx, int64_t id, char *buf, size_t len)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	size_t i, off = 0;

	buf[0] = '\0';
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	for (i = 0; i < t->nblocked_by && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%lld",
		    i ? "," : "", (long long)t->blocked_by[i]);
	hd_task_free(t);
	return buf;
}

/* The last room line of team dev (malloc'd). */
static inline char *
bt_room_last(hd_fixture *fx)
{
	hd_posts p;
	hd_err err = HD_ERR_INIT;
	char *s;

	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	assert_true(p.n > 0);
	s = strdup(p.items[p.n - 1].body);
	hd_posts_dispose(&p);
	return s;
}

#define assert_room_last(fx, want)                                             \
	do {                                                                   \
		char *r_ = bt_room_last(fx);                                      \
		assert_string_equal(r_, (want));                               \
		free(r_);                                                      \
	} while (0)

#endif
