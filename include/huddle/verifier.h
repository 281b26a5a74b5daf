/*
 * verifier.h -- the verifier engine: runs the verifications the board
 * queues (verify.h): a task's gate, then its critic's turn, whose
 * verdict comes back through the verify_verdict tool.
 *
 * `huddle serve` runs one on a thread of its own (the supervisor's);
 * `huddle task verify` runs one task's in the foreground.
 */
#ifndef HUDDLE_VERIFIER_H
#define HUDDLE_VERIFIER_H

#include <stdatomic.h>
#include <stdint.h>

#include "err.h"
#include "store.h"

typedef struct hd_verifier_env {
	const char *home;      /* HUDDLE_HOME */
	const char *mcp_host;  /* with mcp_port > 0: the critic's turn gets */
	int mcp_port;          /* its attach URL; else the stdio server */
	const char *mcp_token; /* or NULL */
	atomic_int *abort;     /* or NULL; set: stop the run in flight */
	const char *runner;    /* this verifier's token (verify.h take) */
} hd_verifier_env;

/*
 * Take and run verification runs until none is left to take (task_id >
 * 0: only that task's), each to its end: a verdict, or a failed run.
 * *ran (when non-NULL) counts them. Errors of a run are recorded on it
 * (hd_board_verify_fail), not returned; a negative return is the store's
 * error on the take.
 */
int hd_verifier_run(int *ran, hd_store *st, const hd_verifier_env *env,
    int64_t task_id, hd_err *err);

#endif
