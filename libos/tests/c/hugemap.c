/* A mapping of 64 TiB of which one page is touched: mprotect and munmap
 * cost what is mapped, not the length (lxrt once walked every page, and a
 * process unmapping a huge range could not even be killed meanwhile). */
#include <stdio.h>
#include <sys/mman.h>

int main(void)
{
    size_t len = 64UL << 40;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    p[len / 2] = 1;
    printf("mprotect of 64 TiB: %d\n", mprotect(p, len, PROT_READ));
    printf("the touched page reads %d\n", p[len / 2]);
    printf("munmap of 64 TiB: %d\n", munmap(p, len));
    return 0;
}
