/* Which thread a signal goes to: a process-directed one (kill) to a
 * thread that does not block it, even when the first blocks it; one
 * waited for with sigwaitinfo to the waiting thread; a thread-directed one
 * (tgkill) only to its thread. Nothing printed depends on ids or timing. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t ran_in;
static pid_t main_tid, second_tid;

static void handler(int sig) {
    (void)sig;
    ran_in = gettid();
}

static const char *who(pid_t t) {
    return t == main_tid ? "the first thread" : t == second_tid ? "the second thread" : t ? "another" : "nobody";
}

static void block(int sig, int how) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(how, &s, NULL);
}

static volatile int stage;

static void *second(void *arg) {
    (void)arg;
    second_tid = gettid();
    block(SIGUSR1, SIG_UNBLOCK);
    /* Waits in a call until the handler has run (here or elsewhere). */
    stage = 1;
    while (!ran_in)
        pause();
    return NULL;
}

/* The same, asleep in a futex wait instead. */
static void *futex_sleeper(void *arg) {
    (void)arg;
    second_tid = gettid();
    block(SIGUSR1, SIG_UNBLOCK);
    static uint32_t word;
    stage = 1;
    while (!ran_in)
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

static void *waiter(void *arg) {
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    stage = 2;
    int sig = sigwaitinfo(&s, NULL);
    printf("sigwaitinfo in the second thread: %s\n", sig == SIGUSR2 ? "SIGUSR2" : strerror(-sig));
    return NULL;
}

int main(void) {
    main_tid = gettid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGUSR1, &sa, NULL);
    struct timespec ms = {0, 20 * 1000 * 1000};

    /* kill to the process, the first thread blocking it. */
    block(SIGUSR1, SIG_BLOCK);
    pthread_t t;
    pthread_create(&t, NULL, second, NULL);
    while (!stage)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL);
    kill(getpid(), SIGUSR1);
    pthread_join(t, NULL);
    printf("kill, first blocking: handler ran in %s\n", who(ran_in));
    ran_in = 0;
    stage = 0;
    pthread_create(&t, NULL, futex_sleeper, NULL);
    while (!stage)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL);
    kill(getpid(), SIGUSR1);
    pthread_join(t, NULL);
    printf("kill, first blocking, second in a futex wait: handler ran in %s\n", who(ran_in));

    /* sigwaitinfo in a second thread, every thread blocking SIGUSR2. */
    block(SIGUSR2, SIG_BLOCK);
    stage = 0;
    pthread_create(&t, NULL, waiter, NULL);
    while (!stage)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL);
    kill(getpid(), SIGUSR2);
    pthread_join(t, NULL);

    /* tgkill to the first thread, which blocks it: not run by another. */
    ran_in = 0;
    stage = 0;
    pthread_create(&t, NULL, second, NULL);
    while (!stage)
        nanosleep(&ms, NULL);
    syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
    for (int i = 0; i < 5; i++)
        nanosleep(&ms, NULL);
    printf("tgkill to the blocking first thread: ran in %s while blocked\n", who(ran_in));
    block(SIGUSR1, SIG_UNBLOCK);
    printf("after unblocking: ran in %s\n", who(ran_in));
    pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
    return 0;
}
