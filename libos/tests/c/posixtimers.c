#define _GNU_SOURCE
/* POSIX timers (timer_create, timer_settime, timer_gettime,
 * timer_getoverrun, timer_delete) as Linux has them: every call answered
 * ENOSYS on Veneer. The refusals in Linux's order; a one-shot signal with
 * its siginfo (SI_TIMER, the timer's id and value); a periodic timer whose
 * blocked signal piles up overruns; the default notification (SIGALRM,
 * the id as value); SIGEV_NONE read with timer_gettime; absolute times on
 * the monotonic and the wall clock; a signal to one thread
 * (SIGEV_THREAD_ID); glibc's SIGEV_THREAD callback; a timer on the
 * process's CPU time; a fork child has no timers. Only what both systems
 * must agree on is printed. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void show(const char *what, long r)
{
    printf("%-44s %ld %s\n", what, r, r < 0 ? strerrorname_np(errno) : "");
}

/* The kernel's calls, for ids glibc's wrappers would not pass through. */
static long kcreate(long clock, void *ev, void *id)
{
    return syscall(SYS_timer_create, clock, ev, id);
}

static long ksettime(long id, long flags, void *new, void *old)
{
    return syscall(SYS_timer_settime, id, flags, new, old);
}

static struct itimerspec spec(long value_ns, long every_ns)
{
    struct itimerspec s = {{every_ns / 1000000000, every_ns % 1000000000},
                           {value_ns / 1000000000, value_ns % 1000000000}};
    return s;
}

static long ns(struct timespec t)
{
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void refusals(void)
{
    int id;
    struct sigevent ev = {0};
    show("create on clock 99", kcreate(99, NULL, &id));
    show("create on MONOTONIC_RAW", kcreate(CLOCK_MONOTONIC_RAW, NULL, &id));
    show("create with a bad sigevent", kcreate(CLOCK_MONOTONIC, (void *)8, &id));
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = 0;
    show("create with signal 0", kcreate(CLOCK_MONOTONIC, &ev, &id));
    ev.sigev_signo = 65;
    show("create with signal 65", kcreate(CLOCK_MONOTONIC, &ev, &id));
    ev.sigev_signo = SIGUSR1;
    ev.sigev_notify = 7;
    show("create with notify 7", kcreate(CLOCK_MONOTONIC, &ev, &id));
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev._sigev_un._tid = 999999;
    show("create for thread 999999", kcreate(CLOCK_MONOTONIC, &ev, &id));
    struct itimerspec s = spec(1000000, 0);
    show("settime of timer 4242", ksettime(4242, 0, &s, NULL));
    show("settime of timer -1", ksettime(-1, 0, &s, NULL));
    show("gettime of timer 4242", syscall(SYS_timer_gettime, 4242, &s));
    show("getoverrun of timer 4242", syscall(SYS_timer_getoverrun, 4242));
    show("delete of timer 4242", syscall(SYS_timer_delete, 4242));
    ev.sigev_notify = SIGEV_NONE;
    int k = -1;
    show("create (SIGEV_NONE)", kcreate(CLOCK_MONOTONIC, &ev, &k));
    show("settime without a value", ksettime(k, 0, NULL, NULL));
    show("settime from a bad address", ksettime(k, 0, (void *)8, NULL));
    s = spec(1000000, 0);
    s.it_value.tv_nsec = 1000000000;
    show("settime with 10^9 ns", ksettime(k, 0, &s, NULL));
    s = spec(1000000, 0);
    s.it_interval.tv_sec = -1;
    show("settime with a negative interval", ksettime(k, 0, &s, NULL));
    struct itimerspec cur;
    syscall(SYS_timer_gettime, k, &cur);
    printf("after the failed calls: disarmed %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);
    /* (Linux arms the timer before it finds the bad address; Veneer does
     * not: only the answer is compared.) */
    s = spec(1000000000, 0);
    show("settime, old to a bad address", ksettime(k, 0, &s, (void *)8));
    show("gettime to a bad address", syscall(SYS_timer_gettime, k, (void *)8));
    show("delete", syscall(SYS_timer_delete, k));
    show("delete again", syscall(SYS_timer_delete, k));
    show("settime after delete", ksettime(k, 0, &s, NULL));
}

static volatile siginfo_t got;
static volatile int hits;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    got = *si;
    hits++;
}

static void handle(int sig)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
}

