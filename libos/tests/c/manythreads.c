/* Thousands of threads across processes, and what an uninvolved process
 * waits beside them (issue 27, class 2). An uninvolved process U is
 * forked first; then PROCS processes each make THREADS threads that spin
 * (the hostile case: none ever sleeps). Once all spin, U naps 20 ms 50
 * times and reports how late its worst nap ended, and the parent runs
 * /bin/sleep 1 (fork, exec, wait, as a shell does) and times it. Then the
 * spinners stop and are joined. Before hierarchical slices a thread took
 * one of the 64 time slices: the machine held 62 threads. Veneer only:
 * Linux gives each of 2,000 spinners its share too, and a sleep beside
 * them there takes seconds (CFS's period grows with them).
 * Usage: manythreads PROCS THREADS SLEEP_MS [-v]: the sleep must take
 * less than SLEEP_MS (0: it is only reported; beside 10 CPU-bound
 * processes it gets a tenth of the CPU, as the others do, and under
 * TCG its exec alone takes many slices). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
    (void)arg;
    while (!stop)
        ;
    return NULL;
}

/* Makes `n` spinning threads, says how many on `ready`, spins until `go`
 * closes, joins them. */
static int spinner(int n, int ready, int go)
{
    pthread_t *t = calloc(n, sizeof *t);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    int made = 0;
    while (made < n && pthread_create(&t[made], &a, spin, NULL) == 0)
        made++;
    if (write(ready, &made, sizeof made) != sizeof made)
        return 1;
    char c;
    while (read(go, &c, 1) > 0)
        ;
    stop = 1;
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    return 0;
}

/* U: waits for its start, naps, writes its worst lateness (ms). */
static int uninvolved(int start, int out)
{
    char c;
    if (read(start, &c, 1) != 1)
        return 1;
    double worst = 0;
    for (int i = 0; i < 50; i++) {
        double t0 = now();
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double late = now() - t0 - 0.02;
        if (late > worst)
            worst = late;
    }
    int ms = (int)(worst * 1000);
    return write(out, &ms, sizeof ms) == sizeof ms ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    int procs = atoi(argv[1]), threads = atoi(argv[2]), sleep_ms = atoi(argv[3]);
    int verbose = argc > 4 && strcmp(argv[4], "-v") == 0;
    int ready[2], go[2], ustart[2], uout[2];
    if (pipe(ready) || pipe(go) || pipe(ustart) || pipe(uout))
        return 2;
    pid_t u = fork();
    if (u == 0)
        _exit(uninvolved(ustart[0], uout[1]));
    for (int i = 0; i < procs; i++)
        if (fork() == 0) {
            close(go[1]);
            _exit(spinner(threads, ready[1], go[0]));
        }
    close(go[0]);
    int total = 0;
    for (int i = 0; i < procs; i++) {
        int made = 0;
        if (read(ready[0], &made, sizeof made) != sizeof made)
            return 2;
        total += made;
    }
    if (write(ustart[1], "x", 1) != 1)
        return 2;
    double t0 = now();
    pid_t s = fork();
    if (s == 0) {
        execl("/bin/sleep", "sleep", "1", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(s, &st, 0);
    double took = now() - t0;
    int worst = -1;
    if (read(uout[0], &worst, sizeof worst) != sizeof worst)
        worst = -1;
    close(go[1]);
    while (wait(&st) > 0)
        ;
    if (verbose)
        fprintf(stderr, "manythreads: %d threads spinning in %d processes; worst nap %d ms late; sleep 1 took %.2f s\n",
                total, procs, worst, took);
    int all = total == procs * threads;
    printf("%d spinning threads in %d processes: %s\n", procs * threads, procs, all ? "all made" : "NOT all made");
    printf("an uninvolved process's 20 ms naps ended within 500 ms of their time: %s\n",
           worst >= 0 && worst < 500 ? "yes" : "NO");
    int slept = sleep_ms == 0 || took * 1000 < sleep_ms;
    if (sleep_ms)
        printf("sleep 1 beside them took less than %d ms: %s\n", sleep_ms, slept ? "yes" : "NO");
    return all && worst >= 0 && worst < 500 && slept ? 0 : 1;
}
