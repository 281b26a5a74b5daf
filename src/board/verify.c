/*
 * verify.c -- verification of a task's work (verify.h). Owns table
 * task_verify: one row per task with a gate or a critic, its spec and the
 * state of its latest run. The runs themselves (the gate's process, the
 * critic's turn) are the verifier engine's (src/engine/verifier.c); this
 * file is every write they make, each one board write (board.c (5)):
 * its event and room line commit with it.
 *  (1) The spec is set at create (hd_board__verify_insert, in the
 *      create's transaction: the critic must be a member of the team,
 *      checked before the task's insert, hd_board__verify_member;
 *      a critic runtime and its config are checked by the caller's
 *      check, as an agent's are) and never changes; a task without a row
 *      completes as always. A critic and a critic runtime exclude each
 *      other.
 *  (2) The owner is never the critic: a claim by the critic is refused
 *      (hd_board__verify_not_critic, claim.c; auto-claim skips the task),
 *      a verdict by the owner is refused, and a run whose critic owns
 *      the task (it was moved to the critic) fails naming that.
 *  (3) A completion of such a task moves it to verifying with the result
 *      kept as the builder's summary and queues a run (state queued, the
 *      last run's gate, error and verdict cleared): the same UPDATE
 *      discipline as transitions.c, inside its transaction.
 *  (4) A run is taken by one runner (token, pid, process start time):
 *      the UPDATE that makes it running is conditional on what the take
 *      read, inside BEGIN IMMEDIATE, so two verifiers on one home never
 *      run one verification twice. A running row whose runner's pid no
 *      longer has that start time (hd_proc_start) is the run of a dead
 *      runner (kill -9): the next take resumes it as a new attempt.
 *  (5) Every write of a runner is conditional on its run: state running
 *      and runner its token. One that finds otherwise (a verdict came, a
 *      user cancelled, another runner took over) changes nothing and
 *      answers HD_ECONFLICT, so a late runner never overwrites a verdict.
 *  (6) A verdict (the critic's tool -- the task's critic, or the
 *      throwaway member its run made, verify_critic.c --, or a user) is
 *      accepted whenever the task is verifying, whatever the run's state:
 *      approve completes it (naming what became ready, as a completion
 *      does), reject returns it to in_progress for the same owner with
 *      the reasons as a comment and a task_update message. Either ends
 *      the run (idle).
 * The runs' own writes are verify_run.c's; a throwaway critic's joining
 * and leaving are verify_critic.c's.
 * Callers: transitions.c (complete), create.c, claim.c; the operation
 * table's task verdict/verify entries (src/ops/ops-board.c) and the
 * verifier engine (src/engine/verifier.c) through verify.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/events.h>
#include <huddle/team.h>
#include <huddle/verify.h>

#include "tasks_int.h"

#define VERIFY_COLS                                                            \
	"gate, workdir, gate_timeout_s, critic, critic_timeout_s, state,"      \
	" attempts, runner, started_at, gate_exit, gate_output, error,"        \
	" verdict, verdict_by, reasons, updated_at, runner_pid, runner_start," \
	" critic_runtime, critic_config, run_critic"

/* ---- the row ------------------------------------------------------------- */

void
hd_board__verify_free(hd_task_verify *v)
{
	if (v == NULL)
		return;
	free(v->gate);
	free(v->workdir);
	free(v->critic);
	free(v->critic_runtime);
	free(v->critic_config);
	free(v->run_critic);
	free(v->state);
	free(v->runner);
	free(v->gate_output);
	free(v->error);
	free(v->verdict);
	free(v->verdict_by);
	free(v->reasons);
	free(v);
}

/* task id's row into *out (NULL when it has none); the runner's pid and
 * start into pid/start when non-NULL. */
