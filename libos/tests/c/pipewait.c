/* Two threads blocked at once on different pipes, one reading an empty
 * pipe and one writing a full one, each sleep waiting for its own term:
 * while they wait the process uses next to no CPU time (neither is woken
 * for the other's condition), and each wakes when its pipe is ready. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int a[2], b[2];

static void *reader(void *arg) {
    (void)arg;
    char c;
    printf("reader: %zd\n", read(a[0], &c, 1));
    return NULL;
}

static void *writer(void *arg) {
    (void)arg;
    static char buf[4096];
    printf("writer: %zd\n", write(b[1], buf, sizeof buf));
    return NULL;
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    pipe(a);
    pipe(b);
    /* Fill b. */
    fcntl(b[1], F_SETFL, O_NONBLOCK);
    static char chunk[4096];
    long filled = 0;
    ssize_t n;
    while ((n = write(b[1], chunk, sizeof chunk)) > 0)
        filled += n;
    fcntl(b[1], F_SETFL, 0);
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    struct timespec settle = {0, 100 * 1000 * 1000}, wait = {0, 500 * 1000 * 1000};
    nanosleep(&settle, NULL);
    double before = cpu();
    nanosleep(&wait, NULL);
    double used = cpu() - before;
    printf("cpu while both waited: %s\n", used < 0.2 ? "little" : "much");
    if (used >= 0.2)
        fprintf(stderr, "used %.3f s\n", used);
    write(a[1], "x", 1);
    pthread_join(r, NULL);
    static char sink[65536];
    long drained = 0;
    while (drained < filled + 4096 && (n = read(b[0], sink, sizeof sink)) > 0)
        drained += n;
    pthread_join(w, NULL);
    printf("drained: %s\n", drained == filled + 4096 ? "all" : "short");
    return 0;
}
