/*
 * activity.h -- a member's status follows its work, and its leader hears
 * when it goes idle or fails (SPEC 6).
 *
 *   working              in a turn, or holding a task in_progress
 *   idle                 neither
 *   error                its last turn failed (with the reason); it stays
 *                        so until a turn of it begins again or it is
 *                        reset by hand (hd_activity_set_status)
 *   shutdown_requested,  the shutdown protocol's (shutdown.h); never
 *   shutdown             changed here, except that a member asked to shut
 *                        down that would now be idle counts as approving
 *
 * working -> idle sends the leader an `idle` message from the member in
 * the same transaction (`coder is idle; last finished task #5 "Docs"
 * (completed)`), which is also what approves a pending shutdown; the
 * leader going idle tells nobody. A failed turn tells the leader by a
 * message from "huddle" and records a turn_failed event.
 *
 * Every function works inside a caller's transaction (each is one when
 * called alone); an agent that is not a member of team is left alone.
 * The status is also settled after each act on a task that can change
 * it, by the board's reflection in the board write's transaction.
 *
 * What a member's work is lives on the board, above the rule: the rule
 * (src/presence/) reads it through an hd_work, and the board supplies its
 * own (hd_board_work, board.h). The functions below read it there.
 */
#ifndef HUDDLE_ACTIVITY_H
#define HUDDLE_ACTIVITY_H

#include <stdint.h>

#include "err.h"
#include "store.h"

/* A task of a member's, as hd_work hands it: id, subject and status
 * (borrowed, valid during the call); a negative return is returned. */
typedef int (*hd_work_task_fn)(void *ctx, int64_t id, const char *subject,
    const char *status, hd_err *err);

/* How the status rule reads a member's work (hd_board_work: the board). */
typedef struct hd_work {
	/* 1 in *yes when agent holds a task in_progress in team */
	int (*has_started)(int *yes, hd_store *st, const char *team,
	    const char *agent, hd_err *err);
	/* the task agent finished last in team (completed or failed), to fn;
	 * fn is not called when there is none (the idle notice) */
	int (*last_finished)(hd_store *st, const char *team, const char *agent,
	    hd_work_task_fn fn, void *ctx, hd_err *err);
} hd_work;

/* A turn of agent begins: it is marked in a turn and, from idle or error,
 * set working (*began, when non-NULL: 1 when it was). */
int hd_activity_turn_begin(
    int *began, hd_store *st, const char *team, const char *agent, hd_err *err);

/* The turn ends. failure NULL: settled (idle, with the notice, unless it
 * still holds a started task). Else the member goes to `error` with
 * failure as the reason, a turn_failed event {agent, reason} is recorded
 * and the leader (unless it is the member) gets a message saying so and
 * what it can do. */
int hd_activity_turn_end(hd_store *st, const char *team, const char *agent,
    const char *failure, hd_err *err);

/* The turn ended well and the next turn of the same agent began in the
 * same transaction (a conversation's next delivery): counted out, with no
 * status change and no notice in between. */
int hd_activity_turn_chain(hd_store *st, const char *team, const char *agent,
    hd_err *err);

/* The turn was cut short (its engine stopped, or took it back from one
 * that died): the mark is cleared and a working member with nothing
 * started goes idle, quietly: it did not finish, so nothing is said. */
int hd_activity_turn_abort(
    hd_store *st, const char *team, const char *agent, hd_err *err);

/* Set a status by hand (`huddle agent set-status`): as hd_agent_set_status;
 * idle (the reset out of error) also clears the turns an engine that died
 * left counted, then settles: a member that still holds a started task is
 * working. */
int hd_activity_set_status(
    hd_store *st, const char *agent, const char *status, hd_err *err);

#endif
