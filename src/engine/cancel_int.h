/*
 * cancel_int.h (private) -- what the conversation engine (conv_engine.c)
 * uses of cancel.c: the registry of its running turns, the watch that
 * polls for cancel requests, and the two transactions that end a
 * cancelled conversation. Nothing outside src/engine/ includes this.
 */
#ifndef HD_CANCEL_INT_H
#define HD_CANCEL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <huddle/cancel.h>

#include "conversation_int.h"

/* ---- the running turns of one engine ---- */

typedef struct hd_conv_slot {
	struct hd_conv_slot *next;
	char conversation_id[HD_CONVERSATION_ID_LEN + 1];
	atomic_int abort; /* the turn's runtime abort flag */
	int cancelled;    /* aborted by a cancel (under the registry lock) */
} hd_conv_slot;

typedef struct hd_conv_turns {
	pthread_mutex_t lock;
	hd_conv_slot *head;
	int closed; /* the engine stops: every turn aborts */
} hd_conv_turns;

void hd_conv__turns_init(hd_conv_turns *t);
void hd_conv__turns_destroy(hd_conv_turns *t);
/* A turn of conversation id starts: s's abort flag is the one its runtime
 * reads, already set when the engine is stopping. */
void hd_conv__turn_enter(hd_conv_turns *t, hd_conv_slot *s, const char *id);
/* The turn ended: 1 when a cancel aborted it. */
int hd_conv__turn_leave(hd_conv_turns *t, hd_conv_slot *s);
/* Abort every turn (the engine stops); later ones start aborted. */
void hd_conv__turns_close(hd_conv_turns *t);

/* ---- the watch ---- */

typedef struct hd_cancel_watch hd_cancel_watch;

/* Poll for cancel requests of the conversations me runs (on a thread
 * with its own connection on home): abort their turns, and end each once
 * none of its messages is running. */
int hd_conv__watch_start(hd_cancel_watch **out, const char *home,
    const hd_conv_owner *me, hd_conv_turns *turns, hd_err *err);
void hd_cancel_watch_stop(hd_cancel_watch *w);

/* ---- ending ---- */

/* A turn stopped by a cancel: its message running -> cancelled and the
 * agent out of its turn (back to idle, not error). */
int hd_conv__cancel_delivery(hd_store *st, const hd_conv_claim *c,
    const hd_conv_owner *me, hd_err *err);

/* End cancelled conversation id (owned by me) once none of its messages
 * runs: *done 1 when it is over (now or before). */
int hd_conv__cancel_end(int *done, hd_store *st, const char *id,
    const hd_conv_owner *me, hd_err *err);

#endif
