#define _GNU_SOURCE
/* FIFOs in use against Linux: several readers and writers on one FIFO,
 * end of file when the last writer closes, EPIPE and SIGPIPE when the
 * last reader has, poll, select and epoll on its ends (an epoll set too
 * after fork), an end inherited across fork and across exec, and one
 * passed over a Unix socket to a process that never held it. Every
 * line printed is compared with the host. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

#define PATH "tmp/fifouse"

static int open_nb(int how)
{
    return open(PATH, how | O_NONBLOCK);
}

/* Two readers and two writers: every byte reaches one reader, and end of
 * file comes only when both writers have closed. */
static void many(void)
{
    char buf[64] = {0};
    int r1 = open_nb(O_RDONLY), r2 = open_nb(O_RDONLY);
    int w1 = open_nb(O_WRONLY), w2 = open_nb(O_WRONLY);
    show("opens", r1 >= 0 && r2 >= 0 && w1 >= 0 && w2 >= 0);
    show("write 1", write(w1, "one,", 4));
    show("write 2", write(w2, "two", 3));
    show("reader 1 takes 4", read(r1, buf, 4));
    show("reader 2 takes the rest", read(r2, buf + 4, sizeof buf - 5));
    printf("got: %s\n", buf);
    close(w1);
    show("one writer left: read", read(r1, buf, sizeof buf));
    close(w2);
    show("no writer left: read 1", read(r1, buf, sizeof buf));
    show("no writer left: read 2", read(r2, buf, sizeof buf));
    close(r1);
    int w3 = open_nb(O_WRONLY);
    show("one reader left: open writer", w3 >= 0);
    show("one reader left: write", write(w3, "3", 1));
    close(w3);
    close(r2);
}

