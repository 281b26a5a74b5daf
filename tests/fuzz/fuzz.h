/*
 * fuzz.h -- what a fuzz target (tests/fuzz/fuzz-<name>.c) defines, and the
 * two helpers every target may use.
 *
 * With -DHUDDLE_FUZZ=ON (clang) each target is a libFuzzer binary run by
 * scripts/fuzz.sh. In every other build it is linked with replay.c into
 * the ctest fuzz/<name>, which feeds it its seeds and a few thousand
 * inputs generated from its tokens, so the checks run on every `make
 * test`. A target checks its own invariants and abort()s on a violation
 * (check); a target that feeds its input in pieces cuts it with
 * fuzz_piece, as the exec output and the line reader are.
 */
#ifndef HD_FUZZ_H
#define HD_FUZZ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional, NULL-terminated: inputs to replay as they are, and pieces the
 * replay glues together at random. Weak, so a target may omit them. A
 * seed is never empty: one that starts with a NUL is that NUL (a selector
 * byte) followed by a C string. */
extern const char *const hd_fuzz_seeds[] __attribute__((weak));
extern const char *const hd_fuzz_tokens[] __attribute__((weak));

/* Unless ok: "<program>: violated: what" on stderr, then abort() (the
 * crash libFuzzer reports, and the replay's failure). */
static inline void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: violated: %s\n",
		    program_invocation_short_name, what);
		abort();
	}
}

/* The size of the next piece, at most left, of an input cut into pieces
 * of 1 to 16 bytes: *step starts at a byte the input picks, and the sizes
 * cycle from it. */
static inline size_t
fuzz_piece(size_t *step, size_t left)
{
	size_t n = *step % 16 + 1;

	*step = *step * 5 + 3;
	return n < left ? n : left;
}

#endif
