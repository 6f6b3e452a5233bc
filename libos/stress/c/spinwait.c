/* Stress (Veneer only), a measurement: a process makes up to 61 threads
 * that spin; once they spin, a process forked then (uninvolved) runs
 * /bin/sleep 1 (fork, exec, sleep, exit, wait, as a shell does) and says
 * how long it took. Issue 27 class 2: a thread owns a time slice as a
 * process does, so 61 spinning threads hold 61 of the 64 slices. */
#include <pthread.h>
#include <stdio.h>
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

int main(void)
{
    pthread_t t[61];
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    int n = 0;
    while (n < 61 && pthread_create(&t[n], &a, spin, NULL) == 0)
        n++;
    double t0 = now();
    pid_t p = fork();
    if (p == 0) {
        execl("/bin/sleep", "sleep", "1", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    double took = now() - t0;
    stop = 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("spinwait: `sleep 1` beside %d spinning threads took %.2f s\n", n, took);
    return 0;
}
