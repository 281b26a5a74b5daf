/*
 * envelope.h -- how a room post is delivered to a runtime (SPEC 5), byte
 * for byte:
 *
 *   [Inter-session message · from=<author> · kind=<kind> · seq=<seq> · isUser=false]
 *   | <body line 1>
 *   | <body line 2>
 *
 * The body is split on '\n' only; every line, empty ones included, gets
 * "| "; an empty body yields a single "| " line. Before splitting, every
 * embedded header -- '[' followed by "inter-session message" (ASCII
 * case-insensitive) through the next ']' (possibly on a later line) -- is
 * replaced by "[peer-quoted header]"; an opener with no later ']' is left
 * alone. So the output has exactly one header line, the first.
 */
#ifndef HUDDLE_ENVELOPE_H
#define HUDDLE_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

/* The largest envelope: a 100000-byte body of newlines triples (each
 * becomes "\n| "), plus the header. Over it, hd_envelope_wrap gives
 * HD_ETOOBIG. */
#define HD_ENVELOPE_MAX (3 * 100000 + 1024)

/*
 * Wrap body (body_len bytes, may contain NULs only if the caller allows)
 * as the envelope above. *out is malloc'd and NUL-terminated; free() it.
 * Returns 0, HD_ENOMEM or HD_ETOOBIG.
 */
int hd_envelope_wrap(char **out, const char *author, const char *kind,
    int64_t seq, const char *body, size_t body_len, hd_err *err);

/*
 * The same envelope appended to b, within b's own limit (an append past
 * it leaves b failed, as any hd_buf append): a prompt of many posts is
 * built without an allocation per post. Returns 0, or HD_ENOMEM when the
 * body could not be prepared; b's state says whether the append fit.
 */
int hd_envelope_append(hd_buf *b, const char *author, const char *kind,
    int64_t seq, const char *body, size_t body_len, hd_err *err);

/* The defanging step alone: a malloc'd copy of body with every embedded
 * header replaced by "[peer-quoted header]". */
int hd_envelope_defang(char **out, size_t *outlen, const char *body,
    size_t body_len, hd_err *err);

#endif
