#define _GNU_SOURCE
/* Random bytes never repeat between processes (issue 29: two fork
 * children read the same bytes from os.urandom): eight children of one
 * parent each read getrandom(2), /dev/urandom and the AT_RANDOM bytes of
 * a program they exec, after the parent has read its own; every value must
 * differ from every other. Then getrandom's argument checks. */
#include "show.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIDS 8
#define LEN 16

enum { GETRANDOM, URANDOM, AUXV, SOURCES };
static const char *names[SOURCES] = { "getrandom", "/dev/urandom", "AT_RANDOM" };

static void from_urandom(unsigned char *b)
{
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, b, LEN) != LEN)
        exit(2);
    close(fd);
}

/* The AT_RANDOM bytes of a fresh exec of this program, through a pipe. */
static void from_exec(const char *self, unsigned char *b)
{
    int p[2];
    if (pipe(p))
        exit(3);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        execl(self, self, "auxv", (char *)0);
        _exit(4);
    }
    close(p[1]);
    size_t got = 0;
    while (got < LEN) {
        ssize_t n = read(p[0], b + got, LEN - got);
        if (n <= 0)
            exit(5);
        got += n;
    }
    close(p[0]);
    waitpid(pid, 0, 0);
}

static void sample(const char *self, unsigned char out[SOURCES][LEN])
{
    if (getrandom(out[GETRANDOM], LEN, 0) != LEN)
        exit(6);
    from_urandom(out[URANDOM]);
    from_exec(self, out[AUXV]);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        /* The exec'd program: its AT_RANDOM bytes on stdout. */
        const void *r = (const void *)getauxval(AT_RANDOM);
        return r && write(1, r, LEN) == LEN ? 0 : 1;
    }
    static unsigned char all[KIDS + 1][SOURCES][LEN];
    sample(argv[0], all[KIDS]);
    int p[2];
    if (pipe(p))
        return 1;
    for (int k = 0; k < KIDS; k++) {
        if (fork() == 0) {
            unsigned char mine[SOURCES][LEN];
            sample(argv[0], mine);
            if (write(p[1], mine, sizeof mine) != sizeof mine)
                _exit(7);
            _exit(0);
        }
        if (read(p[0], all[k], sizeof all[k]) != sizeof all[k])
            return 1;
        wait(0);
    }
    for (int s = 0; s < SOURCES; s++) {
        int same = 0;
        for (int i = 0; i <= KIDS; i++)
            for (int j = 0; j < i; j++)
                for (int t = 0; t < SOURCES; t++)
                    same += !memcmp(all[i][s], all[j][t], LEN);
        printf("%s: the parent and %d children, %d repeats\n", names[s], KIDS, same);
    }
    /* Two reads in one process differ. */
    unsigned char a[LEN], b[LEN];
    getrandom(a, LEN, 0);
    getrandom(b, LEN, 0);
    printf("two reads differ: %d\n", memcmp(a, b, LEN) != 0);

    show("getrandom GRND_NONBLOCK", getrandom(a, LEN, GRND_NONBLOCK));
    show("getrandom GRND_RANDOM", getrandom(a, LEN, GRND_RANDOM));
    show("getrandom GRND_INSECURE", getrandom(a, LEN, 4));
    show("getrandom GRND_INSECURE|GRND_RANDOM", getrandom(a, LEN, 4 | GRND_RANDOM));
    show("getrandom flag 8", getrandom(a, LEN, 8));
    show("getrandom length 0", getrandom(a, 0, 0));
    show("getrandom NULL", syscall(SYS_getrandom, 0, LEN, 0));
    return 0;
}
