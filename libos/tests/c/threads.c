/* Threads on Veneer: an unmodified static glibc program, its output
 * compared with the host's. pthreads (mutexes, condition variables,
 * thread-local storage, joins, many threads), raw futex calls (every
 * operation lxrt has, and their errors; "shared" ones on private memory, as
 * glibc's join waits), clone's refusals and a wild
 * stack, tgkill to a thread and to a foreign process, a thread's exit vs
 * exit_group, the first thread leaving with pthread_exit, and fork from a
 * threaded process. Nothing printed depends on ids or timing. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *t, uint32_t *uaddr2, uint32_t val3) {
    return syscall(SYS_futex, uaddr, op, val, t, uaddr2, val3);
}

/* The result of a raw call as "ok N" or the errno's name. */
static const char *err(long r) {
    static char buf[32];
    if (r >= 0) {
        snprintf(buf, sizeof buf, "ok %ld", r);
        return buf;
    }
    switch (errno) {
    case EAGAIN: return "EAGAIN";
    case EFAULT: return "EFAULT";
    case EINVAL: return "EINVAL";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ESRCH: return "ESRCH";
    case ENOSYS: return "ENOSYS";
    case EINTR: return "EINTR";
    default: snprintf(buf, sizeof buf, "errno %d", errno); return buf;
    }
}

/* ---- many threads, a mutex, thread-local storage, joins ---- */

#define THREADS 16
#define ROUNDS 2000
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static __thread long mine = 7;
static pid_t tids[THREADS];

static void *adder(void *arg) {
    long id = (long)arg;
    mine += id;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        if (i % 500 == 0)
            sched_yield();
    }
    tids[id] = gettid();
    return (void *)(mine * 10);
}

static void many(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, adder, (void *)i) != 0)
            printf("pthread_create %ld failed\n", i);
    long sum = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    int distinct = 1;
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < i; j++)
            distinct &= tids[i] != tids[j];
    for (int i = 0; i < THREADS; i++)
        distinct &= tids[i] != getpid() && tids[i] > 0;
    printf("many: counter %ld (want %d), joined results %ld, main's tls %ld, tids distinct %d, gettid==getpid in main %d\n",
           counter, THREADS * ROUNDS, sum, mine, distinct, gettid() == getpid());
}

/* ---- condition variables: a bounded queue, producers and consumers ---- */

#define QSIZE 4
#define ITEMS 400
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t notfull = PTHREAD_COND_INITIALIZER, notempty = PTHREAD_COND_INITIALIZER;
static int queue[QSIZE], qhead, qlen, done;
static long consumed;

static void *producer(void *arg) {
    long base = (long)arg;
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&qlock);
        while (qlen == QSIZE)
            pthread_cond_wait(&notfull, &qlock);
        queue[(qhead + qlen++) % QSIZE] = base + i;
        pthread_cond_signal(&notempty);
        pthread_mutex_unlock(&qlock);
    }
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    long got = 0;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (qlen == 0 && !done)
            pthread_cond_wait(&notempty, &qlock);
        if (qlen == 0 && done) {
            pthread_mutex_unlock(&qlock);
            break;
        }
        got += queue[qhead];
        qhead = (qhead + 1) % QSIZE;
        qlen--;
        pthread_cond_signal(&notfull);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    consumed += got;
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void condvars(void) {
    pthread_t p[2], c[3];
    for (long i = 0; i < 2; i++)
        pthread_create(&p[i], NULL, producer, (void *)(i * 100000));
    for (int i = 0; i < 3; i++)
        pthread_create(&c[i], NULL, consumer, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(p[i], NULL);
    pthread_mutex_lock(&qlock);
    done = 1;
    pthread_cond_broadcast(&notempty);
    pthread_mutex_unlock(&qlock);
    for (int i = 0; i < 3; i++)
        pthread_join(c[i], NULL);
    long want = 0;
    for (long b = 0; b < 2; b++)
        want += b * 100000 * ITEMS + (long)ITEMS * (ITEMS + 1) / 2;
    printf("condvars: consumed %ld (want %ld)\n", consumed, want);
}

/* ---- raw futex calls ---- */

static uint32_t word, word2;
static volatile int stage;

static void *waiter(void *arg) {
    uint32_t bits = (uint32_t)(long)arg;
    __atomic_add_fetch(&stage, 1, __ATOMIC_SEQ_CST);
    long r = futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, bits);
    return (void *)(r == 0 ? 1L : -(long)errno);
}

