/* Hostile: a process of user 1000 against the boot file pages lxrt maps
 * into programs instead of copying them (issue 26). The file is root's,
 * mode 0644, in the boot archive; its whole pages are mapped straight from
 * the archive's frames, read-only, in every process that maps it.
 *
 *   bootmap FILE   prints "bootmap: ok" and exits 0, or FAIL lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096L

static const char *path;
static char *orig;
static long size;
static int bad;

static void fail(const char *what)
{
    printf("FAIL: %s (%s)\n", what, strerror(errno));
    bad = 1;
}

/* The file's bytes now, read with read(2). */
static char *contents(void)
{
    char *b = calloc(1, size + 1);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, b, size + 1) != size)
        fail("reading the file");
    close(fd);
    return b;
}

/* A fresh private read-only mapping shows the file's bytes, and zeros
 * past its end in the last page. */
static void fresh_mapping(const char *who)
{
    int fd = open(path, O_RDONLY);
    long len = (size + PG - 1) / PG * PG;
    char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fail(who);
        return;
    }
    int zeros = 1;
    for (long i = size; i < len; i++)
        zeros &= p[i] == 0;
    if (memcmp(p, orig, size) || !zeros) {
        printf("FAIL: %s: a fresh mapping shows other bytes (zeros past the end: %d)\n", who, zeros);
        bad = 1;
    }
    munmap(p, len);
}

/* User 1000's attacks; exits 0 if every one was refused or harmless. */
static void attacker(void)
{
    if (setgid(1000) < 0 || setuid(1000) < 0)
        _exit(99);
    if (open(path, O_RDWR) >= 0 || errno != EACCES)
        fail("open for writing by user 1000 not refused with EACCES");
    int fd = open(path, O_RDONLY);
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        fail("private writable mapping");
        _exit(1);
    }
    if (memcmp(p, orig, size))
        fail("the private mapping before writing");
    /* Every page written: the first whole, then a byte in each. */
    memset(p, 'X', PG);
    for (long i = PG; i < size; i += PG / 2)
        p[i] = 'Y';
    if (p[0] != 'X' || p[PG] != 'Y' || p[size - 1] == 'Y')
        fail("the writes are not in the private mapping");
    char *q = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (q == MAP_FAILED || memcmp(q, orig, size))
        fail("a second mapping in the writer sees its private writes");
    errno = 0;
    if (mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED || errno != EACCES)
        fail("writable shared mapping of a file open read-only not refused with EACCES");
    char *s = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED || memcmp(s, orig, size))
        fail("read-only shared mapping");
    /* Linux refuses this with EACCES; whatever the answer, no write may
     * reach the file or the other mappings. */
    if (s != MAP_FAILED && mprotect(s, size, PROT_READ | PROT_WRITE) == 0)
        for (long i = 0; i < size; i += PG)
            s[i] = 'Z';
    if (memcmp(q, orig, size))
        fail("the writer's read-only mapping changed by a write elsewhere");
    close(fd);
    _exit(bad);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        printf("usage: bootmap FILE\n");
        return 2;
    }
    path = argv[1];
    struct stat st;
    if (stat(path, &st) < 0 || st.st_uid != 0 || (st.st_mode & 07777) != 0644 || st.st_size < 2 * PG) {
        printf("FAIL: %s must be root's, mode 0644, at least two pages\n", path);
        return 1;
    }
    size = st.st_size;
    orig = contents();
    /* Root holds a mapping across the attack: it must not change. */
    int fd = open(path, O_RDONLY);
    char *held = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (held == MAP_FAILED)
        fail("root's shared mapping");
    pid_t c = fork();
    if (c == 0)
        attacker();
    int status;
    if (c < 0 || waitpid(c, &status, 0) != c || status != 0) {
        printf("FAIL: the attacker reported a failure (status %#x)\n", status);
        bad = 1;
    }
    char *now = contents();
    if (memcmp(now, orig, size))
        fail("the file changed");
    if (held != MAP_FAILED && memcmp(held, orig, size))
        fail("root's shared mapping changed");
    fresh_mapping("root after the attack");
    if (!bad)
        printf("bootmap: ok\n");
    return bad;
}
