/*
 * verify_critic.c -- a critic given as a runtime (verify.h): for each run
 * of such a task the verifier makes a throwaway member of the team to be
 * its critic, and removes it once the run is over. Its identity is what
 * lets it answer through verify_verdict like any critic (MCP, the native
 * runtime's tools) while it shares nothing with the builder: a fresh id,
 * so no session, mailbox, budget or home of anyone else's.
 *  (1) The member is named critic-<task>-<attempt> and marked as a
 *      throwaway by its spawner (huddle), role (critic) and session key
 *      (verify:<task>); only a member so marked is ever removed here, so
 *      a person's agent of that name is refused, never taken over.
 *  (2) It joins in one board write with the run's record of it
 *      (task_verify.run_critic), conditional on the run being the
 *      joining runner's (verify.c (5)), and starts out working, so ready
 *      work is never offered to it (engine/wake.c (4)) while it lives.
 *  (3) It leaves when its run is over, whatever ended it (a verdict, a
 *      failure, a cancel): its row goes, and the run's record of it with
 *      it. A runner that died leaves its member behind: the next take of
 *      that run removes it (verify_run.c), before the new runner makes
 *      its own (a new attempt, a new name), and hd_board_verify_sweep
 *      removes every throwaway whose run is not live (a verifier calls it
 *      when it starts).
 * Callers: the verifier engine (src/engine/verifier.c) through verify.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/agent.h>
#include <huddle/verify.h>

#include "tasks_int.h"

#define CRITIC_ROLE "critic"
#define CRITIC_KEY "verify:" /* then the task's id */

/* (1): agent a is task id's throwaway critic (id 0: any task's); *task
 * (when non-NULL) the task it was made for. */
static int
is_throwaway(const hd_agent *a, int64_t id, int64_t *task)
{
	char *end;
	long long n;

	if (a->spawned_by == NULL || strcmp(a->spawned_by, "huddle") != 0 ||
	    strcmp(a->role, CRITIC_ROLE) != 0 || a->session_key == NULL ||
	    strncmp(a->session_key, CRITIC_KEY, strlen(CRITIC_KEY)) != 0)
		return 0;
	n = strtoll(a->session_key + strlen(CRITIC_KEY), &end, 10);
	if (*end != '\0' || n <= 0 || (id > 0 && n != id))
		return 0;
	if (task != NULL)
		*task = (int64_t)n;
	return 1;
}

/* (3): remove agent, task id's throwaway, and the run's record of it;
 * a member gone already, or not a throwaway of id's, is left as it is. */
int
hd_board__verify_critic_leave(
    hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	hd_agent *a = NULL;
	hd_err e = HD_ERR_INIT;
	int rc = 0;

	if (hd_agent_get(&a, st, agent, &e) == 0 && is_throwaway(a, id, NULL))
		rc = hd_agent_remove(st, agent, err);
	else if (e.code != 0 && e.code != HD_ENOTFOUND)
		rc = hd_err_set(err, e.code, "%s", e.msg);
	hd_agent_free(a);
	if (rc < 0)
		return rc;
	return hd_store_run(st, err,
	    "UPDATE task_verify SET run_critic = NULL"
	    " WHERE task_id = ?1 AND run_critic = ?2",
	    HD_INT(id), HD_TEXT(agent));
}

typedef struct join_txn {
	board_txn *b;
	const char *runner;
	int64_t attempt;
	hd_agent_runtime_check check;
	char name[64];
	char note[256];
} join_txn;

