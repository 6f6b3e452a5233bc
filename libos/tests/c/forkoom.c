/* A process that forks without end while memory runs out (issue 27): each
 * child touches 256 KiB and waits. Linux ends this one of two ways: fork
 * fails (ENOMEM/EAGAIN), or the OOM killer kills a process, the forker
 * included. Either way the forker must stop: once SIGKILLed it forks no
 * more. Each child writes its pid to the pipe before it waits; the shell
 * around this program compares the children alive afterwards with the
 * kills the OOM killer announced. Veneer only (the host would OOM). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int most = argc > 1 ? atoi(argv[1]) : 4000;
    for (int n = 0; n < most; n++) {
        pid_t p = fork();
        if (p < 0) {
            printf("forkoom: fork failed after %d children: %s\n", n, strerror(errno));
            fflush(stdout);
            return 0;
        }
        if (p == 0) {
            char *m = malloc(256 * 1024);
            if (m)
                memset(m, 1, 256 * 1024);
            for (;;)
                pause();
        }
    }
    printf("forkoom: forked %d children, memory did not run out\n", most);
    return 0;
}
