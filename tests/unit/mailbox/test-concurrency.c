/*
 * test-concurrency.c -- exactly-once delivery across processes (SPEC 6):
 * four processes drain one mailbox of 2,000 messages at once; every
 * message must be delivered to exactly one of them, each reader sees its
 * share oldest first, and nothing is left behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/mailbox.h>
#include <huddle/util.h>

#include "testutil.h"
#include "store/store.h"

#define NMSG 2000
#define NREADERS 4

static int
fill_txn(hd_store *st, void *payload, hd_err *err)
{
	hd_message_spec s;
	char text[32];
	int i, rc;

	(void)payload;
	memset(&s, 0, sizeof(s));
	s.team = "dev";
	s.from = "lead";
	s.to = "worker";
	s.approve = -1;
	s.content = text;
	for (i = 0; i < NMSG; i++) {
		snprintf(text, sizeof(text), "job %d", i);
		if ((rc = hd_mailbox_send(NULL, st, &s, err)) < 0)
			return rc;
	}
	return 0;
}

/* A reader process: drain the mailbox in small bites, writing each id
 * received to path. Exit status 0 on success. */
static int
reader(const char *home, const char *path, int bite, int gate)
{
	hd_store *st = NULL;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	FILE *f = fopen(path, "w");
	int64_t last = 0;
	size_t i;
	char c;

	if (f == NULL || hd_store_open(&st, home, &err) < 0)
		return 2;
	hd_store_set_busy_budget(st, 60000);
	/* start together: the gate opens when the parent closes its end */
	while (read(gate, &c, 1) > 0)
		;
	close(gate);
	for (;;) {
		if (hd_mailbox_read(&l, st, "worker", bite, &err) < 0) {
			fprintf(stderr, "reader: %s\n", err.msg);
			return 3;
		}
		if (l.n == 0)
			break; /* everything was sent before we started */
		for (i = 0; i < l.n; i++) {
			if (l.items[i].id <= last)
				return 4; /* not oldest first */
			last = l.items[i].id;
			fprintf(f, "%lld\n", (long long)l.items[i].id);
		}
		hd_messages_dispose(&l);
	}
	hd_store_close(st);
	return fclose(f) == 0 ? 0 : 5;
}

static void
test_read__four_processes_each_message_exactly_once(void **state)
{
	hd_fixture *fx = *state;
	hd_messages l = {0};
	hd_err err = HD_ERR_INIT;
	char path[NREADERS][300];
	pid_t pids[NREADERS];
	unsigned char *seen;
	int64_t first, id;
	long long v;
	size_t total = 0;
	int i, status, gate[2];
	FILE *f;

	hd_fixture_team(fx, "dev", "lead", "worker", NULL);
	assert_hd_ok(hd_store_write(fx->st, fill_txn, NULL, &err), &err);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "worker", 1, &err), &err);
	assert_int_equal(l.n, 1);
	first = l.items[0].id;
	hd_messages_dispose(&l);

	/* no connection crosses the fork */
	hd_store_close(fx->st);
	fx->st = NULL;
	assert_int_equal(pipe(gate), 0);
	for (i = 0; i < NREADERS; i++) {
		snprintf(
		    path[i], sizeof(path[i]), "%s/ids-%d.txt", fx->home, i);
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(gate[1]);
			_exit(reader(fx->home, path[i], 3 + i * 4, gate[0]));
		}
	}
	close(gate[0]);
	hd_sleep_us(100000); /* let them open their stores; not a bound */
	close(gate[1]);
	for (i = 0; i < NREADERS; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_hd_ok(hd_store_open(&fx->st, fx->home, &err), &err);

	/* the union is exactly the 2,000 ids, none twice */
	seen = calloc(NMSG, 1);
	assert_non_null(seen);
	for (i = 0; i < NREADERS; i++) {
		size_t mine = 0;

		assert_non_null(f = fopen(path[i], "r"));
		while (fscanf(f, "%lld", &v) == 1 && ++mine) {
			id = v - first;
			assert_true(id >= 0 && id < NMSG);
			assert_int_equal(seen[id], 0);
			seen[id] = 1;
			total++;
		}
		fclose(f);
		print_message("reader %d received %zu messages\n", i, mine);
	}
	assert_int_equal(total, NMSG);
	free(seen);
	assert_hd_ok(hd_mailbox_peek(&l, fx->st, "worker", 0, &err), &err);
	assert_int_equal(l.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(
		test_read__four_processes_each_message_exactly_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
