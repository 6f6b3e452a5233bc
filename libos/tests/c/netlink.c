/* Route netlink sockets against Linux: what glibc's if_nameindex,
 * if_nametoindex and getifaddrs ask (link and address dumps), by hand and
 * through glibc, for the loopback interface both sides have; and the
 * requests a kernel must refuse or ignore (bad lengths, unknown types,
 * a missing interface, another port as destination, short buffers). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "show.h"

struct request {
    struct nlmsghdr h;
    struct ifinfomsg i;
};

static long send_request(int s, unsigned short type, unsigned short flags, int index, unsigned seq)
{
    struct request r;
    memset(&r, 0, sizeof r);
    r.h.nlmsg_len = sizeof r;
    r.h.nlmsg_type = type;
    r.h.nlmsg_flags = flags;
    r.h.nlmsg_seq = seq;
    r.i.ifi_family = AF_UNSPEC;
    r.i.ifi_index = index;
    struct sockaddr_nl k = {.nl_family = AF_NETLINK};
    return sendto(s, &r, sizeof r, 0, (struct sockaddr *)&k, sizeof k);
}

/* Reads replies until NLMSG_DONE, an error or nothing more: prints each
 * error, counts the messages, and says whether `lo` came, with the
 * sequence number and port every reply must carry. */
