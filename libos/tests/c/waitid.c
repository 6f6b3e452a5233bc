/* waitid (libos/tests/waitid.sh): exits, kills, stops and continues seen
 * through siginfo_t; WNOWAIT leaves the child to be reaped again; WNOHANG
 * with nothing ready zeroes si_pid; P_PGID; refusals that change nothing.
 * Output unbuffered: a hang shows how far it got. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, pid_t child, int r, const siginfo_t *si)
{
	printf("%s: r=%d signo=%d code=%d status=%d pid=%s\n", what, r,
	       si->si_signo, si->si_code, si->si_status,
	       si->si_pid == child ? "child" : si->si_pid == 0 ? "0" : "other");
}

static pid_t child(int how)
{
	pid_t p = fork();
	if (p == 0) {
		if (how == 0)
			_exit(3);
		if (how == 1)
			for (;;)
				pause();
		/* Stopped, then continued; it waits to be ended, so that the
		 * continue is still there to see (a zombie's is not). */
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	return p;
}

static void refused(const char *what, int idtype, id_t id, siginfo_t *si, int options)
{
	errno = 0;
	int r = syscall(SYS_waitid, idtype, id, si, options, NULL);
	printf("%s: r=%d %s\n", what, r, strerror(errno));
}

int main(void)
{
	siginfo_t si;
	setvbuf(stdout, NULL, _IONBF, 0);
	memset(&si, 0x55, sizeof si);
	refused("no children", P_ALL, 0, &si, WEXITED);
	/* An exit, seen twice with WNOWAIT, then reaped. */
	pid_t a = child(0);
	memset(&si, 0, sizeof si);
	show("nowait", a, waitid(P_PID, a, &si, WEXITED | WNOWAIT), &si);
	memset(&si, 0, sizeof si);
	show("exited", a, waitid(P_PID, a, &si, WEXITED), &si);
	refused("gone", P_PID, a, &si, WEXITED);
	/* Nothing ready yet: WNOHANG answers 0 with si_pid 0. */
	pid_t b = child(1);
	memset(&si, 0x55, sizeof si);
	int r = waitid(P_PID, b, &si, WEXITED | WNOHANG);
	printf("nohang: r=%d pid=%d signo=%d\n", r, si.si_pid, si.si_signo);
	refused("bad idtype", 7, b, &si, WEXITED);
	refused("no event asked", P_PID, b, &si, WNOHANG);
	refused("bad option", P_PID, b, &si, WEXITED | 0x40);
	refused("bad pointer", P_PID, b, (siginfo_t *)8, WEXITED | WNOHANG);
	kill(b, SIGKILL);
	memset(&si, 0, sizeof si);
	show("killed", b, waitid(P_ALL, 0, &si, WEXITED), &si);
	/* A stop and a continue, then the exit, by process group. */
	pid_t c = child(2);
	memset(&si, 0, sizeof si);
	show("stopped", c, waitid(P_PGID, getpgid(0), &si, WSTOPPED), &si);
	kill(c, SIGCONT);
	memset(&si, 0, sizeof si);
	show("continued", c, waitid(P_PID, c, &si, WCONTINUED), &si);
	kill(c, SIGTERM);
	memset(&si, 0, sizeof si);
	show("then ended", c, waitid(P_PGID, 0, &si, WEXITED), &si);
	refused("all reaped", P_ALL, 0, &si, WEXITED);
	return 0;
}
