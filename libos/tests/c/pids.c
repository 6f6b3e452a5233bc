/* Pids stay in Linux's default range (below 32768) and are not reused
 * soon: 300 children forked, reaped one by one (each slot reused at
 * once), have 300 different pids, all small. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 300

int main(void)
{
    pid_t p[N];
    int small = 1, distinct = 1;
    for (int i = 0; i < N; i++) {
        p[i] = fork();
        if (p[i] == 0)
            _exit(0);
        if (p[i] < 0)
            return 1;
        waitpid(p[i], NULL, 0);
        if (p[i] >= 32768)
            small = 0;
        for (int j = 0; j < i; j++)
            if (p[j] == p[i])
                distinct = 0;
    }
    printf("%d children: pids below 32768: %s; all different: %s\n", N, small ? "yes" : "no",
           distinct ? "yes" : "no");
    return 0;
}
