/* Threads asleep inside calls that fill the program's memory (read on a
 * pipe, recv on a socket, readv) while the other threads go on reading
 * files, pipes and sockets: Erlang's signal dispatcher thread sleeps in a
 * read for the program's whole life. */
#define _GNU_SOURCE
#include "show.h"
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int pipefd[2], socks[2], vpipe[2];
/* What each reader got, printed by main after the join (the threads'
 * printfs would interleave differently on each side). */
static char got[3][64];

static void *pipe_reader(void *arg) {
    char b[16] = {0};
    long n = read(pipefd[0], b, sizeof b);
    snprintf(got[0], sizeof got[0], "pipe reader: %ld %.*s", n, (int)(n > 0 ? n : 0), b);
    return arg;
}

static void *sock_reader(void *arg) {
    char b[16] = {0};
    long n = recv(socks[1], b, sizeof b, 0);
    snprintf(got[1], sizeof got[1], "socket reader: %ld %.*s", n, (int)(n > 0 ? n : 0), b);
    return arg;
}

static void *vec_reader(void *arg) {
    char a[3] = {0}, b[8] = {0};
    struct iovec iov[2] = {{a, sizeof a}, {b, sizeof b}};
    long n = readv(vpipe[0], iov, 2);
    snprintf(got[2], sizeof got[2], "readv reader: %ld %.3s %.5s", n, a, b);
    return arg;
}

int main(void) {
    pthread_t t[3];
    show("pipe", pipe(pipefd));
    show("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, socks));
    show("pipe", pipe(vpipe));
    pthread_create(&t[0], 0, pipe_reader, 0);
    pthread_create(&t[1], 0, sock_reader, 0);
    pthread_create(&t[2], 0, vec_reader, 0);
    /* Let all three fall asleep in their calls. */
    usleep(100000);
    /* Meanwhile this thread reads into its own memory. */
    char buf[64];
    int fd = open("cbin/sleepio", O_RDONLY);
    show("open", fd >= 0 ? 0 : -1);
    show("read file", read(fd, buf, 8) > 0 ? 0 : -1);
    show("pread file", pread(fd, buf, 8, 2) > 0 ? 0 : -1);
    int other[2];
    show("pipe", pipe(other));
    show("write other", write(other[1], "xyz", 3));
    show("read other", read(other[0], buf, sizeof buf));
    close(fd);
    /* Now wake them one by one. */
    show("write pipe", write(pipefd[1], "hello", 5));
    pthread_join(t[0], 0);
    puts(got[0]);
    show("send", send(socks[0], "world", 5, 0));
    pthread_join(t[1], 0);
    puts(got[1]);
    show("write vpipe", write(vpipe[1], "abcdefgh", 8));
    pthread_join(t[2], 0);
    puts(got[2]);
    /* A fork while a sibling sleeps in a read makes the sibling's buffer
     * copy-on-write: the read must still land in it when it wakes (Erlang
     * forks erl_child_setup while its signal thread sleeps so). */
    pthread_create(&t[0], 0, pipe_reader, 0);
    usleep(100000);
    pid_t child = fork();
    if (child == 0)
        _exit(3);
    int status;
    show("waitpid", waitpid(child, &status, 0) == child ? WEXITSTATUS(status) : -1);
    show("write pipe", write(pipefd[1], "again", 5));
    pthread_join(t[0], 0);
    puts(got[0]);
    return 0;
}
