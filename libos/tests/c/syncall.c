/* sync and syncfs with their results seen (busybox's sync ignores them):
 *
 *   syncall FILE  sync(2) by its system call, then syncfs on FILE; exits
 *                 0 when both succeed, else prints which failed and 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		printf("syncall: usage: syncall FILE\n");
		return 1;
	}
	if (syscall(SYS_sync) < 0) {
		printf("syncall: sync: errno %d\n", errno);
		return 1;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || syncfs(fd) < 0) {
		printf("syncall: syncfs %s: errno %d\n", argv[1], errno);
		return 1;
	}
	return 0;
}
