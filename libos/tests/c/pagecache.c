#define _GNU_SOURCE
/* One page cache (issue 23 §2, issue 29 §2): a MAP_SHARED mapping of a file
 * in /tmp and in /dev/shm is the file's own pages, so two processes (a
 * fork child, and an unrelated process started by exec of this program)
 * see each other's stores at once without msync; read()/write() agree
 * with the mappings; the file grows while mapped (sqlite's -shm pattern:
 * extend, then map the next region, earlier ones still mapped in both);
 * a truncation in one process takes the pages from the other too (SIGBUS),
 * and the memory they held never shows another file's bytes (the attack:
 * truncate, make a new file, look through the old mapping); glibc's named
 * semaphores between two unrelated processes; MAP_PRIVATE stays private.
 * Every line is compared with the host. */
#include <fcntl.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define REGION 32768

static const char *self;

static void say(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "FAILED");
    fflush(stdout);
}

/* Waits (at most two seconds) for the byte at `p` to become `v`, reading
 * the mapping only: no msync, no system call that could copy it in. */
static int becomes(volatile char *p, char v)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (*p == v)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 2)
            return 0;
    }
}

static char *map(int fd, size_t len, off_t off)
{
    char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

static int wait_ok(pid_t k)
{
    int st;
    return waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The other side, in a child: `exec` runs it as a fresh program. It maps
 * the file itself, answers the parent's store with its own, and writes
 * with write() what the parent must see through its mapping. */
static int other(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return 2;
    volatile char *p = map(fd, 2 * PG, 0);
    if (!becomes(p + 10, 'P'))
        return 3;
    p[PG + 20] = 'C';
    if (pwrite(fd, "W", 1, 30) != 1)
        return 4;
    if (!becomes(p + 40, 'Q'))
        return 5;
    char c = 0;
    if (pread(fd, &c, 1, 50) != 1 || c != 'R')
        return 6;
    return 0;
}

/* Two processes on file `path`: a fork child (`exec_it` 0) or this
 * program run afresh (`exec_it` 1). */
static void two_processes(const char *path, int exec_it)
{
    char what[128];
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 2 * PG) < 0) {
        perror(path);
        exit(1);
    }
    volatile char *p = map(fd, 2 * PG, 0);
    pid_t k = fork();
    if (k == 0) {
        if (exec_it) {
            execl(self, self, "other", path, (char *)0);
            _exit(7);
        }
        _exit(other(path));
    }
    const char *how = exec_it ? "exec" : "fork";
    p[10] = 'P';
    snprintf(what, sizeof what, "%s %s: the other's store seen at once", path, how);
    say(what, becomes(p + PG + 20, 'C'));
    snprintf(what, sizeof what, "%s %s: its write() seen in the mapping", path, how);
    say(what, becomes(p + 30, 'W'));
    if (pwrite(fd, "R", 1, 50) != 1)
        perror("pwrite");
    p[40] = 'Q';
    snprintf(what, sizeof what, "%s %s: the other saw our store and our write()", path, how);
    say(what, wait_ok(k));
    char c = 0;
    snprintf(what, sizeof what, "%s %s: read() sees the mapping's store", path, how);
    say(what, pread(fd, &c, 1, PG + 20) == 1 && c == 'C');
    munmap((void *)p, 2 * PG);
    close(fd);
}

/* sqlite's -shm: each side maps 32 KiB regions as the file grows, earlier
 * regions still mapped in both. */
