/*
 * fuzz.h -- what a fuzz target (tests/fuzz/fuzz-<name>.c) defines.
 *
 * With -DHUDDLE_FUZZ=ON (clang) each target is a libFuzzer binary run by
 * scripts/fuzz.sh. In every other build it is linked with replay.c into
 * the ctest fuzz/<name>, which feeds it its seeds and a few thousand
 * inputs generated from its tokens, so the checks run on every `make
 * test`. A target checks its own invariants and abort()s on a violation.
 */
#ifndef HD_FUZZ_H
#define HD_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional, NULL-terminated: inputs to replay as they are, and pieces the
 * replay glues together at random. Weak, so a target may omit them. A
 * seed is never empty: one that starts with a NUL is that NUL (a selector
 * byte) followed by a C string. */
extern const char *const hd_fuzz_seeds[] __attribute__((weak));
extern const char *const hd_fuzz_tokens[] __attribute__((weak));

#endif
