/* Search and execute permission (issue 25): a path is resolved only
 * through directories the caller may search (the x bit of the class it
 * is in: an owner without it is refused even where others have it), and
 * execve runs only a file the caller may execute. Root makes the tree,
 * a child drops to uid 1000 and walks it. Compared with the host. */
#define _GNU_SOURCE
#include "show.h"
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void make(const char *path, int mode)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "secret\n", 7) != 7 || close(fd) || chmod(path, mode))
        printf("setup %s failed\n", path);
}

static void try_exec(const char *what, const char *path)
{
    pid_t p = fork();
    if (p == 0) {
        execl(path, path, "true", NULL);
        printf("%s: -1 %s\n", what, strerrorname_np(errno));
        _exit(9);
    }
    int st = 0;
    waitpid(p, &st, 0);
    if (WEXITSTATUS(st) != 9)
        printf("%s: ran, status %d\n", what, WEXITSTATUS(st));
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    /* Root's tree: a private directory, a search-only one, a
     * directory others may write but not search, and programs. */
    show("mkdir sp", mkdir("sp", 0755));
    show("mkdir private", mkdir("sp/private", 0700));
    make("sp/private/f", 0644);
    show("mkdir searchonly", mkdir("sp/searchonly", 0711));
    make("sp/searchonly/f", 0644);
    show("mkdir nosearch", mkdir("sp/nosearch", 0776));
    make("sp/nosearch/f", 0666);
    show("mkdir mine", mkdir("sp/mine", 0601));
    make("sp/mine/f", 0644);
    show("chown mine", chown("sp/mine", 1000, 1000));
    int in = open("/bin/busybox", O_RDONLY), out = open("sp/true", O_CREAT | O_WRONLY, 0700);
    char buf[65536];
    long n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, n) != n)
            printf("copy failed\n");
    close(in);
    close(out);
    try_exec("root execs its 0700 program", "sp/true");
    show("chmod true 0644", chmod("sp/true", 0644));
    try_exec("root execs a 0644 program", "sp/true");
    show("chmod true 0744", chmod("sp/true", 0744));

    pid_t p = fork();
    if (p == 0) {
        gid_t none[1];
        if (setgroups(0, none) || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
            printf("drop failed\n");
        struct stat st;
        show("open private/f", open("sp/private/f", O_RDONLY));
        show("stat private/f", stat("sp/private/f", &st));
        show("access private/f", access("sp/private/f", F_OK));
        show("chdir private", chdir("sp/private"));
        show("open searchonly/f", open("sp/searchonly/f", O_RDONLY));
        DIR *d = opendir("sp/searchonly");
        printf("opendir searchonly: %s\n", d ? "opened" : strerrorname_np(errno));
        show("create in nosearch", open("sp/nosearch/g", O_CREAT | O_WRONLY, 0644));
        show("open nosearch/f", open("sp/nosearch/f", O_RDONLY));
        show("unlink nosearch/f", unlink("sp/nosearch/f"));
        show("open mine/f (owner, no x)", open("sp/mine/f", O_RDONLY));
        show("mkdir private/sub", mkdir("sp/private/sub", 0755));
        show("rename into private", rename("sp/searchonly/f", "sp/private/g"));
        try_exec("uid 1000 execs a 0744 program", "sp/true");
        try_exec("uid 1000 execs through private", "sp/private/f");
        _exit(0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    printf("child: %d\n", WEXITSTATUS(st));
    show("chmod true 0755", chmod("sp/true", 0755));
    p = fork();
    if (p == 0) {
        if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
            printf("drop failed\n");
        try_exec("uid 1000 execs a 0755 program", "sp/true");
        _exit(0);
    }
    waitpid(p, &st, 0);
    /* access() judges the whole path by the real ids: a process whose
     * real uid is 1000 and effective uid 0 may open private/f but is
     * told by access() that it may not. */
    p = fork();
    if (p == 0) {
        if (setresuid(1000, 0, 0))
            printf("drop failed\n");
        show("real 1000: open private/f", open("sp/private/f", O_RDONLY));
        show("real 1000: access private/f", access("sp/private/f", R_OK));
        show("real 1000: faccessat AT_EACCESS private/f",
             faccessat(AT_FDCWD, "sp/private/f", R_OK, AT_EACCESS));
        _exit(0);
    }
    waitpid(p, &st, 0);
    return 0;
}