static void growth(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, REGION) < 0) {
        perror(path);
        exit(1);
    }
    volatile char *r0 = map(fd, REGION, 0);
    int go[2], back[2];
    if (pipe(go) < 0 || pipe(back) < 0)
        exit(1);
    pid_t k = fork();
    if (k == 0) {
        volatile char *c0 = map(fd, REGION, 0);
        char b;
        /* The child grows the file by write, then by ftruncate, and maps
         * each new region. */
        static char zero[REGION];
        if (pwrite(fd, zero, REGION, REGION) != REGION)
            _exit(2);
        volatile char *c1 = map(fd, REGION, REGION);
        if (ftruncate(fd, 3 * REGION) < 0)
            _exit(3);
        volatile char *c2 = map(fd, REGION, 2 * REGION);
        c1[100] = 'x';
        c2[REGION - 1] = 'y';
        c0[0] = 'z';
        if (write(back[1], "g", 1) != 1 || read(go[0], &b, 1) != 1)
            _exit(4);
        _exit(c1[200] == 'u' && c2[300] == 'v' && c0[1] == 'w' ? 0 : 5);
    }
    char b;
    if (read(back[0], &b, 1) != 1)
        exit(1);
    volatile char *r1 = map(fd, REGION, REGION);
    volatile char *r2 = map(fd, REGION, 2 * REGION);
    say("grown while mapped: the child's stores in its new regions seen",
        r1[100] == 'x' && r2[REGION - 1] == 'y' && r0[0] == 'z');
    r1[200] = 'u';
    r2[300] = 'v';
    r0[1] = 'w';
    if (write(go[1], "g", 1) != 1)
        exit(1);
    say("grown while mapped: ours seen by the child", wait_ok(k));
    off_t size = lseek(fd, 0, SEEK_END);
    printf("grown to %ld bytes\n", (long)size);
    munmap((void *)r0, REGION);
    munmap((void *)r1, REGION);
    munmap((void *)r2, REGION);
    close(fd);
}

static sigjmp_buf bus_jump;
static void on_bus(int sig)
{
    siglongjmp(bus_jump, sig);
}

/* What reading `p` gives: its byte, or -SIGBUS. */
static int peek(volatile char *p)
{
    struct sigaction sa = {.sa_handler = on_bus};
    sigaction(SIGBUS, &sa, 0);
    sigaction(SIGSEGV, &sa, 0);
    int sig = sigsetjmp(bus_jump, 1);
    if (sig)
        return -sig;
    return *p;
}

/* Stores `v` at `p`; 0, or the signal that stopped it. */
static int poke(volatile char *p, char v)
{
    struct sigaction sa = {.sa_handler = on_bus};
    sigaction(SIGBUS, &sa, 0);
    sigaction(SIGSEGV, &sa, 0);
    int sig = sigsetjmp(bus_jump, 1);
    if (sig)
        return sig;
    *p = v;
    return 0;
}

/* The attack: this process maps a file shared, another truncates it and
 * makes a new file of secret bytes. The old mapping must fault past the
 * end (SIGBUS) and never show or change the new file's bytes. */
static void truncated(const char *path, const char *secret_path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4 * PG) < 0)
        exit(1);
    volatile char *p = map(fd, 4 * PG, 0);
    memset((void *)p, 'a', 4 * PG);
    pid_t k = fork();
    if (k == 0) {
        int g = open(path, O_RDWR);
        if (g < 0 || ftruncate(g, PG) < 0)
            _exit(2);
        int s = open(secret_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        static char secret[8 * PG];
        memset(secret, 'S', sizeof secret);
        for (int i = 0; i < 16; i++)
            if (write(s, secret, sizeof secret) != sizeof secret)
                _exit(3);
        _exit(0);
    }
    say("truncated by another process", wait_ok(k));
    printf("%s: first page still 'a': %d\n", path, peek(p) == 'a');
    int seen = peek(p + 2 * PG);
    printf("%s: read past the new end: %s\n", path,
           seen == -SIGBUS ? "SIGBUS" : seen == 'S' ? "THE SECRET" : "no fault");
    printf("%s: write past the new end: %s\n", path, poke(p + 3 * PG, 'X') == SIGBUS ? "SIGBUS" : "no fault");
    int s = open(secret_path, O_RDONLY);
    static char back[16 * 8 * PG];
    ssize_t got = read(s, back, sizeof back);
    int intact = got == (ssize_t)sizeof back;
    for (ssize_t i = 0; i < got; i++)
        intact &= back[i] == 'S';
    say("the new file's bytes are intact", intact);
    printf("%s: size now %ld\n", path, (long)lseek(fd, 0, SEEK_END));
    close(s);
    unlink(secret_path);
    munmap((void *)p, 4 * PG);
    close(fd);
}

