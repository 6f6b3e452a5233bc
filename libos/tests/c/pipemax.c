#define _GNU_SOURCE
/* Pipe sizes past /proc/sys/fs/pipe-max-size (1 MiB): Linux lets a
 * process with CAP_SYS_RESOURCE (root) grow a pipe past it and refuses
 * everyone else (EPERM); Veneer refused root too. Root grows a pipe to
 * 4 MiB and it holds 3,000,000 bytes written at once; user nobody gets
 * EPERM (the size unchanged) and may still set 1 MiB; a ring too big for
 * the arena is ENOMEM with nothing changed. Veneer only: the host's
 * container drops CAP_SYS_RESOURCE from root, so its answers differ. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed;

static void want(const char *what, long got, long expected, int err)
{
    int ok = got == expected && (expected >= 0 || errno == err);
    printf("%s%s: %ld%s%s\n", ok ? "" : "FAIL: ", what, got, got < 0 ? " " : "",
           got < 0 ? strerrorname_np(errno) : "");
    failed |= !ok;
}

static unsigned char pattern(long i)
{
    return (unsigned char)(i * 7 + i / 251);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    int p[2];
    pipe(p);
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    want("root: set 4 MiB", fcntl(p[1], F_SETPIPE_SZ, 4 << 20), 4 << 20, 0);
    long n = 3000000;
    unsigned char *b = malloc(n);
    for (long i = 0; i < n; i++)
        b[i] = pattern(i);
    want("root: a write of 3000000 at once", write(p[1], b, n), n, 0);
    memset(b, 0, n);
    long got = 0, r;
    while (got < n && (r = read(p[0], b + got, n - got)) > 0)
        got += r;
    int intact = got == n;
    for (long i = 0; intact && i < n; i++)
        intact = b[i] == pattern(i);
    want("root: the bytes read back intact", intact, 1, 0);
    errno = 0;
    long big = fcntl(p[0], F_SETPIPE_SZ, 1L << 31);
    printf("root: set 2 GiB: %s\n", big == 1L << 31 ? "granted" : errno == ENOMEM ? "ENOMEM" : "FAIL");
    failed |= big != 1L << 31 && errno != ENOMEM;
    if (big < 0)
        want("root: the size after it", fcntl(p[0], F_GETPIPE_SZ), 4 << 20, 0);

    pid_t kid = fork();
    if (kid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        want("nobody: set 2 MiB", fcntl(p[1], F_SETPIPE_SZ, 2 << 20), -1, EPERM);
        want("nobody: set 1 MiB", fcntl(p[1], F_SETPIPE_SZ, 1 << 20), 1 << 20, 0);
        want("nobody: set 1 MiB + 1", fcntl(p[1], F_SETPIPE_SZ, (1 << 20) + 1), -1, EPERM);
        want("nobody: the size after it", fcntl(p[1], F_GETPIPE_SZ), 1 << 20, 0);
        _exit(failed);
    }
    int status;
    waitpid(kid, &status, 0);
    want("nobody's child exit", WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, 0);
    printf("pipemax: %s\n", failed ? "FAILED" : "ok");
    return failed;
}