int
hd_board__verify_row(hd_task_verify **out, int64_t *pid, int64_t *start, hd_store *st,
    int64_t id, hd_err *err)
{
	hd_task_verify *v;
	hd_stmt *s;
	int rc, src;

	*out = NULL;
	if ((rc = hd_store_query(st, &s, err,
		 "SELECT " VERIFY_COLS " FROM task_verify WHERE task_id = ?",
		 HD_INT(id))) < 0)
		return rc;
	if ((src = hd_stmt_step(s)) != HD_ROW) {
		rc = src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
		hd_store_reset(s);
		return rc;
	}
	if ((v = calloc(1, sizeof(*v))) == NULL) {
		hd_store_reset(s);
		return oom(err);
	}
	v->gate = hd_store_col_dup(s, 0);
	v->workdir = hd_store_col_dup(s, 1);
	v->gate_timeout_s = hd_stmt_int(s, 2);
	v->critic = hd_store_col_dup(s, 3);
	v->critic_timeout_s = hd_stmt_int(s, 4);
	v->state = hd_store_col_dup(s, 5);
	v->attempts = hd_stmt_int(s, 6);
	v->runner = hd_store_col_dup(s, 7);
	v->started_at = hd_stmt_int(s, 8);
	v->has_gate_exit = !hd_stmt_is_null(s, 9);
	v->gate_exit = hd_stmt_int(s, 9);
	v->gate_output = hd_store_col_dup(s, 10);
	v->error = hd_store_col_dup(s, 11);
	v->verdict = hd_store_col_dup(s, 12);
	v->verdict_by = hd_store_col_dup(s, 13);
	v->reasons = hd_store_col_dup(s, 14);
	v->updated_at = hd_stmt_int(s, 15);
	if (pid != NULL)
		*pid = hd_stmt_int(s, 16);
	if (start != NULL)
		*start = hd_stmt_int(s, 17);
	v->critic_runtime = hd_store_col_dup(s, 18);
	v->critic_config = hd_store_col_dup(s, 19);
	v->run_critic = hd_store_col_dup(s, 20);
	hd_store_reset(s);
	if (v->state == NULL) { /* NOT NULL: only an allocation failed */
		hd_board__verify_free(v);
		return oom(err);
	}
	*out = v;
	return 0;
}

