/* IPv6 sockets against Linux, over ::1 in one process: the sockaddr_in6
 * a call gives back (family, port, flowinfo, address, scope, length 28,
 * truncated to the room given), TCP and UDP over ::1, dual stack (an
 * IPv6 socket on :: hears IPv4 peers as ::ffff:a.b.c.d, and reaches IPv4
 * through a mapped address) and IPV6_V6ONLY, readiness, and every bad
 * argument with the errno Linux gives. Ports are chosen by the kernel and
 * never printed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "expect.h"

static struct sockaddr_in6 in6(const char *ip, unsigned short port)
{
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    inet_pton(AF_INET6, ip, &a.sin6_addr);
    return a;
}

static struct sockaddr_in in4(const char *ip, unsigned short port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

/* Whether `a` (of length `len`) is a whole sockaddr_in6 for `ip`, with a
 * port (nonzero unless `port0`) and no flow label or scope. */
static int is6(const struct sockaddr_in6 *a, socklen_t len, const char *ip, int port0)
{
    struct in6_addr want;
    inet_pton(AF_INET6, ip, &want);
    return len == sizeof *a && a->sin6_family == AF_INET6 && (port0 ? a->sin6_port == 0 : a->sin6_port != 0) &&
           a->sin6_flowinfo == 0 && a->sin6_scope_id == 0 && !memcmp(&a->sin6_addr, &want, sizeof want);
}

static unsigned short port_of(int s)
{
    struct sockaddr_in6 a;
    socklen_t len = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &len);
    return ntohs(a.sin6_port);
}

/* A listening TCP socket of `family` on `ip` (any port). */
static int listener(int family, const char *ip)
{
    int s = socket(family, SOCK_STREAM, 0);
    int r;
    if (family == AF_INET6) {
        struct sockaddr_in6 a = in6(ip, 0);
        r = bind(s, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = in4(ip, 0);
        r = bind(s, (struct sockaddr *)&a, sizeof a);
    }
    if (r < 0 || listen(s, 8) < 0)
        return -1;
    return s;
}

static int port4(int s)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &len);
    return ntohs(a.sin_port);
}

static void names(void)
{
    int s = socket(AF_INET6, SOCK_STREAM, 0);
    check("socket AF_INET6 stream", s >= 0);
    struct sockaddr_in6 a;
    socklen_t len = sizeof a;
    memset(&a, 0x55, sizeof a);
    check("unbound name is :: port 0", getsockname(s, (struct sockaddr *)&a, &len) == 0 && is6(&a, len, "::", 1));
    struct sockaddr_in6 b = in6("::1", 0);
    expect_errno("bind addrlen 23", bind(s, (struct sockaddr *)&b, 23), EINVAL);
    struct sockaddr_in b4 = in4("127.0.0.1", 0);
    expect_errno("bind sockaddr_in (16 bytes)", bind(s, (struct sockaddr *)&b4, sizeof b4), EINVAL);
    b.sin6_family = AF_INET;
    expect_errno("bind family AF_INET in 28 bytes", bind(s, (struct sockaddr *)&b, sizeof b), EAFNOSUPPORT);
    /* On its own socket: Linux keeps a failed bind's scope as the
     * socket's interface. */
    int ll = socket(AF_INET6, SOCK_STREAM, 0);
    b = in6("fe80::1", 0);
    expect_errno("bind link-local without scope", bind(ll, (struct sockaddr *)&b, sizeof b), EINVAL);
    b.sin6_scope_id = 999999;
    expect_errno("bind link-local, no such interface", bind(ll, (struct sockaddr *)&b, sizeof b), ENODEV);
    close(ll);
    b = in6("2001:db8::1", 0);
    expect_errno("bind address not ours", bind(s, (struct sockaddr *)&b, sizeof b), EADDRNOTAVAIL);
    b = in6("::1", 0);
    b.sin6_scope_id = 7; /* ignored on an address that needs no scope */
    check("bind ::1 with a scope id (24 bytes)", bind(s, (struct sockaddr *)&b, 24) == 0);
    expect_errno("bind again", bind(s, (struct sockaddr *)&b, sizeof b), EINVAL);
    len = sizeof a;
    check("bound name", getsockname(s, (struct sockaddr *)&a, &len) == 0 && is6(&a, len, "::1", 0));
    unsigned char small[8];
    memset(small, 0xee, sizeof small);
    len = 6;
    check("truncated name: 6 bytes written, length 28",
          getsockname(s, (struct sockaddr *)small, &len) == 0 && len == 28 && small[0] == AF_INET6 &&
              small[6] == 0xee);
    expect_errno("getsockname bad pointer", getsockname(s, (struct sockaddr *)8, &len), EFAULT);
    len = sizeof a;
    expect_errno("getpeername unconnected", getpeername(s, (struct sockaddr *)&a, &len), ENOTCONN);
    int v;
    socklen_t vl = sizeof v;
    check("SO_DOMAIN AF_INET6", getsockopt(s, SOL_SOCKET, SO_DOMAIN, &v, &vl) == 0 && v == AF_INET6);
    close(s);
    expect_errno("socket AF_INET6 raw type", socket(AF_INET6, 77, 0), EINVAL);
    expect_errno("socket AF_INET6 stream, protocol udp", socket(AF_INET6, SOCK_STREAM, IPPROTO_UDP),
                 EPROTONOSUPPORT);
    expect_errno("socketpair AF_INET6", socketpair(AF_INET6, SOCK_STREAM, 0, (int[2]){0}), EOPNOTSUPP);
}

