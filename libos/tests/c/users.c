/* Two users (issue 25). Run as root: root makes a 0600 file, a 0644 file
 * and a process; a child drops to uid 1000 with setgid/setuid and then
 * attacks them by system call (it must be refused: EACCES, EPERM) and by
 * Veneer's own kernel calls (ident_set to become root again, interrupts
 * that would deliver SIGKILL to root's process, through every capability
 * slot it holds; Linux answers those numbers with ENOSYS). The saved uid
 * gives a dropped effective uid back until it is dropped too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define VENEER(n) (0x10000 + (n))
#define VENEER_EXIT VENEER(14)
#define VENEER_SELF_ID VENEER(15)
#define VENEER_PCT VENEER(22)
#define VENEER_PCT_INTERRUPT 2
#define VENEER_IDENT_SET VENEER(87)

static void show(const char *what, long r)
{
    printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
    fflush(stdout);
}

static void ids(const char *when)
{
    uid_t r, e, s;
    gid_t gr, ge, gs;
    getresuid(&r, &e, &s);
    getresgid(&gr, &ge, &gs);
    printf("%s: uid %u %u %u gid %u %u %u groups %d\n", when, r, e, s, gr, ge, gs, getgroups(0, NULL));
    fflush(stdout);
}

static void put(const char *path, int mode, const char *text)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
    if (write(fd, text, strlen(text)) < 0)
        perror("write");
    close(fd);
    chmod(path, mode);
}

static long env_of(long me, pid_t pid)
{
    /* Environments are numbered as pids are (docs/libos.md). */
    return me + (pid - getpid());
}

/* The capability slot that lets a process interrupt another: the one
 * with which an interrupt reaches a child of its own user. */
static long signalling_slot(long me)
{
    pid_t own = fork();
    if (own == 0) {
        pause();
        _exit(0);
    }
    long found = -1;
    for (long slot = 0; slot < 64 && found < 0; slot++)
        if (syscall(VENEER_PCT, env_of(me, own), VENEER_PCT_INTERRUPT | slot << 8, 1L << SIGCONT, 0, 0, 0) >= 0)
            found = slot;
    kill(own, SIGKILL);
    waitpid(own, NULL, 0);
    return found;
}

/* Veneer's raw calls: none may succeed for uid 1000. The last, an exit
 * that asks the kernel to send SIGKILL to the (root) parent as it ends,
 * ends this process. */
static void raw_attacks(pid_t victim)
{
    /* An identity of all zeroes: root, no groups (abi::ident::Ident). */
    uint32_t root[39] = {0};
    if (syscall(VENEER_IDENT_SET, root) == 0 && getuid() == 0)
        printf("RAW: ident_set made the child root\n");
    long me = syscall(VENEER_SELF_ID);
    if (me <= 0)
        return; /* Linux */
    for (long slot = 0; slot < 64; slot++)
        if (syscall(VENEER_PCT, env_of(me, victim), VENEER_PCT_INTERRUPT | slot << 8, 1L << SIGKILL, 0, 0, 0) >= 0)
            printf("RAW: an interrupt with slot %ld reached root's process\n", slot);
    long slot = signalling_slot(me);
    if (slot < 0)
        printf("RAW: no slot interrupts one's own child\n");
    ids("after the attacks");
    syscall(VENEER_EXIT, 0, 1L << SIGKILL, slot);
}

static void as_user(pid_t victim)
{
    show("setgroups none", setgroups(0, NULL));
    show("setgid 1000", setgid(1000));
    show("setuid 1000", setuid(1000));
    ids("dropped");
    show("read root's 0600 file", open("tmp/u/secret", O_RDONLY));
    show("access it", access("tmp/u/secret", R_OK));
    show("write root's 0644 file", open("tmp/u/public", O_WRONLY));
    show("truncate it", truncate("tmp/u/public", 0));
    int fd = open("tmp/u/public", O_RDONLY);
    char buf[32] = {0};
    show("read it", fd < 0 ? -1 : read(fd, buf, sizeof buf - 1));
    printf("it says: %s", buf);
    show("create in root's directory", open("tmp/u/new", O_CREAT | O_WRONLY, 0644));
    show("unlink root's file", unlink("tmp/u/public"));
    show("rename it", rename("tmp/u/public", "tmp/u/mine"));
    show("chmod root's file", chmod("tmp/u/secret", 0666));
    show("chown it", chown("tmp/u/secret", 1000, 1000));
    show("touch it", utimensat(AT_FDCWD, "tmp/u/secret", NULL, 0));
    struct timespec old[2] = {{1, 0}, {1, 0}};
    show("date the public file", utimensat(AT_FDCWD, "tmp/u/public", old, 0));
    show("create in the sticky directory", open("tmp/u/drop/mine", O_CREAT | O_WRONLY, 0600));
    show("unlink root's file there", unlink("tmp/u/drop/roots"));
    show("kill root's process", kill(victim, SIGTERM));
    show("probe it", kill(victim, 0));
    show("kill the parent", kill(getppid(), SIGKILL));
    fflush(stdout);
    pid_t own = fork();
    if (own == 0) {
        pause();
        _exit(0);
    }
    show("kill one's own child", kill(own, SIGKILL));
    int st;
    waitpid(own, &st, 0);
    printf("it was killed by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    show("setuid 0", setuid(0));
    show("seteuid 0", seteuid(0));
    show("setresuid 0 0 0", setresuid(0, 0, 0));
    show("setreuid 0 0", setreuid(0, 0));
    show("setgid 0", setgid(0));
    gid_t zero = 0;
    show("setgroups 0", setgroups(1, &zero));
    raw_attacks(victim);
}

static void saved_uid(void)
{
    show("setresuid 1000 1000 0", setresuid(1000, 1000, 0));
    show("seteuid 0 from the saved uid", seteuid(0));
    ids("effective root again");
    show("setresuid 1000 1000 1000", setresuid(1000, 1000, 1000));
    show("seteuid 0 now", seteuid(0));
    ids("dropped for good");
}

int main(void)
{
    mkdir("tmp", 0755);
    mkdir("tmp/u", 0755);
    mkdir("tmp/u/drop", 0755);
    chmod("tmp/u/drop", 01777);
    put("tmp/u/secret", 0600, "root's secret\n");
    put("tmp/u/public", 0644, "for anyone\n");
    put("tmp/u/drop/roots", 0644, "root's\n");
    ids("root");
    pid_t victim = fork();
    if (victim == 0) {
        pause();
        _exit(0);
    }
    int st;
    pid_t child = fork();
    if (child == 0) {
        as_user(victim);
        ids("after the attacks"); /* Linux, where the raw exit is ENOSYS */
        _exit(0);
    }
    waitpid(child, &st, 0);
    printf("the user's child exited with %d\n", WEXITSTATUS(st));
    show("root's process is alive", kill(victim, 0));
    kill(victim, SIGKILL);
    waitpid(victim, &st, 0);
    printf("root's process was killed by signal %d (root's own kill)\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    char buf[32] = {0};
    int fd = open("tmp/u/secret", O_RDONLY);
    if (read(fd, buf, sizeof buf - 1) < 0)
        perror("read");
    struct stat sb;
    stat("tmp/u/secret", &sb);
    printf("the secret is unchanged: %s", buf);
    printf("its mode %o, owner %u\n", sb.st_mode & 07777, sb.st_uid);
    stat("tmp/u/drop/mine", &sb);
    printf("the user's new file belongs to %u:%u\n", sb.st_uid, sb.st_gid);
    fflush(stdout);
    if (fork() == 0) {
        saved_uid();
        _exit(0);
    }
    wait(&st);
    return 0;
}
