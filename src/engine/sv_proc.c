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
 * still names the group (hd_proc_group_kill). The record is the autorun
 * module's (autorun_turn.h (2)): this file writes no SQL.
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

	hd_host_name(host, sizeof(host));
	hd_boot_id(boot, sizeof(boot));
	return hd_autorun_turn_process_set(
	    st, t->turn_id, host, boot, t->pgid, t->start, err);
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
	hd_autorun_process p;
	int rc, found;

	if ((rc = hd_autorun_turn_process(&found, &p, st, turn_id, err)) < 0)
		return rc;
	if (found && hd_proc_here(p.host, p.boot) &&
	    hd_proc_group_kill(p.pid, p.start))
		hd_log_info("turn %lld: killed process group %lld it left",
		    (long long)turn_id, (long long)p.pid);
	return 0;
}
