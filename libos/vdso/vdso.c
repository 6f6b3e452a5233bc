/* Veneer's vDSO for Linux programs (libos/src/vdso.rs maps it into every
 * process, AT_SYSINFO_EHDR): the clock calls answered from the kernel's
 * clock page without entering the kernel. The page just below the image
 * (the "vvar" page, filled by lxrt) says where the clock page is and when
 * the wall clock started. Clocks it does not keep go to the system call,
 * which lxrt answers. No relocations: nobody relocates a vDSO. */
#include <stdint.h>

struct clock { /* abi::tables::Clock */
    uint64_t ticks, tick_ns, tsc_hz, tsc_ns_mult, wall_epoch_ns;
};

struct vvar { /* vdso::Vvar */
    const volatile struct clock *clock;
    uint64_t epoch_ns; /* wall time at the TSC's zero without an RTC */
    const volatile int64_t *adjust; /* clock_settime's, in the arena */
};

struct timespec64 { int64_t tv_sec, tv_nsec; };
struct timeval64 { int64_t tv_sec, tv_usec; };
struct timezone32 { int32_t minuteswest, dsttime; };

/* The image's own ELF header, placed by the linker: the vvar page is the
 * page before it. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

static const volatile struct vvar *vvar(void) {
    return (const volatile struct vvar *)((uintptr_t)__ehdr_start - 4096);
}

/* Nanoseconds since boot, as user::kinfo::now_ns reckons them. */
static uint64_t now_ns(void) {
    const volatile struct clock *c = vvar()->clock;
    uint64_t hz = c->tsc_hz, mult = c->tsc_ns_mult;
    if (hz == 0)
        return c->ticks * c->tick_ns;
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    uint64_t tsc = (uint64_t)hi << 32 | lo;
    return (uint64_t)(((unsigned __int128)tsc * mult) >> 32);
}

/* As crate::time::wall_ns: the RTC's reading at boot (else the fallback)
 * moved by clock_settime. */
static inline __attribute__((always_inline)) uint64_t wall_ns(void) {
    uint64_t e = vvar()->clock->wall_epoch_ns;
    return (e ? e : vvar()->epoch_ns) + (uint64_t)*vvar()->adjust + now_ns();
}

static long syscall2(long nr, long a, long b) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return r;
}

/* Linux's clock ids (libos/src/linux/time.rs); -1 for one we leave to the
 * system call. Inlined, with wall_ns, into each caller: as calls they cost
 * clock_gettime 4 instructions (the call, its return, the stack kept
 * aligned around it). */
static inline __attribute__((always_inline)) int64_t clock_ns(long id) {
    switch (id) {
    case 0: case 5: case 8: case 11: /* REALTIME, _COARSE, _ALARM, TAI */
        return (int64_t)wall_ns();
    case 1: case 4: case 6: case 7: case 9: /* MONOTONIC, _RAW, _COARSE, BOOTTIME, _ALARM */
        return (int64_t)now_ns();
    default:
        return -1;
    }
}

long __vdso_clock_gettime(long id, struct timespec64 *ts) {
    int64_t ns = clock_ns(id);
    if (ns < 0)
        return syscall2(228, id, (long)ts);
    /* Not negative here: unsigned division needs no sign correction. */
    ts->tv_sec = (uint64_t)ns / 1000000000;
    ts->tv_nsec = (uint64_t)ns % 1000000000;
    return 0;
}

long __vdso_clock_getres(long id, struct timespec64 *res) {
    if (clock_ns(id) < 0)
        return syscall2(229, id, (long)res);
    if (res) {
        res->tv_sec = 0;
        res->tv_nsec = 1;
    }
    return 0;
}

long __vdso_gettimeofday(struct timeval64 *tv, struct timezone32 *tz) {
    if (tv) {
        uint64_t ns = wall_ns();
        tv->tv_sec = ns / 1000000000;
        tv->tv_usec = ns % 1000000000 / 1000;
    }
    if (tz) {
        tz->minuteswest = 0;
        tz->dsttime = 0;
    }
    return 0;
}

long __vdso_time(int64_t *t) {
    int64_t s = wall_ns() / 1000000000;
    if (t)
        *t = s;
    return s;
}

/* One CPU, one node. */
long __vdso_getcpu(unsigned *cpu, unsigned *node, void *unused) {
    (void)unused;
    if (cpu)
        *cpu = 0;
    if (node)
        *node = 0;
    return 0;
}

long clock_gettime(long, struct timespec64 *) __attribute__((weak, alias("__vdso_clock_gettime")));
long clock_getres(long, struct timespec64 *) __attribute__((weak, alias("__vdso_clock_getres")));
long gettimeofday(struct timeval64 *, struct timezone32 *) __attribute__((weak, alias("__vdso_gettimeofday")));
long time(int64_t *) __attribute__((weak, alias("__vdso_time")));
long getcpu(unsigned *, unsigned *, void *) __attribute__((weak, alias("__vdso_getcpu")));
