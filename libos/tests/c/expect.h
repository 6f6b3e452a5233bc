/* Checks whose lines are the same on Linux and Veneer when they hold: a
 * condition (ok / FAILED), and a call that must fail with a given errno
 * (its message, or FAILED with what came instead). Shared by the tests
 * whose output is compared with the host's (pty.c, inotify.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void check(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "FAILED");
    fflush(stdout);
}

static void expect_errno(const char *what, long r, int want)
{
    int e = errno;
    if (r == -1 && e == want)
        printf("%s: %s\n", what, strerror(want));
    else
        printf("%s: FAILED (%ld, %s)\n", what, r, strerror(e));
    fflush(stdout);
}
