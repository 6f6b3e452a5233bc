/* A parent killed while its children run is reaped at once, and its
 * orphans go to init. The middle process P of a chain (this program, P,
 * P's children) forks a child that sleeps, a child that has already
 * exited (a zombie) and a child that waits in a pipe read; then it waits
 * for them. SIGKILL to P: waitpid(P) must return at once with P killed,
 * P must be gone (kill(P, 0) fails), the orphans' parent must become 1
 * (init: the script's shell, PID 1 of its namespace on the host), init
 * must reap them when they end, and they are not this program's
 * children. Then the same with a SIGKILL to a process whose children are
 * themselves parents of running processes (a deeper tree). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* A running orphan-to-be (`orphan` reports its pid on `out` first): waits
 * until its parent is no longer `parent`, reports the new parent, then
 * sleeps until killed. */
static void orphan_wait(int out, pid_t parent)
{
    double t0 = now();
    while (getppid() == parent && now() - t0 < 20)
        nap(10);
    pid_t p = getppid();
    if (write(out, &p, sizeof p) != sizeof p)
        _exit(1);
    for (;;)
        pause();
}

static void orphan(int out, pid_t parent)
{
    pid_t me = getpid();
    if (write(out, &me, sizeof me) != sizeof me)
        _exit(1);
    orphan_wait(out, parent);
}

/* Reads one pid from `in` (0 after 20 s or at end of file). */
static pid_t read_pid(int in)
{
    pid_t p = 0;
    alarm(20);
    if (read(in, &p, sizeof p) != sizeof p)
        p = 0;
    alarm(0);
    return p;
}

/* Whether pid `p` is gone (reaped: kill(p, 0) fails with ESRCH) within 10 s. */
static int gone(pid_t p)
{
    double t0 = now();
    while (now() - t0 < 10) {
        if (kill(p, 0) != 0 && errno == ESRCH)
            return 1;
        nap(10);
    }
    return 0;
}

/* Kills `p` (which made `n` orphans that report on `in`) and checks all of
 * the above. */
static void check(const char *what, pid_t p, int in, int n)
{
    pid_t kids[8];
    for (int i = 0; i < n; i++)
        kids[i] = read_pid(in);
    double t0 = now();
    kill(p, SIGKILL);
    int st;
    pid_t w = waitpid(p, &st, 0);
    double took = now() - t0;
    printf("%s: waitpid of the killed parent: %s, killed by %s, at once: %s\n", what,
           w == p ? "it" : "something else", WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st)) : "nothing",
           took < 2 ? "yes" : "no");
    printf("%s: the killed parent is gone: %s\n", what, kill(p, 0) != 0 && errno == ESRCH ? "yes" : "no");
    for (int i = 0; i < n; i++) {
        pid_t parent = read_pid(in);
        printf("%s: orphan %d's new parent: %d\n", what, i, (int)parent);
    }
    for (int i = 0; i < n; i++) {
        int mine = waitpid(kids[i], &st, WNOHANG) == -1 && errno == ECHILD;
        kill(kids[i], SIGKILL);
        printf("%s: orphan %d is not our child: %s; init reaped it: %s\n", what, i, mine ? "yes" : "no",
               kids[i] > 0 && gone(kids[i]) ? "yes" : "no");
    }
}

int main(void)
{
    int r[2];
    if (pipe(r) != 0)
        return 1;
    setvbuf(stdout, NULL, _IONBF, 0);

    /* One level: P's children are a sleeper, a zombie and a pipe reader. */
    pid_t p = fork();
    if (p == 0) {
        pid_t me = getpid();
        int hold[2];
        if (pipe(hold) != 0)
            _exit(1);
        if (fork() == 0) {
            /* Blocked in a read of a pipe only P writes: end of file when
             * P dies. */
            close(hold[1]);
            pid_t x = getpid();
            if (write(r[1], &x, sizeof x) != sizeof x)
                _exit(1);
            char c;
            while (read(hold[0], &c, 1) > 0)
                ;
            orphan_wait(r[1], me);
        }
        close(hold[0]);
        if (fork() == 0) {
            close(hold[1]);
            orphan(r[1], me);
        }
        if (fork() == 0)
            _exit(0); /* a zombie P never reaps */
        for (;;)
            pause();
    }
    check("one level", p, r[0], 2);

    /* Two levels: P's child Q has a running child G of its own; Q goes
     * to init with G still its child; when Q is killed, G goes to init. */
    p = fork();
    if (p == 0) {
        pid_t me = getpid();
        if (fork() == 0) {
            pid_t g = fork();
            if (g == 0)
                for (;;)
                    pause();
            if (write(r[1], &g, sizeof g) != sizeof g)
                _exit(1);
            orphan(r[1], me);
        }
        for (;;)
            pause();
    }
    pid_t g = read_pid(r[0]);
    check("two levels", p, r[0], 1);
    kill(g, SIGKILL);
    printf("two levels: the orphan's own child went to init and was reaped: %s\n", g > 0 && gone(g) ? "yes" : "no");
    return 0;
}
