// inotify on the file system: an instance's flags, bad arguments answered
// as Linux answers them, then the events a directory watch and a file
// watch see for a file made, written, closed, changed, renamed and
// removed, a directory made and removed, a watch taken out, poll, and a
// blocking read woken by another process's change.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"

static int wd_dir, wd_file;
static unsigned last_cookie;

static const char *wd_name(int wd) {
    return wd == wd_dir ? "dir" : wd == wd_file ? "file" : wd == -1 ? "queue" : "?";
}

// Prints the events queued now.
static void show(int fd, const char *when) {
    char buf[4096] __attribute__((aligned(8)));
    printf("%s:\n", when);
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
        printf("  read: %s\n", strerror(errno));
        return;
    }
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {IN_ACCESS, "ACCESS"}, {IN_OPEN, "OPEN"}, {IN_CLOSE_NOWRITE, "CLOSE_NOWRITE"},
        {IN_MODIFY, "MODIFY"}, {IN_ATTRIB, "ATTRIB"}, {IN_CLOSE_WRITE, "CLOSE_WRITE"},
        {IN_MOVED_FROM, "MOVED_FROM"}, {IN_MOVED_TO, "MOVED_TO"}, {IN_CREATE, "CREATE"},
        {IN_DELETE, "DELETE"}, {IN_DELETE_SELF, "DELETE_SELF"}, {IN_MOVE_SELF, "MOVE_SELF"},
        {IN_IGNORED, "IGNORED"}, {IN_ISDIR, "ISDIR"}, {IN_Q_OVERFLOW, "Q_OVERFLOW"},
    };
    for (char *p = buf; p < buf + n;) {
        struct inotify_event *e = (struct inotify_event *)p;
        printf("  %s", wd_name(e->wd));
        unsigned rest = e->mask;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (rest & names[i].bit) {
                printf(" %s", names[i].name);
                rest &= ~names[i].bit;
            }
        if (rest)
            printf(" +%#x", rest);
        if (e->cookie)
            printf(" cookie %s", e->cookie == last_cookie ? "same" : "new");
        last_cookie = e->cookie ? e->cookie : last_cookie;
        if (e->len)
            printf(" [%s] len %u", e->name, e->len);
        printf("\n");
        p += sizeof *e + e->len;
    }
}

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    expect_errno("inotify_init1 with a bad flag", inotify_init1(1), EINVAL);
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    check("inotify_init1", fd >= 0);
    check("IN_CLOEXEC", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    check("IN_NONBLOCK", fcntl(fd, F_GETFL) & O_NONBLOCK);
    char tiny[4];
    expect_errno("read with nothing queued", read(fd, tiny, sizeof tiny), EAGAIN);

    mkdir("/tmp/ino", 0755);
    const unsigned watched = IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
                             IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF;
    int null = open("/dev/null", O_RDONLY);
    expect_errno("add_watch on a bad descriptor", inotify_add_watch(99, "/tmp/ino", watched), EBADF);
    expect_errno("add_watch on /dev/null", inotify_add_watch(null, "/tmp/ino", watched), EINVAL);
    expect_errno("add_watch with mask 0", inotify_add_watch(fd, "/tmp/ino", 0), EINVAL);
    expect_errno("add_watch with an unknown bit", inotify_add_watch(fd, "/tmp/ino", IN_CREATE | 0x1000), EINVAL);
    expect_errno("add_watch with MASK_ADD and MASK_CREATE",
                 inotify_add_watch(fd, "/tmp/ino", IN_CREATE | IN_MASK_ADD | IN_MASK_CREATE), EINVAL);
    expect_errno("add_watch of a NULL path", inotify_add_watch(fd, NULL, watched), EFAULT);
    expect_errno("add_watch of a missing path", inotify_add_watch(fd, "/tmp/ino/none", watched), ENOENT);
    expect_errno("add_watch IN_ONLYDIR of a file", inotify_add_watch(fd, "/dev/null", IN_ONLYDIR | IN_ATTRIB),
                 ENOTDIR);
    expect_errno("rm_watch of a watch that is not there", inotify_rm_watch(fd, 999), EINVAL);
    expect_errno("rm_watch on /dev/null", inotify_rm_watch(null, 1), EINVAL);
    close(null);

    wd_dir = inotify_add_watch(fd, "/tmp/ino", watched);
    check("add_watch of the directory", wd_dir > 0);
    check("the same inode, the same watch", inotify_add_watch(fd, "/tmp/ino/.", watched) == wd_dir);
    expect_errno("IN_MASK_CREATE on a watched inode", inotify_add_watch(fd, "/tmp/ino", watched | IN_MASK_CREATE),
                 EEXIST);

    int f = open("/tmp/ino/f", O_CREAT | O_WRONLY, 0644);
    write(f, "a", 1);
    write(f, "b", 1);
    close(f);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    check("poll: readable", poll(&p, 1, 0) == 1 && p.revents == POLLIN);
    expect_errno("read into a buffer too small", read(fd, tiny, sizeof tiny), EINVAL);
    show(fd, "made, written twice, closed");
    check("poll: drained", poll(&p, 1, 0) == 0);

    wd_file = inotify_add_watch(fd, "/tmp/ino/f", IN_ATTRIB | IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF);
    check("add_watch of the file", wd_file > 0 && wd_file != wd_dir);
    chmod("/tmp/ino/f", 0600);
    truncate("/tmp/ino/f", 0);
    show(fd, "chmod, truncate");
    rename("/tmp/ino/f", "/tmp/ino/g");
    show(fd, "renamed");
    mkdir("/tmp/ino/sub", 0755);
    rmdir("/tmp/ino/sub");
    show(fd, "a directory made and removed");
    unlink("/tmp/ino/g");
    show(fd, "unlinked");
    check("rm_watch", inotify_rm_watch(fd, wd_dir) == 0);
    show(fd, "watch taken out");
    close(open("/tmp/ino/h", O_CREAT | O_WRONLY, 0644));
    expect_errno("nothing for an unwatched directory", read(fd, tiny, sizeof tiny), EAGAIN);

    // Every event of a file: opened, read (twice: merged), closed.
    wd_file = inotify_add_watch(fd, "/tmp/ino/h", IN_ALL_EVENTS);
    f = open("/tmp/ino/h", O_RDWR);
    write(f, "xy", 2);
    lseek(f, 0, SEEK_SET);
    read(f, tiny, 1);
    read(f, tiny, 1);
    read(f, tiny, 1);
    close(f);
    f = open("/tmp/ino/h", O_RDONLY);
    close(f);
    show(fd, "opened, written, read, closed; opened, closed");
    wd_dir = inotify_add_watch(fd, "/tmp/ino", IN_ONESHOT | IN_ATTRIB);
    chmod("/tmp/ino/h", 0600);
    chmod("/tmp/ino/h", 0644);
    show(fd, "one shot, changed twice");
    close(fd);

    // A blocking read woken by another process.
    fd = inotify_init();
    wd_dir = inotify_add_watch(fd, "/tmp/ino", IN_CREATE);
    pid_t pid = fork();
    if (pid == 0) {
        usleep(100000);
        close(open("/tmp/ino/late", O_CREAT | O_WRONLY, 0644));
        _exit(0);
    }
    show(fd, "blocking read");
    waitpid(pid, 0, 0);
    close(fd);
    unlink("/tmp/ino/h");
    unlink("/tmp/ino/late");
    rmdir("/tmp/ino");
    return 0;
}