static void tcp(void)
{
    int l = listener(AF_INET6, "::1");
    check("listen on ::1", l >= 0);
    int c = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 to = in6("::1", port_of(l));
    expect_errno("connect addrlen 20", connect(c, (struct sockaddr *)&to, 20), EINVAL);
    to.sin6_family = AF_INET;
    expect_errno("connect family AF_INET", connect(c, (struct sockaddr *)&to, sizeof to), EAFNOSUPPORT);
    to = in6("fe80::1", port_of(l));
    expect_errno("connect link-local without scope", connect(c, (struct sockaddr *)&to, sizeof to), EINVAL);
    to = in6("::1", port_of(l));
    check("connect ::1", connect(c, (struct sockaddr *)&to, sizeof to) == 0);
    struct sockaddr_in6 a;
    socklen_t len = sizeof a;
    int s = accept(l, (struct sockaddr *)&a, &len);
    check("accept: the peer is ::1", s >= 0 && is6(&a, len, "::1", 0) && ntohs(a.sin6_port) == port_of(c));
    len = sizeof a;
    check("getpeername", getpeername(c, (struct sockaddr *)&a, &len) == 0 && is6(&a, len, "::1", 0) &&
                             ntohs(a.sin6_port) == port_of(l));
    char buf[16];
    check("send", send(c, "hello", 5, 0) == 5);
    check("recv MSG_PEEK", recv(s, buf, sizeof buf, MSG_PEEK) == 5);
    check("recv", recv(s, buf, sizeof buf, 0) == 5 && !memcmp(buf, "hello", 5));
    check("shutdown write", shutdown(c, SHUT_WR) == 0);
    check("end of file", recv(s, buf, sizeof buf, 0) == 0);
    expect_errno("shutdown bad how", shutdown(c, 7), EINVAL);
    close(s);
    close(c);
    /* connect to :: reaches ::1, as on Linux. */
    c = socket(AF_INET6, SOCK_STREAM, 0);
    to = in6("::", port_of(l));
    check("connect :: reaches ::1", connect(c, (struct sockaddr *)&to, sizeof to) == 0);
    s = accept(l, NULL, NULL);
    close(s);
    close(c);
    /* A non-blocking connect: EINPROGRESS, POLLOUT, SO_ERROR 0. */
    c = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0);
    to = in6("::1", port_of(l));
    int r = connect(c, (struct sockaddr *)&to, sizeof to);
    check("non-blocking connect", r == 0 || errno == EINPROGRESS);
    struct pollfd p = {c, POLLOUT, 0};
    check("POLLOUT", poll(&p, 1, 5000) == 1 && (p.revents & POLLOUT));
    int e = -1;
    socklen_t el = sizeof e;
    check("SO_ERROR 0", getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
    epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
    check("epoll: the listener is readable", epoll_wait(ep, &ev, 1, 5000) == 1 && ev.data.fd == l);
    s = accept4(l, NULL, NULL, SOCK_NONBLOCK);
    expect_errno("recv would block", recv(s, buf, sizeof buf, 0), EAGAIN);
    close(ep);
    close(s);
    close(c);
    close(l);
    /* A closed port refuses. */
    c = socket(AF_INET6, SOCK_STREAM, 0);
    expect_errno("connect refused", connect(c, (struct sockaddr *)&to, sizeof to), ECONNREFUSED);
    close(c);
}

