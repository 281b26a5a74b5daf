/*
 * verifier.c -- the verifier engine (verifier.h): takes the verification
 * runs the board queued (verify.h) and runs each: the gate, then the
 * critic's turn. Owns no table: every write is the board's (verify.c) or
 * a turn's spend (budgets, the cost event).
 *  (1) A run is taken by one verifier across processes (verify.c (4)),
 *      named by env->runner, this process's pid and start time; a run
 *      whose verifier died (kill -9) is taken again by the next one,
 *      from the gate.
 *  (2) The gate runs in the task's workdir (its spec's, else the owner's
 *      runtime_config.workdir, else this process's directory) as the
 *      task's owner (runtime/shell.c), within its timeout; exit 0
 *      passes. A failure rejects the task back to its owner with the
 *      output as the reasons (verify.c); a gate that cannot start fails
 *      the run.
 *  (3) The critic is an agent of the team, never the task's owner; its
 *      turn runs through its own runtime (hd_runtime_run) bound to its
 *      identity, with a prompt holding the task, the builder's summary
 *      and the gate's output, within its timeout. The verdict arrives
 *      through the verify_verdict tool during the turn (hd_board_verdict
 *      commits it); a turn that ends without one, errs or times out
 *      fails the run, the task left verifying with the error shown.
 *  (4) Every write of a run is conditional on the run still being this
 *      verifier's (verify.c (5)): a verdict given meanwhile (a user's) is
 *      never overwritten; the run just ends.
 *  (5) The critic's turn is paid for like any turn: its cost is charged
 *      to the budgets and appended as a cost event naming the task.
 *  (6) A critic given as a runtime is a throwaway member made for this
 *      run (verify_critic.c: critic-<task>-<attempt>, working, recorded
 *      on the run) whose turn gets a fresh ephemeral home whatever its
 *      runtime's plan (hd_runtime_turn.ephemeral_home): it shares no
 *      session, home or mailbox with the builder or anyone. It is
 *      removed when the run is over, whatever ended it; what a verifier
 *      that died left is swept (hd_board_verify_sweep) by the next one
 *      when it starts, and by the next take of that run.
 * Callers: engine/supervisor.c (huddle serve), the operation table's
 * task verify (huddle task verify, in the foreground).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <huddle/agent.h>
#include <huddle/attach.h>
#include <huddle/buf.h>
#include <huddle/budget.h>
#include <huddle/events.h>
#include <huddle/live.h>
#include <huddle/runtime.h>
#include <huddle/util.h>
#include <huddle/verifier.h>
#include <huddle/verify.h>

#define HD_LOG_COMPONENT "verifier"
#include <huddle/log.h>

#define PROMPT_GATE_TAIL 4000 /* bytes of the gate's output in the prompt */

/* The run's error, recorded (the run may already be another's: (4)). */
static void
run_fail(hd_store *st, const hd_verify_job *j, const char *runner,
    const char *error)
{
	hd_err err = HD_ERR_INIT;

	hd_log_warn("task %lld: verification failed: %s",
	    (long long)j->task_id, error);
	if (hd_board_verify_fail(st, j->task_id, runner, error, &err) < 0 &&
	    err.code != HD_ECONFLICT)
		hd_log_warn("task %lld: its failure is not recorded: %s",
		    (long long)j->task_id, err.msg);
}

/* (2): where the gate runs; *owner_out the owner's agent (or NULL). */
static const char *
gate_cwd(const hd_verify_job *j, const hd_agent *owner)
{
	const char *w;

	if (j->workdir != NULL)
		return j->workdir;
	if (owner != NULL &&
	    (w = json_string_value(json_object_get(
		 owner->runtime_config, "workdir"))) != NULL &&
	    w[0] == '/')
		return w;
	return NULL;
}

/* Run the gate: 1 passed, 0 the task was rejected or the run is over,
 * -1 the run failed (recorded). */
