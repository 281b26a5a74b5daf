/*
 * bench-raw.h -- what the raw-SQLite baselines share.
 *
 * A room post's id is a random version-4 UUID (SPEC 2), so a raw poster
 * doing "the same insert" mints one too, and as cheaply as huddle does
 * (hd_store_uuid): OpenSSL random bytes drawn 4096 at a time, formatted by
 * hand. Sequential ids would be cheaper than the schema allows: they
 * append to the id index instead of landing on a random leaf.
 */
#ifndef HD_BENCH_RAW_H
#define HD_BENCH_RAW_H

#include <stdio.h>
#include <stdlib.h>

#include <huddle/util.h>

#define BENCH_RAW_POOL 4096

/* The next id from pool; *used starts at BENCH_RAW_POOL (empty). */
static inline void
bench_raw_uuid(char out[37], unsigned char pool[BENCH_RAW_POOL], size_t *used)
{
	if (*used + 16 > BENCH_RAW_POOL) {
		if (hd_random_bytes(pool, BENCH_RAW_POOL, NULL) < 0) {
			fprintf(stderr, "bench: raw: no random bytes\n");
			exit(1);
		}
		*used = 0;
	}
	hd_uuid_format(out, pool + *used);
	*used += 16;
}

#endif