static void dual_stack(void)
{
    int l = socket(AF_INET6, SOCK_STREAM, 0);
    int v = -1;
    socklen_t vl = sizeof v;
    check("IPV6_V6ONLY is 0", getsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl) == 0 && v == 0 && vl == 4);
    struct sockaddr_in6 any = in6("::", 0);
    check("bind ::", bind(l, (struct sockaddr *)&any, sizeof any) == 0 && listen(l, 8) == 0);
    int on = 1;
    expect_errno("IPV6_V6ONLY after bind", setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on), EINVAL);
    /* The IPv4 port is taken by the dual-stack socket. */
    int b = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a4 = in4("127.0.0.1", port_of(l));
    expect_errno("IPv4 bind of the dual-stack port", bind(b, (struct sockaddr *)&a4, sizeof a4), EADDRINUSE);
    close(b);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    check("IPv4 connect to the dual-stack listener", connect(c, (struct sockaddr *)&a4, sizeof a4) == 0);
    struct sockaddr_in6 a;
    socklen_t len = sizeof a;
    int s = accept(l, (struct sockaddr *)&a, &len);
    check("the IPv4 peer is ::ffff:127.0.0.1",
          s >= 0 && is6(&a, len, "::ffff:127.0.0.1", 0) && ntohs(a.sin6_port) == port4(c));
    len = sizeof a;
    check("its local name is ::ffff:127.0.0.1",
          getsockname(s, (struct sockaddr *)&a, &len) == 0 && is6(&a, len, "::ffff:127.0.0.1", 0));
    close(s);
    close(c);
    close(l);
    /* An IPv6 socket reaches an IPv4 listener through a mapped address. */
    l = listener(AF_INET, "127.0.0.1");
    c = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 m = in6("::ffff:127.0.0.1", port4(l));
    check("connect ::ffff:127.0.0.1", connect(c, (struct sockaddr *)&m, sizeof m) == 0);
    len = sizeof a;
    check("getpeername mapped", getpeername(c, (struct sockaddr *)&a, &len) == 0 &&
                                    is6(&a, len, "::ffff:127.0.0.1", 0));
    len = sizeof a;
    check("getsockname mapped", getsockname(c, (struct sockaddr *)&a, &len) == 0 &&
                                    is6(&a, len, "::ffff:127.0.0.1", 0));
    struct sockaddr_in p4;
    len = sizeof p4;
    s = accept(l, (struct sockaddr *)&p4, &len);
    check("the IPv4 listener sees an IPv4 peer", s >= 0 && len == sizeof p4 && p4.sin_family == AF_INET);
    close(s);
    close(c);
    /* IPV6_V6ONLY: no IPv4 either way. */
    c = socket(AF_INET6, SOCK_STREAM, 0);
    expect_errno("IPV6_V6ONLY short", setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &on, 2), EINVAL);
    check("IPV6_V6ONLY on", setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) == 0);
    vl = sizeof v;
    check("IPV6_V6ONLY reads 1", getsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl) == 0 && v == 1);
    expect_errno("v6only connect to a mapped address", connect(c, (struct sockaddr *)&m, sizeof m), ENETUNREACH);
    struct sockaddr_in6 bm = in6("::ffff:127.0.0.1", 0);
    expect_errno("v6only bind to a mapped address", bind(c, (struct sockaddr *)&bm, sizeof bm), EINVAL);
    close(c);
    close(l);
    l = socket(AF_INET6, SOCK_STREAM, 0);
    setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    bind(l, (struct sockaddr *)&any, sizeof any);
    listen(l, 8);
    b = socket(AF_INET, SOCK_STREAM, 0);
    a4 = in4("127.0.0.1", port_of(l));
    check("IPv4 bind beside a v6only socket", bind(b, (struct sockaddr *)&a4, sizeof a4) == 0);
    close(b);
    c = socket(AF_INET, SOCK_STREAM, 0);
    expect_errno("IPv4 connect to a v6only listener", connect(c, (struct sockaddr *)&a4, sizeof a4), ECONNREFUSED);
    close(c);
    close(l);
    /* IPv6 options on an IPv4 socket. */
    c = socket(AF_INET, SOCK_STREAM, 0);
    expect_errno("IPV6_V6ONLY on an IPv4 socket", setsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on),
                 ENOPROTOOPT);
    vl = sizeof v;
    expect_errno("get IPV6_V6ONLY on an IPv4 socket", getsockopt(c, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl),
                 EOPNOTSUPP);
    struct sockaddr_in6 six = in6("::1", 80);
    expect_errno("IPv4 socket connect with sockaddr_in6", connect(c, (struct sockaddr *)&six, sizeof six),
                 EAFNOSUPPORT);
    close(c);
}