static int
run_gate(hd_store *st, const hd_verify_job *j, const hd_verifier_env *env,
    const hd_agent *owner)
{
	hd_runtime_shell_result r;
	hd_agent stand_in;
	hd_err err = HD_ERR_INIT;
	char msg[HD_ERR_MSG_MAX + 64];
	int passed = 0, rc;

	memset(&stand_in, 0, sizeof(stand_in));
	stand_in.id = j->owner != NULL ? j->owner : "huddle";
	stand_in.team_id = j->team;
	rc = hd_runtime_shell(&r, owner != NULL ? owner : &stand_in, j->team,
	    env->home, j->gate, gate_cwd(j, owner), j->gate_timeout_s * 1000,
	    HD_VERIFY_GATE_OUTPUT_MAX, env->abort, &err);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "the gate could not run: %s",
		    err.msg);
		hd_runtime_shell_dispose(&r);
		run_fail(st, j, env->runner, msg);
		return -1;
	}
	if (env->abort != NULL && atomic_load(env->abort)) {
		hd_runtime_shell_dispose(&r); /* stopping: the next one resumes */
		return 0;
	}
	hd_err_clear(&err);
	rc = hd_board_verify_gate(&passed, st, j->task_id, env->runner,
	    r.exit_code, r.how, r.output, &err);
	hd_runtime_shell_dispose(&r);
	if (rc < 0) {
		if (err.code != HD_ECONFLICT)
			hd_log_warn("task %lld: the gate's result is not "
				    "recorded: %s",
			    (long long)j->task_id, err.msg);
		return 0;
	}
	return passed;
}

/* (3): the critic's prompt. */
static char *
critic_prompt(
    const hd_verify_job *j, const char *critic, const hd_task_verify *v)
{
	hd_buf b = HD_BUF_INIT(0);
	const char *out;
	size_t n;

	hd_buf_printf(&b,
	    "You are %s, the critic of task #%lld \"%s\" in team %s. %s "
	    "built it and says it is done; decide whether it is.\n\n",
	    critic, (long long)j->task_id, j->subject, j->team,
	    j->owner != NULL ? j->owner : "Its owner");
	if (j->description[0] != '\0')
		hd_buf_printf(&b, "The task:\n%s\n\n", j->description);
	hd_buf_printf(&b, "%s's summary of the work:\n%s\n\n",
	    j->owner != NULL ? j->owner : "The owner",
	    j->summary != NULL ? j->summary : "(none given)");
	if (j->gate != NULL && v != NULL) {
		out = v->gate_output != NULL ? v->gate_output : "";
		n = strlen(out);
		if (n > PROMPT_GATE_TAIL)
			out += n - PROMPT_GATE_TAIL;
		hd_buf_printf(&b,
		    "The gate `%s` passed (exit status 0). Its output%s:\n%s\n\n",
		    j->gate, n > PROMPT_GATE_TAIL ? " ends" : "", out);
	}
	hd_buf_printf(&b,
	    "Check the work: read what it changed, run what you need, read "
	    "the room and the board. Do not do the work yourself. Then give "
	    "your verdict with the verify_verdict tool: task_id %lld, verdict "
	    "\"approve\" or \"reject\", and reasons (required to reject: what "
	    "must change). Without a verdict the task stays unverified.",
	    (long long)j->task_id);
	return hd_buf_detach(&b);
}

struct spend {
	const hd_verify_job *j;
	const char *critic;
	const hd_runtime_result *res;
};

/* (5) */
static int
spend_txn(hd_store *st, void *payload, hd_err *err)
{
	struct spend *s = payload;
	const hd_runtime_cost *c = &s->res->cost;
	int crossed, rc;

	if ((rc = hd_budget_charge(&crossed, st, s->j->team, s->critic,
		 c->microcents, err)) < 0)
		return rc;
	hd_events_append(st, "cost", s->j->team, s->j->task_id, s->critic,
	    json_pack("{s:s, s:I, s:f, s:I, s:I, s:I, s:b}", "verify",
		"critic", "task", (json_int_t)s->j->task_id, "usd", c->usd,
		"microcents", (json_int_t)c->microcents, "input_tokens",
		(json_int_t)c->input_tokens, "output_tokens",
		(json_int_t)c->output_tokens, "estimated", c->estimated));
	return 0;
}

