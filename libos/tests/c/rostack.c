/* System calls made with the stack pointer on a page the program then
 * makes read-only, or unmaps: each call still answers (Linux never
 * writes a program's stack on a call) and the page is unchanged. lxrt's
 * resume path writes two words below the red zone when the page allows,
 * and remembers that it did: the look must be taken again once a right
 * was taken from a page (trap::resume_after_call). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* getpid by a bare syscall with rsp at `sp`. */
static long getpid_on(void *sp)
{
    long r;
    __asm__ volatile("mov %%rsp, %%r12\n\t"
                     "mov %1, %%rsp\n\t"
                     "mov $39, %%eax\n\t"
                     "syscall\n\t"
                     "mov %%r12, %%rsp"
                     : "=a"(r)
                     : "r"(sp)
                     : "rcx", "r11", "r12", "memory");
    return r;
}

static int unchanged(const unsigned char *p)
{
    for (int i = 0; i < 4096; i++)
        if (p[i] != 0x5a)
            return 0;
    return 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *sp = m + 4096 + 2048;
    long pid = getpid();
    printf("from a writable page: %d\n", getpid_on(sp) == pid);
    printf("again: %d\n", getpid_on(sp) == pid);
    memset(m + 4096, 0x5a, 4096);
    mprotect(m + 4096, 4096, PROT_READ);
    printf("from the page made read-only: %d\n", getpid_on(sp) == pid);
    printf("again: %d\n", getpid_on(sp) == pid);
    printf("the page unchanged: %d\n", unchanged(m + 4096));
    mprotect(m + 4096, 4096, PROT_READ | PROT_WRITE);
    printf("writable again: %d\n", getpid_on(sp) == pid);
    munmap(m + 4096, 4096);
    printf("from the page unmapped: %d\n", getpid_on(sp) == pid);
    printf("again: %d\n", getpid_on(sp) == pid);
    return 0;
}
