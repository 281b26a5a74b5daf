/*
 * bench-memory.c -- team memory's search (src/memory/memory.c).
 *
 * memory_search: queries per second through hd_memory_search over N facts
 * (default 100,000; a third private to other agents, a sixth global, a
 * few with tags) in one team, each query two words drawn from the facts'
 * vocabulary, limit 10 -- against the same query run directly on SQLite
 * (the same FTS5 MATCH, the same visibility condition, bm25 order and
 * limit, one prepared statement) on the same database file, in the same
 * run. The raw side gets the quoted terms ready-made; the library builds
 * them from the user's words, checks the reader's membership and copies
 * each row into its structs, which is what the ratio prices.
 *
 * memory_lookup: the p50 and p99 of one turn's memory lookup -- the
 * search a prompt makes for its stimulus (a sentence of ten words, top
 * 5, hd_prompt_build's own call) -- over the same facts.
 *
 * usage: bench_memory [FACTS] [QUERIES]   (default 100000, 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <huddle/memory.h>
#include <huddle/util.h>

#include "bench-raw.h"
#include "bench.h"

#define NWORDS 400

static char words[NWORDS][12];

static unsigned
rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) & 0xffffff;
}

/* a pronounceable made-up word for each slot, so the vocabulary has a
 * long tail like real notes */
static void
make_words(void)
{
	static const char cons[] = "bcdfghklmnprstvz", vow[] = "aeiou";
	unsigned seed = 7;
	int i, k, len;

	for (i = 0; i < NWORDS; i++) {
		len = 2 + (int)(rnd(&seed) % 3);
		for (k = 0; k < len; k++) {
			words[i][2 * k] = cons[rnd(&seed) % 16];
			words[i][2 * k + 1] = vow[rnd(&seed) % 5];
		}
		words[i][2 * len] = '\0';
	}
}

/* a word, skewed towards the common ones */
static const char *
word(unsigned *seed)
{
	unsigned a = rnd(seed) % NWORDS, b = rnd(seed) % NWORDS;

	return words[a < b ? a : b];
}

struct fill {
	int from, to;
};

static int
fill_txn(hd_store *st, void *payload, hd_err *err)
{
	struct fill *f = payload;
	static const char *const agents[] = {"a0", "a1", "a2"};
	const char *tags[] = {"ops"};
	char text[160];
	unsigned seed = (unsigned)f->from + 1;
	hd_fact_spec fs;
	int i, k, rc;

	for (i = f->from; i < f->to; i++) {
		size_t used = 0;

		for (k = 0; k < 12; k++)
			used += (size_t)snprintf(text + used, sizeof(text) - used,
			    "%s%s", k ? " " : "", word(&seed));
		memset(&fs, 0, sizeof(fs));
		fs.team = "bench";
		fs.agent = agents[i % 3];
		fs.text = text;
		fs.scope = i % 3 == 1 ? "agent" : i % 6 == 0 ? "global" : "team";
		fs.tags = tags;
		fs.ntags = i % 10 == 0;
		if ((rc = hd_memory_save(NULL, st, &fs, err)) < 0)
			return rc;
	}
	return 0;
}

static double
run_library(hd_store *st, int n)
{
	hd_memory_query q = {.team = "bench", .agent = "a0", .limit = 10};
	hd_err err = HD_ERR_INIT;
	char text[64];
	unsigned seed = 99;
	hd_facts l;
	int64_t t0;
	size_t hits = 0;
	int i;

	q.text = text;
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%s %s", word(&seed), word(&seed));
		if (hd_memory_search(&l, st, &q, &err) < 0)
			bench_die("search", &err);
		hits += l.n;
		hd_facts_dispose(&l);
	}
	t0 = hd_mono_us() - t0;
	if (hits == 0)
		bench_die("search found nothing", NULL);
	return n / (t0 / 1e6);
}

