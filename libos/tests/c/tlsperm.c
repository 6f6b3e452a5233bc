/* arch_prctl(ARCH_SET_FS) and clone's CLONE_SETTLS with an address a
 * thread pointer may not hold (past the user half, non-canonical, in the
 * kernel's half) answer EPERM, as Linux does, and change nothing. */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "show.h"

static const uint64_t bad[] = {0x7ffffffff000, 0x800000000000, 0xffff800000001000, 0xffffffff80000000};

int main(void)
{
    uint64_t fs = 0, after = 0;
    show("ARCH_GET_FS", syscall(SYS_arch_prctl, ARCH_GET_FS, &fs));
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        printf("%#lx: ", (unsigned long)bad[i]);
        show("ARCH_SET_FS", syscall(SYS_arch_prctl, ARCH_SET_FS, bad[i]));
    }
    syscall(SYS_arch_prctl, ARCH_GET_FS, &after);
    printf("fs base unchanged: %s\n", after == fs ? "yes" : "no");
    show("ARCH_SET_FS to itself", syscall(SYS_arch_prctl, ARCH_SET_FS, fs));
    char *stack = malloc(65536);
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS;
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        printf("%#lx: ", (unsigned long)bad[i]);
        /* Refused, so the child never runs. */
        show("clone with CLONE_SETTLS", syscall(SYS_clone, flags, stack + 65536, NULL, NULL, bad[i]));
    }
    return 0;
}
