#define _GNU_SOURCE
/* preadv/pwritev/preadv2/pwritev2, copy_file_range, close_range and
 * memfd_create against Linux: what real programs use them for, hostile
 * arguments and their errnos, and that a failing call changes nothing.
 * Every line printed is compared with the host. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "show.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static long rv(long nr, int fd, struct iovec *iov, long cnt, long pos, long flags)
{
    return syscall(nr, fd, iov, cnt, pos, 0L, flags);
}

static void vectors(void)
{
    int fd = open("tmp/v", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "0123456789", 10);
    lseek(fd, 2, SEEK_SET);
    char a[4] = {0}, b[5] = {0};
    struct iovec iov[2] = {{a, 3}, {b, 4}};
    show("preadv at 1", preadv(fd, iov, 2, 1));
    printf("got %s|%s, offset %ld\n", a, b, (long)lseek(fd, 0, SEEK_CUR));
    show("preadv past end", preadv(fd, iov, 2, 100));
    show("preadv negative pos", preadv(fd, iov, 2, -1));
    show("preadv bad fd", preadv(99, iov, 2, 0));
    show("preadv bad iov", rv(SYS_preadv, fd, (struct iovec *)8, 2, 0, 0));
    show("preadv too many", rv(SYS_preadv, fd, iov, IOV_MAX + 1, 0, 0));
    struct iovec neg[1] = {{a, (size_t)-1}};
    show("preadv negative len", preadv(fd, neg, 1, 0));
    show("readv negative len", readv(fd, neg, 1));
    struct iovec badbuf[1] = {{(void *)8, 4}};
    show("preadv bad buffer", preadv(fd, badbuf, 1, 0));
    show("preadv zero iovecs", preadv(fd, iov, 0, 0));

    struct iovec w[2] = {{"ab", 2}, {"cde", 3}};
    show("pwritev at 8", pwritev(fd, w, 2, 8));
    printf("offset %ld size %ld\n", (long)lseek(fd, 0, SEEK_CUR), (long)lseek(fd, 0, SEEK_END));
    char all[32] = {0};
    pread(fd, all, sizeof all - 1, 0);
    printf("file %s\n", all);
    int ro = open("tmp/v", O_RDONLY);
    show("pwritev read-only", pwritev(ro, w, 2, 0));
    show("preadv write-only", preadv(open("tmp/v", O_WRONLY), iov, 2, 0));
    int p[2];
    pipe(p);
    show("preadv pipe", preadv(p[0], iov, 2, 0));
    show("pwritev pipe", pwritev(p[1], w, 2, 0));

    /* v2: pos -1 is the file offset; flags. */
    lseek(fd, 4, SEEK_SET);
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    show("preadv2 at offset", rv(SYS_preadv2, fd, iov, 2, -1, 0));
    printf("got %s|%s, offset %ld\n", a, b, (long)lseek(fd, 0, SEEK_CUR));
    show("preadv2 pos -2", rv(SYS_preadv2, fd, iov, 2, -2, 0));
    show("preadv2 bad flags", rv(SYS_preadv2, fd, iov, 2, 0, 0x1000));
    show("preadv2 sync flag", rv(SYS_preadv2, fd, iov, 2, 0, RWF_SYNC));
    show("preadv2 pipe at -1", rv(SYS_preadv2, p[0], iov, 1, -1, RWF_NOWAIT));
    show("pwritev2 pipe at -1", rv(SYS_pwritev2, p[1], w, 2, -1, 0));
    show("preadv2 pipe again", rv(SYS_preadv2, p[0], iov, 2, -1, 0));
    printf("got %s|%s\n", a, b);
    show("pwritev2 append", rv(SYS_pwritev2, fd, w, 1, 0, RWF_APPEND));
    memset(all, 0, sizeof all);
    pread(fd, all, sizeof all - 1, 0);
    printf("file %s, offset %ld\n", all, (long)lseek(fd, 0, SEEK_CUR));
    int ap = open("tmp/v", O_WRONLY | O_APPEND);
    show("pwritev2 noappend", rv(SYS_pwritev2, ap, w, 1, 0, RWF_NOAPPEND));
    show("pwritev on O_APPEND", pwritev(ap, w + 1, 1, 0));
    memset(all, 0, sizeof all);
    pread(fd, all, sizeof all - 1, 0);
    printf("file %s\n", all);
    close(ap);
    close(ro);
    close(p[0]);
    close(p[1]);
    close(fd);
}

