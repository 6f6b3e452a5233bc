/* Blocking in one process must not stall another: a child blocks writing
 * into a full pipe that nobody reads, another child spins, and the parent
 * sleeps meanwhile; its sleep must end on time. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t writer = fork();
    if (writer == 0) {
        static char buf[65536];
        memset(buf, 'x', sizeof buf);
        for (;;)
            if (write(fds[1], buf, sizeof buf) < 0)
                _exit(2);
    }
    pid_t spinner = fork();
    if (spinner == 0)
        for (;;)
            ;
    double t0 = now();
    sleep(1);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double slept = now() - t0;
    printf("slept 1.3 s while a child blocked on a full pipe and another spun: %s\n",
           slept >= 1.3 && slept < 10 ? "yes" : "no");
    kill(writer, SIGKILL);
    kill(spinner, SIGKILL);
    int st;
    waitpid(writer, &st, 0);
    printf("writer: %s\n", WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? "killed" : "other");
    waitpid(spinner, &st, 0);
    printf("spinner: %s\n", WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? "killed" : "other");
    return 0;
}
