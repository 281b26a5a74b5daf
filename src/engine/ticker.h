/*
 * ticker.h (private) -- callbacks the engines run every period on a
 * thread and a store connection of the ticker's own (ticker.c): the
 * exchange's lease renewal. Nothing outside src/engine/ includes this.
 */
#ifndef HD_TICKER_H
#define HD_TICKER_H

#include <stdint.h>

#include <huddle/store.h>

typedef struct hd_ticker hd_ticker;

/* own is the ticker thread's connection to the same home (never the
 * caller's: a connection is one thread's). A tick for which it cannot be
 * opened is skipped (and the open tried again at the next). */
typedef void (*hd_tick_fn)(void *ctx, hd_store *own);

/*
 * Run fn(ctx, own) every period_ms, the first time one period from now,
 * on the ticker thread of home (started on first need, shared by every
 * ticker of that home in this process). NULL when no thread can run it
 * (the caller does without).
 */
hd_ticker *hd_ticker_start(
    const char *home, int64_t period_ms, hd_tick_fn fn, void *ctx);

/* Stop and free t: a tick in flight ends first, and after the return no
 * tick of t runs, ever. NULL-safe. */
void hd_ticker_stop(hd_ticker *t);

#endif
