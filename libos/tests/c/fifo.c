#define _GNU_SOURCE
/* Named pipes against Linux: mknod/mknodat's file types and hostile
 * arguments, and opening a FIFO by path (a reader waits for a writer and
 * the other way round, a non-blocking writer without a reader gets ENXIO,
 * the data goes when the last end closes). Every line printed is compared
 * with the host. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

static void kinds(void)
{
    struct stat st;
    show("mknod dir type", mknod("tmp/n-dir", S_IFDIR | 0644, 0));
    show("mknod bad type", mknod("tmp/n-bad", 0070000 | 0644, 0));
    show("mknod symlink type", mknod("tmp/n-lnk", S_IFLNK | 0644, 0));
    show("after refused types", stat("tmp/n-dir", &st));
    show("mknod bad path ptr", mknod((char *)8, S_IFIFO | 0644, 0));
    show("mknod missing dir", mknod("tmp/none/f", S_IFIFO | 0644, 0));
    show("mknodat bad dirfd", mknodat(99, "f", S_IFIFO | 0644, 0));
    show("mknodat bad type first", mknodat(99, "f", 0070000, 0));
    show("mknod empty path", mknod("", S_IFIFO | 0644, 0));

    umask(022);
    show("mknod fifo", mknod("tmp/fifo", S_IFIFO | 0666, 0));
    show("mknod fifo again", mknod("tmp/fifo", S_IFIFO | 0666, 0));
    show("mknod char over fifo", mknod("tmp/fifo", S_IFCHR | 0666, makedev(1, 3)));
    show("stat fifo", stat("tmp/fifo", &st));
    printf("fifo: isfifo %d mode %o size %ld nlink %lu\n", S_ISFIFO(st.st_mode), st.st_mode & 07777,
           (long)st.st_size, (unsigned long)st.st_nlink);
    int dir = open("tmp", O_RDONLY | O_DIRECTORY);
    show("mknodat fifo", mknodat(dir, "fifo2", S_IFIFO | 0600, 0));
    show("stat fifo2", stat("tmp/fifo2", &st));
    printf("fifo2: isfifo %d mode %o\n", S_ISFIFO(st.st_mode), st.st_mode & 07777);
    close(dir);
    show("mknod regular", mknod("tmp/reg", 0640, 0));
    stat("tmp/reg", &st);
    printf("reg: isreg %d mode %o\n", S_ISREG(st.st_mode), st.st_mode & 07777);
    show("mknod S_IFREG", mknod("tmp/reg2", S_IFREG | 0600, 0));
    show("mknod socket", mknod("tmp/sock", S_IFSOCK | 0600, 0));
    stat("tmp/sock", &st);
    printf("sock: issock %d\n", S_ISSOCK(st.st_mode));
    show("open socket node", open("tmp/sock", O_RDONLY));
}

static void opens(void)
{
    char buf[32] = {0};
    struct stat a, b;
    show("nonblock writer, no reader", open("tmp/fifo", O_WRONLY | O_NONBLOCK));
    show("fifo as directory", open("tmp/fifo", O_RDONLY | O_DIRECTORY | O_NONBLOCK));
    int r = open("tmp/fifo", O_RDONLY | O_NONBLOCK);
    show("nonblock reader", r >= 0 ? 0 : -1);
    show("read, no writer yet", read(r, buf, sizeof buf));
    int w = open("tmp/fifo", O_WRONLY | O_NONBLOCK | O_TRUNC);
    show("nonblock writer", w >= 0 ? 0 : -1);
    show("write", write(w, "hello", 5));
    show("read", read(r, buf, sizeof buf));
    printf("got: %s\n", buf);
    show("read empty", read(r, buf, sizeof buf));
    fstat(w, &a);
    stat("tmp/fifo", &b);
    printf("fstat: isfifo %d same inode %d\n", S_ISFIFO(a.st_mode), a.st_ino == b.st_ino);
    show("lseek", lseek(r, 0, SEEK_SET));
    show("write again", write(w, "left", 4));
    close(w);
    show("read after writer closed", read(r, buf, 3));
    show("read rest", read(r, buf, sizeof buf));
    show("read at end", read(r, buf, sizeof buf));
    close(r);

    /* What is left in a FIFO when its last end closes is gone. */
    r = open("tmp/fifo", O_RDONLY | O_NONBLOCK);
    w = open("tmp/fifo", O_WRONLY | O_NONBLOCK);
    show("write then close all", write(w, "lost", 4));
    close(w);
    close(r);
    r = open("tmp/fifo", O_RDONLY | O_NONBLOCK);
    show("reopened: read", read(r, buf, sizeof buf));
    close(r);

    /* Read-write opens never wait and hold both ends. */
    int rw = open("tmp/fifo", O_RDWR);
    show("read-write open", rw >= 0 ? 0 : -1);
    show("read-write: write", write(rw, "both", 4));
    memset(buf, 0, sizeof buf);
    show("read-write: read", read(rw, buf, sizeof buf));
    printf("got: %s\n", buf);
    w = open("tmp/fifo", O_WRONLY | O_NONBLOCK);
    show("writer beside read-write", w >= 0 ? 0 : -1);
    close(w);
    close(rw);

    /* An unlinked FIFO still joins the ends that have it open. */
    r = open("tmp/fifo2", O_RDONLY | O_NONBLOCK);
    w = open("tmp/fifo2", O_WRONLY | O_NONBLOCK);
    show("unlink open fifo", unlink("tmp/fifo2"));
    show("write unlinked", write(w, "gone", 4));
    show("read unlinked", read(r, buf, sizeof buf));
    close(w);
    close(r);
}

/* Blocking opens: each side waits for the other. */
static void rendezvous(int reader_first)
{
    int ready[2];
    pipe(ready);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        if (!reader_first)
            close(ready[1]);
        int w = open("tmp/fifo", O_WRONLY);
        if (reader_first)
            close(ready[1]);
        write(w, "through", 7);
        close(w);
        _exit(w < 0);
    }
    close(ready[1]);
    char c;
    /* The writer is started (and likely waiting in open) or not yet: both
     * orders end the same. */
    if (!reader_first)
        read(ready[0], &c, 1);
    int r = open("tmp/fifo", O_RDONLY);
    char buf[16] = {0};
    ssize_t n, got = 0;
    while ((n = read(r, buf + got, sizeof buf - 1 - got)) > 0)
        got += n;
    printf("rendezvous %d: got %s (%zd)\n", reader_first, buf, got);
    close(r);
    close(ready[0]);
    int status;
    waitpid(pid, &status, 0);
    printf("writer exit %d\n", WEXITSTATUS(status));
}

/* A writer that opens and closes without writing still ends the reader's
 * wait (the reader then sees end of file). */
static void empty_writer(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        int r = open("tmp/fifo", O_RDONLY);
        char buf[4];
        _exit(r < 0 ? 2 : read(r, buf, sizeof buf) == 0 ? 0 : 1);
    }
    int w;
    /* Wait until the child's reader is open, then come and go. */
    while ((w = open("tmp/fifo", O_WRONLY | O_NONBLOCK)) < 0)
        usleep(1000);
    close(w);
    int status;
    waitpid(pid, &status, 0);
    printf("reader after empty writer: %d\n", WEXITSTATUS(status));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    kinds();
    opens();
    rendezvous(0);
    rendezvous(1);
    empty_writer();
    unlink("tmp/fifo");
    unlink("tmp/reg");
    unlink("tmp/reg2");
    unlink("tmp/sock");
    return 0;
}
