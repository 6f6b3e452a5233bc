#define _GNU_SOURCE
/* signalfd as Linux has it (signalfd and signalfd4 answered ENOSYS on
 * Veneer): the refusals; reads that take the reader's pending signals of
 * the mask (SI_USER with the sender's pid, SI_TKILL; the thread's own
 * first, then the lowest; as many as the buffer holds), EAGAIN and EINVAL for a short buffer;
 * a signal outside the mask left pending; the mask changed; poll and
 * epoll readiness; a blocking read woken by a child's kill; a POSIX
 * timer's signal (SI_TIMER, its value); a second thread blocked reading
 * woken by a signal to the process; a fork child reading its own
 * signals through the inherited descriptor; fstat and /proc's name. */
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static void show(const char *what, long r)
{
    printf("%-40s %ld %s\n", what, r, r < 0 ? strerrorname_np(errno) : "");
}

static sigset_t set_of(int a, int b)
{
    sigset_t s;
    sigemptyset(&s);
    if (a)
        sigaddset(&s, a);
    if (b)
        sigaddset(&s, b);
    return s;
}

static int readable(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    int n = poll(&p, 1, 0);
    return n == 1 && (p.revents & POLLIN);
}

static void describe(const char *who, struct signalfd_siginfo *si)
{
    printf("%s: signo %u code %d from me %d uid %u\n", who, si->ssi_signo, si->ssi_code,
           si->ssi_pid == (unsigned)getpid(), si->ssi_uid);
}

static int thread_fd;

static void *thread_reader(void *arg)
{
    (void)arg;
    struct signalfd_siginfo si;
    long r = read(thread_fd, &si, sizeof si);
    printf("second thread's read: %ld signo %u\n", r, si.ssi_signo);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    sigset_t both = set_of(SIGUSR1, SIGUSR2), one = set_of(SIGUSR1, 0), two = set_of(SIGUSR2, 0);
    sigprocmask(SIG_BLOCK, &both, NULL);

    show("signalfd4 with flags 0x1234", syscall(SYS_signalfd4, -1, &one, 8, 0x1234));
    show("signalfd4 with sizemask 4", syscall(SYS_signalfd4, -1, &one, 4, 0));
    show("signalfd4 with a bad mask", syscall(SYS_signalfd4, -1, (void *)8, 8, 0));
    show("signalfd4 on stdout", syscall(SYS_signalfd4, 1, &one, 8, 0));
    show("signalfd4 on fd 999", syscall(SYS_signalfd4, 999, &one, 8, 0));
    show("signalfd4 on fd -5", syscall(SYS_signalfd4, -5, &one, 8, 0));

    int sfd = signalfd(-1, &one, SFD_NONBLOCK | SFD_CLOEXEC);
    printf("made: %d cloexec %d nonblock %d\n", sfd >= 0, fcntl(sfd, F_GETFD) == FD_CLOEXEC,
           (fcntl(sfd, F_GETFL) & O_NONBLOCK) != 0);
    struct signalfd_siginfo si[2];
    show("read with nothing pending", read(sfd, si, sizeof si));
    printf("readable with nothing pending: %d\n", readable(sfd));
    kill(getpid(), SIGUSR1);
    printf("readable after kill: %d\n", readable(sfd));
    show("read into 64 bytes", read(sfd, si, 64));
    show("read", read(sfd, si, sizeof si));
    describe("kill", &si[0]);
    sigset_t pending;
    sigpending(&pending);
    printf("SIGUSR1 still pending: %d\n", sigismember(&pending, SIGUSR1));

    raise(SIGUSR2);
    printf("SIGUSR2 (not in the mask): readable %d\n", readable(sfd));
    show("read", read(sfd, si, sizeof si));
    sigpending(&pending);
    printf("SIGUSR2 pending: %d\n", sigismember(&pending, SIGUSR2));
    printf("mask changed: %d\n", signalfd(sfd, &both, 0) == sfd);
    kill(getpid(), SIGUSR1);
    show("read of two", read(sfd, si, sizeof si));
    describe("first", &si[0]);
    describe("second", &si[1]);

    int ep = epoll_create1(0);
    struct epoll_event ev = {EPOLLIN, {.u64 = 7}}, out;
    epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
    show("epoll_wait, nothing pending", epoll_wait(ep, &out, 1, 0));
    kill(getpid(), SIGUSR2);
    show("epoll_wait after kill", epoll_wait(ep, &out, 1, 0));
    printf("event: in %d data %llu\n", (out.events & EPOLLIN) != 0, (unsigned long long)out.data.u64);
    read(sfd, si, sizeof si);
    show("epoll_wait after the read", epoll_wait(ep, &out, 1, 0));
    close(ep);

    int bfd = signalfd(-1, &one, 0);
    pid_t kid = fork();
    if (kid == 0) {
        usleep(50000);
        kill(getppid(), SIGUSR1);
        _exit(0);
    }
    show("blocking read", read(bfd, si, sizeof si));
    printf("blocking read: signo %u from the child %d\n", si[0].ssi_signo, si[0].ssi_pid == (unsigned)kid);
    waitpid(kid, NULL, 0);
    close(bfd);

    int tfd = signalfd(-1, &two, 0);
    struct sigevent sev = {0};
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGUSR2;
    sev.sigev_value.sival_int = 99;
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &sev, &t);
    struct itimerspec its = {{0, 0}, {0, 10000000}};
    timer_settime(t, 0, &its, NULL);
    show("read of a timer's signal", read(tfd, si, sizeof si));
    printf("timer: signo %u SI_TIMER %d int %d ptr %llu overrun %u tid is the timer %d\n", si[0].ssi_signo,
           si[0].ssi_code == SI_TIMER, si[0].ssi_int, (unsigned long long)si[0].ssi_ptr, si[0].ssi_overrun,
           si[0].ssi_tid == (unsigned)(long)t);
    timer_delete(t);

    thread_fd = signalfd(-1, &one, 0);
    pthread_t th;
    pthread_create(&th, NULL, thread_reader, NULL);
    usleep(50000);
    kill(getpid(), SIGUSR1);
    pthread_join(th, NULL);
    close(thread_fd);

    struct stat st;
    fstat(tfd, &st);
    printf("fstat: mode %o\n", st.st_mode & 0777);
    char path[64], name[64] = {0};
    snprintf(path, sizeof path, "/proc/self/fd/%d", tfd);
    readlink(path, name, sizeof name - 1);
    printf("/proc name: %s\n", name);

    fflush(stdout);
    kid = fork();
    if (kid == 0) {
        kill(getpid(), SIGUSR1);
        show("child's read", read(sfd, si, sizeof si));
        printf("child: signo %u from itself %d\n", si[0].ssi_signo, si[0].ssi_pid == (unsigned)getpid());
        _exit(0);
    }
    waitpid(kid, NULL, 0);
    show("parent's read afterwards", read(sfd, si, sizeof si));
    return 0;
}
