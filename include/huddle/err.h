/*
 * err.h -- error codes and the hd_err message carrier.
 *
 * Every fallible libhuddle function returns 0 (HD_OK) or one of the negative
 * codes below and, on failure, fills the caller's hd_err with a one-line,
 * lower-case message written where the failure was found. Callers in between
 * pass the code up unchanged and never rewrite the message. Only surfaces
 * (CLI, MCP, HTTP) print it.
 */
#ifndef HUDDLE_ERR_H
#define HUDDLE_ERR_H

#include <stddef.h>

/* Append only: never renumber or reuse a code. */
typedef enum {
	HD_OK = 0,
	HD_ERR = -1,	   /* internal failure (I/O, SQLite, ...) */
	HD_EINVAL = -2,	   /* bad input from the caller */
	HD_ENOTFOUND = -3, /* a named thing does not exist */
	HD_EEXISTS = -4,   /* creating something that exists */
	HD_ECONFLICT = -5, /* lost a race: claimed, lock held */
	HD_EREFUSED = -6,  /* a rule says no */
	HD_ETOOBIG = -7,   /* input over a limit */
	HD_EBUSY = -8,	   /* database busy past the retry budget */
	HD_ENOMEM = -9,	   /* allocation failed */
	HD_ETIMEOUT = -10, /* a wait ran out of time */
} hd_code;

#define HD_ERR_MSG_MAX 512

typedef struct hd_err {
	hd_code code;
	char msg[HD_ERR_MSG_MAX];
} hd_err;

#define HD_ERR_INIT {HD_OK, {0}}

#if defined(__GNUC__)
#define HD_PRINTFLIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define HD_PRINTFLIKE(f, a)
#endif

/*
 * Set err (when non-NULL) to code and a formatted message; control
 * characters in the result become spaces so a message is always one line.
 * Returns code, so `return hd_err_set(err, HD_EINVAL, ...)` reads naturally.
 */
int hd_err_set(hd_err *err, hd_code code, const char *fmt, ...)
    HD_PRINTFLIKE(3, 4);

/* Reset err to HD_OK with an empty message. NULL-safe. */
void hd_err_clear(hd_err *err);

/* A short name for a code ("not found", "busy", ...), never NULL. */
const char *hd_code_name(int code);

#endif
