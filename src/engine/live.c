/*
 * live.c -- what a running turn shows while it runs: each tool call and
 * tool result a runtime reports becomes a `tool_call` event, so the
 * dashboard (and `huddle events --follow`) shows an agent's turn in
 * progress, call by call. Owns no table; writes through the event log.
 *  (1) The sink runs on the thread that runs the turn, outside any
 *      transaction, on that thread's own store connection; an event that
 *      cannot be written is dropped (SPEC 13: writing an event never
 *      fails what it describes), so a turn never fails for its narration.
 *  (2) An event carries names and ids only, never a tool's input or
 *      output: those can be large and private, and the room and the board
 *      already show what the tools did.
 * Callers: turn.c (exchanges), conv_engine.c (conversations).
 */
#include <string.h>

#include <huddle/events.h>
#include <huddle/live.h>

void
hd_live_sink(const hd_runtime_event *ev, void *payload)
{
	const hd_live *l = payload;
	json_t *d;

	if (ev->kind != HD_RT_TOOL_CALL && ev->kind != HD_RT_TOOL_RESULT)
		return;
	d = json_pack("{s:s, s:s, s:o, s:o, s:b}", "phase",
	    ev->kind == HD_RT_TOOL_CALL ? "call" : "result", "runtime",
	    l->runtime != NULL ? l->runtime : "", "name",
	    ev->name != NULL ? json_string(ev->name) : json_null(), "id",
	    ev->id != NULL ? json_string(ev->id) : json_null(), "error",
	    ev->kind == HD_RT_TOOL_RESULT && ev->is_error);
	if (d != NULL && l->conversation_id != NULL)
		json_object_set_new(
		    d, "conversation_id", json_string(l->conversation_id));
	hd_events_append(l->st, "tool_call", l->team, 0, l->agent, d);
}
