#define _GNU_SOURCE
/* MSG_PEEK on Unix sockets against Linux: stream bytes and datagrams
 * looked at and still there afterwards, MSG_DONTWAIT on an empty socket,
 * MSG_TRUNC with a peek. Every line printed is compared with the host. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "show.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int s[2], d[2];
    char buf[32];
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    socketpair(AF_UNIX, SOCK_DGRAM, 0, d);

    show("stream peek empty", recv(s[0], buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT));
    write(s[1], "hello", 5);
    write(s[1], "world", 5);
    memset(buf, 0, sizeof buf);
    show("stream peek 3", recv(s[0], buf, 3, MSG_PEEK));
    printf("peeked %s\n", buf);
    memset(buf, 0, sizeof buf);
    show("stream peek all", recv(s[0], buf, sizeof buf, MSG_PEEK));
    printf("peeked %s\n", buf);
    memset(buf, 0, sizeof buf);
    show("stream read", read(s[0], buf, 4));
    printf("read %s\n", buf);
    memset(buf, 0, sizeof buf);
    show("stream peek rest", recv(s[0], buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT));
    printf("peeked %s\n", buf);
    memset(buf, 0, sizeof buf);
    show("stream read rest", read(s[0], buf, sizeof buf));
    printf("read %s\n", buf);
    write(s[1], "x", 1);
    show("stream peek bad buffer", recv(s[0], (void *)8, 4, MSG_PEEK | MSG_DONTWAIT));
    show("stream read bad buffer", recv(s[0], (void *)8, 4, MSG_DONTWAIT));
    memset(buf, 0, sizeof buf);
    show("still there", read(s[0], buf, sizeof buf));
    printf("read %s\n", buf);

    write(d[1], "first message", 13);
    write(d[1], "second", 6);
    memset(buf, 0, sizeof buf);
    show("dgram peek 5", recv(d[0], buf, 5, MSG_PEEK));
    printf("peeked %s\n", buf);
    show("dgram peek trunc", recv(d[0], buf, 5, MSG_PEEK | MSG_TRUNC));
    memset(buf, 0, sizeof buf);
    show("dgram read", read(d[0], buf, sizeof buf));
    printf("read %s\n", buf);
    memset(buf, 0, sizeof buf);
    struct iovec iov = {buf, sizeof buf};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    show("dgram peek recvmsg", recvmsg(d[0], &m, MSG_PEEK));
    printf("peeked %s flags %d\n", buf, m.msg_flags);
    memset(buf, 0, sizeof buf);
    show("dgram read second", read(d[0], buf, sizeof buf));
    printf("read %s\n", buf);
    show("dgram peek empty", recv(d[0], buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT));
    close(s[1]);
    show("stream peek at end", recv(s[0], buf, sizeof buf, MSG_PEEK));
    return 0;
}
