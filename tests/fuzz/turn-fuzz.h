/*
 * turn-fuzz.h -- what the fuzz targets that run their input through the
 * real turn driver (hd_runtime_run_turn) share: an adapter of no
 * capabilities whose run feeds the input (TURN_FUZZ_ADAPTER), and the one
 * turn they run (turn_fuzz_run: agent coder of team dev on runtime
 * "fuzz", prompt "fuzz"; the adapter decides what the turn outputs).
 * Callers: stream-fuzz.h (the stream parsers), fuzz-exec-output.c.
 */
#ifndef HD_TURN_FUZZ_H
#define HD_TURN_FUZZ_H

#include <string.h>

#include <huddle/runtime.h>

#include "fuzz.h"

static inline void
turn_fuzz_caps(hd_runtime_caps *out)
{
	memset(out, 0, sizeof(*out));
}

/* An adapter named "fuzz", shown as label, whose turns run_fn runs. */
#define TURN_FUZZ_ADAPTER(label_, run_fn)                                      \
	{                                                                      \
		.name = "fuzz", .label = (label_),                             \
		.capabilities = turn_fuzz_caps, .run = (run_fn),               \
	}

static inline int
turn_fuzz_run(hd_runtime_result *res, const hd_runtime_adapter *rt,
    hd_runtime_sink sink, void *payload, hd_err *err)
{
	hd_runtime_turn turn;
	hd_agent agent;

	memset(&agent, 0, sizeof(agent));
	agent.id = (char *)"coder";
	agent.team_id = (char *)"dev";
	agent.runtime = (char *)"fuzz";
	memset(&turn, 0, sizeof(turn));
	turn.agent = &agent;
	turn.prompt = "fuzz";
	return hd_runtime_run_turn(res, rt, &turn, sink, payload, err);
}

#endif