/* 1 when the task has had its verdict since the run began (it left
 * verifying, or its run is no longer running). */
static int
has_verdict(hd_store *st, const hd_verify_job *j, const char *runner)
{
	hd_task *t = NULL;
	hd_err err = HD_ERR_INIT;
	int done;

	if (hd_board_get(&t, st, j->task_id, &err) < 0)
		return 1; /* gone: nothing left to verify */
	done = strcmp(t->status, "verifying") != 0 || t->verify == NULL ||
	       strcmp(t->verify->state, "running") != 0 ||
	       t->verify->runner == NULL ||
	       strcmp(t->verify->runner, runner) != 0;
	hd_task_free(t);
	return done;
}

static void
run_critic(hd_store *st, const hd_verify_job *j, const hd_verifier_env *env)
{
	hd_agent *critic = NULL;
	char *throwaway = NULL;
	const char *name = j->critic;
	hd_task *t = NULL;
	hd_runtime_turn in;
	hd_runtime_result res;
	hd_live shown;
	struct spend sp;
	hd_err err = HD_ERR_INIT;
	char msg[HD_ERR_MSG_MAX + 160];
	char *prompt = NULL, *url = NULL;
	int rc;

	if (j->critic_runtime != NULL) { /* (6) */
		if (hd_board_verify_critic_join(&throwaway, st, j->task_id,
			env->runner, j->attempt, hd_runtime_check_config,
			&err) < 0) {
			if (err.code != HD_ECONFLICT) {
				snprintf(msg, sizeof(msg),
				    "a %s critic cannot join: %s",
				    j->critic_runtime, err.msg);
				run_fail(st, j, env->runner, msg);
			}
			return;
		}
		name = throwaway;
	} else if (j->owner != NULL && strcmp(j->owner, j->critic) == 0) {
		snprintf(msg, sizeof(msg),
		    "%s owns the task and cannot be its own critic", j->critic);
		run_fail(st, j, env->runner, msg);
		return;
	}
	if (hd_agent_get(&critic, st, name, &err) < 0 ||
	    critic->team_id == NULL || strcmp(critic->team_id, j->team) != 0) {
		snprintf(msg, sizeof(msg), "critic %s cannot run: %s", name,
		    err.msg[0] != '\0' ? err.msg : "it left the team");
		run_fail(st, j, env->runner, msg);
		goto done;
	}
	if (hd_board_get(&t, st, j->task_id, &err) < 0 ||
	    (prompt = critic_prompt(j, name, t->verify)) == NULL) {
		run_fail(st, j, env->runner, "out of memory");
		goto done;
	}
	memset(&in, 0, sizeof(in));
	memset(&res, 0, sizeof(res));
	in.agent = critic;
	in.team = j->team;
	in.prompt = prompt;
	in.huddle_home = env->home;
	in.timeout_ms = j->critic_timeout_s * 1000;
	in.abort = env->abort;
	in.ephemeral_home = throwaway != NULL;
	if (env->mcp_port > 0 && env->mcp_host != NULL) {
		hd_err_clear(&err);
		if (hd_attach_url(&url, st, env->mcp_host, env->mcp_port,
			critic->id, &err) == 0) {
			in.mcp_url = url;
			in.mcp_token = env->mcp_token;
		} else
			hd_log_warn("no attach URL for critic %s: %s", critic->id,
			    err.msg);
	}
	shown.st = st;
	shown.team = j->team;
	shown.agent = critic->id;
	shown.runtime = critic->runtime;
	shown.conversation_id = NULL;
	hd_err_clear(&err);
	rc = hd_runtime_run(&res, &in, hd_live_sink, &shown, &err);
	sp.j = j;
	sp.critic = critic->id;
	sp.res = &res;
	if (res.cost.microcents > 0 || res.cost.input_tokens > 0) {
		hd_err serr = HD_ERR_INIT;

		if (hd_store_write(st, spend_txn, &sp, &serr) < 0)
			hd_log_warn("critic %s's spend not recorded: %s",
			    critic->id, serr.msg);
	}
	if (env->abort != NULL && atomic_load(env->abort))
		goto disposed; /* stopping: the next verifier resumes (1) */
	if (has_verdict(st, j, env->runner))
		goto disposed;
	if (rc < 0 || res.reason == HD_DONE_ERROR)
		snprintf(msg, sizeof(msg), "critic %s's turn failed: %s",
		    critic->id,
		    res.error != NULL       ? res.error
		    : err.msg[0] != '\0'    ? err.msg
					    : "the runtime failed");
	else if (res.reason == HD_DONE_ABORTED)
		snprintf(msg, sizeof(msg), "critic %s's turn was stopped",
		    critic->id);
	else
		snprintf(msg, sizeof(msg),
		    "critic %s ended its turn without a verdict (it must call "
		    "verify_verdict)",
		    critic->id);
	run_fail(st, j, env->runner, msg);
disposed:
	hd_runtime_result_dispose(&res);
done:
	if (throwaway != NULL) { /* (6): whatever ended the run */
		hd_err_clear(&err);
		if (hd_board_verify_critic_leave(
			st, j->task_id, throwaway, &err) < 0)
			hd_log_warn("task %lld: throwaway critic %s not "
				    "removed (the next verifier sweeps it): %s",
			    (long long)j->task_id, throwaway, err.msg);
		free(throwaway);
	}
	free(url);
	free(prompt);
	hd_task_free(t);
	hd_agent_free(critic);
}

