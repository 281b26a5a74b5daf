/*
 * test-contention.c -- claims are atomic across real processes (SPEC 4).
 *  - 16 processes claim the same task at once: exactly one wins, the 15
 *    others are told `task N is already claimed by <winner>`.
 *  - 8 processes auto-claim from 10,000 ready tasks until none is left:
 *    every task is claimed exactly once, none twice, none skipped.
 * The workers are this executable run again (fresh processes, no SQLite
 * state inherited across fork); each opens its own connection and waits
 * on a pipe so that all start at the same moment.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/team.h>

#include "board-test.h"
#include "store/store.h"

#define NCLAIMERS 16
#define NDRAINERS 8
#define NTASKS 10000

/* ---- the worker side ------------------------------------------------------
 */

static void
wait_barrier(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	close(fd);
}

static hd_store *
worker_store(const char *home)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;

	if (hd_store_open(&st, home, &err) < 0) {
		fprintf(stderr, "worker: %s\n", err.msg);
		exit(3);
	}
	hd_store_set_busy_budget(st, 120000); /* a shared, slow machine */
	return st;
}

/* claim HOME ID AGENT FD: one claim; "<agent> <rc> <message>" on stdout. */
static int
worker_claim(char **argv)
{
	hd_store *st = worker_store(argv[0]);
	hd_err err = HD_ERR_INIT;
	int rc;

	wait_barrier(atoi(argv[3]));
	rc = hd_board_claim(NULL, st, atoll(argv[1]), argv[2], &err);
	printf("%s %d %s\n", argv[2], rc, rc == 0 ? "-" : err.msg);
	fflush(stdout);
	hd_store_close(st);
	return 0;
}

/* drain HOME TEAM AGENT FD OUT: auto-claim until no ready task is left;
 * one claimed id per line in OUT. */
static int
worker_drain(char **argv)
{
	hd_store *st = worker_store(argv[0]);
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	FILE *out = fopen(argv[4], "w");
	int rc;

	if (out == NULL)
		return 3;
	wait_barrier(atoi(argv[3]));
	while (
	    (rc = hd_board_auto_claim(&t, st, argv[1], argv[2], &err)) == 0) {
		fprintf(out, "%lld\n", (long long)t->id);
		hd_task_free(t);
		t = NULL;
	}
	fclose(out);
	hd_store_close(st);
	if (rc != HD_ENOTFOUND) {
		fprintf(stderr, "worker %s: %s\n", argv[2], err.msg);
		return 1;
	}
	return 0;
}

/* ---- the test side ---------------------------------------------------------
 */

