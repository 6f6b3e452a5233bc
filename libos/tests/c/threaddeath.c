/* Veneer only: a thread that dies in a way no Linux call makes, killed by
 * the kernel because lxrt's own handler faulted for it (the thread points
 * its gs base, which lxrt finds its state through, at nothing, then makes
 * a call), must still end as a Linux thread ends: pthread_join returns
 * and the robust mutex it held is owner-died. Exit status 0 if so. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m;

static void *die(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    uint64_t nothing = 0x10;
    __asm__ volatile("wrgsbase %0" : : "r"(nothing));
    syscall(SYS_getpid);
    return (void *)1;
}

int main(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m, &a);
    pthread_t t;
    void *r = NULL;
    pthread_create(&t, NULL, die, NULL);
    int joined = pthread_join(t, &r) == 0;
    int lock = pthread_mutex_lock(&m);
    printf("threaddeath: joined: %s; its robust mutex: %s\n", joined ? "yes" : "no",
           lock == EOWNERDEAD ? "EOWNERDEAD" : "not owner-died");
    return joined && lock == EOWNERDEAD ? 0 : 1;
}
