/* Stress (Veneer only): an uninvolved process. It wakes every 20 ms until
 * SIGTERM and then reports the longest time it waited past its deadline:
 * blocking, forking or filling memory elsewhere must never stall it. */
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t done;

static void stop(int sig) { done = sig; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
    signal(SIGTERM, stop);
    unsigned long beats = 0;
    double worst = 0, worst_at = 0;
    while (!done) {
        double t0 = now();
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double late = now() - t0 - 0.020;
        if (!done && late > worst) {
            worst = late;
            worst_at = t0;
        }
        beats++;
    }
    /* A stall is a wait beyond 5 s. The CPU is shared with up to 63 busy
     * slice owners, each with a 2 ms slice; and under TCG the guest's clock
     * is the host's, so a host running two such boots on two cores alone
     * has shown waits of up to 3 s. A process the scheduler really starves
     * waits for a whole phase of the run (tens of seconds). */
    /* When it began, in seconds since boot (/proc/uptime's clock, which
     * linux.sh prints at each phase): which phase stalled it. */
    printf("heartbeat: %lu beats, longest wait past the deadline %.0f ms (from %.1f s): %s\n", beats,
           worst * 1000, worst_at, worst < 5.0 ? "no stall" : "STALLED");
    return 0;
}
