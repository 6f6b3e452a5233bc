#define _GNU_SOURCE
/* Event interfaces against Linux: epoll (level, edge, one-shot, nesting,
 * loops, hostile arguments, a close removing an interest, a blocking
 * wait), eventfd, timerfd, ppoll/epoll_pwait signal masks and the ioctls
 * FIONBIO/FIOCLEX/FIONCLEX. Every line printed is compared with the host. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "show.h"

static int add(int ep, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event e = {.events = events, .data.u64 = data};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
}

/* One wait: how many events, and the first's events and data. */
static void wait1(const char *what, int ep, int ms)
{
    struct epoll_event ev[4];
    int n = epoll_wait(ep, ev, 4, ms);
    if (n <= 0)
        show(what, n);
    else
        printf("%s: %d first %#x data %llu\n", what, n, ev[0].events, (unsigned long long)ev[0].data.u64);
}

static volatile sig_atomic_t got;
static void on_usr1(int s)
{
    (void)s;
    got++;
}

static void epoll_basics(void)
{
    show("epoll_create1 bad flags", epoll_create1(1));
    show("epoll_create 0", epoll_create(0));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    printf("epoll cloexec: %d\n", fcntl(ep, F_GETFD));
    int p[2];
    pipe(p);
    show("add pipe", add(ep, p[0], EPOLLIN, 42));
    show("add again", add(ep, p[0], EPOLLIN, 42));
    show("mod unknown", epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &(struct epoll_event){.events = EPOLLOUT}));
    show("del unknown", epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL));
    show("bad op", epoll_ctl(ep, 7, p[1], &(struct epoll_event){.events = EPOLLOUT}));
    show("bad fd", add(ep, 999, EPOLLIN, 0));
    show("bad epfd", add(999, p[0], EPOLLIN, 0));
    show("not an epoll", add(p[1], p[0], EPOLLIN, 0));
    show("itself", add(ep, ep, EPOLLIN, 0));
    int reg = open("/tmp/events.reg", O_CREAT | O_RDWR, 0600);
    show("regular file", add(ep, reg, EPOLLIN, 0));
    show("bad event pointer", epoll_ctl(ep, EPOLL_CTL_ADD, p[1], (void *)16));
    show("exclusive oneshot", add(ep, p[1], EPOLLOUT | EPOLLEXCLUSIVE | EPOLLONESHOT, 0));
    struct epoll_event ev;
    show("wait maxevents 0", epoll_wait(ep, &ev, 0, 0));
    show("wait on a pipe", epoll_wait(p[0], &ev, 1, 0));
    show("wait bad buffer", syscall(232, ep, 0xffff800000000000UL, 1, 0));
    wait1("empty", ep, 0);
    write(p[1], "ab", 2);
    wait1("level 1", ep, 0);
    wait1("level 2", ep, 0);
    char c;
    read(p[0], &c, 1);
    read(p[0], &c, 1);
    wait1("drained", ep, 0);

    /* Edge-triggered: once per write. */
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){.events = EPOLLIN | EPOLLET, .data.u64 = 7});
    write(p[1], "x", 1);
    wait1("edge 1", ep, 0);
    wait1("edge again", ep, 0);
    write(p[1], "y", 1);
    wait1("edge new data", ep, 0);

    /* One-shot: once, then silent until MOD. */
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 8});
    wait1("oneshot", ep, 0);
    wait1("oneshot again", ep, 0);
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 9});
    wait1("rearmed", ep, 0);

    /* Nesting, and a loop refused. */
    int outer = epoll_create1(0);
    show("nest", add(outer, ep, EPOLLIN, 5));
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &(struct epoll_event){.events = EPOLLIN, .data.u64 = 10});
    wait1("outer", outer, 0);
    show("loop", add(ep, outer, EPOLLIN, 0));
    struct pollfd pf = {.fd = outer, .events = POLLIN};
    int r = poll(&pf, 1, 0);
    printf("poll on a set: %d %#x\n", r, pf.revents);

    /* Hang-up, then the last close of a watched pipe end removes it. */
    close(p[1]);
    wait1("hangup", ep, 0);
    read(p[0], &c, 1);
    read(p[0], &c, 1);
    wait1("hangup drained", ep, 0);
    int d = dup(p[0]);
    close(p[0]);
    wait1("one descriptor left", ep, 0);
    close(d);
    wait1("all closed", ep, 0);
    close(outer);
    close(ep);
    close(reg);
    unlink("/tmp/events.reg");
}