static void udp(void)
{
    int u = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 any = in6("::", 0);
    check("udp bind ::", bind(u, (struct sockaddr *)&any, sizeof any) == 0);
    int v = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 to = in6("::1", port_of(u));
    check("sendto ::1", sendto(v, "six", 3, 0, (struct sockaddr *)&to, sizeof to) == 3);
    char buf[16];
    struct sockaddr_in6 from;
    socklen_t len = sizeof from;
    check("recvfrom: from ::1", recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&from, &len) == 3 &&
                                    is6(&from, len, "::1", 0) && ntohs(from.sin6_port) == port_of(v));
    /* From an IPv4 socket to the dual-stack one. */
    int w = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in t4 = in4("127.0.0.1", port_of(u));
    check("IPv4 sendto the dual-stack port", sendto(w, "four", 4, 0, (struct sockaddr *)&t4, sizeof t4) == 4);
    struct iovec io = {buf, sizeof buf};
    struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &io, .msg_iovlen = 1};
    check("recvmsg: from ::ffff:127.0.0.1", recvmsg(u, &mh, 0) == 4 &&
                                                is6(&from, mh.msg_namelen, "::ffff:127.0.0.1", 0) &&
                                                ntohs(from.sin6_port) == port4(w));
    /* An IPv6 socket sends to IPv4 with a sockaddr_in, as Linux allows. */
    struct sockaddr_in w4 = in4("127.0.0.1", port4(w));
    check("IPv6 sendto a sockaddr_in", sendto(v, "back", 4, 0, (struct sockaddr *)&w4, sizeof w4) == 4);
    struct sockaddr_in f4;
    len = sizeof f4;
    check("the IPv4 socket hears it", recvfrom(w, buf, sizeof buf, 0, (struct sockaddr *)&f4, &len) == 4 &&
                                          len == sizeof f4 && f4.sin_family == AF_INET);
    /* Bad destinations. */
    expect_errno("sendto addrlen 20", sendto(v, "x", 1, 0, (struct sockaddr *)&to, 20), EINVAL);
    struct sockaddr_in6 bad = to;
    bad.sin6_family = AF_UNIX;
    expect_errno("sendto family AF_UNIX", sendto(v, "x", 1, 0, (struct sockaddr *)&bad, sizeof bad), EINVAL);
    /* Connected: its name carries the source address (glibc's
     * getaddrinfo sorts by it, connecting one socket to each address in
     * turn and forgetting the peer in between with AF_UNSPEC). */
    int g = socket(AF_INET6, SOCK_DGRAM, 0);
    check("connect ::1 (port 9)", connect(g, (struct sockaddr *)&(struct sockaddr_in6){.sin6_family = AF_INET6,
                                                                                  .sin6_port = htons(9),
                                                                                  .sin6_addr = in6addr_loopback},
                                          sizeof to) == 0);
    len = sizeof from;
    check("its name is ::1", getsockname(g, (struct sockaddr *)&from, &len) == 0 && is6(&from, len, "::1", 0));
    struct sockaddr unspec = {.sa_family = AF_UNSPEC};
    check("connect AF_UNSPEC", connect(g, &unspec, sizeof unspec) == 0);
    len = sizeof from;
    expect_errno("no peer after AF_UNSPEC", getpeername(g, (struct sockaddr *)&from, &len), ENOTCONN);
    struct sockaddr_in nine = in4("127.0.0.1", 9);
    check("connect a sockaddr_in", connect(g, (struct sockaddr *)&nine, sizeof nine) == 0);
    len = sizeof from;
    check("its name is ::ffff:127.0.0.1",
          getsockname(g, (struct sockaddr *)&from, &len) == 0 && is6(&from, len, "::ffff:127.0.0.1", 0));
    close(g);
    g = socket(AF_INET, SOCK_DGRAM, 0);
    check("IPv4 connect", connect(g, (struct sockaddr *)&nine, sizeof nine) == 0);
    struct sockaddr_in n4;
    len = sizeof n4;
    check("its name is 127.0.0.1", getsockname(g, (struct sockaddr *)&n4, &len) == 0 &&
                                      n4.sin_addr.s_addr == htonl(INADDR_LOOPBACK) && n4.sin_port != 0);
    check("IPv4 connect AF_UNSPEC", connect(g, &unspec, sizeof unspec) == 0);
    len = sizeof n4;
    expect_errno("IPv4: no peer after AF_UNSPEC", getpeername(g, (struct sockaddr *)&n4, &len), ENOTCONN);
    close(g);
    /* Connected: send, recv, getpeername; readiness. */
    check("connect ::1", connect(v, (struct sockaddr *)&to, sizeof to) == 0);
    len = sizeof from;
    check("udp getpeername", getpeername(v, (struct sockaddr *)&from, &len) == 0 && is6(&from, len, "::1", 0));
    check("send", send(v, "conn", 4, 0) == 4);
    struct pollfd p = {u, POLLIN, 0};
    check("POLLIN", poll(&p, 1, 5000) == 1 && (p.revents & POLLIN));
    check("recv", recv(u, buf, sizeof buf, 0) == 4 && !memcmp(buf, "conn", 4));
    fcntl(u, F_SETFL, O_NONBLOCK);
    expect_errno("recv would block", recv(u, buf, sizeof buf, 0), EAGAIN);
    /* An IPv6-only datagram socket. */
    int x = socket(AF_INET6, SOCK_DGRAM, 0);
    int on = 1;
    setsockopt(x, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    expect_errno("v6only sendto a sockaddr_in", sendto(x, "x", 1, 0, (struct sockaddr *)&w4, sizeof w4),
                 ENETUNREACH);
    struct sockaddr_in6 m = in6("::ffff:127.0.0.1", port4(w));
    expect_errno("v6only sendto a mapped address", sendto(x, "x", 1, 0, (struct sockaddr *)&m, sizeof m),
                 ENETUNREACH);
    /* Hop limit: -1 is the default (64), past 255 is refused. */
    int h = 300;
    expect_errno("IPV6_UNICAST_HOPS 300", setsockopt(x, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &h, sizeof h), EINVAL);
    h = 5;
    socklen_t hl = sizeof h;
    check("IPV6_UNICAST_HOPS 5", setsockopt(x, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &h, sizeof h) == 0 &&
                                     getsockopt(x, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &h, &hl) == 0 && h == 5);
    h = -1;
    check("IPV6_UNICAST_HOPS default 64", setsockopt(x, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &h, sizeof h) == 0 &&
                                              getsockopt(x, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &h, &hl) == 0 &&
                                              h == 64);
    close(x);
    close(w);
    close(v);
    close(u);
}

