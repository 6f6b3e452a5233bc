#define _GNU_SOURCE
/* A bad memory access raises the signal Linux raises, with its si_code
 * and address, in every kind of mapping (issue 29: some raised none):
 * nothing mapped, a page without the right (read-only, PROT_NONE, not
 * executable), the program's text, a private and a shared file mapping
 * past the file's end (SIGBUS), a shared memory object shrunk under its
 * mapping, an unmapped range, addresses in the kernel's half and
 * non-canonical ones. Each access is made under sigsetjmp and the handler
 * jumps back. Each line is compared with the host. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "trysig.h"

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    catch_faults();
    long pg = 4096;

    try("read address 0", NULL, READ);
    try("write address 16", (void *)16, WRITE);
    char *ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    try("write a read-only page", ro, WRITE);
    try("read a read-only page", ro, READ);
    char *none = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    try("read a PROT_NONE page", none + 8, READ);
    try("write a PROT_NONE page", none, WRITE);
    char *data = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data[0] = (char)0xc3; /* ret */
    try("run a page without PROT_EXEC", data, EXEC);
    try("write the program's text", (void *)main, WRITE);
    char *gone = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(gone, 2 * pg);
    try("read an unmapped range", gone + pg, READ);
    mprotect(ro, pg, PROT_READ | PROT_WRITE);
    try("write after mprotect allows it", ro, WRITE);
    char *fresh = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(fresh, pg, PROT_NONE);
    try("read an untouched page after mprotect(PROT_NONE)", fresh, READ);

    /* Files: a mapping longer than the file is SIGBUS past the end's page. */
    system("mkdir -p tmp");
    int fd = open("tmp/memfaults.file", O_CREAT | O_TRUNC | O_RDWR, 0644);
    write(fd, "data", 4);
    char *priv = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    try("read a private file mapping in the file's page", priv + 100, READ);
    try("read a private file mapping past the file's end", priv + pg + 8, READ);
    try("write a private file mapping past the file's end", priv + 2 * pg, WRITE);
    char *shared = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    try("write a shared file mapping in the file's page", shared + 5, WRITE);
    try("write a shared file mapping past the file's end", shared + pg, WRITE);
    char *rofile = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
    try("write a read-only file mapping", rofile, WRITE);
    ftruncate(fd, 2 * pg);
    try("read a shared mapping once the file grew", shared + pg, READ);
    ftruncate(fd, 10);
    try("read a shared mapping once the file shrank", shared + pg, READ);
    close(fd);
    unlink("tmp/memfaults.file");

    /* A shared memory object shrunk under its mapping. */
    int shm = shm_open("/memfaults", O_CREAT | O_RDWR, 0600);
    ftruncate(shm, 2 * pg);
    char *obj = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
    obj[pg] = 1;
    try("write a shared memory object", obj + pg, WRITE);
    ftruncate(shm, pg);
    try("read a shared memory object past its new end", obj + pg, READ);
    shm_unlink("/memfaults");

    /* The kernel's half, and addresses that are not canonical. */
    try("read the kernel's half", (void *)0xffffffff80000000ul, READ);
    try("write a non-canonical address", (void *)0x0000800000000000ul, WRITE);
    try("read a non-canonical address", (void *)0x8000000000000000ul, READ);
    try("run address 0", NULL, EXEC);
    printf("still running\n");
    return 0;
}
