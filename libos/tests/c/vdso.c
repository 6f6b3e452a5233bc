// link: dynamic
/* The vDSO: glibc finds it through AT_SYSINFO_EHDR and sends
 * clock_gettime, gettimeofday, time and getcpu to it. Its answers must
 * agree with the system call's and with each other. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int seen;

/* glibc lists the vDSO among the loaded objects once it has accepted it. */
static int find_vdso(struct dl_phdr_info *info, size_t size, void *ehdr) {
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == (ElfW(Addr))ehdr)
            seen = 1;
    return 0;
}

static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

int main(void) {
    const char *ehdr = (const char *)getauxval(AT_SYSINFO_EHDR);
    printf("vDSO mapped: %d\n", ehdr != NULL && memcmp(ehdr, ELFMAG, SELFMAG) == 0);
    dl_iterate_phdr(find_vdso, (void *)ehdr);
    printf("glibc loaded the vDSO: %d\n", seen);
    /* What glibc's clock_gettime asks for at start-up: the vDSO by its
     * soname, and its versioned symbol in it (a wrong base makes glibc
     * read its dynamic section elsewhere and find neither). */
    void *vdso = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
    printf("glibc finds __vdso_clock_gettime: %d\n",
           vdso != NULL && dlvsym(vdso, "__vdso_clock_gettime", "LINUX_2.6") != NULL);
    int clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_MONOTONIC_COARSE};
    for (unsigned i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        struct timespec a, b, c;
        clock_gettime(clocks[i], &a);
        syscall(SYS_clock_gettime, clocks[i], &b);
        clock_gettime(clocks[i], &c);
        /* The coarse clock may lag the fine one by a tick on Linux. */
        long long slack = 20000000;
        printf("clock %d: ordered %d\n", clocks[i], ns(a) <= ns(b) + slack && ns(b) <= ns(c) + slack);
    }
    long long last = 0;
    int monotonic = 1;
    for (int i = 0; i < 10000; i++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        monotonic &= ns(t) >= last;
        last = ns(t);
    }
    printf("10000 readings monotonic: %d\n", monotonic);
    struct timeval tv;
    struct timespec rt;
    gettimeofday(&tv, NULL);
    clock_gettime(CLOCK_REALTIME, &rt);
    time_t now = time(NULL);
    printf("gettimeofday, time and clock_gettime agree: %d\n",
           rt.tv_sec - tv.tv_sec <= 1 && now - rt.tv_sec <= 1 && now >= tv.tv_sec);
    struct timespec res;
    printf("clock_getres: %d\n", clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0);
    unsigned cpu = 99;
    printf("getcpu: %d\n", getcpu(&cpu, NULL) == 0 && cpu < 1024);
    struct timespec bad;
    printf("bad clock id: %d\n", clock_gettime(12345, &bad) == -1);
    return 0;
}
