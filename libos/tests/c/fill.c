/* Fills a directory with 1 MiB files until the file system is full
 * (ENOSPC), then prints how many whole files it wrote; the last, partial
 * file is removed. Exit status 0 only if it ended on ENOSPC. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char chunk[1 << 20];

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char path[256];
    memset(chunk, 'x', sizeof chunk);
    for (long n = 0;; n++) {
        snprintf(path, sizeof path, "%s/f%ld", dir, n);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            printf("%ld\n", n);
            return errno == ENOSPC ? 0 : 1;
        }
        ssize_t w = write(fd, chunk, sizeof chunk);
        int err = errno;
        close(fd);
        if (w != (ssize_t)sizeof chunk) {
            unlink(path);
            printf("%ld\n", n);
            return w < 0 && err == ENOSPC ? 0 : 1;
        }
    }
}
