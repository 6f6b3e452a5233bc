/* 100 processes wait (FUTEX_WAIT, 20 s timeout) on a word of a shared
 * anonymous mapping; once all have said they are about to wait, the
 * parent wakes 10 and requeues the rest onto a second word with
 * FUTEX_CMP_REQUEUE, then wakes that (and both words again until every
 * waiter has gone, for one that had not yet slept). Every waiter must be
 * woken (FUTEX_WAIT returns 0, none times out), and a process that naps
 * meanwhile is not held up: no futex use stalls anyone but its caller. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 100

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static long futex(uint32_t *w, int op, uint32_t val, void *t, uint32_t *w2, uint32_t val3)
{
    return syscall(SYS_futex, w, op, val, t, w2, val3);
}

int main(void)
{
    uint32_t *words = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (words == MAP_FAILED)
        return 1;
    pid_t kids[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            struct timespec t = {20, 0};
            __atomic_add_fetch(&words[2], 1, __ATOMIC_SEQ_CST);
            long r = futex(&words[0], FUTEX_WAIT, 0, &t, NULL, 0);
            __atomic_add_fetch(&words[3], 1, __ATOMIC_SEQ_CST);
            _exit(r == 0 ? 0 : 1);
        }
        if (kids[i] < 0)
            return 1;
    }
    pid_t napper = fork();
    if (napper == 0) {
        double worst = 0;
        for (int i = 0; i < 20; i++) {
            double t0 = now();
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
            double late = now() - t0 - 0.05;
            if (late > worst)
                worst = late;
        }
        _exit(worst < 2.0 ? 0 : 1);
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    while (__atomic_load_n(&words[2], __ATOMIC_SEQ_CST) < WAITERS)
        nanosleep(&ts, NULL);
    ts.tv_nsec = 300 * 1000 * 1000;
    nanosleep(&ts, NULL);
    long r = futex(&words[0], FUTEX_CMP_REQUEUE, 10, (void *)(uintptr_t)(WAITERS - 10), &words[1], 0);
    ts.tv_nsec = 10 * 1000 * 1000;
    while (__atomic_load_n(&words[3], __ATOMIC_SEQ_CST) < WAITERS) {
        futex(&words[1], FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
        futex(&words[0], FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
        nanosleep(&ts, NULL);
    }
    int returned = 0, st;
    for (int i = 0; i < WAITERS; i++)
        if (waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            returned++;
    int on_time = waitpid(napper, &st, 0) == napper && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("FUTEX_CMP_REQUEUE: %s\n", r >= 0 ? "accepted" : "refused");
    printf("%d waiters of %d woken; a process napping meanwhile was on time: %s\n", returned, WAITERS,
           on_time ? "yes" : "no");
    return 0;
}
