#define _GNU_SOURCE
/* prctl, statfs/fstatfs and fadvise64 against Linux: the options real
 * programs use, hostile arguments and their errnos. Every line printed is
 * compared with the host. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "show.h"

static void prctls(void)
{
    char name[16] = {0};
    show("set name", prctl(PR_SET_NAME, "worker-with-a-long-name", 0, 0, 0));
    show("get name", prctl(PR_GET_NAME, name, 0, 0, 0));
    printf("name: %s (%zu)\n", name, strlen(name));
    show("get name bad ptr", prctl(PR_GET_NAME, (void *)8, 0, 0, 0));
    show("set name bad ptr", prctl(PR_SET_NAME, (void *)8, 0, 0, 0));
    memset(name, 0, sizeof name);
    prctl(PR_GET_NAME, name, 0, 0, 0);
    printf("name after failures: %s\n", name);

    int sig = -1;
    show("get pdeathsig", prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0));
    printf("pdeathsig: %d\n", sig);
    show("set pdeathsig 65", prctl(PR_SET_PDEATHSIG, 65, 0, 0, 0));
    show("set pdeathsig TERM", prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0));
    prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0);
    printf("pdeathsig: %d\n", sig);
    show("get pdeathsig bad ptr", prctl(PR_GET_PDEATHSIG, (void *)8, 0, 0, 0));

    show("get dumpable", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    show("set dumpable 2", prctl(PR_SET_DUMPABLE, 2, 0, 0, 0));
    show("set dumpable 0", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
    show("get dumpable", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    show("set dumpable 1", prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));

    show("get no_new_privs", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    show("set no_new_privs 0", prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0));
    show("set no_new_privs extra", prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0));
    show("get no_new_privs", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    show("set no_new_privs 1", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
    show("get no_new_privs", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    show("get no_new_privs extra", prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0));

    show("capbset chown", prctl(PR_CAPBSET_READ, 0, 0, 0, 0));
    show("capbset 999", prctl(PR_CAPBSET_READ, 999, 0, 0, 0));
    show("unknown option", prctl(0x7fff, 0, 0, 0, 0));
}

static void statfss(void)
{
    struct statfs s;
    show("statfs /proc", statfs("/proc", &s));
    printf("/proc is procfs: %d\n", s.f_type == PROC_SUPER_MAGIC);
    show("statfs /", statfs("/", &s));
    printf("/: bsize>0 %d, blocks>=bfree %d, bfree>=bavail %d, namelen>=100 %d\n", s.f_bsize > 0,
           s.f_blocks >= s.f_bfree, s.f_bfree >= s.f_bavail, s.f_namelen >= 100);
    show("statfs missing", statfs("/no/such/dir", &s));
    show("statfs bad path ptr", statfs((char *)8, &s));
    show("statfs bad buf", statfs("/", (struct statfs *)8));
    int fd = open("/proc/self/stat", O_RDONLY);
    show("fstatfs proc file", fstatfs(fd, &s));
    printf("proc file is procfs: %d\n", s.f_type == PROC_SUPER_MAGIC);
    close(fd);
    show("fstatfs closed fd", fstatfs(fd, &s));
    show("fstatfs -1", fstatfs(-1, &s));
    int p[2];
    pipe(p);
    show("fstatfs pipe", fstatfs(p[0], &s));
    printf("pipe is pipefs: %d\n", s.f_type == PIPEFS_MAGIC);
    close(p[0]);
    close(p[1]);
}

static void fadvises(const char *self)
{
    int fd = open(self, O_RDONLY);
    /* posix_fadvise returns the error number rather than setting errno. */
    printf("fadvise normal: %d\n", posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL));
    printf("fadvise dontneed: %d\n", posix_fadvise(fd, 0, 4096, POSIX_FADV_DONTNEED));
    printf("fadvise bad advice: %s\n", strerrorname_np(posix_fadvise(fd, 0, 0, 99)));
    printf("fadvise negative len: %s\n", strerrorname_np(posix_fadvise(fd, 0, -1, POSIX_FADV_NORMAL)));
    close(fd);
    printf("fadvise closed fd: %s\n", strerrorname_np(posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL)));
    int p[2];
    pipe(p);
    printf("fadvise pipe: %s\n", strerrorname_np(posix_fadvise(p[0], 0, 0, POSIX_FADV_NORMAL)));
}

static void sendfiles(void)
{
    int in = open("tmp/sf-in", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(in, "0123456789abcdef", 16);
    lseek(in, 0, SEEK_SET);
    int p[2];
    pipe(p);
    show("sendfile to pipe", sendfile(p[1], in, NULL, 10));
    show("in offset moved to", lseek(in, 0, SEEK_CUR));
    char buf[32] = {0};
    read(p[0], buf, sizeof buf - 1);
    printf("pipe got: %s\n", buf);
    int out = open("tmp/sf-out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    off_t off = 4;
    show("sendfile with offset", sendfile(out, in, &off, 100));
    printf("offset now %ld, in offset still %ld\n", (long)off, (long)lseek(in, 0, SEEK_CUR));
    show("sendfile at end", sendfile(out, in, &off, 100));
    show("sendfile count 0", sendfile(out, in, NULL, 0));
    off = -1;
    show("sendfile negative offset", sendfile(out, in, &off, 1));
    show("sendfile bad offset ptr", sendfile(out, in, (off_t *)8, 1));
    show("sendfile bad in", sendfile(out, 99, NULL, 1));
    show("sendfile bad out", sendfile(99, in, NULL, 1));
    show("sendfile out read-only", sendfile(p[0], in, NULL, 1));
    show("sendfile in write-only", sendfile(p[1], out, NULL, 1));
    write(p[1], "x", 1);
    show("sendfile in pipe", sendfile(out, p[0], NULL, 1));
    int app = open("tmp/sf-out", O_WRONLY | O_APPEND);
    lseek(in, 0, SEEK_SET);
    show("sendfile out append", sendfile(app, in, NULL, 1));
    close(app);
    close(out);
    out = open("tmp/sf-out", O_RDONLY);
    memset(buf, 0, sizeof buf);
    read(out, buf, sizeof buf - 1);
    printf("file got: %s\n", buf);
    close(out);
    close(in);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv)
{
    prctls();
    statfss();
    sendfiles();
    (void)argc;
    fadvises(argv[0]);
    return 0;
}