/* Run one taken job to its end. */
static void
run_job(hd_store *st, const hd_verify_job *j, const hd_verifier_env *env)
{
	hd_agent *owner = NULL;
	hd_err err = HD_ERR_INIT;
	int passed = 1;

	hd_log_info("task %lld: verifying (attempt %lld)",
	    (long long)j->task_id, (long long)j->attempt);
	if (j->owner != NULL && hd_agent_get(&owner, st, j->owner, &err) < 0)
		owner = NULL; /* the gate runs as the owner's id anyway */
	if (j->gate != NULL)
		passed = run_gate(st, j, env, owner);
	hd_agent_free(owner);
	if (passed <= 0 || (env->abort != NULL && atomic_load(env->abort)))
		return;
	if (j->critic == NULL && j->critic_runtime == NULL) {
		hd_err_clear(&err);
		if (hd_board_verify_pass(st, j->task_id, env->runner, &err) < 0 &&
		    err.code != HD_ECONFLICT)
			hd_log_warn("task %lld: not approved: %s",
			    (long long)j->task_id, err.msg);
		return;
	}
	run_critic(st, j, env);
}

int
hd_verifier_run(int *ran, hd_store *st, const hd_verifier_env *env,
    int64_t task_id, hd_err *err)
{
	hd_verify_job j;
	int64_t pid = (int64_t)getpid();
	int64_t start = hd_proc_start(pid);
	int found, n = 0, rc = 0;
	hd_err serr = HD_ERR_INIT;

	while (env->abort == NULL || !atomic_load(env->abort)) {
		if ((rc = hd_board_verify_take(&found, &j, st, env->runner, pid,
			 start, task_id, err)) < 0 ||
		    !found)
			break;
		/* (6): what dead verifiers left, before this one adds its own */
		if (n == 0 && hd_board_verify_sweep(NULL, st, &serr) < 0)
			hd_log_warn("throwaway critics not swept: %s", serr.msg);
		run_job(st, &j, env);
		hd_verify_job_dispose(&j);
		n++;
	}
	if (ran != NULL)
		*ran = n;
	return rc < 0 ? rc : 0;
}