/* Start this executable as a worker; its stdout goes to outfd. */
static pid_t
spawn(const char *mode, int outfd, int barrier_w, char **args, int nargs)
{
	char *argv[12];
	pid_t pid;
	int i;

	argv[0] = "/proc/self/exe";
	argv[1] = (char *)mode;
	for (i = 0; i < nargs; i++)
		argv[2 + i] = args[i];
	argv[2 + nargs] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(barrier_w);
		if (outfd >= 0)
			dup2(outfd, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

static void
wait_all(const pid_t *pids, int n)
{
	int i, status;

	for (i = 0; i < n; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("worker %d ended with status %d", i, status);
	}
}

static void
test_board_contention__sixteen_claim_one_task(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_task *t = NULL;
	pid_t pids[NCLAIMERS];
	char agents[NCLAIMERS][16], idbuf[24], fdbuf[16];
	char lines[NCLAIMERS + 1][256], who[32], winner[32] = "", want[160];
	int barrier[2], out[2], i, n = 0, rc;
	int64_t id;
	FILE *f;

	ts.id = "dev";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	for (i = 0; i < NCLAIMERS; i++) {
		snprintf(agents[i], sizeof(agents[i]), "agent-%02d", i);
		memset(&as, 0, sizeof(as));
		as.id = agents[i];
		as.team = "dev";
		assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	}
	id = bt_task(fx, "dev", "Contested", NULL, 0);
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	assert_int_equal(pipe(barrier), 0);
	assert_int_equal(pipe(out), 0);
	snprintf(fdbuf, sizeof(fdbuf), "%d", barrier[0]);
	for (i = 0; i < NCLAIMERS; i++) {
		char *args[] = {fx->home, idbuf, agents[i], fdbuf};

		pids[i] = spawn("claim", out[1], barrier[1], args, 4);
	}
	close(barrier[0]);
	close(out[1]);
	close(barrier[1]); /* go: every worker's read returns at once */
	f = fdopen(out[0], "r");
	while (n <= NCLAIMERS && fgets(lines[n], sizeof(lines[n]), f) != NULL) {
		lines[n][strcspn(lines[n], "\n")] = '\0';
		n++;
	}
	fclose(f);
	wait_all(pids, NCLAIMERS);
	assert_int_equal(n, NCLAIMERS);

	/* exactly one winner ... */
	for (i = 0; i < n; i++) {
		assert_int_equal(sscanf(lines[i], "%31s %d", who, &rc), 2);
		if (rc == 0) {
			if (winner[0] != '\0')
				fail_msg("two winners: %s and %s", winner, who);
			snprintf(winner, sizeof(winner), "%s", who);
		}
	}
	assert_string_not_equal(winner, "");
	/* ... and fifteen losers, each told who won */
	for (i = 0; i < n; i++) {
		assert_int_equal(sscanf(lines[i], "%31s %d", who, &rc), 2);
		if (rc == 0)
			continue;
		snprintf(want, sizeof(want),
		    "%s %d task %lld is already claimed by %s", who,
		    HD_ECONFLICT, (long long)id, winner);
		assert_string_equal(lines[i], want);
	}
	assert_hd_ok(hd_board_get(&t, fx->st, id, &err), &err);
	assert_string_equal(t->status, "claimed");
	assert_string_equal(t->owner, winner);
	hd_task_free(t);
}

struct mk {
	int n;
};

static int
make_tasks_txn(hd_store *st, void *payload, hd_err *err)
{
	struct mk *m = payload;
	hd_task_spec spec = {0};
	char subject[32];
	int i, rc;

	spec.team = "dev";
	spec.subject = subject;
	for (i = 0; i < m->n; i++) {
		snprintf(subject, sizeof(subject), "task %d", i + 1);
		spec.priority = i % 7; /* a mix of priorities */
		if ((rc = hd_board_create(NULL, st, &spec, err)) < 0)
			return rc;
	}
	return 0;
}

static void
test_board_contention__eight_drain_ten_thousand(void **state)
{
	hd_fixture *fx = *state;
	hd_err err = HD_ERR_INIT;
	hd_team_spec ts = {0};
	hd_agent_spec as;
	hd_tasks l;
	struct mk m = {NTASKS};
	pid_t pids[NDRAINERS];
	char agents[NDRAINERS][16], paths[NDRAINERS][300], fdbuf[16];
	char **owner_of = calloc(NTASKS + 1, sizeof(char *));
	int *seen = calloc(NTASKS + 1, sizeof(int));
	int barrier[2], i, total = 0;
	size_t k;

	ts.id = "dev";
	assert_hd_ok(hd_team_create(NULL, fx->st, &ts, &err), &err);
	for (i = 0; i < NDRAINERS; i++) {
		snprintf(agents[i], sizeof(agents[i]), "drainer-%d", i);
		snprintf(
		    paths[i], sizeof(paths[i]), "%s/claimed-%d", fx->home, i);
		memset(&as, 0, sizeof(as));
		as.id = agents[i];
		as.team = "dev";
		assert_hd_ok(hd_agent_add(NULL, fx->st, &as, &err), &err);
	}
	assert_hd_ok(hd_store_write(fx->st, make_tasks_txn, &m, &err), &err);
	assert_int_equal(pipe(barrier), 0);
	snprintf(fdbuf, sizeof(fdbuf), "%d", barrier[0]);
	for (i = 0; i < NDRAINERS; i++) {
		char *args[] = {fx->home, "dev", agents[i], fdbuf, paths[i]};

		pids[i] = spawn("drain", -1, barrier[1], args, 5);
	}
	close(barrier[0]);
	close(barrier[1]);
	wait_all(pids, NDRAINERS);

	/* the union of what each process says it claimed */
	for (i = 0; i < NDRAINERS; i++) {
		FILE *f = fopen(paths[i], "r");
		long long id;
		int mine = 0;

		assert_non_null(f);
		while (fscanf(f, "%lld", &id) == 1) {
			assert_true(id >= 1 && id <= NTASKS);
			if (seen[id]++ != 0)
				fail_msg(
				    "task %lld claimed twice (again by %s)", id,
				    agents[i]);
			owner_of[id] = agents[i];
			mine++;
		}
		fclose(f);
		total += mine;
	}
	assert_int_equal(total, NTASKS);
	for (i = 1; i <= NTASKS; i++)
		if (seen[i] != 1)
			fail_msg("task %d claimed %d times", i, seen[i]);
	/* and the board agrees, owner by owner */
	assert_hd_ok(hd_board_list(&l, fx->st, "dev", NULL, &err), &err);
	assert_int_equal(l.n, NTASKS);
	for (k = 0; k < l.n; k++) {
		assert_string_equal(l.items[k].status, "claimed");
		assert_string_equal(l.items[k].owner, owner_of[l.items[k].id]);
	}
	hd_tasks_dispose(&l);
	free(owner_of);
	free(seen);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    hd_fixture_test(test_board_contention__sixteen_claim_one_task),
	    hd_fixture_test(test_board_contention__eight_drain_ten_thousand),
	};

	if (argc == 6 && strcmp(argv[1], "claim") == 0)
		return worker_claim(argv + 2);
	if (argc == 7 && strcmp(argv[1], "drain") == 0)
		return worker_drain(argv + 2);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
