#define _GNU_SOURCE
/* Advisory file locks between processes (issue 29: F_SETLK was EINVAL,
 * and sqlite3 stopped with "disk I/O error"): fcntl record locks seen
 * from another process (F_GETLK), conflicts, split and merged ranges,
 * a waiting F_SETLKW, release by any close and by exit, OFD locks, flock,
 * lockf, and every errno. Each line is compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *path = "tmp/locks.file";
static int to_kid[2], to_parent[2];

static void tell(int fd)
{
    if (write(fd, "x", 1) != 1)
        exit(3);
}

static void hear(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        exit(4);
}

static int setlk(int fd, int cmd, short type, off_t start, off_t len)
{
    struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
    return fcntl(fd, cmd, &l);
}

/* What another process's F_GETLK sees over [start, start+len). */
static void probe(const char *what, int fd, short type, off_t start, off_t len, pid_t holder)
{
    struct flock l = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
    if (fcntl(fd, F_GETLK, &l)) {
        show(what, -1);
        return;
    }
    if (l.l_type == F_UNLCK) {
        printf("%s: unlocked\n", what);
        return;
    }
    printf("%s: %s start %ld len %ld by %s\n", what, l.l_type == F_WRLCK ? "write" : "read", (long)l.l_start,
           (long)l.l_len, l.l_pid == holder ? "the holder" : "someone else");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    unlink(path);
    int fd = open(path, O_CREAT | O_RDWR, 0644);
    if (fd < 0 || write(fd, "0123456789abcdefghij", 20) != 20)
        return 1;
    pipe(to_kid);
    pipe(to_parent);
    pid_t me = getpid();

    show("write lock 0..10", setlk(fd, F_SETLK, F_WRLCK, 0, 10));
    show("read lock 20..30", setlk(fd, F_SETLK, F_RDLCK, 20, 10));
    show("write lock 100..200", setlk(fd, F_SETLK, F_WRLCK, 100, 100));
    show("unlock 140..160 (a split)", setlk(fd, F_SETLK, F_UNLCK, 140, 20));
    show("write lock 10..20 (touches 0..10)", setlk(fd, F_SETLK, F_WRLCK, 10, 10));
    show("own locks never conflict", setlk(fd, F_SETLK, F_RDLCK, 5, 1));
    pid_t kid = fork();
    if (kid == 0) {
        int k = open(path, O_RDWR);
        probe("kid: 0..1", k, F_RDLCK, 0, 1, me);
        probe("kid: 4..5 (now a read lock)", k, F_WRLCK, 4, 2, me);
        probe("kid: 12..13 (merged)", k, F_WRLCK, 12, 1, me);
        probe("kid: reading 20..30", k, F_RDLCK, 20, 10, me);
        probe("kid: writing 25..26", k, F_WRLCK, 25, 1, me);
        probe("kid: 150", k, F_WRLCK, 150, 1, me);
        probe("kid: 130", k, F_WRLCK, 130, 1, me);
        probe("kid: 170", k, F_WRLCK, 170, 1, me);
        probe("kid: to the end from 300", k, F_WRLCK, 300, 0, me);
        show("kid: write lock 0..1", setlk(k, F_SETLK, F_WRLCK, 0, 1));
        show("kid: read lock 25..26", setlk(k, F_SETLK, F_RDLCK, 25, 1));
        show("kid: write lock 300..", setlk(k, F_SETLK, F_WRLCK, 300, 0));
        tell(to_parent[1]);
        hear(to_kid[0]);
        /* The parent closed another descriptor of the file: all its
         * locks went. */
        probe("kid: after the parent's close, 0..1", k, F_WRLCK, 0, 1, me);
        probe("kid: 100..", k, F_WRLCK, 100, 0, me);
        tell(to_parent[1]);
        hear(to_kid[0]);
        /* The parent holds 0..10 again and lets it go in 150 ms. */
        double t0 = now();
        tell(to_parent[1]);
        int r = setlk(k, F_SETLKW, F_WRLCK, 0, 10), e = errno;
        double waited = now() - t0;
        /* Shown once the parent has shown its unlock: which of two woken
         * processes prints first is a race on either system. */
        hear(to_kid[0]);
        errno = e;
        show("kid: F_SETLKW 0..10", r);
        printf("kid: waited: %d\n", waited > 0.1);
        _exit(0);
    }
    hear(to_parent[0]);
    probe("parent: 300..", fd, F_WRLCK, 300, 0, kid);
    probe("parent: 25", fd, F_WRLCK, 25, 1, kid);
    int other = open(path, O_RDONLY);
    close(other);
    tell(to_kid[1]);
    hear(to_parent[0]);
    show("parent: write lock 0..10 again", setlk(fd, F_SETLK, F_WRLCK, 0, 10));
    tell(to_kid[1]);
    hear(to_parent[0]);
    usleep(150000);
    show("parent: unlock", setlk(fd, F_SETLK, F_UNLCK, 0, 0));
    tell(to_kid[1]);
    waitpid(kid, 0, 0);
    probe("parent: after the kid's exit", fd, F_WRLCK, 0, 0, kid);

    /* Errors. */
    int ro = open(path, O_RDONLY), wo = open(path, O_WRONLY);
    show("bad type", setlk(fd, F_SETLK, 7, 0, 1));
    struct flock l = { .l_type = F_WRLCK, .l_whence = 9 };
    show("bad whence", fcntl(fd, F_SETLK, &l));
    show("negative start", setlk(fd, F_SETLK, F_WRLCK, -5, 1));
    show("negative length from 3", setlk(fd, F_SETLK, F_WRLCK, 3, -5));
    show("negative length from 10", setlk(fd, F_SETLK, F_WRLCK, 10, -5));
    show("read lock, write-only", setlk(wo, F_SETLK, F_RDLCK, 0, 1));
    show("write lock, read-only", setlk(ro, F_SETLK, F_WRLCK, 0, 1));
    show("unlock, read-only", setlk(ro, F_SETLK, F_UNLCK, 0, 1));
    show("F_GETLK of F_UNLCK", setlk(fd, F_GETLK, F_UNLCK, 0, 1));
    show("bad pointer", fcntl(fd, F_SETLK, (struct flock *)8));
    show("bad descriptor", setlk(99, F_SETLK, F_WRLCK, 0, 1));
    l = (struct flock){ .l_type = F_WRLCK, .l_pid = 5 };
    show("OFD with l_pid", fcntl(fd, F_OFD_SETLK, &l));
    setlk(fd, F_SETLK, F_UNLCK, 0, 0);

    /* OFD locks belong to the description: they conflict with this
     * process's own POSIX locks through another description. */
    show("OFD write lock 0..10", setlk(fd, F_OFD_SETLK, F_WRLCK, 0, 10));
    int fd2 = open(path, O_RDWR);
    show("POSIX lock on another description", setlk(fd2, F_SETLK, F_WRLCK, 5, 1));
    show("OFD lock on another description", setlk(fd2, F_OFD_SETLK, F_WRLCK, 5, 1));
    l = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    fcntl(fd2, F_OFD_GETLK, &l);
    printf("F_OFD_GETLK: type %d pid %d\n", l.l_type, l.l_pid);
    show("OFD unlock", setlk(fd, F_OFD_SETLK, F_UNLCK, 0, 0));
    show("POSIX lock now", setlk(fd2, F_SETLK, F_WRLCK, 5, 1));
    setlk(fd2, F_SETLK, F_UNLCK, 0, 0);

    /* flock: per description, apart from record locks. */
    show("flock LOCK_EX", flock(fd, LOCK_EX));
    show("flock another description, LOCK_NB", flock(fd2, LOCK_EX | LOCK_NB));
    show("record lock meanwhile", setlk(fd2, F_SETLK, F_WRLCK, 0, 0));
    kid = fork();
    if (kid == 0) {
        show("kid: flock the shared description", flock(fd, LOCK_SH));
        _exit(0);
    }
    waitpid(kid, 0, 0);
    show("flock LOCK_SH on another, LOCK_NB", flock(fd2, LOCK_SH | LOCK_NB));
    show("flock LOCK_UN", flock(fd, LOCK_UN));
    show("flock LOCK_SH on another", flock(fd2, LOCK_SH | LOCK_NB));
    show("flock LOCK_SH first", flock(fd, LOCK_SH | LOCK_NB));
    show("flock bad operation", flock(fd, 3));
    show("flock bad descriptor", flock(99, LOCK_EX));
    close(fd2);
    show("flock LOCK_EX once the other closed", flock(fd, LOCK_EX | LOCK_NB));

    /* lockf (fcntl underneath). */
    lseek(fd, 0, SEEK_SET);
    show("lockf F_TLOCK", lockf(fd, F_TLOCK, 4));
    show("lockf F_TEST", lockf(fd, F_TEST, 4));
    show("lockf F_ULOCK", lockf(fd, F_ULOCK, 4));
    return 0;
}
