// link: dynamic
/* The network databases a program finds in /etc (issue 29: CPython's
 * testGetServBy and testGetaddrinfo failed for want of /etc/services):
 * services and protocols by name and number, and getaddrinfo with a
 * service name, through glibc's NSS "files" module as on Linux. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static void service(const char *name, const char *proto)
{
    struct servent *s = getservbyname(name, proto);
    if (s)
        printf("service %s/%s: port %d, named %s\n", name, proto, ntohs(s->s_port), s->s_name);
    else
        printf("service %s/%s: none\n", name, proto);
}

static void port(int p, const char *proto)
{
    struct servent *s = getservbyport(htons(p), proto);
    printf("port %d/%s: %s\n", p, proto, s ? s->s_name : "none");
}

static void protocol(const char *name)
{
    struct protoent *p = getprotobyname(name);
    printf("protocol %s: %d\n", name, p ? p->p_proto : -1);
}

static void lookup(const char *host, const char *serv, int socktype)
{
    struct addrinfo hints = {0}, *res = 0;
    hints.ai_family = AF_INET;
    hints.ai_socktype = socktype;
    int r = getaddrinfo(host, serv, &hints, &res);
    if (r != 0) {
        printf("getaddrinfo %s %s: %s\n", host, serv, gai_strerror(r));
        return;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)res->ai_addr;
    printf("getaddrinfo %s %s: %s port %d\n", host, serv, inet_ntoa(in->sin_addr), ntohs(in->sin_port));
    freeaddrinfo(res);
}

int main(void)
{
    service("http", "tcp");
    service("domain", "udp");
    service("daytime", "tcp");
    service("www", "tcp");
    service("no-such-service", "tcp");
    port(53, "udp");
    port(443, "tcp");
    port(22, "tcp");
    port(9999, "tcp");
    protocol("tcp");
    protocol("udp");
    protocol("icmp");
    protocol("no-such-protocol");
    lookup("127.0.0.1", "http", SOCK_STREAM);
    lookup("127.0.0.1", "domain", SOCK_DGRAM);
    lookup("127.0.0.1", "no-such-service", SOCK_STREAM);
    return 0;
}
