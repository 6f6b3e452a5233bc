#define _GNU_SOURCE
/* Arguments checked as Linux checks them (issue 29: pread with a negative
 * offset succeeded, setsid from a group leader succeeded, getrlimit and
 * setrlimit took bad resources and a soft limit over the hard one,
 * renameat2 took flags it must refuse, readlinkat with no room succeeded,
 * dup3(fd, fd) ...). Each call of the library's, with the bad arguments
 * its man page's ERRORS section lists, in the order Linux checks them;
 * every line is compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define T "tmp/argcheck"

static void files(void)
{
    char buf[64];
    int fd = open(T "/file", O_CREAT | O_RDWR, 0644);
    write(fd, "0123456789", 10);
    int rd = open(T "/file", O_RDONLY), wr = open(T "/file", O_WRONLY);
    int dir = open(T, O_RDONLY | O_DIRECTORY);
    int p[2];
    pipe(p);

    show("read -1", read(-1, buf, 1));
    show("read 999", read(999, buf, 1));
    show("read NULL", syscall(SYS_pread64, fd, NULL, 4, 0));
    show("read 0 bytes", read(fd, buf, 0));
    show("read a directory", read(dir, buf, 1));
    show("write a read-only fd", write(rd, "x", 1));
    show("read a write-only fd", read(wr, buf, 1));
    show("write NULL", syscall(SYS_write, wr, NULL, 4));
    show("pread offset -1", pread(fd, buf, 1, -1));
    show("pwrite offset -1", pwrite(fd, buf, 1, -1));
    show("pread a pipe", pread(p[0], buf, 1, 0));
    show("pread a write-only fd", pread(wr, buf, 1, 0));
    show("pwrite a read-only fd", pwrite(rd, buf, 1, 0));
    show("pread a directory", pread(dir, buf, 1, 0));
    show("lseek whence 7", lseek(fd, 0, 7));
    show("lseek to -1", lseek(fd, -1, SEEK_SET));
    show("lseek a pipe", lseek(p[0], 0, SEEK_CUR));
    show("lseek SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
    show("lseek SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
    show("lseek SEEK_DATA past the end", lseek(fd, 10, SEEK_DATA));
    show("lseek SEEK_HOLE past the end", lseek(fd, 11, SEEK_HOLE));
    show("lseek SEEK_END -11", lseek(fd, -11, SEEK_END));

    struct iovec iov[2] = {{buf, 4}, {buf + 4, 4}};
    show("readv count -1", syscall(SYS_readv, fd, iov, -1));
    show("readv count 1025", syscall(SYS_readv, fd, iov, 1025));
    show("readv count 0", readv(fd, iov, 0));
    struct iovec huge[2] = {{buf, (size_t)1 << 62}, {buf, (size_t)1 << 62}};
    show("writev lengths over SSIZE_MAX", writev(wr, huge, 2));
    struct iovec neg[1] = {{buf, (size_t)-1}};
    show("writev length -1", writev(wr, neg, 1));
    /* A bad pointer after a good vector: what is written is what the
     * call says it wrote. */
    struct iovec half[2] = {{"abcd", 4}, {(void *)8, 4}};
    off_t before = lseek(wr, 0, SEEK_END);
    long w = writev(wr, half, 2);
    show("writev with a bad second vector", w);
    show("  the file grew by", lseek(wr, 0, SEEK_END) - before - (w > 0 ? w : 0));
    /* Datagrams: one writev is one message, one readv takes one whole. */
    int sp[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sp);
    struct iovec two[2] = {{"abc", 3}, {"defgh", 5}};
    show("writev to a datagram socket", writev(sp[0], two, 2));
    show("  one message of", recv(sp[1], buf, sizeof buf, 0));
    writev(sp[0], two, 2);
    writev(sp[0], two, 2);
    char x[4], y[8];
    struct iovec into[2] = {{x, 4}, {y, 8}};
    show("readv of a datagram", readv(sp[1], into, 2));
    printf("  %.4s|%.4s\n", x, y);
    show("  the next one whole", recv(sp[1], buf, sizeof buf, MSG_DONTWAIT));
    close(sp[0]);
    close(sp[1]);
    show("writev NULL vector", syscall(SYS_writev, wr, NULL, 1));

    show("close -1", close(-1));
    int c = dup(fd);
    close(c);
    show("close twice", close(c));
    show("dup -1", dup(-1));
    show("dup2 to -1", dup2(fd, -1));
    show("dup2 to itself", dup2(fd, fd) == fd);
    show("dup2 of a bad fd to itself", dup2(999, 999));
    show("dup3 to itself", dup3(fd, fd, 0));
    show("dup3 to itself O_CLOEXEC", dup3(fd, fd, O_CLOEXEC));
    show("dup3 bad flags", dup3(fd, 50, 1));
    show("dup2 to 1000000", dup2(fd, 1000000));
    show("fcntl 9999", fcntl(fd, 9999));
    show("fcntl F_DUPFD 1000000", fcntl(fd, F_DUPFD, 1000000));
    show("fcntl F_DUPFD -1", fcntl(fd, F_DUPFD, -1));
    show("fcntl bad fd", fcntl(-1, F_GETFD));

    show("open \"\"", open("", O_RDONLY));
    show("open NULL", syscall(SYS_open, NULL, O_RDONLY));
    show("open file/", open(T "/file/", O_RDONLY));
    show("open file/x", open(T "/file/x", O_RDONLY));
    show("open a directory O_WRONLY", open(T, O_WRONLY));
    show("open a directory O_RDWR", open(T, O_RDWR));
    show("O_CREAT in a missing directory", open(T "/none/x", O_CREAT | O_WRONLY, 0644));
    show("O_CREAT|O_EXCL existing", open(T "/file", O_CREAT | O_EXCL | O_WRONLY, 0644));
    show("O_CREAT of a directory", open(T "/", O_CREAT | O_WRONLY, 0644));
    show("O_CREAT of a missing \"name/\"", open(T "/missing/", O_CREAT | O_WRONLY, 0644));
    show("  and nothing was made", access(T "/missing", F_OK));
    /* A new session has no controlling terminal: /dev/tty is none. */
    if (fork() == 0) {
        setsid();
        show("/dev/tty without a controlling terminal", open("/dev/tty", O_RDWR));
        _exit(0);
    }
    wait(NULL);
    static char longname[300], longpath[5000];
    memset(longname, 'a', 299);
    memset(longpath, 'a', 4999);
    show("open a 299-byte name", open(longname, O_RDONLY));
    show("open a 4999-byte path", open(longpath, O_RDONLY));
    show("mkdir a 299-byte name", mkdir(longname, 0755));

    show("mkdir existing", mkdir(T, 0755));
    show("mkdir in a missing directory", mkdir(T "/none/x", 0755));
    show("mkdir under a file", mkdir(T "/file/x", 0755));
    show("mkdir \"\"", mkdir("", 0755));
    mkdir(T "/full", 0755);
    mkdir(T "/full/x", 0755);
    show("rmdir a full directory", rmdir(T "/full"));
    show("rmdir a file", rmdir(T "/file"));
    show("rmdir .", rmdir(T "/full/x/."));
    show("rmdir ..", rmdir(T "/full/x/.."));
    show("rmdir /", rmdir("/"));
    show("rmdir missing", rmdir(T "/none"));
    show("unlink a directory", unlink(T "/full"));
    show("unlink missing", unlink(T "/none"));
    show("unlinkat bad flags", unlinkat(AT_FDCWD, T "/none", 1));
    show("unlinkat AT_REMOVEDIR of a file", unlinkat(AT_FDCWD, T "/file", AT_REMOVEDIR));

    close(open(T "/other", O_CREAT | O_WRONLY, 0644));
    show("rename missing", rename(T "/none", T "/x"));
    show("rename into its own subdirectory", rename(T "/full", T "/full/x/y"));
    show("rename a file over a directory", rename(T "/other", T "/full"));
    show("rename a directory over a file", rename(T "/full", T "/other"));
    show("rename a directory over a full one", rename(T "/full/x", T "/full"));
    show("rename to \"\"", rename(T "/other", ""));
    show("renameat2 RENAME_NOREPLACE existing",
         syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/file", RENAME_NOREPLACE));
    show("renameat2 flags 8", syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/new", 8));
    show("renameat2 flags 1<<20", syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/new", 1 << 20));
    show("renameat2 EXCHANGE|NOREPLACE", syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/file",
                                                 RENAME_EXCHANGE | RENAME_NOREPLACE));
    show("renameat2 EXCHANGE with a missing one",
         syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/new", RENAME_EXCHANGE));
    show("renameat2 EXCHANGE", syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/file", RENAME_EXCHANGE));
    struct stat st;
    stat(T "/other", &st);
    show("  other's size after", st.st_size);
    syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/file", RENAME_EXCHANGE);
    show("renameat2 NOREPLACE to a new name", syscall(SYS_renameat2, AT_FDCWD, T "/other", AT_FDCWD, T "/new",
                                                       RENAME_NOREPLACE));
    rename(T "/new", T "/other");

    show("link to an existing name", link(T "/file", T "/other"));
    show("link a directory", link(T "/full", T "/dirlink"));
    show("link missing", link(T "/none", T "/x"));
    show("link into a missing directory", link(T "/file", T "/none/x"));
    show("symlink to an existing name", symlink("x", T "/other"));
    show("symlink \"\"", symlink("", T "/empty"));
    show("readlink a file", readlink(T "/file", buf, sizeof buf));
    symlink("file", T "/link");
    show("readlink size 0", readlink(T "/link", buf, 0));
    show("readlink NULL", syscall(SYS_readlink, T "/link", NULL, 10));
    show("readlink size 2", readlink(T "/link", buf, 2));
    show("readlink missing", readlink(T "/none", buf, sizeof buf));

    show("truncate -1", truncate(T "/file", -1));
    show("truncate a directory", truncate(T, 0));
    show("truncate missing", truncate(T "/none", 0));
    show("ftruncate a pipe", ftruncate(p[0], 0));
    show("ftruncate -1", ftruncate(fd, -1));
    show("ftruncate bad fd", ftruncate(-1, 0));
    show("chdir a file", chdir(T "/file"));
    show("chdir missing", chdir(T "/none"));
    show("fchdir a file", fchdir(fd));
    show("fchdir bad fd", fchdir(-1));
    show("getcwd size 1", syscall(SYS_getcwd, buf, 1));
    show("getcwd NULL", syscall(SYS_getcwd, NULL, 100));
    show("access mode 8", access(T, 8));
    show("faccessat bad flags", syscall(SYS_faccessat2, AT_FDCWD, T, 0, 1));
    show("faccessat2 AT_EACCESS", syscall(SYS_faccessat2, AT_FDCWD, T, 0, AT_EACCESS));
    show("chmod missing", chmod(T "/none", 0644));
    show("getdents a file", syscall(SYS_getdents64, fd, buf, sizeof buf));
    show("getdents bad fd", syscall(SYS_getdents64, -1, buf, sizeof buf));
    show("getdents 1-byte buffer", syscall(SYS_getdents64, dir, buf, 1));
    show("pipe2 bad flags", pipe2(p, 1));
    show("pipe NULL", syscall(SYS_pipe, NULL));
    show("fstat NULL", syscall(SYS_fstat, fd, NULL));
    show("stat \"\"", stat("", &st));
    show("fstatat bad flags", fstatat(AT_FDCWD, T, &st, 1));
    show("fstatat through a file", fstatat(fd, "x", &st, 0));
    show("fsync bad fd", fsync(-1));
    show("openat through a file", openat(fd, "x", O_RDONLY));
    show("openat bad dirfd", openat(-5, "x", O_RDONLY));
    show("openat bad dirfd, absolute path", openat(-5, "/", O_RDONLY) >= 0);
    close(fd);
    close(rd);
    close(wr);
    close(dir);
    close(p[0]);
    close(p[1]);
}

static void processes(void)
{
    show("setpgid -1", setpgid(-1, 0));
    show("setpgid missing", setpgid(999999, 0));
    show("setpgid to -1", setpgid(0, -1));
    show("getpgid missing", getpgid(999999));
    show("getsid missing", getsid(999999));
    show("kill missing", kill(999999, 0));
    show("kill signal 65", kill(getpid(), 65));
    show("kill signal -1", kill(getpid(), -1));
    show("tgkill a missing thread", syscall(SYS_tgkill, getpid(), 999999, 0));
    show("tgkill tgid -1", syscall(SYS_tgkill, -1, getpid(), 0));
    show("tgkill tid 0", syscall(SYS_tgkill, getpid(), 0, 0));
    show("tgkill signal 65", syscall(SYS_tgkill, getpid(), getpid(), 65));
    show("tkill tid -1", syscall(SYS_tkill, -1, 0));
    show("wait4 without children", wait4(-1, NULL, 0, NULL));
    show("wait4 bad options", wait4(-1, NULL, 0x10000, NULL));
    show("waitid bad idtype", waitid(7, 0, NULL, WEXITED));
    show("waitid no state", waitid(P_ALL, 0, NULL, 0));

    /* setsid: a process group leader may not; another may once. */
    pid_t k = fork();
    if (k == 0) {
        setpgid(0, 0);
        show("setsid as a group leader", setsid());
        if (fork() == 0) {
            show("setsid as a member", setsid() > 0);
            show("setsid again", setsid());
            _exit(0);
        }
        wait(NULL);
        _exit(0);
    }
    waitpid(k, NULL, 0);

    struct rlimit r;
    show("getrlimit 99", getrlimit(99, &r));
    show("getrlimit NULL", syscall(SYS_getrlimit, RLIMIT_NOFILE, NULL));
    show("setrlimit 99", setrlimit(99, &r));
    getrlimit(RLIMIT_NOFILE, &r);
    struct rlimit bad = {r.rlim_max + 1, r.rlim_max};
    show("setrlimit soft over hard", setrlimit(RLIMIT_NOFILE, &bad));
    struct rlimit low = {64, 128};
    show("setrlimit NOFILE 64/128", setrlimit(RLIMIT_NOFILE, &low));
    getrlimit(RLIMIT_NOFILE, &r);
    printf("  now %ld/%ld\n", (long)r.rlim_cur, (long)r.rlim_max);
    show("open past the soft limit", fcntl(0, F_DUPFD, 64));
    show("dup2 past the soft limit", dup2(0, 100));
    struct rlimit over = {2000000, 2000000};
    show("setrlimit NOFILE over nr_open", setrlimit(RLIMIT_NOFILE, &over));
    if (fork() == 0) {
        getrlimit(RLIMIT_NOFILE, &r);
        printf("  a child inherits %ld/%ld\n", (long)r.rlim_cur, (long)r.rlim_max);
        _exit(0);
    }
    wait(NULL);
    show("prlimit of a missing process", prlimit(999999, RLIMIT_NOFILE, NULL, &r));
    struct rlimit core = {0, 0};
    show("setrlimit CORE 0", setrlimit(RLIMIT_CORE, &core));
    getrlimit(RLIMIT_CORE, &r);
    printf("  core %ld/%ld\n", (long)r.rlim_cur, (long)r.rlim_max);

    struct rusage ru;
    show("getrusage 99", getrusage(99, &ru));
    show("getrusage NULL", syscall(SYS_getrusage, RUSAGE_SELF, NULL));
    show("uname NULL", syscall(SYS_uname, NULL));
    show("prctl 9999", prctl(9999, 0, 0, 0, 0));
    show("sched_yield", sched_yield());
}

static volatile int hits;
static void handler(int s)
{
    (void)s;
    hits++;
}

static void signals(void)
{
    struct sigaction sa = {0}, old;
    sa.sa_handler = handler;
    show("sigaction SIGKILL", sigaction(SIGKILL, &sa, NULL));
    show("sigaction SIGSTOP", sigaction(SIGSTOP, &sa, NULL));
    show("sigaction SIGKILL, reading", sigaction(SIGKILL, NULL, &old));
    show("sigaction 0", sigaction(0, &sa, NULL));
    show("sigaction 65", syscall(SYS_rt_sigaction, 65, NULL, &old, 8));
    show("rt_sigaction sigsetsize 4", syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 4));
    sigset_t set;
    sigemptyset(&set);
    show("sigprocmask how 3", sigprocmask(3, &set, NULL));
    show("rt_sigprocmask sigsetsize 4", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 4));
    show("rt_sigpending sigsetsize 16", syscall(SYS_rt_sigpending, &set, 16));
    show("rt_sigsuspend sigsetsize 4", syscall(SYS_rt_sigsuspend, &set, 4));
    struct timespec bad = {0, 1000000000};
    show("sigtimedwait bad nsec", sigtimedwait(&set, NULL, &bad));
    stack_t ss = {.ss_sp = malloc(1024), .ss_size = 1024, .ss_flags = 0};
    show("sigaltstack too small", sigaltstack(&ss, NULL));
    ss.ss_size = 65536;
    ss.ss_sp = malloc(65536);
    ss.ss_flags = 7;
    show("sigaltstack bad flags", sigaltstack(&ss, NULL));

    /* SA_RESETHAND: the handler runs once, then the default action is
     * back; what sigaction reads afterwards. */
    sa.sa_flags = SA_RESETHAND | SA_SIGINFO | SA_NODEFER;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    sigaction(SIGUSR1, NULL, &old);
    printf("SA_RESETHAND: hits %d, now %s, SA_SIGINFO %d, SA_RESETHAND %d, SA_NODEFER %d\n", hits,
           old.sa_handler == SIG_DFL ? "SIG_DFL" : "a handler", !!(old.sa_flags & SA_SIGINFO),
           !!(old.sa_flags & SA_RESETHAND), !!(old.sa_flags & SA_NODEFER));

    show("nanosleep nsec 1e9", nanosleep(&bad, NULL));
    struct timespec neg = {-1, 0};
    show("nanosleep -1 s", nanosleep(&neg, NULL));
    show("nanosleep NULL", syscall(SYS_nanosleep, NULL, NULL));
    struct timespec ts;
    show("clock_gettime 99", clock_gettime(99, &ts));
    show("clock_gettime NULL", syscall(SYS_clock_gettime, CLOCK_REALTIME, NULL));
    show("clock_getres 99", clock_getres(99, &ts));
    show("clock_getres NULL", clock_getres(CLOCK_MONOTONIC, NULL));
    show("clock_nanosleep 99", -clock_nanosleep(99, 0, &ts, NULL));
    show("clock_nanosleep THREAD_CPUTIME", -clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL));
    show("clock_nanosleep bad nsec", -clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL));
    show("clock_settime MONOTONIC", clock_settime(CLOCK_MONOTONIC, &ts));
    show("clock_settime REALTIME bad nsec", clock_settime(CLOCK_REALTIME, &bad));
    show("clock_settime 99", clock_settime(99, &ts));
    show("alarm 0", alarm(0));
    struct itimerval it = {0};
    show("setitimer 5", setitimer(5, &it, NULL));
    show("getitimer 5", getitimer(5, &it));
    it.it_value.tv_usec = 1000000;
    show("setitimer usec 1e6", setitimer(ITIMER_REAL, &it, NULL));
}

