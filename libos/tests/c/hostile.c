/* Hostile processes against the library OS's shared state (issue 25).
 * Veneer only: it names the shared arena's address and Veneer's own calls.
 *
 *   hostile lockword  a process of user 1000 stores another live process's
 *                     environment id in the library's lock word and exits
 *                     (or keeps running); everyone must go on.
 *   hostile kill      workers doing pipe, file and fork calls are killed at
 *                     random points (SIGKILL, and the kernel's env_destroy,
 *                     which ends an environment wherever it is); the
 *                     others must go on, root's pipe and file unchanged.
 *   hostile ended     the kernel ends (env_destroy) the only other holder
 *                     of a pipe's end while it sleeps, never running its
 *                     exit path: a reader must still see EOF, a writer
 *                     EPIPE, and not wait for good.
 *   hostile scribble  a process of user 1000 writes random bytes over every
 *                     page of the arena it can write, for many seeds, each
 *                     in a fresh child; root's pipe and file must be
 *                     unchanged and the system must go on.
 *   hostile ranges    a process of user 1000 makes pipes until refused: it
 *                     gets its share of the kernel's frame ranges and no
 *                     more, while root and another user still make pipes;
 *                     its ranges come back when it exits.
 *
 * Each mode ends with "hostile MODE: ok" and status 0, or a FAIL line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define VENEER(n) (0x10000 + (n))
#define VENEER_ENV_DESTROY VENEER(8)
#define VENEER_EXIT VENEER(14)
#define VENEER_SELF_ID VENEER(15)

/* lxrt's shared arena (libos/src/layout.rs SHARED, SHARED_MAX); its first
 * word was the big lock's. */
#define ARENA 0x70000000UL
#define ARENA_MAX (1UL << 30)
#define PAGE 4096UL

#define VICTIM "/tmp/hostile.victim"
#define PIPE_BYTES 4000

static int bad;

static void fail(const char *what)
{
    printf("FAIL: %s\n", what);
    fflush(stdout);
    bad = 1;
}

static unsigned char pattern(unsigned i)
{
    return (unsigned char)(i * 7 + 3);
}

/* Root's objects: a 0600 file and a pipe with data in it, held by this
 * process only. */
static int victim_pipe[2];

static void make_victims(void)
{
    unsigned char buf[PIPE_BYTES];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = pattern(i);
    int fd = open(VICTIM, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf)
        fail("making root's file");
    close(fd);
    if (pipe(victim_pipe) < 0 || write(victim_pipe[1], buf, sizeof buf) != sizeof buf)
        fail("making root's pipe");
}

