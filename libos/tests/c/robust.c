/* Robust mutexes: a thread that ends holding a PTHREAD_MUTEX_ROBUST mutex
 * (its robust list, set_robust_list) leaves it marked owner-died, so the
 * next locker gets EOWNERDEAD, whether it was already waiting or comes
 * later; the mutex, made consistent, works again. The locks time out
 * rather than hang when the mark is missing. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t m;
static volatile int waiting;

static const char *name(int r) {
    return r == 0 ? "ok" : strerrorname_np(r);
}

static int lock(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 5;
    return pthread_mutex_timedlock(&m, &t);
}

static void *holder(void *arg) {
    pthread_mutex_lock(&m);
    /* With a waiter: end once it sleeps on the mutex. */
    if (arg)
        while (!(__atomic_load_n(&m.__data.__lock, __ATOMIC_SEQ_CST) & 0x80000000u)) {
            struct timespec ms = {0, 1000 * 1000};
            nanosleep(&ms, NULL);
        }
    return NULL; /* Ends holding it. */
}

static void *locker(void *arg) {
    (void)arg;
    int r = lock();
    printf("waiting locker: %s\n", name(r));
    if (r == EOWNERDEAD)
        pthread_mutex_consistent(&m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m, &a);

    pthread_t t;
    pthread_create(&t, NULL, holder, NULL);
    pthread_join(t, NULL);
    int r = lock();
    printf("after the holder ended: %s\n", name(r));
    if (r == EOWNERDEAD)
        printf("consistent: %s\n", name(pthread_mutex_consistent(&m)));
    printf("unlock: %s\n", name(pthread_mutex_unlock(&m)));
    r = lock();
    printf("again: %s\n", name(r));
    pthread_mutex_unlock(&m);

    /* A locker already asleep on it when the holder ends. */
    pthread_t h, l;
    pthread_create(&h, NULL, holder, (void *)1);
    while (!__atomic_load_n(&m.__data.__owner, __ATOMIC_SEQ_CST)) {
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    pthread_create(&l, NULL, locker, NULL);
    pthread_join(h, NULL);
    pthread_join(l, NULL);
    printf("last: %s\n", name(lock()));
    return 0;
}