/* glibc's named semaphores: this process and one started by exec. */
static void semaphores(void)
{
    sem_unlink("/pagecache");
    sem_t *s = sem_open("/pagecache", O_CREAT | O_EXCL, 0600, 0);
    if (s == SEM_FAILED) {
        perror("sem_open");
        exit(1);
    }
    pid_t k = fork();
    if (k == 0) {
        execl(self, self, "sem", (char *)0);
        _exit(7);
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 5;
    say("sem_wait: woken by the other process's sem_post", sem_timedwait(s, &t) == 0);
    sem_post(s);
    say("the other process took our sem_post", wait_ok(k));
    int v = -1;
    sem_getvalue(s, &v);
    printf("semaphore value at the end: %d\n", v);
    sem_close(s);
    sem_unlink("/pagecache");
}

static int sem_other(void)
{
    sem_t *s = sem_open("/pagecache", 0);
    if (s == SEM_FAILED)
        return 2;
    if (sem_post(s) < 0)
        return 3;
    usleep(100000);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 5;
    return sem_timedwait(s, &t) == 0 ? 0 : 4;
}

/* MAP_PRIVATE: its stores reach neither the file nor a shared mapping;
 * the file's bytes are there at the start. */
static void private_map(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || pwrite(fd, "file", 4, 0) != 4 || ftruncate(fd, 2 * PG) < 0)
        exit(1);
    volatile char *sh = map(fd, 2 * PG, 0);
    volatile char *pr = mmap(0, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    say("private mapping starts with the file's bytes", pr != MAP_FAILED && pr[0] == 'f' && pr[3] == 'e');
    pr[0] = 'P';
    pr[PG] = 'P';
    char c = 0;
    say("private stores stay private",
        sh[0] == 'f' && sh[PG] == 0 && pread(fd, &c, 1, 0) == 1 && c == 'f');
    munmap((void *)pr, 2 * PG);
    msync((void *)sh, 2 * PG, MS_SYNC);
    say("and do not come back after munmap", pread(fd, &c, 1, 0) == 1 && c == 'f' && sh[0] == 'f');
    munmap((void *)sh, 2 * PG);
    close(fd);
    unlink(path);
}

/* For the disk's test (xn_data, libos/hosttests/data.sh): a file made
 * and closed (so written to the disk and clean), opened again, mapped,
 * its descriptor closed, then changed only through the mapping and
 * unmapped: the change must make the file dirty, so that the next close
 * puts it in the disk's cache and the shell's sync on the disk. */
static int store(const char *path)
{
    static const char text[] = "stored through a shared mapping\n";
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, sizeof text - 1) < 0 || close(fd) < 0)
        return 2;
    fd = open(path, O_RDWR);
    char *p = mmap(0, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED || close(fd) < 0)
        return 3;
    memcpy(p, text, sizeof text - 1);
    if (munmap(p, PG) < 0 || (fd = open(path, O_RDONLY)) < 0)
        return 4;
    return close(fd) < 0 ? 5 : 0;
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc == 3 && !strcmp(argv[1], "store"))
        return store(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "other"))
        return other(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "sem"))
        return sem_other();
    const char *paths[] = {"/tmp/pagecache", "/dev/shm/pagecache"};
    for (int i = 0; i < 2; i++) {
        two_processes(paths[i], 0);
        two_processes(paths[i], 1);
        growth(paths[i]);
        truncated(paths[i], i ? "/dev/shm/secret" : "/tmp/secret");
        unlink(paths[i]);
    }
    semaphores();
    private_map("/tmp/pagecache-private");
    return 0;
}
