/* Unix-domain sockets against Linux: socketpair (stream, datagram,
 * packet), shutdown, EOF and EPIPE, poll, SCM_RIGHTS (across fork, a
 * truncated control buffer, malformed control messages), named sockets
 * (bind, listen, connect, accept, names) and hostile arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

/* Sends `n` descriptors with one byte; returns sendmsg's result. */
static long send_fds(int s, const int *fds, int n, size_t cmsg_len)
{
    char byte = 'F';
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = cmsg_len ? cmsg_len : CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    return sendmsg(s, &m, 0);
}

/* Receives one byte and up to `room` descriptors into `out`; prints what
 * came. */
static int recv_fds(int s, int *out, int room)
{
    char byte = 0;
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = room ? CMSG_SPACE(sizeof(int) * room) : 0};
    long r = recvmsg(s, &m, 0);
    int got = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            memcpy(out + got, CMSG_DATA(c), sizeof(int) * n);
            got += n;
        }
    printf("recvmsg: %ld byte %c, %d descriptors, ctrunc %d\n", r, byte, got, (m.msg_flags & MSG_CTRUNC) != 0);
    return got;
}

/* A child's side of a pipe end passed before the accept: waits for `go`,
 * accepts on listener `l`, takes the end and reads it, says what came as
 * `who`, and exits. */
static void take_passed_end(const char *who, int l, int go)
{
    char c;
    read(go, &c, 1);
    int s = accept(l, NULL, NULL);
    int got_fd = -1;
    int n = recv_fds(s, &got_fd, 1);
    char b[32] = {0};
    long k = n == 1 ? read(got_fd, b, sizeof b - 1) : -1;
    printf("%s got %d descriptor(s) and read %ld: %s\n", who, n, k, b);
    _exit(0);
}

/* The sender's side: connects to `a`, sends a pipe end at once, writes
 * `text` into the pipe, lets child `kid` go (`go`) and waits for it. */
static void pass_end_before_accept(const struct sockaddr_un *a, const char *connect_what,
                                   const char *send_what, const char *text, int go, pid_t kid)
{
    int cl = socket(AF_UNIX, SOCK_STREAM, 0);
    show(connect_what, connect(cl, (const struct sockaddr *)a, sizeof *a));
    int q[2];
    pipe(q);
    show(send_what, send_fds(cl, &q[0], 1, 0));
    close(q[0]);
    write(q[1], text, strlen(text));
    close(q[1]);
    write(go, "g", 1);
    waitpid(kid, NULL, 0);
    close(cl);
    unlink(a->sun_path);
}

