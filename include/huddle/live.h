/*
 * live.h -- a running turn, shown as it runs: the sink both engines hand
 * the runtime, which turns each tool call and result into a `tool_call`
 * event {phase: call|result, runtime, name, id, error[, conversation_id]}.
 */
#ifndef HUDDLE_LIVE_H
#define HUDDLE_LIVE_H

#include "runtime.h"
#include "store.h"

typedef struct hd_live {
	hd_store *st; /* the turn's thread's own connection */
	const char *team;
	const char *agent;
	const char *runtime;
	const char *conversation_id; /* or NULL (an exchange) */
} hd_live;

/* An hd_runtime_sink; payload is an hd_live. */
void hd_live_sink(const hd_runtime_event *ev, void *payload);

#endif
