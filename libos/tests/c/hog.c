/* Memory exhaustion as a program sees it. `hog map`: a mapping or a brk
 * larger than the machine's memory fails with ENOMEM (exit 0 if both do).
 * `hog touch`: allocate and touch 1 MiB at a time until the system kills
 * it (it should never get to exit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
    for (long mib = 0;; mib++) {
        char *p = malloc(1 << 20);
        if (!p) {
            printf("hog: malloc failed after %ld MiB\n", mib);
            return 2;
        }
        memset(p, 1, 1 << 20);
    }
}
