#define _GNU_SOURCE
/* close_range against Linux: a range, CLOEXEC marking, bad flags and an
 * upside-down range (nothing closed), and glibc's closefrom over it. */
#include "show.h"
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

static long cr(unsigned a, unsigned b, unsigned flags) { return syscall(SYS_close_range, a, b, flags); }

static int open_at(int n) {
    int fd = open("/dev/null", O_RDONLY);
    if (fd != n && dup2(fd, n) == n)
        close(fd);
    return n;
}

int main(void) {
    for (int n = 10; n < 20; n++)
        open_at(n);
    show("bad flags", cr(10, 19, 1));
    show("first > last", cr(12, 11, 0));
    show("still open after refusals", fcntl(15, F_GETFD));
    show("close 12..14", cr(12, 14, 0));
    show("fd 11", fcntl(11, F_GETFD));
    show("fd 12", fcntl(12, F_GETFD));
    show("fd 14", fcntl(14, F_GETFD));
    show("fd 15", fcntl(15, F_GETFD));
    show("cloexec 15..16", cr(15, 16, CLOSE_RANGE_CLOEXEC));
    show("fd 15 flags", fcntl(15, F_GETFD));
    show("fd 17 flags", fcntl(17, F_GETFD));
    show("empty range", cr(100, 200, 0));
    show("unshare", cr(18, 18, CLOSE_RANGE_UNSHARE));
    show("fd 18", fcntl(18, F_GETFD));
    closefrom(10);
    show("after closefrom fd 10", fcntl(10, F_GETFD));
    show("after closefrom fd 19", fcntl(19, F_GETFD));
    show("fd 2 kept", fcntl(2, F_GETFD));
    return 0;
}
