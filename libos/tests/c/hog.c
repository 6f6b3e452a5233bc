/* Memory exhaustion as a program sees it. `hog map`: a mapping or a brk
 * larger than the machine's memory fails with ENOMEM (exit 0 if both do).
 * `hog touch`: allocate and touch 1 MiB at a time until the system kills
 * it (it should never get to exit). `hog hold KIB FILE`: allocate and touch
 * until /proc/meminfo shows at most KIB free, create FILE, then sleep
 * until killed. `hog eat MIB`: allocate and touch MIB MiB, then exit 0. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "meminfo.h"


int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "map") == 0) {
        size_t huge = (size_t)1 << 40;
        void *p = mmap(0, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        int mmap_err = p == MAP_FAILED ? errno : 0;
        void *b = sbrk((intptr_t)1 << 36);
        int brk_err = b == (void *)-1 ? errno : 0;
        printf("mmap 1 TiB: %s; sbrk 64 GiB: %s\n", strerror(mmap_err), strerror(brk_err));
        return mmap_err == ENOMEM && brk_err == ENOMEM ? 0 : 1;
    }
    if (argc > 3 && strcmp(argv[1], "hold") == 0) {
        /* Steps of half the distance to the floor (at most 1 MiB), so it
         * stops just above the floor and never needs the last frames. */
        long floor = atol(argv[2]), free;
        while ((free = mem_free_kib()) > floor) {
            long step = (free - floor) / 2 * 1024;
            step = step > (1 << 20) ? (1 << 20) : step < 4096 ? 4096 : step;
            char *p = malloc(step);
            if (!p)
                return 2;
            memset(p, 1, step);
        }
        close(open(argv[3], O_WRONLY | O_CREAT, 0644));
        for (;;)
            pause();
    }
    if (argc > 2 && strcmp(argv[1], "eat") == 0) {
        long mib = atol(argv[2]);
        for (long i = 0; i < mib; i++) {
            char *p = malloc(1 << 20);
            if (!p)
                return 2;
            memset(p, 1, 1 << 20);
        }
        return 0;
    }
    for (long mib = 0;; mib++) {
        char *p = malloc(1 << 20);
        if (!p) {
            printf("hog: malloc failed after %ld MiB\n", mib);
            return 2;
        }
        memset(p, 1, 1 << 20);
    }
}