static void wait_stage(int n) {
    while (__atomic_load_n(&stage, __ATOMIC_SEQ_CST) < n)
        sched_yield();
    /* Give the waiters time to be asleep in the call. */
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void futexes(void) {
    struct timespec rel = {0, 50 * 1000 * 1000}, bad = {0, 1000000000}, neg = {-1, 0};
    printf("futex wait, value changed: %s\n", err(futex(&word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0)));
    printf("futex wait, NULL address: %s\n", err(futex(NULL, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0)));
    printf("futex wait, unmapped address: %s\n",
           err(futex((uint32_t *)0x10, FUTEX_WAIT, 0, NULL, NULL, 0)));
    printf("futex wait, kernel address: %s\n",
           err(futex((uint32_t *)0xffffffff80000000ul, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0)));
    printf("futex wait, misaligned: %s\n",
           err(futex((uint32_t *)((char *)&word + 1), FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0)));
    printf("futex wait, bad timeout: %s\n", err(futex(&word, FUTEX_WAIT_PRIVATE, 0, &bad, NULL, 0)));
    printf("futex wait, negative timeout: %s\n", err(futex(&word, FUTEX_WAIT_PRIVATE, 0, &neg, NULL, 0)));
    printf("futex wait, timeout pointer bad: %s\n",
           err(futex(&word, FUTEX_WAIT_PRIVATE, 0, (struct timespec *)0x10, NULL, 0)));
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    long r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    printf("futex wait 50 ms relative: %s, waited >= 50 ms: %d\n", err(r), ms >= 50);
    for (int realtime = 0; realtime < 2; realtime++) {
        clockid_t clk = realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        clock_gettime(clk, &a);
        struct timespec abs = a;
        abs.tv_nsec += 50 * 1000 * 1000;
        if (abs.tv_nsec >= 1000000000) {
            abs.tv_sec++;
            abs.tv_nsec -= 1000000000;
        }
        int op = FUTEX_WAIT_BITSET_PRIVATE | (realtime ? FUTEX_CLOCK_REALTIME : 0);
        r = futex(&word, op, 0, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
        clock_gettime(clk, &b);
        ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        printf("futex wait_bitset absolute on %s: %s, waited >= 50 ms: %d\n", realtime ? "realtime" : "monotonic",
               err(r), ms >= 50);
        struct timespec past = {1, 0};
        printf("futex wait_bitset deadline in the past: %s\n", err(futex(&word, op, 0, &past, NULL, ~0u)));
    }
    printf("futex wait_bitset, bitset 0: %s\n", err(futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, 0)));
    printf("futex wake_bitset, bitset 0: %s\n", err(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0)));
    printf("futex wake, nobody waits: %s\n", err(futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0)));
    printf("futex realtime flag on wake: %s\n",
           err(futex(&word, FUTEX_WAKE_PRIVATE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0)));
    printf("futex cmp_requeue, value changed: %s\n",
           err(futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (struct timespec *)1, &word2, 5)));

    /* Bitsets: waiters on bits 1 and 2; a wake for bit 2 wakes only one. */
    pthread_t t[3];
    stage = 0;
    pthread_create(&t[0], NULL, waiter, (void *)1L);
    pthread_create(&t[1], NULL, waiter, (void *)2L);
    wait_stage(2);
    printf("futex wake_bitset 2: %s\n", err(futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 2)));
    void *r1;
    pthread_join(t[1], &r1);
    printf("bit-2 waiter: %ld\n", (long)r1);
    /* Requeue: two waiters (bit 1 already, one more); wake one, move one to
     * word2, which a plain wake then reaches. */
    pthread_create(&t[2], NULL, waiter, (void *)~0L);
    wait_stage(3);
    printf("futex cmp_requeue 1+1: %s\n",
           err(futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (struct timespec *)1, &word2, 0)));
    printf("futex wake word: %s\n", err(futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0)));
    printf("futex wake word2: %s\n", err(futex(&word2, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0)));
    void *r0, *r2;
    pthread_join(t[0], &r0);
    pthread_join(t[2], &r2);
    printf("requeued waiters: %ld %ld\n", (long)r0, (long)r2);
}

/* ---- clone's refusals and a wild stack ---- */

