/* Clocks and sleeps as a glibc program sees them, run unchanged on Linux
 * and on lxrt (libos/tests/clocks.sh compares the output): clock_nanosleep
 * on each sleeping clock, relative and with TIMER_ABSTIME, a deadline
 * already past, the errors for clocks that cannot sleep and for bad
 * times, and the time left when a signal ends a relative sleep. Times are
 * printed only as "in range" verdicts, so the output is exact. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000LL

static long long now(clockid_t id) {
	struct timespec t;
	clock_gettime(id, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec ts(long long ns) {
	struct timespec t = {ns / 1000000000LL, ns % 1000000000LL};
	return t;
}

static const char *verdict(long long took, long long lo, long long hi) {
	return took < lo ? "too short" : took >= hi ? "too long" : "in range";
}

/* Sleeps until `ahead` ns from now on clock `id`, as an absolute deadline;
 * the time taken is measured on CLOCK_MONOTONIC. */
static void absolute(const char *name, clockid_t id, long long ahead) {
	long long start = now(CLOCK_MONOTONIC);
	struct timespec until = ts(now(id) + ahead);
	int r = clock_nanosleep(id, TIMER_ABSTIME, &until, NULL);
	long long took = now(CLOCK_MONOTONIC) - start;
	long long lo = ahead > 0 ? ahead - 2 * MS : 0;
	printf("%s absolute %lld ms: %s, %s\n", name, ahead / MS, r ? strerror(r) : "0",
	       verdict(took, lo, (ahead > 0 ? ahead : 0) + 300 * MS));
}

static void relative(const char *name, clockid_t id, long long ns) {
	long long start = now(CLOCK_MONOTONIC);
	struct timespec t = ts(ns);
	int r = clock_nanosleep(id, 0, &t, NULL);
	long long took = now(CLOCK_MONOTONIC) - start;
	printf("%s relative %lld ms: %s, %s\n", name, ns / MS, r ? strerror(r) : "0",
	       verdict(took, ns, ns + 300 * MS));
}

/* The raw call, so that glibc's own checks do not answer for lxrt. */
static void raw(const char *what, long id, long flags, long sec, long nsec) {
	struct timespec t = {sec, nsec};
	long r = syscall(SYS_clock_nanosleep, id, flags, &t, NULL);
	printf("clock_nanosleep %s: %s\n", what, r == 0 ? "0" : strerror(errno));
}

static void on_usr1(int sig) { (void)sig; }

/* A relative sleep of 2 s ended after ~200 ms by a child's signal. */
static void interrupted(const char *what, int abs) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pid_t p = fork();
	if (p == 0) {
		usleep(200000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	struct timespec t = ts(2000 * MS), left = {-7, -7};
	if (abs)
		t = ts(now(CLOCK_MONOTONIC) + 2000 * MS);
	long long start = now(CLOCK_MONOTONIC);
	int r = clock_nanosleep(CLOCK_MONOTONIC, abs ? TIMER_ABSTIME : 0, &t, &left);
	long long took = now(CLOCK_MONOTONIC) - start;
	long long rem = left.tv_sec * 1000000000LL + left.tv_nsec;
	printf("%s: %s after %s; ", what, r ? strerror(r) : "0", verdict(took, 150 * MS, 1500 * MS));
	if (abs)
		printf("remaining time %s\n", left.tv_sec == -7 && left.tv_nsec == -7 ? "untouched" : "written");
	else
		printf("remaining time %s\n", verdict(rem + took, 1900 * MS, 2100 * MS));
	waitpid(p, NULL, 0);

	/* nanosleep itself, the same way. */
	if (!abs) {
		p = fork();
		if (p == 0) {
			usleep(200000);
			kill(getppid(), SIGUSR1);
			_exit(0);
		}
		t = ts(2000 * MS);
		start = now(CLOCK_MONOTONIC);
		r = nanosleep(&t, &left);
		took = now(CLOCK_MONOTONIC) - start;
		rem = left.tv_sec * 1000000000LL + left.tv_nsec;
		printf("nanosleep interrupted: %s; remaining time %s\n", r ? strerror(errno) : "0",
		       verdict(rem + took, 1900 * MS, 2100 * MS));
		waitpid(p, NULL, 0);
	}
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	absolute("CLOCK_MONOTONIC", CLOCK_MONOTONIC, 200 * MS);
	absolute("CLOCK_REALTIME", CLOCK_REALTIME, 200 * MS);
	absolute("CLOCK_BOOTTIME", CLOCK_BOOTTIME, 200 * MS);
	absolute("CLOCK_MONOTONIC", CLOCK_MONOTONIC, -10 * MS);
	absolute("CLOCK_REALTIME", CLOCK_REALTIME, -10 * MS);
	relative("CLOCK_MONOTONIC", CLOCK_MONOTONIC, 100 * MS);
	relative("CLOCK_REALTIME", CLOCK_REALTIME, 100 * MS);
	relative("CLOCK_BOOTTIME", CLOCK_BOOTTIME, 100 * MS);

	raw("CLOCK_THREAD_CPUTIME_ID", CLOCK_THREAD_CPUTIME_ID, 0, 0, 1000);
	raw("CLOCK_MONOTONIC_RAW", CLOCK_MONOTONIC_RAW, 0, 0, 1000);
	raw("CLOCK_REALTIME_COARSE", CLOCK_REALTIME_COARSE, 0, 0, 1000);
	raw("CLOCK_MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE, 0, 0, 1000);
	raw("clock 10", 10, 0, 0, 1000);
	raw("clock 12", 12, 0, 0, 1000);
	raw("clock 1000", 1000, 0, 0, 1000);
	raw("nanoseconds 1000000000", CLOCK_MONOTONIC, 0, 0, 1000000000);
	raw("nanoseconds -1", CLOCK_MONOTONIC, 0, 0, -1);
	raw("seconds -1", CLOCK_MONOTONIC, 0, -1, 0);
	raw("absolute seconds -1", CLOCK_MONOTONIC, TIMER_ABSTIME, -1, 0);
	raw("absolute 0", CLOCK_MONOTONIC, TIMER_ABSTIME, 0, 0);
	raw("zero", CLOCK_MONOTONIC, 0, 0, 0);

	struct timespec t;
	printf("clock_gettime clock 10: %s\n", syscall(SYS_clock_gettime, 10, &t) ? strerror(errno) : "0");
	printf("clock_gettime clock 1000: %s\n", syscall(SYS_clock_gettime, 1000, &t) ? strerror(errno) : "0");
	printf("clock_getres clock 10: %s\n", syscall(SYS_clock_getres, 10, &t) ? strerror(errno) : "0");
	long r = syscall(SYS_clock_getres, CLOCK_MONOTONIC, &t);
	printf("clock_getres CLOCK_MONOTONIC: %s, %ld ns\n", r ? strerror(errno) : "0", t.tv_nsec);

	interrupted("relative sleep interrupted", 0);
	interrupted("absolute sleep interrupted", 1);
	return 0;
}
