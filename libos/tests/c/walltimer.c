#define _GNU_SOURCE
/* An absolute CLOCK_REALTIME timer (TIMER_ABSTIME) follows the wall clock
 * when clock_settime moves it, as on Linux; a relative one and a
 * monotonic one do not. Veneer turned the absolute time into a delay
 * when the timer was armed, so a clock set forward past the deadline
 * left it waiting, and one set back made it fire early. Checks itself
 * (Veneer only: the host's clock is not this test's to set). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failed;

static void check(const char *what, int ok)
{
    printf("%s%s\n", ok ? "" : "FAIL: ", what);
    failed |= !ok;
}

static timer_t make(clockid_t clock, int sig, int value)
{
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = sig};
    ev.sigev_value.sival_int = value;
    timer_t t;
    timer_create(clock, &ev, &t);
    return t;
}

static void arm(timer_t t, int flags, struct timespec at)
{
    struct itimerspec its = {.it_value = at};
    timer_settime(t, flags, &its, NULL);
}

static long left_s(timer_t t)
{
    struct itimerspec its;
    timer_gettime(t, &its);
    return its.it_value.tv_sec;
}

/* The value of the next pending timer signal, or -1 if none. */
static int next(sigset_t *set)
{
    struct timespec zero = {0, 0};
    siginfo_t si;
    return sigtimedwait(set, &si, &zero) < 0 ? -1 : si.si_value.sival_int;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    int sig = SIGRTMIN + 2;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, NULL);

    struct timespec wall, mono;
    clock_gettime(CLOCK_REALTIME, &wall);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    timer_t abs = make(CLOCK_REALTIME, sig, 1), rel = make(CLOCK_REALTIME, sig, 2),
            mon = make(CLOCK_MONOTONIC, sig, 3);
    arm(abs, TIMER_ABSTIME, (struct timespec){wall.tv_sec + 20, wall.tv_nsec});
    arm(rel, 0, (struct timespec){20, 0});
    arm(mon, TIMER_ABSTIME, (struct timespec){mono.tv_sec + 20, mono.tv_nsec});

    /* Forward to 0.1 s before the absolute deadline. */
    struct timespec ahead = {wall.tv_sec + 19, wall.tv_nsec + 900000000};
    if (ahead.tv_nsec >= 1000000000) {
        ahead.tv_sec++;
        ahead.tv_nsec -= 1000000000;
    }
    check("clock_settime forward 19.9 s", clock_settime(CLOCK_REALTIME, &ahead) == 0);
    usleep(500000);
    check("the absolute wall-clock timer fired", next(&set) == 1);
    check("and nothing else", next(&set) == -1);
    check("the relative one still has 15 s or more", left_s(rel) >= 15);
    check("the monotonic one still has 15 s or more", left_s(mon) >= 15);

    /* Back by 100 s: an absolute deadline 1 s ahead is now 101 s ahead. */
    clock_gettime(CLOCK_REALTIME, &wall);
    arm(abs, TIMER_ABSTIME, (struct timespec){wall.tv_sec + 1, wall.tv_nsec});
    struct timespec back = {wall.tv_sec - 100, wall.tv_nsec};
    check("clock_settime back 100 s", clock_settime(CLOCK_REALTIME, &back) == 0);
    usleep(1500000);
    check("it did not fire after 1.5 s", next(&set) == -1);
    long left = left_s(abs);
    printf("it has %s left\n", left >= 95 && left <= 101 ? "95 to 101 s" : "another time");
    failed |= !(left >= 95 && left <= 101);
    printf("walltimer: %s\n", failed ? "FAILED" : "ok");
    return failed;
}