/* One datagram sent with sendmsg and a control message (level, type,
 * int value, cmsg_len) from `v` to `to`. */
static long send_cmsg(int v, struct sockaddr_in6 *to, int level, int type, int value, size_t clen)
{
    union {
        char buf[CMSG_SPACE(sizeof(int)) + 8];
        struct cmsghdr align;
    } c;
    memset(&c, 0, sizeof c);
    struct cmsghdr *h = (struct cmsghdr *)c.buf;
    h->cmsg_len = clen;
    h->cmsg_level = level;
    h->cmsg_type = type;
    memcpy(CMSG_DATA(h), &value, sizeof value);
    struct iovec io = {"hop", 3};
    struct msghdr m = {.msg_name = to, .msg_namelen = sizeof *to, .msg_iov = &io, .msg_iovlen = 1,
                       .msg_control = c.buf, .msg_controllen = CMSG_SPACE(sizeof(int))};
    return sendmsg(v, &m, 0);
}

/* Receives one datagram on `u` with `room` bytes of control space and
 * prints what came: each message's type and value, or its cut length. */
static void recv_cmsg(int u, const char *what, size_t room)
{
    char buf[16], ctl[64];
    memset(ctl, 0, sizeof ctl);
    struct iovec io = {buf, sizeof buf};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = room ? ctl : NULL, .msg_controllen = room};
    long n = recvmsg(u, &m, 0);
    printf("%s: %ld bytes, controllen %zu%s", what, n, (size_t)m.msg_controllen,
           m.msg_flags & MSG_CTRUNC ? ", MSG_CTRUNC" : "");
    for (struct cmsghdr *h = room ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
        int v = -1;
        if (h->cmsg_len >= CMSG_LEN(sizeof v))
            memcpy(&v, CMSG_DATA(h), sizeof v);
        printf(", (%d, %d, len %zu, %d)", h->cmsg_level, h->cmsg_type, (size_t)h->cmsg_len, v);
    }
    printf("\n");
}