static int
join_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	board_txn *b = payload;
	join_txn *k = b->ext;
	hd_task_verify *v = NULL;
	hd_agent_spec spec;
	hd_agent *there = NULL;
	hd_err e = HD_ERR_INIT;
	json_t *cfg = NULL;
	char key[32];
	int rc;

	if ((rc = hd_board__verify_owned(&v, st, b, b->id, k->runner, err)) < 0)
		goto done;
	if (v->critic_runtime == NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "task %" PRId64 "'s critic is a member, not a runtime",
		    b->id);
		goto done;
	}
	/* (3): what a dead runner left (its take removed it already) */
	if (v->run_critic != NULL &&
	    (rc = hd_board__verify_critic_leave(st, b->id, v->run_critic, err)) < 0)
		goto done;
	snprintf(k->name, sizeof(k->name), "critic-%" PRId64 "-%" PRId64,
	    b->id, k->attempt);
	snprintf(key, sizeof(key), CRITIC_KEY "%" PRId64, b->id);
	if (hd_agent_get(&there, st, k->name, &e) == 0) {
		if (!is_throwaway(there, b->id, NULL)) { /* (1) */
			rc = hd_err_set(err, HD_EEXISTS,
			    "agent \"%s\" exists and is not a throwaway "
			    "critic: rename it, or give the task a member as "
			    "its critic",
			    k->name);
			goto done;
		}
		if ((rc = hd_board__verify_critic_leave(st, b->id, k->name, err)) < 0)
			goto done;
	}
	if ((cfg = json_loads(v->critic_config != NULL ? v->critic_config
						       : "{}",
		 0, NULL)) == NULL) {
		rc = hd_err_set(err, HD_EINVAL,
		    "task %" PRId64 "'s critic config is not JSON", b->id);
		goto done;
	}
	memset(&spec, 0, sizeof(spec));
	spec.id = k->name;
	spec.team = b->task->team_id;
	spec.role = CRITIC_ROLE;
	spec.runtime = v->critic_runtime;
	spec.runtime_config = cfg;
	spec.spawned_by = "huddle";
	spec.session_key = key;
	spec.check = k->check;
	if ((rc = hd_agent_add(NULL, st, &spec, err)) < 0 ||
	    (rc = hd_agent_set_status(st, k->name, "working", err)) < 0 ||
	    (rc = hd_store_run(st, err,
		 "UPDATE task_verify SET run_critic = ?2, updated_at = ?3"
		 " WHERE task_id = ?1",
		 HD_INT(b->id), HD_TEXT(k->name), HD_INT(hd_now_ms()))) < 0)
		goto done;
	snprintf(k->note, sizeof(k->note),
	    "%s, a fresh %s agent, joins as this run's critic (it leaves "
	    "when the run is over).",
	    k->name, v->critic_runtime);
	b->note = k->note;
	b->changed = 1;
done:
	json_decref(cfg);
	hd_agent_free(there);
	hd_board__verify_free(v);
	return rc;
}

int
hd_board_verify_critic_join(char **agent, hd_store *st, int64_t id,
    const char *runner, int64_t attempt, hd_agent_runtime_check check,
    hd_err *err)
{
	board_txn b;
	join_txn k;
	int rc;

	*agent = NULL;
	memset(&b, 0, sizeof(b));
	memset(&k, 0, sizeof(k));
	k.b = &b;
	k.runner = runner;
	k.attempt = attempt;
	k.check = check;
	b.id = id;
	b.actor = HD_BOARD_USER;
	b.ext = &k;
	b.kind_set = 1;
	b.kind = HD_BOARD__VERIFY_NOTE;
	rc = hd_board__write(st, join_txn_fn, &b, HD_BOARD__VERIFY_NOTE, err);
	hd_board__txn_dispose(&b);
	if (rc < 0)
		return rc;
	if ((*agent = strdup(k.name)) == NULL)
		return oom(err);
	return 0;
}

struct leave_args {
	int64_t id;
	const char *agent;
};

static int
leave_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	struct leave_args *l = payload;

	return hd_board__verify_critic_leave(st, l->id, l->agent, err);
}

int
hd_board_verify_critic_leave(
    hd_store *st, int64_t id, const char *agent, hd_err *err)
{
	struct leave_args l = {id, agent};

	return hd_store_write(st, leave_txn_fn, &l, err);
}

/* (3): a throwaway's run is live while it is running under a live
 * runner with this member as its critic. */
static int
run_live(hd_store *st, int64_t task, const char *agent, int *live,
    hd_err *err)
{
	hd_task_verify *v = NULL;
	int64_t pid = 0, start = 0;
	int rc;

	*live = 0;
	if ((rc = hd_board__verify_row(&v, &pid, &start, st, task, err)) < 0)
		return rc;
	*live = v != NULL && strcmp(v->state, "running") == 0 &&
		v->run_critic != NULL && strcmp(v->run_critic, agent) == 0 &&
		hd_board__verify_runner_alive(pid, start);
	hd_board__verify_free(v);
	return 0;
}

int
hd_board_verify_sweep(int *removed, hd_store *st, hd_err *err)
{
	hd_agents l;
	int64_t task;
	size_t i;
	int live, n = 0, rc;

	if (removed != NULL)
		*removed = 0;
	if ((rc = hd_agent_list(&l, st, NULL, err)) < 0)
		return rc;
	for (i = 0; i < l.n; i++) {
		if (!is_throwaway(&l.items[i], 0, &task))
			continue;
		if ((rc = run_live(st, task, l.items[i].id, &live, err)) < 0)
			break;
		if (live)
			continue;
		if ((rc = hd_board_verify_critic_leave(
			 st, task, l.items[i].id, err)) < 0)
			break;
		n++;
	}
	hd_agents_dispose(&l);
	if (removed != NULL)
		*removed = n;
	return rc;
}
