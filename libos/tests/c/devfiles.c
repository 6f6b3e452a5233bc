/* The files programs expect: /dev's devices and links, /dev/fd and
 * /proc/self/fd opening the descriptor they name, /proc/self/exe, maps,
 * /proc/mounts, /proc/cpuinfo and /sys's CPU lists. Only what is the same
 * on any Linux is printed (the host's /dev holds more, its CPUs differ). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "show.h"

/* Whether file `path` holds `needle` in its first 64 KiB. */
static int holds(const char *path, const char *needle)
{
    static char buf[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    ssize_t n, all = 0;
    while ((n = read(fd, buf + all, sizeof buf - 1 - all)) > 0)
        all += n;
    buf[all] = 0;
    close(fd);
    return strstr(buf, needle) != NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *devs[] = {"null", "zero", "full", "random", "urandom", "tty"};
    for (unsigned i = 0; i < sizeof devs / sizeof *devs; i++) {
        char p[32];
        snprintf(p, sizeof p, "/dev/%s", devs[i]);
        struct stat st;
        int r = stat(p, &st);
        printf("%s: %d chr %d %u:%u\n", p, r, S_ISCHR(st.st_mode), major(st.st_rdev), minor(st.st_rdev));
    }
    char b[16];
    memset(b, 1, sizeof b);
    int z = open("/dev/zero", O_RDONLY);
    ssize_t got0 = read(z, b, 16);
    printf("zero: %zd %d\n", got0, b[0] == 0 && b[15] == 0);
    close(z);
    int f = open("/dev/full", O_RDWR);
    show("write /dev/full", write(f, "x", 1));
    show("read /dev/full", read(f, b, 8));
    close(f);
    int u = open("/dev/urandom", O_RDONLY);
    show("read /dev/urandom", read(u, b, 16));
    close(u);
    int n = open("/dev/null", O_RDWR);
    show("read /dev/null", read(n, b, 16));
    show("write /dev/null", write(n, b, 16));
    close(n);
    show("open /dev/null O_DIRECTORY", open("/dev/null", O_RDONLY | O_DIRECTORY));

    /* /dev lists its devices and links. */
    DIR *d = opendir("/dev");
    int found = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        for (const char **w = (const char *[]){"null", "zero", "full", "random", "urandom", "tty", "fd",
                                                "stdin", "stdout", "stderr", NULL};
             *w; w++)
            found += strcmp(e->d_name, *w) == 0;
    if (d)
        closedir(d);
    printf("/dev lists %d of 10\n", found);
    char link[64] = {0};
    readlink("/dev/fd", link, sizeof link - 1);
    printf("/dev/fd -> %s\n", link);

    /* /dev/fd/N and /proc/self/fd/N open the pipe the descriptor is on. */
    int p[2];
    pipe(p);
    write(p[1], "through /dev/fd\n", 16);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
    int a = open(path, O_RDONLY);
    char got[32] = {0};
    ssize_t r = read(a, got, 16);
    printf("open %s: %d, read %zd: %s", "/dev/fd/N", a >= 0, r, got);
    close(a);
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    int w = open(path, O_WRONLY);
    write(w, "and /proc/self/fd\n", 18);
    memset(got, 0, sizeof got);
    r = read(p[0], got, 18);
    printf("read %zd: %s", r, got);
    memset(link, 0, sizeof link);
    readlink(path, link, sizeof link - 1);
    printf("fd link starts pipe:[ %d\n", strncmp(link, "pipe:[", 6) == 0);
    struct stat st;
    stat(path, &st);
    printf("stat through it: fifo %d\n", S_ISFIFO(st.st_mode));
    show("O_NOFOLLOW", open(path, O_WRONLY | O_NOFOLLOW));
    show("closed descriptor", open("/proc/self/fd/200", O_RDONLY));

    memset(link, 0, sizeof link);
    readlink("/proc/self/exe", link, sizeof link - 1);
    const char *base = strrchr(link, '/');
    printf("exe: %s\n", base ? base + 1 : link);
    printf("maps has an executable mapping: %d\n", holds("/proc/self/maps", "xp "));
    printf("mounts has /: %d\n", holds("/proc/mounts", " / "));
    printf("cpuinfo has processor 0: %d\n", holds("/proc/cpuinfo", "processor\t: 0"));
    printf("cpu online starts 0: %d\n", holds("/sys/devices/system/cpu/online", "0"));
    printf("cpu possible starts 0: %d\n", holds("/sys/devices/system/cpu/possible", "0"));
    return 0;
}
