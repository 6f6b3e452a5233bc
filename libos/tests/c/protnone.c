#define _GNU_SOURCE
/* mprotect(PROT_NONE) of pages already touched (issue 29): every access
 * to such a page raises SIGSEGV with SEGV_ACCERR and the address touched
 * (a guard page: glibc's thread stacks, Go, JITs), read(2) into it and
 * write(2) out of it fail with EFAULT, a fork child inherits it
 * inaccessible, mprotect back gives the bytes again, munmap of it leaves
 * nothing behind, and a shared file page written before mprotect
 * (PROT_NONE or PROT_READ) still reaches the file. Each line is compared
 * with the host. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trysig.h"

/* Whether the `n` bytes at `p` all hold the byte `v`. */
static int holds(const char *p, int n, char v)
{
    for (int i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    catch_faults();
    long pg = 4096;

    /* Two touched pages, the first executable (a `ret`). */
    char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 0xc3, pg);
    memset(m + pg, 'a', pg);
    try("run the page before", m, EXEC);
    printf("mprotect PROT_NONE: %d\n", mprotect(m, 2 * pg, PROT_NONE));
    try("read a touched PROT_NONE page", m + pg + 100, READ);
    try("write a touched PROT_NONE page", m + pg, WRITE);
    try("run a touched PROT_NONE page", m, EXEC);

    /* The kernel's copies: read(2) into it, write(2) out of it. */
    int p[2];
    pipe(p);
    write(p[1], "xyz", 3);
    errno = 0;
    long n = read(p[0], m + pg, 3);
    printf("read(2) into it: %ld %s\n", n, strerror(errno));
    errno = 0;
    n = write(p[1], m + pg, 3);
    printf("write(2) from it: %ld %s\n", n, strerror(errno));

    /* A fork child inherits it inaccessible; its writes after mprotect
     * back are its own. */
    pid_t c = fork();
    if (c == 0) {
        try("child: read it", m + pg, READ);
        mprotect(m + pg, pg, PROT_READ | PROT_WRITE);
        printf("child: bytes after mprotect back: %s\n", holds(m + pg, pg, 'a') ? "kept" : "lost");
        memset(m + pg, 'b', pg);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    printf("child: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    try("read it after the child", m + pg, READ);

    /* mprotect back: the bytes are there, readable and writable. */
    printf("mprotect back: %d\n", mprotect(m, 2 * pg, PROT_READ | PROT_WRITE | PROT_EXEC));
    printf("bytes after mprotect back: %s\n", holds(m + pg, pg, 'a') ? "kept" : "lost");
    try("write it after mprotect back", m + pg, WRITE);
    try("run it after mprotect back", m, EXEC);
    printf("read(2) into it after mprotect back: %ld\n", (long)read(p[0], m + pg, 3));

    /* PROT_READ alone after PROT_NONE: reads work, writes do not. */
    mprotect(m + pg, pg, PROT_NONE);
    mprotect(m + pg, pg, PROT_READ);
    printf("PROT_READ after PROT_NONE: %c\n", m[pg]);
    try("write it when PROT_READ", m + pg, WRITE);

    /* munmap of a PROT_NONE page; a new mapping there starts at zero. */
    mprotect(m, 2 * pg, PROT_NONE);
    printf("munmap: %d\n", munmap(m, 2 * pg));
    try("read it after munmap", m + pg, READ);
    char *again = mmap(m, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("mapped again at the same place: %s, zeros %s\n", again == m ? "yes" : "no",
           holds(again, 2 * pg, 0) ? "yes" : "no");

    /* A guard page below a stack-like region, as glibc's threads have. */
    char *stack = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(stack, 's', 4 * pg);
    mprotect(stack, pg, PROT_NONE);
    try("run into the guard page", stack + pg - 8, WRITE);
    printf("the rest: %s\n", holds(stack + pg, 3 * pg, 's') ? "kept" : "lost");
    /* A shared file mapping written, made PROT_NONE, then unmapped: the
     * write still reaches the file. */
    mkdir("tmp", 0755);
    int fd = open("tmp/protnone.file", O_CREAT | O_TRUNC | O_RDWR, 0644);
    ftruncate(fd, pg);
    char *sh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    memcpy(sh, "written", 7);
    mprotect(sh, pg, PROT_NONE);
    try("read a shared file page made PROT_NONE", sh, READ);
    printf("munmap of it: %d\n", munmap(sh, pg));
    char got[8] = {0};
    pread(fd, got, 7, 0);
    printf("the file holds: %s\n", got);
    /* The same after mprotect(PROT_READ): the page stays written. */
    sh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    memcpy(sh, "again!!", 7);
    mprotect(sh, pg, PROT_READ);
    munmap(sh, pg);
    pread(fd, got, 7, 0);
    printf("after PROT_READ the file holds: %s\n", got);
    close(fd);
    unlink("tmp/protnone.file");
    printf("still running\n");
    return 0;
}