static void pairs(void)
{
    show("socket of no family", socket(9999, SOCK_STREAM, 0));
    show("socket bad flags", socket(AF_UNIX, SOCK_STREAM | 0x100, 0));
    show("socket RDM", socket(AF_UNIX, SOCK_RDM, 0));
    show("socket bad protocol", socket(AF_UNIX, SOCK_STREAM, 7));
    show("socketpair bad pointer", syscall(53, AF_UNIX, SOCK_STREAM, 0, 16L));
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int type;
    socklen_t len = sizeof type;
    getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &len);
    printf("SO_TYPE %d\n", type);
    int domain = -1, proto = -1;
    len = sizeof domain;
    show("SO_DOMAIN", getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &domain, &len));
    len = sizeof proto;
    show("SO_PROTOCOL", getsockopt(sv[0], SOL_SOCKET, SO_PROTOCOL, &proto, &len));
    printf("domain %d protocol %d\n", domain, proto);
    struct ucred cred;
    len = sizeof cred;
    getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &len);
    printf("SO_PEERCRED of a pair: own pid %d, uid %d\n", cred.pid == getpid(), cred.uid);
    int lone = socket(AF_UNIX, SOCK_STREAM, 0);
    len = sizeof cred;
    show("SO_PEERCRED unconnected", getsockopt(lone, SOL_SOCKET, SO_PEERCRED, &cred, &len));
    close(lone);
    struct pollfd pf = {.fd = sv[0], .events = POLLIN | POLLOUT};
    poll(&pf, 1, 0);
    printf("poll fresh: %#x\n", pf.revents);
    write(sv[1], "hello", 5);
    int avail = -1;
    ioctl(sv[0], FIONREAD, &avail);
    printf("FIONREAD: %d\n", avail);
    poll(&pf, 1, 0);
    printf("poll with data: %#x\n", pf.revents);
    char b[16] = {0};
    show("read", read(sv[0], b, sizeof b));
    show("shutdown bad how", shutdown(sv[0], 7));
    show("shutdown bad fd", shutdown(sv[0] + 100, SHUT_WR));
    int pp[2];
    pipe(pp);
    show("shutdown a pipe", shutdown(pp[0], SHUT_WR));
    close(pp[0]);
    close(pp[1]);
    show("shutdown wr", shutdown(sv[1], SHUT_WR));
    show("read after peer shut", read(sv[0], b, sizeof b));
    show("write after shut", send(sv[1], "x", 1, MSG_NOSIGNAL));
    pf.events = POLLIN | POLLOUT | POLLRDHUP;
    poll(&pf, 1, 0);
    printf("poll after peer shut wr: %#x\n", pf.revents);
    close(sv[1]);
    poll(&pf, 1, 0);
    printf("poll after peer closed: %#x\n", pf.revents);
    show("send to closed peer", send(sv[0], "x", 1, MSG_NOSIGNAL));
    signal(SIGPIPE, SIG_IGN);
    show("write to closed peer", write(sv[0], "x", 1));
    signal(SIGPIPE, SIG_DFL);
    close(sv[0]);
    int p[2];
    pipe(p);
    show("send on a pipe", send(p[1], "x", 1, 0));
    close(p[0]);
    close(p[1]);

    /* Datagrams keep their boundaries; a short buffer truncates. */
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    send(sv[0], "one", 3, 0);
    send(sv[0], "three", 5, 0);
    send(sv[0], "truncated", 9, 0);
    show("dgram 1", recv(sv[1], b, sizeof b, 0));
    show("dgram 2", recv(sv[1], b, sizeof b, 0));
    char small[4];
    struct iovec iov = {small, sizeof small};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    long r = recvmsg(sv[1], &m, 0);
    printf("dgram short: %ld trunc %d\n", r, (m.msg_flags & MSG_TRUNC) != 0);
    show("dgram empty nonblocking", recv(sv[1], b, sizeof b, MSG_DONTWAIT));
    close(sv[0]);
    close(sv[1]);
    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
    send(sv[0], "ab", 2, 0);
    send(sv[0], "cde", 3, 0);
    show("packet 1", recv(sv[1], b, sizeof b, 0));
    show("packet 2", recv(sv[1], b, sizeof b, 0));
    close(sv[0]);
    show("packet EOF", recv(sv[1], b, sizeof b, 0));
    close(sv[1]);
}

static void rights(void)
{
    int sv[2], p[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pipe(p);
    show("send a pipe end", send_fds(sv[0], &p[0], 1, 0));
    close(p[0]);
    int got[4];
    if (recv_fds(sv[1], got, 1) == 1) {
        write(p[1], "via SCM_RIGHTS", 14);
        char b[16] = {0};
        read(got[0], b, 14);
        printf("read through it: %s\n", b);
        close(got[0]);
    }
    /* Two sent, room for one: the other is closed, MSG_CTRUNC. */
    int two[2] = {p[1], p[1]};
    send_fds(sv[0], two, 2, 0);
    int n = recv_fds(sv[1], got, 1);
    for (int i = 0; i < n; i++)
        close(got[i]);
    send_fds(sv[0], two, 2, 0);
    recv_fds(sv[1], got, 0);
    show("cmsg_len too small", send_fds(sv[0], two, 1, 8));
    show("cmsg_len past the buffer", send_fds(sv[0], two, 1, 200));
    int bad = 99;
    show("a descriptor not open", send_fds(sv[0], &bad, 1, 0));
    /* Across processes: the child gets the write end and writes. */
    int q[2];
    pipe(q);
    pid_t kid = fork();
    if (kid == 0) {
        close(q[1]);
        int w;
        if (recv_fds(sv[1], &w, 1) == 1)
            write(w, "from the child", 14);
        _exit(0);
    }
    send_fds(sv[0], &q[1], 1, 0);
    close(q[1]);
    waitpid(kid, NULL, 0);
    char b[16] = {0};
    show("read the child's write", read(q[0], b, sizeof b));
    printf("%s\n", b);
    close(q[0]);
    close(p[1]);
    close(sv[0]);
    close(sv[1]);
    /* A pipe end still in flight when the sender has closed both of its
       own ends and then the socket it was sent to: the socket's close
       drops it (CPython's multiprocessing does this; lxrt died reading the
       end's description in frames it no longer mapped). */
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pipe(q);
    show("send a pipe end, then close both ends", send_fds(sv[0], &q[0], 1, 0));
    close(q[0]);
    close(q[1]);
    show("close the socket it waits in", close(sv[1]));
    show("and the other", close(sv[0]));
    /* A pipe end sent on a connection its listener has not accepted yet
       (multiprocessing's forkserver: the child listens, the parent
       connects and sends at once); the child accepts, then uses it. */
    int ready[2], go[2];
    pipe(ready);
    pipe(go);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, "/tmp/sock.early");
    unlink(a.sun_path);
    kid = fork();
    if (kid == 0) {
        int l = socket(AF_UNIX, SOCK_STREAM, 0);
        bind(l, (struct sockaddr *)&a, sizeof a);
        listen(l, 1);
        write(ready[1], "r", 1);
        take_passed_end("the listener's child", l, go[0]);
    }
    char c;
    read(ready[0], &c, 1);
    pass_end_before_accept(&a, "connect before the accept", "send a pipe end before the accept",
                           "sent before the accept", go[1], kid);
    /* The same with a listener this process made and handed to the child
       (the forkserver's way): the child, not the listener's maker, takes
       the connection and the pipe end. */
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    bind(l, (struct sockaddr *)&a, sizeof a);
    listen(l, 1);
    kid = fork();
    if (kid == 0)
        take_passed_end("the child holding our listener", l, go[0]);
    close(l);
    pass_end_before_accept(&a, "connect to the listener we handed on", "send a pipe end to it",
                           "through a handed listener", go[1], kid);
}

