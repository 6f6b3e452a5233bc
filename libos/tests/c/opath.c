#define _GNU_SOURCE
/* O_PATH descriptors and what `stat` says of a directory (issue 29: GNU
 * tar extracting a symlink reported "Cannot change mode ... Too many levels
 * of symbolic links", because glibc's fchmodat(AT_SYMLINK_NOFOLLOW) opens
 * the link with O_PATH|O_NOFOLLOW; a directory's size was 0). An O_PATH
 * descriptor names a file without opening it for I/O: it stats, serves as
 * a directory for the *at calls and fchdir, and refuses everything else.
 * Reopening through /proc/self/fd makes a new description. Each line is
 * compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A descriptor's number differs between systems: "ok" for success. */
static int opened(const char *what, int fd)
{
    show(what, fd < 0 ? fd : 0);
    return fd;
}

static void kind(const char *what, int dirfd, const char *path, int flags)
{
    struct stat st;
    if (fstatat(dirfd, path, &st, flags)) {
        show(what, -1);
        return;
    }
    const char *k = S_ISLNK(st.st_mode) ? "link" : S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" : "?";
    printf("%s: %s mode %o size %ld\n", what, k, st.st_mode & 07777, (long)st.st_size);
}

static void dirstat(const char *what, const char *path)
{
    struct stat st;
    if (stat(path, &st)) {
        show(what, -1);
        return;
    }
    printf("%s: size %ld blocks %ld nlink %ld blksize %ld\n", what, (long)st.st_size, (long)st.st_blocks,
           (long)st.st_nlink, (long)st.st_blksize);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    char buf[64];
    system("rm -rf tmp/opath");
    mkdir("tmp/opath", 0755);
    int fd = open("tmp/opath/file", O_CREAT | O_RDWR, 0644);
    write(fd, "hello\n", 6);
    close(fd);
    symlink("file", "tmp/opath/link");
    symlink("missing", "tmp/opath/dangling");

    /* A symbolic link itself. */
    show("open link O_NOFOLLOW", open("tmp/opath/link", O_RDONLY | O_NOFOLLOW));
    int l = opened("open link O_PATH|O_NOFOLLOW", open("tmp/opath/link", O_PATH | O_NOFOLLOW));
    opened("open dangling O_PATH|O_NOFOLLOW", open("tmp/opath/dangling", O_PATH | O_NOFOLLOW));
    show("open dangling O_PATH", open("tmp/opath/dangling", O_PATH));
    kind("fstatat(link fd, \"\", AT_EMPTY_PATH)", l, "", AT_EMPTY_PATH);
    long n = readlinkat(l, "", buf, sizeof buf);
    show("readlinkat(link fd, \"\")", n);
    if (n > 0)
        printf("  names %.*s\n", (int)n, buf);
    show("read", read(l, buf, 1));
    show("write", write(l, "x", 1));
    show("lseek", lseek(l, 0, SEEK_SET));
    show("fchmod", fchmod(l, 0600));
    show("fchown", fchown(l, 0, 0));
    show("ioctl FIONREAD", ioctl(l, FIONREAD, &n));
    show("fsync", fsync(l));
    show("ftruncate", ftruncate(l, 0));
    show("F_GETFL has O_PATH", (fcntl(l, F_GETFL) & O_PATH) != 0);
    int d2 = dup(l);
    kind("dup of it", d2, "", AT_EMPTY_PATH);
    close(d2);
    /* A child has it too (its own reference: the parent's outlives it). */
    if (fork() == 0) {
        kind("in a child", l, "", AT_EMPTY_PATH);
        _exit(0);
    }
    wait(NULL);
    kind("after the child", l, "", AT_EMPTY_PATH);
    close(l);

    /* glibc's fchmodat(AT_SYMLINK_NOFOLLOW): a link's mode cannot change,
     * anything else's can. */
    show("fchmodat link NOFOLLOW", fchmodat(AT_FDCWD, "tmp/opath/link", 0700, AT_SYMLINK_NOFOLLOW));
    show("fchmodat file NOFOLLOW", fchmodat(AT_FDCWD, "tmp/opath/file", 0600, AT_SYMLINK_NOFOLLOW));
    kind("file after", AT_FDCWD, "tmp/opath/file", 0);
    show("fchmodat bad flag", fchmodat(AT_FDCWD, "tmp/opath/file", 0600, 0x1));
    show("fchmodat missing NOFOLLOW", fchmodat(AT_FDCWD, "tmp/opath/nothing", 0600, AT_SYMLINK_NOFOLLOW));

    /* A regular file: O_PATH follows links unless told not to. */
    int f = opened("open link O_PATH", open("tmp/opath/link", O_PATH));
    kind("fstat of it", f, "", AT_EMPTY_PATH);
    show("O_PATH|O_DIRECTORY of a file", open("tmp/opath/file", O_PATH | O_DIRECTORY));
    /* Reopened through /proc: a new description, readable, offset 0. */
    snprintf(buf, sizeof buf, "/proc/self/fd/%d", f);
    int r = opened("reopen via /proc/self/fd", open(buf, O_RDONLY));
    n = read(r, buf, sizeof buf);
    show("read the reopened file", n);
    show("read the O_PATH one", read(f, buf, 1));
    close(r);
    close(f);
    /* A reopened regular file has an offset of its own. */
    int a = open("tmp/opath/file", O_RDONLY);
    read(a, buf, 2);
    snprintf(buf, sizeof buf, "/dev/fd/%d", a);
    int b = open(buf, O_RDONLY);
    show("offset of the original", lseek(a, 0, SEEK_CUR));
    show("offset of the reopened", lseek(b, 0, SEEK_CUR));
    close(a);
    close(b);

    /* A directory: a base for *at calls, fchdir, not for reading. */
    int d = opened("open dir O_PATH", open("tmp/opath", O_PATH | O_DIRECTORY));
    kind("fstatat(dir fd, \"file\")", d, "file", 0);
    int g = opened("openat(dir fd, \"file\")", openat(d, "file", O_RDONLY));
    close(g);
    show("getdents of it", syscall(217, d, buf, sizeof buf));
    show("fchdir", fchdir(d));
    kind("file from there", AT_FDCWD, "file", 0);
    chdir("../..");
    close(d);

    /* Directories report a block's size, and a link per subdirectory. */
    mkdir("tmp/opath/d", 0755);
    dirstat("empty dir", "tmp/opath/d");
    mkdir("tmp/opath/d/a", 0755);
    mkdir("tmp/opath/d/b", 0755);
    close(open("tmp/opath/d/f", O_CREAT | O_WRONLY, 0644));
    dirstat("dir with 2 subdirs and a file", "tmp/opath/d");
    rmdir("tmp/opath/d/b");
    dirstat("after rmdir", "tmp/opath/d");
    system("rm -rf tmp/opath");
    return 0;
}