/* RFC 3542: a datagram's hop limit and traffic class as it arrived, a
 * hop limit for one datagram, Linux's truncation of control data. */
static void ancillary(void)
{
    int u = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 any = in6("::1", 0);
    bind(u, (struct sockaddr *)&any, sizeof any);
    struct sockaddr_in6 to = in6("::1", port_of(u));
    int v = socket(AF_INET6, SOCK_DGRAM, 0);
    int on = 1, r = -1;
    socklen_t rl = sizeof r;
    check("IPV6_RECVHOPLIMIT", setsockopt(u, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on) == 0 &&
                                   getsockopt(u, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &r, &rl) == 0 && r == 1);
    sendto(v, "dflt", 4, 0, (struct sockaddr *)&to, sizeof to);
    recv_cmsg(u, "default hop limit", 64);
    check("sendmsg IPV6_HOPLIMIT 2", send_cmsg(v, &to, IPPROTO_IPV6, IPV6_HOPLIMIT, 2, CMSG_LEN(sizeof(int))) == 3);
    recv_cmsg(u, "hop limit 2", 64);
    int h = 9;
    setsockopt(v, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &h, sizeof h);
    sendto(v, "nine", 4, 0, (struct sockaddr *)&to, sizeof to);
    recv_cmsg(u, "IPV6_UNICAST_HOPS 9", 64);
    check("IPV6_RECVTCLASS", setsockopt(u, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof on) == 0);
    for (size_t room = 0; room <= 48; room += room < 24 ? 19 - room / 2 : 12) {
        sendto(v, "both", 4, 0, (struct sockaddr *)&to, sizeof to);
        char what[32];
        snprintf(what, sizeof what, "both, room %zu", room);
        recv_cmsg(u, what, room);
    }
    expect_errno("IPV6_HOPLIMIT 256", send_cmsg(v, &to, IPPROTO_IPV6, IPV6_HOPLIMIT, 256, CMSG_LEN(sizeof(int))),
                 EINVAL);
    expect_errno("IPV6_HOPLIMIT of 5 bytes",
                 send_cmsg(v, &to, IPPROTO_IPV6, IPV6_HOPLIMIT, 2, CMSG_LEN(sizeof(int)) + 1), EINVAL);
    expect_errno("cmsg_len past the buffer", send_cmsg(v, &to, IPPROTO_IPV6, IPV6_HOPLIMIT, 2, 64), EINVAL);
    check("SCM_RIGHTS to an IPv6 socket is ignored",
          send_cmsg(v, &to, SOL_SOCKET, SCM_RIGHTS, 0, CMSG_LEN(sizeof(int))) == 3);
    expect_errno("SOL_SOCKET type 99", send_cmsg(v, &to, SOL_SOCKET, 99, 0, CMSG_LEN(sizeof(int))), EINVAL);
    check("another level's message is skipped", send_cmsg(v, &to, IPPROTO_TCP, 1, 0, CMSG_LEN(sizeof(int))) == 3);
    close(v);
    close(u);
}

/* glibc sorts "localhost"'s ::1 and 127.0.0.1 by the source address of
 * one IPv6 datagram socket connected to each in turn (it asserts that
 * the IPv4 one's name is ::ffff:127.0.0.1, and once aborted here). */
static void resolver(void)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res;
    check("getaddrinfo localhost", getaddrinfo("localhost", "9", &hints, &res) == 0 && res != NULL);
    freeaddrinfo(res);
}

/* getifaddrs (a route netlink dump) lists ::1/128 on lo. */
static void listed(void)
{
    struct ifaddrs *all;
    int found = 0;
    check("getifaddrs", getifaddrs(&all) == 0);
    for (struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (strcmp(a->ifa_name, "lo") || !a->ifa_addr || a->ifa_addr->sa_family != AF_INET6)
            continue;
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)a->ifa_addr, *m = (struct sockaddr_in6 *)a->ifa_netmask;
        struct in6_addr ones;
        memset(&ones, 0xff, sizeof ones);
        found = IN6_IS_ADDR_LOOPBACK(&s->sin6_addr) && m && !memcmp(&m->sin6_addr, &ones, sizeof ones);
    }
    check("lo has ::1/128", found);
    freeifaddrs(all);
}

int main(void)
{
    names();
    tcp();
    dual_stack();
    udp();
    ancillary();
    resolver();
    listed();
    return 0;
}
