/*
 * board.h -- the task board (SPEC 4), canonical for who does what.
 */
#ifndef HUDDLE_BOARD_H
#define HUDDLE_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "store.h"

/* Task counts by status for one team (the team-state block). */
typedef struct hd_task_counts {
	int64_t pending;
	int64_t claimed;
	int64_t in_progress;
	int64_t completed;
	int64_t failed;
	int64_t cancelled;
} hd_task_counts;

/* Count a team's tasks by status. */
int hd_board_counts(hd_task_counts *out, hd_store *st, const char *team,
    hd_err *err);

#endif
