#define _GNU_SOURCE
/* A /data file's bytes live in XN's buffer cache, shared by every process
 * (issue 23 §2, docs/cffs.md "The persistent directory"): two processes
 * see each other's write()s at once, neither closing its descriptor;
 * O_APPEND from both ends at the shared size; ftruncate in one is seen by
 * the other; a file unlinked while open stays readable; MAP_PRIVATE and
 * MAP_SHARED views agree with read(); SEEK_HOLE/SEEK_DATA. Run by the
 * boot test xn_bigdata (`datafile DIR`); prints "datafile: all passed". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed;

static void check(const char *what, int ok)
{
    printf("datafile: %s: %s\n", what, ok ? "ok" : "FAILED");
    fflush(stdout);
    failed |= !ok;
}

static int same_at(int fd, off_t off, const char *want)
{
    char buf[64] = {0};
    size_t n = strlen(want);
    return pread(fd, buf, n, off) == (ssize_t)n && memcmp(buf, want, n) == 0;
}

/* The parent and a forked child, each with its own open file description
 * of one file, take turns through two pipes. */
static void two_processes(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int down[2], up[2];
    char c;
    if (fd < 0 || pipe(down) || pipe(up)) {
        check("setup", 0);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int mine = open(path, O_RDWR), app = open(path, O_WRONLY | O_APPEND);
        if (read(down[0], &c, 1) != 1)
            _exit(2);
        int ok = mine >= 0 && same_at(mine, 0, "from the parent");
        /* A write far past the end (a hole), then an append. */
        ok &= pwrite(mine, "from the child", 14, 3 * 4096 + 100) == 14;
        ok &= write(app, "|appended", 9) == 9;
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
            _exit(2);
        struct stat st;
        ok &= fstat(mine, &st) == 0 && st.st_size == 10;
        ok &= same_at(mine, 0, "parent cut");
        _exit(ok ? 0 : 1);
    }
    check("the parent's write", write(fd, "from the parent", 15) == 15);
    c = 'x';
    if (write(down[1], &c, 1) != 1 || read(up[0], &c, 1) != 1) {
        check("the child answers", 0);
        return;
    }
    struct stat st;
    check("the child's write, read at once by the parent", same_at(fd, 3 * 4096 + 100, "from the child"));
    check("the child's append, at the shared end", same_at(fd, 3 * 4096 + 114, "|appended"));
    check("the size both see", fstat(fd, &st) == 0 && st.st_size == 3 * 4096 + 123);
    char hole[16];
    memset(hole, 'x', sizeof hole);
    check("the hole reads as zeros", pread(fd, hole, 16, 8192) == 16 && hole[0] == 0 && hole[15] == 0);
    check("SEEK_DATA at 0", lseek(fd, 0, SEEK_DATA) == 0);
    off_t h = lseek(fd, 0, SEEK_HOLE);
    check("SEEK_HOLE finds a hole or the end", h >= 15 && h <= st.st_size);
    off_t d = lseek(fd, 5000, SEEK_DATA);
    check("SEEK_DATA from a hole finds the child's bytes or stays", d >= 5000 && d <= 3 * 4096 + 100);
    errno = 0;
    check("SEEK_DATA at the end: ENXIO", lseek(fd, st.st_size, SEEK_DATA) == -1 && errno == ENXIO);
    check("truncate", ftruncate(fd, 10) == 0 && pwrite(fd, "parent cut", 10, 0) == 10);
    if (write(down[1], &c, 1) != 1) {
        check("the child goes on", 0);
        return;
    }
    int status;
    check("the child saw the truncation and the parent's bytes",
          waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(fd);
}

/* MAP_PRIVATE reads the file; a MAP_SHARED store is what read() then sees,
 * in this process and the next. */
static void mapped(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    char page[8192];
    for (int i = 0; i < 8192; i++)
        page[i] = 'a' + i % 26;
    check("write two pages", fd >= 0 && write(fd, page, 8192) == 8192);
    char *p = mmap(0, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    check("MAP_PRIVATE view", p != MAP_FAILED && memcmp(p, page, 8192) == 0);
    char *s = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check("MAP_SHARED view", s != MAP_FAILED && memcmp(s, page, 8192) == 0);
    memcpy(s + 4096, "stored through the mapping", 26);
    check("read() sees the store", same_at(fd, 4096, "stored through the mapping"));
    munmap(s, 8192);
    munmap(p, 8192);
    close(fd);
    fd = open(path, O_RDONLY);
    check("after close, the store is the file's", fd >= 0 && same_at(fd, 4096, "stored through the mapping"));
    close(fd);
}

static void unlinked_open(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    check("an open file unlinked", fd >= 0 && write(fd, "still here", 10) == 10 && unlink(path) == 0);
    check("reads on", same_at(fd, 0, "still here"));
    check("writes on", pwrite(fd, "!", 1, 10) == 1 && same_at(fd, 0, "still here!"));
    check("the name is gone", access(path, F_OK) == -1);
    close(fd);
}

int main(int argc, char **argv)
{
    char path[256];
    const char *dir = argc > 1 ? argv[1] : "/data";
    snprintf(path, sizeof path, "%s/shared", dir);
    two_processes(path);
    snprintf(path, sizeof path, "%s/mapped", dir);
    mapped(path);
    snprintf(path, sizeof path, "%s/orphan", dir);
    unlinked_open(path);
    printf(failed ? "datafile: FAILED\n" : "datafile: all passed\n");
    return failed;
}
