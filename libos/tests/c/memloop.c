/* Leak check: fork, exec /bin/true and wait N times in one parent, and
 * compare free memory (/proc/meminfo) before and after. The bound is 1% of
 * the free memory at the start for 10^4 cycles, scaled to N (a loss per
 * cycle that 10^4 cycles would take past 1%); 20 cycles first let caches
 * (a parent's kits of frames for its children) settle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "meminfo.h"


static int cycle(void) {
    int status;
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        execl("/bin/true", "true", (char *)0);
        _exit(127);
    }
    if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 500;
    for (int i = 0; i < 20; i++)
        if (cycle() < 0)
            return 2;
    long before = mem_free_kib();
    for (long i = 0; i < n; i++)
        if (cycle() < 0) {
            printf("memloop: cycle %ld failed\n", i);
            return 2;
        }
    long after = mem_free_kib();
    long lost = before - after;
    long bound = before / 100 * n / 10000;
    printf("memloop: %ld fork/exec/wait cycles: free %ld -> %ld KiB, lost %ld KiB (bound %ld)\n", n, before,
           after, lost, bound);
    return before > 0 && lost <= bound ? 0 : 1;
}
