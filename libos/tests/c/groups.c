#define _GNU_SOURCE
/* Supplementary groups (CPython's test_setgroups and test_initgroups
 * failed: setgroups kept nothing, getgroups answered none): the list a
 * process sets is the one it reads, a child inherits it, a program it
 * execs keeps it, and the errors are Linux's. Compared with the host. */
#include "show.h"
#include <grp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

static void list(const char *what)
{
    gid_t g[16];
    int n = getgroups(16, g);
    printf("%s:", what);
    for (int i = 0; i < n; i++)
        printf(" %u", g[i]);
    printf(" (%d)\n", n);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    gid_t three[] = {5, 7, 65534};
    show("setgroups 3", setgroups(3, three));
    list("getgroups");
    show("getgroups size 0", getgroups(0, NULL));
    gid_t one[1];
    show("getgroups too small", getgroups(1, one));
    show("getgroups negative", syscall(SYS_getgroups, -1, one));
    show("setgroups too many", setgroups(65537, three));
    show("setgroups bad pointer", setgroups(2, (gid_t *)8));
    list("unchanged");
    if (fork() == 0) {
        list("child");
        execl("/bin/sh", "sh", "-c", "id -G", NULL);
        _exit(1);
    }
    wait(NULL);
    show("initgroups nobody 3", initgroups("nobody", 3));
    list("after initgroups");
    show("setgroups 0", setgroups(0, NULL));
    list("none");
    return 0;
}
