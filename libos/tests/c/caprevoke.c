/* A hostile process revokes every capability it holds with Veneer's own
 * cap_revoke call (number 0x10018; Linux answers it with ENOSYS). What it
 * was lent at fork (the process table's and the shared arena's
 * credentials) must be taken from it alone: its parent and every later
 * process still fork, signal and share files. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define VENEER_CAP_REVOKE 0x10018

static int run_child(int code)
{
    pid_t p = fork();
    if (p < 0) {
        perror("fork");
        return -1;
    }
    if (p == 0)
        _exit(code);
    int st;
    if (waitpid(p, &st, 0) != p)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
    pid_t p = fork();
    if (p == 0) {
        for (long slot = 1; slot < 64; slot++)
            syscall(VENEER_CAP_REVOKE, slot, 0, 0);
        _exit(7);
    }
    int st;
    waitpid(p, &st, 0);
    printf("the revoking child exited with %d\n", WEXITSTATUS(st));
    for (int i = 0; i < 3; i++)
        printf("fork %d afterwards: child exited with %d\n", i, run_child(10 + i));
    /* A grandchild revokes too, while its sibling keeps running. */
    pid_t sleeper = fork();
    if (sleeper == 0) {
        pause();
        _exit(0);
    }
    if (fork() == 0) {
        if (fork() == 0) {
            for (long slot = 1; slot < 64; slot++)
                syscall(VENEER_CAP_REVOKE, slot, 0, 0);
            _exit(0);
        }
        wait(NULL);
        _exit(run_child(3));
    }
    wait(&st);
    printf("a child whose own child revoked still forks: %d\n", WEXITSTATUS(st));
    kill(sleeper, SIGTERM);
    waitpid(sleeper, &st, 0);
    printf("the sibling took SIGTERM: %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    return 0;
}