static void named(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, "/tmp/sock");
    unlink(a.sun_path);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    show("listen unbound", listen(l, 4));
    int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
    show("bind", bind(l2, (struct sockaddr *)&a, sizeof a));
    show("bind again", bind(l2, (struct sockaddr *)&a, sizeof a));
    show("bind a name in use", bind(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&a, sizeof a));
    show("bind short address", bind(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&a, 1));
    struct stat st;
    stat(a.sun_path, &st);
    printf("node is a socket: %d\n", S_ISSOCK(st.st_mode));
    show("open it", open(a.sun_path, O_RDWR));
    int c0 = socket(AF_UNIX, SOCK_STREAM, 0);
    show("connect before listen", connect(c0, (struct sockaddr *)&a, sizeof a));
    show("accept before listen", accept(l2, NULL, NULL));
    show("listen", listen(l2, 4));
    int d = socket(AF_UNIX, SOCK_DGRAM, 0);
    show("connect dgram to stream", connect(d, (struct sockaddr *)&a, sizeof a));
    fcntl(l2, F_SETFL, O_NONBLOCK);
    show("accept nothing waiting", accept(l2, NULL, NULL));
    fcntl(l2, F_SETFL, 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 77};
    epoll_ctl(ep, EPOLL_CTL_ADD, l2, &ev);
    pid_t kid = fork();
    if (kid == 0) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&a, sizeof a) != 0)
            _exit(1);
        struct sockaddr_un peer;
        socklen_t len = sizeof peer;
        getpeername(c, (struct sockaddr *)&peer, &len);
        char line[64];
        int n = snprintf(line, sizeof line, "child's peer: %s\n", peer.sun_path);
        write(c, line, n);
        close(c);
        _exit(0);
    }
    struct epoll_event out;
    int ready = epoll_wait(ep, &out, 1, -1);
    printf("epoll on the listener: %d data %llu\n", ready, (unsigned long long)out.data.u64);
    struct sockaddr_un from;
    socklen_t flen = sizeof from;
    int s = accept4(l2, (struct sockaddr *)&from, &flen, SOCK_CLOEXEC);
    printf("accepted: %d, address length %u, cloexec %d\n", s >= 0, flen, fcntl(s, F_GETFD));
    char b[64] = {0};
    long r, all = 0;
    while ((r = read(s, b + all, sizeof b - 1 - all)) > 0)
        all += r;
    printf("%s", b);
    show("then EOF", r);
    struct sockaddr_un me;
    socklen_t mlen = sizeof me;
    getsockname(s, (struct sockaddr *)&me, &mlen);
    printf("accepted socket's name: %s\n", me.sun_path);
    mlen = sizeof me;
    getpeername(s, (struct sockaddr *)&me, &mlen);
    printf("its peer's address length: %u\n", mlen);
    struct ucred cred;
    socklen_t clen = sizeof cred;
    getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen);
    printf("SO_PEERCRED names the child: %d\n", cred.pid == kid);
    waitpid(kid, NULL, 0);
    close(s);
    close(l2);
    show("connect after the listener closed", connect(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&a, sizeof a));
    unlink(a.sun_path);
    show("connect to a missing name", connect(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&a, sizeof a));
    close(ep);
    close(l);
}

/* A sockaddr_un for abstract name `name` (n bytes after the leading NUL). */
static socklen_t abstract_addr(struct sockaddr_un *a, const char *name, size_t n)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name, n);
    return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

