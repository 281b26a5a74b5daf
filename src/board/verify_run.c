/*
 * verify_run.c -- the verification runs' writes (verify.h), the other
 * half of verify.c (whose header states the invariants cited here):
 * taking a run (4), the runner's steps -- the gate's result, a failed
 * run, a pass without a critic -- each conditional on its run (5), and
 * the retry that queues a run again. A throwaway critic's joining and
 * leaving are verify_critic.c's.
 * Callers: the verifier engine (src/engine/verifier.c) and the
 * operation table's task verify, through verify.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/verify.h>

#include "tasks_int.h"

/* ---- runs (4) (5) -------------------------------------------------------- */

void
hd_verify_job_dispose(hd_verify_job *j)
{
	free(j->team);
	free(j->subject);
	free(j->description);
	free(j->owner);
	free(j->summary);
	free(j->gate);
	free(j->workdir);
	free(j->critic);
	free(j->critic_runtime);
	memset(j, 0, sizeof(*j));
}

/* A runner recorded as (pid, start) is alive: that pid is still the
 * process that started then. */
int
hd_board__verify_runner_alive(int64_t pid, int64_t start)
{
	return pid > 0 && start > 0 && hd_proc_start(pid) == start;
}

typedef struct take_txn {
	const char *runner;
	int64_t pid, start, only;
	int found;
	int resumed;
	hd_verify_job *job;
	board_txn *b;
} take_txn;

/* The candidates: queued runs, oldest first, then running ones (whose
 * runners the take checks), restricted to one task when asked. */
static int
take_pick(take_txn *k, hd_store *st, int64_t *id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	*id = 0;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT v.task_id, v.state, v.runner_pid, v.runner_start"
		 " FROM task_verify v JOIN tasks t ON t.id = v.task_id"
		 " WHERE (v.state = 'queued' OR v.state = 'running')"
		 " AND t.status = 'verifying' AND (?1 = 0 OR v.task_id = ?1)"
		 " ORDER BY v.state = 'running', v.updated_at, v.task_id",
		 HD_INT(k->only))) < 0)
		return rc;
	while ((src = hd_stmt_step(s)) == HD_ROW) {
		const char *state = hd_stmt_text(s, 1);

		if (strcmp(state, "queued") == 0 ||
		    !hd_board__verify_runner_alive(hd_stmt_int(s, 2), hd_stmt_int(s, 3))) {
			*id = hd_stmt_int(s, 0);
			k->resumed = strcmp(state, "running") == 0;
			break;
		}
	}
	if (src != HD_ROW && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}

struct due {
	take_txn k;
	int64_t id;
};

static int
due_read(hd_store *st, void *payload, hd_err *err)
{
	struct due *d = payload;

	return take_pick(&d->k, st, &d->id, err);
}

int
hd_board_verify_due(int *due, hd_store *st, hd_err *err)
{
	struct due d;
	int rc;

	memset(&d, 0, sizeof(d));
	*due = 0;
	if ((rc = hd_store_read(st, due_read, &d, err)) < 0)
		return rc;
	*due = d.id > 0;
	return 0;
}