static void clones(void) {
    long r = syscall(SYS_clone, CLONE_VM | CLONE_THREAD, NULL, NULL, NULL, 0);
    printf("clone THREAD without SIGHAND: %s\n", err(r));
    r = syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, NULL, NULL, NULL, 0);
    printf("clone SIGHAND without VM: %s\n", err(r));
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        /* The new thread's first instruction after the call uses the
         * unmapped stack: SIGSEGV ends the whole process. */
        syscall(SYS_clone, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM,
                (void *)0xdead0000, NULL, NULL, 0);
        for (;;)
            pause();
    }
    int st;
    waitpid(p, &st, 0);
    printf("wild clone stack: killed by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

/* ---- signals to threads ---- */

static volatile pid_t handled_by;
static void on_usr1(int s) {
    (void)s;
    handled_by = gettid();
}

static volatile int spin_go = 1;
static volatile pid_t spinner_tid;
static void *spinner(void *arg) {
    (void)arg;
    spinner_tid = gettid();
    while (spin_go)
        ;
    return NULL;
}

static void signals(void) {
    signal(SIGUSR1, on_usr1);
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    while (!spinner_tid)
        sched_yield();
    printf("tgkill to a thread: %s\n", err(syscall(SYS_tgkill, getpid(), spinner_tid, SIGUSR1)));
    while (!handled_by)
        sched_yield();
    printf("handled by that thread: %d\n", handled_by == spinner_tid);
    spin_go = 0;
    pthread_join(t, NULL);
    printf("tgkill, foreign tgid: %s\n", err(syscall(SYS_tgkill, getppid(), gettid(), SIGUSR1)));
    printf("tgkill, tid gone: %s\n", err(syscall(SYS_tgkill, getpid(), spinner_tid, SIGUSR1)));
    printf("tgkill, bad signal: %s\n", err(syscall(SYS_tgkill, getpid(), gettid(), 99)));
    printf("tgkill, tid 0: %s\n", err(syscall(SYS_tgkill, getpid(), 0, SIGUSR1)));
    handled_by = 0;
    const char *r = err(syscall(SYS_tkill, gettid(), SIGUSR1));
    printf("tkill to myself: %s, handled %d\n", r, handled_by == gettid());
}

/* ---- exit of one thread, of the group, and of the first ---- */

static void *exits_group(void *arg) {
    (void)arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    exit(5);
}

static void *last_one(void *arg) {
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    printf("last thread still runs after the first left\n");
    fflush(stdout);
    syscall(SYS_exit, 7);
    return NULL;
}

static void *one_exits(void *arg) {
    (void)arg;
    syscall(SYS_exit, 3);
    return NULL;
}

static int child_status(void (*body)(void)) {
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        body();
        exit(100);
    }
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st);
}

static void body_group(void) {
    pthread_t t;
    pthread_create(&t, NULL, exits_group, NULL);
    pthread_join(t, NULL);
}

static void body_first_leaves(void) {
    pthread_t t;
    pthread_create(&t, NULL, last_one, NULL);
    pthread_exit(NULL);
}

static void body_one_exits(void) {
    pthread_t t;
    pthread_create(&t, NULL, one_exits, NULL);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    exit(9);
}

/* ---- fork from a threaded process ---- */

static pthread_mutex_t flock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fcond = PTHREAD_COND_INITIALIZER;
static int fdone;
static void *blocked(void *arg) {
    (void)arg;
    pthread_mutex_lock(&flock);
    while (!fdone)
        pthread_cond_wait(&fcond, &flock);
    pthread_mutex_unlock(&flock);
    return NULL;
}
static void *child_thread(void *arg) { return (void *)((long)arg + 1); }

static void *forker(void *arg) {
    (void)arg;
    pid_t p = fork();
    if (p == 0) {
        pthread_t t;
        void *r;
        pthread_create(&t, NULL, child_thread, (void *)41L);
        pthread_join(t, &r);
        printf("child of a thread: a new thread answered %ld\n", (long)r);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    return (void *)(long)(WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st));
}

static void forks(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, blocked, NULL);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        pthread_t c;
        void *r;
        pthread_create(&c, NULL, child_thread, (void *)1L);
        pthread_join(c, &r);
        printf("forked child: its own thread answered %ld\n", (long)r);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    printf("forked child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    pthread_t f;
    void *fr;
    pthread_create(&f, NULL, forker, NULL);
    pthread_join(f, &fr);
    printf("fork from a second thread: child exited %ld\n", (long)fr);
    pthread_mutex_lock(&flock);
    fdone = 1;
    pthread_cond_broadcast(&fcond);
    pthread_mutex_unlock(&flock);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("blocked threads joined\n");
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    many();
    condvars();
    futexes();
    clones();
    signals();
    printf("exit_group from a thread: status %d\n", child_status(body_group));
    printf("first thread leaves with pthread_exit: status %d\n", child_status(body_first_leaves));
    printf("one thread exits, then the first: status %d\n", child_status(body_one_exits));
    forks();
    cpu_set_t set;
    CPU_ZERO(&set);
    int r = sched_getaffinity(0, sizeof set, &set);
    printf("sched_getaffinity: %d, at least one CPU %d\n", r, CPU_COUNT(&set) >= 1);
    printf("sched_getaffinity, short mask: %s\n", err(syscall(SYS_sched_getaffinity, 0, 4, &set)));
    printf("sched_yield: %d\n", sched_yield());
    printf("set_robust_list, bad length: %s\n", err(syscall(SYS_set_robust_list, NULL, 1)));
    return 0;
}
