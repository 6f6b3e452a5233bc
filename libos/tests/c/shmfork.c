#define _GNU_SOURCE
/* Memory shared across fork (issue 29: a MAP_SHARED mapping stopped being
 * shared once the process forked, there was no /dev/shm, and sem_open
 * failed): anonymous and file-backed MAP_SHARED pages written by a child
 * and a grandchild, touched before the fork or not; MAP_PRIVATE staying
 * private; a process-shared mutex and condition variable, and a named
 * semaphore (sem_open) waited on across processes (futexes named by the
 * shared frame); shm_open. Every line is compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void child_then_wait(void (*body)(void))
{
    pid_t k = fork();
    if (k == 0) {
        body();
        _exit(0);
    }
    int st;
    waitpid(k, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        printf("child failed: %#x\n", st);
}

static int *shared, *private;

static void write_both(void)
{
    shared[0] = 11;
    shared[2048] = 22; /* page 2, untouched before the fork */
    private[0] = 33;
    if (fork() == 0) {
        shared[1024] = 44; /* page 1, by a grandchild */
        _exit(0);
    }
    wait(0);
}

struct box {
    pthread_mutex_t m;
    pthread_cond_t c;
    int ready;
};
static struct box *box;

static void signal_later(void)
{
    usleep(100000);
    pthread_mutex_lock(&box->m);
    box->ready = 1;
    pthread_cond_signal(&box->c);
    pthread_mutex_unlock(&box->m);
}

static sem_t *sem;

static void post_later(void)
{
    usleep(100000);
    sem_post(sem);
}

static char *file_map;

static void write_file_map(void)
{
    strcpy(file_map, "written by the child");
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    shared = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    private = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    shared[0] = 1;
    private[0] = 2;
    child_then_wait(write_both);
    printf("shared: %d %d %d, private: %d\n", shared[0], shared[1024], shared[2048], private[0]);

    /* A process-shared mutex and condition variable. */
    box = mmap(0, sizeof *box, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&box->m, &ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_cond_init(&box->c, &ca);
    pid_t k = fork();
    if (k == 0) {
        signal_later();
        _exit(0);
    }
    double t0 = now();
    pthread_mutex_lock(&box->m);
    while (!box->ready)
        pthread_cond_wait(&box->c, &box->m);
    pthread_mutex_unlock(&box->m);
    printf("condition variable: woken by the other process after waiting: %d\n", now() - t0 > 0.05);
    waitpid(k, 0, 0);

    /* A named semaphore, unlinked at once, shared through fork (what
     * Python's multiprocessing does). */
    sem_unlink("/shmfork");
    sem = sem_open("/shmfork", O_CREAT | O_EXCL, 0600, 0);
    printf("sem_open: %s\n", sem == SEM_FAILED ? strerrorname_np(errno) : "ok");
    if (sem == SEM_FAILED)
        return 1;
    show("sem_unlink", sem_unlink("/shmfork"));
    k = fork();
    if (k == 0) {
        post_later();
        _exit(0);
    }
    t0 = now();
    show("sem_wait", sem_wait(sem));
    printf("semaphore: posted by the other process after waiting: %d\n", now() - t0 > 0.05);
    waitpid(k, 0, 0);
    show("sem_trywait on 0", sem_trywait(sem));
    show("sem_open of a missing name", sem_open("/shmfork", 0) == SEM_FAILED ? -1 : 0);

    /* POSIX shared memory: a file in /dev/shm, mapped shared. */
    shm_unlink("/shmfork.mem");
    int fd = shm_open("/shmfork.mem", O_CREAT | O_RDWR, 0600);
    show("shm_open", fd < 0 ? -1 : 0);
    show("ftruncate", ftruncate(fd, 4096));
    file_map = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    strcpy(file_map, "written by the parent");
    child_then_wait(write_file_map);
    printf("file mapping: %s\n", file_map);
    show("shm_unlink", shm_unlink("/shmfork.mem"));
    show("shm_unlink again", shm_unlink("/shmfork.mem"));
    return 0;
}
