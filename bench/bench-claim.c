/*
 * bench-claim.c -- claims per second with N processes draining T ready
 * tasks (SPEC 15), against raw SQLite doing the same conditional UPDATE in
 * the same run.
 *
 * usage: bench_claim [TASKS] [PROCS] [ROUNDS]   (default 10000 8 3)
 *
 * Two measurements, each the median of ROUNDS rounds on a fresh home:
 *   claim            hd_board_auto_claim, the real path: BEGIN IMMEDIATE,
 *                    membership check, the one-statement pick-and-claim,
 *                    dependencies read back, a task_claimed event, the
 *                    room line (a post with its own event, in a
 *                    savepoint), COMMIT.
 *                    The board as it ships: there is no claim without
 *                    its room line, so there is no figure without it.
 *   baseline         raw SQLite on the same schema, pragmas and busy
 *                    handler: BEGIN IMMEDIATE; the same
 *                    UPDATE ... WHERE id = (SELECT ... LIMIT 1) RETURNING;
 *                    COMMIT, and nothing else.
 * Every run verifies that each task was claimed exactly once (a shared
 * counter per task) and that the database agrees.
 * Output: `claim: <x> claims/s | baseline <y> claims/s | ratio <r>`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <huddle/board.h>
#include <huddle/log.h>
#include <huddle/team.h>
#include <huddle/util.h>

#include "bench.h"

#include "store/sqlite.h"

enum { MODE_BOARD, MODE_RAW };

static int ntasks = 10000, nprocs = 8, nrounds = 3;

static int
make_tasks_txn(hd_store *st, void *payload, hd_err *err)
{
	hd_task_spec spec = {0};
	char subject[32];
	int i, rc;

	(void)payload;
	spec.team = "bench";
	spec.subject = subject;
	for (i = 0; i < ntasks; i++) {
		snprintf(subject, sizeof(subject), "task %d", i + 1);
		spec.priority = i % 5;
		if ((rc = hd_board_create(NULL, st, &spec, err)) < 0)
			return rc;
	}
	return 0;
}

/* A fresh home with team "bench", agents w0..w(P-1) (w0 its leader) and
 * T ready tasks. The store is closed again before any fork. */
static void
setup_home(const char *home)
{
	hd_store *st = bench_team_home(home, "bench", "w", nprocs, 1);
	hd_err err = HD_ERR_INIT;

	if (hd_store_write(st, make_tasks_txn, NULL, &err) < 0)
		bench_die("tasks", &err);
	hd_store_close(st);
}

/* The raw baseline's claim: the same statement, nothing around it. */
static int64_t
raw_claim(hd_store *st, const char *agent)
{
	static const char *sql =
	    "UPDATE tasks SET status = 'claimed', owner = ?2,"
	    " claimed_at = ?3, updated_at = ?3"
	    " WHERE id = (SELECT t.id FROM tasks t WHERE t.team_id = ?1"
	    "   AND t.status = 'pending' AND t.owner IS NULL"
	    "   AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks p"
	    "     ON p.id = d.depends_on WHERE d.task_id = t.id"
	    "     AND p.status <> 'completed')"
	    "   ORDER BY t.priority DESC, t.id LIMIT 1)"
	    " AND status = 'pending' AND owner IS NULL RETURNING id";
	sqlite3 *db = hd_store_db(st);
	sqlite3_stmt *s = NULL;
	hd_stmt *hs;
	hd_err err = HD_ERR_INIT;
	int64_t id = 0;
	int src;

	for (;;) {
		src = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (src == SQLITE_BUSY)
			continue; /* the busy handler gave up: try again */
		if (src != SQLITE_OK)
			bench_die("begin", NULL);
		if (hd_store_prepare(st, &hs, sql, &err) < 0)
			bench_die("prepare", &err);
		s = hd_stmt_sqlite(hs); /* the baseline calls SQLite itself */
		sqlite3_bind_text(s, 1, "bench", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, agent, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, hd_now_ms());
		src = sqlite3_step(s);
		id = src == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
		while (src == SQLITE_ROW)
			src = sqlite3_step(s);
		sqlite3_reset(s);
		if (src != SQLITE_DONE)
			bench_die(sqlite3_errmsg(db), NULL);
		if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
			return id;
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
}

/* One worker process: claim until nothing is ready; count each claim in
 * the shared per-task counters. */
static void
worker(const char *home, int mode, int idx, int barrier, int *claims)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	hd_task *t = NULL;
	char agent[16], c;
	int64_t id;
	int rc;

	snprintf(agent, sizeof(agent), "w%d", idx);
	if (hd_store_open(&st, home, &err) < 0)
		bench_die("worker open", &err);
	hd_store_set_busy_budget(st, 60000);
	while (read(barrier, &c, 1) < 0 && errno == EINTR)
		;
	for (;;) {
		if (mode == MODE_RAW) {
			if ((id = raw_claim(st, agent)) == 0)
				break;
		} else {
			rc = hd_board_auto_claim(&t, st, "bench", agent, &err);
			if (rc == HD_ENOTFOUND)
				break;
			if (rc < 0)
				bench_die("auto-claim", &err);
			id = t->id;
			hd_task_free(t);
			t = NULL;
		}
		__atomic_fetch_add(&claims[id], 1, __ATOMIC_RELAXED);
	}
	hd_store_close(st);
	_exit(0);
}

