/* Stress (Veneer only, never run on the host): forks until fork fails
 * (RLIMIT_NPROC: linux.sh runs it under ulimit -u 1020, the size of the
 * environment table before it had 4,096 slots), checks that the
 * failure is EAGAIN and that every child forked so far runs, kills them
 * all, reaps them, and forks again. Prints one verdict line per check. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX 4096

int main(void)
{
    static pid_t kids[MAX];
    int n = 0, err = 0;
    /* Each child writes a byte once it runs. */
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    while (n < MAX) {
        pid_t p = fork();
        if (p < 0) {
            err = errno;
            break;
        }
        if (p == 0) {
            close(fds[0]);
            char c = 'r';
            if (write(fds[1], &c, 1) != 1)
                _exit(2);
            for (;;)
                pause();
        }
        kids[n++] = p;
    }
    close(fds[1]);
    printf("forkfull: forked %d children, then fork failed with %s\n", n, err ? strerror(err) : "nothing");
    int seen = 0;
    char buf[256];
    while (seen < n) {
        ssize_t r = read(fds[0], buf, sizeof buf);
        if (r <= 0)
            break;
        seen += r;
    }
    printf("forkfull: %s of the children ran\n", seen == n ? "every one" : "NOT every one");
    for (int i = 0; i < n; i++)
        kill(kids[i], SIGKILL);
    int reaped = 0, st;
    while (wait(&st) > 0)
        reaped++;
    printf("forkfull: reaped %s\n", reaped == n ? "every child" : "NOT every child");
    pid_t p = fork();
    if (p == 0)
        _exit(42);
    waitpid(p, &st, 0);
    printf("forkfull: fork afterwards %s\n", p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 42 ? "works" : "FAILS");
    printf("forkfull: %s\n", err == EAGAIN && seen == n && reaped == n && p > 0 ? "ok" : "FAILED");
    return 0;
}
