/* Free memory as /proc/meminfo reports it (MemFree, KiB), for the C
 * tests that check memory comes back. */
#include <stdio.h>

static long mem_free_kib(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemFree: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}