static void copies(void)
{
    int in = open("tmp/v", O_RDONLY);
    int out = open("tmp/c", O_RDWR | O_CREAT | O_TRUNC, 0644);
    show("copy_file_range 5", copy_file_range(in, NULL, out, NULL, 5, 0));
    printf("offsets in %ld out %ld\n", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
    loff_t oi = 3, oo = 20;
    show("copy_file_range offsets", copy_file_range(in, &oi, out, &oo, 4, 0));
    printf("offsets in %ld out %ld, ptrs %ld %ld\n", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR),
           (long)oi, (long)oo);
    char all[32];
    memset(all, 0, sizeof all);
    ssize_t n = pread(out, all, sizeof all - 1, 0);
    for (ssize_t i = 0; i < n; i++)
        if (!all[i])
            all[i] = '.';
    printf("copy %s (%zd)\n", all, n);
    oi = 1000;
    show("copy_file_range at end", copy_file_range(in, &oi, out, NULL, 4, 0));
    show("copy_file_range len 0", copy_file_range(in, NULL, out, NULL, 0, 0));
    show("copy_file_range flags", copy_file_range(in, NULL, out, NULL, 4, 1));
    show("copy_file_range bad in", copy_file_range(99, NULL, out, NULL, 4, 0));
    show("copy_file_range bad out", copy_file_range(in, NULL, 99, NULL, 4, 0));
    show("copy_file_range out read-only", copy_file_range(in, NULL, in, NULL, 4, 0));
    show("copy_file_range bad offset ptr", copy_file_range(in, (loff_t *)8, out, NULL, 4, 0));
    oi = -1;
    show("copy_file_range negative offset", copy_file_range(in, &oi, out, NULL, 4, 0));
    int d = open("tmp", O_RDONLY | O_DIRECTORY);
    show("copy_file_range from dir", copy_file_range(d, NULL, out, NULL, 4, 0));
    int p[2];
    pipe(p);
    show("copy_file_range to pipe", copy_file_range(in, NULL, p[1], NULL, 4, 0));
    int ap = open("tmp/c", O_WRONLY | O_APPEND);
    show("copy_file_range to O_APPEND", copy_file_range(in, NULL, ap, NULL, 4, 0));
    int same = open("tmp/c", O_RDWR);
    oi = 0;
    oo = 2;
    show("copy_file_range overlap", copy_file_range(same, &oi, same, &oo, 4, 0));
    oo = 4;
    show("copy_file_range same file apart", copy_file_range(same, &oi, same, &oo, 4, 0));
    close(same);
    close(ap);
    close(p[0]);
    close(p[1]);
    close(d);
    close(in);
    close(out);
}

static void ranges(void)
{
    int base = dup(0);
    for (int i = 0; i < 4; i++)
        dup(0);
    /* base .. base+4 are open. */
    show("close_range bad flags", syscall(SYS_close_range, base, base + 4, 1));
    show("close_range first > last", syscall(SYS_close_range, base + 2, base + 1, 0));
    show("close_range cloexec", syscall(SYS_close_range, base, base + 1, CLOSE_RANGE_CLOEXEC));
    printf("cloexec: %d %d %d\n", fcntl(base, F_GETFD), fcntl(base + 1, F_GETFD), fcntl(base + 2, F_GETFD));
    show("close_range two", syscall(SYS_close_range, base + 1, base + 2, 0));
    printf("open: %d %d %d %d\n", fcntl(base, F_GETFD) >= 0, fcntl(base + 1, F_GETFD) >= 0,
           fcntl(base + 2, F_GETFD) >= 0, fcntl(base + 3, F_GETFD) >= 0);
    show("close_range to ~0", syscall(SYS_close_range, base + 3, ~0U, 0));
    printf("open: %d %d\n", fcntl(base + 3, F_GETFD) >= 0, fcntl(base + 4, F_GETFD) >= 0);
    show("close_range nothing open", syscall(SYS_close_range, 500, 600, 0));
    close(base);
}

static void memfds(void)
{
    int m = memfd_create("scratch", MFD_CLOEXEC);
    show("memfd_create", m >= 0 ? 0 : -1);
    printf("cloexec %d\n", fcntl(m, F_GETFD));
    show("write", write(m, "memory", 6));
    struct stat st;
    fstat(m, &st);
    printf("regular %d size %ld nlink %lu mode %o\n", S_ISREG(st.st_mode), (long)st.st_size,
           (unsigned long)st.st_nlink, st.st_mode & 07777);
    char buf[8] = {0};
    show("pread", pread(m, buf, 6, 0));
    printf("got %s\n", buf);
    show("ftruncate", ftruncate(m, 4096));
    char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
    printf("mapped %d first %c\n", p != MAP_FAILED, p != MAP_FAILED ? p[0] : '?');
    if (p != MAP_FAILED)
        munmap(p, 4096);
    close(m);
    int plain = memfd_create("", 0);
    printf("plain cloexec %d\n", fcntl(plain, F_GETFD));
    close(plain);
    show("memfd bad flags", memfd_create("x", 0x100));
    show("memfd bad name", memfd_create((char *)8, 0));
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    show("memfd long name", memfd_create(longname, 0));
    longname[249] = 0;
    int ok = memfd_create(longname, 0);
    show("memfd 249-byte name", ok >= 0 ? 0 : -1);
    close(ok);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    vectors();
    copies();
    ranges();
    memfds();
    unlink("tmp/v");
    unlink("tmp/c");
    return 0;
}
