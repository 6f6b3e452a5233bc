/* A thread bomb across processes: N processes each call pthread_create
 * until it fails (or CAP threads), their threads napping 50 ms in a loop.
 * Once every one has made its threads, a process forked only then (so it
 * may find no time slice left on Veneer) naps 20 times 50 ms and says how
 * late it woke; then the bombers stop and join their threads. Nothing of
 * this may stop the machine; the only failure allowed is EAGAIN.
 * Options: -v, each process says how many threads it made and the napper
 * how late it was (which differs between Linux and Veneer); -d, glibc's
 * default stacks (8 MiB) rather than 64 KiB. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAP 200

static volatile int stop;
static int verbose, default_stacks;

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *napper(void *arg)
{
    (void)arg;
    while (!stop)
        nap(50);
    return NULL;
}

/* One bomber: threads until pthread_create fails, then a byte on `ready`,
 * then its threads nap until `go` reaches its end. */
static int bomb(int me, int ready, int go)
{
    static pthread_t t[CAP];
    pthread_attr_t a;
    pthread_attr_init(&a);
    if (!default_stacks)
        pthread_attr_setstacksize(&a, 64 * 1024);
    int n = 0, err = 0;
    while (n < CAP) {
        err = pthread_create(&t[n], &a, napper, NULL);
        if (err != 0)
            break;
        n++;
    }
    if (verbose)
        fprintf(stderr, "threadbomb: process %d made %d threads (%s)\n", me, n,
                err ? strerrorname_np(err) : "cap");
    char c = 1;
    if (write(ready, &c, 1) != 1)
        return 4;
    while (read(go, &c, 1) > 0)
        ;
    stop = 1;
    for (int i = 0; i < n; i++)
        if (pthread_join(t[i], NULL) != 0)
            return 3;
    return err == 0 || err == EAGAIN ? 0 : 2;
}

/* The uninvolved process: its naps must end on time. */
static int uninvolved(void)
{
    double worst = 0;
    for (int i = 0; i < 20; i++) {
        double t0 = now();
        nap(50);
        double late = now() - t0 - 0.05;
        if (late > worst)
            worst = late;
    }
    if (verbose)
        fprintf(stderr, "threadbomb: longest nap past its deadline %.0f ms\n", worst * 1000);
    return worst < 2.0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "-d") == 0)
            default_stacks = 1;
        else
            return 1;
    }
    int procs = i < argc ? atoi(argv[i]) : 2;
    pid_t pid[64];
    int ready[2], go[2];
    if (procs < 1 || procs > 64 || pipe(ready) != 0 || pipe(go) != 0)
        return 1;
    for (i = 0; i < procs; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            close(ready[0]);
            close(go[1]);
            _exit(bomb(i, ready[1], go[0]));
        }
        if (pid[i] < 0)
            return 1;
    }
    close(ready[1]);
    close(go[0]);
    char c;
    for (i = 0; i < procs; i++)
        if (read(ready[0], &c, 1) != 1)
            return 1;
    int st;
    pid_t u = fork();
    if (u == 0)
        _exit(uninvolved());
    int on_time = u > 0 && waitpid(u, &st, 0) == u && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    close(go[1]);
    int bad = 0;
    for (i = 0; i < procs; i++)
        if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    printf("threadbomb %d: %s; a process forked meanwhile napped on time: %s\n", procs,
           bad ? "some process failed" : "every process made threads (failures EAGAIN) and joined them",
           on_time ? "yes" : "no");
    return 0;
}
