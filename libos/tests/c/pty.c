// Pseudo-terminals: a pair from /dev/ptmx (glibc's posix_openpt, grantpt,
// unlockpt, ptsname), bad arguments answered as Linux answers them, then a
// child on the slave as its controlling terminal: echo, canonical lines
// with erase and end of file, ^C -> SIGINT to the child, the window size
// with SIGWINCH, termios seen from the master, raw mode, /dev/tty, and
// EIO on the master once the child has gone.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "expect.h"

// What the master has read so far (since the last `expect` that found its
// marker).
static char seen[4096];
static size_t seen_len;

// Reads the master until `marker` (or `other`, if given) has come: 1 for
// `marker`, 2 for `other`, 0 on timeout.
static int expect_either(int m, const char *marker, const char *other) {
    seen_len = 0;
    seen[0] = 0;
    for (;;) {
        if (strstr(seen, marker))
            return 1;
        if (other && strstr(seen, other))
            return 2;
        struct pollfd p = {.fd = m, .events = POLLIN};
        if (poll(&p, 1, 10000) != 1) {
            printf("timeout waiting for [%s], saw [%s]\n", marker, seen);
            return 0;
        }
        ssize_t n = read(m, seen + seen_len, sizeof seen - 1 - seen_len);
        if (n <= 0) {
            printf("read for [%s]: %zd (%s), saw [%s]\n", marker, n, strerror(errno), seen);
            return 0;
        }
        seen_len += n;
        seen[seen_len] = 0;
    }
}

static int expect(int m, const char *marker) {
    return expect_either(m, marker, NULL) == 1;
}

static volatile sig_atomic_t got_int, got_winch;

static void on_int(int s) {
    (void)s;
    got_int = 1;
}

static void on_winch(int s) {
    (void)s;
    got_winch = 1;
}

