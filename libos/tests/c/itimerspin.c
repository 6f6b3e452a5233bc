/* CPU-bound programs under interval timers must never be ended by the
 * kernel's abort protocol: a child arms ITIMER_REAL, ITIMER_VIRTUAL and
 * ITIMER_PROF with short intervals and, for 2 seconds, spins in plain
 * code, in system calls (getpid, times) and inside its signal handlers
 * (each handler spins a while too: 1 ms, so that the three handlers
 * take less than the 5 ms interval; at 3 ms each the program spent all
 * its time in handlers on Linux and never ended); it must exit
 * normally. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t fired[3];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void spin_for(double s)
{
    double t0 = now();
    while (now() - t0 < s)
        ;
}

static void on_timer(int sig)
{
    fired[sig == SIGALRM ? 0 : sig == SIGVTALRM ? 1 : 2]++;
    spin_for(0.001);
}

static int spinner(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_timer;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGVTALRM, &sa, NULL);
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_REAL, &it, NULL);
    setitimer(ITIMER_VIRTUAL, &it, NULL);
    setitimer(ITIMER_PROF, &it, NULL);
    double t0 = now();
    struct tms tm;
    while (now() - t0 < 2) {
        for (int i = 0; i < 1000; i++)
            syscall(SYS_getpid);
        times(&tm);
        for (volatile int i = 0; i < 200000; i++)
            ;
    }
    return fired[0] > 0 && fired[1] > 0 && fired[2] > 0 ? 0 : 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int round = 0; round < 2; round++) {
        pid_t p = fork();
        if (p == 0)
            _exit(spinner());
        int st;
        waitpid(p, &st, 0);
        if (WIFEXITED(st))
            printf("spinner %d: exited with %d (0: every timer's handler ran)\n", round, WEXITSTATUS(st));
        else
            printf("spinner %d: killed by signal %d\n", round, WTERMSIG(st));
    }
    return 0;
}
