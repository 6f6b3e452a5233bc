#define _GNU_SOURCE
/* Locking memory and asking what is resident (issue 29: mlock, munlock,
 * mlockall, munlockall, mlock2 and mincore answered ENOSYS): every page
 * of the library's memory stays resident (there is no swap), so locking
 * succeeds on mapped memory and brings it in; mincore tells which pages
 * are backed now. Errors as Linux's. Each line is compared with the host. */
#include "show.h"
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static void residency(const char *what, void *p, size_t len)
{
    unsigned char v[8] = {0};
    long r = mincore(p, len, v);
    if (r) {
        show(what, r);
        return;
    }
    printf("%s:", what);
    for (size_t i = 0; i < len / 4096; i++)
        printf(" %d", v[i] & 1);
    printf("\n");
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    long pg = 4096;
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    residency("fresh mapping", m, 4 * pg);
    m[pg] = 1;
    residency("after writing page 1", m, 4 * pg);
    show("mlock pages 2-3", mlock(m + 2 * pg, 2 * pg));
    residency("after mlock", m, 4 * pg);
    show("munlock", munlock(m, 4 * pg));
    show("mlock unaligned start", mlock(m + 5, 10));
    show("mlock length 0", mlock(m, 0));
    show("mlock unmapped", mlock((void *)0x10000000, pg));
    show("mlock overflowing", mlock(m, (size_t)-4096));
    show("munlock unmapped", munlock((void *)0x10000000, pg));
    show("mlock2 bad flags", syscall(SYS_mlock2, m, pg, 2));
    show("mlock2 MLOCK_ONFAULT", syscall(SYS_mlock2, m, pg, 1));
    show("mincore unaligned", mincore(m + 1, pg, (unsigned char[1]){0}));
    show("mincore unmapped", mincore((void *)0x10000000, pg, (unsigned char[1]){0}));
    show("mincore bad vector", syscall(SYS_mincore, m, pg, (void *)8));
    show("mincore length 0", mincore(m, 0, (unsigned char[1]){0}));
    show("mlockall 0", mlockall(0));
    show("mlockall MCL_ONFAULT alone", mlockall(MCL_ONFAULT));
    show("mlockall bad flag", mlockall(8));
    show("mlockall MCL_CURRENT", mlockall(MCL_CURRENT));
    show("mlockall MCL_CURRENT|MCL_FUTURE", mlockall(MCL_CURRENT | MCL_FUTURE));
    show("munlockall", munlockall());
    return 0;
}
