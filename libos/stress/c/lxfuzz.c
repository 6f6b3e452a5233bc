/* Stress (Veneer only, never run on the host: its calls are random):
 * forked children make random Linux system calls with hostile arguments
 * (bad and kernel pointers, pointers into the library's own memory, huge
 * lengths, negative descriptors, random flags) until each has made its
 * share. A child may die of what it does to itself (a signal handler at a
 * random address, its own text unmapped): that is its business. A child
 * that blocks (reading its own empty pipe, say) is killed by the parent
 * after a while: SIGKILL must reach a process wherever it waits. The rest
 * of the system must not notice.
 *
 * usage: lxfuzz SEED CALLS [PER_CHILD]: forks children (each making up to
 * PER_CHILD calls, 400 by default) until CALLS calls have been made, as
 * the children count them (in hundreds, through a pipe); prints the calls
 * made and how the children ended. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t state;

/* The bare instruction: glibc's syscall() stores errno through the thread
 * pointer, which a random arch_prctl may have moved. */
static long raw(long nr, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
    register uint64_t r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

static uint64_t next(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(uint64_t n) { return next() % n; }

/* Calls that would end the fuzzing child or reach beyond it in ways that
 * are not the kernel's to stop (exiting, signalling others, exec of random
 * programs, forking more fuzzers, sleeping long on purpose). */
static int excluded(long nr)
{
    static const long list[] = {
        SYS_rt_sigreturn, SYS_pause, SYS_nanosleep, SYS_clone, SYS_fork, SYS_vfork, SYS_execve,
        SYS_exit, SYS_kill, SYS_tkill, SYS_exit_group, SYS_tgkill, SYS_clock_nanosleep, SYS_reboot,
        SYS_execveat, SYS_rt_sigsuspend, SYS_clone3, SYS_setsid, SYS_setpgid,
    };
    for (unsigned i = 0; i < sizeof list / sizeof list[0]; i++)
        if (list[i] == nr)
            return 1;
    return 0;
}

/* Calls lxrt implements, so most random calls get past "unsupported". */
static const long useful[] = {
    SYS_read, SYS_write, SYS_open, SYS_close, SYS_stat, SYS_fstat, SYS_lstat, SYS_poll, SYS_lseek,
    SYS_mmap, SYS_mprotect, SYS_munmap, SYS_brk, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_ioctl,
    SYS_pread64, SYS_pwrite64, SYS_readv, SYS_writev, SYS_access, SYS_pipe, SYS_select, SYS_mremap,
    SYS_madvise, SYS_dup, SYS_dup2, SYS_getpid, SYS_wait4, SYS_uname, SYS_fcntl, SYS_fsync,
    SYS_truncate, SYS_ftruncate, SYS_getdents64, SYS_getcwd, SYS_chdir, SYS_fchdir, SYS_rename,
    SYS_mkdir, SYS_rmdir, SYS_creat, SYS_link, SYS_unlink, SYS_symlink, SYS_readlink, SYS_chmod,
    SYS_fchmod, SYS_umask, SYS_gettimeofday, SYS_getrlimit, SYS_getrusage, SYS_times, SYS_getuid,
    SYS_getppid, SYS_getpgrp, SYS_sigaltstack, SYS_rt_sigpending, SYS_rt_sigtimedwait,
    SYS_arch_prctl, SYS_gettid, SYS_time, SYS_set_tid_address, SYS_clock_gettime, SYS_openat,
    SYS_mkdirat, SYS_newfstatat, SYS_unlinkat, SYS_renameat, SYS_readlinkat, SYS_faccessat,
    SYS_pselect6, SYS_ppoll, SYS_pipe2, SYS_dup3, SYS_prlimit64, SYS_getrandom, SYS_sysinfo,
    SYS_getsid, SYS_getpgid, SYS_sync, SYS_statfs, SYS_fstatfs,
};

/* A call that takes longer than this (300 ms of TSC, measured by the
 * parent before the first fork) is reported through the progress pipe:
 * one record, written whole (shorter than PIPE_BUF), among the 'c's. What
 * held up the heartbeat process for seconds in full runs (issue 27)
 * should show here if it is one call. */
static uint64_t slow_tsc = ~0ULL;
struct slow {
    char tag; /* 's' */
    char pad[7];
    int64_t nr;
    uint64_t a, b, c, start, took;
};

static uint64_t tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* TSC ticks per second and a (TSC, CLOCK_MONOTONIC) pair: a slow call's
 * start in the heartbeat's and linux.sh's seconds. */
static double hz;
static uint64_t tsc0;
static double mono0;

static void calibrate(void)
{
    double m = mono();
    uint64_t t = tsc();
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hz = (tsc() - t) / (mono() - m);
    tsc0 = t, mono0 = m;
    slow_tsc = (uint64_t)(hz * 0.3);
}

static void report_slow(const struct slow *s, const char *who)
{
    printf("lxfuzz slow: %s call %ld (%#lx, %#lx, %#lx) took %.0f ms, from %.1f s\n", who, (long)s->nr,
           (unsigned long)s->a, (unsigned long)s->b, (unsigned long)s->c, s->took / hz * 1000,
           mono0 + ((double)s->start - (double)tsc0) / hz);
    fflush(stdout);
}

/* Counts the 'c's of a read from the progress pipe and reports the
 * records among them; a record cut by the read's end is kept in `part`. */
static unsigned long drain(int fd)
{
    static char part[sizeof(struct slow)];
    static unsigned have;
    unsigned long hundreds = 0;
    char buf[512];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r; i++) {
            if (have > 0 || buf[i] == 's') {
                part[have++] = buf[i];
                if (have == sizeof part) {
                    struct slow s;
                    memcpy(&s, part, sizeof s);
                    report_slow(&s, "child's");
                    have = 0;
                }
            } else {
                hundreds++;
            }
        }
    }
    return hundreds;
}

