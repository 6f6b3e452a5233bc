/* FUTEX_WAKE_OP: every operation (with and without the shift flag) and
 * comparison on the second word, the count of waiters woken on each word,
 * and the errors; then two threads asleep on two words, both woken by one
 * call. Nothing printed depends on ids or timing: a requeue says when a waiter
 * sleeps. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long wake_op(uint32_t *a, int n1, int n2, uint32_t *b, uint32_t op) {
    return syscall(SYS_futex, a, FUTEX_WAKE_OP_PRIVATE, n1, (void *)(uintptr_t)n2, b, op);
}

static const char *err(long r) {
    static char buf[32];
    if (r >= 0)
        snprintf(buf, sizeof buf, "ok %ld", r);
    else
        snprintf(buf, sizeof buf, "%s", strerrorname_np(errno));
    return buf;
}

static uint32_t w1, w2;

static void *waiter(void *arg) {
    uint32_t *w = arg;
    while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == 0)
        syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

/* Returns once a thread sleeps on `w`: a requeue of it to another word
 * (and back) counts its waiters without waking them. */
static void asleep(uint32_t *w) {
    static uint32_t spare;
    for (;;) {
        uint32_t v = __atomic_load_n(w, __ATOMIC_SEQ_CST);
        if (syscall(SYS_futex, w, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)1, &spare, v) == 1) {
            syscall(SYS_futex, &spare, FUTEX_REQUEUE_PRIVATE, 0, (void *)1, w, 0);
            return;
        }
        sched_yield();
    }
}

int main(void) {
    static const char *ops[] = {"set", "add", "or", "andn", "xor"};
    static const char *cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (int op = 0; op < 5; op++) {
        for (int shift = 0; shift < 2; shift++) {
            uint32_t a = 0, b = 12;
            long r = wake_op(&a, 1, 1, &b, FUTEX_OP(op | (shift ? FUTEX_OP_OPARG_SHIFT : 0), 3, FUTEX_OP_CMP_EQ, 12));
            printf("%s%s: %s b=%u\n", ops[op], shift ? " shift" : "", err(r), b);
        }
    }
    /* A negative argument is sign-extended from its 12 bits. */
    uint32_t a = 0, b = 10;
    long r = wake_op(&a, 1, 1, &b, FUTEX_OP(FUTEX_OP_ADD, 0xfff, 0, 0));
    printf("add -1: %s b=%u\n", err(r), b);
    /* Each comparison, seen through a waiter on the second word. */
    for (int cmp = 0; cmp < 6; cmp++) {
        for (int old = 4; old <= 6; old++) {
            pthread_t t;
            w2 = 0;
            pthread_create(&t, NULL, waiter, &w2);
            asleep(&w2);
            /* The waiter ends only once w2 is non-zero and it is woken;
             * the operation stores `old`, then the comparison decides. */
            uint32_t before = old;
            __atomic_store_n(&w2, before, __ATOMIC_SEQ_CST);
            r = wake_op(&a, 1, 1, &w2, FUTEX_OP(FUTEX_OP_SET, old, cmp, 5));
            /* If the comparison failed nobody woke it: wake it now. */
            if (r == 0)
                syscall(SYS_futex, &w2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
            pthread_join(t, NULL);
            printf("cmp %s: %d vs 5 %s\n", cmps[cmp], old, r == 1 ? "true" : r == 0 ? "false" : err(r));
        }
    }
    printf("bad op: %s\n", err(wake_op(&a, 1, 1, &b, FUTEX_OP(6, 0, 0, 0))));
    printf("bad cmp: %s\n", err(wake_op(&a, 1, 1, &b, FUTEX_OP(0, 0, 7, 0))));
    printf("unaligned: %s\n", err(wake_op(&a, 1, 1, (uint32_t *)((char *)&b + 1), 0)));
    printf("null second: %s\n", err(wake_op(&a, 1, 1, NULL, 0)));
    b = 7;
    wake_op(&a, 1, 1, (uint32_t *)16, FUTEX_OP(FUTEX_OP_SET, 1, 0, 0));
    printf("failing call leaves b: %u\n", b);

    /* Two sleepers, on w1 and w2: w1 is set first, then one WAKE_OP sets
     * w2 (old value 0 == 0) and wakes both. */
    pthread_t t1, t2;
    w2 = 0;
    pthread_create(&t1, NULL, waiter, &w1);
    pthread_create(&t2, NULL, waiter, &w2);
    asleep(&w1);
    asleep(&w2);
    __atomic_store_n(&w1, 1, __ATOMIC_SEQ_CST);
    r = wake_op(&w1, 1, 1, &w2, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("both woken: w2=%u, %s\n", w2, err(r));
    return 0;
}
