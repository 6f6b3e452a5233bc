/* The HTTP server rows' program on both sides (issue 24 §4): Debian's
 * nginx (one worker, epoll, sendfile) serving static files over
 * 127.0.0.1 to this client, which Linux's benchmark initramfs holds as
 * /bin/httpbench and Veneer runs under lxrt from /bench/start.sh, over the
 * same Debian packages.  `httpbench NAME ITERATIONS TRIALS` prints
 * `BENCH NAME ITERATIONS TOTAL` per trial: TOTAL in time-stamp counts
 * (guest instructions under -icount) for ITERATIONS requests, each a new
 * connection (`Connection: close`), the answer read to its end and its
 * status and length checked.  Everything the one processor does in
 * between is charged: the client, nginx's worker, the TCP/IP stack (Linux's
 * kernel; on Veneer the library's smoltcp stack in whichever process runs
 * it) and the kernel.  Time the processor spends halted (waiting for a
 * timer) is left out on both sides: cpu 0's idle_sleeptime and
 * iowait_sleeptime in /proc/timer_list (Linux's tick accounting; lxrt
 * writes the kernel's halted time there in the same form).
 *
 *   http_0, http_1k, http_10k, http_100k   a file of 0, 1,024, 10,240 or
 *                                          102,400 bytes
 *   cheetah_0 .. cheetah_100k              the same files from Veneer's
 *                                          Cheetah (/cbin/cheetah, the
 *                                          library stack's HTTP fast path)
 *                                          instead of nginx; only Veneer
 *                                          runs them, Linux's figure for
 *                                          the row is its nginx's http_N
 *
 * Every answer's status, length and bytes are checked (the files are a
 * known pattern).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "halted.h"

#define PORT 8084
#define DIR "/tmp/httpbench"

static inline uint64_t now(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static void __attribute__((noreturn)) die(const char *what)
{
	printf("BENCH-FAIL httpbench %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void put(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		die(path);
	close(fd);
}

static int connected(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		die("socket");
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&a, sizeof a)) {
		close(s);
		return -1;
	}
	return s;
}

static char data[102400];

/* One request for /NAME; its answer must be 200 with `size` bytes, the
 * first `size` of `data`. */
static void request(const char *name, size_t size)
{
	static char buf[256 * 1024];
	int s = connected();
	if (s < 0)
		die("connect");
	char req[128];
	int n = snprintf(req, sizeof req,
			 "GET /%s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
			 name);
	if (write(s, req, n) != n)
		die("write request");
	size_t got = 0;
	ssize_t k;
	while (got < sizeof buf && (k = read(s, buf + got, sizeof buf - got)) > 0)
		got += k;
	close(s);
	buf[got < sizeof buf ? got : sizeof buf - 1] = 0;
	char *body = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.1 200 ", 13) || !body ||
	    got - (body + 4 - buf) != size || memcmp(body + 4, data, size)) {
		printf("BENCH-FAIL httpbench /%s: %zu bytes: %.40s\n", name, got, buf);
		fflush(stdout);
		exit(1);
	}
}

static const char conf[] =
	"user root;\n"
	"worker_processes 1;\n"
	"pid " DIR "/nginx.pid;\n"
	"error_log " DIR "/error.log;\n"
	"events { worker_connections 64; use epoll; }\n"
	"http {\n"
	"    access_log off;\n"
	"    sendfile on;\n"
	"    client_body_temp_path " DIR "/tmp;\n"
	"    proxy_temp_path " DIR "/tmp;\n"
	"    fastcgi_temp_path " DIR "/tmp;\n"
	"    uwsgi_temp_path " DIR "/tmp;\n"
	"    scgi_temp_path " DIR "/tmp;\n"
	"    server { listen 127.0.0.1:8084; root " DIR "/www; }\n"
	"}\n";

static const struct {
	const char *name, *file;
	size_t size;
	int cheetah;
} rows[] = {
	{ "http_0", "0", 0, 0 },
	{ "http_1k", "1k", 1024, 0 },
	{ "http_10k", "10k", 10240, 0 },
	{ "http_100k", "100k", 102400, 0 },
	{ "cheetah_0", "0", 0, 1 },
	{ "cheetah_1k", "1k", 1024, 1 },
	{ "cheetah_10k", "10k", 10240, 1 },
	{ "cheetah_100k", "100k", 102400, 1 },
};

/* Linux's benchmark initramfs starts with the loopback interface down;
 * lxrt's is always up. */
static void loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (s >= 0 && !ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			die("bringing lo up");
	}
	close(s);
}

/* Whether the server on `s` answers a request with 200: Cheetah's
 * socket listens (and takes connections to close them) before its files
 * are published. */
static int answers(int s)
{
	static const char req[] = "GET /0 HTTP/1.0\r\n\r\n";
	char buf[16] = { 0 };
	if (write(s, req, sizeof req - 1) != sizeof req - 1)
		return 0;
	return read(s, buf, sizeof buf - 1) > 0 && !strncmp(buf, "HTTP/1.1 200 ", 13);
}

/* Writes the files and the configuration, starts nginx (or Cheetah) and
 * waits (at most a minute) until it accepts. */
static pid_t start_server(int cheetah)
{
	mkdir(DIR, 0755);
	mkdir(DIR "/www", 0755);
	mkdir(DIR "/tmp", 0755);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = 'a' + i % 26;
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		char path[64];
		snprintf(path, sizeof path, DIR "/www/%s", rows[r].file);
		put(path, data, rows[r].size);
	}
	put(DIR "/nginx.conf", conf, sizeof conf - 1);
	loopback_up();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char *argv[] = { "nginx", "-c", DIR "/nginx.conf", "-g",
				 "daemon off;", NULL };
		char *cargv[] = { "cheetah", "8084", DIR "/www", NULL };
		char *env[] = { "PATH=/usr/sbin:/usr/bin:/bin", NULL };
		if (cheetah)
			execve("/cbin/cheetah", cargv, env);
		else
			execve("/usr/sbin/nginx", argv, env);
		_exit(127);
	}
	for (int i = 0; i < 600; i++) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			printf("BENCH-FAIL httpbench server exited (status %#x)\n", status);
			exit(1);
		}
		int s = connected();
		if (s >= 0 && !(cheetah && !answers(s))) {
			close(s);
			return pid;
		}
		if (s >= 0)
			close(s);
		struct timespec t = { 0, 100 * 1000 * 1000 };
		nanosleep(&t, NULL);
	}
	errno = ETIMEDOUT;
	die("the server never accepted");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: httpbench NAME ITERATIONS TRIALS\n");
		return 2;
	}
	long n = atol(argv[2]), trials = atol(argv[3]);
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		if (strcmp(rows[r].name, argv[1]))
			continue;
		pid_t nginx = start_server(rows[r].cheetah);
		/* Untimed: nginx opens and maps the file the first time. */
		request(rows[r].file, rows[r].size);
		for (long t = 0; t < trials; t++) {
			uint64_t h0 = halted(), t0 = now();
			for (long i = 0; i < n; i++)
				request(rows[r].file, rows[r].size);
			uint64_t total = now() - t0;
			printf("BENCH %s %ld %llu\n", argv[1], n,
			       (unsigned long long)(total - (halted() - h0)));
			fflush(stdout);
		}
		kill(nginx, SIGTERM);
		waitpid(nginx, NULL, 0);
		return 0;
	}
	fprintf(stderr, "httpbench: unknown experiment %s\n", argv[1]);
	return 2;
}
