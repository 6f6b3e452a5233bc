#define _GNU_SOURCE
/* Two POSIX timers sharing one real-time signal: each expiry is its own
 * queued signal (Linux queues one per timer), so both reach the program,
 * each with its timer's id and value, first the one that fired first;
 * Veneer merged them while the signal was pending and the first was
 * lost. Taken by sigwaitinfo, then by a handler. The same timer firing
 * again while its signal is pending is still an overrun, not a second
 * signal. Each line is compared with the host. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static timer_t make(int sig, int value)
{
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = sig};
    ev.sigev_value.sival_int = value;
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    return t;
}

static void arm(timer_t t, long ms, long every_ms)
{
    struct itimerspec its = {.it_value = {0, ms * 1000000}, .it_interval = {0, every_ms * 1000000}};
    timer_settime(t, 0, &its, NULL);
}

/* Takes a signal of `set` without waiting; prints the error if none. */
static int take(const char *what, int i, sigset_t *set, siginfo_t *si)
{
    struct timespec zero = {0, 0};
    int r = sigtimedwait(set, si, &zero);
    if (r < 0)
        printf("%s %d: %s\n", what, i, strerrorname_np(errno));
    return r;
}

static volatile int order[4], nhandled;

static void handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_TIMER && nhandled < 4)
        order[nhandled++] = si->si_value.sival_int;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    int sig = SIGRTMIN + 1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, NULL);

    timer_t a = make(sig, 1), b = make(sig, 2);
    arm(a, 10, 0);
    arm(b, 30, 0);
    usleep(100000);
    for (int i = 0; i < 3; i++) {
        siginfo_t si;
        if (take("take", i, &set, &si) == sig)
            printf("take %d: SI_TIMER %d, value %d, the timer's id %s, overrun %d\n", i,
                   si.si_code == SI_TIMER, si.si_value.sival_int,
                   si.si_timerid == (int)(long)(si.si_value.sival_int == 1 ? a : b) ? "yes" : "no",
                   si.si_overrun);
    }

    /* A periodic timer and a one-shot on the same signal: the periodic
     * one's repeats while pending are overruns; the one-shot is queued. */
    arm(a, 5, 5);
    arm(b, 20, 0);
    usleep(100000);
    for (int i = 0; i < 2; i++) {
        siginfo_t si;
        if (take("periodic take", i, &set, &si) == sig)
            printf("periodic take %d: value %d, overruns %s\n", i, si.si_value.sival_int,
                   si.si_overrun >= 5 ? "5 or more" : si.si_overrun == 0 ? "none" : "a few");
    }
    arm(a, 0, 0);

    /* To a handler: both run, in the order the timers fired. */
    struct sigaction sa = {.sa_sigaction = handler, .sa_flags = SA_SIGINFO};
    sigaction(sig, &sa, NULL);
    arm(b, 10, 0);
    arm(a, 30, 0);
    usleep(100000);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("handler ran %d times, values %d %d\n", nhandled, order[0], order[1]);
    timer_delete(a);
    timer_delete(b);
    return 0;
}
