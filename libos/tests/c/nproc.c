/* RLIMIT_NPROC (`ulimit -u`) as Veneer enforces it for every process
 * (every one is root's, and root is nominal: Linux would exempt it).
 * The limit is read back as set, a soft limit over the hard one is
 * EINVAL, a bad resource EINVAL, a bad address EFAULT, and a failed call
 * changes nothing. Under a limit L: processes are forked (each paused on
 * a pipe) until fork fails, which must be with EAGAIN; raising the soft
 * limit by 5 lets exactly 5 more be made, and pthread_create under the
 * limit fails with EAGAIN too; a child inherits the limit; once the
 * children are gone, forks work again. Prints what it found; exits 0 only
 * if everything held. Veneer only. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX 4096

static pid_t kids[MAX];
static int nkids, hold[2];

static int fork_until_refused(int most, int *err)
{
    int made = 0;
    while (made < most && nkids < MAX) {
        pid_t p = fork();
        if (p == 0) {
            char c;
            close(hold[1]);
            read(hold[0], &c, 1);
            _exit(0);
        }
        if (p < 0) {
            *err = errno;
            return made;
        }
        kids[nkids++] = p;
        made++;
    }
    *err = 0;
    return made;
}

static void *nothing(void *a)
{
    return a;
}

static int ok(const char *what, int cond)
{
    printf("%s: %s\n", what, cond ? "ok" : "NOT");
    return cond;
}

int main(void)
{
    int good = 1;
    struct rlimit r, was;
    good &= ok("default limit readable", getrlimit(RLIMIT_NPROC, &was) == 0 && was.rlim_cur > 0);
    struct rlimit bad = {10, 5};
    good &= ok("soft over hard refused (EINVAL), nothing changed",
               setrlimit(RLIMIT_NPROC, &bad) < 0 && errno == EINVAL && getrlimit(RLIMIT_NPROC, &r) == 0 &&
                   r.rlim_cur == was.rlim_cur && r.rlim_max == was.rlim_max);
    good &= ok("resource 99 refused (EINVAL)", syscall(SYS_prlimit64, 0, 99, NULL, &r) < 0 && errno == EINVAL);
    good &= ok("bad address refused (EFAULT)", syscall(SYS_setrlimit, RLIMIT_NPROC, (void *)8) < 0 && errno == EFAULT);
    if (pipe(hold) != 0)
        return 1;
    /* Some tasks exist already (init, this shell, this program): a limit
     * 40 above nothing leaves room for at most 40. */
    struct rlimit l = {40, 40};
    good &= ok("limit set and read back",
               setrlimit(RLIMIT_NPROC, &l) == 0 && getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur == 40 &&
                   r.rlim_max == 40);
    int err, n = fork_until_refused(MAX, &err);
    good &= ok("forks stop at the limit with EAGAIN", n < 40 && err == EAGAIN);
    pthread_t t;
    good &= ok("pthread_create at the limit fails with EAGAIN", pthread_create(&t, NULL, nothing, NULL) == EAGAIN);
    l.rlim_cur = l.rlim_max = 45;
    setrlimit(RLIMIT_NPROC, &l);
    int more = fork_until_refused(MAX, &err);
    good &= ok("5 more allowed: exactly 5 more made", more == 5 && err == EAGAIN);
    l.rlim_cur = l.rlim_max = 40;
    setrlimit(RLIMIT_NPROC, &l);
    close(hold[1]);
    for (int i = 0; i < nkids; i++)
        waitpid(kids[i], NULL, 0);
    nkids = 0;
    int inherited[2];
    if (pipe(inherited) != 0)
        return 1;
    pid_t c = fork();
    if (c == 0) {
        getrlimit(RLIMIT_NPROC, &r);
        char v = r.rlim_cur == 40;
        write(inherited[1], &v, 1);
        _exit(0);
    }
    char v = 0;
    good &= ok("the children gone, fork works again", c > 0);
    good &= ok("a child inherits the limit", c > 0 && read(inherited[0], &v, 1) == 1 && v == 1);
    waitpid(c, NULL, 0);
    good &= ok("threads under the limit", pthread_create(&t, NULL, nothing, NULL) == 0 && pthread_join(t, NULL) == 0);
    printf("nproc: %d processes made under a limit of 40, then %d more under 45\n", n, more);
    return good ? 0 : 1;
}
