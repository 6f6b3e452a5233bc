#define _GNU_SOURCE
/* Unix datagram sockets bound to a name, against Linux: sendto and
 * recvfrom with the senders' names (a path, an abstract name, none),
 * connect then send, MSG_PEEK, a short buffer (MSG_TRUNC), MSG_DONTWAIT
 * EAGAIN when the receiver's inbox is full and room again after a
 * receive, a sender of another process blocked on the full inbox, poll
 * and epoll readiness, a bound socket shared by fork, a
 * descriptor passed with SCM_RIGHTS, the name unlinked while a connected
 * sender goes on, and ECONNREFUSED once the receiver has closed. Every
 * line printed is compared with the host. */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "expect.h"

static socklen_t addr(struct sockaddr_un *a, const char *name, size_t len)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path, name, len);
    /* A path's NUL counts, an abstract name is its bytes. */
    return offsetof(struct sockaddr_un, sun_path) + len + (name[0] != 0);
}

static int bound(const char *name, size_t len)
{
    struct sockaddr_un a;
    socklen_t l = addr(&a, name, len);
    if (name[0])
        unlink(name);
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, l) != 0)
        return -1;
    return s;
}

static long to(int s, const char *name, size_t len, const void *b, size_t n, int flags)
{
    struct sockaddr_un a;
    socklen_t l = addr(&a, name, len);
    return sendto(s, b, n, flags, (struct sockaddr *)&a, l);
}

/* Receives one datagram on s (flags) and prints it with its sender. */
static void show(const char *label, int s, int flags)
{
    char b[64] = {0};
    struct sockaddr_un a;
    socklen_t l = sizeof a;
    memset(&a, 0, sizeof a);
    long n = recvfrom(s, b, sizeof b - 1, flags, (struct sockaddr *)&a, &l);
    if (n < 0) {
        printf("%s: %s\n", label, strerror(errno));
        return;
    }
    size_t path = l > offsetof(struct sockaddr_un, sun_path) ? l - offsetof(struct sockaddr_un, sun_path) : 0;
    printf("%s: %ld \"%s\" from %u bytes of name", label, n, b, (unsigned)l);
    if (path > 0 && a.sun_path[0] == 0)
        printf(" @%.*s", (int)path - 1, a.sun_path + 1);
    else if (path > 0)
        printf(" %s", a.sun_path);
    printf("\n");
}

