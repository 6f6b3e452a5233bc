#define _GNU_SOURCE
/* fork from a thread other than the first (CPython's test_forkinthread
 * hung): the child is a copy of the forking thread alone; it writes to a
 * pipe and exits, the first thread reads that and reaps it. Then the child
 * makes a thread of its own and forks again from the first thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];
static pid_t kid;

static void *noop(void *arg)
{
    return arg;
}

static void *fork_here(void *arg)
{
    (void)arg;
    kid = fork();
    if (kid == 0) {
        close(fds[0]);
        /* The child has one thread: it can make another and join it. */
        pthread_t t;
        int ok = pthread_create(&t, NULL, noop, NULL) == 0 && pthread_join(t, NULL) == 0;
        write(fds[1], ok ? "OK" : "no", 2);
        _exit(3);
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    pipe(fds);
    pthread_t t;
    pthread_create(&t, NULL, fork_here, NULL);
    char buf[3] = {0};
    read(fds[0], buf, 2);
    printf("the child wrote %s\n", buf);
    pthread_join(t, NULL);
    int status;
    printf("waitpid: %s\n", waitpid(kid, &status, 0) == kid ? "its pid" : "other");
    printf("exit status %d\n", WEXITSTATUS(status));
    return 0;
}
