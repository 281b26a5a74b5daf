/*
 * test-remove.c -- a team's removal across the modules that keep rows for
 * it (src/lifecycle/remove.c): a purge leaves no row of the team in any
 * table, and every row of another team where it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/autorun.h>
#include <huddle/autorun_turn.h>
#include <huddle/board.h>
#include <huddle/conversation_store.h>
#include <huddle/mailbox.h>
#include <huddle/memory.h>
#include <huddle/room.h>
#include <huddle/room_lock.h>
#include <huddle/routine.h>
#include <huddle/session.h>
#include <huddle/shutdown.h>
#include <huddle/team.h>
#include <huddle/team_remove.h>
#include <huddle/wake.h>

#include <store/store.h>

#include "testutil.h"

static int
setup(void **state)
{
	return hd_fixture_setup_teams(
	    state, "dev: manager coder; ops: boss sre");
}

/* Something of team in every module that keeps rows per team. */
static void
fill(hd_fixture *fx, const char *team, const char *lead, const char *member)
{
	hd_task *a = NULL, *b = NULL;
	hd_task_comment *c = NULL;
	hd_post *p = NULL;
	hd_message *m = NULL;
	hd_shutdown *sd = NULL;
	hd_routine *rt = NULL;
	hd_routine_spec rs = {0};
	hd_room_lock lk;
	hd_err err = HD_ERR_INIT;
	hd_task_spec ts = {.team = team, .subject = "first"};
	hd_message_spec ms = {.team = team, .from = lead, .to = member,
	    .content = "hello", .approve = -1};
	hd_fact_spec fs = {.team = team, .agent = member,
	    .text = "the build needs make", .scope = "agent"};
	hd_convstore_new cn = {.id = NULL, .team = team, .origin = "user",
	    .message = "hi", .target = lead, .max_messages = 10,
	    .created_at = 1};
	char id[64], key[128];
	int64_t turn;
	int added;

	assert_hd_ok(hd_board_create(&a, fx->st, &ts, &err), &err);
	ts.subject = "second";
	ts.depends_on = &a->id;
	ts.ndepends_on = 1;
	assert_hd_ok(hd_board_create(&b, fx->st, &ts, &err), &err);
	assert_hd_ok(hd_board_comment(&c, fx->st, b->id, lead, "note", &err),
	    &err);
	assert_hd_ok(hd_room_post(&p, fx->st, team, "peer", lead, "hi", &err),
	    &err);
	assert_hd_ok(hd_mailbox_send(&m, fx->st, &ms, &err), &err);
	snprintf(id, sizeof(id), "conv-%s", team);
	cn.id = id;
	assert_hd_ok(hd_convstore_insert(fx->st, &cn, &err), &err);
	assert_hd_ok(hd_wake_add(&added, fx->st, team, member, "manual", 0,
			 "manual:1", NULL, NULL, &err),
	    &err);
	assert_hd_ok(hd_session_record(fx->st, member, team, "scripted",
			 "native-1", NULL, &err),
	    &err);
	snprintf(key, sizeof(key), "turn:team:%s:%s", team, lead);
	assert_hd_ok(hd_store_kv_put(fx->st, key, "{}", &err), &err);
	snprintf(key, sizeof(key), HD_TEAM_MAX_MESSAGES_KEY, team);
	assert_hd_ok(hd_store_kv_put(fx->st, key, "20", &err), &err);
	rs.team = team;
	rs.name = "nightly";
	rs.agent = member;
	rs.every = "1d";
	rs.title = "Nightly check";
	assert_hd_ok(hd_routine_add(&rt, fx->st, &rs, 1000, &err), &err);
	hd_routine_free(rt);
	assert_hd_ok(hd_team_shutdown(&sd, fx->st, team, "done", 60000, &err),
	    &err);
	hd_shutdown_free(sd);
	assert_hd_ok(hd_room_lock_acquire(&lk, fx->st, team, 60000, &err),
	    &err);
	assert_hd_ok(hd_room_lock_cancel(fx->st, team, lk.room_id, lead, &err),
	    &err);
	/* a private fact, a team one and a global one */
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err);
	fs.scope = "team";
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err);
	fs.scope = "global";
	assert_hd_ok(hd_memory_save(NULL, fx->st, &fs, &err), &err);
	assert_hd_ok(hd_autorun_agent_ensure(fx->st, team, member, &err), &err);
	assert_hd_ok(hd_autorun_turn_start(&turn, fx->st, team, member, "test",
			 1, 0, "manual", 0, &err),
	    &err);
	hd_task_free(a);
	hd_task_free(b);
	hd_task_comment_free(c);
	hd_post_free(p);
	hd_message_free(m);
}

/* sql kept for the process's life, one copy per text: the store caches
 * statements by their SQL's address (store.h), which a buffer reused for
 * each table would defeat. */
