/* An epoll set shared across fork, watching a pipe the child no longer
 * holds: the child closes its ends of the pipe, then waits on the set.
 * On Linux the watch stays (the parent still holds the pipe) and reports
 * the parent's write; the child's wait must neither fault nor lose it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "show.h"

static void say(int fd)
{
    if (write(fd, "s", 1) != 1)
        _exit(3);
}

static void hear(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        _exit(4);
}

/* A set shared before a pipe is made and added to it: the child, which
 * never held the pipe, waits on the set and is the last to close it; then
 * the parent closes the pipe. (Linux reports the pipe to the child; Veneer
 * does not map it there: what is checked is that nobody faults.) */
static int added_after_fork(void)
{
    int set = epoll_create1(0), down[2], up[2];
    if (set < 0 || pipe(down) || pipe(up))
        return 1;
    pid_t kid = fork();
    if (kid == 0) {
        struct epoll_event got[4];
        hear(down[0]);
        printf("child: a wait on the set %s\n", epoll_wait(set, got, 4, 0) >= 0 ? "returned" : "failed");
        fflush(stdout);
        say(up[1]);
        hear(down[0]);
        show("child: closes the set last", close(set));
        fflush(stdout);
        say(up[1]);
        _exit(0);
    }
    int q[2];
    if (pipe(q))
        return 1;
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = 9 };
    show("parent: watch a new pipe", epoll_ctl(set, EPOLL_CTL_ADD, q[0], &e));
    show("parent: write into it", write(q[1], "y", 1));
    fflush(stdout);
    say(down[1]);
    hear(up[0]);
    show("parent: close the set", close(set));
    fflush(stdout);
    say(down[1]);
    hear(up[0]);
    show("parent: close the pipe", close(q[0]) + close(q[1]));
    int st;
    show("parent: wait", waitpid(kid, &st, 0) == kid);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
    int again = epoll_create1(0), r[2];
    struct epoll_event got[2];
    if (again < 0 || pipe(r) || epoll_ctl(again, EPOLL_CTL_ADD, r[0], &e) || write(r[1], "z", 1) != 1)
        return 1;
    show("parent: a new set sees a new pipe", epoll_wait(again, got, 2, 0));
    return 0;
}

int main(void)
{
    int p[2], go[2], ready[2];
    if (pipe(p) || pipe(go) || pipe(ready))
        return 1;
    int ep = epoll_create1(0);
    struct epoll_event e = { .events = EPOLLIN, .data.u64 = 7 };
    show("watch the pipe", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e));
    fflush(stdout);
    pid_t kid = fork();
    if (kid == 0) {
        close(p[0]);
        close(p[1]);
        close(go[1]);
        struct epoll_event got[4];
        show("child: wait on an empty pipe", epoll_wait(ep, got, 4, 0));
        fflush(stdout);
        char c = 'r';
        if (write(ready[1], &c, 1) != 1)
            _exit(2);
        show("child: the parent wrote", read(go[0], &c, 1));
        int n = epoll_wait(ep, got, 4, 1000);
        show("child: wait after the write", n);
        if (n > 0)
            printf("child: event %llu %s\n", (unsigned long long)got[0].data.u64,
                   got[0].events & EPOLLIN ? "EPOLLIN" : "other");
        show("child: remove a watch of a closed descriptor", epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL));
        fflush(stdout);
        _exit(0);
    }
    close(go[0]);
    char r;
    show("parent: the child waited", read(ready[0], &r, 1));
    show("parent: write", write(p[1], "x", 1));
    show("parent: go", write(go[1], "g", 1));
    int st;
    show("parent: wait", waitpid(kid, &st, 0) == kid);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
    struct epoll_event got[4];
    show("parent: wait on the set", epoll_wait(ep, got, 4, 0));
    char c;
    show("parent: read", read(p[0], &c, 1));
    /* The last holder closes: the watch goes with the pipe. */
    close(p[0]);
    close(p[1]);
    show("parent: wait after the last close", epoll_wait(ep, got, 4, 0));
    fflush(stdout);
    return added_after_fork();
}