static int
take_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	take_txn *k = b->ext;
	hd_verify_job *j = k->job;
	hd_task_verify *v = NULL;
	char note[160];
	int64_t id, now = hd_now_ms();
	int rc;

	k->found = 0;
	hd_verify_job_dispose(j);
	if ((rc = take_pick(k, st, &id, err)) < 0 || id == 0)
		return rc;
	hd_task_free(b->task);
	b->task = NULL;
	if ((rc = hd_board__task_load(&b->task, st, id, 0, err)) < 0 ||
	    (rc = hd_board__verify_row(&v, NULL, NULL, st, id, err)) < 0)
		goto done;
	/* the throwaway critic of a runner that died (verify_critic.c (3)) */
	if (v->run_critic != NULL &&
	    (rc = hd_board__verify_critic_leave(st, id, v->run_critic, err)) < 0)
		goto done;
	if ((rc = hd_store_run(st, err,
		 "UPDATE task_verify SET state = 'running', runner = ?2,"
		 " runner_pid = ?3, runner_start = ?4, started_at = ?5,"
		 " attempts = attempts + 1, error = NULL, updated_at = ?5"
		 " WHERE task_id = ?1",
		 HD_INT(id), HD_TEXT(k->runner), HD_INT(k->pid),
		 HD_INT(k->start), HD_INT(now))) < 0)
		goto done;
	j->task_id = id;
	j->attempt = v->attempts + 1;
	j->gate_timeout_s = v->gate_timeout_s;
	j->critic_timeout_s = v->critic_timeout_s;
	if ((j->team = strdup(b->task->team_id)) == NULL ||
	    (j->subject = strdup(b->task->subject)) == NULL ||
	    (j->description = strdup(b->task->description)) == NULL ||
	    (b->task->owner != NULL &&
		(j->owner = strdup(b->task->owner)) == NULL) ||
	    (b->task->result != NULL &&
		(j->summary = strdup(b->task->result)) == NULL) ||
	    (v->gate != NULL && (j->gate = strdup(v->gate)) == NULL) ||
	    (v->workdir != NULL && (j->workdir = strdup(v->workdir)) == NULL) ||
	    (v->critic != NULL && (j->critic = strdup(v->critic)) == NULL) ||
	    (v->critic_runtime != NULL &&
		(j->critic_runtime = strdup(v->critic_runtime)) == NULL)) {
		rc = oom(err);
		goto done;
	}
	hd_events_append(st, "verify_started", j->team, id, NULL,
	    json_pack("{s:I, s:b, s:s}", "attempt", (json_int_t)j->attempt,
		"resumed", k->resumed, "runner", k->runner));
	snprintf(note, sizeof(note), "verification started (attempt %" PRId64
	    "%s).", j->attempt,
	    k->resumed ? ", resumed: its last runner died" : "");
	if ((b->note = strdup(note)) == NULL) {
		rc = oom(err);
		goto done;
	}
	k->found = 1;
	b->changed = 1;
done:
	hd_board__verify_free(v);
	return rc;
}

int
hd_board_verify_take(int *found, hd_verify_job *job, hd_store *st,
    const char *runner, int64_t pid, int64_t start, int64_t task_id,
    hd_err *err)
{
	board_txn b;
	take_txn k;
	int rc;

	*found = 0;
	memset(job, 0, sizeof(*job));
	memset(&b, 0, sizeof(b));
	memset(&k, 0, sizeof(k));
	k.runner = runner;
	k.pid = pid;
	k.start = start;
	k.only = task_id;
	k.job = job;
	k.b = &b;
	b.ext = &k;
	b.actor = HD_BOARD_USER;
	b.kind_set = 1;
	b.kind = HD_BOARD__VERIFY_NOTE;
	rc = hd_board__write(st, take_txn_fn, &b, HD_BOARD__VERIFY_NOTE, err);
	free((char *)b.note);
	hd_board__txn_dispose(&b);
	if (rc < 0) {
		hd_verify_job_dispose(job);
		return rc;
	}
	*found = k.found;
	return 0;
}

/* ---- the runner's steps -------------------------------------------------- */

typedef struct step_txn {
	board_txn *b;
	const char *runner;
	const char *error;  /* fail */
	int exit_code;      /* gate */
	const char *how;    /* gate */
	const char *output; /* gate */
	char *note;
} step_txn;