int
hd_board__verify_load(hd_store *st, hd_task *t, hd_err *err)
{
	hd_board__verify_free(t->verify);
	t->verify = NULL;
	return hd_board__verify_row(&t->verify, NULL, NULL, st, t->id, err);
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

json_t *
hd_board__verify_json(const hd_task_verify *v)
{
	json_t *o = json_object(), *cfg;

	json_object_set_new(o, "gate", str_or_null(v->gate));
	json_object_set_new(o, "workdir", str_or_null(v->workdir));
	json_object_set_new(o, "gate_timeout_s", json_integer(v->gate_timeout_s));
	json_object_set_new(o, "critic", str_or_null(v->critic));
	json_object_set_new(o, "critic_runtime", str_or_null(v->critic_runtime));
	cfg = v->critic_config != NULL
		  ? json_loads(v->critic_config, 0, NULL)
		  : NULL;
	json_object_set_new(o, "critic_config",
	    cfg != NULL ? cfg : v->critic_runtime != NULL ? json_object()
							  : json_null());
	json_object_set_new(
	    o, "critic_timeout_s", json_integer(v->critic_timeout_s));
	json_object_set_new(o, "run_critic", str_or_null(v->run_critic));
	json_object_set_new(o, "state", json_string(v->state));
	json_object_set_new(o, "attempts", json_integer(v->attempts));
	json_object_set_new(o, "runner", str_or_null(v->runner));
	json_object_set_new(o, "started_at",
	    v->started_at > 0 ? json_integer(v->started_at) : json_null());
	json_object_set_new(o, "gate_exit",
	    v->has_gate_exit ? json_integer(v->gate_exit) : json_null());
	json_object_set_new(o, "gate_output", str_or_null(v->gate_output));
	json_object_set_new(o, "error", str_or_null(v->error));
	json_object_set_new(o, "verdict", str_or_null(v->verdict));
	json_object_set_new(o, "verdict_by", str_or_null(v->verdict_by));
	json_object_set_new(o, "reasons", str_or_null(v->reasons));
	json_object_set_new(o, "updated_at", json_integer(v->updated_at));
	return o;
}

/* ---- the spec (1) -------------------------------------------------------- */

static int
timeout_check(const char *what, int64_t v, hd_err *err)
{
	if (v < 0 || v > HD_VERIFY_TIMEOUT_MAX)
		return hd_err_set(err, HD_EINVAL,
		    "%s must be 1..%d seconds, not %" PRId64, what,
		    HD_VERIFY_TIMEOUT_MAX, v);
	return 0;
}

int
hd_board__verify_check(const hd_task_spec *spec, hd_err *err)
{
	int rc;

	if (spec->gate != NULL &&
	    (rc = hd_text_check("gate command", spec->gate, 1,
		 HD_VERIFY_GATE_MAX, err)) < 0)
		return rc;
	if (spec->workdir != NULL) {
		if (spec->gate == NULL)
			return hd_err_set(err, HD_EINVAL,
			    "a gate workdir needs a gate command");
		if (spec->workdir[0] != '/')
			return hd_err_set(err, HD_EINVAL,
			    "gate workdir must be an absolute path, not \"%s\"",
			    spec->workdir);
		if ((rc = hd_text_check(
			 "gate workdir", spec->workdir, 1, 4096, err)) < 0)
			return rc;
	}
	if (spec->critic != NULL &&
	    (rc = hd_slug_check("critic", spec->critic, err)) < 0)
		return rc;
	if (spec->critic_config != NULL && spec->critic_runtime == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "a critic config needs a critic runtime");
	if (spec->critic_runtime != NULL) {
		if (spec->critic != NULL)
			return hd_err_set(err, HD_EINVAL,
			    "give a critic (a member) or a critic runtime (a "
			    "throwaway critic per run), not both");
		if ((rc = hd_agent_check_runtime(spec->critic_runtime,
			 spec->critic_config, spec->critic_check, err)) < 0)
			return rc;
	}
	if ((rc = timeout_check("gate timeout", spec->gate_timeout_s, err)) < 0 ||
	    (rc = timeout_check(
		 "critic timeout", spec->critic_timeout_s, err)) < 0)
		return rc;
	if (spec->gate_timeout_s > 0 && spec->gate == NULL)
		return hd_err_set(
		    err, HD_EINVAL, "a gate timeout needs a gate command");
	if (spec->critic_timeout_s > 0 && spec->critic == NULL &&
	    spec->critic_runtime == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "a critic timeout needs a critic or a critic runtime");
	return 0;
}

int
hd_board__verify_member(hd_store *st, const hd_task_spec *spec, hd_err *err)
{
	if (spec->critic == NULL)
		return 0;
	return hd_team_member_check(st, spec->team, spec->critic, err);
}

int
hd_board__verify_insert(
    hd_store *st, int64_t id, const hd_task_spec *spec, hd_err *err)
{
	char *cfg = NULL;
	int rc;

	if (spec->gate == NULL && spec->critic == NULL &&
	    spec->critic_runtime == NULL)
		return 0;
	if (spec->critic_runtime != NULL &&
	    (cfg = spec->critic_config != NULL
		       ? json_dumps(spec->critic_config, JSON_COMPACT)
		       : strdup("{}")) == NULL)
		return oom(err);
	rc = hd_store_run(st, err,
	    "INSERT INTO task_verify(task_id, gate, workdir, gate_timeout_s,"
	    " critic, critic_timeout_s, updated_at, critic_runtime,"
	    " critic_config)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	    HD_INT(id), HD_TEXT(spec->gate), HD_TEXT(spec->workdir),
	    HD_INT(spec->gate_timeout_s > 0 ? spec->gate_timeout_s
					    : HD_VERIFY_GATE_TIMEOUT_S),
	    HD_TEXT(spec->critic),
	    HD_INT(spec->critic_timeout_s > 0 ? spec->critic_timeout_s
					      : HD_VERIFY_CRITIC_TIMEOUT_S),
	    HD_INT(hd_now_ms()), HD_TEXT(spec->critic_runtime), HD_TEXT(cfg));
	free(cfg);
	return rc;
}

int
hd_board__verify_not_critic(
    hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_query(st, &s, err,
		 "SELECT 1 FROM task_verify WHERE task_id = ?1 AND critic = ?2",
		 HD_INT(id), HD_TEXT(agent))) < 0)
		return rc;
	src = hd_stmt_step(s);
	hd_store_reset(s);
	if (src == HD_ROW)
		return hd_err_set(err, HD_EREFUSED,
		    "%s is the critic of task %" PRId64
		    " and cannot own it (a task's owner is never its own "
		    "critic)",
		    agent, id);
	return src == HD_DONE ? 0 : hd_store_sqlerr(st, src, err);
}