// The child: a session of its own with the slave as its terminal; answers
// what it reads, line by line.
static void child(const char *name) {
    setsid();
    int s = open(name, O_RDWR);
    if (s < 0 || ioctl(s, TIOCSCTTY, 0) != 0)
        _exit(20);
    dup2(s, 0);
    dup2(s, 1);
    dup2(s, 2);
    close(s);
    struct sigaction sa = {.sa_handler = on_int};
    sigaction(SIGINT, &sa, 0);
    sa.sa_handler = on_winch;
    sigaction(SIGWINCH, &sa, 0);
    int tty = open("/dev/tty", O_WRONLY);
    if (tty < 0)
        _exit(21);
    dprintf(tty, "child: ready pgrp %s\n", tcgetpgrp(0) == getpgrp() ? "mine" : "other");
    close(tty);
    // A process of the foreground group holding the slave: the leader's
    // exit hangs the terminal up, and SIGHUP ends it.
    if (fork() == 0) {
        signal(SIGINT, SIG_IGN);
        signal(SIGWINCH, SIG_IGN);
        for (;;)
            pause();
    }
    char buf[256];
    size_t raw = 0;
    for (;;) {
        ssize_t n = read(0, buf + raw, sizeof buf - 1 - raw);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            _exit(22);
        if (n == 0) {
            dprintf(1, "child: end of file\n");
            continue;
        }
        if (raw) {
            raw += n;
            if (raw < 3)
                continue;
            dprintf(1, "child: raw [%.*s]\n", (int)raw - 1, buf + 1);
            _exit(7);
        }
        buf[n] = 0;
        if (!strcmp(buf, "raw\n")) {
            struct termios t;
            tcgetattr(0, &t);
            t.c_lflag &= ~(ICANON | ECHO);
            t.c_cc[VMIN] = 1;
            tcsetattr(0, TCSANOW, &t);
            dprintf(1, "child: raw mode\n");
            raw = 1;
            buf[0] = '>';
            continue;
        }
        if (!strcmp(buf, "size\n")) {
            struct winsize w;
            ioctl(0, TIOCGWINSZ, &w);
            dprintf(1, "child: %dx%d, SIGWINCH %d\n", w.ws_row, w.ws_col, got_winch);
            continue;
        }
        dprintf(1, "child: line [%.*s] %zd, SIGINT %d\n", (int)n - 1, buf, n, got_int);
    }
}

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    check("posix_openpt", m >= 0);
    check("grantpt", grantpt(m) == 0);
    char *p = ptsname(m);
    check("ptsname /dev/pts/N", p && !strncmp(p, "/dev/pts/", 9));
    char name[64];
    snprintf(name, sizeof name, "%s", p ? p : "?");
    const char *num = name + 9;

    // Locked until unlockpt.
    expect_errno("open locked slave", open(name, O_RDWR | O_NOCTTY), EIO);
    expect_errno("TIOCGPTN to NULL", ioctl(m, TIOCGPTN, NULL), EFAULT);
    expect_errno("TIOCSPTLCK from NULL", ioctl(m, TIOCSPTLCK, NULL), EFAULT);
    expect_errno("TIOCGWINSZ to a bad address", ioctl(m, TIOCGWINSZ, (void *)8), EFAULT);
    expect_errno("TCSETS from a bad address", ioctl(m, TCSETS, (void *)8), EFAULT);
    expect_errno("TCFLSH 7", ioctl(m, TCFLSH, 7), EINVAL);
    int null = open("/dev/null", O_RDWR);
    expect_errno("TIOCGPTN on /dev/null", ioctl(null, TIOCGPTN, &(unsigned){0}), ENOTTY);
    expect_errno("unlockpt on /dev/null", unlockpt(null), EINVAL);
    close(null);
    expect_errno("open a slave that does not exist", open("/dev/pts/4000", O_RDWR | O_NOCTTY), ENOENT);
    check("unlockpt", unlockpt(m) == 0);

    // /dev/pts lists the slave.
    DIR *d = opendir("/dev/pts");
    int listed = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        listed |= !strcmp(e->d_name, num);
    if (d)
        closedir(d);
    check("/dev/pts lists it", listed);

    int s = open(name, O_RDWR | O_NOCTTY);
    check("open slave", s >= 0);
    check("isatty slave", isatty(s));
    check("isatty master", isatty(m));
    expect_errno("TIOCGPTN on the slave", ioctl(s, TIOCGPTN, &(unsigned){0}), ENOTTY);
    expect_errno("TIOCSCTTY not a session leader", ioctl(s, TIOCSCTTY, 0), EPERM);
    int peer = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
    check("TIOCGPTPEER", peer >= 0 && isatty(peer));
    close(peer);

    // Readiness: select on the slave (a line, not half of one), epoll on
    // the master (the echo).
    fd_set rs;
    struct timeval tv = {0, 0};
    FD_ZERO(&rs);
    FD_SET(s, &rs);
    check("select: an empty slave is not readable", select(s + 1, &rs, 0, 0, &tv) == 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
    epoll_ctl(ep, EPOLL_CTL_ADD, m, &ev);
    write(m, "q", 1);
    FD_ZERO(&rs);
    FD_SET(s, &rs);
    check("select: half a line is not readable", select(s + 1, &rs, 0, 0, &tv) == 0);
    check("epoll: the echo is", epoll_wait(ep, &ev, 1, 1000) == 1 && (ev.events & EPOLLIN));
    check("epoll: edge-triggered, once", epoll_wait(ep, &ev, 1, 0) == 0);
    write(m, "\n", 1);
    FD_ZERO(&rs);
    FD_SET(s, &rs);
    tv.tv_sec = 1;
    check("select: a line is readable", select(s + 1, &rs, 0, 0, &tv) == 1);
    check("epoll: more echo, a new edge", epoll_wait(ep, &ev, 1, 1000) == 1);
    char buf[64];
    check("the slave reads q NL", read(s, buf, sizeof buf) == 2 && !memcmp(buf, "q\n", 2));
    check("the master reads the echo q CR LF", read(m, buf, sizeof buf) == 3 && !memcmp(buf, "q\r\n", 3));
    close(ep);

    // Output translation and nonblocking reads, without a child.
    write(s, "out\n", 4);
    ssize_t n = read(m, buf, sizeof buf);
    check("slave output reaches the master as out CR LF", n == 5 && !memcmp(buf, "out\r\n", 5));
    fcntl(m, F_SETFL, O_NONBLOCK);
    expect_errno("empty master, nonblocking", read(m, buf, sizeof buf), EAGAIN);
    fcntl(m, F_SETFL, 0);
    struct winsize w0;
    check("a new pty's window is 0x0", ioctl(s, TIOCGWINSZ, &w0) == 0 && w0.ws_row == 0 && w0.ws_col == 0);
    struct termios t0, tr;
    tcgetattr(s, &t0);
    tr = t0;
    tr.c_lflag &= ~ICANON;
    tr.c_cc[VMIN] = 0;
    tr.c_cc[VTIME] = 0;
    tcsetattr(s, TCSANOW, &tr);
    check("VMIN 0: an empty read returns 0 at once", read(s, buf, sizeof buf) == 0);
    tcsetattr(s, TCSANOW, &t0);

    // (The slave stays open here until the child has it: a master whose
    // slaves have all closed reads EIO.)
    pid_t pid = fork();
    if (pid == 0) {
        close(m);
        close(s);
        child(name);
    }
    check("child ready, in the foreground", expect(m, "child: ready pgrp mine\r\n"));
    close(s);

    write(m, "hello\n", 6);
    check("line read by the child", expect(m, "child: line [hello] 6, SIGINT 0\r\n"));
    check("echo comes first", !strncmp(seen, "hello\r\n", 7));

    // Canonical editing: erase (DEL) and a line typed in pieces.
    write(m, "ab", 2);
    write(m, "c\x7f", 2);
    write(m, "d\r", 2);
    check("erase and CR -> NL", expect(m, "child: line [abd] 4, SIGINT 0\r\n"));

    // End of file on an empty line: a read of 0.
    write(m, "\x04", 1);
    check("^D -> end of file", expect(m, "child: end of file\r\n"));

    // ^C: SIGINT for the foreground group, echoed as ^C (once the queue
    // towards the master is flushed, so the child answers the next line).
    write(m, "\x03", 1);
    check("^C echoed", expect(m, "^C"));
    // (Veneer's signal, queued inside the master's write, may reach the
    // child only after it has read the next line: ask until it has.)
    int r = 0;
    for (int tries = 0; tries < 50 && r != 1; tries++) {
        write(m, "after\n", 6);
        r = expect_either(m, "child: line [after] 6, SIGINT 1\r\n", "child: line [after] 6, SIGINT 0\r\n");
        if (r != 1)
            usleep(100000);
    }
    check("^C -> SIGINT", r == 1);

    // The window size: the child is told with SIGWINCH.
    struct winsize w = {.ws_row = 30, .ws_col = 100};
    check("TIOCSWINSZ", ioctl(m, TIOCSWINSZ, &w) == 0);
    write(m, "size\n", 5);
    check("SIGWINCH and the new size", expect(m, "child: 30x100, SIGWINCH 1\r\n"));

    // Termios set by the child is the master's too.
    struct termios t;
    check("master in canonical mode", tcgetattr(m, &t) == 0 && (t.c_lflag & ICANON));
    write(m, "raw\n", 4);
    check("child in raw mode", expect(m, "child: raw mode\r\n"));
    check("master sees raw mode", tcgetattr(m, &t) == 0 && !(t.c_lflag & (ICANON | ECHO)));
    write(m, "x", 1);
    write(m, "y", 1);
    check("raw bytes, no echo", expect(m, "child: raw [xy]\r\n") && !strncmp(seen, "child: raw", 10));

    int status;
    waitpid(pid, &status, 0);
    check("child exited 7", WIFEXITED(status) && WEXITSTATUS(status) == 7);

    // The last slave gone (the grandchild ended by SIGHUP): the master
    // hangs up.
    struct pollfd pf = {.fd = m, .events = POLLIN};
    check("poll: POLLHUP", poll(&pf, 1, 10000) == 1 && (pf.revents & POLLHUP));
    expect_errno("read master after the child", read(m, buf, sizeof buf), EIO);
    printf("write master after the child: %zd\n", write(m, "z", 1));
    close(m);

    // The slave goes with the master.
    expect_errno("open slave after the master closed", open(name, O_RDWR | O_NOCTTY), ENOENT);

    // The master gone: the slave reads end of file and cannot write.
    m = posix_openpt(O_RDWR | O_NOCTTY);
    unlockpt(m);
    s = open(ptsname(m), O_RDWR | O_NOCTTY);
    close(m);
    check("slave reads 0 after the master closed", read(s, buf, sizeof buf) == 0);
    expect_errno("slave write after the master closed", write(s, "z", 1), EIO);
    close(s);
    return 0;
}
