/*
 * What the Linux benchmark programs (`bench.c`, `netbench.c`) share: the
 * clock, and the command line `PROGRAM NAME ITERATIONS TRIALS` that runs
 * one experiment and prints `BENCH <name> <iterations> <total>` per trial,
 * where total is the rdtsc difference over all iterations (under QEMU's
 * `-icount shift=0` the TSC advances once per guest instruction, so totals
 * are guest instructions; xtask/src/bench/mod.rs reads the lines).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t now(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* warmup: iterations of an untimed round before the trials, so the first
 * trial does not pay for what the first round of an experiment sets up
 * (Veneer's select rows do the same). */
struct bench {
	const char *name;
	uint64_t (*run)(long);
	long warmup;
};

/* Runs the experiment argv[1] of `benches` (after `setup`, if any). */
static int bench_main(const char *program, const struct bench *benches,
		      size_t count, void (*setup)(void), int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s NAME ITERATIONS TRIALS\n", program);
		return 2;
	}
	long n = atol(argv[2]), trials = atol(argv[3]);
	for (size_t b = 0; b < count; b++) {
		if (strcmp(benches[b].name, argv[1]))
			continue;
		if (setup)
			setup();
		if (benches[b].warmup)
			benches[b].run(benches[b].warmup);
		for (long t = 0; t < trials; t++) {
			uint64_t total = benches[b].run(n);
			printf("BENCH %s %ld %llu\n", argv[1], n,
			       (unsigned long long)total);
			fflush(stdout);
		}
		return 0;
	}
	fprintf(stderr, "%s: unknown experiment %s\n", program, argv[1]);
	return 2;
}
