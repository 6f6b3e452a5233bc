/* Hostile clients of Cheetah (libos/tests/cheetah.sh): `cheetahtest PORT
 * FILE`, FILE being the server's /big.  Each case says what it expects;
 * the program exits 1 at the first that does not hold. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int port;

static void fail(const char *what)
{
	printf("cheetahtest FAILED: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static int conn(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a))
		fail("connect");
	return s;
}

static size_t read_all(int s, char *buf, size_t room)
{
	size_t got = 0;
	ssize_t k;
	while (got < room && (k = read(s, buf + got, room - got)) > 0)
		got += k;
	return got;
}

/* Sends `req` (then a half-close if `shut`) and expects a response
 * starting with `status`. */
static void expect(const char *what, const char *req, size_t len, int shut, const char *status)
{
	static char buf[4096];
	int s = conn();
	if (write(s, req, len) != (ssize_t)len)
		fail(what);
	if (shut)
		shutdown(s, SHUT_WR);
	size_t got = read_all(s, buf, sizeof buf - 1);
	buf[got] = 0;
	close(s);
	if (strncmp(buf, status, strlen(status))) {
		printf("cheetahtest: %s: got \"%.40s\"\n", what, buf);
		fail(what);
	}
	printf("cheetahtest: %s: %s\n", what, status);
}

/* Reads part of /big, then closes (with SO_LINGER 0: a reset). */
static void leave_early(int reset)
{
	static const char req[] = "GET /big HTTP/1.1\r\n\r\n";
	char buf[1000];
	int s = conn();
	if (write(s, req, sizeof req - 1) != sizeof req - 1 || read(s, buf, sizeof buf) <= 0)
		fail("start of /big");
	if (reset) {
		struct linger l = { 1, 0 };
		setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	}
	close(s);
	printf("cheetahtest: left in the middle of /big (%s)\n", reset ? "reset" : "closed");
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	port = atoi(argv[1]);
	static char want[200000], got[200000];
	int fd = open(argv[2], O_RDONLY);
	size_t size = fd < 0 ? 0 : read_all(fd, want, sizeof want);
	if (fd < 0 || !size)
		fail(argv[2]);
	close(fd);

	static const char garbage[] = "\x00\x01\x02garbage\r\n\r\n";
	expect("garbage", garbage, sizeof garbage - 1, 0, "HTTP/1.1 400 ");
	static const char cut[] = "GET /big HT";
	expect("truncated request", cut, sizeof cut - 1, 1, "HTTP/1.1 400 ");
	static char longreq[6000];
	memset(longreq, 'A', sizeof longreq);
	expect("request too long", longreq, sizeof longreq, 0, "HTTP/1.1 400 ");
	static const char missing[] = "GET /nothing-here HTTP/1.0\r\n\r\n";
	expect("missing file", missing, sizeof missing - 1, 0, "HTTP/1.1 404 ");
	close(conn()); /* no request at all */
	leave_early(0);
	leave_early(1);

	static const char req[] = "GET /big HTTP/1.1\r\nConnection: close\r\n\r\n";
	int s = conn();
	if (write(s, req, sizeof req - 1) != sizeof req - 1)
		fail("request");
	size_t n = read_all(s, got, sizeof got);
	close(s);
	char *body = memmem(got, n, "\r\n\r\n", 4);
	if (strncmp(got, "HTTP/1.1 200 ", 13) || !body || n - (body + 4 - got) != size ||
	    memcmp(body + 4, want, size))
		fail("/big whole after the others");
	printf("cheetahtest: /big whole afterwards, %zu bytes\n", size);
	return 0;
}
