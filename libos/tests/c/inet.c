/* Internet sockets against Linux, over 127.0.0.1 between processes: TCP
 * (connect, accept4, names, MSG_PEEK, shutdown and end of file, EPIPE),
 * a non-blocking connect (EINPROGRESS, POLLOUT, SO_ERROR), a refused
 * connect, readiness through poll, select and epoll, sendfile from a file
 * to a socket, UDP (sendto/recvfrom with the sender's address, a
 * connected socket), options, a receive timeout, and hostile arguments.
 * Ports are chosen by the kernel and never printed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

static struct sockaddr_in loopback(unsigned short port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

/* A listening TCP socket on 127.0.0.1 and a port the kernel chose. */
static int listener(unsigned short *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in a = loopback(0);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 8) < 0)
        return -1;
    socklen_t len = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return s;
}

static int connected(unsigned short port)
{
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(port);
    if (connect(c, (struct sockaddr *)&a, sizeof a) < 0)
        return -1;
    return c;
}

/* Reads until `n` bytes or end of file; how many. */
static long read_all(int fd, char *buf, long n)
{
    long got = 0;
    while (got < n) {
        long r = read(fd, buf + got, n - got);
        if (r <= 0)
            break;
        got += r;
    }
    return got;
}

static void tcp(void)
{
    unsigned short port;
    int l = listener(&port);
    show("tcp listener", l >= 0);
    pid_t pid = fork();
    if (pid == 0) {
        int c = connected(port);
        write(c, "hello", 5);
        char buf[64];
        long n = read_all(c, buf, 6);
        printf("client got %ld: %.*s\n", n, (int)n, buf);
        shutdown(c, SHUT_WR);
        show("client reads the end", read(c, buf, sizeof buf));
        _exit(0);
    }
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    int a = accept4(l, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    show("accept4", a >= 0);
    printf("peer: family %d addr %s len %d\n", peer.sin_family, inet_ntoa(peer.sin_addr), (int)len);
    show("accept4 flags: nonblock", (fcntl(a, F_GETFL) & O_NONBLOCK) != 0);
    show("accept4 flags: cloexec", (fcntl(a, F_GETFD) & FD_CLOEXEC) != 0);
    struct pollfd p = {a, POLLIN, 0};
    show("poll for the request", poll(&p, 1, 5000));
    char buf[64];
    show("peek", recv(a, buf, sizeof buf, MSG_PEEK));
    long n = read(a, buf, sizeof buf);
    printf("server got %ld: %.*s\n", n, (int)n, buf);
    struct sockaddr_in me;
    len = sizeof me;
    getsockname(a, (struct sockaddr *)&me, &len);
    printf("accepted socket's name: %s, port %s\n", inet_ntoa(me.sin_addr), ntohs(me.sin_port) == port ? "the listener's" : "other");
    // Shown once the client has shown what it got (it shuts its side
    // after), so the two processes' lines come in one order.
    long sent = write(a, "world!", 6);
    int fl = fcntl(a, F_GETFL);
    fcntl(a, F_SETFL, fl & ~O_NONBLOCK);
    long end = read(a, buf, sizeof buf);
    show("reply", sent);
    show("server reads the end", end);
    close(a);
    int st;
    waitpid(pid, &st, 0);
    show("client status", WEXITSTATUS(st));
    close(l);
}

static void nonblocking_connect(void)
{
    unsigned short port;
    int l = listener(&port);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = loopback(port);
    long r = connect(c, (struct sockaddr *)&a, sizeof a);
    show("non-blocking connect", r == 0 || errno == EINPROGRESS ? 0 : -1);
    struct pollfd p = {c, POLLOUT, 0};
    show("poll POLLOUT", poll(&p, 1, 5000));
    int err = -1;
    socklen_t len = sizeof err;
    show("SO_ERROR", getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len));
    show("SO_ERROR value", err);
    show("connect again", connect(c, (struct sockaddr *)&a, sizeof a));
    int s = accept(l, NULL, NULL);
    show("accepted", s >= 0);
    close(s);
    close(c);
    close(l);
    /* Nobody listens on the port any more. */
    int d = socket(AF_INET, SOCK_STREAM, 0);
    show("connect to a closed port", connect(d, (struct sockaddr *)&a, sizeof a));
    close(d);
}

static void readiness(void)
{
    unsigned short port;
    int l = listener(&port);
    int c = connected(port);
    int s = accept(l, NULL, NULL);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(s, &rd);
    struct timeval tv = {0, 0};
    show("select, nothing sent", select(s + 1, &rd, NULL, NULL, &tv));
    write(c, "x", 1);
    FD_ZERO(&rd);
    FD_SET(s, &rd);
    tv.tv_sec = 5;
    show("select, a byte sent", select(s + 1, &rd, NULL, NULL, &tv));
    int ep = epoll_create1(0);
    struct epoll_event ev = {EPOLLIN, {.fd = s}};
    epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
    struct epoll_event out[2];
    show("epoll_wait", epoll_wait(ep, out, 2, 5000));
    show("epoll event is EPOLLIN", out[0].events == EPOLLIN);
    char b;
    read(s, &b, 1);
    show("epoll_wait, drained", epoll_wait(ep, out, 2, 0));
    close(c);
    show("epoll_wait, peer closed", epoll_wait(ep, out, 2, 5000));
    show("EPOLLIN at the end", (out[0].events & EPOLLIN) != 0);
    show("read the end", read(s, &b, 1));
    close(ep);
    close(s);
    close(l);
}