static void ready(const char *label, int s)
{
    struct pollfd p = {s, POLLIN | POLLOUT, 0};
    int n = poll(&p, 1, 0);
    printf("%s: poll %d%s%s\n", label, n, p.revents & POLLIN ? " in" : "", p.revents & POLLOUT ? " out" : "");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int a = bound("/tmp/dg_a", 9), b = bound("/tmp/dg_b", 9), z = bound("\0dg_abstract", 12);
    check("bind a path, another, an abstract name", a >= 0 && b >= 0 && z >= 0);
    int u = socket(AF_UNIX, SOCK_DGRAM, 0);

    /* Names, or none. */
    ready("b empty", b);
    check("a sends to b", to(a, "/tmp/dg_b", 9, "one", 3, 0) == 3);
    check("the unnamed sends to b", to(u, "/tmp/dg_b", 9, "two", 3, 0) == 3);
    check("the abstract sends to b", to(z, "/tmp/dg_b", 9, "three", 5, 0) == 5);
    ready("b holding three", b);
    show("peek", b, MSG_PEEK);
    show("recv", b, 0);
    show("recv", b, 0);
    show("recv", b, 0);
    show("recv, empty, MSG_DONTWAIT", b, MSG_DONTWAIT);
    check("b sends to the abstract name", to(b, "\0dg_abstract", 12, "four", 4, 0) == 4);
    show("recv at the abstract name", z, 0);

    /* A short buffer: the rest of the datagram goes. */
    to(a, "/tmp/dg_b", 9, "a-long-datagram", 15, 0);
    to(a, "/tmp/dg_b", 9, "next", 4, 0);
    char small[6] = {0};
    struct iovec io = {small, 5};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1};
    long n = recvmsg(b, &m, 0);
    printf("short buffer: %ld \"%s\"%s\n", n, small, m.msg_flags & MSG_TRUNC ? " MSG_TRUNC" : "");
    show("then the next whole", b, 0);

    /* connect, then send and write; getpeername. */
    int c = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un pa;
    socklen_t pl = addr(&pa, "/tmp/dg_b", 9);
    check("connect to b", connect(c, (struct sockaddr *)&pa, pl) == 0);
    struct sockaddr_un got;
    socklen_t gl = sizeof got;
    check("getpeername is b", getpeername(c, (struct sockaddr *)&got, &gl) == 0 && strcmp(got.sun_path, "/tmp/dg_b") == 0);
    check("send", send(c, "sent", 4, 0) == 4);
    check("write", write(c, "written", 7) == 7);
    show("recv", b, 0);
    show("recv", b, 0);

    /* Full: MSG_DONTWAIT says EAGAIN; one receive makes room. */
    char big[1000];
    memset(big, 'x', sizeof big);
    int sent = 0;
    long r;
    while ((r = to(a, "/tmp/dg_b", 9, big, sizeof big, MSG_DONTWAIT)) == (long)sizeof big && sent < 100000)
        sent++;
    expect_errno("b full, MSG_DONTWAIT", r, EAGAIN);
    check("some went in first", sent > 0);
    ready("b full", b);
    check("one received", recv(b, big, sizeof big, 0) == sizeof big);
    check("room again for one", to(a, "/tmp/dg_b", 9, big, sizeof big, MSG_DONTWAIT) == sizeof big);
    int drained = 0;
    while (recv(b, big, sizeof big, MSG_DONTWAIT) == sizeof big)
        drained++;
    check("as many received as sent", drained == sent);
    /* Another process, not holding b, blocks on its full inbox until
     * receives make room. */
    pid_t w = fork();
    if (w == 0) {
        close(b);
        for (int i = 0; i <= sent; i++)
            if (to(a, "/tmp/dg_b", 9, big, sizeof big, 0) != sizeof big)
                _exit(1);
        _exit(0);
    }
    usleep(300000);
    int ws;
    check("the sender waits on the full inbox", waitpid(w, &ws, WNOHANG) == 0);
    int taken = 0;
    while (taken <= sent && recv(b, big, sizeof big, 0) == sizeof big)
        taken++;
    check("its datagrams all came", taken == sent + 1);
    check("and it ended well", waitpid(w, &ws, 0) == w && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    int rcvbuf = 0;
    socklen_t rl = sizeof rcvbuf;
    check("SO_RCVBUF", getsockopt(b, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &rl) == 0 && rcvbuf > 0);

    /* epoll: nothing, then b readable. */
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = b};
    epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev);
    struct epoll_event out[2];
    printf("epoll, empty: %d\n", epoll_wait(ep, out, 2, 0));
    to(u, "/tmp/dg_b", 9, "wake", 4, 0);
    int k = epoll_wait(ep, out, 2, 0);
    printf("epoll, one queued: %d %s\n", k, k == 1 && out[0].events & EPOLLIN ? "in" : "-");
    show("recv", b, 0);
    close(ep);

    /* fork: the child shares b, receives, and answers a by name. */
    pid_t pid = fork();
    if (pid == 0) {
        show("child recv", b, 0);
        to(b, "/tmp/dg_a", 9, "from-child", 10, 0);
        _exit(0);
    }
    to(a, "/tmp/dg_b", 9, "to-child", 8, 0);
    int st;
    waitpid(pid, &st, 0);
    show("parent recv at a", a, 0);

    /* A descriptor passed to a bound socket by name. */
    int p[2];
    pipe(p);
    char ctl[CMSG_SPACE(sizeof(int))] = {0};
    char tag = 'p';
    struct iovec pio = {&tag, 1};
    struct msghdr pm = {.msg_name = &pa, .msg_namelen = pl, .msg_iov = &pio, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *h = CMSG_FIRSTHDR(&pm);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &p[1], sizeof(int));
    check("sendmsg a pipe's write end to b", sendmsg(u, &pm, 0) == 1);
    close(p[1]);
    char rctl[CMSG_SPACE(sizeof(int))] = {0};
    struct msghdr rm = {.msg_iov = &pio, .msg_iovlen = 1, .msg_control = rctl, .msg_controllen = sizeof rctl};
    int passed = -1;
    if (recvmsg(b, &rm, 0) == 1 && CMSG_FIRSTHDR(&rm))
        memcpy(&passed, CMSG_DATA(CMSG_FIRSTHDR(&rm)), sizeof passed);
    check("the end came", passed >= 0 && write(passed, "via", 3) == 3);
    close(passed);
    char pb[8] = {0};
    printf("the pipe reads: %ld \"%s\"\n", read(p[0], pb, sizeof pb), pb);
    close(p[0]);

    /* The name unlinked: gone by name, the connected sender goes on. */
    check("unlink b's name", unlink("/tmp/dg_b") == 0);
    expect_errno("sendto the unlinked name", to(a, "/tmp/dg_b", 9, "x", 1, 0), ENOENT);
    check("the connected sender still sends", send(c, "still", 5, 0) == 5);
    show("recv", b, 0);

    /* The receiver closes: refused, by connection and by name. */
    close(b);
    expect_errno("send to a closed receiver", send(c, "gone", 4, 0), ECONNREFUSED);
    close(a);
    expect_errno("sendto a's name, closed", to(u, "/tmp/dg_a", 9, "gone", 4, 0), ECONNREFUSED);
    close(z);
    expect_errno("sendto the abstract name, closed", to(u, "\0dg_abstract", 12, "gone", 4, 0), ECONNREFUSED);
    unlink("/tmp/dg_a");
    close(c);
    close(u);
    return 0;
}