/* ---- submit (3) ---------------------------------------------------------- */

static int
dup_into(char **dst, const char *src, hd_err *err)
{
	free(*dst);
	*dst = NULL;
	if (src != NULL && (*dst = strdup(src)) == NULL)
		return oom(err);
	return 0;
}

int
hd_board__verify_submit(
    hd_store *st, board_txn *b, const hd_task *t, hd_err *err)
{
	hd_task_verify *v = NULL;
	int64_t now = hd_now_ms();
	char fresh[96];
	int rc;

	b->verifying = 0;
	if ((rc = hd_board__verify_row(&v, NULL, NULL, st, t->id, err)) < 0 || v == NULL)
		return rc;
	if ((rc = hd_store_run(st, err,
		 "UPDATE tasks SET status = 'verifying', result = ?3,"
		 " updated_at = ?4 WHERE id = ?1 AND status = ?2",
		 HD_INT(t->id), HD_TEXT(t->status), HD_TEXT(b->text),
		 HD_INT(now))) < 0 ||
	    (rc = hd_store_run(st, err,
		 "UPDATE task_verify SET state = 'queued', runner = NULL,"
		 " runner_pid = NULL, runner_start = NULL, started_at = NULL,"
		 " gate_exit = NULL, gate_output = NULL, error = NULL,"
		 " verdict = NULL, verdict_by = NULL, reasons = NULL,"
		 " updated_at = ?2 WHERE task_id = ?1",
		 HD_INT(t->id), HD_INT(now))) < 0)
		goto done;
	hd_events_append(st, "status_changed", t->team_id, t->id,
	    event_agent(b->actor),
	    json_pack("{s:s, s:s, s:s}", "from", t->status, "to", "verifying",
		"by", is_user(b->actor) ? HD_BOARD_USER : b->actor));
	hd_events_append(st, "verify_queued", t->team_id, t->id,
	    event_agent(b->actor),
	    json_pack("{s:o, s:o, s:o}", "gate", str_or_null(v->gate),
		"critic", str_or_null(v->critic), "critic_runtime",
		str_or_null(v->critic_runtime)));
	if (v->critic_runtime != NULL)
		snprintf(fresh, sizeof(fresh), "a fresh %s agent",
		    v->critic_runtime);
	if ((rc = dup_into(&b->critic,
		 v->critic_runtime != NULL ? fresh : v->critic, err)) < 0 ||
	    (rc = dup_into(&b->gate, v->gate, err)) < 0)
		goto done;
	hd_task_free(b->task);
	b->task = NULL;
	if ((rc = hd_board__task_load(&b->task, st, t->id, 0, err)) < 0 ||
	    (rc = hd_board__verify_load(st, b->task, err)) < 0)
		goto done;
	b->verifying = 1;
	b->kind_set = 1;
	b->kind = HD_BOARD__VERIFYING;
	b->changed = 1;
done:
	hd_board__verify_free(v);
	return rc;
}

/* The run of task id is runner's (5): its row into *v (freed by the
 * caller), the task into b->task. */
int
hd_board__verify_owned(hd_task_verify **v, hd_store *st, board_txn *b, int64_t id,
    const char *runner, hd_err *err)
{
	int rc;

	*v = NULL;
	if ((rc = hd_board__verify_row(v, NULL, NULL, st, id, err)) < 0)
		return rc;
	if (*v == NULL || strcmp((*v)->state, "running") != 0 ||
	    (*v)->runner == NULL || strcmp((*v)->runner, runner) != 0)
		return hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 "'s verification is no longer this "
		    "runner's",
		    id);
	hd_task_free(b->task);
	b->task = NULL;
	if ((rc = hd_board__task_load(&b->task, st, id, 0, err)) < 0)
		return rc;
	if (b->task == NULL || strcmp(b->task->status, "verifying") != 0)
		return hd_err_set(err, HD_ECONFLICT,
		    "task %" PRId64 " is no longer verifying", id);
	return 0;
}