static void epoll_blocking(void)
{
    int ep = epoll_create1(0);
    int p[2];
    pipe(p);
    add(ep, p[0], EPOLLIN, 1);
    pid_t kid = fork();
    if (kid == 0) {
        usleep(100000);
        write(p[1], "z", 1);
        _exit(0);
    }
    wait1("blocking wait", ep, -1);
    waitpid(kid, NULL, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct epoll_event ev;
    read(p[0], &ev, 1);
    int n = epoll_wait(ep, &ev, 1, 150);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("timeout: %d after >= 150 ms: %s\n", n, ms >= 150 ? "yes" : "no");

    /* epoll_pwait2: a timespec timeout, and a bad one. */
    struct timespec short_wait = {0, 20000000};
    show("epoll_pwait2 timeout", syscall(441, ep, &ev, 1, &short_wait, NULL, 8));
    struct timespec bad_wait = {0, -1};
    show("epoll_pwait2 bad timeout", syscall(441, ep, &ev, 1, &bad_wait, NULL, 8));
    write(p[1], "w", 1);
    show("epoll_pwait2 ready", syscall(441, ep, &ev, 1, NULL, NULL, 8));
    read(p[0], &ev, 1);

    /* epoll_pwait: a mask that lets SIGUSR1 through, blocked otherwise. */
    sigset_t block, none, now;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &block, NULL);
    signal(SIGUSR1, on_usr1);
    kid = fork();
    if (kid == 0) {
        usleep(100000);
        kill(getppid(), SIGUSR1);
        _exit(0);
    }
    got = 0;
    n = epoll_pwait(ep, &ev, 1, -1, &none);
    show("epoll_pwait", n);
    waitpid(kid, NULL, 0);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("handler ran: %d, mask back: %d\n", got, sigismember(&now, SIGUSR1));
    close(ep);
    close(p[0]);
    close(p[1]);
}

static void ppoll_mask(void)
{
    /* Pending while blocked: the mask swap delivers it at once. */
    sigset_t none, now;
    sigemptyset(&none);
    got = 0;
    kill(getpid(), SIGUSR1);
    printf("pending while blocked, handler ran: %d\n", got);
    int p[2];
    pipe(p);
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    int n = ppoll(&pf, 1, NULL, &none);
    show("ppoll with it unblocked", n);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("handler ran: %d, mask back: %d\n", got, sigismember(&now, SIGUSR1));
    struct timespec ts = {0, 1000000};
    show("ppoll timeout", ppoll(&pf, 1, &ts, &now));
    show("pselect6 bad size", syscall(270, 1, NULL, NULL, NULL, NULL, (long[]){(long)&none, 4}));
    close(p[0]);
    close(p[1]);
}

/* getpid answered without the lock must still let signals in: a loop of
 * nothing but getpid ends when another process's SIGUSR1 is handled. */
static void getpid_loop(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    got = 0;
    pid_t me = getpid(), kid = fork();
    if (kid == 0) {
        usleep(50000);
        kill(me, SIGUSR1);
        _exit(0);
    }
    long calls = 0;
    while (!got)
        calls += syscall(SYS_getpid) == me;
    waitpid(kid, NULL, 0);
    printf("getpid loop ended by a signal: %d, answers right: %d\n", got, calls > 0);
}

static void eventfds(void)
{
    int e = eventfd(3, 0);
    uint64_t v = 0;
    show("eventfd read", read(e, &v, 8));
    printf("value %llu\n", (unsigned long long)v);
    fcntl(e, F_SETFL, O_NONBLOCK);
    show("empty read", read(e, &v, 8));
    show("short read", read(e, &v, 4));
    v = UINT64_MAX;
    show("write max", write(e, &v, 8));
    v = 5;
    show("write 5", write(e, &v, 8));
    int ep = epoll_create1(0);
    add(ep, e, EPOLLIN | EPOLLET, 3);
    wait1("eventfd ready", ep, 0);
    wait1("eventfd edge", ep, 0);
    show("write 1", write(e, &v, 8));
    wait1("eventfd edge after write", ep, 0);
    close(e);
    e = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
    read(e, &v, 8);
    printf("semaphore read %llu\n", (unsigned long long)v);
    read(e, &v, 8);
    printf("semaphore read %llu\n", (unsigned long long)v);
    show("semaphore empty", read(e, &v, 8));
    show("eventfd bad flags", eventfd(0, 0x10));
    /* A blocking read woken by another process's write. */
    int b = eventfd(0, 0);
    pid_t kid = fork();
    if (kid == 0) {
        usleep(50000);
        uint64_t one = 9;
        write(b, &one, 8);
        _exit(0);
    }
    read(b, &v, 8);
    printf("blocking read %llu\n", (unsigned long long)v);
    waitpid(kid, NULL, 0);
    close(b);
    close(e);
    close(ep);
}