static int
fail_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	step_txn *k = b->ext;
	hd_task_verify *v = NULL;
	hd_buf note = HD_BUF_INIT(0);
	int rc;

	if ((rc = hd_board__verify_owned(&v, st, b, b->id, k->runner, err)) < 0)
		goto done;
	if ((rc = hd_store_run(st, err,
		 "UPDATE task_verify SET state = 'failed', error = ?2,"
		 " runner = NULL, runner_pid = NULL, runner_start = NULL,"
		 " updated_at = ?3 WHERE task_id = ?1",
		 HD_INT(b->id), HD_TEXT(k->error), HD_INT(hd_now_ms()))) < 0)
		goto done;
	hd_events_append(st, "verify_failed", b->task->team_id, b->id, NULL,
	    json_pack("{s:s, s:I}", "error", k->error, "attempt",
		(json_int_t)v->attempts));
	hd_buf_printf(&note,
	    "verification failed: %s; the task stays verifying (retry with "
	    "huddle task verify %s %" PRId64 ").",
	    k->error, b->task->team_id, b->id);
	if (hd_buf_failed(&note)) {
		rc = oom(err);
		goto done;
	}
	free(k->note);
	if ((k->note = strdup(hd_buf_cstr(&note))) == NULL) {
		rc = oom(err);
		goto done;
	}
	b->note = k->note;
	b->changed = 1;
done:
	hd_buf_dispose(&note);
	hd_board__verify_free(v);
	return rc;
}

static int
step_run(hd_store *st, int64_t id, step_txn *k, hd_store_txn_fn fn,
    hd_err *err)
{
	board_txn b;
	int rc;

	memset(&b, 0, sizeof(b));
	b.id = id;
	b.actor = HD_BOARD_USER;
	b.kind_set = 1;
	b.kind = HD_BOARD__VERIFY_NOTE;
	k->b = &b;
	b.ext = k;
	rc = hd_board__write(st, fn, &b, HD_BOARD__VERIFY_NOTE, err);
	free(k->note);
	k->note = NULL;
	hd_board__txn_dispose(&b);
	return rc < 0 ? rc : 0;
}

int
hd_board_verify_fail(hd_store *st, int64_t id, const char *runner,
    const char *error, hd_err *err)
{
	step_txn k;

	memset(&k, 0, sizeof(k));
	k.runner = runner;
	k.error = error != NULL && error[0] != '\0' ? error : "unknown error";
	return step_run(st, id, &k, fail_txn_fn, err);
}

static int
gate_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	step_txn *k = b->ext;
	hd_task_verify *v = NULL;
	char note[200];
	int rc;

	if ((rc = hd_board__verify_owned(&v, st, b, b->id, k->runner, err)) < 0)
		goto done;
	if ((rc = hd_store_run(st, err,
		 "UPDATE task_verify SET gate_exit = ?2, gate_output = ?3,"
		 " updated_at = ?4 WHERE task_id = ?1",
		 HD_INT(b->id), HD_INT(k->exit_code), HD_TEXT(k->output),
		 HD_INT(hd_now_ms()))) < 0)
		goto done;
	hd_events_append(st, "verify_gate", b->task->team_id, b->id, NULL,
	    json_pack("{s:i, s:s, s:b}", "exit", k->exit_code, "how", k->how,
		"passed", k->exit_code == 0));
	snprintf(note, sizeof(note), "gate %s (%s).",
	    k->exit_code == 0 ? "passed" : "failed", k->how);
	free(k->note);
	if ((k->note = strdup(note)) == NULL) {
		rc = oom(err);
		goto done;
	}
	b->note = k->note;
	b->changed = 1;
done:
	hd_board__verify_free(v);
	return rc;
}

/* The tail of s that fits max bytes, starting on a UTF-8 boundary. */
static const char *
tail_of(const char *s, size_t max)
{
	size_t n = strlen(s);
	const char *p;

	if (n <= max)
		return s;
	p = s + (n - max);
	while (*p != '\0' && ((unsigned char)*p & 0xc0) == 0x80)
		p++;
	return p;
}

