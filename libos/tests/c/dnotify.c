/* dnotify (fcntl F_NOTIFY) against Linux: a directory marked for changes
 * signals its marking process with SIGIO, once or with DN_MULTISHOT each
 * time; creating, writing, changing attributes, renaming and removing an
 * entry, from this process and from a child; the mark goes with
 * F_NOTIFY 0 and with the descriptor; a mark on a file is ENOTDIR. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

static volatile sig_atomic_t got;

static void on_sigio(int sig)
{
    (void)sig;
    got++;
}

/* Waits up to a second for the count to reach `want` (a signal from
 * another process comes when it comes). */
static int await_count(int want)
{
    for (int i = 0; i < 100 && got < want; i++)
        usleep(10000);
    return got;
}

static void touch(const char *path)
{
    close(open(path, O_CREAT | O_WRONLY, 0644));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGIO, on_sigio);
    mkdir("/tmp/dn", 0755);
    unlink("/tmp/dn/a");
    unlink("/tmp/dn/b");
    unlink("/tmp/dn/c");
    touch("/tmp/dnfile");
    int file = open("/tmp/dnfile", O_RDONLY);
    show("a mark on a file", fcntl(file, F_NOTIFY, DN_CREATE));
    show("nothing asked of a file", fcntl(file, F_NOTIFY, 0));
    show("multishot alone, on a file", fcntl(file, F_NOTIFY, DN_MULTISHOT));
    close(file);

    int d = open("/tmp/dn", O_RDONLY | O_DIRECTORY);
    show("mark for creation, once", fcntl(d, F_NOTIFY, DN_CREATE));
    touch("/tmp/dn/a");
    printf("after a create: %d\n", got);
    touch("/tmp/dn/b");
    printf("after a second create: %d\n", got);

    got = 0;
    show("mark for everything, each time",
         fcntl(d, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MODIFY | DN_ATTRIB | DN_RENAME | DN_MULTISHOT));
    int fa = open("/tmp/dn/a", O_WRONLY);
    write(fa, "x", 1);
    printf("after a write: %d\n", got);
    close(fa);
    chmod("/tmp/dn/a", 0600);
    printf("after a chmod: %d\n", got);
    rename("/tmp/dn/a", "/tmp/dn/c");
    printf("after a rename: %d\n", got);
    unlink("/tmp/dn/b");
    printf("after an unlink: %d\n", got);
    touch("/tmp/dnfile");
    unlink("/tmp/dnfile");
    printf("after changes elsewhere: %d\n", got);

    got = 0;
    pid_t kid = fork();
    if (kid == 0) {
        touch("/tmp/dn/b");
        _exit(0);
    }
    waitpid(kid, NULL, 0);
    printf("after a child's create: %d\n", await_count(1));

    got = 0;
    show("nothing asked", fcntl(d, F_NOTIFY, 0));
    unlink("/tmp/dn/b");
    printf("after an unlink, unmarked: %d\n", got);
    fcntl(d, F_NOTIFY, DN_DELETE | DN_MULTISHOT);
    close(d);
    unlink("/tmp/dn/c");
    printf("after the descriptor closed: %d\n", got);
    rmdir("/tmp/dn");
    return 0;
}
