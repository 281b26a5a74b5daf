/*
 * bench-runtime.c -- the cost of running turns through the runtime layer.
 *
 * runtime_scripted: microseconds per scripted turn through
 *   hd_runtime_run_turn (config check, rule match, emitter, estimate,
 *   result) against the bare work of a scripted reply (strstr over the
 *   rules and the cost arithmetic) in the same run. Lower is better; the
 *   ratio is the overhead factor (library / bare).
 * runtime_exec: exec turns per second with a trivial agent
 *   (`#!/bin/sh` + `cat`) through hd_runtime_run_turn against the raw cost
 *   of posix_spawn + pipes + write + read to EOF + waitpid of the same
 *   script, the same number of times, rounds interleaved. Higher is
 *   better; the ratio is library / raw (target >= 0.9).
 *
 * usage: bench_runtime [SCRIPTED_TURNS] [EXEC_TURNS]
 *        (default 200000 and 400)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <huddle/runtime.h>
#include <huddle/util.h>

#include "bench.h"

#define ROUNDS 4

static const char *prompt = "status report, please: what is left?";

static double
bench_scripted(long n, double *bare_us)
{
	const hd_runtime_adapter *rt;
	hd_agent a;
	hd_runtime_turn t;
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	const json_t *rules, *r;
	volatile int64_t sink = 0;
	int64_t t0, lib, bare;
	size_t k;
	long i;

	memset(&a, 0, sizeof(a));
	a.id = (char *)"manager";
	a.team_id = (char *)"dev";
	a.runtime = (char *)"scripted";
	a.runtime_config = json_loads(
	    "{\"rules\": [{\"when\": \"all hands\", \"reply\": \"On my way.\"},"
	    " {\"when\": \"deploy\", \"reply\": \"Deploying.\"},"
	    " {\"when\": \"status\", \"reply\": \"All green, two tasks "
	    "left.\"}],"
	    " \"default\": \"Noted.\"}",
	    0, NULL);
	memset(&t, 0, sizeof(t));
	t.agent = &a;
	t.prompt = prompt;
	if (hd_runtime_find(&rt, "scripted", &err) != 0)
		bench_die("find", &err);

	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		if (hd_runtime_run_turn(&res, rt, &t, NULL, NULL, &err) != 0)
			bench_die("scripted turn", &err);
		sink += res.cost.microcents;
		hd_runtime_result_dispose(&res);
	}
	lib = hd_mono_us() - t0;

	rules = json_object_get(a.runtime_config, "rules");
	t0 = hd_mono_us();
	for (i = 0; i < n; i++) {
		const char *reply = "Noted.";
		hd_runtime_cost c;

		json_array_foreach (rules, k, r) {
			if (strstr(prompt, json_string_value(json_object_get(
					       r, "when"))) != NULL) {
				reply = json_string_value(
				    json_object_get(r, "reply"));
				break;
			}
		}
		hd_runtime_cost_estimate(
		    &c, prompt, strlen(prompt), reply, strlen(reply));
		sink += c.microcents;
	}
	bare = hd_mono_us() - t0;
	json_decref(a.runtime_config);
	(void)sink;
	*bare_us = (double)bare / (double)n;
	return (double)lib / (double)n;
}

static double
bench_exec(long n, const char *dir, double *raw_rate)
{
	const hd_runtime_adapter *rt;
	hd_agent a;
	hd_runtime_turn t;
	hd_runtime_result res;
	hd_err err = HD_ERR_INIT;
	char path[512];
	int64_t t0, lib = 0, raw = 0;
	long i, per = n / ROUNDS > 0 ? n / ROUNDS : 1;
	int round;
	FILE *f;

	snprintf(path, sizeof(path), "%s/agent.sh", dir);
	if ((f = fopen(path, "w")) == NULL)
		bench_die("script", NULL);
	fputs("#!/bin/sh\ncat\n", f);
	fclose(f);
	chmod(path, 0755);

	memset(&a, 0, sizeof(a));
	a.id = (char *)"coder";
	a.team_id = (char *)"dev";
	a.runtime = (char *)"exec";
	a.runtime_config = json_pack("{s:[s]}", "command", path);
	memset(&t, 0, sizeof(t));
	t.agent = &a;
	t.prompt = prompt;
	if (hd_runtime_find(&rt, "exec", &err) != 0)
		bench_die("find", &err);

	for (i = 0; i < 10; i++) /* warm the page cache and the shell */
		bench_raw_turn(path, prompt);
	for (round = 0; round < ROUNDS; round++) {
		t0 = hd_mono_us();
		for (i = 0; i < per; i++)
			bench_raw_turn(path, prompt);
		raw += hd_mono_us() - t0;
		t0 = hd_mono_us();
		for (i = 0; i < per; i++) {
			if (hd_runtime_run_turn(
				&res, rt, &t, NULL, NULL, &err) != 0)
				bench_die("exec turn", &err);
			if (strcmp(res.text, prompt) != 0) {
				fprintf(stderr, "bench: wrong reply\n");
				exit(1);
			}
			hd_runtime_result_dispose(&res);
		}
		lib += hd_mono_us() - t0;
	}
	json_decref(a.runtime_config);
	*raw_rate = (double)(per * ROUNDS) / ((double)raw / 1e6);
	return (double)(per * ROUNDS) / ((double)lib / 1e6);
}

int
main(int argc, char **argv)
{
	long nscripted = argc > 1 ? atol(argv[1]) : 200000;
	long nexec = argc > 2 ? atol(argv[2]) : 400;
	char dir[] = "/tmp/huddle-bench-runtime-XXXXXX";
	char path[600];
	double lib, base;

	if (nscripted < 1 || nexec < 1) {
		fprintf(stderr, "usage: bench_runtime [SCRIPTED_TURNS] "
				"[EXEC_TURNS]\n");
		return 2;
	}
	if (mkdtemp(dir) == NULL)
		bench_die("mkdtemp", NULL);

	lib = bench_scripted(nscripted, &base);
	printf("runtime_scripted: %.2f us/turn | baseline %.3f us/turn | "
	       "ratio %.1f\n",
	    lib, base, lib / base);
	fflush(stdout);

	lib = bench_exec(nexec, dir, &base);
	printf("runtime_exec: %.0f turns/s | baseline %.0f turns/s | "
	       "ratio %.2f\n",
	    lib, base, lib / base);

	snprintf(path, sizeof(path), "%s/agent.sh", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}
