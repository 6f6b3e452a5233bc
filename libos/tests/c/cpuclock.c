#define _GNU_SOURCE
/* CPU-time clocks by id (CPython's test_pthread_getcpuclockid failed:
 * clock_gettime answered EINVAL for every dynamic clock): a thread's clock
 * from pthread_getcpuclockid, a process's from clock_getcpuclockid, the
 * caller's and a child's, each advancing with work; ids that name nothing
 * are EINVAL. Compared with the host. */
#include "show.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long read_ns(clockid_t c)
{
    struct timespec t;
    if (clock_gettime(c, &t))
        return -1;
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static void burn(void)
{
    long long end = read_ns(CLOCK_MONOTONIC) + 50000000;
    while (read_ns(CLOCK_MONOTONIC) < end)
        ;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    clockid_t me;
    show("pthread_getcpuclockid", -pthread_getcpuclockid(pthread_self(), &me));
    printf("not CLOCK_THREAD_CPUTIME_ID: %d\n", me != CLOCK_THREAD_CPUTIME_ID);
    long long a = read_ns(me);
    burn();
    long long b = read_ns(me);
    printf("the thread's clock reads and advances: %d\n", a >= 0 && b > a);
    struct timespec res;
    show("clock_getres of it", clock_getres(me, &res));
    clockid_t proc;
    show("clock_getcpuclockid(0)", -clock_getcpuclockid(0, &proc));
    printf("the process's clock reads: %d\n", read_ns(proc) > 0);
    pid_t kid = fork();
    if (kid == 0) {
        burn();
        pause();
        _exit(0);
    }
    usleep(300000);
    clockid_t other;
    show("clock_getcpuclockid(child)", -clock_getcpuclockid(kid, &other));
    printf("the child's clock reads: %d\n", read_ns(other) > 0);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    /* ~pid << 3 | kind: kind 3 is none; a thread that is not ours. */
    show("kind 3", clock_gettime((clockid_t)((~0u << 3) | 3), &res));
    show("a missing thread", clock_gettime((clockid_t)((~999999u << 3) | 6), &res));
    show("a missing process", clock_gettime((clockid_t)((~999999u << 3) | 2), &res));
    show("nanosleep on the thread's clock", -clock_nanosleep(me, 0, &(struct timespec){0, 1000}, NULL));
    return 0;
}
