/*
 * presence.c -- the public functions of activity.h and shutdown.h that
 * read a member's work: the status rule and the shutdown protocol of
 * src/presence/, handed the board's reader of that work (hd_board_work).
 * src/presence/ sits below the board, whose reflection settles a task's
 * owner inside the board write's transaction with that same reader; what
 * the engines, the CLI and the surfaces call is bound here, above both,
 * so the domain stays a tree (docs/layers.md) and every caller reads the
 * same work. Nothing else happens here: each function is its
 * src/presence/ counterpart (presence_int.h), with the same transactions,
 * texts and events.
 * Callers: the engines' turns (hd_activity_turn_end, _abort), the CLI's
 * set-status, state.c (expiry before a read), the CLI, MCP and REST
 * shutdown operations.
 */
#include <huddle/activity.h>
#include <huddle/board.h>
#include <huddle/shutdown.h>

#include <presence/presence_int.h>

int
hd_activity_turn_end(hd_store *st, const char *team, const char *agent,
    const char *failure, hd_err *err)
{
	return hd_activity__turn_end(
	    st, &hd_board_work, team, agent, failure, err);
}

int
hd_activity_turn_abort(
    hd_store *st, const char *team, const char *agent, hd_err *err)
{
	return hd_activity__turn_abort(st, &hd_board_work, team, agent, err);
}

int
hd_activity_set_status(
    hd_store *st, const char *agent, const char *status, hd_err *err)
{
	return hd_activity__set_status(st, &hd_board_work, agent, status, err);
}

int
hd_team_shutdown(hd_shutdown **out, hd_store *st, const char *team,
    const char *reason, int64_t timeout_ms, hd_err *err)
{
	return hd_shutdown__start(
	    out, st, &hd_board_work, team, reason, timeout_ms, err);
}

int
hd_shutdown_get(hd_shutdown **out, hd_store *st, const char *team, hd_err *err)
{
	return hd_shutdown__get(out, st, &hd_board_work, team, err);
}

int
hd_shutdown_answer(hd_message **out, hd_store *st,
    const hd_message_spec *spec, hd_err *err)
{
	return hd_shutdown__answer(out, st, &hd_board_work, spec, err);
}

int
hd_shutdown_respond(hd_shutdown **out, hd_store *st, const char *team,
    const char *agent, const char *request_id, int approve, const char *reason,
    hd_err *err)
{
	return hd_shutdown__respond(out, st, &hd_board_work, team, agent,
	    request_id, approve, reason, err);
}

int
hd_shutdown_expire(hd_store *st, const char *team, hd_err *err)
{
	return hd_shutdown__expire(st, &hd_board_work, team, err);
}

int
hd_team_shutdown_wait(hd_shutdown **out, hd_store *st, const char *team,
    const char *request_id, int64_t timeout_ms, hd_err *err)
{
	return hd_shutdown__wait(
	    out, st, &hd_board_work, team, request_id, timeout_ms, err);
}
