/* A thread blocked in a pipe read whose buffer a sibling unmaps: the read
 * answers EFAULT (nothing of the buffer is left) or the count it could
 * copy (its first page is left), as Linux does, the data it could not
 * copy stays in the pipe, and the thread goes on and is joined. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static char *buf;
static long got;
static int err;

static void nap(long ms)
{
    struct timespec ts = {0, ms * 1000000};
    nanosleep(&ts, NULL);
}

static void *reader(void *arg)
{
    (void)arg;
    got = read(fds[0], buf, 8192);
    err = got < 0 ? errno : 0;
    return NULL;
}

/* The reader blocks; once it sleeps, `len` bytes of its buffer from
 * `from` are unmapped and 8192 bytes written. */
static void run(const char *what, long from, long len)
{
    char data[8192], rest[8192];
    memset(data, 'x', sizeof data);
    buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED || pipe(fds) != 0)
        return;
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    nap(200);
    munmap(buf + from, len);
    if (write(fds[1], data, sizeof data) != sizeof data)
        printf("%s: short write\n", what);
    int joined = pthread_join(t, NULL) == 0;
    if (got < 0)
        printf("%s: read: -1 %s; joined: %s\n", what, strerrorname_np(err), joined ? "yes" : "no");
    else
        printf("%s: read: %ld; joined: %s\n", what, got, joined ? "yes" : "no");
    close(fds[1]);
    long left = 0, n;
    while ((n = read(fds[0], rest, sizeof rest)) > 0)
        left += n;
    printf("%s: left in the pipe: %ld\n", what, left);
    close(fds[0]);
    munmap(buf, 8192);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    run("whole buffer unmapped", 0, 8192);
    run("second page unmapped", 4096, 4096);
    return 0;
}
