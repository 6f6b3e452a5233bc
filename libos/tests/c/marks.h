/* What the storage rows' programs (iobench.c, iotree.c) share: the
 * time-stamp counter (guest instructions under -icount shift=0), the
 * marker the benchmark harness's QEMU plugin counts instructions between
 * (bench/profile/insn_count.c, xtask/src/bench/marks.rs), and the
 * harness's 1000-instruction calibration loop. */
#include <stdint.h>

static inline uint64_t now(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* The plugin's marker (66 87 db): a no-op for the CPU. */
static inline void mark(void)
{
	__asm__ volatile("xchg %%bx, %%bx" ::: "memory");
}

static uint64_t calib(long n)
{
	uint64_t t = now();
	for (long i = 0; i < n; i++)
		__asm__ volatile(".rept 998\n nop\n .endr\n" ::: "memory");
	return now() - t;
}
