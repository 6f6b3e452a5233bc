/* File sizes a program cannot have: a negative length for ftruncate
 * (EINVAL), a write past the largest file (EFBIG). lxrt once rounded such a
 * length up with wrapping arithmetic, recorded the huge size, and the next
 * write overran the shared arena (found by lxfuzz). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void report(const char *what, long r)
{
    printf("%s: %ld %s\n", what, r, r < 0 ? strerror(errno) : "");
}

int main(void)
{
    int fd = open("tmp/bigfile", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    report("ftruncate to -26", ftruncate(fd, -26));
    report("truncate to -1", truncate("tmp/bigfile", -1));
    report("pwrite at 2^62", pwrite(fd, "x", 1, 1L << 62));
    report("write after seeking to 2^62", lseek(fd, 1L << 62, SEEK_SET) < 0 ? -1 : write(fd, "x", 1));
    report("the file is still writable", pwrite(fd, "abc", 3, 0));
    report("and its size", lseek(fd, 0, SEEK_END));
    return 0;
}
