/*
 * test-fire.c -- routines firing (routine.h) against a fake clock: each
 * "now" is an instant the test passes, never a sleep. A daily and a
 * weekday routine fire once at their time and not before; a fire is a
 * task delegated to the routine's agent and a routine_fired event; after
 * downtime exactly one catch-up fire, recorded as such (event and room
 * line), scheduled on from now; two processes firing the same due
 * routines make one task per fire; disabled routines never fire;
 * fire-now leaves the schedule alone; team removal counts and purges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <huddle/board.h>
#include <huddle/events.h>
#include <huddle/room.h>
#include <huddle/routine.h>
#include <huddle/team_remove.h>

#include "testutil.h"

static int64_t
utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	return (int64_t)timegm(&tm) * 1000;
}

static int
setup(void **state)
{
	return hd_fixture_setup_teams(state, "dev: manager coder");
}

static hd_routine *
add(hd_fixture *fx, const char *name, const char *cron, const char *tz,
    const char *every, int64_t now)
{
	hd_routine_spec s = {0};
	hd_routine *r = NULL;
	hd_err err = HD_ERR_INIT;

	s.team = "dev";
	s.name = name;
	s.agent = "coder";
	s.cron = cron;
	s.tz = tz;
	s.every = every;
	s.title = "Write the daily report";
	s.description = "numbers from yesterday";
	s.priority = 3;
	assert_hd_ok(hd_routine_add(&r, fx->st, &s, now, &err), &err);
	return r;
}

static int
fire_due(hd_fixture *fx, int64_t now)
{
	hd_err err = HD_ERR_INIT;
	int fired = -1;

	assert_hd_ok(hd_routine_fire_due(&fired, fx->st, now, &err), &err);
	return fired;
}

static size_t
ntasks(hd_fixture *fx)
{
	hd_tasks l = {0};
	hd_err err = HD_ERR_INIT;
	size_t n;

	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	n = l.n;
	hd_tasks_dispose(&l);
	return n;
}

static hd_routine *
get(hd_fixture *fx, const char *name)
{
	hd_routine *r = NULL;
	hd_err err = HD_ERR_INIT;

	assert_hd_ok(hd_routine_get(&r, fx->st, "dev", name, &err), &err);
	return r;
}

static void
test_daily(void **state)
{
	hd_fixture *fx = *state;
	hd_routine *r = add(fx, "report", "0 9 * * *", "Europe/Berlin", NULL,
	    utc(2026, 1, 15, 10, 0));
	hd_tasks l = {0};
	hd_err err = HD_ERR_INIT;

	assert_int_equal(r->next_fire_at, utc(2026, 1, 16, 8, 0));
	hd_routine_free(r);
	assert_int_equal(fire_due(fx, utc(2026, 1, 16, 7, 59)), 0);
	assert_int_equal(ntasks(fx), 0);
	assert_int_equal(fire_due(fx, utc(2026, 1, 16, 8, 0) + 500), 1);
	assert_int_equal(fire_due(fx, utc(2026, 1, 16, 8, 0) + 1500), 0);
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0].subject, "Write the daily report");
	assert_string_equal(l.items[0].owner, "coder");
	assert_string_equal(l.items[0].status, "claimed");
	assert_int_equal(l.items[0].priority, 3);
	r = get(fx, "report");
	assert_int_equal(r->last_task_id, l.items[0].id);
	assert_int_equal(r->fires, 1);
	assert_int_equal(r->next_fire_at, utc(2026, 1, 17, 8, 0));
	hd_routine_free(r);
	hd_tasks_dispose(&l);
	assert_int_equal(hd_count_events(fx->st, "dev", "routine_fired"), 1);
	/* the next day, on time again */
	assert_int_equal(fire_due(fx, utc(2026, 1, 17, 8, 0) + 10), 1);
	assert_int_equal(ntasks(fx), 2);
}

static void
test_weekday(void **state)
{
	hd_fixture *fx = *state;
	hd_routine *r;
	int day;

	/* Friday 2026-01-16, 10:00 UTC */
	r = add(fx, "standup", "0 9 * * mon-fri", NULL, NULL,
	    utc(2026, 1, 16, 10, 0));
	hd_routine_free(r);
	/* walk the clock hour by hour over the weekend: nothing fires */
	for (day = 16; day <= 18; day++) {
		int h;

		for (h = 0; h < 24; h++)
			if (day > 16 || h > 10)
				assert_int_equal(
				    fire_due(fx, utc(2026, 1, day, h, 0)), 0);
	}
	assert_int_equal(ntasks(fx), 0);
	assert_int_equal(fire_due(fx, utc(2026, 1, 19, 9, 0) + 30000), 1);
	assert_int_equal(ntasks(fx), 1);
	r = get(fx, "standup");
	assert_int_equal(r->next_fire_at, utc(2026, 1, 20, 9, 0));
	hd_routine_free(r);
}

