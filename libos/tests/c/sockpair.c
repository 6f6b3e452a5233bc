#define _GNU_SOURCE
/* A socketpair's life across processes against Linux: its sockets
 * inherited by fork and kept across exec, one socket of the pair passed
 * itself with SCM_RIGHTS (the sender closes its copy while it is in
 * flight), epoll on a pair in a child, shutdown seen by the other
 * process, and end of file once every holder has closed. Every line
 * printed is compared with the host. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

static int send_fd(int s, int fd)
{
    char c = 'f';
    struct iovec io = {&c, 1};
    char ctl[CMSG_SPACE(sizeof(int))] = {0};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    return sendmsg(s, &m, 0);
}

static int recv_fd(int s)
{
    char c;
    struct iovec io = {&c, 1};
    char ctl[CMSG_SPACE(sizeof(int))] = {0};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    if (recvmsg(s, &m, 0) != 1)
        return -1;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    if (!h || h->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(h), sizeof fd);
    return fd;
}

/* Reads up to n bytes from fd and prints them under label. */
static void got(const char *label, int fd, int n)
{
    char b[32] = {0};
    long r = read(fd, b, n);
    printf("%s: %ld %s\n", label, r, r > 0 ? b : "");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 3) {
        /* After exec: the inherited socket answers. */
        int fd = atoi(argv[2]);
        char b[8] = {0};
        if (read(fd, b, 4) == 4 && !strcmp(b, "exec"))
            write(fd, "execd", 5);
        return 0;
    }
    int sv[2];
    show("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));

    /* fork, then exec: the child keeps its socket. */
    pid_t kid = fork();
    if (kid == 0) {
        close(sv[0]);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", sv[1]);
        execl(argv[0], argv[0], "child", fd, (char *)NULL);
        _exit(9);
    }
    write(sv[0], "exec", 4);
    got("the exec'd child answered", sv[0], 5);
    int status;
    waitpid(kid, &status, 0);
    printf("exit %d\n", WEXITSTATUS(status));

    /* One socket of another pair passed itself to a child, the sender's
       copy closed while it is in flight. */
    int p[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, p);
    kid = fork();
    if (kid == 0) {
        int s = recv_fd(sv[1]);
        char b[8] = {0};
        if (s >= 0 && read(s, b, 5) == 5 && !strcmp(b, "hello"))
            write(s, "passed", 6);
        _exit(s >= 0 ? 0 : 1);
    }
    write(p[0], "hello", 5);
    show("send a socket", send_fd(sv[0], p[1]));
    show("close the sent copy", close(p[1]));
    got("its new holder answered", p[0], 6);
    waitpid(kid, &status, 0);
    printf("exit %d\n", WEXITSTATUS(status));
    got("then end of file", p[0], 8);
    close(p[0]);

    /* epoll on a pair in a child; shutdown seen across processes. */
    socketpair(AF_UNIX, SOCK_STREAM, 0, p);
    kid = fork();
    if (kid == 0) {
        close(p[0]);
        int ep = epoll_create1(0);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = p[1]}, out;
        epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev);
        int n = epoll_wait(ep, &out, 1, 5000);
        char b[8] = {0};
        long r = read(p[1], b, sizeof b);
        int n2 = epoll_wait(ep, &out, 1, 5000);
        int hup = n2 == 1 && (out.events & EPOLLRDHUP);
        _exit(n == 1 && r == 3 && !strcmp(b, "now") && hup ? 0 : 1);
    }
    close(p[1]);
    usleep(50000);
    write(p[0], "now", 3);
    usleep(50000);
    show("shutdown wr", shutdown(p[0], SHUT_WR));
    waitpid(kid, &status, 0);
    printf("epoll child exit %d\n", WEXITSTATUS(status));
    got("after the child closed", p[0], 8);
    signal(SIGPIPE, SIG_IGN);
    show("write to a pair whose other end is gone", write(p[0], "x", 1));
    close(p[0]);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
