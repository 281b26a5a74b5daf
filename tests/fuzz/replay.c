/*
 * replay.c -- runs a fuzz target without libFuzzer, as a plain ctest
 * (fuzz/<name>): every seed, then REPLAY_RUNS inputs glued at random from
 * the target's tokens and random bytes (a fixed seed, so a failure
 * repeats), then any files named on the command line (crash inputs from
 * scripts/fuzz.sh). The target abort()s on a violation.
 * `replay_<name> --write-seeds DIR` writes each seed to DIR/seed-<n>
 * instead, to (re)make tests/fuzz/corpus/fuzz-<name>/ for libFuzzer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define REPLAY_RUNS 20000
#define REPLAY_MAX 512

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static int
replay_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		perror(path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static size_t
seed_len(const char *s)
{
	/* a seed may begin with a NUL selector byte */
	return s[0] == '\0' ? 1 + strlen(s + 1) : strlen(s);
}

static int
write_seeds(const char *dir)
{
	char path[4096];
	FILE *f;
	int i;

	for (i = 0; hd_fuzz_seeds != NULL && hd_fuzz_seeds[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/seed-%02d", dir, i);
		if ((f = fopen(path, "wb")) == NULL ||
		    fwrite(hd_fuzz_seeds[i], 1, seed_len(hd_fuzz_seeds[i]), f) !=
			seed_len(hd_fuzz_seeds[i])) {
			perror(path);
			return 1;
		}
		fclose(f);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	uint8_t buf[REPLAY_MAX + 64];
	size_t ntok = 0, n, len, i;
	int run, seeds = 0;

	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seeds(argv[2]);
	if (argc > 1) {
		for (i = 1; i < (size_t)argc; i++)
			if (replay_file(argv[i]) != 0)
				return 1;
		return 0;
	}
	if (hd_fuzz_seeds != NULL)
		for (; hd_fuzz_seeds[seeds] != NULL; seeds++) {
			const char *s = hd_fuzz_seeds[seeds];

			LLVMFuzzerTestOneInput((const uint8_t *)s, seed_len(s));
		}
	if (hd_fuzz_tokens != NULL)
		while (hd_fuzz_tokens[ntok] != NULL)
			ntok++;
	for (run = 0; run < REPLAY_RUNS; run++) {
		len = 0;
		n = next_rand() % 24;
		for (i = 0; i < n && len < REPLAY_MAX; i++) {
			if (ntok > 0 && next_rand() % 4 != 0) {
				const char *t =
				    hd_fuzz_tokens[next_rand() % ntok];
				size_t tl = strlen(t);

				if (len + tl > REPLAY_MAX)
					break;
				memcpy(buf + len, t, tl);
				len += tl;
			} else
				buf[len++] = (uint8_t)next_rand();
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf(
	    "replayed %d seeds and %d generated inputs\n", seeds, REPLAY_RUNS);
	return 0;
}
