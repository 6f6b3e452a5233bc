/* Pointers into the last page of the address space, where a range's end
 * rounded up to a page wraps to zero: every call answers EFAULT and the
 * process goes on (lxrt once checked no page of such a range and faulted
 * in its own handler). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#define TOP(n) ((void *)(unsigned long)-(n))

static void report(const char *what, long r)
{
    printf("%s: %ld %s\n", what, r, r < 0 ? strerror(errno) : "");
}

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0 || write(fds[1], "12345678", 8) != 8)
        return 1;
    report("pipe into the top page", syscall(SYS_pipe, TOP(28)));
    report("read into the top page", read(fds[0], TOP(16), 8));
    report("sigaltstack old into the top page", syscall(SYS_sigaltstack, NULL, TOP(40)));
    report("stat into the top page", syscall(SYS_stat, "/", TOP(100)));
    report("gettimeofday into the top page", syscall(SYS_gettimeofday, TOP(8), NULL));
    report("write from the top page", write(fds[1], TOP(4), 4));
    report("open of a path in the top page", syscall(SYS_open, TOP(2), 0));
    char buf[8];
    report("the pipe still holds its bytes", read(fds[0], buf, 8));
    return 0;
}
