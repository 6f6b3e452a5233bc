#define _GNU_SOURCE
/* sigwait in the first thread while another thread sends the process a
 * signal every thread blocks (CPython's test_sigwait_thread hung): the
 * waiter takes it, and nothing else happens to it. Then the same with the
 * roles swapped: a second thread waits, the first sends. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void *kill_later(void *arg)
{
    (void)arg;
    usleep(200000);
    kill(getpid(), SIGUSR1);
    return NULL;
}

static void *wait_for_it(void *arg)
{
    sigset_t *set = arg;
    int sig = 0;
    sigwait(set, &sig);
    printf("second thread's sigwait: %d\n", sig);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t t;
    pthread_create(&t, NULL, kill_later, NULL);
    int sig = 0;
    sigwait(&set, &sig);
    printf("first thread's sigwait: %d\n", sig);
    pthread_join(t, NULL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    printf("unblocked: nothing pending\n");

    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_create(&t, NULL, wait_for_it, &set);
    usleep(200000);
    kill(getpid(), SIGUSR1);
    pthread_join(t, NULL);
    sigset_t pending;
    sigpending(&pending);
    printf("still pending: %d\n", sigismember(&pending, SIGUSR1));
    return 0;
}