static void wait_hits(int n)
{
    for (int i = 0; i < 500 && hits < n; i++)
        usleep(10000);
}

static int marker;

static void one_shot(void)
{
    handle(SIGUSR1);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_ptr = &marker;
    timer_t t;
    show("create (SIGUSR1, a pointer as value)", timer_create(CLOCK_MONOTONIC, &ev, &t));
    struct itimerspec s = spec(20000000, 0), old;
    hits = 0;
    show("settime 20 ms", timer_settime(t, 0, &s, &old));
    printf("old setting: %ld %ld\n", ns(old.it_value), ns(old.it_interval));
    wait_hits(1);
    printf("one-shot: hits %d signo %d SI_TIMER %d value ok %d overrun %d timerid %d\n", hits, got.si_signo,
           got.si_code == SI_TIMER, got.si_value.sival_ptr == &marker, got.si_overrun,
           got.si_timerid == (int)(long)t);
    struct itimerspec cur;
    timer_gettime(t, &cur);
    printf("after it: value %ld interval %ld\n", ns(cur.it_value), ns(cur.it_interval));
    show("getoverrun", timer_getoverrun(t));
    timer_delete(t);
}

static void overruns(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGRTMIN + 1;
    ev.sigev_value.sival_int = 77;
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    struct itimerspec s = spec(5000000, 5000000);
    timer_settime(t, 0, &s, NULL);
    usleep(200000);
    siginfo_t si;
    int sig = sigwaitinfo(&set, &si);
    int over = timer_getoverrun(t);
    printf("periodic, blocked: signal is SIGRTMIN+1 %d SI_TIMER %d value %d overruns>=10 %d getoverrun same %d\n",
           sig == SIGRTMIN + 1, si.si_code == SI_TIMER, si.si_value.sival_int, si.si_overrun >= 10,
           over == si.si_overrun);
    struct itimerspec cur;
    timer_gettime(t, &cur);
    printf("periodic: interval %ld value in (0, 5 ms] %d\n", ns(cur.it_interval),
           ns(cur.it_value) > 0 && ns(cur.it_value) <= 5000000);
    s = spec(0, 5000000);
    timer_settime(t, 0, &s, NULL);
    timer_gettime(t, &cur);
    printf("disarmed: value %ld interval %ld\n", ns(cur.it_value), ns(cur.it_interval));
    timer_delete(t);
    /* What fired before the disarm may still be pending: drop it. */
    struct timespec zero = {0, 0};
    sigtimedwait(&set, &si, &zero);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static void default_event(void)
{
    handle(SIGALRM);
    timer_t t;
    long kid = -1;
    show("create with no sigevent", kcreate(CLOCK_MONOTONIC, NULL, &kid));
    (void)t;
    struct itimerspec s = spec(10000000, 0);
    hits = 0;
    ksettime((int)kid, 0, &s, NULL);
    wait_hits(1);
    printf("default: hits %d SIGALRM %d SI_TIMER %d value is the id %d\n", hits, got.si_signo == SIGALRM,
           got.si_code == SI_TIMER, got.si_value.sival_int == (int)kid);
    syscall(SYS_timer_delete, (int)kid);
}

static void none_and_absolute(void)
{
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_NONE;
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    struct itimerspec s = spec(1000000000, 0), cur;
    timer_settime(t, 0, &s, NULL);
    usleep(20000);
    timer_gettime(t, &cur);
    printf("SIGEV_NONE counts down: %d\n", ns(cur.it_value) > 0 && ns(cur.it_value) <= 980000000);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    s = spec(ns(now) + 500000000, 0);
    timer_settime(t, TIMER_ABSTIME, &s, NULL);
    timer_gettime(t, &cur);
    printf("absolute, monotonic: left in (0, 500 ms] %d\n",
           ns(cur.it_value) > 0 && ns(cur.it_value) <= 500000000);
    timer_delete(t);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR2;
    timer_create(CLOCK_REALTIME, &ev, &t);
    clock_gettime(CLOCK_REALTIME, &now);
    s = spec(ns(now) + 30000000, 0);
    timer_settime(t, TIMER_ABSTIME, &s, NULL);
    struct timespec two = {2, 0};
    siginfo_t si;
    printf("absolute, wall clock: fired %d\n", sigtimedwait(&set, &si, &two) == SIGUSR2);
    s = spec(1000000, 0);
    timer_settime(t, TIMER_ABSTIME, &s, NULL);
    printf("absolute, past: fired %d\n", sigtimedwait(&set, &si, &two) == SIGUSR2);
    timer_delete(t);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static sem_t ready;
static volatile pid_t waiter_tid;

static void *waiter(void *arg)
{
    (void)arg;
    waiter_tid = gettid();
    sem_post(&ready);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    siginfo_t si;
    int sig = sigwaitinfo(&set, &si);
    printf("thread: signal SIGUSR1 %d SI_TIMER %d value %d\n", sig == SIGUSR1, si.si_code == SI_TIMER,
           si.si_value.sival_int);
    return NULL;
}

static void thread_id(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    sem_init(&ready, 0, 0);
    pthread_t th;
    pthread_create(&th, NULL, waiter, NULL);
    sem_wait(&ready);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = 5;
    ev._sigev_un._tid = waiter_tid;
    timer_t t;
    show("create for the waiting thread", timer_create(CLOCK_MONOTONIC, &ev, &t));
    struct itimerspec s = spec(20000000, 0);
    timer_settime(t, 0, &s, NULL);
    pthread_join(th, NULL);
    sigset_t pending;
    sigpending(&pending);
    printf("first thread: SIGUSR1 pending %d\n", sigismember(&pending, SIGUSR1));
    timer_delete(t);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static sem_t called;
static volatile int callback_value;

static void callback(union sigval v)
{
    callback_value = v.sival_int;
    sem_post(&called);
}

static void sigev_thread(void)
{
    sem_init(&called, 0, 0);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = callback;
    ev.sigev_value.sival_int = 31;
    timer_t t;
    show("create (SIGEV_THREAD)", timer_create(CLOCK_MONOTONIC, &ev, &t));
    struct itimerspec s = spec(20000000, 0);
    timer_settime(t, 0, &s, NULL);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    int r = sem_timedwait(&called, &until);
    printf("SIGEV_THREAD: callback ran %d value %d\n", r == 0, callback_value);
    timer_delete(t);
}

static void cpu_time(void)
{
    handle(SIGPROF);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGPROF;
    timer_t t;
    show("create on the process's CPU time", timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &t));
    struct timespec start, now, wall0, wall;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
    clock_gettime(CLOCK_MONOTONIC, &wall0);
    struct itimerspec s = spec(50000000, 0);
    hits = 0;
    timer_settime(t, 0, &s, NULL);
    do {
        clock_gettime(CLOCK_MONOTONIC, &wall);
    } while (!hits && ns(wall) - ns(wall0) < 20000000000L);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    printf("CPU timer: fired %d SI_TIMER %d after 50 ms of CPU %d\n", hits, got.si_code == SI_TIMER,
           ns(now) - ns(start) >= 50000000);
    timer_delete(t);
}

static void fork_child(void)
{
    timer_t t;
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_NONE;
    timer_create(CLOCK_MONOTONIC, &ev, &t);
    struct itimerspec s = spec(1000000000, 0);
    timer_settime(t, 0, &s, NULL);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        struct itimerspec cur;
        show("child: gettime of the parent's timer", timer_gettime(t, &cur));
        _exit(0);
    }
    waitpid(p, NULL, 0);
    struct itimerspec cur;
    show("parent: gettime of it", timer_gettime(t, &cur));
    timer_delete(t);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    refusals();
    one_shot();
    overruns();
    default_event();
    none_and_absolute();
    thread_id();
    sigev_thread();
    cpu_time();
    fork_child();
    return 0;
}
