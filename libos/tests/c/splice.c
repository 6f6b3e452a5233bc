#define _GNU_SOURCE
/* splice and tee against Linux: file to pipe, pipe to file, pipe to pipe,
 * tee leaving the bytes, offsets, nonblocking and hostile arguments.
 * Every line printed is compared with the host. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "show.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGPIPE, SIG_IGN);
    int f = open("tmp/s", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(f, "0123456789", 10);
    lseek(f, 0, SEEK_SET);
    int p[2], q[2];
    pipe(p);
    pipe(q);
    char buf[32];

    show("file to pipe", splice(f, NULL, p[1], NULL, 4, 0));
    printf("file offset %ld\n", (long)lseek(f, 0, SEEK_CUR));
    off64_t off = 6;
    show("file at 6 to pipe", splice(f, &off, p[1], NULL, 100, 0));
    printf("file offset %ld, off %ld\n", (long)lseek(f, 0, SEEK_CUR), (long)off);
    show("tee", tee(p[0], q[1], 100, 0));
    show("pipe to pipe", splice(p[0], NULL, q[1], NULL, 3, 0));
    memset(buf, 0, sizeof buf);
    show("read q", read(q[0], buf, sizeof buf));
    printf("q: %s\n", buf);
    off = 20;
    show("pipe to file at 20", splice(p[0], NULL, f, &off, 100, 0));
    printf("off %ld size %ld\n", (long)off, (long)lseek(f, 0, SEEK_END));
    show("empty pipe nonblock", splice(p[0], NULL, f, NULL, 10, SPLICE_F_NONBLOCK));
    show("tee empty nonblock", tee(p[0], q[1], 10, SPLICE_F_NONBLOCK));

    show("len 0", splice(f, NULL, p[1], NULL, 0, 0));
    show("bad flags", splice(f, NULL, p[1], NULL, 4, 0x100));
    show("bad fd in", splice(99, NULL, p[1], NULL, 4, 0));
    show("bad fd out", splice(f, NULL, 99, NULL, 4, 0));
    show("no pipe", splice(f, NULL, f, NULL, 4, 0));
    show("offset on pipe side", splice(f, NULL, p[1], &off, 4, 0));
    show("same pipe", splice(p[0], NULL, p[1], NULL, 4, 0));
    show("to read end", splice(f, NULL, p[0], NULL, 4, 0));
    show("bad offset ptr", splice(f, (off64_t *)8, p[1], NULL, 4, 0));
    off = -1;
    show("negative offset", splice(f, &off, p[1], NULL, 4, 0));
    show("tee file", tee(f, q[1], 4, 0));
    show("tee same pipe", tee(p[0], p[1], 4, 0));
    show("tee wrong ends", tee(p[1], q[0], 4, 0));
    int ro = open("tmp/s", O_RDONLY);
    write(p[1], "xy", 2);
    show("pipe to read-only file", splice(p[0], NULL, ro, NULL, 2, 0));
    int ap = open("tmp/s", O_WRONLY | O_APPEND);
    show("pipe to O_APPEND file", splice(p[0], NULL, ap, NULL, 2, 0));
    close(q[0]);
    show("to pipe without reader", splice(p[0], NULL, q[1], NULL, 2, 0));
    show("still in pipe", read(p[0], buf, sizeof buf));
    close(p[1]);
    show("pipe at end", splice(p[0], NULL, f, NULL, 10, 0));
    close(ro);
    close(ap);
    close(f);
    unlink("tmp/s");
    return 0;
}