/* ---- verdicts (6) -------------------------------------------------------- */

typedef struct verdict_txn {
	board_txn *b;
	int approve;
	const char *reasons;
	const char *runner; /* a runner's own verdict (the gate), else NULL */
	int64_t comment_id;
} verdict_txn;

/* Move task b->task (verifying) as the verdict says; b->actor gives it. */
static int
verdict_apply(hd_store *st, verdict_txn *vt, hd_err *err)
{
	board_txn *b = vt->b;
	hd_task_comment *cm = NULL;
	const hd_task *t = b->task;
	const char *by = is_user(b->actor) ? HD_BOARD_USER : b->actor;
	int64_t id = t->id, now = hd_now_ms();
	char *team = NULL;
	json_t *data;
	int rc;

	if ((team = strdup(t->team_id)) == NULL)
		return oom(err);
	if (vt->approve)
		rc = hd_store_run(st, err,
		    "UPDATE tasks SET status = 'completed', completed_at = ?2,"
		    " updated_at = ?2 WHERE id = ?1 AND status = 'verifying'",
		    HD_INT(id), HD_INT(now));
	else
		rc = hd_store_run(st, err,
		    "UPDATE tasks SET status = 'in_progress', result = NULL,"
		    " updated_at = ?2 WHERE id = ?1 AND status = 'verifying'",
		    HD_INT(id), HD_INT(now));
	if (rc < 0 ||
	    (rc = hd_store_run(st, err,
		 "UPDATE task_verify SET state = 'idle', runner = NULL,"
		 " runner_pid = NULL, runner_start = NULL, error = NULL,"
		 " verdict = ?2, verdict_by = ?3, reasons = ?4, updated_at = ?5"
		 " WHERE task_id = ?1",
		 HD_INT(id), HD_TEXT(vt->approve ? "approve" : "reject"),
		 HD_TEXT(by), HD_TEXT(vt->reasons), HD_INT(now))) < 0)
		goto done;
	if (!vt->approve) {
		if ((rc = hd_board__comment_insert(
			 &cm, st, id, by, vt->reasons, err)) < 0 ||
		    (rc = hd_board__reject_note(
			 st, t, by, vt->reasons, err)) < 0)
			goto done;
		vt->comment_id = cm->id;
	}
	data = json_pack("{s:s, s:s, s:s}", "from", "verifying", "to",
	    vt->approve ? "completed" : "in_progress", "by", by);
	hd_events_append(st, "status_changed", team, id, event_agent(by), data);
	data = json_pack("{s:s, s:s, s:o}", "verdict",
	    vt->approve ? "approve" : "reject", "by", by, "reasons",
	    str_or_null(vt->reasons));
	if (data != NULL && cm != NULL)
		json_object_set_new(data, "comment_id", json_integer(cm->id));
	hd_events_append(st, "verify_verdict", team, id, event_agent(by), data);
	hd_task_free(b->task);
	b->task = NULL;
	if ((rc = hd_board__task_load(&b->task, st, id, 0, err)) < 0 ||
	    (rc = hd_board__verify_load(st, b->task, err)) < 0)
		goto done;
	b->kind_set = 1;
	b->kind = vt->approve ? HD_BOARD__APPROVED : HD_BOARD__REJECTED;
	b->text = vt->approve ? b->task->result : vt->reasons;
	b->changed = 1;
done:
	hd_task_comment_free(cm);
	free(team);
	return rc;
}

/* (6): the task's critic, or the throwaway member its run made */
static int
is_critic(const hd_task_verify *v, const char *actor)
{
	return (v->critic != NULL && strcmp(v->critic, actor) == 0) ||
	       (v->run_critic != NULL && strcmp(v->run_critic, actor) == 0);
}