static char *scratch;
#define SCRATCH 65536
/* "null" is a link to /dev/null made at the start: calls reach the device
 * through it, but an unlink or rename takes the link, not /dev/null, which
 * the later phases need (ash's background jobs open it; a run whose
 * fuzzer removed it failed lifetimes.sh's orphans and sigstorm). */
static const char *paths[] = {"a", "b", "d", "d/e", "a/../b", "/tmp/fz/c", "", ".", "/proc/self/stat", "null"};

static uint64_t arg(void)
{
    switch (below(16)) {
    case 0: return 0;
    case 1: return below(16);
    case 2: return (uint64_t)-1 - below(4);
    case 3: return (uint64_t)scratch + below(SCRATCH);
    case 4: return (uint64_t)scratch + SCRATCH - below(16); /* runs off the end */
    case 5: return 0xffff800000000000ULL + below(1 << 30);  /* the kernel */
    case 6: return 0x60000000 + below(1 << 24);             /* lxrt itself */
    case 7: return 0x70000000 + below(1 << 24);             /* the shared arena */
    case 8: return (uint64_t)paths[below(sizeof paths / sizeof paths[0])];
    case 9: return 1ULL << below(64);
    case 10: return below(1 << 20);
    case 11: return (uint64_t)-(int64_t)below(64);          /* negative descriptors */
    default: return next();
    }
}

static void __attribute__((noreturn)) child(unsigned calls, int progress)
{
    scratch = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (scratch == MAP_FAILED)
        _exit(3);
    /* No console: a read of fd 0 would wait for typing. */
    int keep = dup2(progress, 100);
    for (int fd = 0; fd < 100; fd++)
        close(fd);
    for (unsigned i = 0; i < calls; i++) {
        long nr = below(5) ? useful[below(sizeof useful / sizeof useful[0])] : (long)below(340);
        if (excluded(nr) || nr == SYS_close)
            continue; /* closing fd 100 would lose the progress pipe */
        uint64_t a = arg(), b = arg(), c = arg(), t0 = tsc();
        raw(nr, a, b, c, arg(), arg(), arg());
        uint64_t took = tsc() - t0;
        if (took > slow_tsc) {
            struct slow s = {'s', {0}, nr, a, b, c, t0, took};
            raw(SYS_write, keep, (uint64_t)&s, sizeof s, 0, 0, 0);
        }
        if (i % 100 == 99 && raw(SYS_write, keep, (uint64_t) "c", 1, 0, 0, 0) != 1)
            raw(SYS_exit, 4, 0, 0, 0, 0, 0);
    }
    raw(SYS_exit, 0, 0, 0, 0, 0, 0);
    __builtin_unreachable();
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    state = strtoull(argv[1], NULL, 0) * 0x9E3779B97F4A7C15ULL | 1;
    unsigned long calls = strtoul(argv[2], NULL, 0);
    unsigned per_child = argc > 3 ? strtoul(argv[3], NULL, 0) : 400;
    mkdir("/tmp/fz", 0755);
    mkdir("/tmp/fz/d", 0755);
    if (chdir("/tmp/fz") != 0)
        return 2;
    (void)symlink("/dev/null", "null");
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    calibrate();
    unsigned long hundreds = 0;
    unsigned children = 0, ended = 0, killed_by_self = 0, stuck = 0;
    while (hundreds * 100 < calls) {
        children++;
        uint64_t seed = next();
        uint64_t f0 = tsc();
        pid_t p = fork();
        if (p > 0 && tsc() - f0 > slow_tsc) {
            struct slow s = {'s', {0}, SYS_fork, 0, 0, 0, f0, tsc() - f0};
            report_slow(&s, "parent's");
        }
        if (p < 0) {
            perror("lxfuzz: fork");
            return 1;
        }
        if (p == 0) {
            state = seed | 1;
            close(fds[0]);
            child(per_child, fds[1]);
        }
        int st = 0, waited = 0;
        for (;;) {
            hundreds += drain(fds[0]);
            uint64_t t0 = tsc();
            pid_t w = waitpid(p, &st, WNOHANG);
            if (tsc() - t0 > slow_tsc) {
                struct slow s = {'s', {0}, SYS_wait4, (uint64_t)p, 0, 0, t0, tsc() - t0};
                report_slow(&s, "parent's");
            }
            if (w == p)
                break;
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
            /* Blocked for good (its own empty pipe, say): SIGKILL it. */
            if (++waited == 50) {
                uint64_t t0 = tsc();
                kill(p, SIGKILL);
                if (tsc() - t0 > slow_tsc) {
                    struct slow s = {'s', {0}, SYS_kill, (uint64_t)p, SIGKILL, 0, t0, tsc() - t0};
                    report_slow(&s, "parent's");
                }
                stuck++;
            }
        }
        hundreds += drain(fds[0]);
        if (WIFEXITED(st))
            ended++;
        else if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && waited >= 50))
            killed_by_self++;
    }
    printf("lxfuzz: %lu00 calls in %u children: %u ran to the end, %u died of what they did, %u blocked and were killed\n",
           hundreds, children, ended, killed_by_self, stuck);
    return 0;
}
