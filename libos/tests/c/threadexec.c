/* execve from a threaded process ends every other thread (Linux's
 * de_thread): here one asleep in a futex wait and one spinning in calls
 * are running when the first thread execs a shell, which must run alone
 * and keep the pid. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t word;
static volatile int started;

static void *sleeper(void *arg) {
    (void)arg;
    __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&word, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

static void *spinner(void *arg) {
    (void)arg;
    __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&word, __ATOMIC_SEQ_CST))
        getppid();
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, sleeper, NULL);
    pthread_create(&b, NULL, spinner, NULL);
    while (started < 2) {
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%d", getpid());
    char *argv[] = {"/bin/sh", "-c",
                    "[ $$ = $0 ] && echo same pid; sleep 0.2; echo still running; exit 5", pid, NULL};
    execv(argv[0], argv);
    perror("execv");
    return 1;
}