static void check_victims(void)
{
    unsigned char buf[PIPE_BYTES + 1];
    int fd = open(VICTIM, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    close(fd);
    int same = n == PIPE_BYTES;
    for (unsigned i = 0; same && i < PIPE_BYTES; i++)
        same = buf[i] == pattern(i);
    if (!same)
        fail("root's file changed");
    close(victim_pipe[1]);
    /* Non-blocking: a writer the attack left behind fails the check
     * instead of hanging it. */
    fcntl(victim_pipe[0], F_SETFL, O_NONBLOCK);
    n = 0;
    for (ssize_t r; n < (ssize_t)sizeof buf && (r = read(victim_pipe[0], buf + n, sizeof buf - n)) > 0;)
        n += r;
    if (read(victim_pipe[0], buf, 1) != 0)
        fail("root's pipe has a writer left");
    same = n == PIPE_BYTES;
    for (unsigned i = 0; same && i < PIPE_BYTES; i++)
        same = buf[i] == pattern(i);
    if (!same)
        fail("root's pipe changed");
    close(victim_pipe[0]);
}

/* The system still works: a child forked now sends a message back through
 * a new pipe. */
static void check_alive(const char *when)
{
    int p[2];
    char buf[16] = { 0 };
    if (pipe(p) < 0) {
        fail("pipe after the attack");
        return;
    }
    pid_t c = fork();
    if (c == 0) {
        _exit(write(p[1], "alive", 5) == 5 ? 0 : 1);
    }
    close(p[1]);
    int st = -1;
    if (c < 0 || read(p[0], buf, sizeof buf) != 5 || strcmp(buf, "alive") || waitpid(c, &st, 0) != c || st != 0) {
        printf("FAIL: the system after %s\n", when);
        bad = 1;
    }
    close(p[0]);
}

/* A child that becomes user 1000 and holds no end of root's pipe. */
static pid_t attacker(void)
{
    pid_t c = fork();
    if (c == 0) {
        close(victim_pipe[0]);
        close(victim_pipe[1]);
        if (setgid(1000) < 0 || setuid(1000) < 0)
            _exit(99);
    }
    return c;
}

static void reap(pid_t c, const char *what)
{
    int st;
    if (waitpid(c, &st, 0) != c) {
        printf("FAIL: waiting for %s: %s\n", what, strerror(errno));
        bad = 1;
    }
}

static long self_id(void)
{
    return syscall(VENEER_SELF_ID);
}

/* ---- lockword ---- */

static void lockword(void)
{
    volatile uint64_t *word = (volatile uint64_t *)ARENA;
    long parent = self_id();

    /* 1: the parent's id (alive, running), then an exit that skips the
     * library (it would find the word taken). */
    pid_t c = attacker();
    if (c == 0) {
        *word = parent;
        syscall(VENEER_EXIT, 0, 0, 0);
        _exit(1);
    }
    reap(c, "attacker 1");
    check_alive("the parent's id in the lock word");
    printf("lockword: the parent's id, then exit: survived\n");

    /* 2: a sleeping process's id (root's child blocked reading a pipe). */
    int p[2], q[2];
    if (pipe(p) < 0 || pipe(q) < 0)
        fail("pipe");
    pid_t sleeper = fork();
    if (sleeper == 0) {
        long me = self_id();
        char b;
        if (write(q[1], &me, sizeof me) != sizeof me || read(p[0], &b, 1) != 1)
            _exit(1);
        _exit(0);
    }
    long sid = 0;
    if (read(q[0], &sid, sizeof sid) != sizeof sid)
        fail("the sleeper's id");
    usleep(20000); /* it is asleep in its read now */
    c = attacker();
    if (c == 0) {
        *word = sid;
        syscall(VENEER_EXIT, 0, 0, 0);
        _exit(1);
    }
    reap(c, "attacker 2");
    check_alive("a sleeping process's id in the lock word");
    printf("lockword: a sleeper's id, then exit: survived\n");
    if (write(p[1], "x", 1) != 1)
        fail("waking the sleeper");
    reap(sleeper, "the sleeper");

    /* 3: its own id, and it stays alive making calls (the library spins on
     * a word it believes another holds). */
    c = attacker();
    if (c == 0) {
        *word = self_id();
        for (;;)
            getppid();
    }
    usleep(50000);
    check_alive("a live spinner's id in the lock word");
    printf("lockword: its own id, then spinning in calls: survived\n");
    kill(c, SIGKILL);
    reap(c, "attacker 3");
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
}

/* ---- kill ---- */

static unsigned rnd_state = 1;

static unsigned rnd(void)
{
    rnd_state = rnd_state * 1103515245 + 12345;
    return rnd_state >> 8;
}

/* A worker: calls that take the library's shared state, forever. */
static void work(unsigned seed)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/tmp/hostile.w%u", seed % 8);
    memset(buf, 'w', sizeof buf);
    for (unsigned i = 0;; i++) {
        int p[2];
        if (pipe(p) == 0) {
            if (write(p[1], buf, sizeof buf) < 0 || read(p[0], buf, sizeof buf) < 0)
                _exit(2);
            fd_set r;
            FD_ZERO(&r);
            FD_SET(p[0], &r);
            struct timeval tv = { 0, 0 };
            select(p[0] + 1, &r, 0, 0, &tv);
            close(p[0]);
            close(p[1]);
        }
        int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
        if (fd >= 0) {
            if (write(fd, buf, sizeof buf) < 0)
                _exit(3);
            close(fd);
        }
        unlink(path);
        if (i % 4 == 0) {
            pid_t c = fork();
            if (c == 0)
                _exit(0);
            if (c > 0)
                waitpid(c, 0, 0);
        }
    }
}

