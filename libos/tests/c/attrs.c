#define _GNU_SOURCE
/* File attributes and small calls CPython's tests found wrong (issue 29):
 * owners kept by chown and their set-ID rules, the set-group-ID directory
 * rule, access/modification/change times, fsync's and fallocate's answers,
 * ftruncate of a read-only descriptor, scheduling policies, affinity and
 * nice values. Every line is compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

static void owner(const char *what, const char *path)
{
    struct stat st;
    if (lstat(path, &st)) {
        show(what, -1);
        return;
    }
    printf("%s: uid %u gid %u mode %o\n", what, st.st_uid, st.st_gid, st.st_mode & 07777);
}

static void times_of(const char *what, const char *path)
{
    struct stat st;
    stat(path, &st);
    printf("%s: atime %ld.%09ld mtime %ld.%09ld\n", what, (long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
           (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static long size_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) ? -1 : st.st_size;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    const char *f = "tmp/attrs.file", *d = "tmp/attrs.dir", *l = "tmp/attrs.link";
    unlink(f);
    unlink(l);
    rmdir("tmp/attrs.dir/sub");
    unlink("tmp/attrs.dir/file");
    rmdir(d);
    int fd = open(f, O_CREAT | O_RDWR, 0644);
    symlink("attrs.file", l);

    /* Owners. */
    show("chown 1000 2000", chown(f, 1000, 2000));
    owner("after chown", f);
    show("chown -1 3000", chown(f, -1, 3000));
    owner("after chown -1", f);
    show("fchown 2^31", fchown(fd, 1u << 31, 1u << 31));
    owner("after fchown", f);
    show("lchown the link", lchown(l, 7, 8));
    owner("the link", l);
    owner("its target", f);
    show("fchownat AT_SYMLINK_NOFOLLOW", fchownat(AT_FDCWD, l, 9, 9, AT_SYMLINK_NOFOLLOW));
    owner("the link", l);
    show("fchownat bad flag", fchownat(AT_FDCWD, f, 0, 0, 0x4));
    show("fchownat AT_EMPTY_PATH", fchownat(fd, "", 0, 0, AT_EMPTY_PATH));
    owner("by descriptor", f);
    show("chown missing", chown("tmp/attrs.none", 0, 0));
    show("fchown bad fd", fchown(-1, 0, 0));
    show("fchown 99", fchown(99, 0, 0));
    /* Set-ID bits: chown clears set-user-ID, and set-group-ID with group
     * execute; set-group-ID alone (a locking mark) stays. */
    chmod(f, 06755);
    show("chown of 6755", chown(f, 0, 0));
    owner("now", f);
    chmod(f, 02644);
    show("chown of 2644", chown(f, -1, -1));
    owner("now", f);
    chmod(f, 0644);

    /* A set-group-ID directory passes its group on, and the bit to
     * directories made in it. */
    mkdir(d, 0755);
    chown(d, 0, 4242);
    chmod(d, 02775);
    owner("the directory", d);
    close(open("tmp/attrs.dir/file", O_CREAT | O_WRONLY, 0644));
    owner("a file made in it", "tmp/attrs.dir/file");
    mkdir("tmp/attrs.dir/sub", 0755);
    owner("a directory made in it", "tmp/attrs.dir/sub");

    /* Times. */
    struct timespec ts[2] = { { 1, 2003 }, { 4, 5006 } };
    show("utimensat", utimensat(AT_FDCWD, f, ts, 0));
    times_of("after utimensat", f);
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1] = (struct timespec){ 7, 8 };
    show("utimensat omit atime", utimensat(AT_FDCWD, f, ts, 0));
    times_of("now", f);
    ts[0] = (struct timespec){ 9, 1000000000 };
    show("utimensat bad nsec", utimensat(AT_FDCWD, f, ts, 0));
    ts[0] = (struct timespec){ 10, 11 };
    show("utimensat bad flag", utimensat(AT_FDCWD, f, ts, 0x2));
    show("utimensat NULL path, AT_FDCWD", syscall(SYS_utimensat, AT_FDCWD, 0, ts, 0));
    show("futimens", futimens(fd, ts));
    times_of("now", f);
    struct timeval tv[2] = { { 12, 13 }, { 14, 15 } };
    show("utimes", utimes(f, tv));
    times_of("now", f);
    tv[0].tv_usec = 1000000;
    show("utimes bad usec", utimes(f, tv));
    struct utimbuf ub = { 16, 17 };
    show("utime", utime(f, &ub));
    times_of("now", f);
    struct stat a, b;
    stat(f, &a);
    usleep(20000);
    chmod(f, 0600);
    stat(f, &b);
    printf("chmod moves the change time: %d\n",
           b.st_ctim.tv_sec > a.st_ctim.tv_sec ||
               (b.st_ctim.tv_sec == a.st_ctim.tv_sec && b.st_ctim.tv_nsec > a.st_ctim.tv_nsec));
    printf("and not the modification time: %d\n", b.st_mtim.tv_sec == a.st_mtim.tv_sec);

    /* fsync, fdatasync. */
    int p[2];
    pipe(p);
    show("fsync file", fsync(fd));
    show("fdatasync file", fdatasync(fd));
    show("fsync pipe", fsync(p[0]));
    show("fsync bad fd", fsync(-1));
    show("fdatasync closed fd", fdatasync(99));

    /* fallocate. */
    ftruncate(fd, 0);
    show("fallocate 0..100", fallocate(fd, 0, 0, 100));
    show("size", size_of(fd));
    show("fallocate keep size", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1000));
    show("size", size_of(fd));
    pwrite(fd, "abcdefgh", 8, 0);
    show("punch 2..5", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 3));
    char buf[8];
    pread(fd, buf, 8, 0);
    printf("after the hole: %c%c%d%d%d%c%c%c\n", buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6],
           buf[7]);
    show("punch without keep size", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 1));
    show("fallocate length 0", fallocate(fd, 0, 0, 0));
    show("fallocate negative offset", fallocate(fd, 0, -1, 1));
    show("fallocate pipe", fallocate(p[1], 0, 0, 1));
    show("fallocate bad fd", fallocate(99, 0, 0, 1));
    int ro = open(f, O_RDONLY);
    show("fallocate read-only", fallocate(ro, 0, 0, 1));
    show("ftruncate read-only", ftruncate(ro, 0));
    show("posix_fallocate", -posix_fallocate(fd, 0, 4096));
    show("size", size_of(fd));
    int dfd = open(d, O_RDONLY | O_DIRECTORY);
    show("fallocate directory", fallocate(dfd, 0, 0, 1));

    /* Scheduling. */
    show("sched_getscheduler", sched_getscheduler(0));
    show("sched_getscheduler -1", sched_getscheduler(-1));
    struct sched_param sp = { 0 };
    show("sched_getparam", sched_getparam(0, &sp));
    show("priority", sp.sched_priority);
    show("sched_setscheduler OTHER", sched_setscheduler(0, SCHED_OTHER, &sp));
    show("sched_setscheduler BATCH", sched_setscheduler(0, SCHED_BATCH, &sp));
    show("sched_getscheduler", sched_getscheduler(0));
    show("sched_setparam", sched_setparam(0, &sp));
    show("sched_getscheduler", sched_getscheduler(0));
    sp.sched_priority = 5;
    show("sched_setparam 5", sched_setparam(0, &sp));
    show("sched_setscheduler bad policy", sched_setscheduler(0, 42, &sp));
    show("sched_setscheduler OTHER 5", sched_setscheduler(0, SCHED_OTHER, &sp));
    sp.sched_priority = 0;
    sched_setscheduler(0, SCHED_OTHER, &sp);
    show("sched_get_priority_max FIFO", sched_get_priority_max(SCHED_FIFO));
    show("sched_get_priority_min RR", sched_get_priority_min(SCHED_RR));
    show("sched_get_priority_max OTHER", sched_get_priority_max(SCHED_OTHER));
    show("sched_get_priority_min 42", sched_get_priority_min(42));
    struct timespec rr;
    show("sched_rr_get_interval", sched_rr_get_interval(0, &rr));
    printf("under a second: %d\n", rr.tv_sec == 0 && rr.tv_nsec >= 0);
    show("sched_rr_get_interval -1", sched_rr_get_interval(-1, &rr));
    cpu_set_t set;
    CPU_ZERO(&set);
    show("sched_getaffinity", sched_getaffinity(0, sizeof set, &set));
    show("CPU 0 in it", CPU_ISSET(0, &set));
    show("sched_getaffinity -1", syscall(SYS_sched_getaffinity, -1, sizeof set, &set));
    show("sched_setaffinity CPU 0", sched_setaffinity(0, sizeof set, &set));
    CPU_ZERO(&set);
    show("sched_setaffinity none", sched_setaffinity(0, sizeof set, &set));
    show("sched_setaffinity bad pointer", syscall(SYS_sched_setaffinity, 0, 8, 8));

    /* Nice values: our own (from 0, whatever the test was started with),
     * our group's, inherited. */
    setpriority(PRIO_PROCESS, 0, 0);
    setpgid(0, 0);
    show("getpriority", getpriority(PRIO_PROCESS, 0));
    show("setpriority 5", setpriority(PRIO_PROCESS, 0, 5));
    show("getpriority", getpriority(PRIO_PROCESS, 0));
    show("nice(3)", nice(3));
    show("setpriority 40 (clamped)", setpriority(PRIO_PROCESS, 0, 40));
    show("getpriority", getpriority(PRIO_PROCESS, 0));
    show("raw getpriority", syscall(SYS_getpriority, PRIO_PROCESS, 0));
    show("getpriority bad which", getpriority(7, 0));
    show("getpriority no such pid", getpriority(PRIO_PROCESS, 999999));
    show("getpriority PRIO_PGRP", getpriority(PRIO_PGRP, 0));
    show("getpriority PRIO_USER 4242", getpriority(PRIO_USER, 4242));
    pid_t kid = fork();
    if (kid == 0) {
        printf("child inherits: %d\n", getpriority(PRIO_PROCESS, 0));
        _exit(0);
    }
    waitpid(kid, 0, 0);
    show("setpriority 0", setpriority(PRIO_PROCESS, 0, 0));
    return 0;
}
