/* The thread benchmark rows' program on both sides: the code of
 * bench/linux/threads.h as a static glibc program, which the Linux
 * benchmark initramfs holds as /bin/threadbench and bench_libos runs under
 * lxrt:
 * `threadbench NAME ITERATIONS TRIALS` prints `BENCH NAME ITERATIONS TOTAL`
 * per trial. */
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

#include "../../../bench/linux/threads.h"

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long n = atol(argv[2]), trials = atol(argv[3]);
	uint64_t (*run)(long) = !strcmp(argv[1], "thread") ? b_thread
			       : !strcmp(argv[1], "futex_threads") ? b_futex_threads
								    : NULL;
	if (!run)
		return 2;
	for (long t = 0; t < trials; t++) {
		uint64_t total = run(n);
		if (total == 0)
			return 1;
		printf("BENCH %s %ld %llu\n", argv[1], n, (unsigned long long)total);
		fflush(stdout);
	}
	return 0;
}
