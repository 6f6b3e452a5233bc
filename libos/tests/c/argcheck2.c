#define _GNU_SOURCE
/* Arguments checked as Linux checks them, the second half (argcheck.c has
 * files, processes, signals, memory and waits): data movement between
 * descriptors (sendfile, splice, tee, copy_file_range), space and advice
 * (fallocate, fadvise), file system queries, sockets, event objects' read
 * and write sizes, and small calls. Every line is compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/times.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define T "tmp/argcheck2"

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    system("rm -rf " T);
    mkdir(T, 0755);
    char buf[64];
    int fd = open(T "/file", O_CREAT | O_RDWR, 0644);
    write(fd, "0123456789", 10);
    int rd = open(T "/file", O_RDONLY), wr = open(T "/other", O_CREAT | O_WRONLY, 0644);
    int dir = open(T, O_RDONLY | O_DIRECTORY);
    int p[2], q[2];
    pipe(p);
    pipe(q);
    loff_t off = 0, bad = -1;

    show("sendfile to a read-only fd", sendfile(rd, fd, NULL, 4));
    show("sendfile from a write-only fd", sendfile(p[1], wr, NULL, 4));
    show("sendfile negative offset", sendfile(p[1], fd, &bad, 4));
    show("sendfile bad fd", sendfile(p[1], -1, NULL, 4));
    show("sendfile from a directory", sendfile(p[1], dir, NULL, 4));
    show("sendfile 0 bytes", sendfile(p[1], fd, &off, 0));
    show("splice between two files", splice(fd, NULL, wr, NULL, 4, 0));
    show("splice with an offset for a pipe", splice(p[0], &off, wr, NULL, 4, 0));
    show("splice bad flags", splice(fd, NULL, p[1], NULL, 4, 0x100));
    show("splice a pipe into itself", splice(p[0], NULL, p[1], NULL, 4, SPLICE_F_NONBLOCK));
    show("tee from a file", tee(fd, p[1], 4, 0));
    show("tee a pipe into itself", tee(p[0], p[1], 4, 0));
    show("tee empty pipe nonblocking", tee(q[0], p[1], 4, SPLICE_F_NONBLOCK));
    show("copy_file_range bad flags", copy_file_range(fd, NULL, wr, NULL, 4, 1));
    show("copy_file_range from a pipe", copy_file_range(p[0], NULL, wr, NULL, 4, 0));
    show("copy_file_range to a read-only fd", copy_file_range(fd, NULL, rd, NULL, 4, 0));
    show("copy_file_range negative offset", copy_file_range(fd, &bad, wr, NULL, 4, 0));
    show("copy_file_range a directory", copy_file_range(dir, NULL, wr, NULL, 4, 0));

    show("fallocate a read-only fd", fallocate(rd, 0, 0, 10));
    show("fallocate length 0", fallocate(fd, 0, 0, 0));
    show("fallocate negative offset", fallocate(fd, 0, -1, 10));
    show("fallocate a pipe", fallocate(p[1], 0, 0, 10));
    show("fallocate bad mode", fallocate(fd, 0x100, 0, 10));
    show("fadvise bad advice", -posix_fadvise(fd, 0, 10, 99));
    show("fadvise a pipe", -posix_fadvise(p[0], 0, 10, POSIX_FADV_NORMAL));
    show("fadvise negative length", -posix_fadvise(fd, 0, -1, POSIX_FADV_NORMAL));

    struct statfs sf;
    show("statfs missing", statfs(T "/none", &sf));
    show("statfs NULL", syscall(SYS_statfs, T, NULL));
    show("fstatfs bad fd", fstatfs(-1, &sf));
    show("fstatfs a pipe", fstatfs(p[0], &sf) == 0 && sf.f_type == 0x50495045);
    show("ioctl bad fd", ioctl(-1, FIONREAD, buf));
    show("ioctl unknown request on a file", ioctl(fd, 0x12345678, buf));
    show("ioctl TCGETS on a pipe", ioctl(p[0], 0x5401, buf));
    int n = -1;
    show("ioctl FIONREAD on a pipe", (write(p[1], "abc", 3), ioctl(p[0], FIONREAD, &n)));
    printf("  %d bytes\n", n);
    read(p[0], buf, 3);

    /* Sockets. */
    show("socket() on a non-socket: bind", bind(fd, (struct sockaddr *)buf, sizeof(struct sockaddr_un)));
    show("listen on a file", listen(fd, 1));
    show("accept on a file", accept(fd, NULL, NULL));
    show("connect on a file", connect(fd, (struct sockaddr *)buf, 2));
    show("shutdown on a file", shutdown(fd, SHUT_RDWR));
    show("getsockopt on a file", getsockopt(fd, SOL_SOCKET, SO_TYPE, &n, &(socklen_t){4}));
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    show("bind a short address", bind(s, (struct sockaddr *)&un, 1));
    show("bind the wrong family", ({
             un.sun_family = AF_INET;
             bind(s, (struct sockaddr *)&un, sizeof un);
         }));
    un.sun_family = AF_UNIX;
    show("bind a too-long address", bind(s, (struct sockaddr *)&un, sizeof un + 1));
    show("connect to a missing path", ({
             strcpy(un.sun_path, T "/nosock");
             connect(s, (struct sockaddr *)&un, sizeof un);
         }));
    show("connect to a file", ({
             strcpy(un.sun_path, T "/file");
             connect(s, (struct sockaddr *)&un, sizeof un);
         }));
    show("listen unbound stream", listen(s, 1) == 0);
    show("shutdown bad how", shutdown(s, 7));
    show("shutdown not connected", shutdown(s, SHUT_RDWR));
    show("getsockopt bad level", getsockopt(s, 999, SO_TYPE, &n, &(socklen_t){4}));
    show("getsockopt bad option", getsockopt(s, SOL_SOCKET, 9999, &n, &(socklen_t){4}));
    show("getsockopt SO_TYPE", (getsockopt(s, SOL_SOCKET, SO_TYPE, &n, &(socklen_t){4}), n));
    show("send on an unconnected stream", send(s, "x", 1, MSG_NOSIGNAL));
    show("recv on a listening socket", recv(s, buf, 1, MSG_DONTWAIT));
    show("socketpair AF_INET", socketpair(AF_INET, SOCK_STREAM, 0, q));
    show("socketpair NULL", syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, NULL));
    close(s);

    /* Event objects: the sizes a read or write must have. */
    int e = eventfd(0, EFD_NONBLOCK);
    show("eventfd read of 4 bytes", read(e, buf, 4));
    show("eventfd write of 4 bytes", write(e, buf, 4));
    unsigned long long v = ~0ull;
    show("eventfd write of 2^64-1", write(e, &v, 8));
    show("eventfd read with nothing", read(e, &v, 8));
    int t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    show("timerfd read of 4 bytes", read(t, buf, 4));
    show("timerfd read unarmed", read(t, &v, 8));
    show("timerfd write", write(t, &v, 8));
    int ep = epoll_create1(0);
    show("epoll read", read(ep, buf, 8));
    show("epoll write", write(ep, buf, 8));
    show("epoll_pwait2 bad timeout", syscall(SYS_epoll_pwait2, ep, buf, 1, &(struct timespec){0, -1}, NULL, 8));
    show("epoll_pwait bad sigsetsize", syscall(SYS_epoll_pwait, ep, buf, 1, 0, &(sigset_t){0}, 4));

    /* Small calls. */
    show("sysinfo NULL", syscall(SYS_sysinfo, NULL));
    show("times NULL", syscall(SYS_times, NULL) >= 0);
    show("getcpu NULLs", syscall(SYS_getcpu, NULL, NULL, NULL));
    show("getitimer NULL", syscall(SYS_getitimer, ITIMER_REAL, NULL));
    show("gettimeofday NULL", syscall(SYS_gettimeofday, NULL, NULL));
    show("time NULL", syscall(SYS_time, NULL) > 0);
    show("umask returns the old mask", (umask(027), umask(022)));
    show("sched_getaffinity small mask", syscall(SYS_sched_getaffinity, 0, 1, buf));
    show("sched_setaffinity empty mask", ({
             cpu_set_t none;
             CPU_ZERO(&none);
             sched_setaffinity(0, sizeof none, &none);
         }));
    show("sched_getparam missing", sched_getparam(999999, &(struct sched_param){0}));
    show("sched_setscheduler bad policy", sched_setscheduler(0, 99, &(struct sched_param){0}));
    show("getpriority bad which", getpriority(9, 0));
    show("setpriority missing", setpriority(PRIO_PROCESS, 999999, 0));
    show("getrandom NULL", syscall(SYS_getrandom, NULL, 8, 0));
    show("getrandom 0 bytes", syscall(SYS_getrandom, NULL, 0, 0));
    show("set_tid_address", syscall(SYS_set_tid_address, NULL) > 0);
    show("arch_prctl bad code", syscall(SYS_arch_prctl, 0x9999, 0));
    show("sigaltstack NULL, NULL", sigaltstack(NULL, NULL));
    show("kill pid 0 signal 0", kill(0, 0));
    show("waitid P_PID missing", waitid(P_PID, 999999, &(siginfo_t){0}, WEXITED));
    show("wait4 pid missing", wait4(999999, NULL, 0, NULL));
    show("uname", uname(&(struct utsname){0}));
    show("close_range bad flags", syscall(SYS_close_range, 3, 4, 8));
    show("close_range first > last", syscall(SYS_close_range, 10, 4, 0));
    show("memfd_create bad flags", syscall(SYS_memfd_create, "x", 0x100));
    show("memfd_create long name", syscall(SYS_memfd_create, "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789", 0));
    show("mknod a regular file", mknod(T "/node", S_IFREG | 0644, 0));
    show("mknod existing", mknod(T "/node", S_IFREG | 0644, 0));
    show("mknod bad type", mknod(T "/node2", 0170000 | 0644, 0));
    show("mkfifo", mkfifo(T "/fifo", 0644));
    show("open a FIFO O_WRONLY|O_NONBLOCK without reader", open(T "/fifo", O_WRONLY | O_NONBLOCK));
    show("open a FIFO O_RDONLY|O_NONBLOCK", open(T "/fifo", O_RDONLY | O_NONBLOCK) >= 0);
    system("rm -rf " T);
    return 0;
}
