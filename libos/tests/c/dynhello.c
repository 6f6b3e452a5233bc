// link: dynamic
/* A glibc program linked dynamically: ld.so (PT_INTERP) loads libc.so.6
 * through file-backed mmap; then a few libc calls whose results the host
 * and Veneer must agree on. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, i == 0 ? "(self)" : argv[i]);
    printf("HOME=%s\n", getenv("HOME"));
    /* The loader was told where the program and ld.so are. */
    printf("AT_BASE set: %d\n", getauxval(AT_BASE) != 0);
    printf("AT_ENTRY is not ld.so's: %d\n", getauxval(AT_ENTRY) != getauxval(AT_BASE));
    int v[] = {5, 3, 9, 1, 7};
    qsort(v, 5, sizeof v[0], cmp);
    printf("sorted: %d %d %d %d %d\n", v[0], v[1], v[2], v[3], v[4]);
    printf("strtod: %.3f %s\n", strtod("2.71828", NULL), strerror(2));
    int fd = open("/tmp/dynhello.txt", O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0 || write(fd, "written by a dynamic program\n", 29) != 29)
        return 1;
    char buf[64] = {0};
    if (pread(fd, buf, sizeof buf - 1, 0) != 29)
        return 2;
    fputs(buf, stdout);
    close(fd);
    char *heap = malloc(1 << 20);
    memset(heap, 'x', 1 << 20);
    printf("malloc ok: %d\n", heap[12345] == 'x');
    free(heap);
    return 0;
}
