/* execve of broken dynamic programs, made from a good one (argv[1]) by
 * patching its program headers: each must fail with its own errno and
 * leave this process running, untouched. Veneer's answers (Linux accepts
 * some of these, or fails later in ld.so). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *good;
static long good_len;

static char *slurp(const char *path, long *len) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        exit(10);
    char *b = malloc(st.st_size);
    if (read(fd, b, st.st_size) != st.st_size)
        exit(11);
    close(fd);
    *len = st.st_size;
    return b;
}

static void put(const char *path, const char *b, long len) {
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0755);
    if (fd < 0 || write(fd, b, len) != len)
        exit(12);
    close(fd);
}

static Elf64_Phdr *phdr(char *b, unsigned type, int nth) {
    Elf64_Ehdr *e = (Elf64_Ehdr *)b;
    for (int i = 0; i < e->e_phnum; i++) {
        Elf64_Phdr *p = (Elf64_Phdr *)(b + e->e_phoff + i * e->e_phentsize);
        if (p->p_type == type && nth-- == 0)
            return p;
    }
    exit(13);
}

/* The good program with its interpreter path replaced. */
static char *with_interp(const char *path) {
    char *b = malloc(good_len);
    memcpy(b, good, good_len);
    Elf64_Phdr *p = phdr(b, PT_INTERP, 0);
    memset(b + p->p_offset, 0, p->p_filesz);
    strcpy(b + p->p_offset, path);
    return b;
}

static int failures;

static void expect(const char *what, const char *b, long len, int want) {
    put("/tmp/badexec.bin", b, len);
    char *argv[] = {"/tmp/badexec.bin", NULL};
    execve(argv[0], argv, argv + 1);
    int got = errno;
    printf("%s: %s\n", what, strerror(got));
    if (got != want) {
        printf("  want %s\n", strerror(want));
        failures++;
    }
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 14;
    good = slurp(argv[1], &good_len);
    put("/tmp/notelf", "not an ELF file\n", 16);
    put("/tmp/loopy", good, good_len);
    long ld_len;
    char *ld = slurp("/lib64/ld-linux-x86-64.so.2", &ld_len);
    put("/tmp/halfld", ld, ld_len / 2);

    expect("interpreter not ELF", with_interp("/tmp/notelf"), good_len, ELIBBAD);
    expect("interpreter ET_EXEC", with_interp("/cbin/badexec"), good_len, ELIBBAD);
    expect("interpreter truncated", with_interp("/tmp/halfld"), good_len, ELIBBAD);
    expect("interpreter has an interpreter", with_interp("/tmp/loopy"), good_len, ELOOP);
    expect("interpreter missing", with_interp("/tmp/absent"), good_len, ENOENT);
    expect("interpreter a directory", with_interp("/tmp"), good_len, EACCES);
    expect("program truncated in its headers", good, 300, ENOEXEC);
    expect("program truncated in its segments", good, good_len / 2, ENOEXEC);

    char *b = malloc(good_len);
    memcpy(b, good, good_len);
    phdr(b, PT_LOAD, 1)->p_vaddr = phdr(b, PT_LOAD, 0)->p_vaddr;
    expect("overlapping PT_LOADs", b, good_len, ENOEXEC);
    memcpy(b, good, good_len);
    phdr(b, PT_LOAD, 3)->p_memsz = 1UL << 40;
    expect("huge PT_LOAD", b, good_len, ENOEXEC);

    printf("still running: %d failures\n", failures);
    return failures != 0;
}
