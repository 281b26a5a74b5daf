/*
 * board_int.h -- what the board's files share: the change record a
 * board write hands to the reflection, and the pure text builders.
 */
#ifndef HD_BOARD_INT_H
#define HD_BOARD_INT_H

#include <huddle/board.h>
#include <huddle/buf.h>

#include <store/store.h>

/* What a board write did, for the room and the leader. */
typedef enum {
	HD_BOARD__CREATED,
	HD_BOARD__CLAIMED,
	HD_BOARD__ASSIGNED,
	HD_BOARD__STARTED,
	HD_BOARD__COMPLETED,
	HD_BOARD__FAILED,
	HD_BOARD__RELEASED,
	HD_BOARD__CANCELLED,
	HD_BOARD__RETRIED,
	HD_BOARD__LINKED,
	HD_BOARD__REASSIGNED,
	HD_BOARD__COMMENTED,
	HD_BOARD__DELEGATED,
	HD_BOARD__VERIFYING,   /* completed into verifying (verify.h) */
	HD_BOARD__APPROVED,    /* verifying -> completed */
	HD_BOARD__REJECTED,    /* verifying -> in_progress */
	HD_BOARD__VERIFY_NOTE, /* a step of a run: text says which */
} hd_board__kind;

typedef struct hd_board__change {
	hd_board__kind kind;
	const hd_task *task;     /* the task after the write */
	const char *actor;       /* agent id or "user" */
	const char *leader;      /* the team's leader at the time, or NULL */
	const char *text;        /* result (completed), reason (failed) or
				    the comment (commented) */
	int64_t dep_id;          /* linked: the task now depended on */
	const char *dep_subject; /* linked: its subject */
	const char *prev_owner;  /* moved, reassigned: the owner before, or
				    NULL */
	const int64_t *ready;    /* completed: the tasks it made ready,
				    ascending (none: NULL, 0) */
	size_t nready;
	const char *const *ready_subjects; /* the subjects of the first
					      HD_BOARD__READY_NAMED */
	const char *critic; /* verifying: the task's critic, or NULL */
	const char *gate;   /* verifying: its gate, or NULL */
} hd_board__change;

/* How many of the tasks a completion made ready its texts name; the rest
 * are counted (`and 3 more`). */
#define HD_BOARD__READY_NAMED 10

/* The room line for a change (SPEC 4), e.g.
 * `Task #5 "Write docs" claimed by coder.`. Appends to b. */
void hd_board__room_line(hd_buf *b, const hd_board__change *c);

/*
 * The leader's task_update text for a completion or failure by a member,
 * e.g. `Task #5 "Write docs" completed by coder: <first 200 chars>`, and
 * for a completion that made tasks ready a second line
 * `Now ready: #7 "Deploy", #9 "Docs"`. Returns 0 and leaves b alone when
 * the change is not announced (another kind, no leader, the leader or a
 * user did it).
 */
int hd_board__announce(hd_buf *b, const hd_board__change *c);

/* How many characters of a result or reason the announcement carries,
 * and of a comment its room line. */
#define HD_BOARD__ANNOUNCE_CHARS 200

/* The delegated task's message to its assignee (hd_board_delegate):
 * `You were delegated task #7 "X" by manager: <description>`, or ending
 * `by manager.` without a description. Appends to b. */
void hd_board__delegate_text(hd_buf *b, const hd_task *t, const char *actor);

/*
 * Send a delegated task's assignee (t->owner) its message, from actor
 * (from "huddle" when actor is "user"). Part of the delegation's write,
 * not a reflection: it runs in no savepoint of its own and its failure
 * fails the delegation.
 */
int hd_board__delegate_note(
    hd_store *st, const hd_task *t, const char *actor, hd_err *err);

/*
 * Tell a rejected task's owner why (hd_board_verdict): a task_update
 * message `Task #5 "W" was rejected by reviewer: <reasons>` from actor
 * (from "huddle" for a user or the gate). Part of the verdict's write:
 * its failure fails the verdict.
 */
int hd_board__reject_note(hd_store *st, const hd_task *t, const char *actor,
    const char *reasons, hd_err *err);

/*
 * Reflect a change into the room and the leader's mailbox. Runs inside the
 * board write's transaction, after the change; never fails: a post or
 * message that fails is rolled back to its savepoint and logged with
 * hd_log_warn.
 */
void hd_board__reflect(hd_store *st, const hd_board__change *c);

#endif
