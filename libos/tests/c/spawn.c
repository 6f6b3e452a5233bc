/* vfork and posix_spawn: a CLONE_VM child runs over its parent's memory
 * (its writes are seen by the parent) and the parent is held until the
 * child execs or exits. glibc's posix_spawn learns of a failed exec from
 * a word its child writes into that shared memory. Built static here and
 * dynamic by spawndyn.c; nothing printed depends on ids or timing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void report(const char *what, int r) {
    printf("%s: %s\n", what, r == 0 ? "ok" : strerror(r));
}

static int status_of(pid_t pid) {
    int st = -1;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static volatile int shared_word;
static volatile int child_done;

static int clone_child(void *arg) {
    /* The parent is held: it cannot have run since clone. */
    shared_word = *(int *)arg;
    child_done = 1;
    _exit(7);
}

int main(void) {
    pid_t pid;
    /* A missing program: the error comes back, not a child exiting 127. */
    char *missing[] = {"/no/such/program", NULL};
    int r = posix_spawn(&pid, missing[0], NULL, NULL, missing, environ);
    report("spawn missing", r);
    if (r == 0)
        printf("  child status %d\n", status_of(pid));
    r = posix_spawnp(&pid, "no-such-program-anywhere", NULL, NULL, missing, environ);
    report("spawnp missing", r);
    if (r == 0)
        printf("  child status %d\n", status_of(pid));

    /* /bin/true with file actions: stdout to a file, stdin closed. */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/tmp/spawn.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addclose(&fa, 0);
    char *echo[] = {"/bin/echo", "from the child", NULL};
    r = posix_spawn(&pid, echo[0], &fa, NULL, echo, environ);
    report("spawn echo", r);
    if (r == 0)
        printf("  child status %d\n", status_of(pid));
    char buf[64] = {0};
    int fd = open("/tmp/spawn.out", O_RDONLY);
    printf("  file: %s", fd >= 0 && read(fd, buf, sizeof buf - 1) > 0 ? buf : "(none)\n");
    /* The file actions were the child's: our stdin is still open. */
    printf("  our stdin open: %s\n", fcntl(0, F_GETFD) >= 0 ? "yes" : "no");
    close(fd);
    char *tru[] = {"/bin/true", NULL};
    /* A file action that fails: its error is reported. */
    posix_spawn_file_actions_t bad;
    posix_spawn_file_actions_init(&bad);
    posix_spawn_file_actions_addopen(&bad, 3, "/no/such/dir/file", O_RDONLY, 0);
    r = posix_spawn(&pid, tru[0], &bad, NULL, tru, environ);
    report("spawn bad file action", r);
    if (r == 0)
        printf("  child status %d\n", status_of(pid));
    r = posix_spawn(&pid, tru[0], NULL, NULL, tru, environ);
    report("spawn true", r);
    if (r == 0)
        printf("  child status %d\n", status_of(pid));

    /* vfork + _exit: the child's write is seen, and we ran only after it. */
    volatile int seen = 0;
    pid = vfork();
    if (pid == 0) {
        seen = 42;
        _exit(3);
    }
    printf("vfork _exit: seen %d status %d\n", seen, status_of(pid));

    /* vfork + execve: the child's pre-exec write is seen. */
    seen = 0;
    pid = vfork();
    if (pid == 0) {
        seen = 5;
        execve("/bin/true", tru, environ);
        _exit(127);
    }
    printf("vfork exec: seen %d status %d\n", seen, status_of(pid));
    /* vfork + a failing execve: the child reports it in memory. */
    volatile int child_errno = 0;
    pid = vfork();
    if (pid == 0) {
        execve("/no/such/program", missing, environ);
        child_errno = errno;
        _exit(127);
    }
    printf("vfork failed exec: %s status %d\n", strerror(child_errno), status_of(pid));

    /* clone(CLONE_VM|CLONE_VFORK) on a stack of our own. */
    static char stack[64 * 1024] __attribute__((aligned(16)));
    int value = 99;
    pid = clone(clone_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &value);
    printf("clone vfork: done %d word %d status %d\n", child_done, shared_word, status_of(pid));
    return 0;
}
