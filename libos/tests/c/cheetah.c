/* Cheetah, the HTTP server of the Xok/ExOS paper (SOSP'97 §7.3), on
 * Veneer: `cheetah PORT DIR` publishes every regular file of DIR (and
 * DIR/index.html as "/") into the library stack's file cache through
 * Veneer's socket option SOL_VENEER/VENEER_CHEETAH_PUBLISH on its
 * listening socket; from then on the library's Cheetah fast path
 * (netstack/src/cheetah/) answers every connection to the port itself:
 * responses sent straight from the cache with their stored checksums, the
 * request's ACK and the FIN merged into the response's segments.  This
 * process only holds the socket: it sleeps in accept, which never returns
 * a connection, until SIGTERM, when it prints the server's counters
 * (VENEER_CHEETAH_STATS) and exits, which closes the socket and frees the
 * cache.  Only Veneer has the option: elsewhere it fails with
 * ENOPROTOOPT and the program says so.  See docs/network.md, "Cheetah".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cheetah.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int publish(int s, const char *path, const char *file)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	char *data = malloc(st.st_size ? st.st_size : 1);
	size_t got = 0;
	ssize_t k;
	while (data && got < (size_t)st.st_size &&
	       (k = read(fd, data + got, st.st_size - got)) > 0)
		got += k;
	close(fd);
	if (!data || got != (size_t)st.st_size) {
		fprintf(stderr, "cheetah: reading %s failed\n", file);
		exit(1);
	}
	struct cheetah_file f = { path, strlen(path), data, got };
	if (setsockopt(s, SOL_VENEER, VENEER_CHEETAH_PUBLISH, &f, sizeof f)) {
		fprintf(stderr, "cheetah: publishing %s: %s\n", path, strerror(errno));
		exit(1);
	}
	free(data); /* the cache holds its own copy */
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cheetah PORT DIR\n");
		return 2;
	}
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])) };
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64)) {
		perror("cheetah: socket");
		return 1;
	}
	DIR *d = opendir(argv[2]);
	if (!d) {
		perror(argv[2]);
		return 1;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char file[4096], path[300];
		snprintf(file, sizeof file, "%s/%s", argv[2], e->d_name);
		snprintf(path, sizeof path, "/%s", e->d_name);
		n += publish(s, path, file);
		if (!strcmp(e->d_name, "index.html"))
			publish(s, "/", file);
	}
	closedir(d);
	if (!n) {
		fprintf(stderr, "cheetah: no files in %s\n", argv[2]);
		return 1;
	}
	printf("cheetah: %d files on port %s\n", n, argv[1]);
	fflush(stdout);
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		int c = accept(s, NULL, NULL);
		if (c >= 0)
			close(c);
		else if (errno != EINTR)
			break;
	}
	uint64_t w[CHEETAH_STATS];
	socklen_t len = sizeof w;
	if (getsockopt(s, SOL_VENEER, VENEER_CHEETAH_STATS, w, &len) || len != sizeof w) {
		perror("cheetah: stats");
		return 1;
	}
	print_cheetah_stats(w);
	return 0;
}