static void sendfile_to_socket(void)
{
    unsigned short port;
    int l = listener(&port);
    int c = connected(port);
    int s = accept(l, NULL, NULL);
    int f = open("/tmp/inet-sendfile", O_CREAT | O_RDWR | O_TRUNC, 0644);
    char data[20000];
    for (int i = 0; i < (int)sizeof data; i++)
        data[i] = 'a' + i % 26;
    write(f, data, sizeof data);
    off_t off = 100;
    show("sendfile", sendfile(s, f, &off, 15000));
    show("offset after", off);
    char got[15000];
    long n = read_all(c, got, sizeof got);
    show("received", n);
    show("same bytes", memcmp(got, data + 100, 15000) == 0);
    close(f);
    close(s);
    close(c);
    close(l);
    unlink("/tmp/inet-sendfile");
}

static void udp(void)
{
    int a = socket(AF_INET, SOCK_DGRAM, 0);
    int b = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sa = loopback(0);
    show("udp bind", bind(a, (struct sockaddr *)&sa, sizeof sa));
    socklen_t len = sizeof sa;
    getsockname(a, (struct sockaddr *)&sa, &len);
    show("sendto", sendto(b, "datagram", 8, 0, (struct sockaddr *)&sa, sizeof sa));
    char buf[64];
    struct sockaddr_in from;
    len = sizeof from;
    long n = recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
    printf("recvfrom %ld: %.*s from %s len %d\n", n, (int)n, buf, inet_ntoa(from.sin_addr), (int)len);
    show("reply to the sender", sendto(a, "back", 4, 0, (struct sockaddr *)&from, len));
    show("connect the sender", connect(b, (struct sockaddr *)&sa, sizeof sa));
    show("recv", recv(b, buf, sizeof buf, 0));
    show("send connected", send(b, "again", 5, 0));
    show("recv again", recv(a, buf, sizeof buf, 0));
    show("recv, nothing there", recv(a, buf, sizeof buf, MSG_DONTWAIT));
    /* A datagram longer than the buffer: the rest is dropped, msg_flags
       says MSG_TRUNC, and MSG_TRUNC in the flags returns its real length. */
    show("send 12", send(b, "twelve bytes", 12, 0));
    char small[5];
    struct iovec iov = {small, sizeof small};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    show("recvmsg a cut datagram, peeking", recvmsg(a, &mh, MSG_PEEK));
    printf("msg_flags MSG_TRUNC: %d\n", !!(mh.msg_flags & MSG_TRUNC));
    show("recv with MSG_TRUNC: the whole length", recv(a, small, sizeof small, MSG_TRUNC));
    printf("cut datagram: %.5s\n", small);
    show("recv, the rest dropped", recv(a, buf, sizeof buf, MSG_DONTWAIT));
    /* Loopback carries a datagram as large as an IPv4 packet allows whole
       (65,507 bytes); one byte more is EMSGSIZE. */
    static char big[65508], whole[65536];
    memset(big, 'u', sizeof big);
    show("send 65507 bytes", send(b, big, 65507, 0));
    show("recv them", recv(a, whole, sizeof whole, 0));
    show("the same bytes", memcmp(big, whole, 65507) == 0);
    show("send 65508 bytes", send(b, big, 65508, 0));
    show("listen on udp", listen(a, 1));
    close(a);
    close(b);
}

static void options(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int v = -1;
    socklen_t len = sizeof v;
    show("SO_TYPE", getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &len));
    show("SO_TYPE value", v);
    int one = 1;
    show("TCP_NODELAY on", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one));
    len = sizeof v;
    getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &len);
    show("TCP_NODELAY", v != 0);
    show("SO_KEEPALIVE on", setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one));
    len = sizeof v;
    getsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &v, &len);
    show("SO_KEEPALIVE", v != 0);
    len = sizeof v;
    getsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &len);
    show("SO_RCVBUF positive", v > 0);
    struct linger lg = {1, 0};
    show("SO_LINGER", setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg));
    show("short option", setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, 2));
    show("unknown option", setsockopt(s, SOL_SOCKET, 9999, &one, sizeof one));
    close(s);

    unsigned short port;
    int l = listener(&port);
    int c = connected(port);
    struct timeval tv = {0, 200000};
    show("SO_RCVTIMEO", setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
    char b;
    show("recv times out", recv(c, &b, 1, 0));
    close(c);
    close(l);
}

static void hostile(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(0);
    a.sin_family = AF_UNIX;
    show("bind: wrong family", bind(s, (struct sockaddr *)&a, sizeof a));
    a.sin_family = AF_INET;
    show("bind: short address", bind(s, (struct sockaddr *)&a, 8));
    show("bind: bad pointer", bind(s, (struct sockaddr *)8, sizeof a));
    char b;
    show("recv: not connected", recv(s, &b, 1, 0));
    socklen_t len = sizeof a;
    show("getpeername: not connected", getpeername(s, (struct sockaddr *)&a, &len));
    show("accept: not listening", accept(s, NULL, NULL));
    show("bad type", socket(AF_INET, 77, 0));
    show("bad protocol", socket(AF_INET, SOCK_STREAM, IPPROTO_UDP));
    close(s);

    unsigned short port;
    int l = listener(&port);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in same = loopback(port);
    show("bind: port in use", bind(t, (struct sockaddr *)&same, sizeof same));
    close(t);
    int c = connected(port);
    int srv = accept(l, NULL, NULL);
    signal(SIGPIPE, SIG_IGN);
    shutdown(c, SHUT_WR);
    show("send after SHUT_WR", send(c, "x", 1, 0));
    close(srv);
    close(c);
    close(l);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    tcp();
    nonblocking_connect();
    readiness();
    sendfile_to_socket();
    udp();
    options();
    hostile();
    return 0;
}
