#define _GNU_SOURCE
/* System V message queues and semaphores (issue 29: every call answered
 * ENOSYS; PostgreSQL and many older servers need them): keys and ids,
 * messages by type, sizes and truncation, blocking and wake-ups across
 * processes, signals and removal ending waits, atomic semaphore
 * operations, SEM_UNDO at a process's end, the *ctl commands and every
 * errno. Each line is compared with the host. */
#include "show.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEY 0x56454e52
#define MISSING 0x56454e53

struct msg {
    long type;
    char text[64];
};

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

static void handler(int s)
{
    (void)s;
}

/* The parent's side of a wait it is to end: returns once child `pid`
 * sleeps (state S in /proc/PID/stat), blocked in its call. A usleep stood
 * here, and a child that a loaded host started late made its call after
 * the parent's (a removed queue then said EINVAL, not EIDRM). */
static void until_asleep(pid_t pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    while (state != 'S') {
        FILE *f = fopen(path, "r");
        if (!f || fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
            state = 0;
        if (f)
            fclose(f);
        usleep(1000);
    }
}

/* `until_asleep` for a wait on semaphore `n` of set `s`: returns once a
 * process waits for it to grow (GETNCNT). */
static void until_waiting(int s, int n)
{
    while (semctl(s, n, GETNCNT) < 1)
        usleep(1000);
}

static int got(const char *what, long r)
{
    show(what, r < 0 ? r : 0);
    return r;
}

static void messages(void)
{
    int old = msgget(KEY, 0);
    if (old >= 0)
        msgctl(old, IPC_RMID, NULL);
    int priv = got("msgget private", msgget(IPC_PRIVATE, 0600));
    msgctl(priv, IPC_RMID, NULL);
    int q = got("msgget create", msgget(KEY, IPC_CREAT | 0640));
    show("msgget create exclusive", msgget(KEY, IPC_CREAT | IPC_EXCL | 0600));
    show("msgget again is the same", msgget(KEY, 0) == q);
    show("msgget missing", msgget(MISSING, 0));
    struct msg m = {1, "one"};
    show("msgsnd type 0", (m.type = 0, msgsnd(q, &m, 4, 0)));
    show("msgsnd 9000 bytes", (m.type = 1, msgsnd(q, &m, 9000, IPC_NOWAIT)));
    show("msgsnd bad id", msgsnd(q + 1, &m, 4, 0));
    show("msgsnd NULL", msgsnd(q, NULL, 4, 0));
    const char *texts[] = {"one", "two", "three", "four"};
    for (int i = 0; i < 4; i++) {
        struct msg s = {i + 1, ""};
        snprintf(s.text, sizeof s.text, "%s", texts[i]);
        msgsnd(q, &s, strlen(s.text) + 1, 0);
    }
    struct msqid_ds ds;
    msgctl(q, IPC_STAT, &ds);
    printf("IPC_STAT: %lu messages, %lu bytes, queue %lu, mode %o, last sender is us %d\n", ds.msg_qnum,
           ds.__msg_cbytes, ds.msg_qbytes, ds.msg_perm.mode & 0777, ds.msg_lspid == getpid());
    struct msg r;
    long n = msgrcv(q, &r, sizeof r.text, 2, 0);
    printf("type 2: %ld %ld %s\n", n, r.type, r.text);
    n = msgrcv(q, &r, sizeof r.text, -4, 0);
    printf("lowest type up to 4: %ld %ld %s\n", n, r.type, r.text);
    n = msgrcv(q, &r, sizeof r.text, 3, MSG_EXCEPT);
    printf("first not of type 3: %ld %ld %s\n", n, r.type, r.text);
    n = msgrcv(q, &r, sizeof r.text, 0, MSG_COPY | IPC_NOWAIT);
    printf("MSG_COPY of the first: %ld %ld %s\n", n, r.type, r.text);
    show("msgrcv too small", msgrcv(q, &r, 2, 0, 0));
    n = msgrcv(q, &r, 2, 0, MSG_NOERROR);
    printf("MSG_NOERROR: %ld %.2s\n", n, r.text);
    show("msgrcv empty IPC_NOWAIT", msgrcv(q, &r, sizeof r.text, 0, IPC_NOWAIT));
    show("msgrcv negative size", msgrcv(q, &r, -1, 0, IPC_NOWAIT));
    show("MSG_COPY without IPC_NOWAIT", msgrcv(q, &r, sizeof r.text, 0, MSG_COPY));

    /* A small queue fills. */
    msgctl(q, IPC_STAT, &ds);
    ds.msg_qbytes = 100;
    ds.msg_perm.mode = 0600;
    show("IPC_SET", msgctl(q, IPC_SET, &ds));
    msgctl(q, IPC_STAT, &ds);
    printf("now queue %lu, mode %o\n", ds.msg_qbytes, ds.msg_perm.mode & 0777);
    static struct {
        long type;
        char text[200];
    } big = {1, ""};
    show("msgsnd past the queue's size", msgsnd(q, &big, 200, IPC_NOWAIT));
    show("msgsnd 60", msgsnd(q, &big, 60, IPC_NOWAIT));
    show("msgsnd 60 more, IPC_NOWAIT", msgsnd(q, &big, 60, IPC_NOWAIT));
    /* A sender waiting for room goes on once a receiver takes some. */
    pid_t k = fork();
    if (k == 0) {
        show("child: msgsnd waited for room", msgsnd(q, &big, 60, 0));
        _exit(0);
    }
    until_asleep(k);
    msgrcv(q, &big, sizeof big.text, 0, 0);
    waitpid(k, NULL, 0);
    msgrcv(q, &big, sizeof big.text, 0, 0);

    /* A receiver waiting for a message gets the one sent to it. */
    k = fork();
    if (k == 0) {
        long n = msgrcv(q, &r, sizeof r.text, 7, 0);
        printf("child: waited for type 7: %ld %s\n", n, r.text);
        _exit(0);
    }
    until_asleep(k);
    struct msg seven = {7, "seven"};
    msgsnd(q, &seven, 6, 0);
    waitpid(k, NULL, 0);

    /* A signal ends the wait. */
    struct sigaction sa = {.sa_handler = handler};
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    show("msgrcv interrupted", msgrcv(q, &r, sizeof r.text, 9, 0));

    /* Removal ends it too. */
    k = fork();
    if (k == 0) {
        show("child: msgrcv of a removed queue", msgrcv(q, &r, sizeof r.text, 9, 0));
        _exit(0);
    }
    until_asleep(k);
    long rm = msgctl(q, IPC_RMID, NULL);
    waitpid(k, NULL, 0);
    show("IPC_RMID", rm);
    show("msgsnd after IPC_RMID", msgsnd(q, &seven, 6, 0));
    priv = msgget(IPC_PRIVATE, 0600);
    show("msgctl bad command", msgctl(priv, 99, &ds));
    msgctl(priv, IPC_RMID, NULL);
}

static void semaphores(void)
{
    show("semget 0 semaphores", semget(IPC_PRIVATE, 0, 0600));
    show("semget -1 semaphores", semget(IPC_PRIVATE, -1, 0600));
    int s = got("semget 3", semget(IPC_PRIVATE, 3, 0600));
    show("SETVAL 5", semctl(s, 0, SETVAL, (union semun){.val = 5}));
    show("GETVAL", semctl(s, 0, GETVAL));
    show("SETVAL 40000", semctl(s, 0, SETVAL, (union semun){.val = 40000}));
    show("GETVAL of semaphore 3", semctl(s, 3, GETVAL));
    unsigned short all[3] = {5, 1, 0};
    show("SETALL", semctl(s, 0, SETALL, (union semun){.array = all}));
    unsigned short back[3];
    semctl(s, 0, GETALL, (union semun){.array = back});
    printf("GETALL: %u %u %u\n", back[0], back[1], back[2]);
    struct sembuf two[2] = {{0, -2, 0}, {1, 1, 0}};
    show("semop -2 and +1 together", semop(s, two, 2));
    semctl(s, 0, GETALL, (union semun){.array = back});
    printf("GETALL: %u %u %u\n", back[0], back[1], back[2]);
    struct sembuf cannot[2] = {{1, 1, 0}, {0, -5, IPC_NOWAIT}};
    show("semop that cannot go on, IPC_NOWAIT", semop(s, cannot, 2));
    semctl(s, 0, GETALL, (union semun){.array = back});
    printf("  nothing changed: %u %u %u\n", back[0], back[1], back[2]);
    show("semop on semaphore 7", semop(s, &(struct sembuf){7, 1, 0}, 1));
    show("semop of 0 operations", semop(s, two, 0));
    static struct sembuf many[501];
    show("semop of 501 operations", semop(s, many, 501));
    show("semop past 32767", semop(s, &(struct sembuf){2, 32767, 0}, 1) < 0 ? -1 : semop(s, &(struct sembuf){2, 1, 0}, 1));
    semctl(s, 2, SETVAL, (union semun){.val = 0});
    show("wait for zero on 3, IPC_NOWAIT", semop(s, &(struct sembuf){0, 0, IPC_NOWAIT}, 1));
    struct timespec brief = {0, 100000000};
    show("semtimedop times out", semtimedop(s, &(struct sembuf){0, -10, 0}, 1, &brief));
    show("semtimedop bad time", semtimedop(s, &(struct sembuf){0, -10, 0}, 1, &(struct timespec){0, -1}));

    /* A waiter goes on when another process posts. */
    semctl(s, 2, SETVAL, (union semun){.val = 0});
    pid_t k = fork();
    if (k == 0) {
        show("child: waited for semaphore 2", semop(s, &(struct sembuf){2, -1, 0}, 1));
        _exit(0);
    }
    until_waiting(s, 2);
    show("GETNCNT while the child waits", semctl(s, 2, GETNCNT));
    semop(s, &(struct sembuf){2, 1, 0}, 1);
    waitpid(k, NULL, 0);
    show("GETNCNT after", semctl(s, 2, GETNCNT));

    /* SEM_UNDO: a process's changes go when it ends. */
    semctl(s, 1, SETVAL, (union semun){.val = 3});
    k = fork();
    if (k == 0) {
        semop(s, &(struct sembuf){1, -2, SEM_UNDO}, 1);
        show("child: after -2 with SEM_UNDO", semctl(s, 1, GETVAL));
        _exit(0);
    }
    waitpid(k, NULL, 0);
    show("after the child ended", semctl(s, 1, GETVAL));

    struct semid_ds ds;
    semctl(s, 0, IPC_STAT, (union semun){.buf = &ds});
    printf("IPC_STAT: %lu semaphores, mode %o\n", ds.sem_nsems, ds.sem_perm.mode & 0777);
    k = fork();
    if (k == 0) {
        show("child: semop on a removed set", semop(s, &(struct sembuf){2, -1, 0}, 1));
        _exit(0);
    }
    until_waiting(s, 2);
    long rm = semctl(s, 0, IPC_RMID);
    waitpid(k, NULL, 0);
    show("IPC_RMID", rm);
    show("semop after IPC_RMID", semop(s, two, 1));
    int one = semget(IPC_PRIVATE, 1, 0600);
    show("semctl bad command", semctl(one, 0, 99));
    semctl(one, 0, IPC_RMID);
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    messages();
    semaphores();
    return 0;
}
