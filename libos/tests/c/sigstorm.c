/* A signal storm: a child sends SIGUSR1 to its parent in a loop while
 * the parent's handler writes. Meanwhile an uninvolved child's alarm must
 * fire on time and a SIGKILL sent by another child to a spinning one must
 * take effect; the handler must see the sender's pid (si_pid). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SENDS 3000
#define SEEN 256

static volatile sig_atomic_t handled;
static volatile pid_t seen[SEEN];
static int devnull;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void on_usr1(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    seen[handled % SEEN] = info->si_pid;
    handled++;
    if (write(devnull, "signal\n", 7) != 7)
        _exit(9);
}

static void on_alarm(int sig) { (void)sig; }

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    devnull = open("/dev/null", O_WRONLY);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);

    /* The uninvolved child: alarm(1), then pause until it fires. */
    pid_t alarmed = fork();
    if (alarmed == 0) {
        signal(SIGALRM, on_alarm);
        double t0 = now();
        alarm(1);
        pause();
        double took = now() - t0;
        _exit(took > 0.9 && took < 4 ? 0 : 1);
    }
    /* A spinning child, and one that kills it with SIGKILL after 0.5 s. */
    pid_t spinner = fork();
    if (spinner == 0)
        for (;;)
            ;
    pid_t killer = fork();
    if (killer == 0) {
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
        _exit(kill(spinner, SIGKILL) == 0 ? 0 : 1);
    }
    /* The storm. */
    pid_t storm = fork();
    if (storm == 0) {
        pid_t parent = getppid();
        for (int i = 0; i < SENDS; i++)
            kill(parent, SIGUSR1);
        _exit(0);
    }
    int st, ok = 1;
    double t0 = now();
    if (waitpid(storm, &st, 0) != storm || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        ok = 0;
    printf("storm of %d signals: %s, the handler ran: %s\n", SENDS, ok ? "sent" : "FAILED",
           handled > 0 ? "yes" : "no");
    int right = 1;
    for (int i = 0; i < SEEN && i < handled; i++)
        if (seen[i] != storm)
            right = 0;
    printf("the handler saw the sender's pid: %s\n", right && handled > 0 ? "yes" : "no");
    int fired = waitpid(alarmed, &st, 0) == alarmed && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("an uninvolved child's alarm fired on time: %s\n", fired ? "yes" : "no");
    int killed = waitpid(spinner, &st, 0) == spinner && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    int sent = waitpid(killer, &st, 0) == killer && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("a SIGKILL from another child took effect: %s\n", killed && sent ? "yes" : "no");
    double took = now() - t0;
    if (took > 30)
        printf("the storm took %.0f s\n", took);
    return 0;
}