static void timerfds(void)
{
    show("timerfd bad clock", timerfd_create(99, 0));
    show("timerfd bad flags", timerfd_create(CLOCK_MONOTONIC, 1));
    int t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    uint64_t v;
    show("unarmed read", read(t, &v, 8));
    struct itimerspec its = {.it_interval = {0, 20000000}, .it_value = {0, 30000000}}, old;
    show("settime bad flags", timerfd_settime(t, 8, &its, NULL));
    struct itimerspec bad = {.it_value = {0, 1000000000}};
    show("settime bad nsec", timerfd_settime(t, 0, &bad, NULL));
    show("settime on a pipe", timerfd_settime(0, 0, &its, NULL));
    show("settime", timerfd_settime(t, 0, &its, NULL));
    timerfd_gettime(t, &old);
    printf("interval %ld ns, value set: %d\n", old.it_interval.tv_nsec, old.it_value.tv_nsec > 0);
    int ep = epoll_create1(0);
    add(ep, t, EPOLLIN, 11);
    wait1("timer wait", ep, -1);
    usleep(50000);
    read(t, &v, 8);
    printf("expirations >= 2: %d\n", v >= 2);
    its.it_interval.tv_nsec = 0;
    its.it_value.tv_nsec = 0;
    timerfd_settime(t, 0, &its, &old);
    printf("old interval %ld\n", old.it_interval.tv_nsec);
    show("disarmed read", read(t, &v, 8));
    close(t);
    /* Absolute, on the wall clock, blocking. */
    t = timerfd_create(CLOCK_REALTIME, 0);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    its = (struct itimerspec){.it_value = {now.tv_sec, now.tv_nsec}};
    its.it_value.tv_nsec += 30000000;
    if (its.it_value.tv_nsec >= 1000000000) {
        its.it_value.tv_sec++;
        its.it_value.tv_nsec -= 1000000000;
    }
    timerfd_settime(t, TFD_TIMER_ABSTIME, &its, NULL);
    show("absolute blocking read", read(t, &v, 8));
    printf("expirations %llu\n", (unsigned long long)v);
    close(t);
    close(ep);
}

static void ioctls(void)
{
    int p[2];
    pipe(p);
    int on = 1;
    show("FIONBIO", ioctl(p[0], FIONBIO, &on));
    char c;
    show("read after FIONBIO", read(p[0], &c, 1));
    on = 0;
    ioctl(p[0], FIONBIO, &on);
    printf("flags nonblock: %d\n", (fcntl(p[0], F_GETFL) & O_NONBLOCK) != 0);
    show("FIOCLEX", ioctl(p[0], FIOCLEX));
    printf("cloexec: %d\n", fcntl(p[0], F_GETFD));
    show("FIONCLEX", ioctl(p[0], FIONCLEX));
    printf("cloexec: %d\n", fcntl(p[0], F_GETFD));
    show("FIONBIO bad pointer", ioctl(p[0], FIONBIO, (void *)16));
    write(p[1], "12345", 5);
    int avail = -1;
    show("FIONREAD", ioctl(p[0], FIONREAD, &avail));
    printf("bytes waiting: %d\n", avail);
    ioctl(p[1], FIONREAD, &avail);
    printf("from the write end: %d\n", avail);
    show("FIONREAD on an eventfd", ioctl(eventfd(0, 0), FIONREAD, &avail));
    int reg = open("/tmp/events.fionread", O_CREAT | O_RDWR | O_TRUNC, 0600);
    write(reg, "abcdefgh", 8);
    lseek(reg, 3, SEEK_SET);
    ioctl(reg, FIONREAD, &avail);
    printf("file bytes after the offset: %d\n", avail);
    close(reg);
    unlink("/tmp/events.fionread");
    show("FIOCLEX bad fd", ioctl(999, FIOCLEX));
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    epoll_basics();
    epoll_blocking();
    ppoll_mask();
    getpid_loop();
    eventfds();
    timerfds();
    ioctls();
    return 0;
}