/* Check the counters and the database: each task claimed exactly once. */
static void
verify(const char *home, const int *claims, const char *label)
{
	hd_store *st = NULL;
	hd_err err = HD_ERR_INIT;
	hd_task_filter f = {0};
	hd_tasks l;
	int i, doubles = 0, missed = 0;

	for (i = 1; i <= ntasks; i++) {
		doubles += claims[i] > 1;
		missed += claims[i] == 0;
	}
	if (hd_store_open(&st, home, &err) < 0)
		bench_die("verify open", &err);
	f.status = "pending";
	if (hd_board_list(&l, st, "bench", &f, &err) < 0)
		bench_die("verify list", &err);
	if (doubles || missed || l.n != 0) {
		fprintf(stderr,
		    "bench-claim: %s: %d double claims, %d missed, "
		    "%zu left pending\n",
		    label, doubles, missed, l.n);
		exit(1);
	}
	hd_tasks_dispose(&l);
	hd_store_close(st);
}

/* One round: fresh home, P workers released at once; claims per second. */
static double
round_once(int mode, int r)
{
	static const char *labels[] = {"claim", "baseline"};
	char home[256];
	int *claims, barrier[2], i, status;
	pid_t pids[256];
	int64_t t0, t1;

	snprintf(home, sizeof(home), "%s/bench-claim-%d-%d-%d",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), mode,
	    r);
	setup_home(home);
	claims = mmap(NULL, sizeof(int) * (size_t)(ntasks + 1),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (claims == MAP_FAILED || pipe(barrier) < 0)
		bench_die("mmap/pipe", NULL);
	for (i = 0; i < nprocs; i++) {
		if ((pids[i] = fork()) < 0)
			bench_die("fork", NULL);
		if (pids[i] == 0) {
			close(barrier[1]);
			worker(home, mode, i, barrier[0], claims);
		}
	}
	close(barrier[0]);
	usleep(200000); /* let every worker open its connection */
	t0 = hd_mono_us();
	close(barrier[1]);
	for (i = 0; i < nprocs; i++)
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bench_die("a worker failed", NULL);
	t1 = hd_mono_us();
	verify(home, claims, labels[mode]);
	munmap(claims, sizeof(int) * (size_t)(ntasks + 1));
	if (bench_rm_rf(home) != 0)
		fprintf(stderr, "bench-claim: could not remove %s\n", home);
	return (double)ntasks * 1e6 / (double)(t1 - t0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v)
{
	qsort(v, (size_t)nrounds, sizeof(v[0]), cmp_double);
	return v[nrounds / 2];
}

int
main(int argc, char **argv)
{
	double board[64], raw[64];
	int r;

	if (argc > 1)
		ntasks = atoi(argv[1]);
	if (argc > 2)
		nprocs = atoi(argv[2]);
	if (argc > 3)
		nrounds = atoi(argv[3]);
	if (ntasks < 1 || nprocs < 1 || nprocs > 256 || nrounds < 1 ||
	    nrounds > 64) {
		fprintf(
		    stderr, "usage: bench_claim [TASKS] [PROCS] [ROUNDS]\n");
		return 2;
	}
	hd_log_set_level(HD_LOG_WARN);
	/* interleave so drift on a shared machine hits both alike */
	for (r = 0; r < nrounds; r++) {
		raw[r] = round_once(MODE_RAW, r);
		board[r] = round_once(MODE_BOARD, r);
	}
	printf("claim: %.0f claims/s | baseline %.0f claims/s | ratio %.2f\n",
	    median(board), median(raw), median(board) / median(raw));
	printf("(%d tasks, %d processes, median of %d rounds; claim includes "
	       "the room line; zero double claims)\n",
	    ntasks, nprocs, nrounds);
	return 0;
}
