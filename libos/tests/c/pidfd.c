/* pidfds (issue 29: CPython's test_pidfd_open and test_pidfd_send_signal
 * were skipped): pidfd_open, poll readiness when the process ends,
 * pidfd_send_signal to a pidfd and to a /proc/PID directory, waitid
 * (P_PIDFD), and the errors Linux gives for bad arguments. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static long pidfd_open(long pid, long flags)
{
    return syscall(SYS_pidfd_open, pid, flags);
}

static long pidfd_send(long fd, long sig, void *info, long flags)
{
    return syscall(SYS_pidfd_send_signal, fd, sig, info, flags);
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    show("pidfd_open -1", pidfd_open(-1, 0));
    show("pidfd_open 0", pidfd_open(0, 0));
    show("pidfd_open bad flags", pidfd_open(getpid(), 1));
    show("pidfd_open a pid nobody has", pidfd_open(4000000, 0));
    int p[2];
    pipe(p);
    pid_t kid = fork();
    if (kid == 0) {
        char c;
        close(p[1]);
        read(p[0], &c, 1);
        _exit(7);
    }
    close(p[0]);
    int fd = pidfd_open(kid, 0);
    show("pidfd_open the child", fd >= 0 ? 0 : -1);
    printf("close-on-exec: %d\n", !!(fcntl(fd, F_GETFD) & FD_CLOEXEC));
    char buf[8];
    show("read a pidfd", read(fd, buf, sizeof buf));
    show("write a pidfd", write(fd, "x", 1));
    struct pollfd pf = {fd, POLLIN, 0};
    show("poll while it runs", poll(&pf, 1, 0));
    show("signal 99", pidfd_send(fd, 99, NULL, 0));
    show("an unknown flag", pidfd_send(fd, SIGTERM, NULL, 0x80));
    show("a descriptor not open", pidfd_send(100, SIGTERM, NULL, 0));
    show("a pipe, not a pidfd", pidfd_send(p[1], SIGTERM, NULL, 0));
    show("signal 0 (it lives)", pidfd_send(fd, 0, NULL, 0));
    show("SIGTERM", pidfd_send(fd, SIGTERM, NULL, 0));
    pf.revents = 0;
    show("poll until it ends", poll(&pf, 1, 10000));
    printf("revents POLLIN: %d\n", !!(pf.revents & POLLIN));
    siginfo_t si;
    memset(&si, 0, sizeof si);
    show("waitid P_PIDFD on a pipe", waitid(P_PIDFD, p[1], &si, WEXITED));
    show("waitid P_PIDFD on a closed descriptor", waitid(P_PIDFD, 100, &si, WEXITED));
    show("waitid P_PIDFD", waitid(P_PIDFD, fd, &si, WEXITED));
    printf("si_pid is the child: %d, code CLD_KILLED: %d, status SIGTERM: %d\n", si.si_pid == kid,
           si.si_code == CLD_KILLED, si.si_status == SIGTERM);
    show("signal after it was reaped", pidfd_send(fd, 0, NULL, 0));
    close(fd);
    close(p[1]);
    /* Non-blocking, and the /proc/PID directory as a pidfd. */
    fd = pidfd_open(getpid(), O_NONBLOCK);
    printf("O_NONBLOCK kept: %d\n", !!(fcntl(fd, F_GETFL) & O_NONBLOCK));
    close(fd);
    signal(SIGUSR1, on_usr1);
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", getpid());
    int dir = open(path, O_RDONLY | O_DIRECTORY);
    show("pidfd_send_signal to /proc/PID", pidfd_send(dir, SIGUSR1, NULL, 0));
    printf("SIGUSR1 handled: %d\n", got_usr1);
    close(dir);
    int root = open("/", O_RDONLY | O_DIRECTORY);
    show("pidfd_send_signal to /", pidfd_send(root, SIGUSR1, NULL, 0));
    close(root);
    return 0;
}