static int
verdict_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	verdict_txn *vt = b->ext;
	hd_task_verify *v = NULL;
	int rc;

	if (vt->runner != NULL) { /* the gate's verdict: the run's own (5) */
		if ((rc = hd_board__verify_owned(&v, st, b, b->id, vt->runner, err)) < 0)
			goto done;
	} else {
		hd_task_free(b->task);
		b->task = NULL;
		if ((rc = hd_board__task_load(&b->task, st, b->id, 0, err)) < 0)
			goto done;
		if (b->task == NULL) {
			rc = hd_err_set(err, HD_ENOTFOUND,
			    "task %" PRId64 " not found", b->id);
			goto done;
		}
		if ((rc = hd_board__actor_member(
			 st, b->task->team_id, b->actor, err)) < 0 ||
		    (rc = hd_board__verify_row(&v, NULL, NULL, st, b->id, err)) < 0)
			goto done;
		if (v == NULL) {
			rc = hd_err_set(err, HD_EREFUSED,
			    "task %" PRId64 " has no verification (no gate, "
			    "no critic)",
			    b->id);
			goto done;
		}
		if (strcmp(b->task->status, "verifying") != 0) {
			rc = hd_err_set(err, HD_EREFUSED,
			    "task %" PRId64 " is %s, not verifying", b->id,
			    b->task->status);
			goto done;
		}
		/* (2): the owner never; else the critic or a user */
		if (!is_user(b->actor) && b->task->owner != NULL &&
		    strcmp(b->task->owner, b->actor) == 0) {
			rc = hd_err_set(err, HD_EREFUSED,
			    "%s owns task %" PRId64
			    " and cannot be its own critic",
			    b->actor, b->id);
			goto done;
		}
		if (!is_user(b->actor) && !is_critic(v, b->actor)) {
			rc = v->critic != NULL
				 ? hd_err_set(err, HD_EREFUSED,
				       "task %" PRId64
				       "'s critic is %s, not %s",
				       b->id, v->critic, b->actor)
			     : v->critic_runtime != NULL
				 ? hd_err_set(err, HD_EREFUSED,
				       "task %" PRId64 "'s critic is %s, "
				       "not %s",
				       b->id,
				       v->run_critic != NULL
					   ? v->run_critic
					   : "a throwaway agent the verifier "
					     "makes for its run",
				       b->actor)
				 : hd_err_set(err, HD_EREFUSED,
				       "task %" PRId64 " has no critic; only "
				       "a user may give its verdict, not %s",
				       b->id, b->actor);
			goto done;
		}
	}
	if ((rc = hd_board__team_leader(
		 &b->leader, st, b->task->team_id, err)) < 0 ||
	    (rc = verdict_apply(st, vt, err)) < 0)
		goto done;
	if (vt->approve && (rc = hd_board__unblocked(st, b, err)) == 0) {
		b->task->unblocked = b->ready; /* the answer says what */
		b->task->nunblocked = b->nready;
		b->task->has_unblocked = 1;
		b->ready = NULL;
		b->nready = 0;
	}
done:
	hd_board__verify_free(v);
	return rc;
}

int
hd_board__verdict_run(hd_task **out, hd_store *st, int64_t id, const char *actor,
    const char *runner, int approve, const char *reasons, hd_err *err)
{
	board_txn b;
	verdict_txn vt;

	memset(&b, 0, sizeof(b));
	memset(&vt, 0, sizeof(vt));
	b.id = id;
	b.actor = actor;
	vt.b = &b;
	b.ext = &vt;
	vt.approve = approve;
	vt.reasons = reasons;
	vt.runner = runner;
	return hd_board__write_task(out, st, verdict_txn_fn, &b,
	    approve ? HD_BOARD__APPROVED : HD_BOARD__REJECTED, err);
}

int
hd_board_verdict(hd_task **out, hd_store *st, int64_t id,
    const char *actor, int approve, const char *reasons, hd_err *err)
{
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = actor_check(actor, err)) < 0)
		return rc;
	if (reasons != NULL && reasons[0] == '\0')
		reasons = NULL;
	if (!approve && reasons == NULL)
		return hd_err_set(err, HD_EINVAL,
		    "a rejection needs its reasons: what must change");
	if (reasons != NULL &&
	    (rc = hd_text_check("verdict reasons", reasons, 1,
		 HD_TASK_COMMENT_MAX, err)) < 0)
		return rc;
	return hd_board__verdict_run(out, st, id, is_user(actor) ? HD_BOARD_USER : actor,
	    NULL, approve, reasons, err);
}
