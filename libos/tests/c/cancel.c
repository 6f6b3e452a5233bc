// link: dynamic
/* glibc's internal signals (issue 29: a dynamically linked program that
 * cancelled a thread hung): pthread_cancel sends SIGCANCEL (32) to the
 * thread, which unwinds it at a cancellation point (pause, read, nanosleep,
 * a condition wait) or at once when asynchronous; setuid/setgid in a
 * threaded program send SIGSETXID (33) to every other thread, each of
 * which makes the call and reports back. */
#define _GNU_SOURCE
#include "show.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static volatile int cleaned;

static void cleanup(void *arg)
{
    (void)arg;
    cleaned++;
}

static void *in_pause(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, 0);
    for (;;)
        pause();
    pthread_cleanup_pop(0);
    return 0;
}

static void *in_read(void *arg)
{
    (void)arg;
    char b;
    pthread_cleanup_push(cleanup, 0);
    for (;;)
        if (read(fds[0], &b, 1) < 0)
            break;
    pthread_cleanup_pop(0);
    return 0;
}

static void *in_sleep(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, 0);
    for (;;)
        sleep(100);
    pthread_cleanup_pop(0);
    return 0;
}

static void unlock(void *arg)
{
    (void)arg;
    cleaned++;
    pthread_mutex_unlock(&m);
}

static void *in_cond(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock, 0);
    for (;;)
        pthread_cond_wait(&c, &m);
    pthread_cleanup_pop(0);
    return 0;
}

static volatile int spinning;

static void *in_spin(void *arg)
{
    (void)arg;
    int old;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    spinning = 1;
    for (;;)
        ;
    return 0;
}

static void cancel(const char *what, void *(*body)(void *))
{
    pthread_t t;
    void *ret = 0;
    cleaned = 0;
    pthread_create(&t, 0, body, 0);
    usleep(50000);
    int r = pthread_cancel(t);
    int j = pthread_join(t, &ret);
    printf("%s: cancel %d, join %d, cancelled %d, cleanups %d\n", what, r, j, ret == PTHREAD_CANCELED,
           cleaned);
}

static void *waiter(void *arg)
{
    (void)arg;
    pause();
    return 0;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    if (pipe(fds))
        return 1;
    cancel("pause", in_pause);
    cancel("read", in_read);
    cancel("sleep", in_sleep);
    cancel("condition wait", in_cond);
    cancel("asynchronous", in_spin);

    /* A thread that has disabled cancellation runs on until it enables it. */
    pthread_t t;
    pthread_create(&t, 0, waiter, 0);
    usleep(20000);
    /* setuid/setgid reach every thread (SIGSETXID) and return. */
    printf("setgid: %d\n", setgid(getgid()));
    printf("setuid: %d\n", setuid(getuid()));
    printf("setresuid: %d\n", setresuid(-1, -1, -1));
    printf("setresgid: %d\n", setresgid(-1, -1, -1));
    printf("setreuid: %d\n", setreuid(-1, -1));
    printf("setgroups: %d\n", setgroups(0, 0));
    uid_t r = 9, e = 9, s = 9;
    int got = getresuid(&r, &e, &s);
    printf("getresuid: %d %d %d %d\n", got, r, e, s);
    show("getresuid, bad pointer", getresuid(&r, (uid_t *)8, &s));
    show("getgroups(-1)", syscall(SYS_getgroups, -1, 0));
    show("setgroups(65537)", setgroups(65537, 0));
    gid_t one = 0;
    show("setgroups, bad pointer", syscall(SYS_setgroups, 1, (gid_t *)8));
    show("setgroups(1)", setgroups(1, &one));
    pthread_cancel(t);
    pthread_join(t, 0);
    printf("done\n");
    return 0;
}
