/* File-backed mmap as ld.so and programs use it: private mappings at an
 * offset, MAP_FIXED overlays, mprotect; writable shared mappings whose
 * writes reach the file (msync, munmap, exit, after close, from a child);
 * and the errors: EACCES, EOVERFLOW, EINVAL, ENOMEM, each changing
 * nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096
#define SIZE 10000
static const char *path = "/tmp/mmapfile.dat";

static char pattern(long i) { return 'a' + i % 23; }

static void fresh(void) {
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    for (long i = 0; i < SIZE; i++) {
        char c = pattern(i);
        if (write(fd, &c, 1) != 1)
            _exit(9);
    }
    close(fd);
}

static void at(long off, int len) {
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);
    if (pread(fd, buf, len, off) != len)
        printf("short read\n");
    struct stat st;
    fstat(fd, &st);
    close(fd);
    printf("  file at %ld: %.*s (size %ld)\n", off, len, buf, (long)st.st_size);
}

static void err(const char *what, void *r) {
    printf("%s: %s\n", what, r == MAP_FAILED ? strerror(errno) : "mapped");
}

int main(void) {
    fresh();
    int ro = open(path, O_RDONLY), rw = open(path, O_RDWR), wo = open(path, O_WRONLY);

    char *p = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE, ro, PG);
    int same = 1;
    for (long i = 0; i < SIZE - PG; i++)
        same &= p[i] == pattern(PG + i);
    int zero = 1;
    for (long i = SIZE - PG; i < 2 * PG; i++)
        zero &= p[i] == 0;
    printf("private at offset: bytes %d, zero past the end %d\n", same, zero);
    munmap(p, 2 * PG);

    p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
    memcpy(p, "PRIVATE", 7);
    munmap(p, PG);
    printf("private write:\n");
    at(0, 7);

    char *area = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(area, 'z', 3 * PG);
    char *mid = mmap(area + PG, PG, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE, ro, 2 * PG);
    printf("MAP_FIXED overlay: at %d, %c%c%c, neighbours %c %c\n", mid == area + PG, mid[0], mid[1], mid[2],
           area[PG - 1], area[2 * PG]);
    printf("mprotect of it: %d\n", mprotect(mid, PG, PROT_READ | PROT_EXEC));

    char *s = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
    memcpy(s + 100, "SHARED", 6);
    printf("msync: %d\n", msync(s, PG, MS_SYNC));
    at(100, 6);
    memcpy(s + 5000, "UNMAPPED", 8);
    memcpy(s + SIZE, "PAST-END", 8);
    munmap(s, 3 * PG);
    printf("after munmap:\n");
    at(5000, 8);

    int fd = open(path, O_RDWR);
    s = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    memcpy(s + 200, "CLOSED", 6);
    munmap(s, PG);
    printf("written after close:\n");
    at(200, 6);

    s = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, rw, PG);
    pid_t child = fork();
    if (child == 0) {
        memcpy(s + 7, "CHILD", 5);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    printf("written by a child that exited:\n");
    at(PG + 7, 5);
    munmap(s, PG);

    /* A read-only shared mapping stays read-only (its pages are remapped
     * clean, with their rights). */
    child = fork();
    if (child == 0) {
        s = mmap(NULL, PG, PROT_READ, MAP_SHARED, rw, 0);
        s[0] = 'X';
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("write to a read-only shared mapping: killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);

    memset(area, 'q', PG);
    err("MAP_SHARED|PROT_WRITE, O_RDONLY", mmap(area, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ro, 0));
    err("any mapping, O_WRONLY", mmap(NULL, PG, PROT_READ, MAP_PRIVATE, wo, 0));
    err("offset past the largest file", mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE, ro, 0x7ffffffffffff000));
    /* Linux maps it too (a touch would raise SIGBUS): not touched here. */
    err("offset past the end of the file", mmap(NULL, PG, PROT_READ, MAP_PRIVATE, ro, 16 * PG));
    err("unaligned offset", mmap(NULL, PG, PROT_READ, MAP_PRIVATE, ro, 100));
    printf("what was mapped is untouched: %c\n", area[0]);
    int r = msync(area, PG, MS_SYNC | MS_ASYNC);
    printf("msync both SYNC and ASYNC: %d %s\n", r, strerror(errno));
    r = msync(area + 1, PG, MS_SYNC);
    printf("msync unaligned: %d %s\n", r, strerror(errno));
    errno = 0;
    r = msync(area, (size_t)-1, MS_SYNC);
    printf("msync of length -1: %d %s\n", r, strerror(errno));
    r = msync(area, (size_t)-1 - 2 * PG, MS_SYNC);
    printf("msync past the end of memory: %d %s\n", r, strerror(errno));
    munmap(area, 3 * PG);
    r = msync(area, PG, MS_SYNC);
    printf("msync unmapped: %d %s\n", r, strerror(errno));
    unlink(path);
    return 0;
}