/* Linux's abstract namespace: names with a leading NUL, no file behind
 * them, gone when the socket closes; autobind with the family alone. */
static void abstract(void)
{
    struct sockaddr_un a, got;
    socklen_t alen = abstract_addr(&a, "veneer/abstract\0test", 20);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    show("bind abstract", bind(l, (struct sockaddr *)&a, alen));
    show("listen", listen(l, 4));
    show("no file made", access("veneer", F_OK));
    int again = socket(AF_UNIX, SOCK_STREAM, 0);
    show("bind the same name", bind(again, (struct sockaddr *)&a, alen));
    struct sockaddr_un shorter = a;
    show("bind a prefix of it", bind(again, (struct sockaddr *)&shorter, alen - 5));
    close(again);
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    show("connect", connect(c, (struct sockaddr *)&a, alen));
    int s = accept(l, NULL, NULL);
    show("accept", s >= 0 ? 0 : -1);
    show("send", send(c, "abc", 3, 0));
    char buf[8];
    show("recv", recv(s, buf, sizeof buf, 0));
    socklen_t glen = sizeof got;
    getsockname(l, (struct sockaddr *)&got, &glen);
    printf("getsockname: length %d, same bytes %d\n", (int)glen, glen == alen && !memcmp(&got, &a, alen));
    glen = sizeof got;
    getpeername(c, (struct sockaddr *)&got, &glen);
    printf("getpeername: length %d, same bytes %d\n", (int)glen, glen == alen && !memcmp(&got, &a, alen));
    close(s);
    close(c);
    close(l);
    c = socket(AF_UNIX, SOCK_STREAM, 0);
    show("connect after the listener closed", connect(c, (struct sockaddr *)&a, alen));
    close(c);
    l = socket(AF_UNIX, SOCK_STREAM, 0);
    show("bind the name again", bind(l, (struct sockaddr *)&a, alen));
    close(l);
    c = socket(AF_UNIX, SOCK_STREAM, 0);
    socklen_t nlen = abstract_addr(&a, "nobody-holds-this", 17);
    show("connect to a name nobody holds", connect(c, (struct sockaddr *)&a, nlen));
    close(c);
    /* The longest name: all 108 bytes of sun_path. */
    char longest[107];
    memset(longest, 'x', sizeof longest);
    l = socket(AF_UNIX, SOCK_DGRAM, 0);
    show("bind the longest name", bind(l, (struct sockaddr *)&a, abstract_addr(&a, longest, 107)));
    close(l);
    /* Autobind: the family alone gives a NUL and five hex digits. */
    l = socket(AF_UNIX, SOCK_STREAM, 0);
    sa_family_t fam = AF_UNIX;
    show("autobind", bind(l, (struct sockaddr *)&fam, sizeof fam));
    glen = sizeof got;
    getsockname(l, (struct sockaddr *)&got, &glen);
    int hex = glen == offsetof(struct sockaddr_un, sun_path) + 6 && got.sun_path[0] == 0;
    for (int i = 1; i < 6 && hex; i++)
        hex = strchr("0123456789abcdef", got.sun_path[i]) != NULL;
    printf("autobind name: length %d, NUL and five hex digits %d\n", (int)glen, hex);
    show("autobind again", bind(l, (struct sockaddr *)&fam, sizeof fam));
    show("listen on it", listen(l, 1));
    c = socket(AF_UNIX, SOCK_STREAM, 0);
    show("connect to it", connect(c, (struct sockaddr *)&got, glen));
    close(c);
    close(l);
}

/* Prints what one recvfrom on `s` got: the bytes and the sender's
 * address (its length, and its path when it has one). */
static void show_from(const char *what, int s, int flags)
{
    char buf[32];
    struct sockaddr_un from;
    memset(&from, 0, sizeof from);
    socklen_t flen = sizeof from;
    long n = recvfrom(s, buf, sizeof buf, flags, (struct sockaddr *)&from, &flen);
    if (n < 0) {
        show(what, n);
        return;
    }
    printf("%s: %ld '%.*s' from length %u '%s'\n", what, n, (int)n, buf, flen,
           flen > sizeof(sa_family_t) ? from.sun_path : "");
}

/* Connectionless datagrams: sendto a bound name and recvfrom its sender,
 * connect to a datagram socket, a receiver connected elsewhere, a
 * receiver gone, and the addresses a send refuses. */