#define WORKERS 4
#define KILLS 400

static void killing(void)
{
    /* The killer is a child holding no end of root's pipe: a worker the
     * kernel ends before it could close its copies would keep the pipe
     * open for good (lxrt closes a process's files in its own exit path,
     * which env_destroy skips). */
    pid_t killer = fork();
    if (killer != 0) {
        int st = -1;
        if (waitpid(killer, &st, 0) != killer || st != 0)
            fail("the killer saw a failure");
        return;
    }
    close(victim_pipe[0]);
    close(victim_pipe[1]);
    pid_t w[WORKERS];
    long me = self_id();
    for (int i = 0; i < WORKERS; i++)
        if ((w[i] = attacker()) == 0)
            work(i);
    for (int k = 0; k < KILLS; k++) {
        usleep(rnd() % 3000);
        int i = rnd() % WORKERS;
        if (k % 2 == 0) {
            kill(w[i], SIGKILL);
        } else {
            /* The kernel ends it where it stands, maybe inside the
             * library's critical section. Its parent may destroy it. */
            long env = me + (w[i] - getpid());
            if (syscall(VENEER_ENV_DESTROY, env, 0) < 0)
                fail("env_destroy of a worker");
        }
        waitpid(w[i], 0, WNOHANG);
        if ((w[i] = attacker()) == 0)
            work(k + WORKERS);
        if (k % 20 == 19) {
            check_alive("killing workers");
            printf("kill: %d workers ended\n", k + 1);
        }
    }
    for (int i = 0; i < WORKERS; i++) {
        kill(w[i], SIGKILL);
        waitpid(w[i], 0, 0);
    }
    printf("kill: the last workers ended\n");
    _exit(bad);
}

/* ---- ended ---- */

/* A child holding only `keep` of pipe `p`, ended by the kernel while it
 * sleeps: it never closes it. */
static void end_holder(int p[2], int keep)
{
    pid_t c = fork();
    if (c == 0) {
        close(p[!keep]);
        for (;;)
            pause();
    }
    close(p[keep]);
    usleep(20000);
    long env = self_id() + (c - getpid());
    if (syscall(VENEER_ENV_DESTROY, env, 0) < 0)
        fail("env_destroy of the holder");
    waitpid(c, 0, WNOHANG);
}

static void ended(void)
{
    int p[2];
    char b[4096] = { 0 };
    if (pipe(p) < 0) {
        fail("pipe");
        return;
    }
    end_holder(p, 1);
    /* SIGALRM ends us if the read waits for good. */
    alarm(10);
    if (read(p[0], b, 1) != 0)
        fail("no EOF once the writer was ended");
    else
        printf("ended: the reader saw EOF\n");
    close(p[0]);
    if (pipe(p) < 0) {
        fail("pipe");
        return;
    }
    end_holder(p, 0);
    signal(SIGPIPE, SIG_IGN);
    ssize_t r = 0;
    for (int i = 0; i < 64 && r >= 0; i++)
        r = write(p[1], b, sizeof b);
    if (r >= 0 || errno != EPIPE)
        fail("no EPIPE once the reader was ended");
    else
        printf("ended: the writer saw EPIPE\n");
    alarm(0);
    close(p[1]);
}

/* ---- scribble ---- */

static sigjmp_buf skip;

static void on_fault(int sig)
{
    (void)sig;
    siglongjmp(skip, 1);
}

#define SEEDS 40