/* the room has a system line containing text */
static int
room_says(hd_fixture *fx, const char *text)
{
	hd_posts p = {0};
	hd_err err = HD_ERR_INIT;
	size_t i;
	int found = 0;

	assert_hd_ok(hd_room_read(&p, fx->st, "dev", 0, 500, NULL, &err), &err);
	for (i = 0; i < p.n; i++)
		if (strcmp(p.items[i].kind, "system") == 0 &&
		    strstr(p.items[i].body, text) != NULL)
			found = 1;
	hd_posts_dispose(&p);
	return found;
}

static void
test_catch_up(void **state)
{
	hd_fixture *fx = *state;
	int64_t t0 = utc(2026, 2, 2, 12, 0);
	hd_routine *r = add(fx, "hourly", NULL, NULL, "1h", t0);
	static const char *const kinds[] = {"routine_fired"};
	hd_event_list ev = {0};
	hd_err err = HD_ERR_INIT;
	size_t i;
	int catch_ups = 0;

	assert_int_equal(r->next_fire_at, t0 + 3600000);
	hd_routine_free(r);
	/* on time: not a catch-up */
	assert_int_equal(fire_due(fx, t0 + 3600000 + 2000), 1);
	assert_false(room_says(fx, "catch-up"));
	/* ten hours of downtime: one fire, a catch-up */
	assert_int_equal(fire_due(fx, t0 + 11 * 3600000LL + 5000), 1);
	assert_int_equal(fire_due(fx, t0 + 11 * 3600000LL + 6000), 0);
	assert_int_equal(ntasks(fx), 2);
	assert_true(room_says(fx, "Routine hourly: catch-up fire"));
	r = get(fx, "hourly");
	assert_int_equal(r->next_fire_at, t0 + 12 * 3600000LL + 5000);
	hd_routine_free(r);
	assert_hd_ok(hd_events_list_kinds(&ev, fx->st, "dev", kinds, 1, 0, 1000,
			 &err),
	    &err);
	for (i = 0; i < ev.n; i++)
		if (json_is_true(json_object_get(ev.items[i].data, "catch_up")))
			catch_ups++;
	hd_event_list_dispose(&ev);
	assert_int_equal(catch_ups, 1);
	/* a cron routine down for three days: one catch-up too */
	assert_hd_ok(hd_routine_remove(fx->st, "dev", "hourly", &err), &err);
	r = add(fx, "nightly", "0 2 * * *", "America/New_York", NULL, t0);
	hd_routine_free(r);
	assert_int_equal(fire_due(fx, utc(2026, 2, 6, 0, 0)), 1);
	assert_int_equal(fire_due(fx, utc(2026, 2, 6, 0, 1)), 0);
	r = get(fx, "nightly");
	assert_int_equal(r->next_fire_at, utc(2026, 2, 6, 7, 0));
	hd_routine_free(r);
}

#define NROUTINES 16

/* A firer process: open its own store, fire what is due at now, exit
 * with how many it fired (or 255). */
static int
firer(const char *home, int64_t now, int gate)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	int fired = 0;
	char c;

	if (hd_store_open(&st, home, &err) < 0)
		return 255;
	hd_store_set_busy_budget(st, 60000);
	if (read(gate, &c, 1) < 0)
		return 255;
	if (hd_routine_fire_due(&fired, st, now, &err) < 0) {
		fprintf(stderr, "firer: %s\n", err.msg);
		return 255;
	}
	hd_store_close(st);
	return fired;
}

/* two servers racing the same fires: one task per fire */
static void
test_race(void **state)
{
	hd_fixture *fx = *state;
	int64_t t0 = utc(2026, 3, 2, 8, 0), now = utc(2026, 3, 2, 9, 0) + 100;
	pid_t pids[2];
	int gate[2], i, status, total = 0;
	char name[32];

	for (i = 0; i < NROUTINES; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		hd_routine_free(add(fx, name, "0 9 * * *", NULL, NULL, t0));
	}
	assert_int_equal(pipe(gate), 0);
	for (i = 0; i < 2; i++) {
		if ((pids[i] = fork()) == 0) {
			close(gate[1]);
			_exit(firer(fx->home, now, gate[0]));
		}
		assert_true(pids[i] > 0);
	}
	close(gate[0]);
	close(gate[1]); /* both start */
	for (i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_not_equal(WEXITSTATUS(status), 255);
		total += WEXITSTATUS(status);
	}
	assert_int_equal(total, NROUTINES);
	assert_int_equal(ntasks(fx), NROUTINES);
	assert_int_equal(
	    hd_count_events(fx->st, "dev", "routine_fired"), NROUTINES);
	/* and a third firer finds nothing left */
	assert_int_equal(fire_due(fx, now + 1000), 0);
}

