/*
 * Thread experiments of `libos/tests/c/threadbench.c`, one static program
 * on both sides (Linux's /bin/threadbench; under Veneer's lxrt, run by
 * `bench_libos`): glibc's pthread_create + pthread_join, and a futex
 * ping-pong between two threads of one process.  `now()` is the caller's
 * rdtsc.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *thread_nothing(void *arg)
{
	return arg;
}

/* thread: create a thread that returns at once, join it. */
static uint64_t b_thread(long n)
{
	uint64_t t0 = now();
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_nothing, NULL) != 0)
			return 0;
		pthread_join(t, NULL);
	}
	return now() - t0;
}

static volatile int ping_word;
static long ping_rounds;

static void ping_wait(int want)
{
	while (ping_word != want)
		syscall(SYS_futex, &ping_word, FUTEX_WAIT_PRIVATE, !want, NULL, NULL, 0);
}

static void ping_set(int v)
{
	ping_word = v;
	syscall(SYS_futex, &ping_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *ping_partner(void *arg)
{
	for (long i = 0; i < ping_rounds; i++) {
		ping_wait(1);
		ping_set(0);
	}
	return arg;
}

/* futex_threads: two threads hand a private futex word back and forth
 * (wake, then wait, each way); n counts round trips. */
static uint64_t b_futex_threads(long n)
{
	pthread_t partner;
	ping_word = 0;
	ping_rounds = n;
	if (pthread_create(&partner, NULL, ping_partner, NULL) != 0)
		return 0;
	uint64_t t0 = now();
	for (long i = 0; i < n; i++) {
		ping_set(1);
		ping_wait(0);
	}
	uint64_t t = now() - t0;
	pthread_join(partner, NULL);
	return t;
}
