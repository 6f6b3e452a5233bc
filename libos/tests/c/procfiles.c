#define _GNU_SOURCE
/* What programs read from /proc (issue 29: /proc/self/status and
 * /proc/PID/status were missing, /proc/sys too, and the name a program
 * gives itself with prctl(PR_SET_NAME) never reached comm, stat or ps).
 * Fields whose values differ between systems are checked for their kind
 * (a number, our pid); each line is compared with the host. */
#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char file[65536];

static const char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(file, 1, sizeof file - 1, f);
    file[n] = 0;
    fclose(f);
    return file;
}

/* The value of `field` in a status file, or NULL. */
static const char *field(const char *text, const char *name)
{
    static char v[256];
    size_t k = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!strncmp(l, name, k) && l[k] == ':') {
            const char *s = l + k + 1;
            while (*s == '\t' || *s == ' ')
                s++;
            size_t n = strcspn(s, "\n");
            snprintf(v, sizeof v, "%.*s", (int)n, s);
            return v;
        }
    }
    return NULL;
}

static void show_field(const char *what, const char *text, const char *name)
{
    const char *v = field(text, name);
    printf("%s %s: %s\n", what, name, v ? v : "(missing)");
}

static long num(const char *text, const char *name)
{
    const char *v = field(text, name);
    return v ? strtol(v, NULL, 10) : -1;
}

static unsigned long long hex(const char *text, const char *name)
{
    const char *v = field(text, name);
    return v ? strtoull(v, NULL, 16) : ~0ull;
}

static void *idle(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

static void handler(int s)
{
    (void)s;
}

/* A /proc/sys file: its value, or only that it is a number. */
static void sysfile(const char *name, int exact)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/sys/%s", name);
    const char *t = slurp(path);
    if (!t) {
        printf("%s: unreadable\n", name);
        return;
    }
    if (exact)
        printf("%s: %s", name, t);
    else
        printf("%s: %s\n", name, isdigit((unsigned char)t[0]) && strtoll(t, NULL, 10) > 0 ? "a number" : "text");
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    const char *st = slurp("/proc/self/status");
    if (!st) {
        printf("no /proc/self/status\n");
        return 1;
    }
    const char *names[] = {"Name",   "Umask",  "State",  "Tgid",   "Pid",    "PPid",   "Uid",
                           "Gid",    "FDSize", "Groups", "VmSize", "VmRSS",  "Threads", "SigQ",
                           "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "CapEff", "Cpus_allowed_list",
                           "voluntary_ctxt_switches"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!field(st, names[i]))
            printf("status lacks %s\n", names[i]);
    show_field("self", st, "Name");
    show_field("self", st, "State");
    show_field("self", st, "Uid");
    show_field("self", st, "Gid");
    show_field("self", st, "Threads");
    printf("self Pid is getpid: %d, Tgid: %d, PPid is getppid: %d\n", num(st, "Pid") == getpid(),
           num(st, "Tgid") == getpid(), num(st, "PPid") == getppid());
    printf("self VmRSS: %s\n", num(st, "VmRSS") > 0 ? "some kB" : "none");

    /* What the process changes shows at the next read. */
    umask(027);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, handler);
    pthread_t t;
    pthread_create(&t, NULL, idle, NULL);
    prctl(PR_SET_NAME, "renamed-process-long");
    st = slurp("/proc/self/status");
    show_field("after", st, "Name");
    show_field("after", st, "Umask");
    show_field("after", st, "Threads");
    unsigned long long mine = (1ull << (SIGHUP - 1)) | (1ull << (SIGTERM - 1)) | (1ull << (SIGUSR1 - 1)) |
                              (1ull << (SIGUSR2 - 1));
    printf("after SigBlk: %016llx SigIgn: %016llx SigCgt: %016llx\n", hex(st, "SigBlk") & mine,
           hex(st, "SigIgn") & mine, hex(st, "SigCgt") & mine);
    printf("comm: %s", slurp("/proc/self/comm"));
    const char *stat = slurp("/proc/self/stat");
    printf("stat: %.*s\n", (int)(strchr(stat, ')') - strchr(stat, '(') + 1), strchr(stat, '('));
    char got[16] = {0};
    prctl(PR_GET_NAME, got);
    printf("PR_GET_NAME: %s\n", got);

    /* Another process's status: its name, state, parent. */
    int p[2];
    pipe(p);
    pid_t kid = fork();
    if (kid == 0) {
        prctl(PR_SET_NAME, "kid");
        write(p[1], "x", 1);
        for (;;)
            pause();
    }
    char c;
    read(p[0], &c, 1);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", kid);
    for (int i = 0; i < 1000; i++) {
        st = slurp(path);
        if (st && field(st, "State") && field(st, "State")[0] == 'S')
            break;
        usleep(1000);
    }
    show_field("child", st, "Name");
    show_field("child", st, "State");
    printf("child PPid is us: %d, Pid is its pid: %d\n", num(st, "PPid") == getpid(), num(st, "Pid") == kid);
    snprintf(path, sizeof path, "/proc/%d/comm", kid);
    printf("child comm: %s", slurp(path));
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);

    /* A new program takes its own name. */
    if (fork() == 0) {
        execl("/bin/cat", "cat", "/proc/self/comm", NULL);
        _exit(127);
    }
    wait(NULL);

    sysfile("kernel/ostype", 1);
    sysfile("kernel/tainted", 1);
    sysfile("kernel/ngroups_max", 1);
    sysfile("kernel/cap_last_cap", 1);
    sysfile("kernel/overflowuid", 1);
    sysfile("kernel/overflowgid", 1);
    sysfile("kernel/msgmax", 1);
    sysfile("kernel/msgmnb", 1);
    sysfile("kernel/msgmni", 1);
    sysfile("kernel/sem", 1);
    sysfile("kernel/shmmni", 1);
    sysfile("kernel/pid_max", 0);
    sysfile("kernel/threads-max", 0);
    sysfile("kernel/osrelease", 0);
    sysfile("kernel/hostname", 0);
    sysfile("fs/pipe-max-size", 1);
    sysfile("fs/nr_open", 0);
    sysfile("fs/file-max", 0);
    sysfile("fs/inotify/max_user_watches", 0);
    sysfile("fs/inotify/max_user_instances", 0);
    sysfile("fs/mqueue/msg_max", 1);
    sysfile("vm/max_map_count", 1);
    char a[64], b[64];
    snprintf(a, sizeof a, "%s", slurp("/proc/sys/kernel/random/uuid"));
    snprintf(b, sizeof b, "%s", slurp("/proc/sys/kernel/random/uuid"));
    printf("uuid: %zu characters, a new one each read: %d\n", strlen(a), strcmp(a, b) != 0);
    snprintf(a, sizeof a, "%s", slurp("/proc/sys/kernel/random/boot_id"));
    snprintf(b, sizeof b, "%s", slurp("/proc/sys/kernel/random/boot_id"));
    printf("boot_id: %zu characters, the same each read: %d, version %c\n", strlen(a), strcmp(a, b) == 0, a[14]);
    return 0;
}
