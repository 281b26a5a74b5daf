/*
 * sv_proc.c -- the process a supervisor turn runs (supervisor.h): where
 * its runtime's command runs is recorded on the turn's row in
 * autorun_turns (run_host, run_boot, run_pid: the command's pid, which is
 * its process group's id, run_start: its start time) once it started,
 * and the group is killed when the turn is aborted after its engine died,
 * before its wakes are queued again. The command itself dies with its
 * engine's process (runtime/proc.c (9)); what it started stays in its
 * group, and must not act while the same wakes run a second time. The
 * record stays on the row once the turn ended: only a running turn's is
 * ever read, and a kill only happens on this host while the recording
 * still names the group (hd_proc_group_kill). Keeps wake.c's invariants
 * (it writes only these columns, of a running turn).
 * Callers: supervisor.c (record), sv_turn.c (kill, in the abort).
 */
#include <huddle/util.h>

#include "supervisor_int.h"

#define HD_LOG_COMPONENT "supervisor"
#include <huddle/log.h>

typedef struct running_txn {
	int64_t turn_id;
	int64_t pgid, start;
} running_txn;

static int
running_txn_fn(hd_store *st, void *payload, hd_err *err)
{
	running_txn *t = payload;
	char host[256], boot[40];
	hd_stmt *s;
	int rc;

	hd_host_name(host, sizeof(host));
	hd_boot_id(boot, sizeof(boot));
	if ((rc = hd_store_prepare(st, &s,
		 "UPDATE autorun_turns SET run_host = ?2, run_boot = ?3,"
		 " run_pid = ?4, run_start = ?5"
		 " WHERE id = ?1 AND status = 'running'",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, t->turn_id);
	hd_stmt_bind_text_copy(s, 2, host);
	hd_stmt_bind_text_copy(s, 3, boot);
	hd_stmt_bind_int(s, 4, t->pgid);
	hd_stmt_bind_int(s, 5, t->start);
	return hd_store_step_done(st, s, err);
}

int
hd_sv__turn_running(hd_store *st, int64_t turn_id, int64_t pgid,
    int64_t start, hd_err *err)
{
	running_txn t = {turn_id, pgid, start};

	return hd_store_write(st, running_txn_fn, &t, err);
}

int
hd_sv__turn_kill(hd_store *st, int64_t turn_id, hd_err *err)
{
	hd_stmt *s;
	int rc, src;

	if ((rc = hd_store_prepare(st, &s,
		 "SELECT run_host, run_boot, run_pid, run_start"
		 " FROM autorun_turns WHERE id = ?1 AND status = 'running'"
		 " AND run_pid IS NOT NULL",
		 err)) < 0)
		return rc;
	hd_stmt_bind_int(s, 1, turn_id);
	if ((src = hd_stmt_step(s)) == HD_ROW &&
	    hd_proc_here(hd_stmt_text(s, 0),
		hd_stmt_text(s, 1)) &&
	    hd_proc_group_kill(
		hd_stmt_int(s, 2), hd_stmt_int(s, 3)))
		hd_log_info("turn %lld: killed process group %lld it left",
		    (long long)turn_id, (long long)hd_stmt_int(s, 2));
	if (src != HD_ROW && src != HD_DONE)
		rc = hd_store_sqlerr(st, src, err);
	hd_store_reset(s);
	return rc;
}