static void
test_disable_fire_now(void **state)
{
	hd_fixture *fx = *state;
	int64_t t0 = utc(2026, 4, 1, 0, 0);
	hd_routine *r = add(fx, "weekly", "0 6 * * mon", NULL, NULL, t0);
	hd_routine_fire f;
	hd_err err = HD_ERR_INIT;
	int64_t next = r->next_fire_at;

	hd_routine_free(r);
	assert_hd_ok(hd_routine_set_enabled(&r, fx->st, "dev", "weekly", 0,
			 t0, &err),
	    &err);
	assert_false(r->enabled);
	assert_int_equal(r->next_fire_at, 0);
	hd_routine_free(r);
	assert_int_equal(fire_due(fx, next + 1000), 0);
	/* by hand, even disabled; the schedule stays as it is */
	assert_hd_ok(
	    hd_routine_fire_now(&f, fx->st, "dev", "weekly", next, &err), &err);
	assert_true(f.task_id > 0);
	assert_true(f.manual);
	assert_int_equal(ntasks(fx), 1);
	assert_hd_ok(hd_routine_set_enabled(&r, fx->st, "dev", "weekly", 1,
			 next + 1000, &err),
	    &err);
	assert_int_equal(r->next_fire_at, next + 7 * 86400000LL);
	assert_int_equal(r->fires, 1);
	hd_routine_free(r);
	assert_int_equal(hd_routine_fire_now(&f, fx->st, "dev", "nope", t0, &err),
	    HD_ENOTFOUND);
	assert_string_equal(err.msg, "routine \"nope\" not found in team dev");
}

static void
test_refusals(void **state)
{
	hd_fixture *fx = *state;
	hd_routine_spec s = {0};
	hd_routine *r = NULL;
	hd_err err = HD_ERR_INIT;

	s.team = "dev";
	s.name = "x";
	s.agent = "coder";
	s.title = "t";
	s.cron = "0 9 * * *";
	s.every = "1h";
	assert_int_equal(hd_routine_add(&r, fx->st, &s, 1, &err), HD_EINVAL);
	assert_string_equal(err.msg, "give --cron or --every, not both");
	s.every = NULL;
	s.cron = "0 9 * 13 *";
	assert_int_equal(hd_routine_add(&r, fx->st, &s, 1, &err), HD_EINVAL);
	assert_non_null(strstr(err.msg, "bad month \"13\""));
	s.cron = "0 0 30 feb *";
	assert_int_equal(hd_routine_add(&r, fx->st, &s, 1, &err), HD_EINVAL);
	assert_non_null(strstr(err.msg, "never matches"));
	s.cron = "0 9 * * *";
	s.tz = "Atlantis/Capital";
	assert_int_equal(hd_routine_add(&r, fx->st, &s, 1, &err), HD_EINVAL);
	s.tz = NULL;
	s.agent = "ghost";
	assert_int_equal(hd_routine_add(&r, fx->st, &s, 1, &err), HD_EREFUSED);
	assert_string_equal(err.msg, "no member \"ghost\" in team dev");
	s.agent = "coder";
	assert_hd_ok(hd_routine_add(&r, fx->st, &s, 1, &err), &err);
	hd_routine_free(r);
	assert_int_equal(hd_routine_add(&r, fx->st, &s, 1, &err), HD_EEXISTS);
	assert_string_equal(err.msg, "routine \"x\" already exists in team dev");
	assert_null(r);
}

static void
test_team_removal(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	int64_t n = 0;

	hd_routine_free(add(fx, "a", NULL, NULL, "1d", 1000));
	assert_hd_ok(hd_routine_team_count(&n, fx->st, "dev", &err), &err);
	assert_int_equal(n, 1);
	assert_int_equal(hd_team_remove(fx->st, "dev", 0, &err), HD_EREFUSED);
	assert_non_null(strstr(err.msg, "1 routine"));
	assert_hd_ok(hd_team_remove(fx->st, "dev", 1, &err), &err);
	assert_hd_ok(hd_routine_team_count(&n, fx->st, "dev", &err), &err);
	assert_int_equal(n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_daily, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_weekday, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_catch_up, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_race, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_disable_fire_now, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_refusals, setup, hd_fixture_teardown),
	    cmocka_unit_test_setup_teardown(
		test_team_removal, setup, hd_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
