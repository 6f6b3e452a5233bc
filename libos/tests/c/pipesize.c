#define _GNU_SOURCE
/* A pipe's size (F_GETPIPE_SZ, F_SETPIPE_SZ) as Linux has it: both were
 * EINVAL on Veneer (CPython's test_fcntl_f_pipesize and subprocess's
 * pipesize tests failed). The default, rounding to a power of two pages,
 * the refusals (EBADF for what is not a pipe, EINVAL past 2^31, EBUSY for
 * held bytes that would not fit), the size seen from both ends, a small
 * ring full after one page (a partial non-blocking write, EAGAIN, poll
 * not writable), held bytes kept through shrinking (across the ring's
 * wrap) and growing to 1 MiB, and a blocking writer pushing 100,000 bytes
 * through a one-page pipe. Sizes past 1 MiB are not compared: Linux lets
 * root past /proc/sys/fs/pipe-max-size only with CAP_SYS_RESOURCE, which
 * a container's root may lack (pipemax.c checks them on Veneer). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r)
{
    printf("%-44s %ld %s\n", what, r, r < 0 ? strerrorname_np(errno) : "");
}

static unsigned char pattern(long i)
{
    return (unsigned char)(i * 7 + i / 251);
}

/* Writes n bytes of the pattern from position `from`. */
static long put(int fd, long from, long n)
{
    unsigned char *b = malloc(n);
    for (long i = 0; i < n; i++)
        b[i] = pattern(from + i);
    long r = write(fd, b, n);
    free(b);
    return r;
}

/* Reads n bytes and checks they are the pattern from `from`. */
static int check(int fd, long from, long n)
{
    unsigned char *b = malloc(n);
    long got = 0;
    while (got < n) {
        long r = read(fd, b + got, n - got);
        if (r <= 0)
            break;
        got += r;
    }
    int ok = got == n;
    for (long i = 0; ok && i < n; i++)
        ok = b[i] == pattern(from + i);
    free(b);
    return ok;
}

static int writable(int fd)
{
    struct pollfd p = {fd, POLLOUT, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    int p[2];
    pipe2(p, O_NONBLOCK);
    show("default size", fcntl(p[1], F_GETPIPE_SZ));
    show("set 4096 on the write end", fcntl(p[1], F_SETPIPE_SZ, 4096));
    show("size seen from the read end", fcntl(p[0], F_GETPIPE_SZ));
    show("set 5000", fcntl(p[0], F_SETPIPE_SZ, 5000));
    show("set 0", fcntl(p[0], F_SETPIPE_SZ, 0));
    show("set 1", fcntl(p[0], F_SETPIPE_SZ, 1));
    show("set 2^31 + 1", fcntl(p[0], F_SETPIPE_SZ, (1UL << 31) + 1));
    show("set 2^32 + 4096", fcntl(p[0], F_SETPIPE_SZ, (1UL << 32) + 4096));
    show("size after the refusals", fcntl(p[0], F_GETPIPE_SZ));

    int file = open("tmp/pipesize.txt", O_CREAT | O_RDWR | O_TRUNC, 0600);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int ev = eventfd(0, 0);
    show("F_GETPIPE_SZ of a regular file", fcntl(file, F_GETPIPE_SZ));
    show("F_SETPIPE_SZ of a regular file", fcntl(file, F_SETPIPE_SZ, 4096));
    show("F_GETPIPE_SZ of a socket", fcntl(sv[0], F_GETPIPE_SZ));
    show("F_GETPIPE_SZ of an eventfd", fcntl(ev, F_GETPIPE_SZ));
    close(file);
    unlink("tmp/pipesize.txt");

    /* One page: full after one page. */
    show("non-blocking write of 8192 into 4096", put(p[1], 0, 8192));
    show("then a write of 1", put(p[1], 4096, 1));
    printf("writable when full: %d\n", writable(p[1]));
    show("set 65536 holding a page", fcntl(p[1], F_SETPIPE_SZ, 65536));
    printf("writable after growing: %d\n", writable(p[1]));
    printf("held page intact: %d\n", check(p[0], 0, 4096));

    /* Held bytes that would not fit; bytes kept across the wrap. */
    put(p[1], 0, 10000);
    show("set 4096 holding 10000 bytes", fcntl(p[1], F_SETPIPE_SZ, 4096));
    printf("intact after the refusal: %d\n", check(p[0], 0, 10000));
    put(p[1], 0, 60000);
    check(p[0], 0, 50000);
    put(p[1], 60000, 20000);
    show("set 32768 holding 30000 across the wrap", fcntl(p[1], F_SETPIPE_SZ, 32768));
    printf("intact after shrinking: %d\n", check(p[0], 50000, 30000));

    /* Growing to the largest size. */
    put(p[1], 0, 30000);
    show("set 1 MiB holding 30000", fcntl(p[1], F_SETPIPE_SZ, 1 << 20));
    show("then a write of 900000", put(p[1], 30000, 900000));
    printf("intact after growing: %d\n", check(p[0], 0, 930000));
    show("size now", fcntl(p[0], F_GETPIPE_SZ));
    close(p[0]);
    close(p[1]);

    /* A blocking writer through one page. */
    pipe(p);
    fcntl(p[1], F_SETPIPE_SZ, 4096);
    fflush(stdout);
    pid_t kid = fork();
    if (kid == 0) {
        close(p[0]);
        _exit(put(p[1], 0, 100000) == 100000 ? 0 : 1);
    }
    close(p[1]);
    usleep(20000);
    int ok = check(p[0], 0, 100000);
    int status;
    waitpid(kid, &status, 0);
    printf("100000 bytes through a one-page pipe: intact %d, writer exit %d\n", ok, WEXITSTATUS(status));
    return 0;
}