static void scribble(void)
{
    for (unsigned seed = 1; seed <= SEEDS; seed++) {
        pid_t c = attacker();
        if (c == 0) {
            struct sigaction sa = { 0 };
            sa.sa_handler = on_fault;
            sa.sa_flags = SA_NODEFER;
            sigaction(SIGSEGV, &sa, 0);
            sigaction(SIGBUS, &sa, 0);
            rnd_state = seed;
            /* From here on no library call: it would run over what we
             * wrote. Pages that fault are skipped. */
            for (volatile unsigned long va = ARENA; va < ARENA + ARENA_MAX; va += PAGE) {
                if (sigsetjmp(skip, 1))
                    continue;
                volatile uint32_t *p = (volatile uint32_t *)va;
                for (unsigned i = 0; i < PAGE / 4; i++)
                    p[i] = rnd();
            }
            syscall(VENEER_EXIT, 0, 0, 0);
            _exit(1);
        }
        reap(c, "a scribbler");
        check_alive("a scribbler");
        printf("scribble: seed %u survived\n", seed);
        if (bad)
            break;
    }
}

/* ---- ranges ---- */

/* One user's share of the kernel's frame ranges, each pipe one
 * (kernel/src/ranges.rs PER_USER: a quarter of its 1,024). */
#define PER_USER 256

/* Can user `uid` (0: root, this process) make a pipe now? */
static int can_pipe(unsigned uid)
{
    pid_t c = fork();
    if (c == 0) {
        int p[2];
        if (uid && (setgid(uid) < 0 || setuid(uid) < 0))
            _exit(99);
        _exit(pipe(p) ? 1 : 0);
    }
    int st = -1;
    return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void ranges(void)
{
    /* Twice: the second hoarder gets a full share only if the first's
     * ranges came back when it exited. */
    for (int round = 0; round < 2; round++) {
        int ready[2], go[2];
        if (pipe(ready) < 0 || pipe(go) < 0) {
            fail("pipes for the hoarder");
            return;
        }
        pid_t c = attacker();
        if (c == 0) {
            int n = 0, p[2];
            while (n < PER_USER + 8 && pipe(p) == 0)
                n++;
            int got[2] = { n, errno };
            if (write(ready[1], got, sizeof got) != sizeof got)
                _exit(1);
            char b;
            _exit(read(go[0], &b, 1) == 1 ? 0 : 1);
        }
        int got[2] = { -1, 0 };
        if (c < 0 || read(ready[0], got, sizeof got) != sizeof got)
            fail("the hoarder's count");
        printf("ranges: user 1000 made %d pipes, then %s\n", got[0], strerrorname_np(got[1]));
        if (got[0] != PER_USER || got[1] != ENFILE)
            fail("user 1000's share of the frame ranges");
        if (!can_pipe(0))
            fail("root makes a pipe while user 1000 holds its share");
        if (!can_pipe(1001))
            fail("user 1001 makes a pipe while user 1000 holds its share");
        if (write(go[1], "x", 1) != 1)
            fail("letting the hoarder go");
        reap(c, "the hoarder");
        close(ready[0]);
        close(ready[1]);
        close(go[0]);
        close(go[1]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hostile lockword|kill|ended|scribble|ranges\n");
        return 2;
    }
    setvbuf(stdout, 0, _IONBF, 0);
    make_victims();
    if (!strcmp(argv[1], "lockword"))
        lockword();
    else if (!strcmp(argv[1], "kill"))
        killing();
    else if (!strcmp(argv[1], "ended"))
        ended();
    else if (!strcmp(argv[1], "scribble"))
        scribble();
    else if (!strcmp(argv[1], "ranges"))
        ranges();
    else
        return 2;
    check_victims();
    printf("%s: root's pipe and file checked\n", argv[1]);
    check_alive("the checks");
    unlink(VICTIM);
    if (!bad)
        printf("hostile %s: ok\n", argv[1]);
    return bad;
}
