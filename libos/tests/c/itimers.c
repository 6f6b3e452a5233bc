/* alarm, setitimer and getitimer: results and refusals as Linux gives
 * them, SIGALRM ending a blocked call (EINTR, or restarted with
 * SA_RESTART), ITIMER_REAL, ITIMER_VIRTUAL and ITIMER_PROF reaching a
 * program that spins without calls, killing one that does not handle
 * it, and timers not inherited by a fork child. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

static volatile int alarms, vtalrms, profs;
static int pipefd[2];

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void on_cpu_timer(int sig)
{
    if (sig == SIGVTALRM)
        vtalrms++;
    else
        profs++;
}

static void on_alarm_write(int sig)
{
    (void)sig;
    alarms++;
    (void)!write(pipefd[1], "x", 1);
}

static void handle_sig(int sig, void (*h)(int), int flags)
{
    struct sigaction sa = {0};
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, 0);
}

static void handle(void (*h)(int), int flags)
{
    handle_sig(SIGALRM, h, flags);
}

static long arm(long sec, long usec, long isec, long iusec)
{
    struct itimerval v = {{isec, iusec}, {sec, usec}};
    return setitimer(ITIMER_REAL, &v, 0);
}

/* A child that the signal's default action must kill. */
static void dies_of_alarm(const char *what, int spin)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        arm(0, 30000, 0, 0);
        if (spin)
            for (;;)
                ;
        pause();
        _exit(3);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("%s: signaled %d sig %d\n", what, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

int main(void)
{
    struct itimerval v, old;
    setvbuf(stdout, 0, _IONBF, 0);

    show("alarm(0) with none", alarm(0));
    show("alarm(5)", alarm(5));
    show("alarm(3) returns the old one's seconds", alarm(3));
    show("alarm(0) cancels, returns", alarm(0));
    show("alarm(0) again", alarm(0));

    show("getitimer none", getitimer(ITIMER_REAL, &v));
    printf("  value %ld.%06ld interval %ld.%06ld\n", (long)v.it_value.tv_sec, (long)v.it_value.tv_usec,
           (long)v.it_interval.tv_sec, (long)v.it_interval.tv_usec);
    show("getitimer bad which", getitimer(7, &v));
    show("getitimer bad pointer", getitimer(ITIMER_REAL, (void *)8));
    struct itimerval bad = {{0, 0}, {0, 1000000}};
    show("setitimer usec 1000000", setitimer(ITIMER_REAL, &bad, 0));
    bad.it_value.tv_usec = -1;
    show("setitimer usec -1", setitimer(ITIMER_REAL, &bad, 0));
    bad.it_value = (struct timeval){-1, 0};
    show("setitimer sec -1", setitimer(ITIMER_REAL, &bad, 0));
    bad.it_value = (struct timeval){1, 0};
    bad.it_interval.tv_usec = 2000000;
    show("setitimer interval usec 2000000", setitimer(ITIMER_REAL, &bad, 0));
    show("setitimer bad which", setitimer(9, &v, 0));
    show("setitimer bad new", setitimer(ITIMER_REAL, (void *)8, 0));
    struct itimerval ten = {{0, 0}, {10, 0}};
    show("setitimer bad old", setitimer(ITIMER_REAL, &ten, (void *)8));
    /* (Linux arms the timer before it fails to write old; lxrt changes
     * nothing: not compared.) */
    alarm(0);

    /* What is reported while armed: the interval exactly, the value no
     * more than was set. */
    arm(10, 0, 2, 500000);
    show("getitimer armed", getitimer(ITIMER_REAL, &v));
    printf("  value <= 10s: %d, > 9s: %d, interval %ld.%06ld\n",
           v.it_value.tv_sec < 10 || (v.it_value.tv_sec == 10 && v.it_value.tv_usec == 0),
           v.it_value.tv_sec >= 9, (long)v.it_interval.tv_sec, (long)v.it_interval.tv_usec);
    /* A value of 0 disarms whatever the interval; old gets the previous. */
    struct itimerval zero = {{1, 0}, {0, 0}};
    show("setitimer 0 disarms", setitimer(ITIMER_REAL, &zero, &old));
    printf("  old interval %ld.%06ld, old value > 9s: %d\n", (long)old.it_interval.tv_sec,
           (long)old.it_interval.tv_usec, old.it_value.tv_sec >= 9);
    getitimer(ITIMER_REAL, &v);
    printf("  now value %ld.%06ld interval %ld.%06ld\n", (long)v.it_value.tv_sec, (long)v.it_value.tv_usec,
           (long)v.it_interval.tv_sec, (long)v.it_interval.tv_usec);

    /* A one-shot timer ends pause. */
    handle(on_alarm, 0);
    arm(0, 50000, 0, 0);
    show("pause until SIGALRM", pause());
    printf("  alarms %d\n", alarms);
    getitimer(ITIMER_REAL, &v);
    printf("  one-shot is spent: %ld.%06ld\n", (long)v.it_value.tv_sec, (long)v.it_value.tv_usec);

    /* A blocked read ends with EINTR without SA_RESTART... */
    pipe(pipefd);
    char c;
    alarms = 0;
    arm(0, 50000, 0, 0);
    show("read interrupted", read(pipefd[0], &c, 1));
    printf("  alarms %d\n", alarms);
    /* ... and is made again with it (the handler feeds the pipe). */
    handle(on_alarm_write, SA_RESTART);
    alarms = 0;
    arm(0, 50000, 0, 0);
    show("read restarted", read(pipefd[0], &c, 1));
    printf("  alarms %d, byte %c\n", alarms, c);
    /* alarm's own signal, through nanosleep (EINTR regardless). */
    handle(on_alarm, SA_RESTART);
    alarms = 0;
    alarm(1);
    struct timespec ts = {5, 0};
    show("nanosleep interrupted", nanosleep(&ts, &ts));
    printf("  alarms %d, left more than 3s: %d\n", alarms, ts.tv_sec >= 3);

    /* An interval timer reaches a program that makes no calls. */
    alarms = 0;
    arm(0, 20000, 0, 20000);
    while (alarms < 3)
        ;
    arm(0, 0, 0, 0);
    printf("spinning program got 3 SIGALRMs\n");

    /* The CPU-time timers reach a spinning program too. */
    handle_sig(SIGVTALRM, on_cpu_timer, 0);
    handle_sig(SIGPROF, on_cpu_timer, 0);
    struct itimerval cpu = {{0, 20000}, {0, 20000}};
    show("setitimer ITIMER_VIRTUAL", setitimer(ITIMER_VIRTUAL, &cpu, 0));
    show("setitimer ITIMER_PROF", setitimer(ITIMER_PROF, &cpu, 0));
    getitimer(ITIMER_VIRTUAL, &v);
    printf("  virtual interval %ld.%06ld, armed %d\n", (long)v.it_interval.tv_sec, (long)v.it_interval.tv_usec,
           v.it_value.tv_sec != 0 || v.it_value.tv_usec != 0);
    while (vtalrms < 3 || profs < 3)
        ;
    setitimer(ITIMER_VIRTUAL, &zero, 0);
    show("setitimer ITIMER_PROF null disarms", setitimer(ITIMER_PROF, 0, 0));
    getitimer(ITIMER_PROF, &v);
    printf("spinning program got 3 SIGVTALRMs and 3 SIGPROFs; prof now %ld.%06ld\n", (long)v.it_value.tv_sec,
           (long)v.it_value.tv_usec);

    /* A fork child does not inherit the timer. */
    arm(10, 0, 0, 0);
    pid_t pid = fork();
    if (pid == 0) {
        getitimer(ITIMER_REAL, &v);
        printf("child's timer: %ld.%06ld\n", (long)v.it_value.tv_sec, (long)v.it_value.tv_usec);
        _exit(0);
    }
    waitpid(pid, 0, 0);
    getitimer(ITIMER_REAL, &v);
    printf("parent's timer kept: %d\n", v.it_value.tv_sec >= 8);
    arm(0, 0, 0, 0);

    dies_of_alarm("pausing child", 0);
    dies_of_alarm("spinning child", 1);
    return 0;
}