static void memory(void)
{
    int fd = open(T "/file", O_RDWR), rd = open(T "/file", O_RDONLY), wr = open(T "/file", O_WRONLY);
    int dir = open(T, O_RDONLY);
    int p[2];
    pipe(p);
    long pg = 4096;
#define M(what, ...) show(what, (long)mmap(__VA_ARGS__) == -1 ? -1 : 0)
    M("mmap length 0", NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    M("mmap neither private nor shared", NULL, pg, PROT_READ, MAP_ANONYMOUS, -1, 0);
    M("mmap private and shared", NULL, pg, PROT_READ, MAP_PRIVATE | MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    M("mmap offset not page aligned", NULL, pg, PROT_READ, MAP_PRIVATE, fd, 100);
    M("mmap bad fd", NULL, pg, PROT_READ, MAP_PRIVATE, -1, 0);
    M("mmap a write-only fd", NULL, pg, PROT_READ, MAP_PRIVATE, wr, 0);
    M("mmap shared writable, read-only fd", NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, rd, 0);
    M("mmap private writable, read-only fd", NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, rd, 0);
    M("mmap a directory", NULL, pg, PROT_READ, MAP_PRIVATE, dir, 0);
    M("mmap a pipe", NULL, pg, PROT_READ, MAP_PRIVATE, p[0], 0);
    M("mmap MAP_FIXED unaligned", (void *)0x10000001, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    M("mmap huge", NULL, (size_t)1 << 62, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    show("munmap unaligned", munmap(m + 1, pg));
    show("munmap length 0", munmap(m, 0));
    show("munmap unmapped", munmap((void *)0x10000000, pg));
    show("mprotect unaligned", mprotect(m + 1, pg, PROT_READ));
    show("mprotect bad prot", mprotect(m, pg, 0x100));
    show("mprotect unmapped", mprotect((void *)0x10000000, pg, PROT_READ));
    show("msync unaligned", msync(m + 1, pg, MS_SYNC));
    show("msync bad flags", msync(m, pg, 0x100));
    show("msync SYNC|ASYNC", msync(m, pg, MS_SYNC | MS_ASYNC));
    show("msync unmapped", msync((void *)0x10000000, pg, MS_SYNC));
    show("madvise unaligned", madvise(m + 1, pg, MADV_NORMAL));
    show("madvise bad advice", madvise(m, pg, 999));
    show("mremap unaligned", (long)mremap(m + 1, pg, 2 * pg, 0) == -1 ? -1 : 0);
    show("mremap bad flags", (long)mremap(m, pg, 2 * pg, 0x100) == -1 ? -1 : 0);
    show("mremap length 0", (long)mremap(m, pg, 0, MREMAP_MAYMOVE) == -1 ? -1 : 0);
    show("mremap FIXED without MAYMOVE", (long)mremap(m, pg, pg, MREMAP_FIXED, m + 2 * pg) == -1 ? -1 : 0);
    munmap(m, 4 * pg);
    close(fd);
    close(rd);
    close(wr);
    close(dir);
    close(p[0]);
    close(p[1]);
}

static void waits(void)
{
    int p[2];
    pipe(p);
    int fd = open(T "/file", O_RDONLY);
    show("epoll_create 0", epoll_create(0));
    show("epoll_create1 bad flags", epoll_create1(1));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    show("epoll_ctl itself", epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev));
    show("epoll_ctl a regular file", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    show("epoll_ctl MOD of a missing one", epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev));
    show("epoll_ctl DEL of a missing one", epoll_ctl(ep, EPOLL_CTL_DEL, p[0], &ev));
    show("epoll_ctl bad op", epoll_ctl(ep, 9, p[0], &ev));
    show("epoll_ctl on a non-epoll fd", epoll_ctl(fd, EPOLL_CTL_ADD, p[0], &ev));
    show("epoll_ctl ADD", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
    show("epoll_ctl ADD twice", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
    show("epoll_ctl EXCLUSIVE on MOD", ({
             ev.events = EPOLLIN | EPOLLEXCLUSIVE;
             epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev);
         }));
    show("epoll_wait 0 events", epoll_wait(ep, &ev, 0, 0));
    show("epoll_wait a non-epoll fd", epoll_wait(fd, &ev, 1, 0));
    show("eventfd2 bad flags", eventfd(0, 0x10));
    show("timerfd_create 99", timerfd_create(99, 0));
    show("timerfd_create bad flags", timerfd_create(CLOCK_MONOTONIC, 1));
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {{0, 0}, {0, 1000000000}};
    show("timerfd_settime bad nsec", timerfd_settime(t, 0, &its, NULL));
    its.it_value.tv_nsec = 0;
    show("timerfd_settime bad flags", timerfd_settime(t, 4, &its, NULL));
    show("timerfd_gettime a pipe", timerfd_gettime(p[0], &its));
    fd_set s;
    FD_ZERO(&s);
    show("select nfds -1", select(-1, &s, NULL, NULL, NULL));
    struct timeval tv = {0, -1};
    show("select negative timeout", select(1, &s, NULL, NULL, &tv));
    struct pollfd pf = {p[0], POLLIN, 0};
    show("poll nfds over the limit", syscall(SYS_poll, &pf, 1 << 30, 0));
    show("poll a closed fd", ({
             pf.fd = 999;
             poll(&pf, 1, 0);
         }));
    printf("  revents %#x\n", pf.revents);
    show("socket bad domain", socket(99, SOCK_STREAM, 0));
    show("socket AF_UNIX bad type", socket(AF_UNIX, 99, 0));
    show("socket AF_UNIX bad protocol", socket(AF_UNIX, SOCK_STREAM, 5));
    show("sendmsg on a pipe", send(p[1], "x", 1, 0));
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    system("rm -rf " T);
    mkdir(T, 0755);
    files();
    processes();
    signals();
    memory();
    waits();
    system("rm -rf " T);
    return 0;
}