int
hd_board_verify_gate(int *passed, hd_store *st, int64_t id,
    const char *runner, int exit_code, const char *how, const char *output,
    hd_err *err)
{
	hd_buf reasons = HD_BUF_INIT(HD_TASK_COMMENT_MAX);
	step_txn k;
	int rc;

	*passed = 0;
	output = tail_of(output != NULL ? output : "", HD_VERIFY_GATE_OUTPUT_MAX);
	memset(&k, 0, sizeof(k));
	k.runner = runner;
	k.exit_code = exit_code;
	k.how = how;
	k.output = output;
	if ((rc = step_run(st, id, &k, gate_txn_fn, err)) < 0)
		return rc;
	if (exit_code == 0) {
		*passed = 1;
		return 0;
	}
	/* a failed gate rejects the work, the output its reasons */
	hd_buf_printf(&reasons, "the gate failed (%s); its output ends:\n%s",
	    how, tail_of(output, HD_TASK_COMMENT_MAX - 200));
	if (hd_buf_failed(&reasons))
		rc = hd_buf_error(&reasons, "gate reasons", err);
	else
		rc = hd_board__verdict_run(NULL, st, id, HD_VERIFY_GATE_ACTOR, runner, 0,
		    hd_buf_cstr(&reasons), err);
	hd_buf_dispose(&reasons);
	return rc;
}

int
hd_board_verify_pass(hd_store *st, int64_t id, const char *runner, hd_err *err)
{
	return hd_board__verdict_run(
	    NULL, st, id, HD_VERIFY_GATE_ACTOR, runner, 1, NULL, err);
}

/* ---- retry --------------------------------------------------------------- */

static int
retry_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	hd_task_verify *v = NULL;
	int64_t pid = 0, start = 0;
	int rc;

	hd_task_free(b->task);
	b->task = NULL;
	if ((rc = hd_board__task_load(&b->task, st, b->id, 0, err)) < 0)
		goto done;
	if (b->task == NULL) {
		rc = hd_err_set(
		    err, HD_ENOTFOUND, "task %" PRId64 " not found", b->id);
		goto done;
	}
	if ((rc = hd_board__actor_member(st, b->task->team_id, b->actor, err)) <
		0 ||
	    (rc = hd_board__team_leader(&b->leader, st, b->task->team_id, err)) <
		0 ||
	    (rc = hd_board__verify_row(&v, &pid, &start, st, b->id, err)) < 0)
		goto done;
	if (v == NULL || strcmp(b->task->status, "verifying") != 0) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " is %s, not verifying", b->id,
		    b->task->status);
		goto done;
	}
	if (!is_user(b->actor) && b->task->owner != NULL &&
	    strcmp(b->task->owner, b->actor) != 0 &&
	    (b->leader == NULL || strcmp(b->leader, b->actor) != 0)) {
		rc = hd_err_set(err, HD_EREFUSED,
		    "task %" PRId64 " is owned by %s, not %s", b->id,
		    b->task->owner, b->actor);
		goto done;
	}
	if (strcmp(v->state, "running") == 0 && hd_board__verify_runner_alive(pid, start)) {
		rc = hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 " is being verified by %s (attempt %" PRId64
		    ")",
		    b->id, v->runner, v->attempts);
		goto done;
	}
	if ((rc = hd_store_run(st, err,
		 "UPDATE task_verify SET state = 'queued', runner = NULL,"
		 " runner_pid = NULL, runner_start = NULL, error = NULL,"
		 " updated_at = ?2 WHERE task_id = ?1",
		 HD_INT(b->id), HD_INT(hd_now_ms()))) < 0)
		goto done;
	hd_events_append(st, "verify_queued", b->task->team_id, b->id,
	    event_agent(b->actor),
	    json_pack("{s:b, s:s}", "retry", 1, "by",
		is_user(b->actor) ? HD_BOARD_USER : b->actor));
	if ((rc = hd_board__verify_load(st, b->task, err)) < 0)
		goto done;
	b->note = "verification queued again.";
	b->changed = 1;
done:
	hd_board__verify_free(v);
	return rc;
}

int
hd_board_verify_retry(
    hd_task **out, hd_store *st, int64_t id, const char *actor, hd_err *err)
{
	board_txn b;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.actor = is_user(actor) ? HD_BOARD_USER : actor;
	b.kind_set = 1;
	b.kind = HD_BOARD__VERIFY_NOTE;
	return hd_board__write_task(
	    out, st, retry_txn_fn, &b, HD_BOARD__VERIFY_NOTE, err);
}