static void datagrams(void)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX}, b = a, f = a;
    strcpy(a.sun_path, "/tmp/dgram-a");
    strcpy(b.sun_path, "/tmp/dgram-b");
    strcpy(f.sun_path, "/tmp/dgram-file");
    unlink(a.sun_path);
    unlink(b.sun_path);
    close(open(f.sun_path, O_CREAT | O_WRONLY, 0666));
    int ra = socket(AF_UNIX, SOCK_DGRAM, 0);
    show("bind a", bind(ra, (struct sockaddr *)&a, sizeof a));
    int u = socket(AF_UNIX, SOCK_DGRAM, 0);
    show("send, unconnected and no address", send(u, "x", 1, 0));
    show("sendto a", sendto(u, "hello", 5, 0, (struct sockaddr *)&a, sizeof a));
    show_from("recvfrom an unbound sender", ra, 0);
    int rb = socket(AF_UNIX, SOCK_DGRAM, 0);
    show("bind b", bind(rb, (struct sockaddr *)&b, sizeof b));
    show("sendto a from b", sendto(rb, "from-b", 6, 0, (struct sockaddr *)&a, sizeof a));
    struct pollfd p = {.fd = ra, .events = POLLIN | POLLOUT};
    int ready = poll(&p, 1, 0);
    printf("poll a: %d revents %#x\n", ready, p.revents);
    show_from("peek", ra, MSG_PEEK);
    show_from("recvfrom b", ra, 0);
    ready = poll(&p, 1, 0);
    printf("poll a, empty: %d revents %#x\n", ready, p.revents);
    show("sendto ten bytes", sendto(u, "0123456789", 10, 0, (struct sockaddr *)&a, sizeof a));
    char buf[16];
    show("recv 4 of them, MSG_TRUNC", recv(ra, buf, 4, MSG_TRUNC));
    show("sendto a short address", sendto(u, "x", 1, 0, (struct sockaddr *)&a, 1));
    show("sendto a file", sendto(u, "x", 1, 0, (struct sockaddr *)&f, sizeof f));
    unlink(f.sun_path);
    show("sendto a missing name", sendto(u, "x", 1, 0, (struct sockaddr *)&f, sizeof f));
    int c = socket(AF_UNIX, SOCK_DGRAM, 0);
    show("connect to a", connect(c, (struct sockaddr *)&a, sizeof a));
    struct sockaddr_un peer;
    socklen_t plen = sizeof peer;
    show("getpeername", getpeername(c, (struct sockaddr *)&peer, &plen));
    printf("peer: %s\n", peer.sun_path);
    show("send, connected", send(c, "conn", 4, 0));
    show("write, connected", write(c, "wrote", 5));
    show_from("recvfrom the connected sender", ra, 0);
    show("read", read(ra, buf, sizeof buf));
    show("connect b to a", connect(rb, (struct sockaddr *)&a, sizeof a));
    show("sendto b, connected to a", sendto(u, "x", 1, 0, (struct sockaddr *)&b, sizeof b));
    show("a sends to b, its peer's peer", sendto(ra, "ok", 2, 0, (struct sockaddr *)&b, sizeof b));
    show_from("b gets it", rb, 0);
    /* A child blocked in recv wakes for a datagram. */
    pid_t kid = fork();
    if (kid == 0) {
        long n = recv(rb, buf, sizeof buf, 0);
        _exit(n == 5 && !memcmp(buf, "later", 5) ? 0 : 1);
    }
    usleep(100000);
    sendto(ra, "later", 5, 0, (struct sockaddr *)&b, sizeof b);
    int status;
    waitpid(kid, &status, 0);
    printf("blocked child got it: %d\n", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* A full receiver: nonblocking sends stop with EAGAIN. */
    fcntl(u, F_SETFL, O_NONBLOCK);
    long sent = 0, r;
    char big[1024] = {0};
    while ((r = sendto(u, big, sizeof big, 0, (struct sockaddr *)&a, sizeof a)) > 0)
        sent++;
    printf("filled: some went %d, then %s\n", sent > 0, strerror(errno));
    fcntl(u, F_SETFL, 0);
    close(ra);
    show("send, connected receiver gone", send(c, "x", 1, 0));
    show("send again", send(c, "x", 1, 0));
    show("sendto a, gone", sendto(u, "x", 1, 0, (struct sockaddr *)&a, sizeof a));
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    show("stream sendto with an address", sendto(sv[0], "x", 1, 0, (struct sockaddr *)&a, sizeof a));
    close(sv[0]);
    close(sv[1]);
    close(rb);
    close(c);
    close(u);
    unlink(a.sun_path);
    unlink(b.sun_path);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    pairs();
    rights();
    named();
    abstract();
    datagrams();
    return 0;
}
