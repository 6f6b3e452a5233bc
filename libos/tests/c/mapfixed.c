/* MAP_FIXED over the addresses where lxrt keeps the shared file system
 * (and its own heap): on Linux they are free and the mapping is harmless;
 * on Veneer they are the library's, and a program that could map them
 * would scribble over every process's files (lxfuzz did). The program
 * prints nothing about the mappings themselves, so the output is the same
 * on both; what follows it in the script must still work. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
    unsigned long at[] = {0x70000000, 0x70100000, 0x68000000, 0x6ff00000};
    for (unsigned i = 0; i < sizeof at / sizeof at[0]; i++) {
        void *p = mmap((void *)at[i], 8192, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED)
            memset(p, 0xAA, 8192);
    }
    printf("mapfixed: done\n");
    return 0;
}