static const char *
stable_sql(const char *sql)
{
	static char *kept[32];
	static size_t n;
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(kept[i], sql) == 0)
			return kept[i];
	assert_true(n < sizeof(kept) / sizeof(kept[0]));
	assert_non_null(kept[n] = strdup(sql));
	return kept[n++];
}

/* The rows of team, in every table with a team_id (or room_id) column
 * but the event log (kept: it is history) and in kv, as "table.column=n"
 * pairs into out. */
static void
rows_of(hd_fixture *fx, const char *team, char *out, size_t len)
{
	hd_stmt *s;
	hd_err err = HD_ERR_INIT;
	char room[128], sql[512], like[128];
	size_t used = 0;
	int src;

	hd_room_id(room, sizeof(room), team);
	out[0] = '\0';
	assert_hd_ok(hd_store_prepare(fx->st, &s,
			 strcmp(hd_store_backend_name(fx->st), "postgresql") ==
				 0
			     ? "SELECT c.table_name, c.column_name FROM"
			       " information_schema.columns c JOIN"
			       " information_schema.tables t ON t.table_name ="
			       " c.table_name AND t.table_schema ="
			       " c.table_schema WHERE c.table_schema ="
			       " current_schema() AND t.table_type = 'BASE TABLE'"
			       " AND c.table_name != 'events' AND c.column_name"
			       " IN ('team_id', 'room_id') ORDER BY 1, 2"
			     : "SELECT m.name, p.name FROM sqlite_master m,"
			       " pragma_table_info(m.name) p WHERE m.type ="
			       " 'table' AND m.name != 'events'"
			       " AND p.name IN ('team_id', 'room_id') ORDER BY 1, 2",
			 &err),
	    &err);
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		int64_t n = 0;
		char table[64], col[16];

		snprintf(table, sizeof(table), "%s", hd_stmt_text(s, 0));
		snprintf(col, sizeof(col), "%s", hd_stmt_text(s, 1));
		snprintf(sql, sizeof(sql),
		    "SELECT COUNT(*) FROM \"%s\" WHERE %s = ?1", table, col);
		assert_int_equal(hd_store_get_int(fx->st, &n, &err,
				     stable_sql(sql),
				     HD_TEXT(strcmp(col, "room_id") == 0
						 ? room
						 : team)),
		    1);
		if (n > 0)
			used += (size_t)snprintf(out + used, len - used,
			    "%s.%s=%lld ", table, col, (long long)n);
	}
	assert_int_equal(src, HD_DONE);
	hd_store_reset(s);
	{
		int64_t n = 0;

		snprintf(like, sizeof(like), "%%:%s", team);
		assert_int_equal(
		    hd_store_get_int(fx->st, &n, &err,
			"SELECT COUNT(*) FROM kv WHERE key LIKE ?1 || ':%'"
			" OR key LIKE ?1",
			HD_TEXT(like)),
		    1);
		if (n > 0)
			snprintf(out + used, len - used, "kv=%lld",
			    (long long)n);
	}
}

static void
test_remove__purge_leaves_no_row_of_the_team_and_every_row_of_another(
    void **state)
{
	hd_fixture *fx = *state;
	char before[1024], after[1024], dev[1024];
	hd_err err = HD_ERR_INIT;

	fill(fx, "dev", "manager", "coder");
	fill(fx, "ops", "boss", "sre");
	rows_of(fx, "dev", dev, sizeof(dev));
	/* every module is represented, so the purge has something to do */
	assert_string_equal(dev,
	    "agents.team_id=2 autorun_agents.team_id=1 autorun_turns.team_id=1"
	    " cancel_requests.team_id=1 conversations.team_id=1"
	    " memory_facts.team_id=3 messages.team_id=1 room_locks.room_id=1"
	    " room_seqs.team_id=1 routines.team_id=1"
	    " sessions.team_id=1"
	    " tasks.team_id=2 team_chat.room_id=4 team_chat.team_id=4"
	    " wakes.team_id=1 kv=3");
	rows_of(fx, "ops", before, sizeof(before));
	assert_hd_err(hd_team_remove(fx->st, "dev", 0, &err), HD_EREFUSED,
	    "team dev still has 2 tasks, 4 posts, 1 message, 1 conversation,"
	    " 3 facts, 1 routine; pass --purge to delete them too",
	    &err);
	rows_of(fx, "dev", after, sizeof(after));
	assert_string_equal(after, dev); /* the refusal deleted nothing */
	assert_hd_ok(hd_team_remove(fx->st, "dev", 1, &err), &err);
	rows_of(fx, "dev", after, sizeof(after));
	assert_string_equal(after, "");
	rows_of(fx, "ops", after, sizeof(after));
	assert_string_equal(after, before);
	assert_int_equal(hd_count_events(fx->st, "dev", "team_removed"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_remove__purge_leaves_no_row_of_the_team_and_every_row_of_another,
		    setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
