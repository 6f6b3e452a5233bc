/* Stress (Veneer only): N cycles of fork, exec of a tiny program, wait in
 * one parent; free memory (MemFree of /proc/meminfo) must come back to
 * within 1% of where it started. usage: churn N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long memfree(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "MemFree:", 8) == 0)
            kb = atol(line + 8);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    /* The first cycles warm the library's caches (kits, predicates). */
    for (int i = 0; i < 10; i++) {
        pid_t p = fork();
        if (p == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        waitpid(p, NULL, 0);
    }
    long before = memfree();
    long bad = 0;
    for (long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("churn: fork");
            return 1;
        }
        if (p == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    }
    long after = memfree();
    long diff = before - after;
    int ok = bad == 0 && diff * 100 <= before;
    printf("churn: %ld fork/exec/wait cycles, %ld failed; MemFree %ld kB before, %ld kB after (%+.2f%%): %s\n", n,
           bad, before, after, before ? -100.0 * diff / before : 0.0, ok ? "within 1%" : "NOT within 1%");
    return 0;
}