/* No reader left: EPIPE with SIGPIPE ignored, death by SIGPIPE without. */
static void epipe(void)
{
    int r = open_nb(O_RDONLY), w = open_nb(O_WRONLY);
    close(r);
    signal(SIGPIPE, SIG_IGN);
    show("write, no reader", write(w, "x", 1));
    signal(SIGPIPE, SIG_DFL);
    pid_t pid = fork();
    if (pid == 0) {
        write(w, "x", 1);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("writer killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    close(w);
}

static short polled(int fd, short events)
{
    struct pollfd p = {fd, events, 0};
    return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

static int selected(int fd, int for_write)
{
    fd_set s;
    FD_ZERO(&s);
    FD_SET(fd, &s);
    struct timeval zero = {0, 0};
    return select(fd + 1, for_write ? NULL : &s, for_write ? &s : NULL, NULL, &zero);
}

/* poll, select and epoll on both ends as the FIFO fills, drains and
 * loses its writer; an epoll set shared by fork reports to the child. */
static void readiness(void)
{
    char buf[16];
    int r = open_nb(O_RDONLY), w = open_nb(O_WRONLY);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN}, got;
    show("epoll add reader", epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev));
    printf("empty: poll reader %#x writer %#x, select reader %d writer %d, epoll %d\n", polled(r, POLLIN),
           polled(w, POLLOUT), selected(r, 0), selected(w, 1), epoll_wait(ep, &got, 1, 0));
    write(w, "ready", 5);
    int n = epoll_wait(ep, &got, 1, 0);
    printf("data: poll reader %#x, select reader %d, epoll %d events %#x\n", polled(r, POLLIN), selected(r, 0), n,
           got.events);
    read(r, buf, sizeof buf);
    pid_t pid = fork();
    if (pid == 0) {
        int n = epoll_wait(ep, &got, 1, 5000);
        _exit(n == 1 && got.events == EPOLLIN ? 0 : 1);
    }
    usleep(50000);
    write(w, "later", 5);
    int status;
    waitpid(pid, &status, 0);
    printf("child's epoll saw the write: %d\n", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    read(r, buf, sizeof buf);
    close(w);
    got.events = 0;
    n = epoll_wait(ep, &got, 1, 0);
    printf("writer gone: poll reader %#x, select reader %d, epoll %d events %#x\n", polled(r, POLLIN),
           selected(r, 0), n, got.events);
    close(ep);
    close(r);
}

/* An end opened before fork, and one kept across exec: the child and the
 * program it runs write through them. */
static void inherited(const char *self)
{
    char buf[32] = {0};
    int r = open_nb(O_RDONLY), w = open_nb(O_WRONLY);
    pid_t pid = fork();
    if (pid == 0) {
        close(r);
        write(w, "forked,", 7);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", w);
        execl(self, self, "write", fd, (char *)NULL);
        _exit(9);
    }
    close(w);
    int status;
    waitpid(pid, &status, 0);
    printf("child exit %d\n", WEXITSTATUS(status));
    show("read what the child wrote", read(r, buf, sizeof buf - 1));
    printf("got: %s\n", buf);
    show("then end of file", read(r, buf, sizeof buf));
    close(r);
}

/* An end passed over a Unix socket to a process that never held the
 * FIFO (forked before it was opened): it reads through it. */
static void passed(void)
{
    int s[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    pid_t pid = fork();
    if (pid == 0) {
        char c, buf[16] = {0}, control[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&c, 1};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                           .msg_controllen = sizeof control};
        if (recvmsg(s[1], &m, 0) != 1 || CMSG_FIRSTHDR(&m) == NULL)
            _exit(2);
        int fd;
        memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
        _exit(read(fd, buf, sizeof buf) == 6 && strcmp(buf, "passed") == 0 ? 0 : 3);
    }
    int r = open_nb(O_RDONLY), w = open_nb(O_WRONLY);
    write(w, "passed", 6);
    char c = 'f', control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {&c, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &r, sizeof r);
    show("send the read end", sendmsg(s[0], &m, 0));
    close(r);
    int status;
    waitpid(pid, &status, 0);
    printf("the receiver read through it: exit %d\n", WEXITSTATUS(status));
    close(w);
    close(s[0]);
    close(s[1]);
}

/* A user-1000 child's open for writing, told; it closes root's end
 * `keep` first, so it holds nothing of the FIFO. */
static void open_as_user(const char *when, int keep)
{
    pid_t c = fork();
    if (c == 0) {
        close(keep);
        if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
            printf("drop failed\n");
        int w = open(PATH, O_WRONLY | O_NONBLOCK);
        printf("user 1000 opens for writing %s: %s\n", when, w >= 0 ? "opened" : strerrorname_np(errno));
        if (w >= 0 && write(w, "u", 1) != 1)
            printf("user 1000's write failed\n");
        _exit(0);
    }
    waitpid(c, 0, 0);
}

/* chmod and chown of a FIFO held open reach later openers, as on Linux. */
static void modes(void)
{
    int keep = open(PATH, O_RDWR);
    open_as_user("root's 0600 FIFO", keep);
    show("chmod 0622", chmod(PATH, 0622));
    open_as_user("after chmod 0622", keep);
    show("chmod 0600", chmod(PATH, 0600));
    show("chown 1000", chown(PATH, 1000, 1000));
    open_as_user("its own 0600 FIFO after chown", keep);
    char b[4] = { 0 };
    show("root reads what user 1000 wrote", read(keep, b, sizeof b));
    printf("read: %s\n", b);
    close(keep);
    show("chown 0", chown(PATH, 0, 0));
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "write") == 0)
        return write(atoi(argv[2]), "exec'd", 6) == 6 ? 0 : 1;
    setvbuf(stdout, NULL, _IONBF, 0);
    unlink(PATH);
    show("mkfifo", mkfifo(PATH, 0600));
    modes();
    many();
    epipe();
    readiness();
    inherited(argv[0]);
    passed();
    unlink(PATH);
    return 0;
}