static double
run_raw(const char *path, int n)
{
	sqlite3_stmt *s;
	sqlite3 *db = bench_raw_open(path, "",
	    "SELECT f.id, f.team_id, f.scope, f.agent_id, f.text, f.tags,"
	    " f.source_agent, f.source_task, f.created_at, f.expires_at,"
	    " bm25(memory_fts, 1.0, 0.5)"
	    " FROM memory_fts JOIN memory_facts f ON f.id = memory_fts.rowid"
	    " WHERE memory_fts MATCH ?1 AND (f.scope = 'global' OR"
	    " (f.team_id = ?2 AND (f.scope = 'team' OR (f.scope = 'agent'"
	    " AND f.agent_id = ?3))))"
	    " AND (f.expires_at IS NULL OR f.expires_at > ?4)"
	    " ORDER BY 11, f.id DESC LIMIT 10",
	    &s);
	char match[64];
	unsigned seed = 99;
	int64_t t0;
	size_t hits = 0;
	int i, rc;

	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		const char *a = word(&seed), *b = word(&seed);

		snprintf(match, sizeof(match), "\"%s\" OR \"%s\"", a, b);
		sqlite3_bind_text(s, 1, match, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, "bench", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, "a0", -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, hd_now_ms());
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			hits++;
		if (rc != SQLITE_DONE) {
			fprintf(stderr, "bench: raw: %s\n", sqlite3_errmsg(db));
			exit(1);
		}
		sqlite3_reset(s);
	}
	t0 = hd_mono_us() - t0;
	sqlite3_finalize(s);
	sqlite3_close(db);
	if (hits == 0)
		bench_die("raw search found nothing", NULL);
	return n / (t0 / 1e6);
}

/* p50 and p99 (microseconds) of a turn's lookup: ten words, top 5 */
static void
run_lookup(hd_store *st, int n, int64_t *p50, int64_t *p99)
{
	hd_memory_query q = {.team = "bench", .agent = "a1", .limit = 5};
	hd_err err = HD_ERR_INIT;
	int64_t *lat = calloc((size_t)n, sizeof(int64_t)), t0;
	char text[200];
	unsigned seed = 5;
	hd_facts l;
	int i, k;

	if (lat == NULL)
		bench_die("out of memory", NULL);
	q.text = text;
	for (i = 0; i < n; i++) {
		size_t used = 0;

		for (k = 0; k < 10; k++)
			used += (size_t)snprintf(text + used, sizeof(text) - used,
			    "%s%s", k ? " " : "Please look at ", word(&seed));
		t0 = hd_mono_us();
		if (hd_memory_search(&l, st, &q, &err) < 0)
			bench_die("lookup", &err);
		lat[i] = hd_mono_us() - t0;
		hd_facts_dispose(&l);
	}
	qsort(lat, (size_t)n, sizeof(int64_t), bench_cmp_i64);
	*p50 = lat[n / 2];
	*p99 = lat[n * 99 / 100];
	free(lat);
}

int
main(int argc, char **argv)
{
	char home[] = "/tmp/huddle-bench-XXXXXX", path[64];
	int nfacts = argc > 1 ? atoi(argv[1]) : 100000;
	int nq = argc > 2 ? atoi(argv[2]) : 2000;
	hd_err err = HD_ERR_INIT;
	struct fill f;
	hd_store *st;
	double lib, raw;
	int64_t p50, p99;

	if (nfacts <= 0 || nq <= 0 || mkdtemp(home) == NULL)
		return 2;
	make_words();
	st = bench_team_home(home, "bench", "a", 3, 1);
	for (f.from = 0; f.from < nfacts; f.from = f.to) {
		f.to = f.from + 5000 < nfacts ? f.from + 5000 : nfacts;
		if (hd_store_atomic(st, fill_txn, &f, &err) < 0)
			bench_die("fill", &err);
	}
	snprintf(path, sizeof(path), "%s/huddle.db", home);
	/* Alternate so neither side always runs on a warmer cache. */
	raw = run_raw(path, nq / 2);
	lib = run_library(st, nq / 2);
	raw = (raw + run_raw(path, nq / 2)) / 2;
	lib = (lib + run_library(st, nq / 2)) / 2;
	printf("memory_search: %.0f queries/s over %d facts | baseline raw "
	       "sqlite %.0f queries/s | ratio %.2fx\n",
	    lib, nfacts, raw, lib / raw);
	run_lookup(st, nq, &p50, &p99);
	printf("memory_lookup: a turn's top 5 over %d facts: p50 %lld us, "
	       "p99 %lld us\n",
	    nfacts, (long long)p50, (long long)p99);
	hd_store_close(st);
	return bench_rm_rf(home) == 0 ? 0 : 1;
}