static void read_replies(const char *what, int s, unsigned seq, unsigned port)
{
    char buf[16384];
    int messages = 0, lo = 0, stamped = 1, done = 0;
    while (!done) {
        struct sockaddr_nl from;
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1};
        long n = recvmsg(s, &m, MSG_DONTWAIT);
        if (n < 0) {
            printf("%s: then %s\n", what, strerrorname_np(errno));
            break;
        }
        if (from.nl_pid != 0 || m.msg_namelen != sizeof from || (m.msg_flags & MSG_TRUNC))
            printf("%s: a reply not from the kernel or cut\n", what);
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
            messages++;
            stamped &= h->nlmsg_seq == seq && h->nlmsg_pid == port;
            if (h->nlmsg_type == NLMSG_DONE) {
                done = 1;
            } else if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = NLMSG_DATA(h);
                printf("%s: error %s\n", what, e->error ? strerrorname_np(-e->error) : "0 (ack)");
                done = 1;
            } else if (h->nlmsg_type == RTM_NEWLINK) {
                struct ifinfomsg *i = NLMSG_DATA(h);
                int len = IFLA_PAYLOAD(h);
                for (struct rtattr *a = IFLA_RTA(i); RTA_OK(a, len); a = RTA_NEXT(a, len))
                    if (a->rta_type == IFLA_IFNAME && !strcmp(RTA_DATA(a), "lo"))
                        lo = i->ifi_index == 1 && (i->ifi_flags & (IFF_UP | IFF_LOOPBACK)) == (IFF_UP | IFF_LOOPBACK);
            } else if (h->nlmsg_type == RTM_NEWADDR) {
                struct ifaddrmsg *i = NLMSG_DATA(h);
                int len = IFA_PAYLOAD(h);
                for (struct rtattr *a = IFA_RTA(i); RTA_OK(a, len); a = RTA_NEXT(a, len))
                    if (a->rta_type == IFA_LOCAL && i->ifa_family == AF_INET &&
                        *(unsigned *)RTA_DATA(a) == htonl(INADDR_LOOPBACK))
                        lo = i->ifa_prefixlen == 8 && i->ifa_index == 1;
            }
        }
    }
    printf("%s: some messages %d, lo %d, sequence and port on each %d\n", what, messages > 1, lo, stamped);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    show("an unknown protocol", socket(AF_NETLINK, SOCK_RAW, 99));
    show("a stream", socket(AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE));
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    show("socket", s >= 0 ? 0 : -1);
    struct sockaddr_nl me = {.nl_family = AF_NETLINK};
    show("bind a short address", bind(s, (struct sockaddr *)&me, 4));
    struct sockaddr_nl wrong = {.nl_family = AF_UNIX};
    show("bind another family", bind(s, (struct sockaddr *)&wrong, sizeof wrong));
    show("bind", bind(s, (struct sockaddr *)&me, sizeof me));
    socklen_t len = sizeof me;
    show("getsockname", getsockname(s, (struct sockaddr *)&me, &len));
    printf("name: family %d, length %u, a port %d\n", me.nl_family, len, me.nl_pid != 0);
    unsigned port = me.nl_pid;

    struct pollfd p = {.fd = s, .events = POLLIN | POLLOUT};
    int ready = poll(&p, 1, 0);
    printf("poll, nothing asked: %d revents %#x\n", ready, p.revents);
    show("dump links", send_request(s, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 0, 7));
    ready = poll(&p, 1, 0);
    printf("poll, answered: %d revents %#x\n", ready, p.revents);
    read_replies("links", s, 7, port);

    struct {
        struct nlmsghdr h;
        struct ifaddrmsg a;
    } ra;
    memset(&ra, 0, sizeof ra);
    ra.h.nlmsg_len = sizeof ra;
    ra.h.nlmsg_type = RTM_GETADDR;
    ra.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    ra.h.nlmsg_seq = 8;
    ra.a.ifa_family = AF_INET;
    show("dump addresses", send(s, &ra, sizeof ra, 0));
    read_replies("addresses", s, 8, port);

    show("link 1 alone", send_request(s, RTM_GETLINK, NLM_F_REQUEST, 1, 9));
    read_replies("link 1", s, 9, port);
    show("a missing link", send_request(s, RTM_GETLINK, NLM_F_REQUEST, 999999, 10));
    read_replies("missing link", s, 10, port);
    show("an unknown type, acked", send_request(s, 0x3ff, NLM_F_REQUEST | NLM_F_ACK, 0, 11));
    read_replies("unknown type", s, 11, port);
    show("not a request", send_request(s, RTM_GETLINK, NLM_F_DUMP, 0, 12));
    read_replies("not a request", s, 12, port);
    struct nlmsghdr bad = {.nlmsg_len = 8, .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK};
    show("a length below the header", send(s, &bad, sizeof bad, 0));
    read_replies("short length", s, 0, port);
    bad.nlmsg_len = 4096;
    show("a length past the buffer", send(s, &bad, sizeof bad, 0));
    read_replies("long length", s, 0, port);
    struct sockaddr_nl other = {.nl_family = AF_NETLINK, .nl_pid = 0x7fff0001};
    struct request r = {.h = {.nlmsg_len = sizeof r, .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST}};
    show("to another port", sendto(s, &r, sizeof r, 0, (struct sockaddr *)&other, sizeof other));
    show("to a short address", sendto(s, &r, sizeof r, 0, (struct sockaddr *)&other, 4));
    show("nothing waiting", recv(s, &r, sizeof r, MSG_DONTWAIT));

    /* A short buffer: the datagram is cut (MSG_TRUNC) and the rest lost;
     * MSG_PEEK|MSG_TRUNC gives its length and leaves it. */
    send_request(s, RTM_GETLINK, NLM_F_REQUEST, 1, 13);
    char small[8];
    long whole = recv(s, small, sizeof small, MSG_PEEK | MSG_TRUNC);
    printf("peeked length is more than 8: %d\n", whole > 8);
    struct iovec iov = {small, sizeof small};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    show("recvmsg into 8 bytes", recvmsg(s, &m, 0));
    printf("cut: %d\n", (m.msg_flags & MSG_TRUNC) != 0);
    show("the rest is gone", recv(s, small, sizeof small, MSG_DONTWAIT));
    close(s);

    /* glibc's own users of route netlink. */
    struct if_nameindex *ni = if_nameindex();
    int lo_listed = 0;
    for (struct if_nameindex *i = ni; i && i->if_index; i++)
        lo_listed |= i->if_index == 1 && !strcmp(i->if_name, "lo");
    printf("if_nameindex lists lo as 1: %d\n", lo_listed);
    if_freenameindex(ni);
    printf("if_nametoindex(lo): %u\n", if_nametoindex("lo"));
    char name[IF_NAMESIZE] = "";
    printf("if_indextoname(1): %s\n", if_indextoname(1, name) ? name : "?");
    show("if_nametoindex of a missing name", if_nametoindex("nosuch0") ? 0 : -1);
    struct ifaddrs *all;
    show("getifaddrs", getifaddrs(&all));
    int lo_inet = 0, lo_link = 0;
    for (struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (strcmp(a->ifa_name, "lo") || !a->ifa_addr)
            continue;
        if (a->ifa_addr->sa_family == AF_PACKET)
            lo_link = (a->ifa_flags & (IFF_UP | IFF_LOOPBACK)) == (IFF_UP | IFF_LOOPBACK);
        if (a->ifa_addr->sa_family == AF_INET) {
            char addr[16], mask[16];
            inet_ntop(AF_INET, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, addr, sizeof addr);
            inet_ntop(AF_INET, &((struct sockaddr_in *)a->ifa_netmask)->sin_addr, mask, sizeof mask);
            printf("lo: %s netmask %s\n", addr, mask);
            lo_inet = 1;
        }
    }
    printf("lo's link and address listed: %d %d\n", lo_link, lo_inet);
    freeifaddrs(all);
    return 0;
}
