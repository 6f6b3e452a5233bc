#define _GNU_SOURCE
/* execveat and fexecve (CPython's test_fexecve met ENOSYS and took glibc's
 * /proc fallback): a program run from a descriptor of it (O_RDONLY and
 * O_PATH), one found from a directory descriptor, and the errors. Each
 * exec is made in a child; compared with the host. */
#include "show.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char *argv_echo[] = {"echo", "hello", NULL};
static char *envp[] = {NULL};

static void run(const char *what, int dirfd, const char *path, int flags)
{
    pid_t k = fork();
    if (k == 0) {
        long r = syscall(SYS_execveat, dirfd, path, argv_echo, envp, flags);
        show(what, r);
        _exit(0);
    }
    int st;
    waitpid(k, &st, 0);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    int bb = open("/bin/busybox", O_RDONLY);
    int pbb = open("/bin/busybox", O_PATH);
    int bin = open("/bin", O_RDONLY | O_DIRECTORY);
    run("execveat an O_RDONLY descriptor", bb, "", AT_EMPTY_PATH);
    run("execveat an O_PATH descriptor", pbb, "", AT_EMPTY_PATH);
    run("execveat from a directory", bin, "busybox", 0);
    run("execveat an absolute path, bad dirfd", -1, "/bin/busybox", 0);
    run("execveat bad flags", AT_FDCWD, "/bin/busybox", 1);
    run("execveat empty path without AT_EMPTY_PATH", bb, "", 0);
    run("execveat a bad descriptor", 99, "", AT_EMPTY_PATH);
    run("execveat a link with AT_SYMLINK_NOFOLLOW", bin, "sh", AT_SYMLINK_NOFOLLOW);
    run("execveat from a non-directory", bb, "x", 0);
    if (fork() == 0) {
        fexecve(bb, argv_echo, envp);
        show("fexecve", -1);
        _exit(1);
    }
    wait(NULL);
    return 0;
}
